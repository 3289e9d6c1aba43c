// The Folio ledger app as its reference behaviour describes it (issue 13: the snapshots it
// registers and what it does), written from that description alone — not from the simulator's
// code. It must hold on the simulated Folio with no bug planted, and on the Android app
// unchanged: the test that keeps the two in step (host/tests/run_folio.rs).
//
// Only the snapshot contract and the element descriptions are used; no simulator-only extra.
// Every action targets a selector, so `lastAction` says which element was used.
import {
  always, eventually, extract, actions, weighted, from,
  Tap, InputText, PressKey, Wait, Action, Element, State,
} from "@uatu/spec";
import { noUncaughtExceptions, noLogcatErrors } from "@uatu/spec/defaults/properties";

interface Account { id: string; name: string; balance: number; txnCount: number }
interface Row { id: string; accountId: string; type: string; amount: number; signed: number }

const ROUTES = ["login", "home", "add-account", "ledger", "add-transaction"];
const DEMO_EMAIL = "demo@folio.app";
const DEMO_PASSWORD = "ledger123";
const LOGIN_ERRORS = ["", "Enter email and password", "Invalid email or password"];
const ACCOUNT_ERRORS = ["", "Account name is required", "Name is too long (max 40 characters)",
  "An account with that name already exists"];
const TXN_ERRORS = ["", "Enter a valid amount (e.g. 12.34)", "Amount must be greater than zero"];

// ------------------------------------------------------------------ extractors

const snap = <T>(key: string) => extract((s) => s.snapshots[key] as T, key);
const loggedIn = snap<boolean>("logged_in");
const authStatus = snap<string>("auth_status");
const route = snap<string>("route");
const accountCount = snap<number>("account_count");
const accounts = extract((s) => (s.snapshots["accounts"] as Account[] | undefined) ?? [], "accounts");
const totalBalance = snap<number>("total_balance");
const activeAccountId = snap<string | null>("active_account_id");
const ledgerRows = extract((s) => (s.snapshots["ledger_rows"] as Row[] | undefined) ?? [], "ledger_rows");
const ledgerBalance = snap<number>("ledger_balance");
const focusedInput = snap<string | null>("focused_input");
const txnFormType = snap<string | null>("txn_form_type");
const txnFormAccountId = snap<string | null>("txn_form_account_id");
const loginError = snap<string>("login_error");
const addAccountError = snap<string>("add_account_error");
const txnError = snap<string>("txn_error");

/** The text of the form fields on screen (`null` when absent); the password is masked. */
const fields = extract((s) => {
  const text = (desc: string) => s.ax.find(`desc:${desc}`)?.text ?? null;
  return {
    email: text("login_email"), passwordLength: text("login_password")?.length ?? null,
    accountName: text("account_name_field"), amount: text("txn_amount"),
  };
}, "fields");

/** Whether the element the focused_input snapshot names is on screen. */
const focusedOnScreen = extract((s) => {
  const desc = s.snapshots["focused_input"];
  return typeof desc !== "string" || s.ax.find(`desc:${desc}`) !== undefined;
}, "focusedOnScreen");

/** The last action as the spec wrote it: `{type, on?, into?, text?, key?}`. */
const last = extract((s) => {
  const record = s.lastAction as { action?: { type: string; on?: unknown; into?: unknown; text?: string; key?: string } } | null;
  return record?.action ?? null;
}, "last");
const tapped = (desc: string) => last.current?.type === "tap" && last.current.on === `desc:${desc}`;
const typedInto = (desc: string) => last.current?.type === "inputText" && last.current.into === `desc:${desc}`;

/** The password typed last on the login screen; the field holds exactly it when their lengths
 * agree (typing replaces or appends, and a masked field shows only the length). */
let passwordTyped = "";
const password = extract((s) => {
  const record = s.lastAction as { action?: { type: string; into?: unknown; text?: string } } | null;
  const action = record?.action;
  if (s.snapshots["route"] !== "login") passwordTyped = "";
  else if (action?.type === "inputText" && action.into === "desc:login_password") passwordTyped = action.text ?? "";
  return passwordTyped;
}, "password");

