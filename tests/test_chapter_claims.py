"""What a chapter says about itself, against what it shows and against the pages that describe it.

- **Running time.** The seconds a chapter states as measured for a whole run ("About N s on a 2-core
  CPU (M s measured for a whole run, kernel start included, ...)", CONTRIBUTING.md) cannot be fewer
  than a time its own stored outputs print ("trained in 36 s"), nor than the sum of the times that
  separate cells of the same run print; and its "About N s" is M rounded.
- **The instructors' guide.** Each chapter's "**Time.**" paragraph in book/instructors.md states how
  long the whole notebook runs, and that agrees with the chapter's "About N s"; its "**Prerequisites.**"
  names the chapters that the chapter's own "**Before you start.**" names.
- **The registry.** A chapter's `requires` (tools/chapters.toml, the generated overview's "before it")
  are exactly the chapters its "**Before you start.**" paragraph names, by number ("chapter 6",
  "chapters 2 and 3") or by title ("the toy translator").

The stored notebooks are read with nbformat; the times in their outputs are found by their units
(ms, s, min), CPU times left out (a process's CPU time may exceed the wall time on two cores).
Every check returns sentences; a test fails with all of them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import nbformat

from instructors_guide import GUIDE
from tools.registry import chapters

# ------------------------------------------------------------------ reading amounts of time

WORD_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
                "seven": 7, "eight": 8, "nine": 9, "ten": 10, "half a": 0.5, "half an": 0.5}
UNIT_SECONDS = {"ms": 1e-3, "s": 1, "sec": 1, "second": 1, "seconds": 1, "min": 60, "minute": 60, "minutes": 60}
_NUMBER = r"\d+(?:\.\d+)?|half an?|an?|one|two|three|four|five|six|seven|eight|nine|ten"
_UNIT = r"ms|s|sec|seconds?|min|minutes?"
AMOUNT = re.compile(rf"(?:(?P<qualifier>about|around|under|less than|at most|over|more than)\s+)?"
                    rf"\b(?P<low>{_NUMBER})(?:\s*(?:to|–|-)\s*(?P<high>{_NUMBER}))?\s*(?P<unit>{_UNIT})\b",
                    re.IGNORECASE)
ABOUT = 1.2          # "about X" covers X / 1.2 to 1.2 X (so "about a minute" is 50 to 72 s)


def _number(word: str) -> float:
    word = word.lower()
    return float(word) if word[0].isdigit() else WORD_NUMBERS[word]


@dataclass(frozen=True)
class Amount:
    """An amount of time as prose states it: its words, and the seconds it allows (low to high)."""
    words: str
    value: float       # the number it states, in seconds (the first of a range)
    low: float
    high: float

    def allows(self, seconds: float) -> bool:
        return self.low <= seconds <= self.high


def amount(words: str) -> Amount | None:
    """ "about 55 s", "one to two minutes", "under half a minute" as seconds; None if there is none."""
    found = AMOUNT.search(words)
    if not found:
        return None
    unit = UNIT_SECONDS[found["unit"].lower()]
    low, qualifier = _number(found["low"]) * unit, (found["qualifier"] or "about").lower()
    if found["high"]:
        return Amount(found.group(0), low, low, _number(found["high"]) * unit)
    if qualifier in ("under", "less than", "at most"):
        return Amount(found.group(0), low, 0.0, low)
    if qualifier in ("over", "more than"):
        return Amount(found.group(0), low, low, float("inf"))
    return Amount(found.group(0), low, low / ABOUT, low * ABOUT)


# ------------------------------------------------------------------ reading the chapters


def markdown(chapter) -> str:
    """The chapter's prose: its notebook's markdown cells, one paragraph break between cells."""
    nb = nbformat.read(chapter.notebook, as_version=4)
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def paragraph(text: str, heading: str) -> str | None:
    """The paragraph that opens with the bold `heading` ("Running time."), without it; None if absent."""
    found = re.search(rf"\*\*{re.escape(heading)}\*\*[ \t]*\n?(.*?)(?:\n[ \t]*\n|\Z)", text, re.DOTALL)
    return " ".join(found.group(1).split()) if found else None


MEASURED = re.compile(r"\((?P<seconds>\d+(?:\.\d+)?) s measured for a whole run\b")
DURATION = re.compile(r"(?<![\w.])(?P<value>\d+(?:\.\d+)?)\s?(?P<unit>ms|s|sec|seconds?|min|minutes?)"
                      r"(?![\w/])(?!\.\w)(?!\s*(?:of\s+)?CPU)")
WHOLE_RUN = re.compile(r"\bchapter ran in\b|\bwhole (?:chapter|notebook|run)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Timing:
    cell: int          # the code cell's index in the notebook
    seconds: float
    line: str
    whole_run: bool    # the line times everything run before it ("chapter ran in 8.7 s")


def printed_timings(chapter) -> list[Timing]:
    """Every wall-clock time that the chapter's stored outputs print (text outputs only), in order."""
    nb = nbformat.read(chapter.notebook, as_version=4)
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                text = output.get("text", "")
            elif output.get("output_type") in ("execute_result", "display_data"):
                text = output.get("data", {}).get("text/plain", "")
            else:
                continue
            text = "".join(text) if isinstance(text, list) else text
            for line in text.splitlines():
                for match in DURATION.finditer(line):
                    seconds = float(match["value"]) * UNIT_SECONDS[match["unit"].lower()]
                    found.append(Timing(index, seconds, line.strip(), bool(WHOLE_RUN.search(line))))
    return found


