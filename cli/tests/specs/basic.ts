import {
  always, now, next, eventually, extract, actions, weighted, from, Tap, InputText, Swipe, PressKey, Wait,
  taps, swipes, waitOnce, pressKey,
} from "@uatu/spec";
import { noUncaughtExceptions, noLogcatErrors } from "@uatu/spec/defaults/properties";

export const loginButton = extract((s) => s.ax.find("desc:login_submit"));
const byId = extract((s) => s.ax.find("id:amount")?.text ?? null, "byId");
const byExactId = extract((s) => s.ax.find("id:plain_id")?.text ?? null, "byExactId");
const byText = extract((s) => s.ax.findAll("text:Hello").length, "byText");
const rows = extract((s) => s.ax.findAll("descPrefix:row_").map((e) => e.desc), "rows");
const counter = extract((s) => (s.snapshots["counter"] as number) ?? 0, "counter");
const previousCounter = extract(() => counter.previous ?? null, "previousCounter");
const time = extract((s) => [s.time, Date.now(), new Date().getTime()], "time");
const samples = from(["a", "b", "c", "d", "e", "f", "g", "h"]);
const sampled = extract(() => [samples.generate(), samples.generate(), Math.random()], "sampled");

export const properties = {
  counterPositive: always(() => counter.current >= 0),
  loginVisible: now(() => loginButton.current !== undefined),
  nextGrows: next(() => counter.current > (counter.previous ?? -1)),
  combined: always(() => rows.current.length > 0).implies(eventually(() => counter.current > 5).within(3, "seconds"))
    .and(eventually(() => true).within(2, "steps"))
    .or(always(false).not())
    .and(eventually(() => byText.current > 0).within(250, "milliseconds"))
    .and(eventually(() => true)),
  noUncaughtExceptions,
  noLogcatErrors,
};

const login = actions((s) => {
  const button = s.ax.find("desc:login_submit");
  return button ? [InputText({ into: "id:amount", text: samples.generate() }), Tap({ on: button })] : [];
}, "login");

export const actionsRoot = weighted(
  [5, login],
  [2, weighted([1, taps], [3, swipes, "scroll"]), "explore"],
  [1, actions(() => [Swipe({ from: { x: 1, y: 2 }, to: "desc:row_1", durationMillis: 200 }), PressKey({ key: "enter" }), Wait({ durationMillis: 100 })]), "misc"],
  [0.5, waitOnce],
  [0.5, pressKey],
);
