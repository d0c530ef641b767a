"""Every file that is generated from another, rebuilt by one command, in dependency order.

    python -m tools.derived            # `make derived`: rebuild them all; run twice, it changes nothing
    python -m tools.derived --check    # list the stale ones and exit 1 (tests/test_derived.py, in make test)

The steps, each a tool of its own (run alone, it does just its part):

1. notebooks from their text: a chapter's MyST text, notebooks/md/<stem>.md, is the only file of it that
   anyone edits; its notebook, notebooks/<stem>.ipynb, is derived from it one way, keeping the stored
   outputs of the cells that did not change (jupytext's combine_inputs_with_outputs, what `jupytext
   --update` does, but an edited code cell loses its old outputs). An edit made in the notebook is overwritten, and the check names it;
2. shared-helper copies: the canonical helpers of tools/shared/ into every chapter's marked cells
   (tools.authoring.shared_code sync), and plumbing marks, the folded state of every plumbing cell
   (tools.authoring.plumbing), both written into the notebooks;
3. the text again, from the notebooks: what step 2 wrote reaches the text (step 1 made the notebook's
   cells the text's, so nothing else changes);
4. Colab copies: colab/<stem>.ipynb from each notebook (tools.site.colab);
5. the explorers' website contract, book/_static/explorer-contract.js, from their schemas
   (tools.explorers js);
6. generated blocks of the pages: the chapter lists of _toc.yml, the title page, the instructors' guide,
   CONTRIBUTING.md, the instructors' table of exercises and points and the errata page's sections
   (tools.authoring.blocks), and the table of explorer kinds in tools/explorers/README.md.

The check copies the repository's files (those git tracks or would track: no .venv, no _build) into a
scratch folder, runs the same steps there and compares: what differs is stale, and `make derived` is the fix.
Student and grading versions are not stored: `make student` and the grading tests build them.
"""
from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPLORER_TABLE = ("<!-- explorer-table:start -->\n", "\n<!-- explorer-table:end -->")


def _python(root: Path, *args: str) -> None:
    """One step, a tool of its own; when it fails, its own message (on stderr, above) is the one to read."""
    if subprocess.run([sys.executable, "-m", *args], cwd=root, stdout=subprocess.DEVNULL).returncode != 0:
        raise SystemExit(f"make derived stopped at its step `python -m {' '.join(args)}`: its message is above")


def _explorer_table(root: Path) -> None:
    table = subprocess.run([sys.executable, "-m", "tools.explorers", "table"], cwd=root, check=True,
                           capture_output=True, text=True).stdout.strip()
    path = root / "tools" / "explorers" / "README.md"
    text = path.read_text(encoding="utf-8")
    start, end = EXPLORER_TABLE
    if start not in text or end not in text:
        raise SystemExit(f"tools/explorers/README.md has no {start.strip()} ... {end.strip()} block")
    new = text.split(start, 1)[0] + start + table + end + text.split(end, 1)[1]
    if new != text:
        path.write_text(new, encoding="utf-8")


def _notebooks(root: Path) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "tools.registry", "notebooks"], cwd=root, check=True,
                         capture_output=True, text=True).stdout.split()
    return out


def generated(source: str, command: str, text: str) -> dict:
    """The metadata that says a notebook is generated: from what, by which command, and where to edit
    (`text`, the chapter's text)."""
    return {"from": source, "by": command, "edit": f"{text}, not this file (the command overwrites it)"}


def _with_outputs_of_unchanged_cells(inputs, stored):
    """jupytext's combine_inputs_with_outputs, except that a code cell whose source the text changed loses the
    stored outputs (jupytext pairs an edited cell with its old outputs, which its new code never printed):
    `make execute` gives it outputs of its own, and nbval fails until it has."""
    from jupytext.combine import combine_inputs_with_outputs, map_outputs_to_inputs

    paired = map_outputs_to_inputs(inputs.cells, stored.cells)
    nb = combine_inputs_with_outputs(inputs, stored, fmt="md:myst")
    for cell, j in zip(nb.cells, paired):
        if cell.cell_type == "code" and j is not None and stored.cells[j].source != cell.source:
            cell.outputs, cell.execution_count = [], None
    return nb


