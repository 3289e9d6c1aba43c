// The default properties every app should satisfy.
import { always, extract, Formula, LogEntry, ExceptionInfo } from "../index.js";

const exceptions = extract<ExceptionInfo[]>((state) => state.exceptions, "uatu.exceptions");
const errorLogs = extract<LogEntry[]>(
  (state) => state.logs.filter((log) => log.level === "error" || log.level === "fatal"),
  "uatu.errorLogs",
);

/** No uncaught exception is ever reported by the app. */
export const noUncaughtExceptions: Formula = always(() => exceptions.current.length === 0);

/** No log entry of level `error` or `fatal` is ever written. */
export const noLogcatErrors: Formula = always(() => errorLogs.current.length === 0);

/** The app never stops responding: the system never shows its "isn't responding"
 * dialog nor reports `ANR in <package>` (Android; elsewhere the state has no window
 * and it holds). It reads the state directly, so importing it adds no extractor. */
export const noAnr: Formula = always((state) => state.window?.kind !== "not-responding");
