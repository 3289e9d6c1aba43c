// A Folio spec that leans on the temporal operators and on `previous`: the semantics
// corpus (cli/tests/all/spec_semantics.rs) checks that their verdicts do not change.
import {
  actions, always, eventually, extract, from, InputText, next, now, PressKey, Tap, taps, waitOnce, weighted,
} from "@uatu/spec";

const route = extract((s) => s.snapshots.route as string | undefined, "route");
const loggedIn = extract((s) => s.snapshots.logged_in === true, "loggedIn");
const accountCount = extract((s) => (s.snapshots.account_count ?? 0) as number, "accountCount");
const balance = extract((s) => (s.snapshots.total_balance ?? 0) as number, "balance");
const emailText = extract((s) => s.ax.find("desc:login_email")?.text ?? "", "emailText");
const changedRoute = extract(() => route.previous !== undefined && route.previous !== route.current, "changedRoute");

export const properties = {
  // previous: the account count never drops while signed in.
  accountsNeverVanish: always(() => !loggedIn.current || !loggedIn.previous || accountCount.current >= (accountCount.previous ?? 0)),
  // next: after a route change the next step is still in the app (always true: a stable "inconclusive" at the end).
  routeKnownAfterChange: always(now(() => changedRoute.current).implies(next(() => route.current !== undefined))),
  // next that can fail: a balance change is followed by a step with the same balance.
  balanceSettles: always(now(() => balance.previous !== undefined && balance.current !== balance.previous)
    .implies(next(() => balance.current === balance.previous))),
  // bounded eventually, in steps and in time.
  loginAnsweredIn4Steps: always(now(() => route.current === "login" && emailText.current !== "")
    .implies(eventually(() => route.current !== "login" || emailText.current === "").within(4, "steps"))),
  leavesLoginWithin2s: always(now(() => route.current === "login")
    .implies(eventually(() => route.current !== "login").within(2, "seconds"))),
  // unbounded eventually: an unmet verdict when the run ends off the home screen.
  homeComesBack: always(now(() => route.current !== "home").implies(eventually(() => route.current === "home"))),
};

const emails = from(["demo@folio.app", "nobody@folio.app", ""]);
const passwords = from(["ledger123", "wrong"]);

export const actionsRoot = weighted(
  [20, actions(() => route.current === "login" ? [
    InputText({ into: "desc:login_email", text: emails.generate() }),
    InputText({ into: "desc:login_password", text: passwords.generate() }),
    Tap({ on: "desc:login_submit" }),
  ] : [], "login")],
  [5, actions(() => route.current === "home" ? Tap({ on: "desc:add_account_button" }) : [], "addAccount")],
  [3, taps],
  [1, waitOnce],
  [1, actions(() => PressKey({ key: "back" }), "back")],
);
