// The spec of TodoMVC (app-spec.md of tastejs/todomvc), for any implementation
// run on the web device: `uatu run --device web --url http://127.0.0.1:PORT/`.
//
// TodoMVC apps expose no snapshots, so everything is read from the page: the
// web device's hierarchy gives each element `class` = `tag.class1.class2`, its
// id, its visible text (a field's value), and the document root's text is the
// page URL. Elements of the todo list are found by lying inside `ul.todo-list`.
//
// Properties are of two kinds: invariants of every screen (the counter counts
// the active todos and pluralises, the list and footer hide when there are no
// todos, filters show what their route says) and the effect of the action just
// taken (adding trims and ignores empty input, toggle, toggle-all, editing with
// Enter / Escape / blur, delete, clear completed, filter links).
// A double click is two taps in a row on one label (the device turns two
// presses at one point within 500 ms of the user's time into a double click, as
// a desktop does; the time uatu spends settling and capturing between them does
// not count).

import { actions, always, extract, from, InputText, PressKey, Tap, weighted } from "@uatu/spec";
import type { Element, State } from "@uatu/spec";
import { noLogcatErrors, noUncaughtExceptions } from "@uatu/spec/defaults/properties";

interface Item { title: string; completed: boolean; editing: boolean; top: number; bottom: number }
type Route = "all" | "active" | "completed";
interface ResolvedAction {
  action: { type: string; text?: string; key?: string; on?: unknown; into?: unknown };
  generator: string;
  point?: { x: number; y: number };
}

// ------------------------------------------------------------ reading the page

const classes = (e: Element) => e.class.split(".").slice(1);
const hasClass = (e: Element, name: string) => classes(e).includes(name);
/** Whitespace as the page shows it: runs collapsed, ends trimmed. */
const shown = (text: string) => text.replace(/\s+/g, " ").trim();
const within = (outer: Element | undefined) => (e: Element) =>
  outer !== undefined && e.y >= outer.bounds.top && e.y < outer.bounds.bottom &&
  e.x >= outer.bounds.left && e.x < outer.bounds.right;
/** The first element of any of these selectors. */
const first = (s: State, ...selectors: string[]) => {
  for (const selector of selectors) {
    const found = s.ax.find(selector);
    if (found) return found;
  }
  return undefined;
};
const list = (s: State) => first(s, "css:ul.todo-list", "css:#todo-list");

// The route: app-spec.md's `#/active` and `#!/active`; also `#!active` (canjs's
// router) and, on a page with no hash, the path's last segment (History API
// routers: emberjs's `…/active`). The filter, not the URL's exact form, is checked.
const route = extract((s): Route => {
  const url = s.ax.find("css:document")?.text ?? "";
  const hashAt = url.indexOf("#");
  // A second `#` is no part of the route: lavaca_require appends its history id (`#/active#@12`).
  const path = hashAt >= 0 ? url.slice(hashAt + 1).split("#")[0] : url.replace(/^[a-z]+:\/\/[^/]*/, "").replace(/[?].*$/, "");
  const segment = path.replace(/^!/, "").split("/").filter((p) => p !== "").pop() ?? "";
  return segment === "active" ? "active" : segment === "completed" ? "completed" : "all";
}, "route");

const items = extract((s): Item[] => {
  const inList = within(list(s));
  return s.ax.findAll("css:li").filter(inList).map((li) => {
    const editing = hasClass(li, "editing");
    const label = s.ax.findAll("css:label").find((l) => l.y >= li.bounds.top && l.y < li.bounds.bottom);
    const edit = s.ax.findAll("css:input.edit").find((l) => l.y >= li.bounds.top && l.y < li.bounds.bottom);
    return {
      title: shown(editing ? edit?.text ?? "" : label?.text ?? li.text),
      completed: hasClass(li, "completed"),
      editing,
      top: li.bounds.top,
      bottom: li.bounds.bottom,
    };
  });
}, "items");

