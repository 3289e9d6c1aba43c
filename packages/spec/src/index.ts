// @uatu/spec: the authoring API of uatu specs and the runtime that executes
// them inside uatu's QuickJS sandbox. See docs/spec-reference.md.

// ---------------------------------------------------------------- state

export interface Bounds { left: number; top: number; right: number; bottom: number }

/** An element of the accessibility tree. `x`/`y` is the centre of `bounds`. */
export interface Element {
  id: string; text: string; desc: string; class: string; package: string;
  clickable: boolean; enabled: boolean; checked: boolean; focused: boolean;
  selected: boolean; scrollable: boolean;
  /** The accessibility role (web: the ARIA role, e.g. `button`); "" when none. */
  role: string;
  /** Every other attribute the device reports, by the platform's name (web: every DOM
   * attribute, e.g. `data-testid`, `href`; Android: the dump's other attributes). */
  attrs: Readonly<Record<string, string>>;
  bounds: Bounds; x: number; y: number;
  /** The first element inside this one (not itself) the selector matches. */
  find(selector: Selector): Element | undefined;
  /** Every element inside this one (not itself) the selector matches, in tree order. */
  findAll(selector: Selector): Element[];
}

export interface LogEntry { time: number; level: string; tag: string; message: string }

/** The window with the input focus (Android): the app's, a system dialog over it
 * (a permission prompt), its "isn't responding" dialog (an ANR), or another app's
 * (the app was left). `keyboard`: the soft keyboard is up over the app. */
export interface FocusedWindow {
  package: string; title: string; kind: "app" | "system-dialog" | "not-responding" | "other-app";
  keyboard: boolean;
}
export interface ExceptionInfo { class: string; message: string; stack: string; time: number }

/** A string selector: `kind:value` with kind `id` (exact, or the `<value>` of an
 * Android `…:id/<value>`), `idPrefix`, `text`, `textPrefix`, `desc`, `descPrefix`,
 * `testid` / `testTag` (web `data-testid`, Android resource id or Compose test tag),
 * `role`, or `css` (web: `tag.class#id`); several joined by ` > ` make a path. */
export type StringSelector = string;
/** An object selector: every key must match. Unknown keys name an attribute. */
export interface ObjectSelector {
  id?: string; idPrefix?: string; text?: string; textPrefix?: string;
  desc?: string; descPrefix?: string; testTag?: string; role?: string; class?: string;
  clickable?: boolean; enabled?: boolean; checked?: boolean; focused?: boolean;
  selected?: boolean; scrollable?: boolean;
  /** Any other key: an attribute's exact value (`"data-state": "open"`); `true`/`false`
   * stand for `"true"`/`"false"`. */
  [attribute: string]: string | boolean | undefined;
}
/** A selector: a string, an object of keys, or a path `[outer, inner, …]` of those
 * (each part looked for inside the element the part before matched). */
export type Selector = StringSelector | ObjectSelector | readonly (StringSelector | ObjectSelector)[];

export interface Ax {
  /** The first element (in tree order) the selector matches, or undefined. */
  find(selector: Selector): Element | undefined;
  /** Every element the selector matches, in tree order. */
  findAll(selector: Selector): Element[];
}

export interface State {
  ax: Ax;
  snapshots: Record<string, unknown>;
  /** The action dispatched at the end of the previous step; null at the first step
   * and after a step that dispatched nothing. */
  lastAction: LastAction | null;
  logs: LogEntry[];
  exceptions: ExceptionInfo[];
  /** Milliseconds of device time since the run started. */
  time: number;
  step: number;
  screen: { width: number; height: number };
  /** The focused window, on a device that can tell (Android); undefined elsewhere. */
  window?: FocusedWindow;
}

/** What the host dispatched at the end of the previous step (the trace's `action`). */
export interface LastAction {
  /** The action as the spec built it. */
  action: Action;
  /** The generator that offered it, as its path through the tree, e.g. `1:explore/0:taps`. */
  generator: string;
  /** Where it acted: the point tapped, pressed or typed into; where a swipe started;
   * where a scroll acted (the centre of its element, or of the screen). */
  point?: { x: number; y: number };
  /** The bounds of the element its target resolved to (a scroll: the element scrolled;
   * absent when the screen scrolled). */
  bounds?: Bounds;
  /** Where a swipe ended; for a scroll, `point` moved by its distance in its direction. */
  toPoint?: { x: number; y: number };
  /** Whether it landed: `true` the device saw it arrive where it was aimed, `false` it
   * did not (the target was gone, the device refused it), `"unknown"` sent with no
   * evidence either way.
   * A property that judges an action's effect should hold off unless this is `true`. */
  applied: true | false | "unknown";
  /** Why it did not land, in the device's words (only when it did not). */
  detail?: string;
}

// ---------------------------------------------------------------- actions

export type Target = Selector | { x: number; y: number; bounds?: Bounds };
/** Keys for `PressKey`. `back` is the system back (Android); `home` sends the app to
 * the background. */
export type Key =
  | "back" | "home" | "enter" | "tab" | "up" | "down" | "left" | "right"
  | "escape" | "backspace" | "delete" | "space" | "pageUp" | "pageDown";
/** Which way a `Scroll` moves the view over the content: `down` shows what is below. */
export type Direction = "up" | "down" | "left" | "right";
export type Action =
  | { type: "tap"; on: Target }
  | { type: "doubleTap"; on: Target }
  | { type: "longPress"; on: Target; durationMillis?: number }
  | { type: "scroll"; on?: Target; direction: Direction; amount?: number }
  | { type: "inputText"; into?: Target; text: string; submit?: boolean }
  | { type: "clearText"; into?: Target }
  | { type: "swipe"; from: Target; to: Target; durationMillis?: number }
  | { type: "pressKey"; key: Key }
  | { type: "wait"; durationMillis: number }
  | { type: "navigate"; to: string }
  | { type: "reload" }
  | { type: "back" }
  | { type: "forward" };

const KEYS: readonly string[] = [
  "back", "home", "enter", "tab", "up", "down", "left", "right",
  "escape", "backspace", "delete", "space", "pageUp", "pageDown",
];
const DIRECTIONS: readonly string[] = ["up", "down", "left", "right"];

