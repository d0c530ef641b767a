// Typesets every formula of the built pages with MathJax itself (npm `mathjax`, pinned in
// package-lock.json), so that no typesetting runs in the reader's browser.
//
//   node prerender.js CONFIG.json
//
// CONFIG.json: {"pages": [absolute paths of HTML files], "css": path of the stylesheet to write,
//               "fontURL": the fonts' URL relative to that stylesheet, "tex": MathJax's tex options,
//               "em": px, "ex": px, "cache": a JSON file of each page's formulas, kept between builds}
//
// Each Sphinx formula, <span class="math ...">\(...\)</span> or <div class="math ...">\[...\]</div>,
// keeps its element; its TeX is replaced by MathJax's CommonHTML output, with the assistive MathML
// that screen readers read (the same components the site loaded in the browser: TeX input,
// CommonHTML output, a11y/assistive-mml). One stylesheet for the whole site (the CHTML rules and the
// glyphs that some page uses) is written to CONFIG.css. Prints one JSON line: {"formulas": n,
// "errors": [...]}, where a TeX error names its page and its TeX.
'use strict';
const fs = require('fs');
const path = require('path');

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));

// Sphinx writes a formula's TeX HTML-escaped (&amp; &lt; &gt; &quot; &#39;).
const unescape = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"')
  .replace(/&#39;/g, "'").replace(/&#x27;/g, "'").replace(/&amp;/g, '&');

// <span class="math notranslate nohighlight">\(…\)</span>, <div class="math notranslate nohighlight" …>\[…\]</div>
// and amsmath's environments, <div class="amsmath math notranslate nohighlight">\begin{…}…\end{…}</div>,
// which Sphinx writes without delimiters (display math). A formula typeset by an earlier build
// (<mjx-container> inside: an incremental build leaves unchanged pages as they were) is not TeX and
// never matches again.
const FORMULA = /(<(span|div) class="(?:amsmath )?math notranslate nohighlight"[^>]*>)(?!\s*<mjx-container)\s*(\\\(|\\\[)?([\s\S]*?)(\\\)|\\\])?\s*(<\/\2>)/g;

global.MathJax = {
  loader: {
    paths: {mathjax: path.join(__dirname, 'node_modules', 'mathjax', 'es5')},
    load: ['input/tex', 'output/chtml', 'a11y/assistive-mml', 'adaptors/liteDOM'],
    require: require,
  },
  tex: config.tex,
  chtml: {fontURL: config.fontURL, adaptiveCSS: true},
  startup: {typeset: false},
};
require(path.join(__dirname, 'node_modules', 'mathjax', 'es5', 'startup.js'));

MathJax.startup.promise.then(async () => {
  const adaptor = MathJax.startup.adaptor;
  let formulas = 0;
  const errors = [];
  // An incremental build rewrites only the pages that changed: the formulas of the others, as last
  // typeset (config.cache), are typeset again without writing, so that the stylesheet keeps their glyphs.
  const cache = fs.existsSync(config.cache) ? JSON.parse(fs.readFileSync(config.cache, 'utf8')) : {};
  const seen = {};
  for (const page of config.pages) {
    const html = fs.readFileSync(page, 'utf8');
    const found = [...html.matchAll(FORMULA)];
    if (!found.length) {
      if (html.includes('<mjx-container') && cache[page]) {
        for (const [tex, display] of cache[page]) await MathJax.tex2chtmlPromise(tex, {display, em: config.em, ex: config.ex});
        seen[page] = cache[page];
      }
      continue;
    }
    const rendered = [];
    seen[page] = [];
    for (const m of found) {
      const display = m[3] === '\\[' || m[1].includes('amsmath');
      const tex = unescape(m[4]);
      seen[page].push([tex, display]);
      const node = await MathJax.tex2chtmlPromise(tex, {display, em: config.em, ex: config.ex, containerWidth: 80 * config.em});
      const err = adaptor.tags(node, 'mjx-merror');
      if (err.length) {
        errors.push(`${path.basename(page)}: ${adaptor.getAttribute(err[0], 'data-mjx-error') || adaptor.textContent(err[0])} in ${tex.trim().slice(0, 120)}`);
        // MathJax shows only its message: the page keeps the TeX's beginning, so that the tests can name the formula
        adaptor.setAttribute(node, 'data-tex', tex.trim().slice(0, 60));
      }
      rendered.push(`${m[1]}${adaptor.outerHTML(node)}${m[6]}`);
      formulas++;
    }
    let k = 0;
    fs.writeFileSync(page, html.replace(FORMULA, () => rendered[k++]));
  }
  fs.writeFileSync(config.cache, JSON.stringify(seen));
  const css = adaptor.textContent(MathJax.chtmlStylesheet());
  fs.mkdirSync(path.dirname(config.css), {recursive: true});
  fs.writeFileSync(config.css, css);
  process.stdout.write(JSON.stringify({formulas, errors}) + '\n');
}).catch((err) => {
  process.stderr.write(String(err && err.stack || err) + '\n');
  process.exit(1);
});