const counter = extract((s) => {
  const found = first(s, "css:span.todo-count", "css:.todo-count", "css:#todo-count");
  return found ? shown(found.text) : null;
}, "counter");
const toggleAll = extract((s) => first(s, "css:input.toggle-all", "css:#toggle-all")?.checked ?? null, "toggleAll");
/** The filter links' container: a `ul` in the template, polymer's is an `iron-selector.filters`. */
const filterList = (s: State) => first(s, "css:ul.filters", "css:.filters", "css:#filters");
const selectedFilter = extract((s) => {
  const filters = filterList(s);
  return s.ax.findAll("css:a.selected").find(within(filters))?.text.trim() ?? null;
}, "selectedFilter");
const filterLinks = extract((s) => {
  const filters = filterList(s);
  return s.ax.findAll("css:a").filter(within(filters))
    .map((a) => ({ label: a.text.trim(), bounds: a.bounds }))
    .filter((a) => FILTER_ROUTES[a.label] !== undefined);
}, "filterLinks");
const mainShown = extract((s) => first(s, "css:.main", "css:#main") !== undefined, "mainShown");
// lit has no footer element: its `todo-footer` holds the counter and the filters (hidden with it).
const footerShown = extract((s) =>
  first(s, "css:footer.footer", "css:.footer", "css:#footer", "css:todo-footer") !== undefined, "footerShown");
/** What the new-todo field shows (an add types into it; an add without Enter leaves its text there). */
const newTodoText = extract((s) => first(s, "css:input.new-todo", "css:#new-todo")?.text ?? "", "newTodoText");
const clearShown = extract((s) => first(s, "css:.clear-completed", "css:#clear-completed") !== undefined, "clearShown");
const editField = extract((s) => {
  const edit = s.ax.findAll("css:input.edit").find(within(list(s)));
  return edit ? { text: edit.text, focused: edit.focused } : null;
}, "editField");
/** The titles before the edit in progress began (null when nothing is being edited). */
const beforeEdit = extract((): string[] | null => {
  if (!items.current.some((i) => i.editing)) return null;
  return beforeEdit.previous ?? items.previous?.map((i) => i.title) ?? null;
}, "beforeEdit");

// ------------------------------------------------------------ what was just done

const last = (s: State) => s.lastAction as ResolvedAction | null;
const did = (s: State, generator: string) => last(s)?.generator.endsWith(generator) ?? false;
const before = () => items.previous ?? [];
const editedIndex = () => before().findIndex((i) => i.editing);
/** The previous item under the point the last action acted on. */
const actedOnIndex = (s: State) => {
  const y = last(s)?.point?.y;
  return y === undefined ? -1 : before().findIndex((i) => y >= i.top && y < i.bottom);
};
/** The value of a field after typing `typed` into it: `\b` erases, `\n` submits. */
const afterTyping = (value: string, typed: string) => {
  let text = value;
  for (const c of typed) {
    if (c === "\b") text = text.slice(0, -1);
    else if (c !== "\n") text += c;
  }
  return text;
};
/** Whether the text typed by the last action pressed Enter. */
const submitted = (s: State) => (last(s)?.action.text ?? "").includes("\n");
const titles = (list: Item[]) => list.map((i) => i.title);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const activeCount = () => items.current.filter((i) => !i.completed).length;
const FILTER_ROUTES: Record<string, Route> = { All: "all", Active: "active", Completed: "completed" };
const FILTER_LABELS: Record<Route, string> = { all: "All", active: "Active", completed: "Completed" };

// ------------------------------------------------------------ properties