/** The selector kinds the host understands (uatu-device's selector.rs). */
const SELECTOR_KINDS = new Set(["id", "idPrefix", "text", "textPrefix", "desc", "descPrefix", "testid", "testTag", "role", "css"]);
/** Object-selector keys that read a field and take a string; state keys take a boolean. */
const FIELD_KEYS = new Set(["id", "idPrefix", "text", "textPrefix", "desc", "descPrefix", "testTag", "role", "class"]);
const STATE_KEYS = new Set(["clickable", "enabled", "checked", "focused", "selected", "scrollable"]);
const SELECTOR_HELP = "a selector: a string (id:, idPrefix:, text:, textPrefix:, desc:, descPrefix:, testid:, testTag:, role:, css:), an object of keys, or a path [outer, inner]";

/** Whether `value` starts with a selector kind and a colon (a string test, not a
 * regular expression: it runs for every action and query of every step). */
function isStringSelector(value: string): boolean {
  const colon = value.indexOf(":");
  return colon > 0 && SELECTOR_KINDS.has(value.slice(0, colon));
}

/** Why `value` is not a selector (`what` names where it was written), or undefined. */
function selectorProblem(value: unknown, what: string, inPath = false): string | undefined {
  if (typeof value === "string") {
    return isStringSelector(value) ? undefined : `${what}: ${describe(value)} is not ${SELECTOR_HELP}`;
  }
  if (Array.isArray(value)) {
    if (inPath) return `${what}: a path's parts are string or object selectors, not paths`;
    if (value.length === 0) return `${what}: an empty path selects every element`;
    for (let i = 0; i < value.length; i++) {
      const problem = selectorProblem(value[i], `${what}[${i}]`, true);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (value !== null && typeof value === "object") {
    let keys = 0;
    for (const key in value) {
      keys++;
      const v = (value as Record<string, unknown>)[key];
      if (STATE_KEYS.has(key)) {
        if (typeof v !== "boolean") return `${what}.${key} must be true or false (got ${describe(v)})`;
      } else if (FIELD_KEYS.has(key)) {
        if (typeof v !== "string") return `${what}.${key} must be a string (got ${describe(v)})`;
      } else if (typeof v !== "string" && typeof v !== "boolean") {
        return `${what}.${key} (an attribute) must be a string or true/false (got ${describe(v)})`;
      }
    }
    return keys === 0 ? `${what}: an empty object selector selects every element` : undefined;
  }
  return `${what}: ${describe(value)} is not ${SELECTOR_HELP}`;
}

function checkSelector(selector: unknown, what: string): void {
  const problem = selectorProblem(selector, what);
  if (problem !== undefined) throw new SpecError(problem);
}

/** A selector as the host reads it: a string as is, an object or a path as JSON. */
function selectorText(selector: Selector): string {
  return typeof selector === "string" ? selector : JSON.stringify(selector);
}

function target(value: unknown, what: string): Target {
  if (value && typeof value === "object" && typeof (value as any).x === "number" && typeof (value as any).y === "number") {
    const v = value as any;
    const t: { x: number; y: number; bounds?: Bounds } = { x: Math.round(v.x), y: Math.round(v.y) };
    if (v.bounds) t.bounds = { left: v.bounds.left, top: v.bounds.top, right: v.bounds.right, bottom: v.bounds.bottom };
    return t;
  }
  if (value === null || (typeof value !== "string" && typeof value !== "object")) {
    throw new SpecError(`${what} must be a selector or an element/point with x and y (got ${describe(value)})`);
  }
  const problem = selectorProblem(value, what);
  if (problem !== undefined) {
    throw new SpecError(`${problem} (a target is a selector or an element/point with x and y)`);
  }
  return value as Selector;
}

function millis(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new SpecError(`${what} must be a non-negative number of milliseconds (got ${describe(value)})`);
  }
  return Math.round(value);
}

/** The argument object of a constructor (`Tap({ on })`): anything else is the spec's error. */
function args<T>(value: T, what: string): T {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new SpecError(`${what} takes an object of its arguments (got ${describe(value)})`);
  }
  return value;
}

/** Tap an element (or a point). */
export function Tap(a: { on: Target }): Action {
  return { type: "tap", on: target(args(a, "Tap").on, "Tap.on") };
}
/** Tap twice in quick succession, as one gesture (a web `dblclick`). */
export function DoubleTap(a: { on: Target }): Action {
  return { type: "doubleTap", on: target(args(a, "DoubleTap").on, "DoubleTap.on") };
}
/** Press and hold (default 1000 ms). */
export function LongPress(a: { on: Target; durationMillis?: number }): Action {
  const action: Action = { type: "longPress", on: target(args(a, "LongPress").on, "LongPress.on") };
  if (a.durationMillis !== undefined) action.durationMillis = millis(a.durationMillis, "LongPress.durationMillis");
  return action;
}
/** Scroll an element's content (`on`; the original project's `in` is read too), or
 * the screen's, so that what lies in `direction` comes into view. `amount`: the
 * fraction of the area's height (or width) to move, over 0 and at most 1 (default 0.5). */
export function Scroll(a: { direction: Direction; on?: Target; in?: Target; amount?: number }): Action {
  args(a, "Scroll");
  if (!DIRECTIONS.includes(a.direction)) {
    throw new SpecError(`Scroll.direction must be one of ${DIRECTIONS.join(", ")} (got ${describe(a.direction)})`);
  }
  if (a.on !== undefined && a.in !== undefined) throw new SpecError("Scroll takes `on` or `in`, not both");
  const action: Action = { type: "scroll", direction: a.direction };
  const where = a.on ?? a.in;
  if (where !== undefined) action.on = target(where, a.on !== undefined ? "Scroll.on" : "Scroll.in");
  if (a.amount !== undefined) {
    if (typeof a.amount !== "number" || !(a.amount > 0 && a.amount <= 1)) {
      throw new SpecError(`Scroll.amount must be a fraction over 0 and at most 1 (got ${describe(a.amount)})`);
    }
    action.amount = a.amount;
  }
  return action;
}
/** Type `text` into `into` (tapped first) or the focused element; with `submit: true`
 * Enter is pressed after it, otherwise the text is left pending in the field. */
