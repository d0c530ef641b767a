"""Colab-ready copies of the chapter notebooks: MyST turned into the Markdown that Colab renders.

    python -m tools.site.colab                 # (re)write colab/<stem>.ipynb for every chapter of the registry
    python -m tools.site.colab --check         # exit 1 if a committed copy differs from what would be written

The chapters are written in MyST for the website: ```` ```{admonition} ```` boxes (the errata),
```` ```{exercise} ```` and ```` ```{solution} ```` directives, the solution dropdown markers, and the
roles ``{cite:p}``, ``{cite:t}``, ``{doc}``, ``{ref}`` and ``{numref}``. Colab and plain Jupyter show
all of these as raw text. This module rewrites every markdown cell into the CommonMark + HTML subset
that Colab and Jupyter render:

- an admonition becomes a block quote whose first line is its title in bold (a sign for warnings);
- an exercise becomes a level-3 heading "Exercise `<label>`: <title>" (so Colab's table of contents
  lists it) followed by its statement, maths and emphasis untouched;
- a written solution (``{solution}`` dropdown) becomes ``<details><summary>`` (collapsed, as on the site);
  the ``{solution-start}`` marker before a code solution becomes one bold line, the ``{solution-end}``
  marker disappears (a cell cannot be folded into another cell's ``<details>``);
- a citation becomes author–year text ("Bahdanau et al. (2015)", "(Luong et al., 2015)") read from
  ``book/references.bib``, linked to the website's references page;
- ``{doc}``, ``{ref}`` and ``{numref}`` become links to the page (and anchor) on the website; a
  figure reference reads "Fig. <chapter>.<n>" as on the site (figures are numbered per chapter in
  the order of their cells, as Sphinx numbers them);
- a bare ``\\begin{equation*}`` block (the amsmath extension) is put between ``$$``.

Code cells, their outputs and all metadata (nbgrader's included) are copied unchanged, except that a
plumbing cell (folded in Jupyter by `jupyter.source_hidden`) gets Colab's form view: a `#@title` line
and `cellView: "form"`, so that Colab folds it too.

Why a build step and not a portable subset of Markdown in the sources: the website needs the
directives (numbered exercises, solution dropdowns tied to their exercise, the bibliography,
checked cross-references that fail a strict build when they break), and a portable subset would
lose them. A generated copy keeps the website as it is, costs a fraction of a second per chapter,
and is deterministic, so ``tests/test_colab.py`` can check that the committed ``colab/`` copies are
exactly what this module writes from ``notebooks/``. The site's Colab launch buttons open these copies:
``book/_static/colab-links.js`` rewrites the button's address from ``notebooks/`` to ``colab/``.
The student version (``make student``) and the nbgrader course sources go through the same
conversion (``tools.grading.student_version``), so what a student opens in Colab reads the same.

The website's address is ``html.baseurl`` in ``_config.yml`` when set, else the GitHub Pages address
of ``repository.url``.
"""
from __future__ import annotations

import argparse
import copy
import re
import sys
from functools import lru_cache
from pathlib import Path

import nbformat
import yaml

from tools.registry import ROOT, chapters

DEST = ROOT / "colab"
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,})\s*\{(?P<name>[\w:-]+)\}\s*(?P<args>.*?)\s*$")
OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")
ROLE = re.compile(r"\{(?P<name>[\w:-]+)\}`(?P<content>[^`]*)`")
TARGET = re.compile(r"^\((?P<label>[\w.:-]+)\)=\s*$", re.MULTILINE)
WARNING_CLASSES = {"warning", "caution", "danger", "error", "attention"}
NAMED_ADMONITIONS = {"note", "warning", "tip", "hint", "important", "caution", "danger", "error",
                     "attention", "seealso"}


# --------------------------------------------------------------------------------------------
# the website: its address, its pages, its labels, its references


@lru_cache(maxsize=None)
def site_url() -> str:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    base = (config.get("html") or {}).get("baseurl")
    if base:
        return base.rstrip("/") + "/"
    repo = (config.get("repository") or {}).get("url", "")
    m = re.match(r"https://github\.com/([^/]+)/([^/]+?)(?:\.git)?/?$", repo)
    if not m:
        raise ValueError("_config.yml: set html.baseurl (the website's address) for the Colab copies' links")
    return f"https://{m.group(1)}.github.io/{m.group(2)}/"


def page_url(doc: str, anchor: str | None = None) -> str:
    """The website's address of a document given by its path from the root, without suffix."""
    return site_url() + doc + ".html" + (f"#{anchor}" if anchor else "")