// ------------------------------------------------------------------ submissions

/** A submit tapped on a form, with the outcome the reference behaviour prescribes, followed
 * until the app has answered (a session, an error, a new record or another screen). */
type Expected =
  | { form: "login"; outcome: "session" | "Enter email and password" | "Invalid email or password" | "unknown" }
  | { form: "account"; outcome: "created" | string; name: string }
  | { form: "txn"; outcome: "saved" | string; cents: number; type: string | null; accountId: string | null };
interface Submission { expected: Expected; before: { count: number; rows: number } }

/** The cents of an amount the app accepts, `null` if it refuses the format. */
function parseAmount(text: string): number | null {
  const cleaned = text.replace(/,/g, "").trim();
  if (!/^\d+(\.\d{1,2})?$/.test(cleaned)) return null;
  const [whole, fraction = ""] = cleaned.split(".");
  return Number(whole) * 100 + Number((fraction + "00").slice(0, 2));
}

function expectedOf(s: State): Expected | null {
  const f = fields.previous;
  if (!f) return null;
  if (tapped("login_submit") && route.previous === "login") {
    const email = f.email ?? "";
    const length = f.passwordLength ?? 0;
    if (email.trim() === "" || length === 0) return { form: "login", outcome: "Enter email and password" };
    if (email.trim().toLowerCase() !== DEMO_EMAIL) return { form: "login", outcome: "Invalid email or password" };
    if (password.previous === undefined || password.previous.length !== length) return { form: "login", outcome: "unknown" };
    return { form: "login", outcome: password.previous === DEMO_PASSWORD ? "session" : "Invalid email or password" };
  }
  if (tapped("add_account_submit") && route.previous === "add-account") {
    const name = (f.accountName ?? "").trim();
    const taken = (accounts.previous ?? []).some((a) => a.name.toLowerCase() === name.toLowerCase());
    const outcome = name === "" ? ACCOUNT_ERRORS[1] : name.length > 40 ? ACCOUNT_ERRORS[2] : taken ? ACCOUNT_ERRORS[3] : "created";
    return { form: "account", outcome, name };
  }
  if (tapped("txn_submit") && route.previous === "add-transaction") {
    const cents = parseAmount(f.amount ?? "");
    const outcome = cents === null ? TXN_ERRORS[1] : cents === 0 ? TXN_ERRORS[2] : "saved";
    return { form: "txn", outcome, cents: cents ?? 0, type: txnFormType.previous ?? null, accountId: activeAccountId.previous ?? null };
  }
  void s;
  return null;
}

let open: Submission | null = null;
/** The submission still waiting for the app's answer, `null` when none. */
const pending = extract((s) => {
  const expected = expectedOf(s);
  if (expected) open = { expected, before: { count: accountCount.previous ?? 0, rows: ledgerRows.previous?.length ?? 0 } };
  if (open && answered(open)) {
    const done = open;
    open = null;
    return { open: false, done };
  }
  return { open: open !== null, done: null as Submission | null };
}, "pending");

function answered(sub: Submission): boolean {
  switch (sub.expected.form) {
    case "login": return loggedIn.current === true || loginError.current !== "" || route.current !== "login";
    case "account": return accountCount.current !== sub.before.count || addAccountError.current !== "" || route.current !== "add-account";
    case "txn": return ledgerRows.current.length !== sub.before.rows || txnError.current !== "" || route.current !== "add-transaction";
  }
}

