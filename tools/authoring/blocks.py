"""The lists of chapters in the book's pages, generated from the registry (tools/chapters.toml).

    python -m tools.authoring.blocks          # rewrite every generated block (part of `make derived`)

A generated block lies between two marker lines, `BEGIN GENERATED: <name>` and `END GENERATED: <name>`,
written as comments of the file's language (`<!-- ... -->` in Markdown, `# ...` in YAML); what is
between them is rewritten whole. The blocks:

- `_toc.yml`, chapters: the chapter part of the table of contents;
- `_config.yml`, redirects: a page at each old address of a moved chapter (`moved_from`);
- `book/index.md`, chapters: the title page's "What you will learn" (the notebook's title, `summary`);
- `book/instructors.md`, overview: the table of chapters (`ideas`, `requires`, `before`, `work_through`);
  exercises: the exercises and their points, read from the notebooks' nbgrader metadata (tools/authoring/exercise_table.py);
- `book/errata.md`, errata: a section per chapter with errata, its table from the `[[chapter.errata]]`
  rows of its entry (and its `errata_note`); a chapter with neither has no section;
- `CONTRIBUTING.md`, labels: the exercise labels.

The instructors' guide keeps hand-written sections per chapter, each opened by a marker line
`<!-- chapter: <stem> -->` and its heading `### Chapter N: <title>` (objectives, exercise suggestions):
the generator rewrites each heading from the registry and puts the sections in the registry's order; a
registry chapter without a section gets one made of its heading and its exercises, read from its
notebook (label and title), to which an instructor adds what fits where. A section for a stem that the
registry does not have stops the generator with one sentence.
"""
from __future__ import annotations

import re
import sys

import nbformat

from tools.authoring.exercise_table import block as exercise_table, exercises as table_exercises
from tools.registry import ROOT, Chapter, chapters

SECTION = re.compile(r"^<!-- chapter: (?P<stem>\w+) -->\n", re.M)


