"""The Colab-ready copies in colab/ (tools/site/colab.py, converted by tools/convert/myst.py) and the
site's Colab launch buttons.

That the committed copies are what `make derived` writes is the derived-files check (tests/test_derived.py);
here: no MyST directive or role is left in them, their code cells and outputs are the chapter's, and the
conversion itself is checked on small hand-written MyST snippets.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import nbformat
import pytest
import yaml

from tools.site import colab
from tools.registry import ROOT, chapters

MYST_LEFT = re.compile(r"^\s*(?:`{3,}|:{3,})\s*\{[\w:-]+\}|\{[\w:-]+\}`", re.MULTILINE)
SITE = colab.site_url()
REFS = SITE + "book/references.html"


@pytest.mark.parametrize("chapter", chapters(), ids=lambda c: c.stem)
def test_copy_shows_no_raw_myst_and_keeps_the_code(chapter):
    source = nbformat.read(chapter.notebook, as_version=4)
    copy = colab.colab_notebook(source, chapter.stem)
    left = [f"cell {i}: {m.group(0)!r}" for i, c in enumerate(copy.cells) if c.cell_type == "markdown"
            for m in MYST_LEFT.finditer(c.source)]
    assert not left, f"{chapter.stem}: MyST left for Colab to show raw:\n  " + "\n  ".join(left)
    code = lambda nb: [(c.source, c.outputs, c.metadata) for c in nb.cells if c.cell_type == "code"]  # noqa: E731
    for cell in copy.cells:  # a plumbing cell's Colab form (tests/test_plumbing.py) undone: the rest is unchanged
        if cell.metadata.pop("cellView", None) == "form":
            cell.source = cell.source.split("\n", 1)[1]
    assert code(copy) == code(source), f"{chapter.stem}: the copy's code cells or outputs differ from the chapter's"
    assert copy.metadata == source.metadata


def test_admonition_becomes_a_titled_block_quote():
    text = "```{admonition} A1 — error: the softmax\n:class: warning\nThe note states $x$.\n\n*Why*: a slip.\n```"
    assert colab.convert_block(text, "notebooks/x") == (
        "> **⚠️ A1 — error: the softmax**\n>\n> The note states $x$.\n>\n> *Why*: a slip.")
    note = "```{admonition} M2 — rounding: two values\n:class: note\nBody.\n```"
    assert colab.convert_block(note, "notebooks/x") == "> **M2 — rounding: two values**\n>\n> Body."


def test_exercise_keeps_title_label_maths_and_emphasis():
    text = "```{exercise} A *masked* softmax\n:label: scoring_ex1\nWrite $\\mathbf{s}$ **now**.\n```"
    assert colab.convert_block(text, "notebooks/x") == (
        "### Exercise `scoring_ex1`: A *masked* softmax\n\nWrite $\\mathbf{s}$ **now**.")


def test_solutions_fold_or_disappear():
    dropdown = "```{solution} scoring_ex4\n:class: dropdown\n(a) The weight is $0.5$.\n```"
    assert colab.convert_block(dropdown, "notebooks/x") == (
        "<details>\n<summary><b>Solution of <code>scoring_ex4</code></b> (click to open)</summary>\n\n"
        "(a) The weight is $0.5$.\n\n</details>")
    assert colab.convert_block("```{solution-end}\n```", "notebooks/x") == ""
    assert "scoring_ex1" in colab.convert_block("```{solution-start} scoring_ex1\n:class: dropdown\n```", "notebooks/x")


def test_citations_read_author_year_and_link_to_the_references():
    assert colab.convert_block("as {cite:t}`bahdanau2015neural` showed", "notebooks/x") == (
        f"as [Bahdanau et al. (2015)]({REFS}) showed")
    assert colab.convert_block("a GRU {cite:p}`luong2015effective,bahdanau2015neural`.", "notebooks/x") == (
        f"a GRU ([Luong et al., 2015]({REFS}); [Bahdanau et al., 2015]({REFS})).")
    with pytest.raises(KeyError):
        colab.convert_block("{cite:p}`no_such_key`", "notebooks/x")


def test_cross_references_link_to_the_website():
    first = chapters()[0]
    got = colab.convert_block(f"see {{doc}}`chapter 1 <../notebooks/{first.stem}>`", "notebooks/x")
    assert got == f"see [chapter 1]({SITE}notebooks/{first.stem}.html)"
    got = colab.convert_block("see {ref}`colab-gpu`", "notebooks/x")
    assert got.startswith("see [") and got.endswith(f"]({SITE}book/instructors.html#colab-gpu)")
    # the first figure of the first chapter is Fig. 1.1, as on the numbered site
    nb = nbformat.read(first.notebook, as_version=4)
    name = next(c.metadata["mystnb"]["figure"]["name"] for c in nb.cells
                if c.cell_type == "code" and c.metadata.get("mystnb", {}).get("figure", {}).get("name"))
    assert colab.convert_block(f"{{numref}}`{name}`", "notebooks/x") == f"[Fig. 1.1]({SITE}notebooks/{first.stem}.html#{name})"
    assert colab.convert_block(f"{{numref}}`Figure %s <{name}>`", "notebooks/x") == (
        f"[Figure 1.1]({SITE}notebooks/{first.stem}.html#{name})")


def test_bare_equation_environment_gets_dollars():
    text = "so\n\n\\begin{equation*}\nx = 1 \\tag{3.1}\n\\end{equation*}\n\nand"
    assert colab.convert_block(text, "notebooks/x") == "so\n\n$$\nx = 1 \\tag{3.1}\n$$\n\nand"


def test_site_address_comes_from_the_config():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    base = (config.get("html") or {}).get("baseurl")
    if base:
        assert SITE == base.rstrip("/") + "/"
    else:
        owner, name = config["repository"]["url"].rstrip("/").split("/")[-2:]
        assert SITE == f"https://{owner}.github.io/{name}/"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_launch_button_opens_the_colab_copy():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert "colab-links.js" in config["sphinx"]["config"]["html_js_files"]
    script = ROOT / "book" / "_static" / "colab-links.js"
    base = "https://colab.research.google.com/github/owner/repo/blob/main/"
    stem = chapters()[-1].stem
    cases = {base + f"notebooks/{stem}.ipynb": base + f"colab/{stem}.ipynb",
             f"https://mybinder.org/v2/gh/owner/repo/main?urlpath=tree/notebooks/{stem}.ipynb":
                 f"https://mybinder.org/v2/gh/owner/repo/main?urlpath=tree/notebooks/{stem}.ipynb",
             base + "book/notes.md": base + "book/notes.md"}
    code = (f"const {{colabCopy}} = require({json.dumps(str(script))});"
            f"console.log(JSON.stringify({json.dumps(list(cases))}.map(colabCopy)));")
    out = subprocess.run(["node", "-e", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == list(cases.values())
    for path in cases.values():
        if "/colab/" in path:
            assert (ROOT / "colab" / path.rsplit("/", 1)[1]).exists()


def test_the_parser_finds_roles_and_directives_where_myst_does():
    """tools/convert/myst.py reads MyST with markdown-it-py: a role in a code span or in a code block
    stays as written (MyST does not read it there either), a directive nested in a longer fence and
    options given as a YAML block are read, and a target becomes an anchor."""
    text = ("`{doc}` is the role's name; {doc}`../notebooks/" + chapters()[0].stem + "`\n\n"
            "```python\nx = '{cite:t}`bahdanau2015neural`'\n```\n\n"
            "(a-target)=\n## A heading\n\n"
            "````{admonition} Outer\n---\nclass: warning\n---\n```{note}\nInner.\n```\n````")
    got = colab.convert_block(text, "notebooks/x")
    assert got.startswith("`{doc}` is the role's name; [")
    assert "x = '{cite:t}`bahdanau2015neural`'" in got
    assert '<a id="a-target"></a>\n## A heading' in got
    assert "> **⚠️ Outer**" in got and "> > **Note**" in got and "> > Inner." in got


def test_grading_does_not_import_the_site_builder():
    import subprocess
    import sys

    code = ("import sys, tools.grading.course, tools.grading.student_version; "
            "print(sorted(m for m in sys.modules if m.startswith('tools.site')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