export function InputText(a: { into?: Target; text: string; submit?: boolean }): Action {
  args(a, "InputText");
  if (typeof a.text !== "string") throw new SpecError(`InputText.text must be a string (got ${describe(a.text)})`);
  const action: Action = { type: "inputText", text: a.text };
  if (a.into !== undefined) action.into = target(a.into, "InputText.into");
  if (a.submit !== undefined) {
    if (typeof a.submit !== "boolean") throw new SpecError(`InputText.submit must be true or false (got ${describe(a.submit)})`);
    if (a.submit) action.submit = true;
  }
  return action;
}
/** Empty a text field: `into` (tapped first) or the focused element. */
export function ClearText(a: { into?: Target } = {}): Action {
  args(a, "ClearText");
  const action: Action = { type: "clearText" };
  if (a.into !== undefined) action.into = target(a.into, "ClearText.into");
  return action;
}
/** Swipe from one point (or element) to another. */
export function Swipe(a: { from: Target; to: Target; durationMillis?: number }): Action {
  args(a, "Swipe");
  const action: Action = { type: "swipe", from: target(a.from, "Swipe.from"), to: target(a.to, "Swipe.to") };
  if (a.durationMillis !== undefined) action.durationMillis = millis(a.durationMillis, "Swipe.durationMillis");
  return action;
}
/** Press a key. */
export function PressKey(a: { key: Key }): Action {
  if (!KEYS.includes(args(a, "PressKey").key)) {
    throw new SpecError(`PressKey.key must be one of ${KEYS.join(", ")} (got ${describe(a.key)})`);
  }
  return { type: "pressKey", key: a.key };
}
/** Let device time pass without input. */
export function Wait(a: { durationMillis: number }): Action {
  return { type: "wait", durationMillis: millis(args(a, "Wait").durationMillis, "Wait.durationMillis") };
}
/** Open a location of the app: a path (`/active`, `#/completed`, `?q=1`) on its
 * origin, or an `http(s)://` URL on that origin (the web device refuses another). */
export function Navigate(a: { to: string }): Action {
  const to = args(a, "Navigate").to;
  const absolute = typeof to === "string" && /^https?:\/\/[^/]/.test(to);
  const path = typeof to === "string" && /^[/#?]/.test(to) && !to.startsWith("//");
  if (!absolute && !path) {
    throw new SpecError(`Navigate.to must be a path starting with /, # or ?, or an http(s):// URL (got ${describe(to)})`);
  }
  return { type: "navigate", to };
}
/** Reload the page (web). */
export function Reload(): Action {
  return { type: "reload" };
}
/** Go back: the browser's history on the web, the system back on Android. */
export function Back(): Action {
  return { type: "back" };
}
/** Go forward in the browser's history (web). */
export function Forward(): Action {
  return { type: "forward" };
}

// ---------------------------------------------------------------- errors

/** An error in how a spec uses this API. */
export class SpecError extends Error {
  constructor(message: string) { super(message); this.name = "SpecError"; }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "function") return "a function";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return `"${value}"`;
  return `${typeof value} ${String(value)}`;
}

function callerStack(): string {
  return new Error().stack ?? "";
}

// ---------------------------------------------------------------- extractors

export interface Extracted<T> {
  readonly current: T;
  readonly previous: T | undefined;
  /** Names the extractor in the trace (as `extract(fn, name)` does); returns it. */
  named(name: string): Extracted<T>;
}

interface ExtractorEntry { name?: string; fn: (state: State) => unknown; cell: { current: unknown; previous: unknown }; stack: string }
const extractors: ExtractorEntry[] = [];

/** A value read out of every state, before anything else runs at that step:
 * `extract(fn)`, `extract(fn, name)`, `extract(name, fn)` or `extract(fn).named(name)`. */
export function extract<T>(fn: (state: State) => T, name?: string): Extracted<T>;
export function extract<T>(name: string, fn: (state: State) => T): Extracted<T>;
export function extract<T>(first: unknown, second?: unknown): Extracted<T> {
  const [fn, name] = typeof first === "string" ? [second, first] : [first, second];
  if (typeof fn !== "function") throw new SpecError(`extract() takes a function of the state (got ${describe(fn)})`);
  const checkName = (value: unknown): string | undefined => {
    if (value !== undefined && (typeof value !== "string" || value === "")) {
      throw new SpecError(`an extractor's name must be a non-empty string (got ${describe(value)})`);
    }
    return value;
  };
  const entry: ExtractorEntry = {
    name: checkName(name),
    fn: fn as (state: State) => unknown,
    cell: { current: undefined, previous: undefined },
    stack: callerStack(),
  };
  const cell = entry.cell as Extracted<T>;
  Object.defineProperty(cell, "named", {
    value: (label: string) => { entry.name = checkName(label); return cell; },
  });
  extractors.push(entry);
  return cell;
}

// ---------------------------------------------------------------- formulas

export type Predicate = (state: State) => boolean;
type Node =
  | { op: "pred"; id: number }
  | { op: "const"; value: boolean }
  | { op: "not"; arg: Node }
  | { op: "and" | "or"; args: Node[] }
  | { op: "implies"; left: Node; right: Node }
  | { op: "now" | "next" | "always"; arg: Node }
  | { op: "eventually"; arg: Node; within: null | { steps: number } | { ms: number } };

interface PredicateEntry { fn: Predicate; stack: string }
const predicates: PredicateEntry[] = [];

export type FormulaLike = Formula | Predicate | boolean;

export class Formula {
  /** @internal */ readonly node: Node;
  constructor(node: Node) { this.node = node; }
  implies(other: FormulaLike): Formula { return new Formula({ op: "implies", left: this.node, right: formula(other, "implies()") }); }
  and(...others: FormulaLike[]): Formula { return new Formula({ op: "and", args: [this.node, ...others.map((o) => formula(o, "and()"))] }); }
  or(...others: FormulaLike[]): Formula { return new Formula({ op: "or", args: [this.node, ...others.map((o) => formula(o, "or()"))] }); }
  not(): Formula { return new Formula({ op: "not", arg: this.node }); }
  toJSON(): Node { return this.node; }
}

export class Eventually extends Formula {
  /** Bound the obligation: it is violated if `n` steps / seconds / milliseconds pass first. */
  within(n: number, unit: "steps" | "seconds" | "milliseconds"): Formula {
    if (typeof n !== "number" || !Number.isFinite(n) || n < 0) throw new SpecError(`within() needs a non-negative number (got ${describe(n)})`);
    const arg = (this.node as { arg: Node }).arg;
    if (unit === "steps") return new Formula({ op: "eventually", arg, within: { steps: Math.floor(n) } });
    if (unit === "seconds") return new Formula({ op: "eventually", arg, within: { ms: Math.round(n * 1000) } });
    if (unit === "milliseconds") return new Formula({ op: "eventually", arg, within: { ms: Math.round(n) } });
    throw new SpecError(`within() unit must be "steps", "seconds" or "milliseconds" (got ${describe(unit)})`);
  }
}

