/*
 * explorers.js: the book's interactive explorers, live on the static website.
 *
 * Why this approach. Readers of the website have no Python kernel, so an ipywidgets slider
 * with a Python callback renders there but does nothing when moved. Each interactive cell
 * therefore returns one output whose MIME bundle holds two views of the same explorer:
 *   - the ipywidgets view, driven by the chapter's NumPy code, for JupyterLab, Notebook, Colab;
 *   - a text/html part, <div class="attn-explorer" data-kind="KIND" data-config="JSON">, with a
 *     fallback sentence, which _config.yml (nb_mime_priority_overrides) makes the website show.
 * This one script, served by the site itself and loaded on every page, turns each such div into
 * the same explorer computed in the browser (plain DOM, inline SVG, the same stable
 * max-subtracted softmax). No kernel, no server, no widget manager, no require.js, nothing from
 * another host: the pages work offline, and the JavaScript lives in one place instead of being
 * copied into every notebook. The notebook carries only numbers (the config, rounded in Python
 * before both NumPy and the config use them), so the site and NumPy compute from the same inputs;
 * tests/test_browser.py checks the displayed numbers against NumPy in Chromium.
 *
 * Kinds and their configs: CONTRIBUTING.md, "Interactives". Every displayed number has 3
 * decimals and sits in an element with data-role (and data-index for vectors) so that tests
 * can read it; every slider is an <input type="range"> with a <label> and aria-valuetext.
 */
