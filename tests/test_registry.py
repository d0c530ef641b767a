"""The registry of chapters (tools/chapters.toml), the table of contents and the notebooks agree."""
from __future__ import annotations

import json
import re

import yaml

from tools.registry import ROOT, chapters


def toc_chapters() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    return [f.split("/", 1)[1] for f in files if f.startswith("notebooks/")]


def test_the_table_of_contents_lists_the_registry_chapters_in_order():
    assert toc_chapters() == [c.stem for c in chapters()]


def test_every_notebook_is_a_registered_chapter():
    on_disk = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert on_disk == sorted(c.stem for c in chapters())


def test_stems_labels_and_ids_are_unique():
    entries = chapters()
    for field in ("stem", "label"):
        values = [getattr(c, field) for c in entries]
        assert len(values) == len(set(values)), f"duplicate {field} in tools/chapters.toml"
    ids = [i for c in entries for i in c.calculations]
    assert len(ids) == len(set(ids)), "a calculation ID is registered twice"


def test_exercise_labels_and_explorer_kinds_match_the_registry():
    for chapter in chapters():
        nb = json.loads(chapter.notebook.read_text(encoding="utf-8"))
        text = "\n".join("".join(c["source"]) for c in nb["cells"])
        labels = set(re.findall(r":label:\s*([a-z_]+)_ex\d+", text))
        assert labels <= {chapter.label}, f"{chapter.stem}: exercise labels {labels}, registry says {chapter.label}"
        assert labels, f"{chapter.stem} has no exercises labelled {chapter.label}_exN"
        html = "\n".join("".join(out.get("data", {}).get("text/html", ""))
                         for c in nb["cells"] for out in c.get("outputs", []))
        kinds = set(re.findall(r'class="attn-explorer" data-kind="([a-z-]+)"', html))
        assert kinds == set(chapter.explorers), (
            f"{chapter.stem} shows explorers {sorted(kinds)}, the registry lists {sorted(chapter.explorers)}")


def _between(path: str, start: str, end: str) -> str:
    text = (ROOT / path).read_text(encoding="utf-8")
    assert start in text, f"{path} has no {start!r}"
    after = text.split(start, 1)[1]
    return after.split(end, 1)[0] if end in after else after


def _exercise_labels(chapter) -> set[str]:
    nb = json.loads(chapter.notebook.read_text(encoding="utf-8"))
    return set(re.findall(r":label:\s*(\w+_ex\d+)", "\n".join("".join(c["source"]) for c in nb["cells"])))


# The lists of chapters in the pages are generated from the registry (tools/authoring/blocks.py, `make
# derived`); tests/test_derived.py checks that they are up to date and tests the generator.


def test_each_instructors_section_lists_its_chapters_exercises():
    text = _between("book/instructors.md", "## The chapters", "\n## ")
    sections = dict(re.findall(r"^### Chapter (\d+): .*\n((?:(?!^### |^<!-- chapter)[\s\S])*)", text, re.MULTILINE))
    for chapter in chapters():
        body = sections.get(str(chapter.number), "")
        absent = sorted(label for label in _exercise_labels(chapter) if f"`{label}`" not in body)
        assert not absent, f"book/instructors.md's section on chapter {chapter.number} does not list {absent}"


def test_no_comment_or_page_states_another_number_of_chapters():
    """"chapters 1-6", "all seven chapters": counts of the whole book, which go stale when a chapter is added."""
    words = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
    total, wrong = len(chapters()), []
    paths = [ROOT / p for p in ("_toc.yml", "_config.yml", "Makefile", "README.md", "CONTRIBUTING.md", "pytest.ini")]
    paths += [*ROOT.glob("book/*.md"), *ROOT.glob("tools/**/*.py"), *ROOT.glob("tools/*.toml"), *ROOT.glob("tests/*.py")]
    paths = [p for p in paths if "node_modules" not in p.parts and p != ROOT / "tests" / "test_registry.py"]  # (the examples above)
    for path in paths:
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"\bchapters 1\s*[-–]\s*(\d+)\b|\ball (\w+) (?:of the )?chapters\b", text, re.IGNORECASE):
            count = match.group(1) or match.group(2)
            n = int(count) if count.isdigit() else words.get(count.lower())
            if n is not None and n != total:
                wrong.append(f"{path.relative_to(ROOT)}: {match.group(0)!r}")
    assert not wrong, f"the registry has {total} chapters, but:\n  " + "\n  ".join(wrong)