function formula(value: FormulaLike, where: string): Node {
  if (value instanceof Formula) return value.node;
  if (typeof value === "boolean") return { op: "const", value };
  if (typeof value === "function") {
    predicates.push({ fn: value as Predicate, stack: callerStack() });
    return { op: "pred", id: predicates.length - 1 };
  }
  throw new SpecError(`${where} takes a formula, a predicate (() => boolean) or a boolean (got ${describe(value)})`);
}

/** `p` holds at every step. */
export function always(p: FormulaLike): Formula { return new Formula({ op: "always", arg: formula(p, "always()") }); }
/** `p` holds at the current step. */
export function now(p: FormulaLike): Formula { return new Formula({ op: "now", arg: formula(p, "now()") }); }
/** `p` holds at the next step. */
export function next(p: FormulaLike): Formula { return new Formula({ op: "next", arg: formula(p, "next()") }); }
/** `p` holds at some step from now on; bound it with `.within(n, unit)`. */
export function eventually(p: FormulaLike): Eventually {
  return new Eventually({ op: "eventually", arg: formula(p, "eventually()"), within: null });
}

// ---------------------------------------------------------------- generators

/** A node of the action tree. */
export abstract class Generator {
  label?: string;
  /** @internal */ abstract collect(state: State, place: Place, out: Output): void;
  /** Name this generator in the trace. */
  named(label: string): this { this.label = label; return this; }
}

interface PathStep { index: number; weight: number; label?: string }
/** A place in the action tree, numbered at load: the host has every place's path
 * from the root, so a candidate names its place by number, not by its path. */
interface Place { id: number; children: Place[] }
/** A step's candidates as `[place, action]`, or `[place, "taps" | "swipes"]` for
 * the host to expand; its generator errors by place too. */
interface Output { candidates: [number, Action | string][]; generatorErrors: { place: number; message: string; stack: string }[] }

class ActionsGenerator extends Generator {
  constructor(private readonly fn: (state: State) => Action | Action[] | null | undefined, label?: string) { super(); this.label = label; }
  collect(state: State, place: Place, out: Output): void {
    doing(3_000_000 + place.id);
    try {
      const result = this.fn(state);
      const list = result == null ? [] : Array.isArray(result) ? result : [result];
      // Indexed loops here and in `step`: `for…of` and `forEach` cost an iterator or a
      // closure call per item in QuickJS, and these run for every item of every step.
      for (let i = 0; i < list.length; i++) {
        const action = list[i];
        if (!action || typeof action !== "object" || typeof (action as any).type !== "string") {
          throw new SpecError(`a generator returned ${describe(action)}, not an action (build actions with Tap(), InputText(), Scroll() and the other constructors)`);
        }
        out.candidates.push([place.id, action]);
      }
    } catch (error) {
      out.generatorErrors.push({ place: place.id, message: errorMessage(error), stack: errorStack(error) });
    }
  }
}

class WeightedGenerator extends Generator {
  constructor(readonly children: { weight: number; gen: Generator; label?: string }[]) { super(); }
  collect(state: State, place: Place, out: Output): void {
    for (let i = 0; i < this.children.length; i++) this.children[i].gen.collect(state, place.children[i], out);
  }
}

/** Numbers the places of the tree under `gen` (at `path`) into `paths`, depth first;
 * `nodes[id]` is the generator at place `id` with its place and the gates above it
 * (a `whenRoute` takes no place of its own: it gates the place of what it wraps). */
function placeTree(gen: Generator, path: PathStep[], paths: PathStep[][], nodes: Root[], gates: Gate[] = []): Place {
  while (gen instanceof GatedGenerator) {
    gates = [...gates, gen.gate];
    gen = gen.inner;
  }
  const place: Place = { id: paths.length, children: [] };
  paths.push(path);
  nodes.push({ gen, place, gates });
  if (gen instanceof WeightedGenerator) {
    place.children = gen.children.map((child, index) => {
      const step: PathStep = { index, weight: child.weight };
      const label = child.label ?? child.gen.label;
      if (label !== undefined) step.label = label;
      return placeTree(child.gen, [...path, step], paths, nodes, gates);
    });
  }
  return place;
}

/** Whether every gate lets the state through; a gate that throws is the generator's
 * error at `place`, and closes it. */
function opens(gates: readonly Gate[], state: State, place: Place, out: Output): boolean {
  for (let i = 0; i < gates.length; i++) {
    try {
      if (!gates[i](state)) return false;
    } catch (error) {
      out.generatorErrors.push({ place: place.id, message: errorMessage(error), stack: errorStack(error) });
      return false;
    }
  }
  return true;
}

type Gate = (state: State) => boolean;

/** A generator offered only while a gate holds (`whenRoute`). */
class GatedGenerator extends Generator {
  constructor(readonly gate: Gate, readonly inner: Generator) { super(); this.label = inner.label; }
  collect(state: State, place: Place, out: Output): void {
    if (opens([this.gate], state, place, out)) this.inner.collect(state, place, out);
  }
}

/** `generator` offered only on some screens: `whenRoute(route, ["home", "ledger"], body)`
 * (an extractor's current value is one of `routes`; `body` a generator or a function
 * returning actions, as `actions()` takes), or `whenRoute((s) => …, generator)`. */
export function whenRoute<T>(route: Extracted<T>, routes: T | readonly T[], body: Generator | ((state: State) => Action | Action[] | null | undefined)): Generator;
export function whenRoute(when: (state: State) => boolean, body: Generator | ((state: State) => Action | Action[] | null | undefined)): Generator;
export function whenRoute(first: unknown, second: unknown, third?: unknown): Generator {
  const asGenerator = (body: unknown, what: string): Generator => {
    if (body instanceof Generator) return body;
    if (typeof body === "function") return actions(body as (state: State) => Action[]);
    throw new SpecError(`whenRoute(): ${what} must be a generator or a function returning actions (got ${describe(body)})`);
  };
  if (typeof first === "function") {
    if (third !== undefined) throw new SpecError("whenRoute(predicate, generator) takes two arguments");
    return new GatedGenerator(first as Gate, asGenerator(second, "the second argument"));
  }
  if (first !== null && typeof first === "object" && "current" in first) {
    const route = first as Extracted<unknown>;
    const routes: readonly unknown[] = Array.isArray(second) ? second.slice() : [second];
    return new GatedGenerator(() => routes.includes(route.current), asGenerator(third, "the third argument"));
  }
  throw new SpecError(`whenRoute() takes an extractor and its routes, or a predicate of the state (got ${describe(first)})`);
}

