// A Folio-like spec for the step benchmark: 20 extractors over the tree and the
// snapshots, 10 predicates, generators gated on extractors.
import { always, eventually, extract, actions, weighted, from, Tap, InputText, taps, swipes, waitOnce, pressKey } from "@uatu/spec";
import { noUncaughtExceptions, noLogcatErrors } from "@uatu/spec/defaults/properties";

type Account = { name: string; balanceCents: number };
type Row = { account: string; amountCents: number };

const route = extract((s) => s.snapshots["route"] as string);
const accounts = extract((s) => (s.snapshots["accounts"] as Account[]) ?? []);
const rows = extract((s) => (s.snapshots["ledger"] as Row[]) ?? []);
const total = extract((s) => s.snapshots["totalCents"] as number);
const loginButton = extract((s) => s.ax.find("desc:login_submit"));
const email = extract((s) => s.ax.find("id:email"));
const amountField = extract((s) => s.ax.find("id:amount"));
const accountRows = extract((s) => s.ax.findAll("descPrefix:account_"));
const ledgerRows = extract((s) => s.ax.findAll("descPrefix:row_"));
const title = extract((s) => s.ax.find("id:title")?.text ?? "");
const totalText = extract((s) => s.ax.find("id:total")?.text ?? "");
const errorText = extract((s) => s.ax.find("id:form_error")?.text ?? "");
const saveButton = extract((s) => s.ax.find("desc:save"));
const addButton = extract((s) => s.ax.find("desc:add_row"));
const backButton = extract((s) => s.ax.find("desc:nav_back"));
const tabs = extract((s) => s.ax.findAll("descPrefix:tab_").map((t) => t.desc));
const names = extract(() => accounts.current.map((a) => a.name));
const sumAccounts = extract(() => accounts.current.reduce((n, a) => n + a.balanceCents, 0));
const sumRows = extract(() => rows.current.reduce((n, r) => n + r.amountCents, 0));
const shownRows = extract(() => ledgerRows.current.length);

const amounts = from(["12.50", "0", "-3", "abc", "1e9", "99999999.99"]);

export const properties = {
  totals: always(() => total.current === undefined || total.current === sumAccounts.current),
  cents: always(() => rows.current.every((r) => Number.isInteger(r.amountCents))),
  uniqueNames: always(() => new Set(names.current).size === names.current.length),
  counts: always(() => route.current !== "ledger" || shownRows.current <= rows.current.length),
  orphans: always(() => rows.current.every((r) => names.current.includes(r.account))),
  totalShown: always(() => totalText.current === "" || totalText.current.length > 0),
  leavesLogin: always(() => route.current !== "login").or(eventually(() => route.current !== "login").within(3, "seconds")),
  errorsClear: always(() => errorText.current === "").or(eventually(() => errorText.current === "").within(30, "seconds")),
  noUncaughtExceptions,
  noLogcatErrors,
};

const login = actions(() => (loginButton.current && email.current
  ? [InputText({ into: email.current, text: "a@b.c" }), Tap({ on: loginButton.current })] : []), "login");
const fill = actions(() => (amountField.current ? [InputText({ into: amountField.current, text: amounts.generate() })] : []), "fill");
const save = actions(() => (saveButton.current ? [Tap({ on: saveButton.current })] : []), "save");

export const actionsRoot = weighted(
  [10, login],
  [4, weighted([3, fill], [1, save]), "form"],
  [2, taps],
  [1, swipes],
  [0.5, waitOnce],
  [0.5, pressKey],
);