def least_run_time(timings: list[Timing]) -> tuple[float, str]:
    """The shortest whole run that the printed times allow, and why: each cell took at least the longest
    time it prints (its times may overlap: a total and its parts), cells run one after the other, and a
    time of the whole run covers the cells before it."""
    per_cell: dict[int, Timing] = {}
    for t in timings:
        if not t.whole_run and (t.cell not in per_cell or t.seconds > per_cell[t.cell].seconds):
            per_cell[t.cell] = t
    parts = list(per_cell.values())
    least = sum(t.seconds for t in parts), parts
    for whole in (t for t in timings if t.whole_run):
        after = [t for t in parts if t.cell > whole.cell]
        if whole.seconds + sum(t.seconds for t in after) > least[0]:
            least = whole.seconds + sum(t.seconds for t in after), [whole, *after]
    seconds, cells = least
    if not cells:
        return 0, ""
    if len(cells) == 1:
        return seconds, f"cell {cells[0].cell} prints {cells[0].line!r}"
    listed = "; ".join(f"cell {t.cell}: {t.line!r}" for t in cells)
    return seconds, f"separate cells print times adding up to {seconds:.1f} s ({listed})"


def running_time_problems(chapter) -> list[str]:
    text = paragraph(markdown(chapter), "Running time.")
    if text is None:
        return [f"chapter {chapter.number} has no **Running time.** paragraph"]
    stated, measured = amount(text), MEASURED.search(text)
    if stated is None or measured is None or not text.lower().startswith("about"):
        return [f"chapter {chapter.number}'s Running time does not read \"About N s on a 2-core CPU (M s measured "
                f"for a whole run, kernel start included, ...)\": {text[:160]!r}"]
    problems = []
    seconds = float(measured["seconds"])
    if abs(stated.value - seconds) > 0.1 * seconds + 0.5:
        problems.append(f"chapter {chapter.number}'s Running time says {stated.words!r}, which does not round "
                        f"{seconds:g} s measured")
    least, why = least_run_time(printed_timings(chapter))
    if seconds < least:
        problems.append(f"chapter {chapter.number}'s Running time says {seconds:g} s measured for a whole run, "
                        f"but its stored outputs take at least {least:g} s: {why}")
    return problems


# ------------------------------------------------------------------ chapters named in prose

_LIST = r"\d+(?:\s*(?:,|and|or|–|-)\s*\d+)*"
CHAPTER_NUMBERS = re.compile(rf"\bchapters?\s+(?P<list>{_LIST})", re.IGNORECASE)


def named_chapters(text: str, entries) -> set[int]:
    """The chapters that `text` names, by number ("chapter 6", "chapters 2 and 3", "chapters 2–4") or by
    their registry title ("the toy translator")."""
    named: set[int] = set()
    for found in CHAPTER_NUMBERS.finditer(text):
        for a, dash, b in re.findall(r"(\d+)(?:\s*([–-])\s*(\d+))?", found["list"]):
            named.update(range(int(a), int(b) + 1) if dash else [int(a)])
    for c in entries:
        if re.search(rf"(?<![\w-]){re.escape(c.title)}(?![\w-])", text, re.IGNORECASE):
            named.add(c.number)
    return named


def _numbers(numbers) -> str:
    return ", ".join(map(str, sorted(numbers))) or "none"


def requires_problems(chapter, entries) -> list[str]:
    text = paragraph(markdown(chapter), "Before you start.")
    if text is None:
        return [f"chapter {chapter.number} has no **Before you start.** paragraph"]
    by_stem = {c.stem: c.number for c in entries}
    named, required = named_chapters(text, entries), {by_stem[s] for s in chapter.requires}
    if named == required:
        return []
    stems = {c.number: c.stem for c in entries}
    add, drop = [stems[n] for n in sorted(named - required)], [stems[n] for n in sorted(required - named)]
    return [f"chapter {chapter.number}'s Before you start names chapters {_numbers(named)}, but its `requires` "
            f"in tools/chapters.toml lists {_numbers(required)}"
            + (f" (add {add})" if add else "") + (f" (remove {drop})" if drop else "")]


# ------------------------------------------------------------------ the instructors' guide


