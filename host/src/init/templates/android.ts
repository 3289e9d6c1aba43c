// The uatu spec of this Android app: what uatu reads from each state of the app
// (extractors), what must hold at every step (properties, in temporal logic), and what it
// may do next (a weighted tree of actions). `uatu init` wrote it to run as it is: make it yours.
//
//   a guide:           {{docs}}/writing-specs.md
//   every export:      {{docs}}/spec-reference.md
//   the device:        {{docs}}/devices.md (the sidecar, an emulator or a phone)
//   the in-app SDK:    {{docs}}/sdk-android.md (snapshots, exceptions, logs)
//
// Check it with `npm install && npx tsc` in this directory; run it with `uatu run` from the
// directory of uatu.toml.

import { always, extract, pressKey, swipes, taps, waitOnce, weighted } from "@uatu/spec";
import { noLogcatErrors, noUncaughtExceptions } from "@uatu/spec/defaults/properties";

// Extractors: computed once per step, before any property reads them. `state.ax.find`
// searches what is on screen ("id:…" matches the part after `:id/` of a resource id).
// Android's "app has stopped" dialog has a close button with the id `aerr_close`.
const crashDialog = extract((state) => state.ax.find("id:aerr_close"), "crashDialog");

export const properties = {
  // For every app: no uncaught exception, no log line of level error or fatal.
  noUncaughtExceptions,
  noLogcatErrors,
  // An example to edit: the system never reports that the app stopped.
  neverStops: always(() => crashDialog.current === undefined),
};

// At every step uatu draws one child by weight, then one action it offers.
export const actionsRoot = weighted(
  [10, taps], // a tap on something on screen
  [2, swipes], // a swipe
  [1, pressKey], // the back key
  [1, waitOnce], // let time pass
);
