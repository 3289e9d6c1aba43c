// The spec of Folio, the ledger app of uatu's simulated device (docs/simulator.md).
//
//   uatu run --spec examples/folio/spec.ts                 # every planted bug on
//   uatu run --spec examples/folio/spec.ts --sim-bugs none # must report no violation
import {
  always, eventually, extract, actions, weighted, from, Tap, InputText, PressKey,
  taps, swipes, waitOnce, pressKey,
} from "@uatu/spec";
import { noUncaughtExceptions, noLogcatErrors } from "@uatu/spec/defaults/properties";

type Account = { id: string; name: string; balance_cents: number; txn_count: number };
type Row = { id: string; account_id: string; amount_cents: number; kind: "credit" | "debit"; note: string };

// ------------------------------------------------------------ extractors

const route = extract((s) => (s.snapshots["route"] as string | undefined) ?? "unknown", "route");
const loggedIn = extract((s) => s.snapshots["logged_in"] === true, "loggedIn");
const authPending = extract((s) => s.snapshots["auth_pending"] === true, "authPending");
const accounts = extract((s) => (s.snapshots["accounts"] as Account[] | undefined) ?? [], "accounts");
const total = extract((s) => s.snapshots["total_balance"] as number | undefined, "total");
const activeAccount = extract((s) => (s.snapshots["active_account_id"] as string | null | undefined) ?? null, "activeAccount");
const rows = extract((s) => (s.snapshots["ledger_rows"] as Row[] | undefined) ?? [], "rows");
const ledgerBalance = extract((s) => (s.snapshots["ledger_balance"] as number | null | undefined) ?? null, "ledgerBalance");
const formErrors = extract((s) => Object.keys((s.snapshots["form_errors"] as Record<string, string> | undefined) ?? {}), "formErrors");
const focused = extract((s) => (s.snapshots["focused_input"] as string | null | undefined) ?? null, "focused");

// Elements the generators need (only looked up on the screen that has them).
const loginSubmit = extract((s) => (route.current === "login" ? s.ax.find("desc:login_submit") : undefined));
const accountCards = extract((s) => (route.current === "home" ? s.ax.findAll("descPrefix:account_card:") : []));

// ------------------------------------------------------------ helpers

const sum = (values: number[]) => values.reduce((n, v) => n + v, 0);
const signed = (row: Row) => (row.kind === "credit" ? row.amount_cents : -row.amount_cents);
const active = () => accounts.current.find((a) => a.id === activeAccount.current);
const normalised = (name: string) => name.trim().toLowerCase();

// ------------------------------------------------------------ properties

export const properties = {
  // Safety: the home screen's total is the sum of the accounts.
  totalIsSumOfAccounts: always(() =>
    route.current !== "home" || total.current === undefined
    || total.current === sum(accounts.current.map((a) => a.balance_cents))),
  // The ledger's balance is the sum of its signed rows.
  ledgerBalanceIsSumOfRows: always(() =>
    ledgerBalance.current === null || route.current !== "ledger"
    || ledgerBalance.current === sum(rows.current.map(signed))),
  // Money is integer cents everywhere.
  amountsAreIntegerCents: always(() =>
    accounts.current.every((a) => Number.isInteger(a.balance_cents))
    && rows.current.every((r) => Number.isInteger(r.amount_cents))
    && (total.current === undefined || Number.isInteger(total.current))
    && (ledgerBalance.current === null || Number.isInteger(ledgerBalance.current))),
  // Account names are unique, ignoring case and surrounding spaces.
  uniqueAccountNames: always(() => {
    const names = accounts.current.map((a) => normalised(a.name));
    return new Set(names).size === names.length;
  }),
  // A ledger lists exactly its account's transactions, each once.
  countsMatchLists: always(() => {
    const account = active();
    if (route.current !== "ledger" || account === undefined) return true;
    return rows.current.length === account.txn_count && new Set(rows.current.map((r) => r.id)).size === rows.current.length;
  }),
  // No row belongs to another (or no) account.
  noOrphanRows: always(() => rows.current.every((r) => r.account_id === activeAccount.current
    && accounts.current.some((a) => a.id === r.account_id))),
  // Liveness: a valid login leaves the login screen within 3 s of device time.
  loginCompletes: always(() => authPending.current)
    .implies(eventually(() => route.current !== "login").within(3, "seconds")),
  // Form errors clear within 30 s.
  formErrorsClear: always(() => formErrors.current.length > 0)
    .implies(eventually(() => formErrors.current.length === 0).within(30, "seconds")),
  noUncaughtExceptions,
  noLogcatErrors,
};