def guide_sections() -> dict[int, str]:
    """The guide's hand-written section of each chapter, by number (`### Chapter N: ...` to the next `###`)."""
    text = GUIDE.read_text(encoding="utf-8")
    return {int(n): body for n, body in
            re.findall(r"^### Chapter (\d+):[^\n]*\n(.*?)(?=^### |^<!-- chapter|^## |\Z)", text, re.MULTILINE | re.DOTALL)}


def guide_time_problems(chapter, sections) -> list[str]:
    where = f"book/instructors.md's section on chapter {chapter.number}"
    time = paragraph(sections.get(chapter.number, ""), "Time.")
    if time is None:
        return [f"{where} has no **Time.** paragraph"]
    said = re.search(r"runs in (?P<amount>.*?) on a 2-core CPU", time)
    guide = amount(said["amount"]) if said else None
    if guide is None:
        return [f"{where}: its Time paragraph does not say how long the whole notebook runs (\"The whole notebook "
                f"runs in about N s on a 2-core CPU\"): {time[:120]!r}"]
    chapter_text = paragraph(markdown(chapter), "Running time.") or ""
    stated = amount(chapter_text)
    if stated is None:
        return [f"chapter {chapter.number}'s Running time states no time for the guide to agree with"]
    if not guide.allows(stated.value):
        return [f"{where} says the notebook runs in {guide.words!r}, but the chapter's Running time says "
                f"{stated.words!r}"]
    return []


def guide_prerequisite_problems(chapter, sections, entries) -> list[str]:
    where = f"book/instructors.md's section on chapter {chapter.number}"
    prerequisites = paragraph(sections.get(chapter.number, ""), "Prerequisites.")
    before = paragraph(markdown(chapter), "Before you start.")
    if prerequisites is None or before is None:
        return [f"{where} has no **Prerequisites.** paragraph" if prerequisites is None
                else f"chapter {chapter.number} has no **Before you start.** paragraph"]
    guide, own = named_chapters(prerequisites, entries), named_chapters(before, entries)
    return [] if guide == own else [f"{where} names chapters {_numbers(guide)} as prerequisites, but the chapter's "
                                    f"Before you start names {_numbers(own)}"]


# ------------------------------------------------------------------ the tests


def test_reading_amounts_of_time():
    assert (amount("About 55 s on a 2-core CPU").low, amount("about 55 s").high) == (55 / ABOUT, 55 * ABOUT)
    assert (amount("in one to two minutes on").low, amount("one to two minutes").high) == (60, 120)
    assert (amount("under half a minute").low, amount("under half a minute").high) == (0, 30)
    assert amount("About two minutes on a 2-core CPU").allows(120)
    assert not amount("about a minute").allows(28) and amount("about a minute").allows(55)
    assert amount("8 seeds and 400 sentences") is None


def test_printed_times_are_found_by_their_units_and_cpu_time_is_left_out():
    line = "chapter ran in 8.7 s on cpu (8.5 s of CPU time in this process); 12 seeds, 3.5 ms, 6.1 MiB, 2 min"
    assert [(float(m["value"]), m["unit"]) for m in DURATION.finditer(line)] == [(8.7, "s"), (3.5, "ms"), (2, "min")]
    parts = [Timing(3, 10, "a", False), Timing(3, 4, "b", False), Timing(5, 23, "c", False)]
    assert least_run_time(parts)[0] == 33                           # a cell's longest time, summed over cells
    assert least_run_time(parts + [Timing(9, 30, "chapter ran in 30 s", True)])[0] == 33
    assert least_run_time(parts + [Timing(9, 40, "chapter ran in 40 s", True)])[0] == 40
    assert least_run_time(parts + [Timing(4, 30, "chapter ran in 30 s", True)])[0] == 53   # 30 s, then cell 5
    assert least_run_time([]) == (0, "")


def test_named_chapters_by_number_and_by_title():
    entries = chapters()
    assert named_chapters("Chapters 2 and 3: the softmax", entries) == {2, 3}
    assert named_chapters("chapter 7's block, chapter 4's temperature, chapters 2–3", entries) == {2, 3, 4, 7}
    assert named_chapters("what the toy translator does, and soft attention", entries) == {2, 6}
    assert named_chapters("the softmax, a Transformer-like model", entries) == set()


def test_each_running_time_is_at_least_what_its_stored_outputs_took():
    problems = [p for c in chapters() for p in running_time_problems(c)]
    assert not problems, "\n".join(problems)


def test_the_registry_requires_the_chapters_that_before_you_start_names():
    entries = chapters()
    problems = [p for c in entries for p in requires_problems(c, entries)]
    assert not problems, "\n".join(problems)


def test_the_instructors_time_agrees_with_each_chapters_running_time():
    sections = guide_sections()
    problems = [p for c in chapters() for p in guide_time_problems(c, sections)]
    assert not problems, "\n".join(problems)


def test_the_instructors_prerequisites_name_the_chapters_before_you_start_names():
    entries, sections = chapters(), guide_sections()
    problems = [p for c in entries for p in guide_prerequisite_problems(c, sections, entries)]
    assert not problems, "\n".join(problems)
