/*
 * site.js: small repairs of the theme (sphinx-book-theme 1.3 on pydata-sphinx-theme 0.17), served
 * by the site itself and loaded on every page. Each block says what it repairs; the browser tests
 * (tests/test_browser.py) check the result: navigation by tapping on a phone, no axe-core
 * violation, no page wider than a phone.
 */
(function () {
  "use strict";

  function ready(f) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", f);
    else f();
  }

  /* Work that measures the page, after load and after the next frame, in tasks of at most about
   * 8 ms each. Run in the load event, it shared one task with the theme's start and every script's
   * load handlers (75 ms on chapter 3's page, 0.3 s at Lighthouse's 4x CPU slowdown: a tap waits that
   * long), and each measurement made the browser lay out what the parser had just added. After a
   * frame, that is laid out already. A piece is a function, or a generator function that yields
   * between steps: its steps go on in the next task once a task has run 8 ms (the first judgement of
   * a block the browser skipped costs 3-12 ms of forced style, so a whole page's blocks took 20-50 ms
   * in one task). When all is done, <html data-attn-ready> (the tests wait for it). */
  const afterLoad = [];
  const BUDGET_MS = 8;
  let taskStart = 0;
  const timeUp = () => performance.now() - taskStart >= BUDGET_MS;
  function whenLoaded(f) { afterLoad.push(f); }
  function runAfterLoad() {
    let steps = null;
    const next = () => {
      taskStart = performance.now();
      try {
        while (!timeUp()) {
          if (steps) {
            if (!steps.next().done) continue;
            steps = null;
          }
          const f = afterLoad.shift();
          if (!f) {
            document.documentElement.dataset.attnReady = "1";
            return;
          }
          const result = f();
          if (result && typeof result.next === "function") steps = result;
        }
      } catch (err) {
        steps = null;
        console.error(err);
      }
      setTimeout(next, 0);
    };
    requestAnimationFrame(() => setTimeout(next, 0));
  }
  if (document.readyState === "complete") runAfterLoad();
  else window.addEventListener("load", runAfterLoad);

  /* Navigation. The theme renders two .primary-toggle buttons and attaches its handler to the first
   * only (pydata-sphinx-theme#2451), so on a phone the visible one does nothing. One handler here,
   * registered before the theme's, serves every toggle: on a narrow screen it opens the sidebar in
   * the theme's own <dialog>; on a wide one the primary toggle collapses the sidebar. */
  function moveChildren(from, to) {
    Array.from(from.childNodes).forEach((n) => to.appendChild(n));
    Array.from(from.classList).forEach((c) => { from.classList.remove(c); to.classList.add(c); });
  }

  function openInDialog(sidebar, dialog, opener) {
    moveChildren(sidebar, dialog);
    dialog.addEventListener("close", () => {
      moveChildren(dialog, sidebar);
      if (opener && opener.focus) opener.focus();
    }, { once: true });
    dialog.showModal();
  }

  document.addEventListener("click", (event) => {
    const toggle = event.target.closest && event.target.closest(".primary-toggle, .secondary-toggle");
    if (!toggle) return;
    const primary = toggle.classList.contains("primary-toggle");
    const sidebar = document.getElementById(primary ? "pst-primary-sidebar" : "pst-secondary-sidebar");
    const dialog = document.getElementById(primary ? "pst-primary-sidebar-modal" : "pst-secondary-sidebar-modal");
    if (!sidebar || !dialog) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    const wide = window.matchMedia(primary ? "(min-width: 992px)" : "(min-width: 1200px)").matches;
    if (wide && primary) {
      sidebar.classList.toggle("pst-sidebar-hidden");
      toggle.setAttribute("aria-expanded", String(!sidebar.classList.contains("pst-sidebar-hidden")));
    } else if (!dialog.open) {
      openInDialog(sidebar, dialog, toggle);
    }
  }, true);

  ready(() => {
    for (const id of ["pst-primary-sidebar-modal", "pst-secondary-sidebar-modal"]) {
      const dialog = document.getElementById(id);
      if (!dialog) continue;
      // A tap on the backdrop (outside the dialog's box) closes it; so does Escape (native).
      dialog.addEventListener("click", (event) => {
        if (event.target === dialog) {
          const r = dialog.getBoundingClientRect();
          const inside = event.clientX >= r.left && event.clientX <= r.right && event.clientY >= r.top && event.clientY <= r.bottom;
          if (!inside || !dialog.children.length) dialog.close();
        }
      });
      dialog.setAttribute("aria-label", id.startsWith("pst-primary") ? "Chapters" : "On this page");
    }
    document.querySelectorAll(".primary-toggle, .secondary-toggle").forEach((b) => {
      const primary = b.classList.contains("primary-toggle");
      b.setAttribute("aria-label", primary ? "Chapters" : "Contents of this page");
      b.setAttribute("title", primary ? "Chapters" : "Contents of this page");
      b.removeAttribute("data-bs-toggle");  // a tooltip that only repeats the name
    });
  });

  /* Accessible names that match the visible text (WCAG 2.5.3, axe label-content-name-mismatch).
   * After load: innerText lays the page out. */
  whenLoaded(() => {
    document.querySelectorAll(".search-button-field, button.search-button__button").forEach((b) => {
      const text = (b.innerText || "").trim().replace(/\s+/g, " ");
      if (text) b.setAttribute("aria-label", text);
    });
    document.querySelectorAll(".theme-switch-button").forEach((b) => {
      b.setAttribute("aria-label", "Colour mode");
      b.setAttribute("title", "Colour mode: light, dark or as the system");
      b.removeAttribute("data-bs-toggle");
    });
    // sphinx-togglebutton names every <summary> "Toggle hidden content"; its visible text says more.
    document.querySelectorAll("details.toggle-details summary, summary[aria-label]").forEach((s) => {
      s.removeAttribute("aria-label");
    });
    document.querySelectorAll("button.toggle-button[aria-label]").forEach((b) => {
      // textContent, not innerText: innerText lays out what is not laid out yet (twice on a chapter
      // page, 25 ms each at Lighthouse's 4x slowdown), and sphinx-togglebutton's buttons hold no hidden text
      const text = (b.textContent || "").trim();
      if (text) b.setAttribute("aria-label", text);
    });
  });

  /* References: docutils writes role="doc-biblioentry" (deprecated in DPUB-ARIA 1.1) inside a
   * role="list" without list items. Plain list semantics instead. */
  ready(() => {
    document.querySelectorAll('[role="doc-biblioentry"]').forEach((e) => e.setAttribute("role", "listitem"));
    document.querySelectorAll('[role="doc-bibliography"]').forEach((e) => e.removeAttribute("role"));
  });

  /* Code and outputs that scroll sideways get a name and keyboard focus (axe
   * scrollable-region-focusable), only while they actually overflow, so that they add no tab stops
   * on a wide screen. The scroll cue itself is CSS (site.css).
   *
   * Far-off cells are not laid out on load (site.css, content-visibility: auto), and measuring a
   * block inside one makes the browser lay that cell out on the spot: measuring every block on load
   * cost 0.6-0.7 s at Lighthouse's 4x CPU slowdown (on one chapter page). So a block the browser has skipped
   * is judged from its text (its longest line, in its monospace font, against the width of its cell,
   * below), and measured when the browser lays it out
   * (contentvisibilityautostatechange). The theme's own tab-stop script leaves skipped blocks to this
   * one (tools/sphinx_ext/page_speed.py patches it). A browser without that event measures all. */
  const SCROLLERS = "div.highlight pre, .cell_output pre, mjx-container[display='true'], .math-wrapper, .table-wrapper, " +
    ".pst-scrollable-table-container";
  const LAZY = "oncontentvisibilityautostatechange" in window && "checkVisibility" in Element.prototype;
  const skipped = (e) => LAZY && !e.checkVisibility({ contentVisibilityAuto: true });
  window.attnSkipped = skipped;
  // Judging a skipped block: its longest line in its monospace font against the width its box has
  // for text. The box (the cell or exercise box that content-visibility skips) is laid out itself,
  // only its content is skipped; the insets between the box and the code's text (paddings, borders,
  // margins) are the same for every box of a kind, and so is its width (a cell in the text column,
  // or in an exercise box), read once per kind and width of the window: reading it box by box cost
  // 133 ms of the 190 ms that marking chapter 2's blocks took on load at Lighthouse's 4x CPU slowdown.
  const measure = document.createElement("canvas").getContext("2d");
  let charWidth = null;
  const insets = {};
  let widths = {};

  function insetOf(pre, box, kind) {
    if (!(kind in insets)) {
      let sum = 0;
      const sides = ["paddingLeft", "paddingRight", "borderLeftWidth", "borderRightWidth", "marginLeft", "marginRight"];
      for (let n = pre; n && n !== box; n = n.parentElement) {
        const st = getComputedStyle(n);
        sum += sides.reduce((total, side) => total + (parseFloat(st[side]) || 0), 0);
      }
      const st = getComputedStyle(box);
      insets[kind] = sum + (parseFloat(st.paddingLeft) || 0) + (parseFloat(st.paddingRight) || 0);
    }
    return insets[kind];
  }

  function overflows(e, all) {
    if (all || !skipped(e)) return e.scrollWidth > e.clientWidth + 1;
    // Outputs wrap (site.css); formulas and tables are judged when laid out.
    if (!e.matches("div.highlight pre") || e.closest(".cell_output")) return false;
    const box = e.closest(BOX);
    if (!box) return false;
    const kind = kindOf(box);
    const sample = sampleOf(kind, e);
    if (charWidth === null) {
      const st = getComputedStyle(sample);
      measure.font = `${st.fontStyle} ${st.fontWeight} ${st.fontSize} ${st.fontFamily}`;
      charWidth = measure.measureText("0123456789").width / 10;
    }
    const place = kind + (box.parentElement && box.parentElement.closest(".admonition") ? " in a box" : "");
    if (!(place in widths)) widths[place] = box.clientWidth;
    const longest = Math.max(...e.textContent.replace(/\n$/, "").split("\n").map((line) => line.length));
    return longest * charWidth > widths[place] - insetOf(sample, sample.closest(BOX), kind) + 1;
  }

  // The block whose style stands for its kind: one the browser has laid out if there is one, else
  // the one in the smallest box. Reading the style of a block the browser skipped makes it compute
  // the style of its whole box: 1-7 ms a cell on chapter 3's page, 26 ms once for a large one.
  const BOX = "div.cell, .admonition";
  const kindOf = (box) => (box.matches("div.cell") ? "cell" : "box");
  const samples = {};
  function sampleOf(kind, e) {
    if (!(kind in samples)) {
      let best = e, size = Infinity;
      for (const pre of document.querySelectorAll("div.highlight pre")) {
        const box = pre.closest(BOX);
        if (!box || pre.closest(".cell_output") || kindOf(box) !== kind) continue;
        const n = skipped(pre) ? box.getElementsByTagName("*").length : 0;
        if (n < size) {
          best = pre;
          size = n;
          if (n === 0) break;
        }
      }
      samples[kind] = best;
    }
    return samples[kind];
  }

  /* A block at a time, yielding when the task's time is up (after load); the reads first, then their
   * writes, before each yield (one layout per task, not one per block). */
  function* markingSteps(candidates, all, inTasks) {
    const found = [];
    const write = () => found.splice(0).forEach(([e, wide]) => {
      // The theme's own script gives a block tabindex -1 when it fits (on a wider screen, say) and
      // leaves skipped blocks alone after that: a wide block with -1 is corrected here.
      if (wide && e.getAttribute("tabindex") !== "0") {
        e.setAttribute("tabindex", "0");
        e.setAttribute("role", "region");
        e.setAttribute("aria-label", "scrolls sideways");
        e.dataset.attnScroll = "1";
      } else if (!wide && e.dataset.attnScroll) {
        e.removeAttribute("tabindex");
        e.removeAttribute("role");
        e.removeAttribute("aria-label");
        delete e.dataset.attnScroll;
      }
    });
    for (const e of candidates) {
      if (!e.isConnected) continue;
      found.push([e, overflows(e, all)]);
      if (inTasks && timeUp()) {
        write();
        yield;
      }
    }
    write();
  }

  function candidatesIn(root) {
    const scope = root && root.querySelectorAll ? root : document;
    const candidates = Array.from(scope.querySelectorAll(SCROLLERS));
    if (scope !== document && scope.matches(SCROLLERS)) candidates.push(scope);
    return candidates;
  }

  function markScrollers(root, all) {
    // Measuring every block (all): with content-visibility off, since Chromium's scrollWidth of a
    // block the browser skips can read 0 (a block that scrolls would lose its tab stop).
    if (all === true) document.documentElement.classList.add("attn-measure-all");
    try {
      for (const step of markingSteps(candidatesIn(root), all === true, false)) void step;
    } finally {
      if (all === true) document.documentElement.classList.remove("attn-measure-all");
    }
  }
  let pending = 0;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(() => { widths = {}; markScrollers(); }, 150);
  });
  whenLoaded(function* () {
    // the code font's own width, once it is there (asked after load: reading document.fonts.ready
    // while the page is parsed makes the browser lay it out, 14 ms on chapter 4's page)
    if (document.fonts && document.fonts.ready) document.fonts.ready.then(() => { charWidth = null; });
    yield* markingSteps(candidatesIn(document), false, true);
    const mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) mj.startup.promise.then(() => markScrollers());
  });
  // `attnMarkScrollers(true)` measures every block, laid out or not (the tests: what a reader meets
  // at each place once there).
  window.attnMarkScrollers = (all) => markScrollers(document, all === true);

  /* Figures: an image shown at less than 60 % of its own width (a wide figure on a phone) links to
   * the full-size file, so that a reader can open it and zoom; others stay as they are (no extra
   * tab stops on a wide screen). Judged when laid out: an image in a block the browser skips waits
   * until the browser lays that block out (reading its width would lay it out on the spot: 9-21 ms
   * on load on chapter 4's page). */
  function linkShrunkFigures(root) {
    const scope = root && root.querySelectorAll ? root : document;
    // Reads first, then the changes (one layout). An image not loaded yet (loading="lazy": when its
    // cell comes near) has its own width in its width attribute (page_speed.py writes it).
    const shrunk = Array.from(scope.querySelectorAll("figure img, .cell_output img")).filter((img) => {
      if (img.closest("a") || skipped(img)) return false;
      const own = img.naturalWidth || parseFloat(img.getAttribute("width")) || 0;
      return own > 0 && img.clientWidth < 0.6 * own;
    });
    shrunk.forEach((img) => {
      const a = document.createElement("a");
      a.href = img.getAttribute("src");
      a.className = "attn-full-size";
      a.title = "Open the figure at full size";
      img.replaceWith(a);
      a.append(img);
    });
  }
  whenLoaded(linkShrunkFigures);
  if (LAZY) {
    // Fired at a content-visibility: auto box when the browser starts or stops laying it out; the
    // document's capture phase hears every one: its code blocks and figures are judged then.
    document.addEventListener("contentvisibilityautostatechange", (event) => {
      if (event.skipped) return;
      markScrollers(event.target);
      linkShrunkFigures(event.target);
    }, true);
  }
  window.addEventListener("resize", () => setTimeout(linkShrunkFigures, 200));
})();

/* A skip link to the first explorer (like the theme's "Skip to main content"): a keyboard reader
 * reaches the first slider in three presses instead of tabbing past every copy button and
 * solution toggle before it. Visible when focused. */
(function () {
  "use strict";
  function addSkipLink() {
    const first = document.querySelector(".attn-explorer");
    const skip = document.getElementById("pst-skip-link");
    if (!first || !skip || document.querySelector(".attn-skip-to-explorer")) return;
    if (!first.id) first.id = "attn-first-explorer";
    const a = document.createElement("a");
    a.href = `#${first.id}`;
    a.className = "attn-skip-to-explorer";
    a.textContent = "Skip to the first interactive explorer";
    a.addEventListener("click", (event) => {
      const slider = first.querySelector("input[type=range]");
      if (!slider) return;
      event.preventDefault();
      first.scrollIntoView({ block: "start" });
      slider.focus();
    });
    skip.append(a);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", addSkipLink);
  else addSkipLink();
})();