/** A leaf of the action tree: `fn` returns this step's actions (none to stay silent). */
export function actions(fn: (state: State) => Action | Action[] | null | undefined, label?: string): Generator {
  if (typeof fn !== "function") throw new SpecError(`actions() takes a function returning actions (got ${describe(fn)})`);
  return new ActionsGenerator(fn, label);
}

/** Weighted choice among generators: `weighted([3, login], [1, taps, "explore"])`. Nestable. */
export function weighted(...entries: [number, Generator, string?][]): Generator {
  if (entries.length === 0) throw new SpecError("weighted() needs at least one [weight, generator] pair");
  return new WeightedGenerator(entries.map((entry, i) => {
    if (!Array.isArray(entry) || entry.length < 2) throw new SpecError(`weighted() entry ${i} must be [weight, generator] (got ${describe(entry)})`);
    const [weight, gen, label] = entry;
    if (typeof weight !== "number" || !Number.isFinite(weight) || weight <= 0) {
      throw new SpecError(`weighted() entry ${i}: the weight must be a positive number (got ${describe(weight)})`);
    }
    if (!(gen instanceof Generator)) throw new SpecError(`weighted() entry ${i}: ${describe(gen)} is not a generator (use actions(), weighted() or a built-in)`);
    return { weight, gen, label };
  }));
}

/** A source of values: `generate()` draws one with the run's seeded randomness, so a
 * run draws the same values again from the same seed. */
export class Sampler<T> {
  constructor(private readonly draw: () => T) {}
  generate(): T { return this.draw(); }
}

/** A whole number in [0, n), seeded. */
function below(n: number): number { return Math.floor(Math.random() * n); }

function wholeNumber(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value)) {
    throw new SpecError(`${what} must be a whole number (got ${describe(value)})`);
  }
  return value;
}

function range(min: unknown, max: unknown, what: string): [number, number] {
  const low = wholeNumber(min, `${what} min`), high = wholeNumber(max, `${what} max`);
  if (low > high) throw new SpecError(`${what}: min ${low} is over max ${high}`);
  return [low, high];
}

/** An item of `items`, each as likely. */
export function from<T>(items: readonly T[]): Sampler<T> {
  if (!Array.isArray(items) || items.length === 0) throw new SpecError(`from() takes a non-empty array (got ${describe(items)})`);
  const copy = items.slice();
  return new Sampler(() => copy[below(copy.length)]);
}

/** Whole numbers: `integers().between(1, 500)` (both ends included). */
export class IntegerSampler extends Sampler<number> {
  constructor(min: number, max: number) {
    super(() => min + below(max - min + 1));
  }
  /** Numbers from `min` to `max`, both included. */
  between(min: number, max: number): IntegerSampler {
    const [low, high] = range(min, max, "integers().between");
    return new IntegerSampler(low, high);
  }
}

/** Whole numbers from 0 to 1000 until `.between(min, max)` says otherwise. */
export function integers(): IntegerSampler { return new IntegerSampler(0, 1000); }

const ALPHA = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const NUMERIC = "0123456789";

/** Strings of characters from an alphabet: `strings().length(1, 12).alnum()`. */
export class StringSampler extends Sampler<string> {
  constructor(private readonly min: number, private readonly max: number, private readonly alphabet: string) {
    super(() => {
      let text = "";
      const length = min + below(max - min + 1);
      for (let i = 0; i < length; i++) text += alphabet[below(alphabet.length)];
      return text;
    });
  }
  /** Lengths from `min` to `max` characters, both included. */
  length(min: number, max: number): StringSampler {
    const [low, high] = range(min, max, "strings().length");
    if (low < 0) throw new SpecError(`strings().length: min must be 0 or more (got ${low})`);
    return new StringSampler(low, high, this.alphabet);
  }
  /** Letters only (a–z, A–Z). */
  alpha(): StringSampler { return new StringSampler(this.min, this.max, ALPHA); }
  /** Digits only. */
  numeric(): StringSampler { return new StringSampler(this.min, this.max, NUMERIC); }
  /** Letters and digits. */
  alnum(): StringSampler { return new StringSampler(this.min, this.max, ALPHA + NUMERIC); }
}

/** Letters and digits, 0 to 16 of them, until `.length()` and `.alpha()`/`.numeric()`
 * say otherwise. */
export function strings(): StringSampler { return new StringSampler(0, 16, ALPHA + NUMERIC); }

/** Email addresses `<letters and digits>@<domain>`: `emails().domain("example.com")`. */
export class EmailSampler extends Sampler<string> {
  constructor(host: string) {
    const local = new StringSampler(1, 12, "abcdefghijklmnopqrstuvwxyz" + NUMERIC);
    super(() => `${local.generate()}@${host}`);
  }
  /** Addresses at `domain`. */
  domain(domain: string): EmailSampler {
    if (typeof domain !== "string" || !/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/.test(domain)) {
      throw new SpecError(`emails().domain takes a domain name like "example.com" (got ${describe(domain)})`);
    }
    return new EmailSampler(domain);
  }
}

/** Email addresses at `example.com` until `.domain()` says otherwise. */
export function emails(): EmailSampler { return new EmailSampler("example.com"); }

/** Text that breaks naive input handling: empty, spaces only, very long, combining marks,
 * emoji, right-to-left, HTML and SQL metacharacters, a newline, numeric edge cases. */
export const EDGE_CASE_CORPUS: readonly string[] = Object.freeze([
  "",
  " ",
  "   leading and trailing   ",
  "x".repeat(1000),
  "e\u0301\u0301\u0301 Z\u0335\u0321\u0322a\u0336\u0327lgo",
  "\u{1F600}\u{1F469}\u200D\u{1F469}\u200D\u{1F467}\u{1F1EF}\u{1F1F5}",
  "\u05E9\u05DC\u05D5\u05DD \u0645\u0631\u062D\u0628\u0627",
  "<script>alert(1)</script>",
  "'; DROP TABLE users; --",
  "\"quoted\" & <b>bold</b>",
  "first line\nsecond line",
  "0",
  "-1",
  "9999999999999999999999",
  "1e309",
  "NaN",
]);