export const properties = {
  // The counter: "<strong>N</strong> item(s) left", N the active todos. The
  // newer implementations (react, preact) end it with "!", which app-spec.md
  // does not rule out (it asks for the number in <strong> and the plural).
  counterIsPluralised: always(() => {
    if (counter.current === null) return true;
    const m = /^(\d+) (item|items) left!?$/.exec(counter.current);
    return m !== null && (Number(m[1]) === 1) === (m[2] === "item");
  }),
  counterCountsActiveTodos: always(() =>
    route.current !== "all" || counter.current === null || counter.current.startsWith(`${activeCount()} `)),

  // No todos: #main and #footer hidden; todos: both shown.
  mainAndFooterOnlyWithTodos: always(() =>
    route.current !== "all" || items.current.some((i) => i.editing) ||
    (items.current.length > 0) === (mainShown.current && footerShown.current) &&
      (items.current.length > 0 || (!mainShown.current && !footerShown.current))),

  // Routes filter the list on the model, and the matching filter link is selected.
  routeFiltersTheList: always(() =>
    route.current === "all" ||
    items.current.every((i) => i.completed === (route.current === "completed"))),
  selectedFilterFollowsRoute: always(() =>
    !footerShown.current || selectedFilter.current === FILTER_LABELS[route.current]),

  clearCompletedOnlyWithCompletedTodos: always(() =>
    route.current !== "all" || !footerShown.current || clearShown.current === items.current.some((i) => i.completed)),
  toggleAllIsCheckedIffAllCompleted: always(() =>
    route.current !== "all" || items.current.length === 0 || toggleAll.current === null ||
    toggleAll.current === items.current.every((i) => i.completed)),

  // New todo: Enter appends the trimmed title and clears the input; blank input adds nothing.
  // Only an add that pressed Enter is judged (shrinking may cut the "\n" off its text), and
  // the title is what the field then held: typing adds to what an earlier add left there.
  addingAppendsTrimmedTitle: always((s) => {
    if (!did(s, "add") || !submitted(s) || before().some((i) => i.editing)) return true;
    const typed = shown(afterTyping(newTodoText.previous ?? "", last(s)?.action.text ?? ""));
    if (typed === "") return same(titles(items.current), titles(before()));
    // An app may show "All" after an add (canjs does); app-spec.md does not rule it out.
    if (route.current !== route.previous) return route.current === "completed" || titles(items.current).at(-1) === typed;
    if (route.current === "completed") return same(titles(items.current), titles(before()));
    return same(titles(items.current), [...titles(before()), typed]);
  }),
  newTodoInputIsClearedAfterAdding: always((s) => {
    if (!did(s, "add") || !submitted(s) || before().some((i) => i.editing)) return true;
    const typed = shown(afterTyping(newTodoText.previous ?? "", last(s)?.action.text ?? ""));
    const input = first(s, "css:input.new-todo", "css:#new-todo");
    return typed === "" || input === undefined || input.text === "";
  }),

  // Item checkbox: toggles that item only (and it leaves a filter that no longer shows it).
  toggleFlipsOneTodo: always((s) => {
    const index = actedOnIndex(s);
    if (!did(s, "toggle") || index < 0) return true;
    const flipped = before().map((item, i) => (i === index ? { ...item, completed: !item.completed } : item));
    const expected = flipped.filter((i) => route.current === "all" || i.completed === (route.current === "completed"));
    return same(items.current.map((i) => [i.title, i.completed]), expected.map((i) => [i.title, i.completed]));
  }),
  toggleAllSetsEveryTodo: always((s) => {
    if (!did(s, "toggleAll") || route.current !== "all" || before().length === 0) return true;
    const target = !before().every((i) => i.completed);
    return same(titles(items.current), titles(before())) && items.current.every((i) => i.completed === target);
  }),

  // Editing: a double click edits with the title in a focused field; Enter and blur
  // save the trimmed value (an empty one deletes the todo); Escape discards.
  // What is saved is compared with the field as it was shown just before Enter or
  // the blur, not with a prediction of the typing: app-spec.md does not say where
  // the caret starts (at the end in most apps; at the start in exoskeleton,
  // backbone_require and typescript-backbone, whose `value = value` no longer moves it).
  doubleClickStartsEditing: always((s) => {
    const index = actedOnIndex(s);
    if (!did(s, "editSecondTap") || index < 0 || before()[index]?.editing) return true;
    const item = items.current[index];
    return item !== undefined && item.editing && editField.current !== null &&
      editField.current.focused && shown(editField.current.text) === before()[index].title;
  }),
  enterAndBlurSaveTheEdit: always((s) => {
    const index = editedIndex();
    const submitted = did(s, "editSubmit") || did(s, "editBlur");
    if (!submitted || index < 0 || editField.previous === null || editField.previous === undefined) return true;
    const value = shown(editField.previous.text);
    const expected = titles(before()).map((t, i) => (i === index ? value : t)).filter((t, i) => i !== index || t !== "");
    return same(titles(items.current), expected) && !items.current.some((i) => i.editing);
  }),
  escapeDiscardsTheEdit: always((s) => {
    if (!did(s, "editEscape") || editedIndex() < 0 || beforeEdit.previous === null) return true;
    return same(titles(items.current), beforeEdit.previous) && !items.current.some((i) => i.editing);
  }),

  destroyRemovesThatTodo: always((s) => {
    const index = actedOnIndex(s);
    if (!did(s, "destroy") || index < 0) return true;
    return same(titles(items.current), titles(before()).filter((_, i) => i !== index));
  }),
  clearCompletedKeepsOnlyActiveTodos: always((s) => {
    if (!did(s, "clearCompleted") || route.current !== "all") return true;
    return same(titles(items.current), titles(before().filter((i) => !i.completed))) &&
      items.current.every((i) => !i.completed) && toggleAll.current !== true;
  }),
  filterLinksChangeTheRoute: always((s) => {
    const point = last(s)?.point;
    if (!did(s, "filter") || !point) return true;
    const link = (filterLinks.previous ?? []).find((a) =>
      point.x >= a.bounds.left && point.x < a.bounds.right && point.y >= a.bounds.top && point.y < a.bounds.bottom);
    return link === undefined || (route.current === FILTER_ROUTES[link.label] && selectedFilter.current === link.label);
  }),

  noUncaughtExceptions,
  noLogcatErrors,
};

