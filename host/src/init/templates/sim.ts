// The uatu spec of this app: what uatu reads from each state of the app (extractors),
// what must hold at every step (properties, in temporal logic), and what it may do next
// (a weighted tree of actions). `uatu init` wrote it to run as it is: make it yours.
//
//   a guide:           {{docs}}/writing-specs.md
//   every export:      {{docs}}/spec-reference.md
//   the device:        {{docs}}/simulator.md (the simulated Folio app)
//
// Check it with `npm install && npx tsc` in this directory; run it with `uatu run` from the
// directory of uatu.toml.

import { always, extract, pressKey, swipes, taps, waitOnce, weighted } from "@uatu/spec";
import { noLogcatErrors, noUncaughtExceptions } from "@uatu/spec/defaults/properties";

// Extractors: computed once per step, before any property reads them. `state.snapshots`
// holds what the app's SDK reports; `state.ax.find("desc:…")` searches what is on screen.
// The simulated Folio app reports its screen as the snapshot `route`.
const route = extract((state) => state.snapshots["route"] as string | undefined, "route");

export const properties = {
  // For every app: no uncaught exception, no log line of level error or fatal.
  noUncaughtExceptions,
  noLogcatErrors,
  // An example to edit: the app always says which screen it is on.
  knowsItsScreen: always(() => route.current !== undefined),
};

// At every step uatu draws one child by weight, then one action it offers.
export const actionsRoot = weighted(
  [10, taps], // a tap on something on screen
  [2, swipes], // a swipe
  [1, pressKey], // the back key
  [1, waitOnce], // let time pass
);