def test_a_new_chapters_section_goes_after_the_last_chapter_not_after_a_later_heading():
    """tools/authoring/blocks.py's sections on a hand-made page: a heading of the sections' own level after
    the last chapter ("### Exercises that overlap") stays after them, and a new chapter's section goes
    before it (it went after it, found by adding a throw-away tenth chapter)."""
    from types import SimpleNamespace

    from tools.authoring.blocks import _sections
    page = ("## Chapters\n\n<!-- chapter: c1 -->\n### Chapter 1\nabout one\n\n"
            "### Exercises that overlap\nboth\n\n## Later\nend\n")
    one, two = SimpleNamespace(stem="c1", n=1), SimpleNamespace(stem="c2", n=2)
    out = _sections(page, "page.md", [one, two], lambda c: f"### Chapter {c.n}", lambda c: "new\n")
    assert out.index("### Chapter 1") < out.index("### Chapter 2") < out.index("### Exercises that overlap") < out.index("## Later")
    assert _sections(out, "page.md", [one, two], lambda c: f"### Chapter {c.n}", lambda c: "new\n") == out


# ---------------------------------------------------------------- what a removed chapter leaves behind

CHAPTER_MENTION = re.compile(r"\b[Cc]hapters? ((?:\d+(?:, | and | or |\s*[–-]\s*))*\d+)\b|\beqs?\. (\d+)\.\d+")


def mentioned_chapters(text: str) -> list[tuple[int, int]]:
    """(line, chapter number) for each chapter that `text` names: "chapter 8", "chapters 3, 6 and 8",
    "eq. 7.4"."""
    found = []
    for match in CHAPTER_MENTION.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        found += [(line, int(n)) for n in re.findall(r"\d+", match.group(1) or match.group(2))]
    return found


def cited_keys(text: str) -> set[str]:
    return {key.strip() for keys in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", text) for key in keys.split(",")}


def removed_chapter_leftovers(pages: dict[str, str], bib: str, count: int) -> list[str]:
    """One sentence per leftover: a page that names a chapter the registry lacks (a notation row of a
    removed chapter, say), and a bibliography entry that no page cites (one that only it cited)."""
    problems = [f"{name}, line {line}: names chapter {n}, which tools/chapters.toml does not have (a removed "
                f"chapter's row or sentence?): delete or renumber it"
                for name, text in pages.items() for line, n in mentioned_chapters(text) if n > count]
    cited = set().union(*(cited_keys(text) for text in pages.values()))
    problems += [f"book/references.bib: {key} is cited by no page (a removed chapter's only citation?): delete the entry"
                 for key in re.findall(r"^@\w+\{([^,\s]+),", bib, re.MULTILINE) if key not in cited]
    return problems


def test_a_removed_chapter_leaves_no_notation_row_or_citation_behind():
    pages = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
             for p in [*sorted(ROOT.glob("book/*.md")), *sorted(ROOT.glob("notebooks/md/*.md")), ROOT / "tools" / "chapters.toml"]}
    problems = removed_chapter_leftovers(pages, (ROOT / "book" / "references.bib").read_text(encoding="utf-8"), len(chapters()))
    assert not problems, "\n".join(problems)


def test_the_leftover_check_names_each_leftover():
    pages = {"book/notation.md": "| $x$ | `x` | the input (chapters 3, 6 and 10) |\n| $y$ | `y` | see eq. 11.2 |\n",
             "notebooks/md/01_a.md": "As {cite:t}`kept2020` showed, and {cite:p}`also2021,kept2020`."}
    bib = "@article{kept2020,\n title={A}}\n@article{also2021, title={B}}\n@article{gone2019,\n title={C}}\n"
    assert removed_chapter_leftovers(pages, bib, 9) == [
        "book/notation.md, line 1: names chapter 10, which tools/chapters.toml does not have (a removed chapter's row or "
        "sentence?): delete or renumber it",
        "book/notation.md, line 2: names chapter 11, which tools/chapters.toml does not have (a removed chapter's row or "
        "sentence?): delete or renumber it",
        "book/references.bib: gone2019 is cited by no page (a removed chapter's only citation?): delete the entry"]
