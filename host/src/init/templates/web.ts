// The uatu spec of this web app: what uatu reads from each state of the page (extractors),
// what must hold at every step (properties, in temporal logic), and what it may do next
// (a weighted tree of actions). `uatu init` wrote it to run as it is: make it yours.
//
//   a guide:           {{docs}}/writing-specs.md
//   every export:      {{docs}}/spec-reference.md
//   selectors:         "css:tag.class#id", "testid:…" (data-testid), "text:…", "id:…"
//
// Check it with `npm install && npx tsc` in this directory; run it with `uatu run` from the
// directory of uatu.toml.

import { actions, always, extract, from, InputText, pressKey, taps, waitOnce, weighted } from "@uatu/spec";
import { noLogcatErrors, noUncaughtExceptions } from "@uatu/spec/defaults/properties";

// Extractors: computed once per step, before any property reads them.
const heading = extract((state) => state.ax.find("css:h1")?.text, "heading");

export const properties = {
  // For every page: no uncaught exception, no console error.
  noUncaughtExceptions,
  noLogcatErrors,
  // An example to edit: every page shows a heading.
  showsAHeading: always(() => heading.current !== undefined),
};

// Text to type: the usual, the empty, the awkward.
const texts = from(["hello", "", "  two  spaces  ", "ünïcödé ✓", "x".repeat(200)]);
const typing = actions((state) => {
  const field = state.ax.find("css:input");
  return field ? [InputText({ into: field, text: texts.generate() })] : [];
}, "typing");

// At every step uatu draws one child by weight, then one action it offers.
export const actionsRoot = weighted(
  [10, taps], // a click on something on the page
  [3, typing], // text into a field
  [1, pressKey], // the back key
  [1, waitOnce], // let time pass
);
