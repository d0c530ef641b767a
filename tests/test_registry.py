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


def test_the_explorer_table_in_contributing_is_generated_from_the_schemas():
    import subprocess
    import sys

    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    pasted = text.split("<!-- explorer-table:start -->\n", 1)[1].split("\n<!-- explorer-table:end -->", 1)[0]
    generated = subprocess.run([sys.executable, "-m", "tools.explorers", "table"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    assert pasted == generated, "CONTRIBUTING.md's explorer table is stale: paste `python -m tools.explorers table`"
