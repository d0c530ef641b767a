/* The Colab launch button of a chapter opens its Colab-ready copy in colab/ (written by
 * `python -m tools.site.colab` from notebooks/, MyST turned into Markdown that Colab renders) instead of
 * the notebook in notebooks/, whose boxes, exercises and citations Colab would show as raw text. */
(function () {
  "use strict";
  var COLAB = /^https:\/\/colab\.research\.google\.com\/github\//;

  function colabCopy(href) {
    if (!COLAB.test(href)) return href;
    return href.replace(/\/notebooks\/([^/?#]+\.ipynb)(?=$|[?#])/, "/colab/$1");
  }

  function rewrite(root) {
    var links = (root || document).querySelectorAll("a[href]");
    for (var i = 0; i < links.length; i++) {
      var href = links[i].getAttribute("href");
      var copy = colabCopy(href);
      if (copy !== href) links[i].setAttribute("href", copy);
    }
  }

  if (typeof window !== "undefined") window.colabCopy = colabCopy;
  if (typeof document !== "undefined") {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", function () { rewrite(); });
    else rewrite();
  }
  if (typeof module !== "undefined") module.exports = { colabCopy: colabCopy };
})();
