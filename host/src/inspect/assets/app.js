// The uatu inspect page: the run list and the run view. One script, no
// dependencies; it reads either the inspect server's JSON API or, in a report,
// the data inlined in the file (see host/src/inspect/).
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
};
const SVG = "http://www.w3.org/2000/svg";
const svg = (tag, attrs = {}) => {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
};
const json = (id) => {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : null;
};

const CONFIG = json("uatu-config") || { mode: "server" };
const DATA = json("uatu-data");
const PAGE = 50;

// ---- where the data comes from -------------------------------------------

const source = CONFIG.mode === "report" ? reportSource(DATA) : serverSource();

function serverSource() {
  const get = async (url) => {
    const response = await fetch(url);
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  };
  const pages = new Map();
  const enc = encodeURIComponent;
  return {
    live: true,
    runs: () => get("/api/runs"),
    info: (id) => get(`/api/runs/${enc(id)}`),
    index: (id) => get(`/api/runs/${enc(id)}/index`),
    async step(id, n) {
      const key = `${id}/${Math.floor(n / PAGE)}`;
      let page = pages.get(key);
      if (!page) {
        page = get(`/api/runs/${enc(id)}/steps?from=${Math.floor(n / PAGE) * PAGE}&count=${PAGE}`);
        pages.set(key, page);
      }
      const got = await page;
      const record = got.steps[n - got.from];
      // A page read while the run was being written may be short: read it again later.
      if (got.steps.length < PAGE) pages.delete(key);
      return record || null;
    },
    file: (id, path) => `/api/runs/${enc(id)}/files/${path.split("/").map(enc).join("/")}`,
    events: (id, from) => new EventSource(`/api/runs/${enc(id)}/events?from=${from}`),
    link: (path) => path,
    route: () => location.pathname,
  };
}

function reportSource(data) {
  return {
    live: false,
    runs: async () => [data.run],
    info: async () => data.run,
    index: async () => data.index,
    step: async (id, n) => data.steps[n] || null,
    file: (id, path) => data.images[data.files[path]] || null,
    link: (path) => "#" + path,
    route: () => location.hash.slice(1) || `/runs/${data.run.id}`,
  };
}

// ---- routing ----------------------------------------------------------------

function parseRoute(path) {
  const m = /^\/runs\/([^/]+)(?:\/steps\/(\d+))?\/?$/.exec(path);
  if (!m) return { view: "list" };
  return { view: "run", id: decodeURIComponent(m[1]), step: m[2] === undefined ? 0 : Number(m[2]) };
}

function go(path, replace = false) {
  if (CONFIG.mode === "report") {
    const target = "#" + path;
    if (location.hash !== target) {
      if (replace) history.replaceState(null, "", target);
      else history.pushState(null, "", target);
    }
  } else if (location.pathname !== path) {
    if (replace) history.replaceState(null, "", path);
    else history.pushState(null, "", path);
  }
  render();
}