/** Whether the app's answer to a submission is the one the reference behaviour prescribes. */
function answerIsRight(sub: Submission): boolean {
  const e = sub.expected;
  switch (e.form) {
    case "login":
      if (e.outcome === "unknown") return true;
      if (e.outcome === "session") return loggedIn.current === true && route.current === "home";
      return loggedIn.current === false && loginError.current === e.outcome;
    case "account": {
      if (e.outcome !== "created") return addAccountError.current === e.outcome && accountCount.current === sub.before.count;
      const added = accounts.current.filter((a) => !(accounts.previous ?? []).some((p) => p.id === a.id));
      return added.length === 1 && added[0].name === e.name && added[0].balance === 0 && added[0].txnCount === 0;
    }
    case "txn": {
      if (e.outcome !== "saved") return txnError.current === e.outcome && route.current === "add-transaction";
      const account = accounts.current.find((a) => a.id === e.accountId);
      const before = (accounts.previous ?? []).find((a) => a.id === e.accountId);
      if (!account || !before) return false;
      const delta = e.type === "debit" ? -e.cents : e.type === "credit" ? e.cents : account.balance - before.balance;
      return account.txnCount === before.txnCount + 1 && account.balance === before.balance + delta
        && Math.abs(delta) === e.cents;
    }
  }
}

// ------------------------------------------------------------------ properties

const sum = (ns: number[]) => ns.reduce((n, x) => n + x, 0);
const isCents = (n: unknown) => typeof n === "number" && Number.isInteger(n);
const onForm = (r: string) => route.current === r;

export const properties = {
  authStatusMatchesSession: always(() =>
    authStatus.current === (loggedIn.current ? "logged-in" : "logged-out")),
  routeIsKnown: always(() => ROUTES.includes(route.current)),
  loginScreenIffLoggedOut: always(() => (route.current === "login") === !loggedIn.current),
  accountCountMatches: always(() => accountCount.current === accounts.current.length),
  accountsAreWellFormed: always(() => {
    const names = accounts.current.map((a) => a.name.toLowerCase());
    const ids = accounts.current.map((a) => a.id);
    return new Set(names).size === names.length && new Set(ids).size === ids.length
      && accounts.current.every((a) => a.name === a.name.trim() && a.name.length > 0 && a.name.length <= 40
        && isCents(a.balance) && Number.isInteger(a.txnCount) && a.txnCount >= 0);
  }),
  totalIsSumOfAccounts: always(() =>
    isCents(totalBalance.current) && totalBalance.current === sum(accounts.current.map((a) => a.balance))),
  activeAccountMatchesRoute: always(() => onForm("ledger") || onForm("add-transaction")
    ? accounts.current.some((a) => a.id === activeAccountId.current)
    : activeAccountId.current === null),
  ledgerRowsBelongToActiveAccount: always(() => activeAccountId.current === null
    ? ledgerRows.current.length === 0
    : ledgerRows.current.every((r) => r.accountId === activeAccountId.current && isCents(r.amount) && r.amount > 0
        && (r.type === "credit" ? r.signed === r.amount : r.type === "debit" && r.signed === -r.amount))),
  ledgerBalanceIsSumOfRows: always(() => {
    if (ledgerBalance.current !== sum(ledgerRows.current.map((r) => r.signed))) return false;
    const account = accounts.current.find((a) => a.id === activeAccountId.current);
    return !account || (account.balance === ledgerBalance.current && account.txnCount === ledgerRows.current.length);
  }),
  txnFormMatchesRoute: always(() => onForm("add-transaction")
    ? txnFormAccountId.current === activeAccountId.current && [null, "credit", "debit"].includes(txnFormType.current)
    : txnFormAccountId.current === null && txnFormType.current === null),
  focusedInputIsOnScreen: always(() => focusedOnScreen.current === true),
  errorMessagesAreKnown: always(() => LOGIN_ERRORS.includes(loginError.current)
    && ACCOUNT_ERRORS.includes(addAccountError.current) && TXN_ERRORS.includes(txnError.current)),
  errorsClearWhenScreenLeft: always(() => (onForm("login") || loginError.current === "")
    && (onForm("add-account") || addAccountError.current === "")
    && (onForm("add-transaction") || txnError.current === "")),
  errorsClearWhenFieldEdited: always(() =>
    !((typedInto("login_email") || typedInto("login_password")) && onForm("login") && loginError.current !== "")
    && !(typedInto("account_name_field") && onForm("add-account") && addAccountError.current !== "")
    && !(typedInto("txn_amount") && onForm("add-transaction") && txnError.current !== "")),
  submissionsAreAnswered: always(() => pending.current.open)
    .implies(eventually(() => !pending.current.open).within(5, "seconds")),
  answersFollowTheRules: always(() => pending.current.done === null || answerIsRight(pending.current.done)),
  sessionEndsOnlyByLogout: always(() =>
    !(loggedIn.previous === true && loggedIn.current === false) || tapped("logout_button")),
  dataIsNeverLost: always(() => (accounts.previous ?? []).every((p) =>
    accounts.current.some((a) => a.id === p.id && a.name === p.name && a.txnCount >= p.txnCount))),
  noUncaughtExceptions,
  noLogcatErrors,
};