(function () {
  "use strict";

  const SVG_NS = "http://www.w3.org/2000/svg";
  const BLUE = "#3b6ea8";
  const ORANGE = "#d1603d";
  const GREY = "#9a9a9a";
  let explorerCount = 0;

  /* ---------- numerics ---------- */

  /** The stable softmax: subtract the maximum before exponentiating; never NaN for finite input. */
  function softmax(x) {
    let m = -Infinity;
    for (const v of x) if (v > m) m = v;
    if (m === Infinity) {  // overflowed scores: share the weight among the infinite ones
      const inf = x.map((v) => (v === Infinity ? 1 : 0));
      const k = inf.reduce((a, b) => a + b, 0);
      return inf.map((v) => v / k);
    }
    if (m === -Infinity) return x.map(() => 1 / x.length);
    const e = x.map((v) => Math.exp(v - m));
    let s = 0;
    for (const v of e) s += v;
    return e.map((v) => v / s);
  }

  /** Entropy -sum(a log a) in nats, with 0 log 0 = 0. */
  function entropy(a) {
    let h = 0;
    for (const v of a) if (v > 0) h -= v * Math.log(v);
    return h;
  }

  function dot(a, b, n) {
    let s = 0;
    const len = n === undefined ? a.length : n;
    for (let i = 0; i < len; i++) s += a[i] * b[i];
    return s;
  }

  /** Matrix (rows) times column vector. */
  function matVec(M, v) {
    return M.map((row) => dot(row, v));
  }

  /** Row vector times matrix (rows): v @ M. */
  function vecMat(v, M) {
    const out = new Array(M[0].length).fill(0);
    for (let i = 0; i < v.length; i++) for (let j = 0; j < out.length; j++) out[j] += v[i] * M[i][j];
    return out;
  }

  /** sum_t alpha_t v_t for rows v_t. */
  function weightedSum(alpha, rows) {
    const out = new Array(rows[0].length).fill(0);
    for (let t = 0; t < rows.length; t++) for (let j = 0; j < out.length; j++) out[j] += alpha[t] * rows[t][j];
    return out;
  }

  function norm(v) {
    return Math.sqrt(dot(v, v));
  }

  /** Convex hull of 2-D points (Andrew's monotone chain), counter-clockwise. */
  function convexHull(points) {
    const p = points.map((q) => [q[0], q[1]]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    if (p.length < 3) return p;
    const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    const lower = [];
    for (const q of p) {
      while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], q) <= 0) lower.pop();
      lower.push(q);
    }
    const upper = [];
    for (let i = p.length - 1; i >= 0; i--) {
      const q = p[i];
      while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], q) <= 0) upper.pop();
      upper.push(q);
    }
    return lower.slice(0, -1).concat(upper.slice(0, -1));
  }

  /** Three decimals, never "-0.000" and never "NaN" silently passed as a number. */
  function fmt(v) {
    if (!Number.isFinite(v)) return String(v);
    const s = v.toFixed(3);
    return s === "-0.000" ? "0.000" : s;
  }

  /** 131072 -> "131,072" (toLocaleString's first call sets up the browser's number formatting: 27 ms,
   * most of the time that building chapter 10's cache explorer took). */
  function thousands(n) {
    return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  /** A value read from a slider, formatted without float noise (e.g. -0.5, 0.05, 2). */
  function fmtStep(v, step) {
    const m = /\.(\d+)$/.exec(String(step));
    const decimals = m ? Math.min(6, m[1].length) : 0;
    const s = v.toFixed(decimals);
    return /^-0(\.0*)?$/.test(s) ? s.slice(1) : s;
  }

  /* ---------- config checks: the contract of tools/explorers/schemas, from explorer-contract.js ---------- */

  class ConfigError extends Error {}

  function shapeOf(v) {
    if (!Array.isArray(v)) return [];
    if (v.length === 0) return [0];
    const inner = v.map(shapeOf);
    if (inner.some((s) => s === null || s.join() !== inner[0].join())) return null;
    return [v.length].concat(inner[0]);
  }

  function typeOk(v, spec) {
    if (spec.type === "number") return typeof v === "number" && Number.isFinite(v);
    if (spec.type === "integer") return Number.isInteger(v);
    if (spec.type === "string") return typeof v === "string";
    if (spec.type === "array") return Array.isArray(v) && v.every((x) => typeOk(x, spec.items));
    return true;
  }

  function flat(v) {
    return Array.isArray(v) ? v.flatMap(flat) : [v];
  }

  function leaf(spec) {
    while (spec.type === "array") spec = spec.items;
    return spec;
  }

  /** The first deviation of config from its kind's schema, as a ConfigError (the rules of tools/explorers). */
  function checkConfig(kind, config) {
    const contract = window.ATTN_EXPLORER_CONTRACT || {};
    const schema = contract[kind];
    if (!schema) throw new ConfigError(`unknown kind "${kind}" (explorer-contract.js has no schema for it)`);
    if (config === null || typeof config !== "object" || Array.isArray(config)) throw new ConfigError("the config is not a JSON object");
    const props = schema.properties;
    const missing = schema.required.filter((f) => !(f in config));
    if (missing.length) throw new ConfigError(`the config has no field ${missing.map((f) => `"${f}"`).join(", ")}`);
    const extra = Object.keys(config).filter((f) => !(f in props));
    if (extra.length) throw new ConfigError(`the ${kind} schema does not list ${extra.map((f) => `"${f}"`).join(", ")}`);
    const sizes = {};
    for (const [field, spec] of Object.entries(props)) {
      const v = config[field];
      if (!typeOk(v, spec)) throw new ConfigError(`"${field}" should be of type ${spec.type}${spec.type === "array" ? " of " + leaf(spec).type : ""}`);
      const l = leaf(spec);
      for (const x of flat(v)) {
        if ("minimum" in l && !(x >= l.minimum)) throw new ConfigError(`"${field}" has ${x}, below its minimum ${l.minimum}`);
        if ("maximum" in l && !(x <= l.maximum)) throw new ConfigError(`"${field}" has ${x}, above its maximum ${l.maximum}`);
        if ("exclusiveMinimum" in l && !(x > l.exclusiveMinimum)) throw new ConfigError(`"${field}" should be greater than ${l.exclusiveMinimum}`);
      }
      if ("minItems" in spec && v.length < spec.minItems) throw new ConfigError(`"${field}" should have at least ${spec.minItems} entries`);
      if ("maxItems" in spec && v.length > spec.maxItems) throw new ConfigError(`"${field}" should have at most ${spec.maxItems} entries`);
      if (spec["x-shape"]) {
        const want = spec["x-shape"];
        const shape = shapeOf(v);
        if (shape === null || shape.length !== want.length) throw new ConfigError(`"${field}" should be an array of shape (${want.join(", ")})`);
        want.forEach((dim, k) => {
          if (typeof dim === "number") {
            if (shape[k] !== dim) throw new ConfigError(`"${field}" should have shape (${want.join(", ")}), has (${shape.join(", ")})`);
          } else if (dim in sizes) {
            if (sizes[dim][0] !== shape[k]) throw new ConfigError(`"${field}" has shape (${shape.join(", ")}), but ${dim} = ${sizes[dim][0]} from "${sizes[dim][1]}"`);
          } else {
            sizes[dim] = [shape[k], field];
          }
        });
      }
    }
    for (const [field, spec] of Object.entries(props)) {
      const v = config[field];
      if (spec["x-range"]) {
        const p = spec["x-range"];
        const lo = config[p + "_min"], hi = config[p + "_max"], step = config[p + "_step"];
        if (!(lo < hi) || !(step > 0)) throw new ConfigError(`"${p}_min/_max/_step" should satisfy min < max and step > 0`);
        for (const x of flat(v)) if (!(x >= lo && x <= hi)) throw new ConfigError(`"${field}": the start value ${x} is outside [${p}_min, ${p}_max]`);
      }
      if (spec["x-index"] && spec["x-index"] in sizes) {
        const n = sizes[spec["x-index"]][0];
        if (!(v >= 0 && v < n)) throw new ConfigError(`"${field}" should be an index from 0 to ${n - 1}, got ${JSON.stringify(v)}`);
      }
      if (spec["x-items-at-most"] && spec["x-items-at-most"] in sizes) {
        const n = sizes[spec["x-items-at-most"]][0];
        if (flat(v).some((x) => x > n)) throw new ConfigError(`"${field}" should have entries of at most ${n}`);
      }
    }
  }

  /** A slider range {min, max, step} from <prefix>_min/_max/_step (checked by checkConfig). */
  function range(config, prefix) {
    return { min: config[prefix + "_min"], max: config[prefix + "_max"], step: config[prefix + "_step"] };
  }

  /* ---------- DOM helpers ---------- */

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    for (const c of children) node.append(c);
    return node;
  }

  function svg(tag, attrs) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    return node;
  }

  function svgText(x, y, text, attrs) {
    const t = svg("text", Object.assign({ x: x, y: y }, attrs || {}));
    t.textContent = text;
    return t;
  }

  function short(label, n) {
    return label.length > n ? label.slice(0, n - 1) + "…" : label;
  }

  /** A number in an element that tests read: data-role, and data-index for vector entries. */
  function numberSpan(role, i) {
    const attrs = { "data-role": role, class: "attn-num" };
    if (i !== undefined) attrs["data-index"] = String(i);
    return el("span", attrs, "–");
  }

  /** A vector shown as (a, b, …), each entry its own span; returns the spans. */
  function vectorReadout(parent, name, role, length) {
    const spans = [];
    const line = el("span", { class: "attn-vector" });
    line.append("(");
    for (let i = 0; i < length; i++) {
      if (i) line.append(", ");
      const s = numberSpan(role, i);
      spans.push(s);
      line.append(s);
    }
    line.append(")");
    parent.append(el("span", { class: "attn-readout-item" }, name, " = ", line));
    return spans;
  }

  function scalarReadout(parent, name, role, note) {
    const s = numberSpan(role);
    const item = el("span", { class: "attn-readout-item" }, name, " = ", s);
    if (note) item.append(" ", note);
    parent.append(item);
    return s;
  }

  /**
   * A labelled range slider. opts: param, label (node or text), min, max, step, value,
   * text(v): the displayed value; valuetext(v) (optional): the longer aria-valuetext, which
   * contains the displayed value. Returns {input, value(), refresh(summary)}: summary, a short sentence
   * on the result, is appended to aria-valuetext.
   */
  function slider(parent, uid, opts) {
    const id = `${uid}-${opts.param}`;
    const input = el("input", {
      type: "range", id: id, min: String(opts.min), max: String(opts.max), step: String(opts.step),
      "data-role": "slider", "data-param": opts.param,
    });
    input.value = String(opts.value);
    // The value as text beside the slider, hidden from screen readers: they hear aria-valuetext, which
    // says the same value and the result it gives (one announcement per move; no live region).
    const output = el("span", { class: "attn-value", "aria-hidden": "true", "data-role": "param-value", "data-param": opts.param });
    const label = el("label", { for: id });
    label.append(opts.label);
    const row = el("div", { class: "attn-slider" }, label, input, output);
    parent.append(row);
    const value = () => parseFloat(input.value);
    const refresh = (summary) => {
      const text = opts.text(value());
      output.textContent = text;
      const own = opts.valuetext ? opts.valuetext(value()) : text;
      input.setAttribute("aria-valuetext", summary ? `${own}; ${summary}` : own);
    };
    return { input: input, value: value, refresh: refresh };
  }

  /**
   * Bars of weights in [0, 1]: one group per label, one bar per series. Returns update(series).
   */
  function barChart(parent, labels, series, title) {
    const n = labels.length;
    const groupW = series.length > 1 ? 64 : 48;
    const left = 34, right = 8, base = 132, height = 120;
    const width = left + right + n * groupW;
    const chart = svg("svg", {
      viewBox: `0 0 ${width} 168`, class: "attn-bars", role: "img", width: String(width), height: "168",
      "aria-label": title,
    });
    for (const g of [0, 0.5, 1]) {
      const y = base - g * height;
      chart.append(svg("line", { x1: left, x2: width - right, y1: y, y2: y, class: g === 0 ? "attn-axis" : "attn-grid" }));
      chart.append(svgText(left - 4, y + 3.5, g.toFixed(1), { class: "attn-tick", "text-anchor": "end" }));
    }
    const barW = (groupW - 14) / series.length;
    const rects = series.map((s, k) => labels.map((_, i) => {
      const r = svg("rect", { x: left + i * groupW + 7 + k * barW, width: barW - 1, y: base, height: 0, fill: s.color });
      chart.append(r);
      return r;
    }));
    labels.forEach((label, i) => {
      chart.append(svgText(left + i * groupW + groupW / 2, base + 14, short(label, 9), { class: "attn-tick", "text-anchor": "middle" }));
    });
    if (series.length > 1) {
      series.forEach((s, k) => {
        chart.append(svg("rect", { x: left + 4 + k * 110, y: 152, width: 9, height: 9, fill: s.color }));
        chart.append(svgText(left + 16 + k * 110, 160, s.name, { class: "attn-tick" }));
      });
    }
    parent.append(chart);
    return function update(values) {
      const parts = [];
      values.forEach((vals, k) => {
        vals.forEach((v, i) => {
          const h = Math.max(0, Math.min(1, v)) * height;
          rects[k][i].setAttribute("y", String(base - h));
          rects[k][i].setAttribute("height", String(h));
        });
        parts.push((series.length > 1 ? series[k].name + ": " : "") + labels.map((l, i) => `${l} ${fmt(vals[i])}`).join(", "));
      });
      chart.setAttribute("aria-label", `${title}. ${parts.join("; ")}.`);
    };
  }

  /**
   * 2-D points with labels, optionally their convex hull and the circle of radius max‖h‖, and the
   * context vector as a diamond. Returns update(context, weights).
   */
  function pointPlot(parent, points, labels, opts) {
    const size = 240, pad = 20;
    const maxNorm = Math.max(...points.map((p) => norm(p)));
    // The square that holds the points and the origin (and the circle of radius max‖h‖), equal scales.
    const xs = points.map((p) => p[0]).concat([0]);
    const ys = points.map((p) => p[1]).concat([0]);
    if (opts.circle) xs.push(-maxNorm, maxNorm), ys.push(-maxNorm, maxNorm);
    const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
    const span = 1.2 * (Math.max(x1 - x0, y1 - y0) || 1);
    const left = (x0 + x1) / 2 - span / 2, bottom = (y0 + y1) / 2 - span / 2;
    const sx = (x) => pad + ((x - left) / span) * (size - 2 * pad);
    const sy = (y) => size - pad - ((y - bottom) / span) * (size - 2 * pad);
    const plot = svg("svg", {
      viewBox: `0 0 ${size} ${size}`, class: "attn-points", role: "img", width: String(size), height: String(size),
      "aria-label": opts.title,
    });
    plot.append(svg("line", { x1: sx(left), x2: sx(left + span), y1: sy(0), y2: sy(0), class: "attn-grid" }));
    plot.append(svg("line", { x1: sx(0), x2: sx(0), y1: sy(bottom), y2: sy(bottom + span), class: "attn-grid" }));
    if (opts.circle) {
      plot.append(svg("circle", { cx: sx(0), cy: sy(0), r: sx(maxNorm) - sx(0), class: "attn-norm-circle" }));
    }
    if (opts.hull) {
      const hull = convexHull(points);
      plot.append(svg("polygon", { points: hull.map((p) => `${sx(p[0])},${sy(p[1])}`).join(" "), class: "attn-hull" }));
    }
    const dots = points.map((p, i) => {
      const c = svg("circle", { cx: sx(p[0]), cy: sy(p[1]), r: 4, fill: BLUE, "fill-opacity": 0.75 });
      plot.append(c);
      plot.append(svgText(sx(p[0]) + 7, sy(p[1]) - 6, short(labels[i], 9), { class: "attn-tick" }));
      return c;
    });
    const marker = svg("path", { d: "M0,-7 L7,0 L0,7 L-7,0 Z", fill: ORANGE, stroke: "white", "stroke-width": 1 });
    plot.append(marker);
    plot.append(svgText(pad, size - 4, "◆ context c", { class: "attn-tick", fill: ORANGE }));
    parent.append(plot);
    return function update(context, weights) {
      marker.setAttribute("transform", `translate(${sx(context[0])},${sy(context[1])})`);
      weights.forEach((w, i) => dots[i].setAttribute("r", String(3 + 9 * Math.sqrt(Math.max(0, w)))));
      plot.setAttribute("aria-label", `${opts.title}. The context vector is at (${fmt(context[0])}, ${fmt(context[1])}).`);
    };
  }

  /** Table: one row per label, one column per {role, header}; returns {role: [cells]}. */
  function numberTable(parent, caption, rowHeader, labels, columns) {
    const table = el("table", { class: "attn-table" });
    table.append(el("caption", {}, caption));
    const head = el("tr", {}, el("th", { scope: "col" }, rowHeader));
    for (const c of columns) head.append(el("th", { scope: "col" }, c.header));
    table.append(el("thead", {}, head));
    const body = el("tbody");
    const cells = {};
    for (const c of columns) cells[c.role] = [];
    labels.forEach((label, i) => {
      const row = el("tr", {}, el("th", { scope: "row" }, label));
      for (const c of columns) {
        const td = el("td", { "data-role": c.role, "data-index": String(i), class: "attn-num" }, "–");
        cells[c.role].push(td);
        row.append(td);
      }
      body.append(row);
    });
    table.append(body);
    parent.append(table);
    return cells;
  }

  /** "largest weight 0.912 on “cat”": the summary sentence most kinds announce. */
  function topWeight(alpha, labels) {
    let k = 0;
    for (let i = 1; i < alpha.length; i++) if (alpha[i] > alpha[k]) k = i;
    return `largest weight ${fmt(alpha[k])} on “${labels[k]}”`;
  }

  function setNumbers(cells, values) {
    for (let i = 0; i < cells.length; i++) cells[i].textContent = fmt(values[i]);
  }

  function symbol(name, sub) {
    const frag = document.createDocumentFragment();
    frag.append(el("i", {}, name));
    if (sub !== undefined) frag.append(el("sub", {}, String(sub)));
    return frag;
  }

  /** The common frame: a titled group with controls on one side and the display on the other. */
  function frame(root, title, description) {
    const uid = `attn-explorer-${++explorerCount}`;
    root.textContent = "";
    root.setAttribute("role", "group");
    root.setAttribute("aria-labelledby", `${uid}-title`);
    root.setAttribute("aria-describedby", `${uid}-desc`);
    const heading = el("p", { class: "attn-explorer-title", id: `${uid}-title` }, title);
    const desc = el("p", { class: "attn-explorer-desc", id: `${uid}-desc` }, description);
    const controls = el("div", { class: "attn-controls" });
    const display = el("div", { class: "attn-display" });
    const readout = el("p", { class: "attn-readout" });
    root.append(heading, desc, el("div", { class: "attn-explorer-body" }, controls, display), readout);
    return { uid: uid, controls: controls, display: display, readout: readout };
  }

  function tauSlider(parent, uid, config) {
    const r = range(config, "log10_tau");
    return slider(parent, uid, {
      param: "log10_tau", min: r.min, max: r.max, step: r.step, value: config.log10_tau,
      label: el("span", {}, "temperature ", el("i", {}, "τ"), " (log scale)"),
      text: (v) => `τ = ${fmt(Math.pow(10, v))}`,
      valuetext: (v) => `τ = ${fmt(Math.pow(10, v))} (log10 τ = ${fmtStep(v, r.step)})`,
    });
  }

  function scoreSliders(parent, uid, config, labels, symbolName) {
    const r = range(config, "score");
    const scores = config.scores;
    return scores.map((s, i) => slider(parent, uid, {
      param: `score-${i}`, min: r.min, max: r.max, step: r.step, value: s,
      label: el("span", {}, "score ", symbol(symbolName, i + 1), ` of “${labels[i]}”`),
      text: (v) => fmtStep(v, r.step),
    }));
  }

  /** Calls update() on every move; update returns a one-line summary of the result for aria-valuetext. */
  function wire(sliders, update) {
    const all = () => {
      const summary = update();
      for (const s of sliders) s.refresh(summary);
    };
    for (const s of sliders) s.input.addEventListener("input", all);
    for (const s of sliders) s.input.addEventListener("change", all);
    all();
  }

  /* ---------- the kinds (tools/explorers/README.md lists them and their configs) ---------- */

  const KINDS = {};

  /** convex-hull: alpha = softmax(scores / tau); c = sum alpha_t h_t stays in the hull of the h_t. */
  KINDS["convex-hull"] = function (root, config) {
    const points = config.points;
    const labels = config.labels;
    const f = frame(root, "The context vector stays inside the convex hull",
      "Move the scores and the temperature: the weights α = softmax(e / τ) change, and the context vector c = Σ α_t h_t moves, always inside the hull of the hidden states h_t, so ‖c‖ never exceeds max ‖h_t‖.");
    const scores = scoreSliders(f.controls, f.uid, config, labels, "e");
    const tau = tauSlider(f.controls, f.uid, config);
    const bars = barChart(f.display, labels, [{ name: "α", color: BLUE }], "Bar chart of the attention weights α");
    const plot = pointPlot(f.display, points, labels, { hull: true, circle: true, title: "The hidden states h_t, their convex hull, the circle of radius max ‖h_t‖ and the context vector c" });
    const cells = numberTable(f.display, "Weights", "position", labels, [{ role: "weight", header: "α" }]);
    const cSpans = vectorReadout(f.readout, "c", "context", 2);
    const cNorm = scalarReadout(f.readout, "‖c‖", "context-norm");
    const maxNorm = scalarReadout(f.readout, "max ‖h_t‖", "max-norm");
    const maxNormValue = Math.max(...points.map(norm));
    wire(scores.concat([tau]), () => {
      const t = Math.pow(10, tau.value());
      const alpha = softmax(scores.map((s) => s.value() / t));
      const c = weightedSum(alpha, points);
      setNumbers(cells.weight, alpha);
      setNumbers(cSpans, c);
      cNorm.textContent = fmt(norm(c));
      maxNorm.textContent = fmt(maxNormValue);
      bars([alpha]);
      plot(c, alpha);
      return `${topWeight(alpha, labels)}; c = (${fmt(c[0])}, ${fmt(c[1])}), ‖c‖ = ${fmt(norm(c))}`;
    });
  };

  /** decoder-state: e_i = v_a^T tanh(W_a s + U_a h_i), alpha = softmax(e), c = sum alpha_i h_i. */
  KINDS["decoder-state"] = function (root, config) {
    const H = config.H;
    const labels = config.labels;
    const Wa = config.W_a;
    const Ua = config.U_a;
    const va = config.v_a;
    const s0 = config.s;
    const r = range(config, "s");
    const f = frame(root, "The decoder state steers the alignment",
      "Move the two components of the decoder state s: the alignment scores e_i = v_aᵀ tanh(W_a s + U_a h_i), the weights α = softmax(e) and the context vector c = Σ α_i h_i follow.");
    const sliders = [0, 1].map((k) => slider(f.controls, f.uid, {
      param: `s-${k}`, min: r.min, max: r.max, step: r.step, value: s0[k],
      label: el("span", {}, "decoder state ", symbol("s", k + 1)),
      text: (v) => fmtStep(v, r.step),
    }));
    const Uh = H.map((h) => matVec(Ua, h));  // U_a h_i does not depend on s
    const bars = barChart(f.display, labels, [{ name: "α", color: BLUE }], "Bar chart of the attention weights α");
    const plot = pointPlot(f.display, H, labels, { hull: false, circle: false, title: "The encoder states h_i and the context vector c" });
    const cells = numberTable(f.display, "Scores and weights", "position", labels,
      [{ role: "score", header: "e" }, { role: "weight", header: "α" }]);
    const cSpans = vectorReadout(f.readout, "c", "context", 2);
    wire(sliders, () => {
      const s = sliders.map((x) => x.value());
      const Ws = matVec(Wa, s);
      const e = Uh.map((u) => dot(va, [Math.tanh(Ws[0] + u[0]), Math.tanh(Ws[1] + u[1])]));
      const alpha = softmax(e);
      const c = weightedSum(alpha, H);
      setNumbers(cells.score, e);
      setNumbers(cells.weight, alpha);
      setNumbers(cSpans, c);
      bars([alpha]);
      plot(c, alpha);
      return `${topWeight(alpha, labels)}; c = (${fmt(c[0])}, ${fmt(c[1])})`;
    });
  };

  /** softmax-sharpening: alpha = softmax(scores / tau), its entropy in nats, c = sum alpha_t v_t. */
  KINDS["softmax-sharpening"] = function (root, config) {
    const labels = config.labels;
    const values = config.values;
    const f = frame(root, "Temperature sharpens or flattens the softmax",
      "Move the scores and the temperature τ: the weights α = softmax(e / τ), their entropy −Σ α log α (in nats; at most log n) and the context vector c = Σ α_t v_t change. A small τ gives nearly one-hot weights, a large τ nearly uniform ones.");
    const scores = scoreSliders(f.controls, f.uid, config, labels, "e");
    const tau = tauSlider(f.controls, f.uid, config);
    const bars = barChart(f.display, labels, [{ name: "α", color: BLUE }], "Bar chart of the attention weights α");
    const plot = pointPlot(f.display, values, labels, { hull: true, circle: false, title: "The value vectors v_t and the context vector c" });
    const cells = numberTable(f.display, "Weights", "position", labels, [{ role: "weight", header: "α" }]);
    const hSpan = scalarReadout(f.readout, "entropy", "entropy", `nats (at most log ${labels.length} = ${fmt(Math.log(labels.length))})`);
    const cSpans = vectorReadout(f.readout, "c", "context", 2);
    wire(scores.concat([tau]), () => {
      const t = Math.pow(10, tau.value());
      const alpha = softmax(scores.map((s) => s.value() / t));
      const c = weightedSum(alpha, values);
      setNumbers(cells.weight, alpha);
      hSpan.textContent = fmt(entropy(alpha));
      setNumbers(cSpans, c);
      bars([alpha]);
      plot(c, alpha);
      return `${topWeight(alpha, labels)}; entropy ${fmt(entropy(alpha))} nats`;
    });
  };

  /** dk-scaling: for the first d_k components, q·k_t and q·k_t / sqrt(d_k), and the softmax of each. */
  KINDS["dk-scaling"] = function (root, config) {
    const labels = config.labels;
    const q = config.q;
    const K = config.K;
    const dks = config.dk_values;
    const start = config.dk_index;
    const f = frame(root, "Why divide by √d_k",
      "Choose how many components d_k of the query and keys to use: the raw dot products q·k_t grow with d_k and their softmax turns nearly one-hot, while the scaled scores q·k_t / √d_k keep the weights spread.");
    const dk = slider(f.controls, f.uid, {
      param: "dk_index", min: 0, max: dks.length - 1, step: 1, value: start,
      label: el("span", {}, "key dimension ", symbol("d", "k")),
      text: (v) => `d_k = ${dks[Math.round(v)]}`,
    });
    const bars = barChart(f.display, labels, [{ name: "softmax(q·k)", color: GREY }, { name: "softmax(q·k/√d_k)", color: BLUE }],
      "Bar chart of the weights without and with scaling");
    const cells = numberTable(f.display, "Scores and weights", "key", labels, [
      { role: "score-unscaled", header: "q·k" }, { role: "score", header: "q·k/√d_k" },
      { role: "weight-unscaled", header: "softmax(q·k)" }, { role: "weight", header: "softmax(q·k/√d_k)" },
    ]);
    const dSpan = scalarReadout(f.readout, "d_k", "dk");
    const hRaw = scalarReadout(f.readout, "entropy without scaling", "entropy-unscaled", "nats");
    const hScaled = scalarReadout(f.readout, "with scaling", "entropy", "nats");
    wire([dk], () => {
      const d = dks[Math.round(dk.value())];
      const raw = K.map((k) => dot(q, k, d));
      const scaled = raw.map((v) => v / Math.sqrt(d));
      const aRaw = softmax(raw);
      const aScaled = softmax(scaled);
      dSpan.textContent = String(d);
      setNumbers(cells["score-unscaled"], raw);
      setNumbers(cells.score, scaled);
      setNumbers(cells["weight-unscaled"], aRaw);
      setNumbers(cells.weight, aScaled);
      hRaw.textContent = fmt(entropy(aRaw));
      hScaled.textContent = fmt(entropy(aScaled));
      bars([aRaw, aScaled]);
      return `entropy without scaling ${fmt(entropy(aRaw))} nats, with scaling ${fmt(entropy(aScaled))} nats`;
    });
  };

  /** next-word-temperature: p = softmax(logits / tau) over the next word, beside the grammar's; stored samples. */
  KINDS["next-word-temperature"] = function (root, config) {
    const words = config.words;
    const taus = config.temperatures;
    const order = words.map((_, j) => j).sort((a, b) => config.logits[b] - config.logits[a] || a - b).slice(0, config.shown);
    const labels = order.map((j) => words[j]).concat(["the rest"]);
    const f = frame(root, "Temperature on a language model's next word",
      `Choose the temperature τ: the trained model's probabilities for the word after “${config.prefix}”, softmax(z / τ), beside the grammar's own, and sentences the model sampled at that temperature, each marked ✓ when the grammar accepts it.`);
    const tau = slider(f.controls, f.uid, {
      param: "temperature_index", min: 0, max: taus.length - 1, step: 1, value: config.temperature_index,
      label: el("span", {}, "temperature ", el("i", {}, "τ")),
      text: (v) => `τ = ${fmt(taus[Math.round(v)])}`,
    });
    const grammarShown = order.map((j) => config.grammar[j]);
    grammarShown.push(1 - grammarShown.reduce((a, b) => a + b, 0));
    const bars = barChart(f.display, labels, [{ name: "model", color: BLUE }, { name: "grammar", color: GREY }],
      "Bar chart of the next word's probability under the model and under the grammar");
    const cells = numberTable(f.display, "Next-word probabilities", "word", labels, [
      { role: "probability", header: "model" }, { role: "grammar", header: "grammar" },
    ]);
    setNumbers(cells.grammar, grammarShown);
    const hSpan = scalarReadout(f.readout, "entropy", "entropy", "nats");
    const allowedSpan = scalarReadout(f.readout, "probability of the words the grammar allows", "allowed");
    const heading = el("p", { class: "attn-samples-heading" });
    const list = el("ul", { class: "attn-samples" });
    f.display.append(heading, list);
    wire([tau], () => {
      const i = Math.round(tau.value());
      const p = softmax(config.logits.map((z) => z / taus[i]));
      const shown = order.map((j) => p[j]);
      shown.push(1 - shown.reduce((a, b) => a + b, 0));
      setNumbers(cells.probability, shown);
      bars([shown, grammarShown]);
      const h = entropy(p);
      const allowed = p.reduce((sum, v, j) => sum + (config.grammar[j] > 0 ? v : 0), 0);
      hSpan.textContent = fmt(h);
      allowedSpan.textContent = fmt(allowed);
      const ok = config.grammatical[i].reduce((a, b) => a + b, 0);
      heading.textContent = `Sampled at τ = ${fmt(taus[i])}: ${ok} of ${config.samples[i].length} are sentences of the grammar.`;
      list.textContent = "";
      config.samples[i].forEach((sentence, k) => {
        const good = config.grammatical[i][k] === 1;
        list.append(el("li", { "data-grammatical": good ? "1" : "0" },
          el("span", { "aria-hidden": "true" }, good ? "✓ " : "✗ "), sentence,
          el("span", { class: "attn-visually-hidden" }, good ? " (grammatical)" : " (not grammatical)")));
      });
      return `${topWeight(shown.slice(0, -1), labels)}; entropy ${fmt(h)} nats; ${ok} of ${config.samples[i].length} samples grammatical`;
    });
  };

  const VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  function viridis(v) {
    const x = Math.max(0, Math.min(1, v)) * (VIRIDIS.length - 1);
    const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
    const t = x - i;
    const c = VIRIDIS[i].map((a, k) => Math.round(a + t * (VIRIDIS[i + 1][k] - a)));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }

  /** head-query: alpha = softmax(q_i K^T / sqrt(d_k)) with q_i = x_i W_q[h], K = X W_k[h]. */
  KINDS["head-query"] = function (root, config) {
    const tokens = config.tokens;
    const X = config.X;
    const Wq = config.W_q;
    const Wk = config.W_k;
    const heads = Wq.length;
    const dk = Wq[0][0].length;
    const q0 = config.query;
    const h0 = config.head;
    const T = tokens.length;
    // Per head: Q = X W_q[h], K = X W_k[h], the whole (T, T) weight matrix.
    const weights = [];
    const scoresAll = [];
    for (let h = 0; h < heads; h++) {
      const Q = X.map((x) => vecMat(x, Wq[h]));
      const K = X.map((x) => vecMat(x, Wk[h]));
      const S = Q.map((qi) => K.map((kj) => dot(qi, kj) / Math.sqrt(dk)));
      scoresAll.push(S);
      weights.push(S.map(softmax));
    }
    const f = frame(root, "What each head attends to",
      `Choose a head and a query token: the bars show that token's weights α = softmax(q_i Kᵀ / √d_k) over the ${T} tokens; the heat map shows the chosen head's whole weight matrix, the query's row outlined.`);
    const head = slider(f.controls, f.uid, {
      param: "head", min: 0, max: heads - 1, step: 1, value: h0,
      label: "head", text: (v) => `head ${Math.round(v) + 1}`,  // counted from 1, as the notebook's dropdown does
      valuetext: (v) => `head ${Math.round(v) + 1} of ${heads}`,
    });
    const query = slider(f.controls, f.uid, {
      param: "query", min: 0, max: T - 1, step: 1, value: q0,
      label: el("span", {}, "query token ", el("i", {}, "i")), text: (v) => `${Math.round(v)}: “${tokens[Math.round(v)]}”`,
      valuetext: (v) => `query token ${Math.round(v)}: “${tokens[Math.round(v)]}” (tokens are numbered 0 to ${T - 1})`,
    });
    const bars = barChart(f.display, tokens, [{ name: "α", color: BLUE }], "Bar chart of the query token's attention weights");
    const cell = 22, left = 64, top = 8;
    const heat = svg("svg", {
      viewBox: `0 0 ${left + T * cell + 8} ${top + T * cell + 64}`, class: "attn-heat", role: "img",
      width: String(left + T * cell + 8), height: String(top + T * cell + 64), "aria-label": "Heat map of the head's attention weights",
    });
    const rects = [];
    for (let i = 0; i < T; i++) {
      rects.push([]);
      heat.append(svgText(left - 4, top + i * cell + cell / 2 + 4, short(tokens[i], 8), { class: "attn-tick", "text-anchor": "end" }));
      for (let j = 0; j < T; j++) {
        const r = svg("rect", { x: left + j * cell, y: top + i * cell, width: cell - 1, height: cell - 1 });
        rects[i].push(r);
        heat.append(r);
      }
    }
    for (let j = 0; j < T; j++) {
      const x = left + j * cell + cell / 2, y = top + T * cell + 6;
      heat.append(svgText(x, y, short(tokens[j], 8), { class: "attn-tick", "text-anchor": "end", transform: `rotate(-60 ${x} ${y})`, dy: "0.6em" }));
    }
    const outline = svg("rect", { x: left - 1, width: T * cell + 1, height: cell + 1, class: "attn-heat-row" });
    heat.append(outline);
    f.display.append(heat);
    const cells = numberTable(f.display, "Scores and weights of the query token", "key token", tokens,
      [{ role: "score", header: "q·k/√d_k" }, { role: "weight", header: "α" }]);
    const hSpan = scalarReadout(f.readout, "entropy", "entropy", "nats");
    wire([head, query], () => {
      const h = Math.round(head.value());
      const i = Math.round(query.value());
      const W = weights[h];
      for (let a = 0; a < T; a++) for (let b = 0; b < T; b++) rects[a][b].setAttribute("fill", viridis(W[a][b]));
      outline.setAttribute("y", String(top + i * cell - 1));
      setNumbers(cells.score, scoresAll[h][i]);
      setNumbers(cells.weight, W[i]);
      hSpan.textContent = fmt(entropy(W[i]));
      bars([W[i]]);
      heat.setAttribute("aria-label", `Heat map of head ${h + 1}'s attention weights; row ${i} (“${tokens[i]}”) is outlined.`);
      return topWeight(W[i], tokens);
    });
  };

  /** online-softmax: the online softmax (eq. 9.2), the keys read one block at a time, against the one-shot softmax. */
  KINDS["online-softmax"] = function (root, config) {
    const labels = config.labels;
    const s = config.scores;
    const V = config.values;
    const T = s.length;
    const full = softmax(s);
    const fullOut = weightedSum(full, V);
    const f = frame(root, "The online softmax, block by block",
      `Read the ${T} keys a block at a time: the running maximum m, the rescaling factor r, the running sum ℓ and the partial output o/ℓ change with each block until they equal the one-shot softmax.`);
    const block = slider(f.controls, f.uid, {
      param: "block_size", min: 1, max: T, step: 1, value: config.block_size,
      label: "keys per block", text: (v) => String(Math.round(v)),
      valuetext: (v) => `${Math.round(v)} key${Math.round(v) === 1 ? "" : "s"} per block`,
    });
    const step = slider(f.controls, f.uid, {
      param: "step", min: 0, max: Math.ceil(T / config.block_size), step: 1, value: config.step,
      label: "blocks read", text: (v) => `${Math.round(v)} of ${Math.ceil(T / Math.round(block.value()))}`,
      valuetext: (v) => `${Math.round(v)} of ${Math.ceil(T / Math.round(block.value()))} blocks read`,
    });
    const bars = barChart(f.display, labels, [{ name: "weights so far", color: BLUE }, { name: "one-shot", color: GREY }],
      "Bar chart of the weights of the keys read so far and of the one-shot softmax");
    const cells = numberTable(f.display, "Scores and weights", "key", labels, [
      { role: "score", header: "score s" }, { role: "weight", header: "e^(s − m)/ℓ so far" }, { role: "weight-full", header: "one-shot softmax" },
    ]);
    const mSpan = scalarReadout(f.readout, "m", "m");
    const rSpan = scalarReadout(f.readout, "r", "factor");
    const lSpan = scalarReadout(f.readout, "ℓ", "ell");
    const oSpans = vectorReadout(f.readout, "o/ℓ", "output", V[0].length);
    const fullSpans = vectorReadout(f.readout, "one-shot output", "full-output", V[0].length);
    setNumbers(cells.score, s);
    setNumbers(cells["weight-full"], full);
    setNumbers(fullSpans, fullOut);
    wire([block, step], () => {
      const b = Math.round(block.value());
      const nBlocks = Math.ceil(T / b);
      step.input.max = String(nBlocks);  // the browser clamps the value to the new maximum
      if (step.value() > nBlocks) step.input.value = String(nBlocks);
      const n = Math.round(step.value());
      let m = -Infinity, ell = 0, r = 0;
      const o = V[0].map(() => 0);
      for (let k = 0; k < n; k++) {
        const blk = s.slice(k * b, (k + 1) * b);
        const mNew = Math.max(m, ...blk);
        r = Math.exp(m - mNew);  // exp(-inf) = 0 for the first block
        ell *= r;
        for (let c = 0; c < o.length; c++) o[c] *= r;
        blk.forEach((sj, i) => {
          const e = Math.exp(sj - mNew);
          ell += e;
          for (let c = 0; c < o.length; c++) o[c] += e * V[k * b + i][c];
        });
        m = mNew;
      }
      const seen = Math.min(T, n * b);
      const w = s.map((sj, j) => (j < seen ? Math.exp(sj - m) / ell : 0));
      const out = o.map((x) => x / ell);
      mSpan.textContent = n ? fmt(m) : "−∞";
      rSpan.textContent = n ? fmt(r) : "–";
      lSpan.textContent = fmt(ell);
      oSpans.forEach((span, c) => { span.textContent = n ? fmt(out[c]) : "–"; });
      setNumbers(cells.weight, w);
      bars([w, full]);
      return n ? `after ${n} of ${nBlocks} blocks: m ${fmt(m)}, ℓ ${fmt(ell)}, output (${out.map(fmt).join(", ")})`
        : "no keys read yet";
    });
  };

  /* ---------- the key-value cache of real configurations (chapter 10) ---------- */

  /**
   * Model i's cache for a context of T tokens at b bytes per number: per token (what each token adds
   * to every layer) and in all (a windowed layer holds at most `window` positions).
   */
  function cacheOf(config, i, T, b) {
    const perPosition = config.d_latent[i] > 0 ? config.d_latent[i] + config.d_rope[i] : 2 * config.n_kv_heads[i] * config.d_k[i];
    const layers = config.layers[i];
    const local = config.window[i] > 0 ? Math.min(config.windowed_layers[i], layers) : 0;
    const positions = local * Math.min(T, config.window[i]) + (layers - local) * T;
    return { perToken: layers * perPosition * b, total: positions * perPosition * b };
  }

  KINDS["kv-cache"] = function (root, config) {
    const names = config.names;
    const contexts = config.contexts;
    const sizes = config.bytes_per_number;
    const f = frame(root, "The key–value cache of real configurations",
      `Choose a context length and the bytes of each cached number: each model's cache for one sequence, per token and in all, and as a share of ${config.memory_gib} GiB of memory. A window caps what its layers hold; a latent replaces the keys and values.`);
    const ctx = slider(f.controls, f.uid, {
      param: "context_index", min: 0, max: contexts.length - 1, step: 1, value: config.context_index,
      label: el("span", {}, "context length ", el("i", {}, "T")),
      text: (v) => `${thousands(contexts[Math.round(v)])} tokens`,
    });
    const bytes = slider(f.controls, f.uid, {
      param: "bytes_index", min: 0, max: sizes.length - 1, step: 1, value: config.bytes_index,
      label: "bytes per number",
      text: (v) => `${sizes[Math.round(v)]} byte${sizes[Math.round(v)] === 1 ? "" : "s"}`,
    });
    const bars = barChart(f.display, config.labels, [{ name: `share of ${config.memory_gib} GiB`, color: BLUE }],
      `Bar chart of each model's cache as a share of ${config.memory_gib} GiB (a full bar: it does not fit)`);
    const cells = numberTable(f.display, "The cache of one sequence", "model", names, [
      { role: "per-token-kib", header: "per token (KiB)" }, { role: "cache-mib", header: "for T tokens (MiB)" },
      { role: "share", header: `share of ${config.memory_gib} GiB` },
    ]);
    cells.share[0].closest("table").querySelector("thead tr").append(el("th", { scope: "col" }, "measured on the grammar (5 seeds)"));
    cells.share.forEach((td, i) => td.parentElement.append(el("td", {}, config.quality[i] || "–")));
    const tSpan = scalarReadout(f.readout, "T", "context", "tokens");
    const bSpan = scalarReadout(f.readout, "bytes per number", "bytes");
    wire([ctx, bytes], () => {
      const T = contexts[Math.round(ctx.value())];
      const b = sizes[Math.round(bytes.value())];
      const caches = names.map((_, i) => cacheOf(config, i, T, b));
      const shares = caches.map((c) => c.total / (config.memory_gib * 1073741824));
      setNumbers(cells["per-token-kib"], caches.map((c) => c.perToken / 1024));
      setNumbers(cells["cache-mib"], caches.map((c) => c.total / 1048576));
      setNumbers(cells.share, shares);
      tSpan.textContent = String(T);
      bSpan.textContent = String(b);
      bars([shares]);
      let k = 0;
      for (let i = 1; i < caches.length; i++) if (caches[i].total < caches[k].total) k = i;
      const over = shares.filter((v) => v > 1).length;
      return `${T} tokens at ${b} byte${b === 1 ? "" : "s"} per number: smallest cache ${fmt(caches[k].total / 1048576)} MiB (${names[k]}); ${over} of ${names.length} exceed ${config.memory_gib} GiB`;
    });
  };

  /* ---------- positional encodings (the Transformer chapter) ---------- */

  /** Tick labels along an axis of n indices: every k-th, k a round step, at most about 8 labels. */
  function indexTicks(n) {
    const k = [1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50].find((s) => Math.ceil(n / s) <= 8) || Math.ceil(n / 8);
    const out = [];
    for (let i = 0; i < n; i += k) out.push(i);
    return out;
  }

  /**
   * Signed values over n indices, as bars from 0 (opts.line: as dots joined by a line), on a fixed
   * axis [opts.lo, opts.hi], the current index in orange, a heading above. Returns
   * update(values, current, heading, label): label is the chart's aria-label.
   */
  function signedPlot(parent, n, opts) {
    const left = 40, right = 8, top = 24, height = 100, plotW = 300;
    const width = left + plotW + right;
    const lo = opts.lo, hi = opts.hi > opts.lo ? opts.hi : opts.lo + 1;
    const y = (v) => top + ((hi - Math.max(lo, Math.min(hi, v))) / (hi - lo)) * height;
    const step = plotW / n;
    const x = (i) => left + (i + 0.5) * step;
    const chart = svg("svg", {
      viewBox: `0 0 ${width} ${top + height + 34}`, class: "attn-bars attn-pe-plot", role: "img",
      width: String(width), height: String(top + height + 34), "aria-label": "",
    });
    const ticks = lo < 0 && hi > 0 ? [lo, 0, hi] : [lo, (lo + hi) / 2, hi];
    for (const g of ticks) {
      chart.append(svg("line", { x1: left, x2: left + plotW, y1: y(g), y2: y(g), class: g === 0 ? "attn-axis" : "attn-grid" }));
      chart.append(svgText(left - 4, y(g) + 3.5, fmt(g).replace(/0+$/, "").replace(/\.$/, ""), { class: "attn-tick", "text-anchor": "end" }));
    }
    for (const i of indexTicks(n)) {
      chart.append(svgText(x(i), top + height + 14, String(i), { class: "attn-tick", "text-anchor": "middle" }));
    }
    chart.append(svgText(left + plotW / 2, top + height + 29, opts.xlabel, { class: "attn-tick", "text-anchor": "middle" }));
    let marks;
    let line = null;
    if (opts.line) {
      line = svg("polyline", { fill: "none", stroke: BLUE, "stroke-width": 1.5 });
      chart.append(line);
      marks = Array.from({ length: n }, () => {
        const c = svg("circle", { cx: 0, cy: 0, r: 2, fill: BLUE });
        chart.append(c);
        return c;
      });
    } else {
      const gap = step > 6 ? 1 : step / 6;
      marks = Array.from({ length: n }, (_, i) => {
        const r = svg("rect", { x: left + i * step + gap / 2, width: step - gap, y: y(0), height: 0, fill: BLUE });
        chart.append(r);
        return r;
      });
    }
    const heading = svgText(4, 12, "", { class: "attn-tick attn-pe-heading" });
    chart.append(heading);
    parent.append(chart);
    return function update(values, current, headingText, label) {
      if (line) line.setAttribute("points", values.map((v, i) => `${x(i)},${y(v)}`).join(" "));
      values.forEach((v, i) => {
        const m = marks[i];
        m.setAttribute("fill", i === current ? ORANGE : BLUE);
        if (line) {
          m.setAttribute("transform", `translate(${x(i)},${y(v)})`);
          m.setAttribute("r", i === current ? "5" : "2");
        } else {
          const y0 = y(0), y1 = y(v);
          m.setAttribute("y", String(Math.min(y0, y1)));
          m.setAttribute("height", String(Math.abs(y1 - y0)));
        }
      });
      heading.textContent = headingText;
      chart.setAttribute("aria-label", label);
    };
  }

  /**
   * A table under a visible title, in a box of its own height that scrolls (by keyboard too: the box
   * is a focusable region named by the title); its header row stays in view.
   */
  function scrollingTable(parent, id, title, rowHeader, labels, columns) {
    const heading = el("p", { class: "attn-pe-table-title", id: id }, title);
    const box = el("div", { class: "attn-scroll", tabindex: "0", role: "region", "aria-labelledby": id });
    parent.append(el("div", { class: "attn-pe-table" }, heading, box));
    const cells = numberTable(box, title, rowHeader, labels, columns);
    const table = box.querySelector("table");
    table.querySelector("caption").remove();  // the title above names it (a caption would scroll away)
    table.setAttribute("aria-labelledby", id);
    const rows = cells[columns[0].role].map((td) => td.parentElement);
    let shown = 0;
    // Scrolls the box (only the box, never the page) to put the current row in its middle.
    const centre = () => {
      const row = rows[shown];
      box.scrollTop = Math.max(0, table.offsetTop + row.offsetTop - box.clientHeight / 2 + row.offsetHeight / 2);
    };
    // Rows change height when the web font arrives or the width changes: centre the row again. The
    // observer's first call comes once the browser has laid the table out: measuring it while the
    // explorer is built (on load, often in a cell the browser skips until it comes near) made the
    // browser lay it out on the spot.
    let laidOut = !window.ResizeObserver;
    if (window.ResizeObserver) new ResizeObserver(() => { laidOut = true; centre(); }).observe(table);
    return {
      cells: cells,
      /** Marks row i as the current one and shows it. */
      current(i) {
        rows.forEach((r, k) => r.classList.toggle("attn-row-current", k === i));
        shown = i;
        if (laidOut) centre();
      },
    };
  }

  /**
   * The Transformer chapter: for the chosen position pos and dimension j of the encodings PE (one
   * row per position), the row PE[pos], the dot products PE[pos]·PE[t] with every position t, and
   * column j, PE[t, j], across the positions.
   */
  KINDS["positional-encoding"] = function (root, config) {
    const PE = config.PE;
    const T = PE.length;
    const D = PE[0].length;
    const gram = PE.map((a) => PE.map((b) => dot(a, b)));
    const all = flat(PE);
    const peLo = Math.min(-1, ...all), peHi = Math.max(1, ...all);
    const gAll = flat(gram);
    const f = frame(root, "Positional encodings and their dot products",
      `Choose a position pos (0 to ${T - 1}) and a dimension j (0 to ${D - 1}) of the encodings PE: the bars show the encoding of pos over its ${D} dimensions and its dot products PE[pos]·PE[t] with every position t (for the sinusoidal encoding, largest at t = pos and falling with the distance |pos − t|); the line shows dimension j across the positions (for the sinusoidal encoding, a wave that is longer the larger j).`);
    const position = slider(f.controls, f.uid, {
      param: "position", min: 0, max: T - 1, step: 1, value: config.position,
      label: el("span", {}, "position ", el("i", {}, "pos")), text: (v) => String(Math.round(v)),
      valuetext: (v) => `position ${Math.round(v)} (positions are numbered 0 to ${T - 1})`,
    });
    const dimension = slider(f.controls, f.uid, {
      param: "dimension", min: 0, max: D - 1, step: 1, value: config.dimension,
      label: el("span", {}, "dimension ", el("i", {}, "j")), text: (v) => String(Math.round(v)),
      valuetext: (v) => `dimension ${Math.round(v)} (dimensions are numbered 0 to ${D - 1})`,
    });
    const charts = el("div", { class: "attn-pe-charts" });
    const tables = el("div", { class: "attn-pe-tables" });
    f.display.append(charts, tables);
    const encodingPlot = signedPlot(charts, D, { lo: peLo, hi: peHi, xlabel: "dimension j" });
    const dotPlot = signedPlot(charts, T, { lo: Math.min(0, ...gAll), hi: Math.max(...gAll), xlabel: "position t" });
    const wavePlot = signedPlot(charts, T, { lo: peLo, hi: peHi, xlabel: "position t", line: true });
    const dims = Array.from({ length: D }, (_, i) => String(i));
    const positions = Array.from({ length: T }, (_, i) => String(i));
    const encTable = scrollingTable(tables, `${f.uid}-encoding`, "The encoding of pos", "j",
      dims, [{ role: "encoding", header: "PE[pos, j]" }]);
    const posTable = scrollingTable(tables, `${f.uid}-positions`, "Dot products with pos; dimension j", "t",
      positions, [{ role: "dot", header: "PE[pos]·PE[t]" }, { role: "wave", header: "PE[t, j]" }]);
    const posSpan = numberSpan("position");
    const dimSpan = numberSpan("dimension");
    const valueSpan = numberSpan("value");
    f.readout.append(el("span", { class: "attn-readout-item" }, "PE[", posSpan, ", ", dimSpan, "] = ", valueSpan));
    const normSpan = scalarReadout(f.readout, "PE[pos]·PE[pos]", "self-dot");
    wire([position, dimension], () => {
      const p = Math.round(position.value());
      const j = Math.round(dimension.value());
      const enc = PE[p];
      const dots = gram[p];
      const wave = PE.map((row) => row[j]);
      posSpan.textContent = String(p);
      dimSpan.textContent = String(j);
      valueSpan.textContent = fmt(enc[j]);
      normSpan.textContent = fmt(dots[p]);
      setNumbers(encTable.cells.encoding, enc);
      setNumbers(posTable.cells.dot, dots);
      setNumbers(posTable.cells.wave, wave);
      encTable.current(j);
      posTable.current(p);
      encodingPlot(enc, j, `PE[${p}, j]: the encoding of position ${p}`,
        `Bar chart of the encoding of position ${p} over its ${D} dimensions; dimension ${j} in orange`);
      dotPlot(dots, p, `PE[${p}]·PE[t]: its dot product with each position`,
        `Bar chart of the dot products of the encoding of position ${p} with every position's; position ${p} in orange`);
      wavePlot(wave, p, `PE[t, ${j}]: dimension ${j} across the positions`,
        `Line plot of dimension ${j} of the encodings across the ${T} positions; position ${p} marked`);
      let far = 0;
      for (let t = 1; t < T; t++) if (dots[t] < dots[far]) far = t;
      const next = p + 1 < T ? p + 1 : p - 1;
      return `PE[${p}, ${j}] = ${fmt(enc[j])}; dot products: ${fmt(dots[p])} with itself, ${fmt(dots[next])} with position ${next}, smallest ${fmt(dots[far])} with position ${far}`;
    });
  };

  /* ---------- start ---------- */

  function build(root) {
    if (root.dataset.ready) return;
    const kind = root.dataset.kind;
    try {
      if (!Object.prototype.hasOwnProperty.call(KINDS, kind)) throw new ConfigError(`unknown kind "${kind}" (explorers.js has no renderer for it)`);
      let config;
      try {
        config = JSON.parse(root.dataset.config || "");
      } catch (err) {
        throw new ConfigError("data-config is not valid JSON");
      }
      checkConfig(kind, config);
      KINDS[kind](root, config);
      root.dataset.ready = "true";
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      root.dataset.ready = "error";
      root.textContent = "";
      root.append(el("p", { class: "attn-explorer-error" }, `This explorer (${kind}) could not be built: ${err.message}. The figure next to it shows the same computation.`));
      console.error(`explorers.js: the ${kind} explorer could not be built: ${err.message} (see CONTRIBUTING.md, "Interactives").`);
    }
  }

  /* Each explorer is built in a task of its own, after the script's own: built in one, a page's
   * explorers and the script's start took 27 ms on chapter 4's page (0.1 s at Lighthouse's 4x CPU
   * slowdown, a tap waits that long). When all are built: <html data-attn-explorers="built">. */
  function buildAll() {
    const roots = Array.from(document.querySelectorAll(".attn-explorer"));
    const next = () => {
      const root = roots.shift();
      if (!root) {
        document.documentElement.dataset.attnExplorers = "built";
        return;
      }
      try { build(root); } finally { setTimeout(next, 0); }
    };
    setTimeout(next, 0);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", buildAll);
  else buildAll();
})();
