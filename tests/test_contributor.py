"""A contributor's dry run (issue 44): in a temporary clone of the repository, add a throw-away chapter from a
text file and a registry entry, as CONTRIBUTING.md's "Adding a chapter" says, run its one recipe (`make
chapter N=...`), and get a committed state: every derived file up to date, nothing stray, the quick tier
passing.

The clone borrows this checkout's environment (.venv, linked: installing it again would take minutes and
test pip, not the recipe), and the recipe ends with `make test-fast` (CHECK=test-fast) instead of
`make test-chapter`, whose browser, grader and Colab runs of a new chapter are what `make test` runs on
every chapter already.
"""
from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from tools.registry import ROOT, chapters

pytestmark = [pytest.mark.kernel, pytest.mark.xdist_group("contributor")]

TEXT = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A dry run of the contributors' recipe

*Chapter {number} of* Attention, by hand and in code.

This chapter exists only in a test: it adds one softmax to the book and checks it.

**Before you start.**
You should have met NumPy arrays.

**Running time.** About 5 s on a 2-core CPU (5 s measured for a whole run, kernel start included, on an otherwise idle machine).

```{{code-cell}} ipython3
import numpy as np
import torch
import matplotlib.pyplot as plt
```

```{{code-cell}} ipython3
# shared helper: book_style (print options, the plotting look and the device; the same in every chapter)
```

```{{code-cell}} ipython3
# shared helper: compare_with_note (the book's one errata rule; the same code in every chapter)
```

Three scores become weights that sum to 1.

```{{code-cell}} ipython3
scores = np.array([1.0, 2.0, 3.0])                         # (T,) = (3,)
weights = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
print(np.round(weights, 3), weights.sum().round(6))
```

```{{code-cell}} ipython3
---
mystnb:
  figure:
    caption: The softmax weights of the scores 1, 2 and 3 are 0.090, 0.245 and 0.665.
    name: fig-dry-run-weights
  image:
    alt: 'Bar chart of three softmax weights, 0.090, 0.245 and 0.665, for the scores 1, 2 and 3.'
---
fig, ax = plt.subplots(figsize=(4, 2.5))
ax.bar(["1", "2", "3"], weights)
ax.set_xlabel("score")
ax.set_ylabel("weight")
plt.show()
```

## Exercises

```{{code-cell}} ipython3
# shared helper: check_helpers (the exercise checks' messages; the same code in every chapter)
```

```{{exercise}} A softmax of your own
:label: dry_run_ex1
Write the softmax of three scores.
```
"""

INSTRUCTORS = """<!-- chapter: {stem} -->
### Chapter {number}: a dry run

**Learning objectives.** Students compute a softmax.

**Prerequisites.** NumPy arrays.

**Time.** The whole notebook runs in about 5 s on a 2-core CPU (see the execution times above). Reading and
running it takes five minutes.

| exercise | kind | suits |
|---|---|---|
| `dry_run_ex1` | a softmax | homework |

"""

ENTRY = """
[[chapter]]
number = {number}
stem = "{stem}"
label = "dry_run"
title = "a dry run"
calculations = []
explorers = []
summary = "a softmax of three scores, to try the contributors' recipe."
ideas = "the recipe for a new chapter"
requires = []
before = "NumPy"
work_through = "5 minutes"
"""


def git(clone: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=clone, check=True, capture_output=True, text=True).stdout


def test_a_new_chapter_from_its_text_reaches_a_committed_state_by_one_recipe(tmp_path):
    number = len(chapters()) + 1
    stem = f"{number:02d}_dry_run"
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    if not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.fail("the dry run borrows this checkout's .venv: run `make test`, which installs it", pytrace=False)
    (clone / ".venv").symlink_to(ROOT / ".venv")
    # the clone's working tree is this checkout's HEAD: carry the uncommitted state over, so that the dry run
    # tries the recipe as it is now (a commit of the clone's own, never pushed)
    for path in git(ROOT, "ls-files", "--modified", "--others", "--exclude-standard").split("\n"):
        if path and (ROOT / path).is_file():
            (clone / path).parent.mkdir(parents=True, exist_ok=True)
            (clone / path).write_bytes((ROOT / path).read_bytes())
    for path in git(ROOT, "ls-files", "--deleted").split("\n"):
        if path:
            (clone / path).unlink(missing_ok=True)
    git(clone, "add", "-A")
    git(clone, "-c", "user.name=dry run", "-c", "user.email=dry@run", "commit", "--quiet", "--allow-empty", "-m", "the tree as it is")

    # what a contributor writes: the chapter's text and its registry entry (CONTRIBUTING.md, Adding a chapter)
    (clone / "notebooks" / "md" / f"{stem}.md").write_text(TEXT.format(number=number), encoding="utf-8")
    with open(clone / "tools" / "chapters.toml", "a", encoding="utf-8") as f:
        f.write(ENTRY.format(number=number, stem=stem))
    # and its section of the instructors' guide (make derived keeps a section's text, and adds its tables)
    guide = clone / "book" / "instructors.md"
    text = guide.read_text(encoding="utf-8")
    last = f"<!-- chapter: {chapters()[-1].stem} -->"
    heading = text.index("\n### ", text.index(last))                       # the last chapter's heading
    after = text.index("\n### ", heading + 1)                              # the heading after its section
    guide.write_text(text[:after + 1] + INSTRUCTORS.format(stem=stem, number=number) + text[after + 1:], encoding="utf-8")

    # the Makefile's stamp of an installed environment, newer than the clone's requirements files
    (clone / ".git" / "info" / "exclude").write_text(".dry-run-ready\n", encoding="utf-8")
    (clone / ".dry-run-ready").touch()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS", "PYTEST_"))}
    result = subprocess.run(["make", "chapter", f"N={number}", "CHECK=test-fast", "READY=.dry-run-ready"],
                            cwd=clone, env=env, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, f"make chapter N={number} failed:\n{result.stdout[-4000:]}\n{result.stderr[-3000:]}"

    # what the contributor wrote (the text, the registry entry, the guide's section) and what the recipe wrote:
    # the notebook, its Colab copy, and the generated lists that name the chapter (table of contents, title
    # page, the guide's overview and exercise tables, CONTRIBUTING's list of chapters)
    status = sorted(line[3:] for line in git(clone, "status", "--porcelain", "--untracked-files=all").splitlines())
    wanted = {f"notebooks/{stem}.ipynb", f"colab/{stem}.ipynb", f"notebooks/md/{stem}.md", "tools/chapters.toml",
              "_toc.yml", "book/index.md", "book/instructors.md", "CONTRIBUTING.md"}
    assert wanted <= set(status), f"the recipe did not write {sorted(wanted - set(status))}; git status: {status}"
    stray = [p for p in status if p not in wanted]
    assert not stray, f"the recipe left files that no step derives: {stray}"
    notebook = (clone / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8")
    assert "[0.09  0.245 0.665] 1.0" in notebook, "the new chapter's notebook holds no output of a clean run"
    # committed, the tree stays clean: running the recipe's derivation again changes nothing
    git(clone, "add", "-A")
    git(clone, "-c", "user.name=dry run", "-c", "user.email=dry@run", "commit", "--quiet", "-m", "a chapter")
    again = subprocess.run(["make", "derived", "READY=.dry-run-ready"], cwd=clone, env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert git(clone, "status", "--porcelain") == "", textwrap.shorten(git(clone, "status", "--porcelain"), 500)
