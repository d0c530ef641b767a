"""The chapters of the book, read from `tools/chapters.toml` (the one list of chapters)."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = Path(__file__).resolve().with_name("chapters.toml")
ERRATA_KINDS = ("error", "rounding", "illustrative", "inconsistent")
GRADERS = ("nbgrader", "otter")


@dataclass(frozen=True)
class Chapter:
    number: int
    stem: str
    label: str
    title: str
    calculations: tuple[str, ...]
    explorers: tuple[str, ...]
    teaches: tuple[str, ...] = ()
    long_training: bool = False
    messy_class: tuple[str, ...] = ()     # the graders that grade a messy class of it: nbgrader, otter
    notebook7: bool = False
    moved_from: tuple[str, ...] = ()
    errata: tuple[dict, ...] = ()          # rows of its table on the errata page: id, kind, states, gives, why
    errata_note: str = ""                  # a sentence under its errata heading (e.g. why there is no row)
    rubrics: dict = field(default_factory=dict, hash=False, compare=False)   # grade id of a written answer -> rubric
    summary: str = ""
    ideas: str = ""
    requires: tuple[str, ...] = ()
    before: str = ""
    work_through: str = ""

    @property
    def notebook(self) -> Path:
        return ROOT / "notebooks" / f"{self.stem}.ipynb"

    @property
    def errata_section(self) -> str:
        """The heading of this chapter's table on the errata page."""
        return f"Chapter {self.number}: {self.title}"


def chapters() -> list[Chapter]:
    data = tomllib.loads(REGISTRY.read_text(encoding="utf-8"))
    known = set(Chapter.__dataclass_fields__)
    for c in data["chapter"]:
        unknown = sorted(set(c) - known)
        if unknown:
            raise ValueError(f"{REGISTRY.name}: chapter {c.get('stem', '?')} has unknown field(s) {unknown}; "
                             f"the fields are {sorted(known)}")
    entries = [Chapter(**{**c, **{k: tuple(c.get(k, ())) for k in ("calculations", "explorers", "teaches", "requires", "moved_from", "errata", "messy_class")}})
               for c in data["chapter"]]
    numbers = [c.number for c in entries]
    if numbers != list(range(1, len(entries) + 1)):
        raise ValueError(f"{REGISTRY.name}: chapters must be numbered 1, 2, ... in order, got {numbers}")
    stems = [c.stem for c in entries]
    for c in entries:
        odd = [g for g in c.messy_class if g not in GRADERS]
        if odd:
            raise ValueError(f"{REGISTRY.name}: chapter {c.stem}: messy_class names {odd}; the graders are {list(GRADERS)}")
    for c in entries:
        unknown = [s for s in c.requires if s not in stems[:c.number - 1]]
        if unknown:
            raise ValueError(f"{REGISTRY.name}: chapter {c.stem} requires {unknown}, which are not earlier chapters")
    return entries


def by_stem(stem: str) -> Chapter:
    for chapter in chapters():
        if chapter.stem == stem:
            return chapter
    raise KeyError(f"no chapter {stem!r} in {REGISTRY.name}")


if __name__ == "__main__":
    # `python -m tools.registry notebooks`: the chapter notebooks in order, for make (`make execute`)
    import sys

    # `python -m tools.registry notebook N`: chapter N's notebook (N a number, 03, or a stem), for `make chapter`
    args = sys.argv[1:]
    if args == ["notebooks"]:
        print(" ".join(str(c.notebook.relative_to(ROOT)) for c in chapters()))
    elif len(args) == 2 and args[0] == "notebook":
        every = chapters()
        found = [c for c in every if args[1] in (str(c.number), f"{c.number:02d}", c.stem, c.label)]
        if not found:
            sys.exit(f"no chapter {args[1]!r} in tools/chapters.toml (it lists {every[0].number}…{every[-1].number}): "
                     f"a new chapter needs its [[chapter]] entry there first (CONTRIBUTING.md, Adding a chapter)")
        print(found[0].notebook.relative_to(ROOT))
    else:
        sys.exit("usage: python -m tools.registry notebooks | notebook N")