const EDGE_CASE_TEXT = from(EDGE_CASE_CORPUS);

/** A value of `EDGE_CASE_CORPUS`, each as likely. */
export function edgeCaseText(): Sampler<string> { return EDGE_CASE_TEXT; }

/** A built-in leaf that the host expands from the accessibility tree (no JS work per element). */
type HostKind = "taps" | "doubleTaps" | "longPresses" | "scrolls" | "swipes";
class HostGenerator extends Generator {
  constructor(private readonly kind: HostKind) { super(); this.label = kind; }
  collect(_state: State, place: Place, out: Output): void {
    out.candidates.push([place.id, this.kind]);
  }
}

/** Tap any clickable, enabled element. */
export const taps: Generator = new HostGenerator("taps");

/** Double-tap any clickable, enabled element. */
export const doubleTaps: Generator = new HostGenerator("doubleTaps");

/** Long-press (1000 ms) any clickable, enabled element. */
export const longPresses: Generator = new HostGenerator("longPresses");

/** Scroll any scrollable element down or up, by half its height. */
export const scrolls: Generator = new HostGenerator("scrolls");

/** Swipe up or down across any scrollable element. */
export const swipes: Generator = new HostGenerator("swipes");

/** Type into any text field (an enabled, editable one) a value of the edge-case corpus
 * (`edgeCaseText()`), left pending in the field. */
export const typing: Generator = actions(() => {
  const fields = query(6, "");
  const out: Action[] = [];
  for (let i = 0; i < fields.length; i++) out.push(InputText({ into: fields[i], text: EDGE_CASE_TEXT.generate() }));
  return out;
}, "typing");

/** Wait half a second (once per step). */
export const waitOnce: Generator = actions(() => [Wait({ durationMillis: 500 })], "waitOnce");

/** Press the back key. */
export const pressKey: Generator = actions(() => [PressKey({ key: "back" })], "pressKey");

/** Press any key but `home` (which only sends the app to the background). */
export const pressKeys: Generator = actions(() => KEYS.filter((key) => key !== "home").map((key) => PressKey({ key: key as Key })), "pressKeys");

/** The browser's back, forward and reload (web; on Android back is the system back,
 * forward is not applied, reload restarts the app). */
export const navigation: Generator = actions(() => [Back(), Forward(), Reload()], "navigation");

/** A ready-made mix of the built-in generators: taps and typing 100, scrolls 50, swipes
 * 25, double taps and long presses 10, keys 5, navigation 2, waiting 2. */
export const defaultActions: Generator = weighted(
  [100, taps], [100, typing], [50, scrolls], [25, swipes], [10, doubleTaps], [10, longPresses],
  [5, pressKeys], [2, navigation], [2, waitOnce],
).named("defaultActions");

// ---------------------------------------------------------------- runtime (called by the provider)

declare const __uatuQuery: (kind: number, selector: string) => string;
// Tells the host what runs now (1_000_000 × kind + index; kinds: 1 extractor,
// 2 predicate, 3 generator by place), so an overrun can be reported precisely.
declare const __uatuDoing: (code: number) => void;
const doing = typeof __uatuDoing === "function" ? __uatuDoing : (_code: number) => {};
// Tells the host which phase of the step runs, so that it can time them (it has the clock).
declare const __uatuMark: (phase: number) => void;
const mark = typeof __uatuMark === "function" ? __uatuMark : (_phase: number) => {};
const PHASE_EXTRACTORS = 1, PHASE_PREDICATES = 2, PHASE_GENERATORS = 3, PHASE_RESULT = 4;

// Answers by selector, kept while the hierarchy stays the same (the host says
// when it changed), so an unchanged screen costs no query. After a change, the
// host answers "=" for a query whose answer is the same as on the screen before
// (it keeps the same two generations), and its elements keep their identity.
let answers = new Map<string, Element[]>();
let previousAnswers = new Map<string, Element[]>();
const SAME_ANSWER = "=";
const FULL_ANSWER = 16;
function query(kind: number, selector: string): Element[] {
  const key = `${kind}\u0000${selector}`;
  let found = answers.get(key);
  if (found === undefined) {
    const text = __uatuQuery(kind, selector);
    found = text === SAME_ANSWER ? previousAnswers.get(key) : undefined;
    found ??= freezeElements(JSON.parse(text === SAME_ANSWER ? __uatuQuery(kind + FULL_ANSWER, selector) : text) as Element[]);
    answers.set(key, found);
  }
  return found;
}

/** `deepFreeze` for a query's answer, whose shape is known: an element's only
 * objects are its `bounds` and `attrs` (walking every field costs a call each, for
 * every query of every changed screen). Each element gets its `find`/`findAll`. */
function freezeElements(elements: Element[]): Element[] {
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i];
    Object.setPrototypeOf(element, elementMethods);
    Object.freeze(element.bounds);
    Object.freeze(element.attrs);
    Object.freeze(element);
  }
  Object.freeze(elements);
  return elements;
}

function newScreen(): void {
  previousAnswers = answers;
  answers = new Map();
}