// ------------------------------------------------------------------ actions

const emails = from([DEMO_EMAIL, "  Demo@Folio.APP ", "demo@folio.ap", "someone@example.com"]);
const passwords = from([DEMO_PASSWORD, DEMO_PASSWORD, "ledger12", "LEDGER123"]);
const names = from(["Checking", "Savings", " savings ", "Travel fund", "x".repeat(41), "  ", "Rent"]);
const amounts = from(["12.34", "1,250.50", " 7 ", "0", "0.00", "12.345", "-3", "abc", "", "99.9"]);
const notes = from(["coffee", "  rent  ", "n".repeat(90), ""]);

const present = (s: State, desc: string): Element | undefined => {
  const e = s.ax.find(`desc:${desc}`);
  return e && e.enabled ? e : undefined;
};
const tap = (s: State, desc: string): Action[] => (present(s, desc) ? [Tap({ on: `desc:${desc}` })] : []);
const type = (s: State, desc: string, text: string): Action[] =>
  present(s, desc) ? [InputText({ into: `desc:${desc}`, text })] : [];

/** A screen's actions, silent while a submission waits for the app's answer. */
const screen = (name: string, r: string, fn: (s: State) => Action[]) =>
  actions((s) => (route.current === r && !pending.current.open ? fn(s) : []), name);

const login = screen("login", "login", (s) => [
  ...type(s, "login_email", emails.generate()),
  ...type(s, "login_password", passwords.generate()),
  ...tap(s, "login_submit"),
]);
const home = screen("home", "home", (s) => [
  ...tap(s, "add_account_button"),
  ...s.ax.findAll("descPrefix:account_card:").map((card) => Tap({ on: `desc:${card.desc}` })),
]);
const addAccount = screen("addAccount", "add-account", (s) => [
  ...type(s, "account_name_field", names.generate()),
  ...tap(s, "add_account_submit"),
]);
const ledger = screen("ledger", "ledger", (s) => tap(s, "add_txn_button"));
const addTransaction = screen("addTransaction", "add-transaction", (s) => [
  ...type(s, "txn_amount", amounts.generate()),
  ...type(s, "txn_note", notes.generate()),
  ...tap(s, "txn_credit"),
  ...tap(s, "txn_debit"),
  ...tap(s, "txn_submit"),
]);
const leave = actions((s) => pending.current.open ? [] : [...tap(s, "Back"), ...tap(s, "logout_button")], "leave");
const waitForAnswer = actions(() => pending.current.open ? [Wait({ durationMillis: 200 })] : [], "waitForAnswer");

export const actionsRoot = weighted(
  [100, waitForAnswer],
  [10, login], [10, home], [10, addAccount], [10, ledger], [10, addTransaction],
  [1, leave],
  // Back on a root screen would leave the app, and nothing here brings it back.
  [1, actions(() => pending.current.open ? [] : [
    ...(["add-account", "ledger", "add-transaction"].includes(route.current) ? [PressKey({ key: "back" })] : []),
    Wait({ durationMillis: 300 }),
  ], "keyOrWait")],
);
