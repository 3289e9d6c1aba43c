// @uatu/spec: the authoring API of uatu specs and the runtime that executes
// them inside uatu's QuickJS sandbox. See docs/spec-reference.md.

// ---------------------------------------------------------------- state

export interface Bounds { left: number; top: number; right: number; bottom: number }

/** An element of the accessibility tree. `x`/`y` is the centre of `bounds`. */
export interface Element {
  id: string; text: string; desc: string; class: string; package: string;
  clickable: boolean; enabled: boolean; checked: boolean; focused: boolean;
  selected: boolean; scrollable: boolean;
  bounds: Bounds; x: number; y: number;
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

/** Selectors: `id:<id>` (exact, or the `<value>` of an Android `…:id/<value>`),
 * `text:<text>`, `desc:<description>`, `descPrefix:<prefix>`; on the web also
 * `testid:<data-testid>` and `css:<tag.class#id>`. */
export type Selector = string;

export interface Ax {
  /** The first element (in tree order) the selector matches, or undefined. */
  find(selector: Selector): Element | undefined;
  /** Every element the selector matches, in tree order. */
  findAll(selector: Selector): Element[];
}

export interface State {
  ax: Ax;
  snapshots: Record<string, unknown>;
  lastAction: unknown | null;
  logs: LogEntry[];
  exceptions: ExceptionInfo[];
  /** Milliseconds of device time since the run started. */
  time: number;
  step: number;
  screen: { width: number; height: number };
  /** The focused window, on a device that can tell (Android); undefined elsewhere. */
  window?: FocusedWindow;
}

// ---------------------------------------------------------------- actions

export type Target = Selector | { x: number; y: number; bounds?: Bounds };
export type Key = "back" | "home" | "enter" | "tab" | "up" | "down" | "left" | "right";
export type Action =
  | { type: "tap"; on: Target }
  | { type: "inputText"; into?: Target; text: string }
  | { type: "swipe"; from: Target; to: Target; durationMillis?: number }
  | { type: "pressKey"; key: Key }
  | { type: "wait"; durationMillis: number };

const KEYS: readonly string[] = ["back", "home", "enter", "tab", "up", "down", "left", "right"];

/** The selector kinds the host understands (uatu-device's selector.rs). */
const SELECTOR_KINDS = new Set(["id", "text", "desc", "descPrefix", "testid", "css"]);

/** Whether `value` starts with a selector kind and a colon (a string test, not a
 * regular expression: it runs for every action and query of every step). */
function isSelector(value: string): boolean {
  const colon = value.indexOf(":");
  return colon > 0 && SELECTOR_KINDS.has(value.slice(0, colon));
}

function target(value: unknown, what: string): Target {
  if (typeof value === "string") {
    if (!isSelector(value)) {
      throw new SpecError(`${what}: "${value}" is not a selector (id:, text:, desc:, descPrefix:, testid: or css:)`);
    }
    return value;
  }
  if (value && typeof value === "object" && typeof (value as any).x === "number" && typeof (value as any).y === "number") {
    const v = value as any;
    const t: { x: number; y: number; bounds?: Bounds } = { x: Math.round(v.x), y: Math.round(v.y) };
    if (v.bounds) t.bounds = { left: v.bounds.left, top: v.bounds.top, right: v.bounds.right, bottom: v.bounds.bottom };
    return t;
  }
  throw new SpecError(`${what} must be a selector string or an element/point with x and y (got ${describe(value)})`);
}

function millis(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new SpecError(`${what} must be a non-negative number of milliseconds (got ${describe(value)})`);
  }
  return Math.round(value);
}