def _first_heading(text: str) -> str | None:
    m = re.search(r"^#\s+(.+?)\s*$", text, re.MULTILINE)
    return m.group(1) if m else None


@lru_cache(maxsize=None)
def documents() -> dict[str, str]:
    """Every page of the book (path without suffix) -> its title."""
    docs = {}
    for chapter in chapters():
        nb = nbformat.read(chapter.notebook, as_version=4)
        first = next((c.source for c in nb.cells if c.cell_type == "markdown"), "")
        docs[f"notebooks/{chapter.stem}"] = _first_heading(first) or chapter.title
    for md in sorted((ROOT / "book").glob("*.md")):
        docs[f"book/{md.stem}"] = _first_heading(md.read_text(encoding="utf-8")) or md.stem
    return docs


@lru_cache(maxsize=None)
def labels() -> dict[str, tuple[str, str, str | None]]:
    """label -> (document, link text, number): figures, exercises and `(label)=` targets."""
    found: dict[str, tuple[str, str, str | None]] = {}
    for chapter in chapters():
        doc = f"notebooks/{chapter.stem}"
        nb = nbformat.read(chapter.notebook, as_version=4)
        figure = 0
        for cell in nb.cells:
            fig = (cell.metadata.get("mystnb") or cell.metadata.get("myst") or {}).get("figure")
            if cell.cell_type == "code" and fig and fig.get("name"):
                figure += 1
                found[fig["name"]] = (doc, f"Fig. {chapter.number}.{figure}", f"{chapter.number}.{figure}")
            if cell.cell_type == "markdown":
                for m in re.finditer(r"^\s*:label:\s*(\S+)", cell.source, re.MULTILINE):
                    found[m.group(1)] = (doc, f"exercise {m.group(1)}", None)
                found.update(_targets(cell.source, doc))
    for md in sorted((ROOT / "book").glob("*.md")):
        found.update(_targets(md.read_text(encoding="utf-8"), f"book/{md.stem}"))
    return found


def _targets(text: str, doc: str) -> dict[str, tuple[str, str, str | None]]:
    out = {}
    for m in TARGET.finditer(text):
        after = text[m.end():].lstrip("\n").split("\n", 1)[0]
        heading = re.match(r"^#+\s+(.+?)\s*$", after)
        out[m.group("label")] = (doc, heading.group(1) if heading else m.group("label"), None)
    return out


@lru_cache(maxsize=None)
def bibliography() -> dict[str, tuple[str, str]]:
    """citation key -> (authors as cited, year), in the style of the site (author_year)."""
    from pybtex.database import parse_file

    data = parse_file(str(ROOT / "book" / "references.bib"), bib_format="bibtex")
    out = {}
    for key, entry in data.entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        last = [" ".join(p.last_names).replace("{", "").replace("}", "") for p in people]
        if not last:
            names = entry.fields.get("organization", key)
        elif len(last) == 1:
            names = last[0]
        elif len(last) == 2:
            names = f"{last[0]} and {last[1]}"
        else:
            names = f"{last[0]} et al."
        out[key] = (names, entry.fields.get("year", "n.d."))
    return out


# --------------------------------------------------------------------------------------------
# roles


def _split_target(content: str) -> tuple[str | None, str]:
    """`text <target>` -> (text, target); `target` -> (None, target)."""
    m = re.match(r"^(.*?)\s*<([^<>]+)>$", content.strip(), re.DOTALL)
    return (m.group(1) or None, m.group(2)) if m else (None, content.strip())


def _resolve_doc(target: str, here: str) -> str:
    if target.startswith("/"):
        path = target.lstrip("/")
    else:
        parts = here.split("/")[:-1]
        for piece in target.split("/"):
            if piece == "..":
                parts = parts[:-1]
            elif piece not in ("", "."):
                parts.append(piece)
        path = "/".join(parts)
    return re.sub(r"\.(ipynb|md)$", "", path)


