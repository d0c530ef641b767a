"""Derived files (tools/derived.py): every file generated from another is up to date, and the generator of
the pages' chapter lists (tools/authoring/blocks.py) does what it says on hand-written pages."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tools.authoring import blocks
from tools.registry import ROOT, Chapter


def test_every_derived_file_is_up_to_date():
    """One check for all of them: `make derived` run on a scratch copy of the repository changes nothing."""
    result = subprocess.run([sys.executable, "-m", "tools.derived", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def chapter(number, stem, title, **fields):
    return Chapter(number=number, stem=stem, label=stem.split("_", 1)[1], title=title, calculations=(), explorers=(),
                   **fields)


A = chapter(1, "01_alpha", "the alpha", summary="what alpha is.", ideas="alpha", work_through="1 hour", before="NumPy")
B = chapter(2, "02_beta", "the beta", summary="what beta is.", ideas="beta", work_through="2 hours", requires=("01_alpha",))
C = chapter(3, "03_gamma", "the gamma", summary="what gamma is.", ideas="gamma", work_through="3 hours",
            requires=("01_alpha", "02_beta"), before="a training loop")


def test_a_block_is_rewritten_whole_and_the_rest_kept():
    text = "intro\n  # BEGIN GENERATED: chapters\n  - old\n  # END GENERATED: chapters\nafter\n"
    got = blocks.replace_block(text, "x.yml", "chapters", "# {}", "  - new 1\n  - new 2")
    assert got == "intro\n  # BEGIN GENERATED: chapters\n  - new 1\n  - new 2\n  # END GENERATED: chapters\nafter\n"
    with pytest.raises(SystemExit, match="no block between"):
        blocks.replace_block("no markers here\n", "x.yml", "chapters", "# {}", "")


def test_the_overview_numbers_the_chapters_to_read_first():
    by_stem = {c.stem: c for c in (A, B, C)}
    assert blocks.requirement(A, by_stem) == "NumPy"
    assert blocks.requirement(B, by_stem) == "chapter 1"
    assert blocks.requirement(C, by_stem) == "chapters 1 and 2, a training loop"
    assert "| {doc}`3. The gamma <../notebooks/03_gamma>` | gamma | chapters 1 and 2, a training loop | 3 hours |" in \
        blocks.overview_block([A, B, C]).splitlines()


def test_sections_get_registry_headings_and_order_and_keep_their_text():
    page = ("# Errata\n\nthe rule\n\n"
            "<!-- chapter: 02_beta -->\n## Chapter 7: an old title\n\nbeta's table\n\n"
            "<!-- chapter: 01_alpha -->\n## Chapter 1: the alpha\n\nalpha's table\n\n"
            "# Back matter\n\nend\n")
    got = blocks._sections(page, "errata.md", [A, B, C], lambda c: f"## Chapter {c.number}: {c.title}")
    assert got == ("# Errata\n\nthe rule\n\n"
                   "<!-- chapter: 01_alpha -->\n## Chapter 1: the alpha\n\nalpha's table\n\n"
                   "<!-- chapter: 02_beta -->\n## Chapter 2: the beta\n\nbeta's table\n\n"
                   "# Back matter\n\nend\n")
    assert blocks._sections(got, "errata.md", [A, B, C], lambda c: f"## Chapter {c.number}: {c.title}") == got


def test_a_chapter_without_a_section_gets_a_skeleton_and_a_stray_section_stops():
    page = "## The chapters\n\n<!-- chapter: 01_alpha -->\n### Chapter 1: the alpha\n\nalpha's notes\n\n## Next\n"
    got = blocks._sections(page, "instructors.md", [A, B], lambda c: f"### Chapter {c.number}: {c.title}",
                           lambda c: f"\nthe exercises of {c.stem}\n")
    assert "<!-- chapter: 02_beta -->\n### Chapter 2: the beta\n\nthe exercises of 02_beta\n\n## Next\n" in got
    with pytest.raises(SystemExit, match=r"sections for \['01_alpha'\]"):
        blocks._sections(page, "instructors.md", [B], lambda c: f"### Chapter {c.number}: {c.title}")


def test_a_registry_entry_without_its_summary_is_refused_in_one_sentence():
    with pytest.raises(SystemExit, match="chapter 04_delta needs summary"):
        blocks.index_block([chapter(4, "04_delta", "the delta")])


def test_a_notebook_is_derived_from_its_text_one_way(tmp_path, monkeypatch):
    """tools/derived.py (issue 44, item 1): the text is the chapter's only source. An edit of the text reaches
    the notebook with the stored outputs of the unchanged cells kept and an edited cell's dropped; an edit made in the notebook is
    overwritten by the text; a missing text, or one jupytext cannot read, is one sentence naming the fix."""
    import json
    import shutil

    from tools import derived

    stem = "03_bahdanau_by_hand"
    (tmp_path / "notebooks" / "md").mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / f"{stem}.ipynb", tmp_path / "notebooks")
    shutil.copy(ROOT / "notebooks" / "md" / f"{stem}.md", tmp_path / "notebooks" / "md")
    monkeypatch.setattr(derived, "_notebooks", lambda root: [f"notebooks/{stem}.ipynb"])
    notebook, text = tmp_path / "notebooks" / f"{stem}.ipynb", tmp_path / "notebooks" / "md" / f"{stem}.md"
    outputs = lambda: sum(len(c.get("outputs", [])) for c in json.loads(notebook.read_text())["cells"])
    before = outputs()
    derived.text_to_notebooks(tmp_path)
    assert notebook.read_bytes() == (ROOT / "notebooks" / f"{stem}.ipynb").read_bytes(), "an unchanged text changed its notebook"
    text.write_text(text.read_text().replace("# Bahdanau's additive attention, by hand", "# Additive attention, by hand", 1))
    notebook.write_text(notebook.read_text().replace("shared helper: book_style", "shared helper: book_style (edited)", 1))
    derived.text_to_notebooks(tmp_path)
    assert "# Additive attention, by hand" in notebook.read_text() and "(edited)" not in notebook.read_text()
    assert outputs() == before
    # an edited code cell loses the outputs its earlier code printed (jupytext would pair them with the new code)
    cells = json.loads(notebook.read_text())["cells"]
    edited = next(c for c in cells if c["cell_type"] == "code" and c.get("outputs") and "".join(c["source"]).startswith("print(")
                  and text.read_text().count("".join(c["source"]).split("\n")[0]) == 1)
    first_line = "".join(edited["source"]).split("\n")[0]
    text.write_text(text.read_text().replace(first_line, first_line + "  # edited", 1))
    derived.text_to_notebooks(tmp_path)
    after = next(c for c in json.loads(notebook.read_text())["cells"] if "".join(c["source"]).startswith(first_line + "  # edited"))
    assert after["outputs"] == [] and after["execution_count"] is None
    assert outputs() == before - len(edited["outputs"]), "the unchanged cells lost outputs"
    text.write_text("```{code-cell} ipython3\n:tags: [oops\nx = 1\n```\n")
    with pytest.raises(SystemExit, match=f"notebooks/md/{stem}.md: jupytext cannot read it"):
        derived.text_to_notebooks(tmp_path)
    text.unlink()
    with pytest.raises(SystemExit, match="is missing: a chapter's text is the only file"):
        derived.text_to_notebooks(tmp_path)
    (tmp_path / "notebooks" / "md" / "10_new_chapter.md").write_text("# New\n")     # a chapter the registry lacks
    with pytest.raises(SystemExit, match="10_new_chapter.md is no chapter of tools/chapters.toml: add its"):
        derived.text_to_notebooks(tmp_path)


def test_every_generated_notebook_says_from_what_and_by_which_command():
    """Issue 44, item 1: a chapter's notebook and its Colab copy say in their metadata that they are
    generated, from which file, by which command, and that the chapter's text is where to edit; the
    text itself carries no such note (it is the source)."""
    import json

    from tools.registry import chapters

    for c in chapters():
        text = f"notebooks/md/{c.stem}.md"
        for path, source, command in ((c.notebook, text, "tools/derived.py"),
                                      (ROOT / "colab" / f"{c.stem}.ipynb", f"notebooks/{c.stem}.ipynb", "tools/site/colab.py")):
            note = json.loads(path.read_text(encoding="utf-8"))["metadata"].get("generated")
            assert note and note["from"] == source and command in note["by"] and "make derived" in note["by"] \
                and note["edit"].startswith(text), f"{path.relative_to(ROOT)}: {note}"
        assert "generated" not in (ROOT / text).read_text(encoding="utf-8").split("\n---\n", 1)[0], text


def test_a_left_over_derived_file_is_named_with_the_fix(tmp_path, monkeypatch):
    """Issue 44, item 2: a derived file that nothing derives any more (the Colab copy of a removed
    chapter) is listed as stale with what to do, not a crash (the steps themselves stand in here)."""
    from tools import derived

    (tmp_path / "colab").mkdir()
    (tmp_path / "colab" / "10_gone.ipynb").write_text("{}")
    (tmp_path / "README.md").write_text("kept\n")
    monkeypatch.setattr(derived, "repository_files", lambda root: ["README.md", "colab/10_gone.ipynb"])
    monkeypatch.setattr(derived, "build", lambda root: (root / "colab" / "10_gone.ipynb").unlink())
    assert derived.stale(tmp_path) == ["colab/10_gone.ipynb (left over: nothing derives it any more; delete it)"]