export function Tap(args: { on: Target }): Action {
  return { type: "tap", on: target(args?.on, "Tap.on") };
}
export function InputText(args: { into?: Target; text: string }): Action {
  if (typeof args?.text !== "string") throw new SpecError(`InputText.text must be a string (got ${describe(args?.text)})`);
  const action: Action = { type: "inputText", text: args.text };
  if (args.into !== undefined) action.into = target(args.into, "InputText.into");
  return action;
}
export function Swipe(args: { from: Target; to: Target; durationMillis?: number }): Action {
  const action: Action = { type: "swipe", from: target(args?.from, "Swipe.from"), to: target(args?.to, "Swipe.to") };
  if (args.durationMillis !== undefined) action.durationMillis = millis(args.durationMillis, "Swipe.durationMillis");
  return action;
}
export function PressKey(args: { key: Key }): Action {
  if (!KEYS.includes(args?.key)) throw new SpecError(`PressKey.key must be one of ${KEYS.join(", ")} (got ${describe(args?.key)})`);
  return { type: "pressKey", key: args.key };
}
export function Wait(args: { durationMillis: number }): Action {
  return { type: "wait", durationMillis: millis(args?.durationMillis, "Wait.durationMillis") };
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

export interface Extracted<T> { readonly current: T; readonly previous: T | undefined }

interface ExtractorEntry { name?: string; fn: (state: State) => unknown; cell: { current: unknown; previous: unknown }; stack: string }
const extractors: ExtractorEntry[] = [];

/** A value read out of every state, before anything else runs at that step. */
export function extract<T>(fn: (state: State) => T, name?: string): Extracted<T> {
  if (typeof fn !== "function") throw new SpecError(`extract() takes a function of the state (got ${describe(fn)})`);
  const cell = { current: undefined as unknown, previous: undefined as unknown };
  extractors.push({ name, fn, cell, stack: callerStack() });
  return cell as Extracted<T>;
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
          throw new SpecError(`a generator returned ${describe(action)}, not an action (use Tap, InputText, Swipe, PressKey or Wait)`);
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
 * `nodes[id]` is the generator at place `id` with its place. */
function placeTree(gen: Generator, path: PathStep[], paths: PathStep[][], nodes: Root[]): Place {
  const place: Place = { id: paths.length, children: [] };
  paths.push(path);
  nodes.push({ gen, place });
  if (gen instanceof WeightedGenerator) {
    place.children = gen.children.map((child, index) => {
      const step: PathStep = { index, weight: child.weight };
      const label = child.label ?? child.gen.label;
      if (label !== undefined) step.label = label;
      return placeTree(child.gen, [...path, step], paths, nodes);
    });
  }
  return place;
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

/** A sampler over a list: `generate()` picks one item, with the run's seeded randomness. */
export class Sampler<T> {
  constructor(private readonly items: readonly T[]) {}
  generate(): T { return this.items[Math.floor(Math.random() * this.items.length)]; }
}

export function from<T>(items: readonly T[]): Sampler<T> {
  if (!Array.isArray(items) || items.length === 0) throw new SpecError(`from() takes a non-empty array (got ${describe(items)})`);
  return new Sampler(items.slice());
}

/** A built-in leaf that the host expands from the accessibility tree (no JS work per element). */
class HostGenerator extends Generator {
  constructor(private readonly kind: "taps" | "swipes") { super(); this.label = kind; }
  collect(_state: State, place: Place, out: Output): void {
    out.candidates.push([place.id, this.kind]);
  }
}

/** Tap any clickable, enabled element. */
export const taps: Generator = new HostGenerator("taps");

/** Swipe up or down across any scrollable element. */
export const swipes: Generator = new HostGenerator("swipes");

/** Wait half a second (once per step). */
export const waitOnce: Generator = actions(() => [Wait({ durationMillis: 500 })], "waitOnce");

/** Press the back key. */
export const pressKey: Generator = actions(() => [PressKey({ key: "back" })], "pressKey");

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
 * object is its `bounds` (walking every field costs a call each, for every query
 * of every changed screen). */
function freezeElements(elements: Element[]): Element[] {
  for (let i = 0; i < elements.length; i++) {
    Object.freeze(elements[i].bounds);
    Object.freeze(elements[i]);
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
    checkSelector(selector);
    return query(0, selector)[0];
  },
  findAll(selector) {
    checkSelector(selector);
    return query(1, selector).slice();
  },
};

function checkSelector(selector: unknown): void {
  if (typeof selector !== "string" || !isSelector(selector)) {
    throw new SpecError(`${describe(selector)} is not a selector: use id:, text:, desc:, descPrefix:, testid: or css:`);
  }
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

interface Root { gen: Generator; place: Place }
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
  });
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
  logs?: LogEntry[]; exceptions?: ExceptionInfo[]; lastAction?: unknown; generate?: boolean;
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
  const state: State = {
    ax, snapshots, lastAction: raw.lastAction ?? null, logs: raw.logs ?? [],
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
  if (raw.generate !== false && tree.length > 0) tree[0].gen.collect(state, tree[0].place, out);
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
  node.gen.collect(stepState, node.place, out);
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