def convert_role(name: str, content: str, here: str) -> str:
    refs = page_url("book/references")
    if name == "cite" or name.startswith("cite:"):
        keys = [k.strip() for k in content.split(",") if k.strip()]
        bib = bibliography()
        missing = [k for k in keys if k not in bib]
        if missing:
            raise KeyError(f"{here}: citation key(s) {missing} not in book/references.bib")
        if name in ("cite:t", "cite:ts"):
            return "; ".join(f"[{bib[k][0]} ({bib[k][1]})]({refs})" for k in keys)
        return "(" + "; ".join(f"[{bib[k][0]}, {bib[k][1]}]({refs})" for k in keys) + ")"
    if name == "doc":
        text, target = _split_target(content)
        doc = _resolve_doc(target, here)
        if doc not in documents():
            raise KeyError(f"{here}: {{doc}} target {target!r} is no page of the book")
        return f"[{text or documents()[doc]}]({page_url(doc)})"
    if name in ("ref", "numref"):
        text, label = _split_target(content)
        if label not in labels():
            raise KeyError(f"{here}: {{{name}}} target {label!r} is not defined in the book")
        doc, default, number = labels()[label]
        if name == "numref" and text and number:
            text = text.replace("%s", number).replace("{number}", number)
        return f"[{text or default}]({page_url(doc, label)})"
    if name == "math":
        return f"${content}$"
    _, text = _split_target(content)
    return text  # any other role: its text, which is what it shows on the site


def convert_roles(text: str, here: str) -> str:
    # (no role sits inside a code span or maths in the book; a test checks that none is left over)
    return ROLE.sub(lambda m: convert_role(m.group("name"), m.group("content"), here), text)


# --------------------------------------------------------------------------------------------
# directives


