// The spec of Folio, the ledger app (docs/simulator.md): it reads only the snapshots and
// element descriptions of the reference Folio app, so it runs unchanged on the simulator
// and on the phone.
//
// Extractors read Folio's snapshots and screen; properties say what must
// always hold (money adds up, names are unique, nothing crashes) and what must
// happen in time (sign-in is answered); the action tree logs
// in first, then explores accounts and transactions with good and bad inputs.

import {
  actions, always, eventually, extract, from, InputText, now, PressKey, pressKey, swipes, Tap, taps,
  waitOnce, weighted,
} from "@uatu/spec";
import { noLogcatErrors, noUncaughtExceptions } from "@uatu/spec/defaults/properties";

type Route = "login" | "home" | "add-account" | "ledger" | "add-transaction";
interface Account { id: string; name: string; balance: number; txnCount: number }
interface Row { id: string; accountId: string; type: "credit" | "debit"; amount: number; signed: number }
interface Performed { action?: { type: string; on?: unknown; into?: unknown }; point?: { x: number; y: number } }

// ------------------------------------------------------------ extractors

const route = extract((s) => s.snapshots.route as Route | undefined, "route");
const loggedIn = extract((s) => s.snapshots.logged_in === true, "loggedIn");
const accounts = extract((s) => (s.snapshots.accounts ?? []) as Account[], "accounts");
const total = extract((s) => s.snapshots.total_balance as number | undefined, "total");
const activeAccountId = extract((s) => (s.snapshots.active_account_id ?? null) as string | null, "activeAccountId");
const rows = extract((s) => (s.snapshots.ledger_rows ?? []) as Row[], "rows");
const ledgerBalance = extract((s) => (s.snapshots.ledger_balance ?? 0) as number, "ledgerBalance");
const errors = extract((s) => ({
  login: (s.snapshots.login_error ?? "") as string,
  account: (s.snapshots.add_account_error ?? "") as string,
  txn: (s.snapshots.txn_error ?? "") as string,
}), "errors");
const emailText = extract((s) => s.ax.find("desc:login_email")?.text ?? "", "emailText");
const passwordText = extract((s) => s.ax.find("desc:login_password")?.text ?? "", "passwordText");
const amountText = extract((s) => s.ax.find("desc:txn_amount")?.text ?? "", "amountText");
const accountCards = extract((s) => s.ax.findAll("descPrefix:account_card:"), "accountCards");
const loginSubmit = extract((s) => s.ax.find("desc:login_submit")?.bounds ?? null, "loginSubmit");
const performed = extract((s) => (s.lastAction ?? null) as Performed | null, "performed");

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const normalised = (name: string) => name.trim().toLowerCase();
const activeAccount = () => accounts.current.find((a) => a.id === activeAccountId.current);
const onLedger = () => route.current === "ledger" && activeAccountId.current !== null;
/** The last action was a tap on the sign-in button: by selector, or at a point inside it. */
const signInTapped = () => {
  const last = performed.current;
  if (last?.action?.type !== "tap" || route.previous !== "login") return false;
  if (last.action.on === "desc:login_submit") return true;
  const button = loginSubmit.previous;
  const at = last.point;
  return !!button && !!at && at.x >= button.left && at.x < button.right && at.y >= button.top && at.y < button.bottom;
};
/** The last action typed into the field `desc` (the form's error must then be gone). */
const typedInto = (desc: string) =>
  performed.current?.action?.type === "inputText" && performed.current.action.into === `desc:${desc}`;

// ------------------------------------------------------------ properties

export const properties = {
  // Safety: the money adds up, at every step.
  totalIsSumOfAccounts: always(() => total.current === sum(accounts.current.map((a) => a.balance))),
  ledgerBalanceIsSumOfRows: always(() => !onLedger() || ledgerBalance.current === sum(rows.current.map((r) => r.signed))),
  amountsAreWholeCents: always(
    () =>
      accounts.current.every((a) => Number.isInteger(a.balance)) &&
      rows.current.every((r) => Number.isInteger(r.amount) && Number.isInteger(r.signed)) &&
      Number.isInteger(ledgerBalance.current) &&
      (total.current === undefined || Number.isInteger(total.current)),
  ),
  accountNamesAreUnique: always(
    () => new Set(accounts.current.map((a) => normalised(a.name))).size === accounts.current.length,
  ),
  ledgerCountMatchesAccount: always(() => !onLedger() || rows.current.length === activeAccount()?.txnCount),
  ledgerRowsAreUnique: always(() => new Set(rows.current.map((r) => r.id)).size === rows.current.length),
  noOrphanRows: always(
    () => rows.current.every((r) => r.accountId === activeAccountId.current) &&
      (activeAccountId.current === null || activeAccount() !== undefined),
  ),
  formErrorsClearOnEdit: always(
    () => !((typedInto("login_email") || typedInto("login_password")) && errors.current.login !== "") &&
      !(typedInto("account_name_field") && errors.current.account !== "") &&
      !(typedInto("txn_amount") && errors.current.txn !== ""),
  ),
  noUncaughtExceptions,
  noLogcatErrors,

  // Liveness: a sign-in is answered in time (a session, or an error to read).
  signInCompletesWithin3s: always(
    now(signInTapped).implies(eventually(() => loggedIn.current || errors.current.login !== "").within(3, "seconds")),
  ),
};