def text_to_notebooks(root: Path) -> None:
    """Step 1: every chapter's notebook from its text, outputs kept; one sentence when that cannot be done."""
    import jupytext

    names = _notebooks(root)
    known = {Path(name).stem for name in names}
    strays = sorted(p.name for p in (root / "notebooks" / "md").glob("*.md") if p.stem not in known)
    if strays:
        raise SystemExit(f"notebooks/md/{strays[0]} is no chapter of tools/chapters.toml: add its [[chapter]] entry "
                         f"there (CONTRIBUTING.md, Adding a chapter), or delete the file")
    for name in names:
        notebook = root / name
        text = notebook.parent / "md" / f"{notebook.stem}.md"
        if not text.exists():
            raise SystemExit(f"{text.relative_to(root)} is missing: a chapter's text is the only file of it anyone edits. "
                             f"Restore it (git checkout -- {text.relative_to(root)}), or make it once from the notebook with "
                             f"`jupytext --to md:myst {name} -o {text.relative_to(root)}`")
        try:
            inputs = jupytext.read(text, fmt="md:myst")
        except Exception as error:  # noqa: BLE001 - jupytext's own message, with the file
            raise SystemExit(f"{text.relative_to(root)}: jupytext cannot read it: {type(error).__name__}: {error}") from None
        nb = _with_outputs_of_unchanged_cells(inputs, jupytext.read(notebook)) if notebook.exists() else inputs
        nb.metadata["generated"] = generated(str(text.relative_to(root)), "make derived (tools/derived.py)",
                                             str(text.relative_to(root)))
        new = jupytext.writes(nb, fmt="ipynb").rstrip("\n") + "\n"          # as jupytext.write ends a file
        if not notebook.exists() or notebook.read_text(encoding="utf-8") != new:
            notebook.write_text(new, encoding="utf-8")


def notebooks_to_text(root: Path) -> None:
    """Step 3: the text from each notebook (only what step 2 wrote differs)."""
    import jupytext

    for name in _notebooks(root):
        notebook = root / name
        text = notebook.parent / "md" / f"{notebook.stem}.md"
        nb = jupytext.read(notebook)
        nb.metadata.pop("generated", None)        # the text is the source, not generated
        new = jupytext.writes(nb, fmt="md:myst").rstrip("\n") + "\n"
        if text.read_text(encoding="utf-8") != new:
            text.write_text(new, encoding="utf-8")


def build(root: Path = ROOT) -> None:
    """Run every step in `root` (the repository, or a scratch copy of it)."""
    text_to_notebooks(root)
    _python(root, "tools.authoring.shared_code", "sync")
    _python(root, "tools.authoring.plumbing")
    notebooks_to_text(root)
    _python(root, "tools.site.colab")
    _python(root, "tools.explorers", "js")
    _python(root, "tools.authoring.blocks")
    _explorer_table(root)


def repository_files(root: Path = ROOT) -> list[str]:
    """What git tracks or would track (untracked files that are not ignored)."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                         check=True, capture_output=True).stdout.decode()
    return sorted({p for p in out.split("\0") if p and (root / p).is_file()})


def stale(root: Path = ROOT) -> list[str]:
    """The files that `build` would change, run on a scratch copy of the repository."""
    files = repository_files(root)
    with tempfile.TemporaryDirectory(prefix="derived-check-") as scratch:
        copy = Path(scratch)
        for name in files:
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, copy / name)        # with their times: jupytext --sync reads them
        build(copy)
        changed = [name if (copy / name).exists() else f"{name} (left over: nothing derives it any more; delete it)"
                   for name in files if not (copy / name).exists() or not filecmp.cmp(root / name, copy / name, shallow=False)]
        added = sorted(set(repository_files_in(copy)) - set(files))
    return changed + [f"{name} (new)" for name in added]


def repository_files_in(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        found = stale()
        if found:
            lines = [f"{name}: its cells differ from notebooks/md/{Path(name).stem}.md, the chapter's only hand-edited "
                     f"file; put an edit there (make derived overwrites the notebook's cells with the text's)"
                     if name.startswith("notebooks/") and name.endswith(".ipynb") and "/" not in name[len("notebooks/"):]
                     else name for name in found]
            print("stale derived files (run `make derived`):\n  " + "\n  ".join(lines))
            return 1
        print("every derived file is up to date")
        return 0
    if argv:
        print(__doc__)
        return 2
    build()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main(sys.argv[1:]))