// The state is read-only: what the device reported cannot be changed by a spec,
// and a frozen value that is the same object as at the previous step is known
// to be unchanged (see `unchanged`).
function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  } else {
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

function isSettled(value: unknown): boolean {
  return value === null || typeof value !== "object" || Object.isFrozen(value);
}

/** Whether an extractor's value is certainly what it was at the previous step:
 * the same primitive or frozen object, or an array of the same such items. */
function unchanged(current: unknown, previous: unknown): boolean {
  if (current === previous) return isSettled(current);
  if (!Array.isArray(current) || !Array.isArray(previous) || current.length !== previous.length) return false;
  for (let i = 0; i < current.length; i++) {
    if (current[i] !== previous[i] || !isSettled(current[i])) return false;
  }
  return true;
}

const ax: Ax = {
  find(selector) {
    checkSelector(selector, "ax.find");
    return query(0, selectorText(selector))[0];
  },
  findAll(selector) {
    checkSelector(selector, "ax.findAll");
    return query(1, selectorText(selector)).slice();
  },
};

/** What every element inherits: its own `find` / `findAll`, answered on the host
 * inside the element (found again in the step's tree by its id, class and bounds). */
const elementMethods = {
  find(this: Element, selector: Selector): Element | undefined {
    checkSelector(selector, "Element.find");
    return query(4, insideText(this, selector))[0];
  },
  findAll(this: Element, selector: Selector): Element[] {
    checkSelector(selector, "Element.findAll");
    return query(5, insideText(this, selector)).slice();
  },
};

function insideText(element: Element, selector: Selector): string {
  return JSON.stringify({ within: { id: element.id, class: element.class, bounds: element.bounds }, selector });
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.name && error.name !== "Error" ? `${error.name}: ${error.message}` : error.message;
  return `a non-Error value was thrown: ${String(error)}`;
}
function errorStack(error: unknown): string {
  return error instanceof Error ? error.stack ?? "" : "";
}

// Deterministic randomness and time: xoshiro128** seeded from the run's seed. The
// state is four numbers, not an array: `Math.random` runs in generators at every
// step, and destructuring an array goes through QuickJS's iterator protocol.
let rng0 = 1, rng1 = 2, rng2 = 3, rng3 = 4;
function seedRandom(hi: number, lo: number): void {
  let s = (hi ^ 0x9e3779b9) >>> 0, t = (lo ^ 0x85ebca6b) >>> 0;
  const next = () => { // splitmix-like expansion
    s = (s + 0x6d2b79f5) >>> 0; t = (t ^ s) >>> 0;
    let z = Math.imul(s ^ (s >>> 15), 1 | t); z ^= z + Math.imul(z ^ (z >>> 7), 61 | z);
    return (z ^ (z >>> 14)) >>> 0;
  };
  rng0 = next(); rng1 = next(); rng2 = next(); rng3 = next();
  if ((rng0 | rng1 | rng2 | rng3) === 0) rng0 = 1;
}
function random(): number {
  const a = rng0, b = rng1, c = rng2, d = rng3;
  const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
  const t = (b << 9) >>> 0;
  let c2 = (c ^ a) >>> 0, d2 = (d ^ b) >>> 0;
  const b2 = (b ^ c2) >>> 0, a2 = (a ^ d2) >>> 0;
  c2 = (c2 ^ t) >>> 0; d2 = rotl(d2, 11);
  rng0 = a2; rng1 = b2; rng2 = c2; rng3 = d2;
  return result / 4294967296;
}
function rotl(x: number, k: number): number { return ((x << k) | (x >>> (32 - k))) >>> 0; }

let currentTime = 0;
const RealDate = Date;
class SpecDate extends RealDate {
  constructor(...args: unknown[]) {
    if (args.length === 0) super(currentTime); else super(...(args as [any]));
  }
  static now(): number { return currentTime; }
}

interface Root { gen: Generator; place: Place; gates: readonly Gate[] }
/** The generator at each place of the action tree, by place number (0 is the root). */
let tree: Root[] = [];
/** The state of the last step, for the host's `generate` calls that follow it. */
let stepState: State | null = null;
let names: (string | undefined)[] = [];

function load(namespace: Record<string, unknown>, seedHi: number, seedLo: number): string {
  seedRandom(seedHi, seedLo);
  const properties = namespace.properties;
  if (!properties || typeof properties !== "object" || Array.isArray(properties)) {
    throw new SpecError(`the spec must export \`properties\`, an object of name → formula (got ${describe(properties)})`);
  }
  const described: { name: string; formula: Node }[] = [];
  for (const [name, value] of Object.entries(properties)) {
    if (!(value instanceof Formula)) {
      throw new SpecError(`property "${name}" is not a formula (got ${describe(value)}); build it with always(), now(), next() or eventually()`);
    }
    described.push({ name, formula: value.node });
  }
  const gen = namespace.actions ?? namespace.actionsRoot;
  if (gen === undefined) throw new SpecError("the spec must export `actions` (or `actionsRoot`), the root generator");
  if (!(gen instanceof Generator)) throw new SpecError(`the exported \`actions\` is ${describe(gen)}, not a generator (use actions(), weighted() or a built-in)`);
  const places: PathStep[][] = [];
  tree = [];
  placeTree(gen, [], places, tree);
  const setup = setupOf(namespace.setup, places);
  const exportedName = new Map<unknown, string>();
  for (const [name, value] of Object.entries(namespace)) exportedName.set(value, name);
  const used = new Set<string>();
  names = extractors.map((e, i) => {
    let name = e.name ?? exportedName.get(e.cell) ?? `extractor${i}`;
    while (used.has(name)) name = `${name}#${i}`;
    used.add(name);
    return name;
  });
  return JSON.stringify({
    properties: described,
    predicates: predicates.map((p, id) => ({ id, stack: p.stack })),
    extractors: extractors.map((e, i) => ({ name: names[i], stack: e.stack })),
    places,
    setup,
  });
}

/** The `setup` export as the host reads it: a list of actions (dispatched in order), or
 * a generator whose tree follows the root's in `places` (drawn from until it offers
 * nothing). */
function setupOf(value: unknown, places: PathStep[][]): { actions: Action[] } | { place: number } | undefined {
  if (value === undefined) return undefined;
  if (value instanceof Generator) {
    const place = places.length;
    placeTree(value, [], places, tree);
    return { place };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const action = value[i];
      if (!action || typeof action !== "object" || typeof action.type !== "string") {
        throw new SpecError(`setup[${i}] is ${describe(action)}, not an action (build actions with Tap(), InputText() and the other constructors)`);
      }
    }
    return { actions: value.slice() };
  }
  throw new SpecError(`the exported \`setup\` is ${describe(value)}: export a list of actions or a generator`);
}

// The snapshots as of the last step: the host sends only the keys whose value
// changed (and the keys that went away), so unchanged snapshots are neither
// re-sent nor re-parsed and keep their identity.
let snapshots: Readonly<Record<string, unknown>> = Object.freeze({});
// The screen's size, sent when it changes.
let screen: Readonly<{ width: number; height: number }> = Object.freeze({ width: 0, height: 0 });

/** What the host sends each step (the provider hands it over parsed). */
interface RawState {
  step: number; time: number; screen?: { width: number; height: number };
  snapshots?: Record<string, unknown>; removedSnapshots?: string[]; hierarchyChanged?: boolean;
  logs?: LogEntry[]; exceptions?: ExceptionInfo[]; lastAction?: (Omit<LastAction, "applied"> & { applied?: LastAction["applied"] }) | null; generate?: boolean;
  window?: FocusedWindow;
  /** `false`: the extractors' values are not sent back (`uatu check` records none). */
  extractorValues?: boolean;
  /** The predicates not to run from this step on (sent when it changes). */
  skipPredicates?: number[];
}