// ------------------------------------------------------------ inputs

const emails = from(["demo@folio.app", "demo@folio.app", "demo@folio.app", "DEMO@folio.app", "nobody@folio.app", ""]);
const passwords = from(["ledger123", "ledger123", "ledger123", "ledger12", ""]);
const accountNames = from([
  "Cash", "cash", " Cash ", "Savings", "SAVINGS", "Travel", "Bills", "Groceries", "Holiday fund",
  "An account name that is far too long", "",
]);
const amounts = from(["12.50", "100", "0.99", "2500", "7", "1.005", "3.333", "0", "-5", "abc", "1.", ""]);
const notes = from([
  "", "Lunch", "Rent", "Coffee with a colleague",
  "Quarterly insurance premium for the car, paid",          // 46 characters: over 40
  "Groceries for the week: vegetables, bread, milk and eggs", // 57 characters
  "x".repeat(81),                                            // over the 80-character limit
]);

// ------------------------------------------------------------ actions

const signIn = actions(() => {
  if (route.current !== "login") return [];
  if (emailText.current === "") return InputText({ into: "desc:login_email", text: emails.generate() });
  if (passwordText.current === "") return InputText({ into: "desc:login_password", text: passwords.generate() });
  return [
    Tap({ on: "desc:login_submit" }),
    Tap({ on: "desc:login_submit" }),
    InputText({ into: "desc:login_email", text: emails.generate() }),
    InputText({ into: "desc:login_password", text: passwords.generate() }),
  ];
}, "signIn");

const home = weighted(
  [4, actions(() => (route.current === "home" ? Tap({ on: "desc:add_account_button" }) : []), "addAccount")],
  [8, actions(() => (route.current === "home" ? accountCards.current.map((card) => Tap({ on: card })) : []), "openAccount")],
  [1, actions(() => (route.current === "home" ? Tap({ on: "desc:logout_button" }) : []), "logOut")],
);

const newAccount = actions(() => {
  if (route.current !== "add-account") return [];
  return [
    InputText({ into: "desc:account_name_field", text: accountNames.generate() }),
    InputText({ into: "desc:account_name_field", text: accountNames.generate() }),
    Tap({ on: "desc:add_account_submit" }),
    Tap({ on: "desc:Back" }),
  ];
}, "newAccount");

const ledger = actions(() => {
  if (route.current !== "ledger") return [];
  return [Tap({ on: "desc:add_txn_button" }), Tap({ on: "desc:add_txn_button" }), Tap({ on: "desc:Back" })];
}, "ledger");

const newTransaction = actions(() => {
  if (route.current !== "add-transaction") return [];
  const fill = [
    InputText({ into: "desc:txn_amount", text: amounts.generate() }),
    InputText({ into: "desc:txn_note", text: notes.generate() }),
    Tap({ on: "desc:txn_credit" }),
    Tap({ on: "desc:txn_debit" }),
    Tap({ on: "desc:Back" }),
  ];
  // Save only once an amount is typed, and not while an error is showing.
  return amountText.current !== "" && errors.current.txn === ""
    ? [...fill, Tap({ on: "desc:txn_submit" }), Tap({ on: "desc:txn_submit" })]
    : fill;
}, "newTransaction");

const explore = weighted(
  [3, taps],
  [1, swipes],
  [1, pressKey],
  [1, waitOnce],
  [1, actions(() => PressKey({ key: "enter" }), "enter")],
);

export const actionsRoot = weighted(
  [50, signIn, "signIn"],
  [20, home, "home"],
  [20, newAccount, "newAccount"],
  [20, ledger, "ledger"],
  [30, newTransaction, "newTransaction"],
  [4, explore, "explore"],
);
