"""MyST, the website's Markdown, turned into the Markdown that Colab and Jupyter render.

The chapters are written in MyST for the website: admonition boxes (the errata), ``{exercise}`` and
``{solution}`` directives, the solution dropdown markers, ``(label)=`` targets, bare amsmath
environments, and the roles ``{cite:p}``, ``{cite:t}``, ``{doc}``, ``{ref}`` and ``{numref}``. Colab and
plain Jupyter show all of these as raw text. Three copies are made from the chapters with this module,
and read the same: the Colab copies (tools/site/colab.py), the nbgrader and otter versions and the
student version (tools/grading/). Grading imports this package, not the site builder.

The Markdown is parsed with markdown-it-py and mdit-py-plugins, the parser MyST-Parser itself uses
(with the myst_role, myst_blocks, colon_fence, dollarmath and amsmath plugins): the parser finds each
directive (its fence, however nested), target, bare equation and role, with its place in the text, and
only those pieces are rewritten; every other character of the cell stays as written. A directive's
options (`:key: value` lines at the top of its body) are read as MyST reads them, and its body is
converted the same way, recursively. What each becomes:

- an admonition: a block quote whose first line is its title in bold (a sign for warnings);
- an exercise: a level-3 heading "Exercise `<label>`: <title>" (Colab's table of contents lists it),
  then its statement;
- a written solution (``{solution}`` dropdown): ``<details><summary>``, collapsed as on the site; the
  ``{solution-start}`` marker before a code solution: one bold line; the ``{solution-end}`` marker: nothing;
- a citation: author–year text ("Bahdanau et al. (2015)", "(Luong et al., 2015)") from
  ``book/references.bib``, linked to the website's references page;
- ``{doc}``, ``{ref}``, ``{numref}``: links to the page (and anchor) on the website; a figure reads
  "Fig. <chapter>.<n>" as on the site;
- a ``(label)=`` target: an HTML anchor; a bare ``\\begin{equation}`` (align, gather) block: between ``$$``.

sphinx-tojupyter (QuantEcon's, 0.6.0) was evaluated for this job and not chosen: it converts a whole
Sphinx build to notebooks through docutils, which renders the directives well, but its notebooks are
built from the doctree, so the cells' metadata (nbgrader's grade ids, points and locks, the tags that
nbval and the graders read, cell ids) do not survive, and the graded versions need them unchanged; it
would also need a Sphinx build for each copy. Converting the notebooks' own markdown cells keeps every
code cell, output and metadata as it is.

The website's address is ``html.baseurl`` in ``_config.yml`` when set, else the GitHub Pages address of
``repository.url``.
"""
from __future__ import annotations

import copy
import re
from functools import lru_cache

import nbformat
import yaml
from markdown_it import MarkdownIt
from mdit_py_plugins.amsmath import amsmath_plugin
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.myst_blocks import myst_block_plugin
from mdit_py_plugins.myst_role import myst_role_plugin

from tools.registry import ROOT, chapters

OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")
WARNING_CLASSES = {"warning", "caution", "danger", "error", "attention"}
NAMED_ADMONITIONS = {"note", "warning", "tip", "hint", "important", "caution", "danger", "error",
                     "attention", "seealso"}
PARSER = (MarkdownIt("commonmark").use(myst_block_plugin).use(myst_role_plugin).use(colon_fence_plugin)
          .use(dollarmath_plugin).use(amsmath_plugin))


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
    """label -> (document, the heading after the `(label)=` target, or the label), read by the parser."""
    out, tokens = {}, PARSER.parse(text)
    for k, token in enumerate(tokens):
        if token.type == "myst_target":
            after = tokens[k + 1:k + 3]
            heading = after[1].content if len(after) == 2 and after[0].type == "heading_open" else None
            out[token.content] = (doc, heading or token.content, None)
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


def _roles(tokens) -> list[tuple[str, str]]:
    """(name, content) of every role the parser found in these tokens, at any depth (lists, quotes)."""
    found = []
    for token in tokens:
        for child in token.children or []:
            if child.type == "myst_role":
                found.append((child.meta["name"], child.content))
    return found


def convert_roles(text: str, here: str, roles=None) -> str:
    """Each role of the text (found by the parser, or given) replaced by what it shows, where it is written."""
    for name, content in (roles if roles is not None else _roles(PARSER.parse(text))):
        text = text.replace(f"{{{name}}}`{content}`", convert_role(name, content, here))
    return text


def _directive(info: str, content: str) -> tuple[str, str, dict, list[str]]:
    """A directive fence's info string and content -> (name, arguments, options, body lines)."""
    name, _, args = info.strip()[1:].partition("}")
    lines = content.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    options, i = {}, 0
    if lines and lines[0].strip() == "---":            # options as a YAML block
        end = next((k for k in range(1, len(lines)) if lines[k].strip() == "---"), None)
        if end is not None:
            options = {str(k): str(v) for k, v in (yaml.safe_load("\n".join(lines[1:end])) or {}).items()}
            i = end + 1
    while i < len(lines) and OPTION.match(lines[i]):
        found = OPTION.match(lines[i])
        options[found.group("key")] = found.group("value")
        i += 1
    return name, args.strip(), options, lines[i:]


# --------------------------------------------------------------------------------------------
# directives


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


def _equation(content: str) -> list[str]:
    """A bare amsmath environment -> the same between $$ (aligned and gathered inside $$)."""
    lines = content.split("\n")
    first = re.match(r"^(\s*)\\begin\{(equation|align|gather)\*?\}\s*$", lines[0])
    last = re.match(r"^(\s*)\\end\{(equation|align|gather)\*?\}\s*$", lines[-1])
    if not (first and last):
        return ["$$"] + lines + ["$$"]
    env = first.group(2)
    inner = {"equation": None, "align": "aligned", "gather": "gathered"}[env]
    return ([first.group(1) + "$$" + (rf"\begin{{{inner}}}" if inner else "")] + lines[1:-1]
            + [last.group(1) + (rf"\end{{{inner}}}" if inner else "") + "$$"])


def convert_block(text: str, here: str) -> str:
    """A markdown text in MyST -> the same text in Markdown that Colab and Jupyter render."""
    lines = text.split("\n")
    tokens = PARSER.parse(text)
    blocks = {}                                               # first line -> (line after it, new lines)
    for token in tokens:
        if token.level != 0 or token.map is None:
            continue
        start, end = token.map
        if token.type in ("fence", "colon_fence") and token.info.strip().startswith("{"):
            blocks[start] = (end, convert_directive(*_directive(token.info, token.content), here))
        elif token.type == "myst_target":
            blocks[start] = (end, [f'<a id="{token.content}"></a>'])
        elif token.type == "amsmath":
            blocks[start] = (start + len(token.content.split("\n")), _equation(token.content))
    roles = [r for r in _roles(tokens)]
    out, i = [], 0
    while i < len(lines):
        if i in blocks:
            i, new = blocks[i]
            out.extend(new)
            continue
        out.append(convert_roles(lines[i], here, roles))
        i += 1
    return "\n".join(out).strip("\n")


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