// ------------------------------------------------------------ what a user does

const newTitles = from([
  "buy milk", "  walk the dog  ", "call mum", "", "   ", "pay the rent", "read a book",
  "water the plants", "x", "a todo with a rather long title that goes on and on",
]);
const edits = from([
  "", " and more", "\b\b\b", "\b".repeat(80) + "  renamed  ", "\b".repeat(80), "\b".repeat(80) + "   ",
]);

const editing = () => items.current.some((i) => i.editing);
/**
 * Whether a point lies in the viewport (the document's bounds). The hierarchy
 * keeps elements scrolled out of view, and a click outside the viewport reaches
 * nothing, so a tap on one would be a no-op that the properties read as a bug.
 */
const onScreen = (s: State) => (p: { x: number; y: number }) => {
  const viewport = s.ax.find("css:document")?.bounds;
  return viewport !== undefined && p.x >= viewport.left && p.x < viewport.right &&
    p.y >= viewport.top && p.y < viewport.bottom;
};
const listed = (s: State, selector: string) => s.ax.findAll(selector).filter(within(list(s))).filter(onScreen(s));
const centre = (e: Element) => ({ x: e.x, y: e.y, bounds: e.bounds });

const add = actions((s) => {
  if (editing()) return [];
  const input = first(s, "css:input.new-todo", "css:#new-todo");
  return input ? InputText({ into: centre(input), text: newTitles.generate() + "\n" }) : [];
}, "add");

const toggle = actions((s) => (editing() ? [] : listed(s, "css:input.toggle").map((e) => Tap({ on: centre(e) }))), "toggle");

const toggleAllTap = actions((s) => {
  if (editing()) return [];
  const label = s.ax.findAll("css:label").find((l) => shown(l.text) === "Mark all as complete");
  return label ? Tap({ on: centre(label) }) : [];
}, "toggleAll");

/** The first tap on a todo's title; it also hovers the todo, showing its delete button. */
const editFirstTap = actions((s) => (editing() ? [] : listed(s, "css:label").map((e) => Tap({ on: centre(e) }))), "editFirstTap");
/** Right after a first tap, the same point again: a double click. */
const editSecondTap = actions((s) => {
  const previous = last(s);
  if (editing() || !previous?.generator.endsWith("editFirstTap") || !previous.point) return [];
  return Tap({ on: { x: previous.point.x, y: previous.point.y } });
}, "editSecondTap");

const editType = actions(() => (editing() ? InputText({ text: edits.generate() }) : []), "editType");
/** Enter in the edit field, apart from the typing so the field's value before it is seen. */
const editSubmit = actions(() => (editing() ? InputText({ text: "\n" }) : []), "editSubmit");
const editEscape = actions(() => (editing() ? PressKey({ key: "back" }) : []), "editEscape");
const editBlur = actions((s) => {
  const heading = s.ax.find("css:h1");
  return editing() && heading ? Tap({ on: centre(heading) }) : [];
}, "editBlur");

const destroy = actions((s) => (editing() ? [] : listed(s, "css:button.destroy").map((e) => Tap({ on: centre(e) }))), "destroy");
const clearCompleted = actions((s) => {
  const button = first(s, "css:.clear-completed", "css:#clear-completed");
  return !editing() && button && onScreen(s)(button) ? Tap({ on: centre(button) }) : [];
}, "clearCompleted");
const filter = actions((s) => (editing() ? [] : filterLinks.current
  .map((a) => ({ x: (a.bounds.left + a.bounds.right) / 2, y: (a.bounds.top + a.bounds.bottom) / 2, bounds: a.bounds }))
  .filter(onScreen(s))
  .map((on) => Tap({ on }))), "filter");

export const actionsRoot = weighted(
  [1000, editSecondTap, "editSecondTap"],
  [8, add, "add"],
  [5, toggle, "toggle"],
  [2, toggleAllTap, "toggleAll"],
  [4, editFirstTap, "editFirstTap"],
  [4, editType, "editType"],
  [4, editSubmit, "editSubmit"],
  [2, editEscape, "editEscape"],
  [2, editBlur, "editBlur"],
  [3, destroy, "destroy"],
  [2, clearCompleted, "clearCompleted"],
  [3, filter, "filter"],
);
