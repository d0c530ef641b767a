# shared helper: compare_with_note (the book's one errata rule; the same code in every chapter)
def _stated_decimals(text):
    """Decimal places of a number as the note writes it: "0.421" -> 3, "9.2%" -> 1, "5" -> 0."""
    digits = str(text).strip().rstrip("%").strip()
    float(digits)  # a clear ValueError if the note's text is not a number
    return len(digits.split(".")[1]) if "." in digits else 0


def compare_with_note(calc_id, name, computed, stated, carried=None):
    """Judge the note's number(s) by the book's errata rule, print one line, return the verdict.

    computed  the value recomputed from the note's own inputs, at full precision
    stated    the note's number exactly as the note writes it: a string ("0.421"), or a list of them
    carried   optional: the same computation redone with the note's own rounded intermediate values

    Verdict, for each number (the worst one counts):
      "agrees"    stated = computed rounded to the stated digits (|difference| <= half a unit there)
      "rounding"  only the note's rounding differs: off by at most one unit in the last stated digit,
                  or equal to `carried` at the stated digits (the note rounded before summing)
      "error"     the stated number does not follow from its inputs beyond the note's own rounding
    ("illustrative" and "inconsistent" are not numeric comparisons: see note_verdict.)
    """
    stated_list = [stated] if isinstance(stated, (str, int, float)) else list(stated)
    computed_arr = np.atleast_1d(np.asarray(computed, dtype=float))
    if computed_arr.size != len(stated_list):
        raise ValueError(f"{calc_id}: {computed_arr.size} computed value(s) for {len(stated_list)} stated one(s).")
    carried_arr = None if carried is None else np.atleast_1d(np.asarray(carried, dtype=float))
    decimals = [_stated_decimals(s) for s in stated_list]
    values = np.array([float(str(s).strip().rstrip("%")) for s in stated_list])
    order = {"agrees": 0, "rounding": 1, "error": 2}
    verdict = "agrees"
    for i, (c, s, d) in enumerate(zip(computed_arr, values, decimals)):
        unit = 10.0 ** -d
        slack = 1e-9 * max(1.0, abs(s))
        gap = abs(c - s)
        if gap <= unit / 2 + slack:
            one = "agrees"
        elif gap <= unit + slack or (carried_arr is not None and abs(carried_arr[i] - s) <= unit / 2 + slack):
            one = "rounding"
        else:
            one = "error"
        verdict = max(verdict, one, key=order.get)
    shown = [f"{c:.{d + 2}f}" for c, d in zip(computed_arr, decimals)]
    shown = shown[0] if len(shown) == 1 else "[" + ", ".join(shown) + "]"
    said = str(stated_list[0]) if len(stated_list) == 1 else "[" + ", ".join(map(str, stated_list)) + "]"
    print(f"{calc_id} {name}: computed {shown}; the note states {said} -> {verdict}")
    return verdict


def note_verdict(calc_id, name, kind, reason):
    """Record a verdict that is not a numeric comparison: "illustrative" or "inconsistent"."""
    if kind not in ("illustrative", "inconsistent"):
        raise ValueError(f"{calc_id}: note_verdict takes 'illustrative' or 'inconsistent', not {kind!r}.")
    print(f"{calc_id} {name}: {reason} -> {kind}")
    return kind