// ------------------------------------------------------------ inputs

const goodAmounts = from(["12.50", "0.01", "100", "2500.00", "7.5", "45.99"]);
const badAmounts = from(["", "abc", "-5", "1.", ".5", "0", "1.005", "12.345"]);
const goodNotes = from(["", "Rent", "Groceries", "Coffee with Ada"]);
const longNotes = from([
  "A note that is definitely longer than forty characters",
  "x".repeat(41),
  "y".repeat(80),
  "z".repeat(81),
]);
const accountNames = from(["Travel", "Bills", "savings", " Savings ", "CHECKING", "", "n".repeat(31), "Emergency fund"]);

// ------------------------------------------------------------ generators

// Preconditions are high-weight generators gated on extractors.
const login = actions(() => {
  if (route.current !== "login" || authPending.current || !loginSubmit.current) return [];
  return [
    Tap({ on: "desc:login_email" }),
    InputText({ into: "desc:login_email", text: "demo@folio.app" }),
    InputText({ into: "desc:login_password", text: "ledger123" }),
    Tap({ on: loginSubmit.current }),
  ];
}, "login");

const badLogin = actions(() => (route.current === "login" && !authPending.current
  ? [InputText({ into: "desc:login_password", text: "wrong" }), Tap({ on: "desc:login_submit" })] : []), "badLogin");

const openAccount = actions(() => accountCards.current.map((card) => Tap({ on: card })), "openAccount");

const addAccount = actions(() => {
  if (route.current === "home") return [Tap({ on: "desc:add_account_button" })];
  if (route.current === "add_account") {
    return [InputText({ into: "desc:account_name_field", text: accountNames.generate() }), Tap({ on: "desc:add_account_submit" })];
  }
  return [];
}, "addAccount");

const addTransaction = actions(() => {
  if (route.current === "ledger") return [Tap({ on: "desc:add_txn_button" })];
  if (route.current !== "add_txn") return [];
  const amount = Math.random() < 0.7 ? goodAmounts.generate() : badAmounts.generate();
  const note = Math.random() < 0.8 ? goodNotes.generate() : longNotes.generate();
  return [
    InputText({ into: "desc:txn_amount", text: amount }),
    InputText({ into: "desc:txn_note", text: note }),
    Tap({ on: Math.random() < 0.5 ? "desc:txn_credit" : "desc:txn_debit" }),
    Tap({ on: "desc:txn_submit" }),
  ];
}, "addTransaction");

const navigate = actions(() => {
  const out = [];
  if (route.current === "home" && loggedIn.current) out.push(Tap({ on: "desc:logout_button" }));
  if (["add_account", "ledger", "add_txn"].includes(route.current)) out.push(Tap({ on: "desc:Back" }));
  if (focused.current !== null) out.push(PressKey({ key: "enter" }), PressKey({ key: "tab" }));
  return out;
}, "navigate");

const relaunch = actions((s) => (s.ax.find("desc:Folio") ? [Tap({ on: "desc:Folio" })] : []), "relaunch");

export const actionsRoot = weighted(
  [20, relaunch],
  [10, login],
  [1, badLogin],
  [6, weighted([3, addTransaction], [2, openAccount], [1, addAccount]), "work"],
  [2, navigate],
  [2, weighted([3, taps], [1, swipes], [1, waitOnce], [0.3, pressKey]), "explore"],
);