def notebook_title(chapter: Chapter) -> str:
    """The chapter's `# Title`, from its notebook's first markdown cell."""
    nb = nbformat.read(chapter.notebook, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found = re.search(r"^# (.+)$", cell.source, re.M)
            if found:
                return found.group(1).strip()
    raise ValueError(f"{chapter.stem} has no '# Title' line in its first markdown cells")


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def requirement(chapter: Chapter, by_stem: dict[str, Chapter]) -> str:
    numbers = [by_stem[s].number for s in chapter.requires]
    if not numbers:
        named = ""
    elif len(numbers) == 1:
        named = f"chapter {numbers[0]}"
    else:
        named = "chapters " + ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"
    return ", ".join(part for part in (named, chapter.before) if part)


def _need(chapter: Chapter, *fields: str) -> None:
    missing = [f for f in fields if not getattr(chapter, f)]
    if missing:
        raise SystemExit(f"tools/chapters.toml: chapter {chapter.stem} needs {', '.join(missing)} "
                         f"for the book's generated lists (see the fields at the top of the file)")


def toc_block(entries: list[Chapter]) -> str:
    return "\n".join(f"      - file: notebooks/{c.stem}" for c in entries)


def index_block(entries: list[Chapter]) -> str:
    lines = []
    for c in entries:
        _need(c, "summary")
        lines.append(f"{c.number}. **{notebook_title(c)}** ({{doc}}`../notebooks/{c.stem}`): {c.summary}")
    return "\n".join(lines)


def overview_block(entries: list[Chapter]) -> str:
    by_stem = {c.stem: c for c in entries}
    lines = ["| chapter | main ideas | before it | work through |", "|---|---|---|---|"]
    for c in entries:
        _need(c, "ideas", "work_through")
        lines.append(f"| {{doc}}`{c.number}. {capital(c.title)} <../notebooks/{c.stem}>` | {c.ideas} | "
                     f"{requirement(c, by_stem) or 'nothing beyond NumPy'} | {c.work_through} |")
    return "\n".join(lines)


def redirects_block(entries: list[Chapter]) -> str:
    """_config.yml's `redirects` (sphinx-reredirects): each old address of a moved chapter -> its page."""
    return "\n".join(f'      "notebooks/{old}": "{c.stem}.html"' for c in entries for old in c.moved_from)


def errata_block(entries: list[Chapter]) -> str:
    """The errata page's chapters: each chapter with rows (or a note) in its entry, in the registry's order."""
    parts = []
    for c in entries:
        if not (c.errata or c.errata_note):
            continue
        lines = [f"## Chapter {c.number}: {c.title}", ""]
        if c.errata_note:
            lines += [c.errata_note, ""]
        if c.errata:
            lines += ["| ID | kind | the note states | the computation gives | why |", "|---|---|---|---|---|"]
            for row in c.errata:
                cells = [row[k] for k in ("id", "kind", "states", "gives", "why")]
                if any("|" in cell or "\n" in cell for cell in cells):
                    raise SystemExit(f"tools/chapters.toml: an erratum of {c.stem} ({row['id']}) has a '|' or a line "
                                     "break, which would break the errata page's table")
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
        parts.append("\n".join(lines))
    return "\n".join(parts).rstrip("\n")


def labels_block(entries: list[Chapter]) -> str:
    return "labels " + ", ".join(f"`{c.label}`" for c in entries)


# (file, block name, comment format, renderer)
BLOCKS = [
    ("_toc.yml", "chapters", "# {}", toc_block),
    ("_config.yml", "redirects", "# {}", redirects_block),
    ("book/index.md", "chapters", "<!-- {} -->", index_block),
    ("book/instructors.md", "overview", "<!-- {} -->", overview_block),
    ("book/instructors.md", "exercises", "<!-- {} -->", exercise_table),
    ("book/errata.md", "errata", "<!-- {} -->", errata_block),
    ("CONTRIBUTING.md", "labels", "<!-- {} -->", labels_block),
]


def replace_block(text: str, path: str, name: str, comment: str, body: str) -> str:
    begin, end = comment.format(f"BEGIN GENERATED: {name}"), comment.format(f"END GENERATED: {name}")
    pattern = re.compile(rf"^(?P<indent>[ \t]*){re.escape(begin)}\n.*?^[ \t]*{re.escape(end)}$", re.S | re.M)
    found = pattern.search(text)
    if not found:
        raise SystemExit(f"{path} has no block between '{begin}' and '{end}'")
    indent = found.group("indent")
    inner = f"{body}\n" if body else ""
    return text[:found.start()] + f"{indent}{begin}\n{inner}{indent}{end}" + text[found.end():]


def _sections(text: str, path: str, entries: list[Chapter], heading, skeleton=None) -> str:
    """Rewrite the per-chapter sections of `text`: headings from the registry, registry order; a missing
    section made by `skeleton(chapter)` when given. The sections run from the first marker to the next
    heading of their own level or a higher one after the last section's heading (or the end): a heading
    such as "### Exercises that overlap" after the chapters stays after them, and a new chapter's
    section goes before it."""
    marks = list(SECTION.finditer(text))
    if not marks and skeleton is None:
        return text
    level = heading(entries[0]).split(" ", 1)[0]                 # "##" or "###"
    start = marks[0].start() if marks else None
    if start is None:
        raise SystemExit(f"{path} has no '<!-- chapter: <stem> -->' section to put a new chapter beside")
    # the last section ends at the next heading of its own level or higher, after its own heading line
    same_or_higher = re.compile(rf"^#{{1,{len(level)}}} ", re.M)
    own_heading_end = text.find("\n", marks[-1].end() + 1)
    after = same_or_higher.search(text, own_heading_end if own_heading_end >= 0 else len(text))
    stop = after.start() if after else len(text)
    bodies = {}
    for k, mark in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else stop
        section = text[mark.end():end]
        first, _, rest = section.partition("\n")
        if not first.startswith(level + " "):
            raise SystemExit(f"{path}: the marker of {mark['stem']} must be followed by its '{level} ' heading")
        bodies[mark["stem"]] = rest.rstrip("\n") + "\n"
    stems = {c.stem for c in entries}
    stray = sorted(set(bodies) - stems)
    if stray:
        raise SystemExit(f"{path} has sections for {stray}, which tools/chapters.toml does not list; "
                         f"remove them or add the chapters to the registry")
    out = []
    for c in entries:
        if c.stem in bodies:
            body = bodies[c.stem]
        elif skeleton is not None:
            body = skeleton(c)
        else:
            continue
        out.append(f"<!-- chapter: {c.stem} -->\n{heading(c)}\n{body}")
    joined = "\n".join(part.rstrip("\n") + "\n" for part in out)
    tail = text[stop:]
    return text[:start] + joined + ("\n" + tail if tail else "")


def instructors_skeleton(chapter: Chapter) -> str:
    rows = "\n".join(f"| `{e['label']}` | {e['title']} |" for e in table_exercises(chapter))
    return f"\n| exercise | title |\n|---|---|\n{rows}\n"


def render(path: str, text: str) -> str:
    """The file's text with every generated block and per-chapter section brought up to date."""
    entries = chapters()
    for file, name, comment, renderer in BLOCKS:
        if file == path:
            text = replace_block(text, path, name, comment, renderer(entries))
    if path == "book/instructors.md":
        text = _sections(text, path, entries, lambda c: f"### Chapter {c.number}: {c.title}", instructors_skeleton)
    return text


FILES = sorted({b[0] for b in BLOCKS})


def write() -> list[str]:
    """Rewrite every file with generated parts; the paths that changed."""
    changed = []
    for path in FILES:
        file = ROOT / path
        text = file.read_text(encoding="utf-8")
        new = render(path, text)
        if new != text:
            file.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


if __name__ == "__main__":
    if sys.argv[1:]:
        sys.exit(__doc__)
    for path in write():
        print(f"updated {path}")