// The predicates no property still checked refers to (every one using them is
// violated, so decided for the run): the host says which, and they are not run.
let skippedPredicates: boolean[] = [];
// Whether the last step sent the extractors' changed values: a step that sends them
// after one that did not sends every value, since the host's copy is out of date.
let valuesSent = false;

/** One step; its result goes back as JSON (the provider serialises it). */
function step(raw: RawState): StepResult {
  currentTime = raw.time;
  if (raw.screen !== undefined) screen = Object.freeze(raw.screen);
  if (raw.skipPredicates !== undefined) {
    skippedPredicates = predicates.map(() => false);
    for (const id of raw.skipPredicates) skippedPredicates[id] = true;
  }
  if (raw.hierarchyChanged !== false) newScreen();
  const removed: string[] = raw.removedSnapshots ?? [];
  const changed: Record<string, unknown> = raw.snapshots ?? {};
  if (removed.length > 0 || Object.keys(changed).length > 0) {
    const next: Record<string, unknown> = { ...snapshots };
    for (const key of removed) delete next[key];
    for (const key in changed) next[key] = deepFreeze(changed[key]);
    snapshots = Object.freeze(next);
  }
  const sent = raw.lastAction ?? null;
  // The host leaves `applied` out while nothing is known.
  if (sent !== null && sent.applied === undefined) sent.applied = "unknown";
  const lastAction = sent as LastAction | null;
  const state: State = {
    ax, snapshots, lastAction, logs: raw.logs ?? [],
    exceptions: raw.exceptions ?? [], time: raw.time, step: raw.step, screen,
    window: raw.window,
  };
  // Only the extractors whose value changed go back; the host keeps the others.
  // Without values (`uatu check`) every extractor still runs: predicates, generators
  // and other extractors read them, and an extractor may keep state of its own.
  const sendValues = raw.extractorValues !== false;
  const sendAll = sendValues && !valuesSent;
  valuesSent = sendValues;
  const extracted: Record<string, unknown> = {};
  const extractorErrors: { name: string; message: string; stack: string }[] = [];
  mark(PHASE_EXTRACTORS);
  for (let i = 0; i < extractors.length; i++) {
    const e = extractors[i];
    doing(1_000_000 + i);
    e.cell.previous = e.cell.current;
    try {
      e.cell.current = e.fn(state);
    } catch (error) {
      e.cell.current = undefined;
      extractorErrors.push({ name: names[i] ?? `extractor${i}`, message: errorMessage(error), stack: errorStack(error) });
    }
    if (sendValues && (sendAll || !unchanged(e.cell.current, e.cell.previous))) {
      extracted[names[i] ?? `extractor${i}`] = e.cell.current === undefined ? null : e.cell.current;
    }
  }
  mark(PHASE_PREDICATES);
  // One character per predicate: "1" held, "0" did not, "-" not run, "!" threw (its
  // error in `predicateErrors`). A string crosses to the host far more cheaply than a
  // list of values.
  let held = "";
  const predicateErrors: { id: number; message: string; stack: string }[] = [];
  for (let i = 0; i < predicates.length; i++) {
    if (skippedPredicates[i] === true) {
      held += "-";
      continue;
    }
    doing(2_000_000 + i);
    try {
      held += predicates[i].fn(state) ? "1" : "0";
    } catch (error) {
      held += "!";
      predicateErrors.push({ id: i, message: errorMessage(error), stack: errorStack(error) });
    }
  }
  stepState = state;
  mark(PHASE_GENERATORS);
  const out: Output = { candidates: [], generatorErrors: [] };
  // With `generate: false` the host asks for the branches it draws (`generate`),
  // or for none (a replay dispatches recorded actions).
  if (raw.generate !== false && tree.length > 0 && opens(tree[0].gates, state, tree[0].place, out)) {
    tree[0].gen.collect(state, tree[0].place, out);
  }
  doing(0);
  mark(PHASE_RESULT);
  // Empty lists are left out: each value crossing costs.
  const result: StepResult = { predicates: held };
  if (predicateErrors.length > 0) result.predicateErrors = predicateErrors;
  if (sendValues) result.extractors = extracted;
  if (extractorErrors.length > 0) result.extractorErrors = extractorErrors;
  if (out.candidates.length > 0) result.candidates = out.candidates;
  if (out.generatorErrors.length > 0) result.generatorErrors = out.generatorErrors;
  return result;
}

/** What `step` returns (the host's `RawStep`). */
interface StepResult extends Partial<Output> {
  predicates: string;
  predicateErrors?: { id: number; message: string; stack: string }[];
  extractors?: Record<string, unknown>;
  extractorErrors?: { name: string; message: string; stack: string }[];
}

/** The candidates of the action tree under `place`, over the last step's state. */
function generate(place: number): Output | undefined {
  const node = tree[place];
  if (node === undefined || stepState === null) throw new Error(`no place ${place} in an action tree of ${tree.length}, or no step yet`);
  const out: Output = { candidates: [], generatorErrors: [] };
  if (opens(node.gates, stepState, node.place, out)) node.gen.collect(stepState, node.place, out);
  doing(0);
  // A branch that offers nothing (most, gated on the screen) answers nothing.
  return out.candidates.length === 0 && out.generatorErrors.length === 0 ? undefined : out;
}

/** Called by the provider when a step's results or a branch's candidates cannot be
 * written as JSON (a cyclic value, a BigInt): throws naming the extractor, or the
 * generator, whose value it is. `error` is what the writer threw. */
function unwritable(result: Partial<Output> & { extractors?: Record<string, unknown> }, error: unknown): void {
  const why = errorMessage(error);
  for (const name in result.extractors ?? {}) {
    try {
      JSON.stringify(result.extractors?.[name]);
    } catch {
      throw new SpecError(`extractor ${name}: its value cannot be recorded as JSON (${why})`);
    }
  }
  for (const [place, action] of result.candidates ?? []) {
    try {
      JSON.stringify(action);
    } catch {
      const label = tree[place]?.gen.label;
      throw new SpecError(`generator ${label ?? `at place ${place}`}: an action cannot be sent as JSON (${why})`);
    }
  }
}

const g = globalThis as any;
if (g.__uatu === undefined) {
  g.__uatu = { load, step, generate, unwritable };
  Math.random = random;
  g.Date = SpecDate;
}
