"""The registry of chapters (tools/chapters.toml), the table of contents and the notebooks agree."""
from __future__ import annotations

import json
import re

import pytest
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


def test_the_explorer_table_in_contributing_is_generated_from_the_schemas():
    import subprocess
    import sys

    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    pasted = text.split("<!-- explorer-table:start -->\n", 1)[1].split("\n<!-- explorer-table:end -->", 1)[0]
    generated = subprocess.run([sys.executable, "-m", "tools.explorers", "table"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    assert pasted == generated, "CONTRIBUTING.md's explorer table is stale: paste `python -m tools.explorers table`"


# Every list of chapters that a reader or a contributor sees is checked against the registry: a
# chapter added to tools/chapters.toml fails here until each list names it, in order, with its number.
def _between(path: str, start: str, end: str) -> str:
    text = (ROOT / path).read_text(encoding="utf-8")
    assert start in text, f"{path} has no {start!r} (the list of chapters this test reads)"
    after = text.split(start, 1)[1]
    return after.split(end, 1)[0] if end in after else after


def _doc_rows(text: str) -> list[tuple[int, str]]:
    """(number, stem) of each `N. ... {doc}` item or row that links a chapter notebook."""
    rows = re.findall(r"^(?:(\d+)\. .*?\{doc\}`\.\./notebooks/(\w+)`|\| \{doc\}`(\d+)\.[^<`]*<\.\./notebooks/(\w+)>`)",
                      text, re.MULTILINE)
    return [(int(a or c), b or d) for a, b, c, d in rows]


def _exercise_labels(chapter) -> set[str]:
    nb = json.loads(chapter.notebook.read_text(encoding="utf-8"))
    return set(re.findall(r":label:\s*(\w+_ex\d+)", "\n".join("".join(c["source"]) for c in nb["cells"])))


CHAPTER_LISTS = {
    "book/index.md, What you will learn":
        lambda: _doc_rows(_between("book/index.md", "## What you will learn", "\n## ")),
    "book/instructors.md, the overview table":
        lambda: _doc_rows(_between("book/instructors.md", "## The chapters", "<!-- BEGIN GENERATED")),
    "book/instructors.md, the generated table of points (python -m tools.grading.table)":
        lambda: _doc_rows(_between("book/instructors.md", "<!-- BEGIN GENERATED: exercises -->", "| exercise |")),
    "book/instructors.md, the per-chapter sections (### Chapter N: ...)":
        lambda: [(int(n), stem) for n, stem in re.findall(
            r"^### Chapter (\d+): .*\n(?:(?!^### )[\s\S])*?`(\w+?)_ex\d+`",
            _between("book/instructors.md", "## The chapters", "\n## "), re.MULTILINE)],
    "CONTRIBUTING.md, the exercise labels":
        lambda: list(enumerate(re.findall(r"`(\w+)`", _between("CONTRIBUTING.md", "with the chapter\nlabels", "(e.g.")), 1)),
}


def _expected(name: str) -> list[tuple[int, str]]:
    if "per-chapter" in name or "labels" in name:
        return [(c.number, c.label) for c in chapters()]
    return [(c.number, c.stem) for c in chapters()]


@pytest.mark.parametrize("name", CHAPTER_LISTS)
def test_every_list_of_chapters_names_every_registry_chapter_in_order(name):
    found, expected = CHAPTER_LISTS[name](), _expected(name)
    missing = [f"chapter {n} ({s})" for n, s in expected if (n, s) not in found]
    assert found == expected, (
        f"{name} lists {found}; tools/chapters.toml has {expected}"
        + (f"\n  missing: {', '.join(missing)}" if missing else ""))


def test_each_instructors_section_lists_its_chapters_exercises():
    text = _between("book/instructors.md", "## The chapters", "\n## ")
    sections = dict(re.findall(r"^### Chapter (\d+): .*\n((?:(?!^### )[\s\S])*)", text, re.MULTILINE))
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