def _parse_directive(lines: list[str], start: int):
    """The directive opening at lines[start]: (name, args, options, body lines, index after it)."""
    m = FENCE.match(lines[start])
    fence = m.group("fence")
    options, i = {}, start + 1
    while i < len(lines) and OPTION.match(lines[i]):
        o = OPTION.match(lines[i])
        options[o.group("key")] = o.group("value")
        i += 1
    body, depth = [], 0
    closing = re.compile(r"^\s*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
    while i < len(lines):
        line = lines[i]
        inner = FENCE.match(line)
        if inner and inner.group("fence")[0] == fence[0] and len(inner.group("fence")) >= len(fence):
            depth += 1
        elif closing.match(line):
            if depth == 0:
                return m.group("name"), m.group("args"), options, body, i + 1
            depth -= 1
        body.append(line)
        i += 1
    raise ValueError(f"unclosed directive {lines[start]!r}")


def _quote(lines: list[str]) -> list[str]:
    return [("> " + line) if line.strip() else ">" for line in lines]


def convert_directive(name: str, args: str, options: dict, body: list[str], here: str) -> list[str]:
    inner = convert_block("\n".join(body), here).split("\n") if body else []
    while inner and not inner[-1].strip():
        inner.pop()
    if name == "admonition" or name in NAMED_ADMONITIONS:
        title = args or name.capitalize()
        classes = set(options.get("class", "").split()) | ({name} if name != "admonition" else set())
        sign = "⚠️ " if classes & WARNING_CLASSES else ""
        return _quote([f"**{sign}{convert_roles(title, here)}**", ""] + inner)
    if name == "exercise":
        label = options.get("label", "")
        title = convert_roles(args, here)
        heading = f"### Exercise `{label}`" + (f": {title}" if title else "")
        return [heading, ""] + inner
    if name == "solution":
        label = args.strip()
        return ["<details>", f"<summary><b>Solution of <code>{label}</code></b> (click to open)</summary>", ""] \
            + inner + ["", "</details>"]
    if name == "solution-start":
        return [f"**Solution of `{args.strip()}`** (the next cell; try the exercise yourself first)"]
    if name == "solution-end":
        return []
    if name in ("math",):
        return ["$$"] + body + ["$$"]
    # any other directive: its title in bold, then its content
    return ([f"**{convert_roles(args, here)}**", ""] if args else []) + inner


def _dollar_equations(lines: list[str]) -> list[str]:
    """Bare amsmath environments (MyST's amsmath extension) -> between $$ for Colab and Jupyter."""
    out, in_dollars = [], False
    for line in lines:
        s = line.strip()
        if s.startswith("$$") and not in_dollars and s != "$$" and s.endswith("$$") and len(s) > 4:
            out.append(line)
            continue
        if s.startswith("$$") or (in_dollars and s.endswith("$$")):
            in_dollars = not in_dollars
            out.append(line)
            continue
        if not in_dollars:
            m = re.match(r"^(\s*)\\begin\{(equation\*?|align\*?|gather\*?)\}\s*$", line)
            if m:
                env = m.group(2).rstrip("*")
                out.append(m.group(1) + "$$" + ("" if env == "equation" else r"\begin{" + ("aligned" if env == "align" else "gathered") + "}"))
                continue
            m = re.match(r"^(\s*)\\end\{(equation\*?|align\*?|gather\*?)\}\s*$", line)
            if m:
                env = m.group(2).rstrip("*")
                out.append(m.group(1) + ("" if env == "equation" else r"\end{" + ("aligned" if env == "align" else "gathered") + "}") + "$$")
                continue
        out.append(line)
    return out


def convert_block(text: str, here: str) -> str:
    """A markdown text in MyST -> the same text in Markdown that Colab and Jupyter render."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if FENCE.match(line):
            name, args, options, body, i = _parse_directive(lines, i)
            out.extend(convert_directive(name, args, options, body, here))
            continue
        if TARGET.match(line):  # `(label)=` before a heading: an HTML anchor instead
            out.append(f'<a id="{TARGET.match(line).group("label")}"></a>')
            i += 1
            continue
        out.append(convert_roles(line, here))
        i += 1
    return "\n".join(_dollar_equations(out)).strip("\n")


# --------------------------------------------------------------------------------------------
# notebooks


def convert_cell(cell, here: str) -> None:
    """Convert one markdown cell in place (any other cell is left as it is)."""
    if cell.cell_type == "markdown":
        cell.source = convert_block(cell.source, here)


def is_empty_marker(cell) -> bool:
    """A {solution-end} cell: empty once converted."""
    return cell.cell_type == "markdown" and not cell.source.strip()


def fold_title(cell) -> str:
    """The title Colab shows on a folded plumbing cell (tools/authoring/plumbing.py marks them)."""
    first = cell.source.split("\n", 1)[0]
    if first.startswith("# shared helper: "):
        return "Book plumbing: " + first[len("# shared helper: "):].split(" (", 1)[0] + " (shared helper; double-click to show)"
    return "Book plumbing: the explorer's widgets and its website contract (double-click to show)"


def fold_for_colab(cell) -> None:
    """A cell whose source Jupyter folds (`jupyter.source_hidden`) is a form in Colab: `#@title` and
    cellView "form" show its title and hide its code until opened; it still runs."""
    if cell.cell_type == "code" and cell.metadata.get("jupyter", {}).get("source_hidden"):
        cell.source = f"#@title {fold_title(cell)}\n" + cell.source
        cell.metadata["cellView"] = "form"


def colab_notebook(nb: nbformat.NotebookNode, stem: str) -> nbformat.NotebookNode:
    """The Colab-ready copy of a chapter notebook (the argument is left unchanged)."""
    here = f"notebooks/{stem}"
    out = copy.deepcopy(nb)
    for cell in out.cells:
        convert_cell(cell, here)
        fold_for_colab(cell)
    out.cells = [c for c in out.cells if not is_empty_marker(c)]
    first = next((c for c in out.cells if c.cell_type == "markdown"), None)
    if first is not None:
        first.source += (f"\n\n*This is the notebook of the chapter for Colab and Jupyter; the book's website shows "
                         f"[the same chapter]({page_url(here)}) with its interactive explorers and references.*")
    return out


def write(dest: Path = DEST) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for chapter in chapters():
        nb = nbformat.read(chapter.notebook, as_version=4)
        path = dest / f"{chapter.stem}.ipynb"
        text = nbformat.writes(colab_notebook(nb, chapter.stem)) + "\n"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    for stale in sorted(set(dest.glob("*.ipynb")) - set(written)):
        stale.unlink()
    return written


def out_of_sync(dest: Path = DEST) -> list[str]:
    """The copies in `dest` that differ from what `write` would write (empty when in sync)."""
    problems = []
    expected = set()
    for chapter in chapters():
        path = dest / f"{chapter.stem}.ipynb"
        expected.add(path)
        text = nbformat.writes(colab_notebook(nbformat.read(chapter.notebook, as_version=4), chapter.stem)) + "\n"
        if not path.exists():
            problems.append(f"{path.relative_to(ROOT)} is missing")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"{path.relative_to(ROOT)} differs from notebooks/{chapter.stem}.ipynb")
    problems += [f"{p.relative_to(ROOT)} belongs to no chapter" for p in sorted(set(dest.glob("*.ipynb")) - expected)]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that colab/ is in sync")
    args = parser.parse_args(argv)
    if args.check:
        problems = out_of_sync()
        for p in problems:
            print(p)
        if problems:
            print("run `python -m tools.site.colab` (or `make colab`) to rewrite them")
        return 1 if problems else 0
    for path in write():
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