document.addEventListener("click", (event) => {
  const a = event.target.closest("a[data-route]");
  if (!a || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  go(a.dataset.route);
});
window.addEventListener("popstate", render);
window.addEventListener("hashchange", () => CONFIG.mode === "report" && render());

// ---- theme ------------------------------------------------------------------

function applyTheme(theme) {
  if (theme) document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}
try { applyTheme(localStorage.getItem("uatu-theme")); } catch (_) { /* storage may be off for file:// */ }
$("#theme").addEventListener("click", () => {
  const dark = document.documentElement.dataset.theme
    ? document.documentElement.dataset.theme === "dark"
    : matchMedia("(prefers-color-scheme: dark)").matches;
  const next = dark ? "light" : "dark";
  applyTheme(next);
  try { localStorage.setItem("uatu-theme", next); } catch (_) { /* ignore */ }
});

// ---- the run list -----------------------------------------------------------

let view = null; // the run view's state, when one is shown

async function render() {
  const route = parseRoute(source.route());
  $("#home").setAttribute("href", source.link("/"));
  $("#home").dataset.route = "/";
  if (route.view === "run") {
    if (view && view.id === route.id) {
      view.show(route.step);
      return;
    }
    if (view) view.close();
    view = new RunView(route.id);
    await view.open(route.step);
    return;
  }
  if (CONFIG.single && CONFIG.mode === "report") return go(`/runs/${CONFIG.single}`, true);
  if (view) view.close();
  view = null;
  await renderList();
}

async function renderList() {
  const app = $("#app");
  $("#crumbs").textContent = "runs";
  let runs;
  try {
    runs = await source.runs();
  } catch (error) {
    app.replaceChildren(el("p", { class: "error" }, String(error.message || error)));
    return;
  }
  const rows = runs.map((run) => {
    const meta = run.meta || {};
    const state = run.running ? el("span", { class: "badge running" }, "running") : null;
    return el("tr", { class: "run-row", dataset: { run: run.id } },
      el("td", {}, el("a", { href: source.link(`/runs/${run.id}`), dataset: { route: `/runs/${run.id}` } }, run.id), " ", state),
      el("td", {}, meta.started_at ? meta.started_at.replace("T", " ").replace(/\.\d+Z$/, "Z") : "?"),
      el("td", { class: "num" }, run.seed ?? "?"),
      el("td", {}, meta.device ? `${meta.device.kind} · ${meta.device.bundle_id}` : "?"),
      el("td", { class: "num" }, run.steps),
      el("td", {}, run.violated.length
        ? run.violated.map((p) => el("span", { class: "badge violated" }, p))
        : el("span", { class: "muted" }, run.running ? "…" : "none")));
  });
  app.replaceChildren(
    el("h1", {}, "Runs"),
    runs.length === 0 ? el("p", { class: "muted" }, "No runs here yet.") :
      el("table", { id: "runs", class: "grid" },
        el("thead", {}, el("tr", {}, ["run", "started", "seed", "device", "steps", "violated"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows)));
  document.body.dataset.ready = "list";
}

// ---- the run view -----------------------------------------------------------

const ROW = 24; // the step list's row height, px: the list draws only the rows in view

class RunView {
  constructor(id) {
    this.id = id;
    this.current = 0;
    this.index = { steps: [], timelines: {}, torn: false };
    this.count = 0;
    this.hoverNode = null;
  }

  async open(step) {
    const app = $("#app");
    $("#crumbs").replaceChildren(el("a", { href: source.link("/"), dataset: { route: "/" } }, "runs"), " / ", this.id);
    this.list = el("div", { id: "steps", tabindex: "0" });
    this.listInner = el("div", { class: "inner" });
    this.list.append(this.listInner);
    this.list.addEventListener("scroll", () => this.drawList());
    this.shot = el("img", { id: "screenshot", alt: "screenshot" });
    this.overlay = svg("svg", { id: "overlay" });
    this.screen = el("div", { id: "screen" }, this.shot, this.overlay);
    this.screen.addEventListener("mousemove", (e) => this.pointAt(e));
    this.screen.addEventListener("mouseleave", () => this.outline(null));
    this.title = el("div", { id: "step-title" });
    this.details = el("div", { id: "details" });
    this.timelines = el("div", { id: "timelines" });
    this.header = el("div", { id: "run-head" });
    app.replaceChildren(this.header,
      el("div", { id: "run" },
        el("section", { id: "left" }, this.list),
        el("section", { id: "middle" }, this.title, this.screen),
        el("section", { id: "right" }, this.details)),
      this.timelines);
    this.keys = (e) => this.key(e);
    document.addEventListener("keydown", this.keys);

    // The first screen needs the run's info and one page; the index (every step) follows.
    const [info] = await Promise.all([source.info(this.id).catch((e) => ({ error: e })), this.show(step)]);
    if (info.error) {
      app.replaceChildren(el("p", { class: "error" }, String(info.error.message || info.error)));
      return;
    }
    this.info = info;
    this.count = Math.max(this.count, info.steps);
    // The step may have been drawn before the run's info came: its verdicts come with it.
    if (this.record) this.drawDetails(this.record, this.previous);
    this.drawHead();
    this.drawList();
    const index = await source.index(this.id);
    this.index = index;
    this.count = Math.max(this.count, index.steps.length);
    this.drawHead();
    this.drawList();
    this.drawTimelines();
    if (source.live && info.running) this.follow();
  }

  close() {
    document.removeEventListener("keydown", this.keys);
    if (this.stream) this.stream.close();
  }

  follow() {
    this.stream = source.events(this.id, this.index.steps.length);
    this.stream.addEventListener("steps", (e) => {
      const added = JSON.parse(e.data);
      const wasLast = this.current >= this.count - 1;
      this.index.steps.push(...added.steps);
      for (const [name, changes] of Object.entries(added.timelines)) {
        const line = this.index.timelines[name] || (this.index.timelines[name] = []);
        for (const change of changes) {
          if (!line.length || line[line.length - 1][1] !== change[1]) line.push(change);
        }
      }
      this.count = this.index.steps.length;
      this.drawHead();
      this.drawList();
      this.drawTimelines();
      if (wasLast) this.seek(this.count - 1, true);
    });
    this.stream.addEventListener("ended", (e) => {
      this.info = JSON.parse(e.data);
      this.stream.close();
      this.drawHead();
      if (this.record) this.drawDetails(this.record, this.previous);
    });
  }

  drawHead() {
    const info = this.info || {};
    const meta = info.meta || {};
    const bits = [
      el("span", {}, `seed ${info.seed ?? "?"}`),
      el("span", {}, meta.device ? `${meta.device.kind} · ${meta.device.bundle_id}` : ""),
      el("span", { id: "step-count" }, `${this.count} steps`),
      info.running ? el("span", { class: "badge running", id: "running" }, "running") : null,
      this.index.torn ? el("span", { class: "badge warn", title: "The last line of trace.jsonl is incomplete (being written, or the run was killed)" }, "last record incomplete") : null,
      info.summary ? el("span", {}, `stopped by ${info.summary.stopped}`) : null,
    ];
    this.header.replaceChildren(...bits.filter(Boolean));
  }

  mark(n) {
    return this.index.steps[n];
  }

  drawList() {
    const total = this.count;
    this.listInner.style.height = `${total * ROW}px`;
    const first = Math.max(0, Math.floor(this.list.scrollTop / ROW) - 5);
    const last = Math.min(total, first + Math.ceil((this.list.clientHeight || 600) / ROW) + 10);
    const rows = [];
    for (let n = first; n < last; n++) {
      const mark = this.mark(n);
      const flags = [];
      if (mark) {
        if (mark.violations) flags.push(el("span", { class: "flag violation", title: mark.violations.join(", ") }, "✖"));
        if (mark.exceptions) flags.push(el("span", { class: "flag exception", title: `${mark.exceptions} exception(s)` }, "!"));
        if (mark.crash) flags.push(el("span", { class: "flag crash", title: "app crashed" }, "☠"));
        if (mark.relaunch) flags.push(el("span", { class: "flag relaunch", title: "app relaunched" }, "↻"));
        if (mark.errors) flags.push(el("span", { class: "flag error", title: `${mark.errors} spec/plugin error(s)` }, "⚠"));
      }
      rows.push(el("a", {
        class: "step-row" + (n === this.current ? " current" : "") + (mark && mark.violations ? " violating" : ""),
        style: `top:${n * ROW}px`,
        href: source.link(`/runs/${this.id}/steps/${n}`),
        dataset: { route: `/runs/${this.id}/steps/${n}`, step: n },
      }, el("span", { class: "n" }, n), el("span", { class: "flags" }, flags),
      el("span", { class: "what" }, mark ? mark.action || (mark.evaluated ? "" : "app gone") : "")));
    }
    this.listInner.replaceChildren(...rows);
  }

  drawTimelines() {
    const total = Math.max(this.count, 1);
    const names = Object.keys(this.index.timelines);
    const lines = names.map((name) => {
      const changes = this.index.timelines[name];
      const bar = el("div", { class: "timeline", dataset: { prop: name }, title: `${name}: click to seek` });
      changes.forEach(([from, status], i) => {
        const to = i + 1 < changes.length ? changes[i + 1][0] : total;
        bar.append(el("span", { class: `seg ${status}`, style: `left:${(from / total) * 100}%;width:${Math.max(((to - from) / total) * 100, 0.2)}%` }));
      });
      bar.append(el("span", { class: "cursor", style: `left:${(this.current / total) * 100}%` }));
      bar.addEventListener("click", (e) => {
        const box = bar.getBoundingClientRect();
        const step = Math.min(total - 1, Math.max(0, Math.floor(((e.clientX - box.left) / box.width) * total)));
        this.seek(step);
      });
      return el("div", { class: "tl-row" }, el("span", { class: "tl-name" }, name), bar);
    });
    this.timelines.replaceChildren(el("h3", {}, "Timelines ", el("span", { class: "muted" }, "ok · pending · error · violated")), ...lines);
  }

  seek(n, replace = false) {
    const total = Math.max(this.count, 1);
    n = Math.max(0, Math.min(total - 1, n));
    go(`/runs/${this.id}/steps/${n}`, replace);
  }

  key(e) {
    if (e.target.closest("input, textarea") || e.ctrlKey || e.metaKey || e.altKey) return;
    const n = this.current;
    const moves = {
      ArrowDown: n + 1, j: n + 1, ArrowRight: n + 1,
      ArrowUp: n - 1, k: n - 1, ArrowLeft: n - 1,
      PageDown: n + 10, PageUp: n - 10,
      Home: 0, End: this.count - 1,
    };
    let target = moves[e.key];
    if (e.shiftKey && (e.key === "ArrowDown" || e.key === "ArrowRight")) target = n + 10;
    if (e.shiftKey && (e.key === "ArrowUp" || e.key === "ArrowLeft")) target = n - 10;
    if (e.key === "n") target = this.nextViolation(n, 1);
    if (e.key === "N" || e.key === "p") target = this.nextViolation(n, -1);
    if (target === undefined || target === null) return;
    e.preventDefault();
    this.seek(target);
  }

  nextViolation(n, direction) {
    for (let i = n + direction; i >= 0 && i < this.index.steps.length; i += direction) {
      const mark = this.index.steps[i];
      if (mark.violations || mark.crash) return i;
    }
    return null;
  }

  async show(n) {
    this.current = n;
    document.body.dataset.ready = "";
    if (this.list) {
      this.drawList();
      const top = n * ROW;
      if (top < this.list.scrollTop || top > this.list.scrollTop + this.list.clientHeight - ROW) {
        this.list.scrollTop = Math.max(0, top - this.list.clientHeight / 2);
      }
      this.timelines.querySelectorAll(".cursor").forEach((c) => {
        c.style.left = `${(n / Math.max(this.count, 1)) * 100}%`;
      });
    }
    let record, previous;
    try {
      [record, previous] = await Promise.all([source.step(this.id, n), n > 0 ? source.step(this.id, n - 1) : null]);
    } catch (error) {
      this.details.replaceChildren(el("p", { class: "error" }, String(error.message || error)));
      return;
    }
    if (this.current !== n) return; // the user moved on meanwhile
    this.record = record;
    this.previous = previous;
    this.title.replaceChildren(el("span", { id: "step-number" }, `step ${n}`),
      record ? el("span", { class: "muted" }, ` · ${(record.time / 1000).toFixed(1)} s`) : null);
    if (!record) {
      this.shot.removeAttribute("src");
      this.overlay.replaceChildren();
      this.details.replaceChildren(el("p", { class: "muted", id: "not-included" },
        CONFIG.mode === "report"
          ? "This step's record is not in the report (it holds the steps around each violation); open the run with `uatu inspect`."
          : "No such step (yet)."));
      document.body.dataset.ready = String(n);
      return;
    }
    const url = record.screenshot ? source.file(this.id, record.screenshot) : null;
    const loaded = new Promise((resolve) => {
      if (!url) { this.shot.removeAttribute("src"); resolve(); return; }
      this.shot.onload = this.shot.onerror = () => resolve();
      this.shot.src = url;
    });
    this.shot.dataset.step = n;
    const screen = record.state.screen || { width: 1080, height: 2400 };
    this.overlay.setAttribute("viewBox", `0 0 ${screen.width} ${screen.height}`);
    this.overlay.setAttribute("preserveAspectRatio", "none");
    this.screen.style.aspectRatio = `${screen.width} / ${screen.height}`;
    this.drawOverlay(record);
    this.drawDetails(record, previous);
    await loaded;
    if (this.current === n) document.body.dataset.ready = String(n);
  }

  // ---- the screenshot's overlay ----

  drawOverlay(record) {
    this.overlay.replaceChildren();
    const led = record.state.lastAction;
    if (led) this.overlay.append(actionShape(led, "led-by", record.state.screen));
    if (record.action) this.overlay.append(actionShape(record.action, "action", record.state.screen));
    this.hoverBox = svg("rect", { class: "hover", "data-role": "hover", visibility: "hidden" });
    this.overlay.append(this.hoverBox);
  }

  outline(node) {
    if (!this.hoverBox) return;
    if (this.hoverRow) this.hoverRow.classList.remove("hovered");
    if (!node) { this.hoverBox.setAttribute("visibility", "hidden"); return; }
    const b = node.bounds;
    Object.entries({ x: b.left, y: b.top, width: b.right - b.left, height: b.bottom - b.top })
      .forEach(([k, v]) => this.hoverBox.setAttribute(k, v));
    this.hoverBox.setAttribute("visibility", "visible");
    const row = this.treeRows && this.treeRows.get(node);
    if (row) {
      row.classList.add("hovered");
      this.hoverRow = row;
      for (let d = row.parentElement; d; d = d.parentElement) if (d.tagName === "DETAILS") d.open = true;
    }
  }

  pointAt(e) {
    if (!this.record) return;
    const box = this.screen.getBoundingClientRect();
    const screen = this.record.state.screen;
    const x = ((e.clientX - box.left) / box.width) * screen.width;
    const y = ((e.clientY - box.top) / box.height) * screen.height;
    let found = null;
    const walk = (node) => {
      const b = node.bounds;
      if (x >= b.left && x < b.right && y >= b.top && y < b.bottom) {
        found = node;
        (node.children || []).forEach(walk);
      }
    };
    walk(this.record.state.hierarchy);
    this.outline(found);
  }

  // ---- the panels ----

  drawDetails(record, previous) {
    const panels = [];
    const action = record.action ? el("p", { id: "action-text" }, "next: ", el("code", {}, describe(record.action))) : null;
    const led = record.state.lastAction ? el("p", { id: "led-by-text" }, "led by: ", el("code", {}, describe(record.state.lastAction))) : null;
    const events = (record.events || []);
    panels.push(panel("Step", true, action, led,
      record.evaluated === false ? el("p", { class: "badge warn" }, "the app was gone: nothing evaluated") : null,
      events.length ? el("ul", { class: "events" }, events.map(eventItem)) : null));
    panels.push(panel("Properties", true, el("table", { class: "grid props" }, Object.entries(record.properties || {})
      .sort(([a, pa], [b, pb]) => (pb.status === "violated") - (pa.status === "violated") || a.localeCompare(b))
      .map(([name, p]) => el("tr", { class: `prop ${p.status}`, dataset: { prop: name, status: p.status } },
        el("td", {}, name),
        el("td", {}, el("span", { class: `badge ${p.status}` }, p.status)),
        el("td", { class: "verdict" }, verdictOf(this.info, name)),
        el("td", {}, el("code", { class: "residual" }, p.status === "violated" && !(p.residual || []).length ? "—" : residual(p.residual)),
          (p.errors || []).map((err) => el("div", { class: "error" }, err))))))));
    const exceptions = record.state.exceptions || [];
    if (exceptions.length) {
      panels.push(panel(`Exceptions (${exceptions.length})`, true, exceptions.map((x) =>
        el("div", { class: "exception" }, el("strong", {}, x.class), ": ", x.message, x.stack ? el("pre", {}, x.stack) : null))));
    }
    panels.push(panel("Snapshots", true, valuesTable(record.state.snapshots, previous && previous.state.snapshots, "snapshots")));
    panels.push(panel("Extractors", false, valuesTable(record.extractors, previous && previous.extractors, "extractors")));
    const logs = record.state.logs || [];
    if (logs.length) {
      panels.push(panel(`Logs (${logs.length})`, false, el("pre", { class: "logs" },
        logs.map((l) => `${l.time} ${l.level} ${l.tag}: ${l.message}\n`).join(""))));
    }
    this.treeRows = new Map();
    panels.push(panel("Hierarchy", true, el("div", { class: "tree" }, this.tree(record.state.hierarchy, 0))));
    const m = record.metrics || {};
    panels.push(panel("Metrics", false, el("code", {}, Object.entries(m).map(([k, v]) => `${k} ${v}`).join(" · "))));
    this.details.replaceChildren(...panels);
  }

  tree(node, depth) {
    const cls = (node.class || "").split(".").pop();
    const label = el("span", { class: "node" },
      el("span", { class: "cls" }, cls),
      node.id ? el("span", { class: "id" }, ` #${node.id.split("/").pop()}`) : null,
      node.desc ? el("span", { class: "desc" }, ` "${node.desc}"`) : null,
      node.text ? el("span", { class: "text" }, ` ${JSON.stringify(node.text)}`) : null,
      node.clickable ? el("span", { class: "flagword" }, " clickable") : null,
      node.focused ? el("span", { class: "flagword" }, " focused") : null,
      node.enabled === false ? el("span", { class: "flagword" }, " disabled") : null);
    label.addEventListener("mouseenter", () => this.outline(node));
    label.addEventListener("mouseleave", () => this.outline(null));
    const children = node.children || [];
    let item;
    if (children.length) {
      item = el("details", { open: depth < 3 }, el("summary", {}, label), children.map((c) => this.tree(c, depth + 1)));
    } else {
      item = el("div", { class: "leaf" }, label);
    }
    this.treeRows.set(node, label);
    return item;
  }
}

// The property's verdict at the end of the run (and where it was first violated), from the summary.
function verdictOf(info, name) {
  const summary = info && info.summary;
  const property = summary && summary.properties.find((p) => p.name === name);
  if (!property) return info && info.running ? el("span", { class: "muted" }, "run going") : null;
  const at = property.first_violation_step;
  return el("span", { class: "muted", title: "the verdict at the end of the run" },
    at === undefined ? property.verdict : `${property.verdict} at `,
    at === undefined ? null : el("a", { href: source.link(`/runs/${info.id}/steps/${at}`), dataset: { route: `/runs/${info.id}/steps/${at}` } }, at));
}

function panel(title, open, ...content) {
  return el("details", { class: "panel", open }, el("summary", {}, title), ...content);
}

function valuesTable(values, before, kind) {
  values = values || {};
  const keys = Object.keys(values).sort();
  if (!keys.length) return el("p", { class: "muted" }, `no ${kind}`);
  return el("table", { class: "grid values" }, keys.map((key) => {
    const now = JSON.stringify(values[key]);
    const was = before ? JSON.stringify(before[key]) : now;
    const changed = before && now !== was;
    return el("tr", { class: changed ? "changed" : "", dataset: { key } },
      el("td", {}, key),
      el("td", {}, el("code", {}, now),
        changed ? el("div", { class: "was" }, "was ", el("code", {}, was === undefined ? "absent" : was)) : null));
  }));
}

function eventItem(event) {
  const { kind, ...rest } = event;
  const stack = rest.stack;
  delete rest.stack;
  return el("li", { class: `event ${kind}` }, el("strong", {}, kind), " ",
    Object.entries(rest).map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`).join(" · "),
    stack ? el("pre", {}, stack) : null);
}

// A dispatched action, as the verdict table says it: `tap desc:x (0:gen)`.
function describe(resolved) {
  const a = resolved.action || {};
  const target = (t) => (typeof t === "string" ? t : t ? `(${t.x},${t.y})` : "?");
  let what;
  switch (a.type) {
    case "tap": what = `tap ${target(a.on)}`; break;
    case "inputText": what = a.into ? `type ${JSON.stringify(a.text)} into ${target(a.into)}` : `type ${JSON.stringify(a.text)}`; break;
    case "swipe": what = `swipe ${target(a.from)} -> ${target(a.to)}`; break;
    case "pressKey": what = `press ${a.key}`; break;
    case "wait": what = `wait ${a.durationMillis}ms`; break;
    default: what = JSON.stringify(a);
  }
  return resolved.generator ? `${what} (${resolved.generator})` : what;
}

// The action drawn on the screenshot: tap point and resolved bounds, swipe arrow, typed text, key.
function actionShape(resolved, role, screen) {
  const g = svg("g", { class: `act ${role}`, "data-role": role });
  const a = resolved.action || {};
  const scale = (screen && screen.width ? screen.width : 1080) / 1080;
  const b = resolved.bounds;
  if (b) g.append(svg("rect", { x: b.left, y: b.top, width: b.right - b.left, height: b.bottom - b.top, class: "bounds" }));
  const p = resolved.point;
  if (p) {
    g.append(svg("circle", { cx: p.x, cy: p.y, r: 34 * scale, class: "tap" }));
    g.append(svg("circle", { cx: p.x, cy: p.y, r: 8 * scale, class: "dot" }));
  }
  if (a.type === "swipe" && p && resolved.toPoint) {
    const q = resolved.toPoint;
    const angle = Math.atan2(q.y - p.y, q.x - p.x);
    const head = 40 * scale;
    g.append(svg("line", { x1: p.x, y1: p.y, x2: q.x, y2: q.y, class: "swipe" }));
    g.append(svg("polygon", {
      class: "arrow",
      points: [[q.x, q.y],
        [q.x - head * Math.cos(angle - 0.5), q.y - head * Math.sin(angle - 0.5)],
        [q.x - head * Math.cos(angle + 0.5), q.y - head * Math.sin(angle + 0.5)]].map((xy) => xy.join(",")).join(" "),
    }));
  }
  let caption = role === "led-by" ? "led by: " : "next: ";
  if (a.type === "inputText") caption += `type ${JSON.stringify(a.text)}`;
  else if (a.type === "pressKey") caption += `press ${a.key}`;
  else if (a.type === "wait") caption += `wait ${a.durationMillis}ms`;
  else caption += a.type || "";
  const anchor = b ? { x: b.left, y: b.top - 12 * scale } : p ? { x: p.x - 60 * scale, y: p.y - 50 * scale } : { x: 20 * scale, y: (role === "led-by" ? 60 : 120) * scale };
  const text = svg("text", { x: Math.max(4, anchor.x), y: Math.max(40 * scale, anchor.y), class: "caption", "font-size": 40 * scale });
  text.textContent = caption;
  g.append(text);
  return g;
}

// A residual formula (the LTL engine's JSON) in readable form.
function residual(value) {
  if (Array.isArray(value)) return value.length ? value.map(formula).join("  ∧  ") : "nothing pending";
  if (value === null || value === undefined) return "—";
  return formula(value);
}

function bound(b) {
  return Object.entries(b || {}).map(([unit, n]) => `${n} ${unit}`).join(" ");
}

function deadline(d) {
  return Object.entries(d || {}).map(([unit, n]) => (unit === "ms" ? `t=${n}ms` : `${unit} ${n}`)).join(" ");
}

function formula(f) {
  if (!f || typeof f !== "object") return String(f);
  const sub = (x) => {
    const s = formula(x);
    return /^[\w¬#]+$/.test(s) ? s : `(${s})`;
  };
  switch (f.op) {
    case "const": return String(f.value);
    case "pred": return `p#${f.id}`;
    case "not_pred": return `¬p#${f.id}`;
    case "and": return f.args.map(sub).join(" ∧ ");
    case "or": return f.args.map(sub).join(" ∨ ");
    case "next": return `next ${sub(f.arg)}`;
    case "always": return `always ${sub(f.arg)}`;
    case "eventually": return `eventually ${sub(f.arg)}`;
    case "eventually_within": return `eventually within ${bound(f.within)} ${sub(f.arg)}`;
    case "eventually_by": return `eventually by ${deadline(f.deadline)} ${sub(f.arg)}`;
    case "always_within": return `always for ${bound(f.within)} ${sub(f.arg)}`;
    case "always_until": return `always until ${deadline(f.deadline)} ${sub(f.arg)}`;
    default: return JSON.stringify(f);
  }
}

render();
