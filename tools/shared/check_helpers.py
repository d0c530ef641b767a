# shared helper: check_helpers (the exercise checks' messages; the same code in every chapter)
# Every value a check looks at is also recorded as plain data (numbers, shapes, types); when a grader runs a
# check, its last line sends the record out of the notebook as one output, and the grader compares it there
# with the model solution's record, outside the student's code (tools/grading/grading_runtime.py). The checks
# below only advise; the comparison outside decides the score. They trust nothing that a cell run after this one could change. They accept exactly a NumPy
# array, a torch tensor or a Python number (no subclass, whose comparisons could be rigged), read its
# values with the base types' own methods, bound here as default arguments before any exercise runs,
# and compare plain Python numbers with their own arithmetic (no np.allclose, which a cell could replace).
def _as_values(name, got, _type=type, _list=list, _float=float, _len=len, _plain=(int, float, bool),
               _arrays={np.ndarray: np.ndarray.tolist, torch.Tensor: torch.Tensor.tolist},
               _numbers=(int, float, bool, np.float64, np.float32, np.int64, np.int32, np.bool_)):
    """The student's result as (shape, flat list of Python floats), or one clear sentence saying why not."""
    kind = _type(got)
    if kind is _list or kind is tuple:
        raise AssertionError(f"{name} is a {kind.__name__}; return a NumPy array (np.asarray) instead.")
    if kind in _numbers:
        return (), [_float(got)]
    if kind not in _arrays:
        raise AssertionError(f"{name} should be a NumPy array, a torch tensor or a number, got {kind.__name__}.")
    nested = _arrays[kind](got)                       # nested lists of Python numbers
    shape, level = [], nested
    while _type(level) is _list:
        shape.append(_len(level))
        level = level[0] if level else None
    flat, stack = [], [nested]
    while stack:
        item = stack.pop()
        if _type(item) is _list:
            stack.extend(item[::-1])
        elif _type(item) in _plain:
            flat.append(_float(item))
        else:
            raise AssertionError(f"{name} holds a {_type(item).__name__}; it should hold numbers only.")
    return tuple(shape), flat


def _index(k, shape):
    """The position (i, j, ...) of entry k of an array of this shape, counted in row-major order."""
    position = []
    for size in shape[::-1]:
        position.insert(0, k % size)
        k //= size
    return tuple(position)


def _checked_values(name, got, shape, weights=False, masked=None, atol=1e-6, _abs=abs, _range=range, _len=len,
                    _blocked=lambda masked, shape: np.broadcast_to(np.asarray(masked, dtype=bool), shape).ravel().tolist()):
    """check_form's checks; returns the shape and the values as a flat list of Python floats."""
    got_shape, values = _as_values(name, got)
    if got_shape != tuple(shape):
        raise AssertionError(f"{name} has shape {got_shape}; expected {tuple(shape)}.")
    row = got_shape[-1] if got_shape else 1
    for k in _range(_len(values)):
        if values[k] != values[k]:
            raise AssertionError(f"{name} contains NaN; look for an overflow or a division by zero.")
        if weights and values[k] < -atol:
            raise AssertionError(f"{name} has a negative weight ({values[k]:.3g}); softmax weights are never negative.")
    for start in _range(0, _len(values) if weights else 0, row):
        total = 0.0
        for k in _range(start, start + row):
            total += values[k]
        if _abs(total - 1.0) > atol:
            raise AssertionError(f"{name} does not sum to 1 along the last axis; divide by the sum of the exponentials.")
    if masked is not None:
        blocked = _blocked(masked, got_shape)
        for k in _range(_len(values)):
            if blocked[k] and values[k] != 0:
                raise AssertionError(f"{name} is not exactly 0 at the blocked positions; give them a score of -inf.")
    return got_shape, values


_ANSWERS, _IN_HIDDEN = [], [False]        # what this check cell's checks looked at; whether in hidden tests


def answer(name, got, atol=1e-6, rtol=0.0, weights=False, masked=None, values=True, goal=None, _type=type, _str=str,
           _int_types=(int, np.int64, np.int32), _float=float, _answers=_ANSWERS, _hidden=_IN_HIDDEN):
    """Record a graded value, without judging it here: the grader compares it outside the kernel with the
    model solution's value for the same name, within atol + rtol * |expected| (values=False: only its
    type, shape and NaN, and for weights >= 0, rows summing to 1 and 0 where `masked` is True). Where many
    values are right, `goal` states what the grader computes from it instead (grading_runtime.GOALS), e.g.
    {"length_at_most": 3, "softmax_of": K, "index": 0, "at_least": 0.9}. Returns nothing (a cell that ends
    with it displays nothing)."""
    try:
        shape, flat = _as_values(name, got)
        record = {"type": "int" if _type(got) in _int_types else "number" if shape == () else "array",
                  "shape": [*shape], "values": [v if v == v and _abs_le(v) else _str(v) for v in flat]}
    except AssertionError as error:
        record = {"error": _str(error)}
    record.update(atol=_float(atol), rtol=_float(rtol), weights=bool(weights), compare_values=bool(values),
                  hidden=_hidden[0])
    if goal is not None:
        record["goal"] = {key: np.asarray(value).tolist() for key, value in goal.items()}
    if masked is not None:                   # the grader reads the model solution's record, whose shape is right
        try:
            record["masked"] = np.broadcast_to(np.asarray(masked, dtype=bool), np.shape(got)).ravel().tolist()
        except ValueError:
            record["masked"] = None
    _answers.append([_str(name), record])


def _abs_le(v, _limit=1.7976931348623157e308):
    return -_limit <= v <= _limit                                  # finite (JSON has no inf or nan)


def emit_answers(grade_id, _answers=_ANSWERS, _display=None):
    """The record of this check cell as one output of its own (a grader's last line of every check)."""
    from IPython.display import display
    (_display or display)({"application/vnd.attention-book.answers+json": {"grade_id": grade_id, "answers": [*_answers]}},
                          raw=True)
    _answers.clear()


def check_form(name, got, shape, weights=False, masked=None, atol=1e-6,
               _plain_array=lambda values, shape: np.array(values, dtype=float).reshape(shape)):
    """Checks that give no value away: type, shape and NaN; for attention weights also >= 0,
    a sum of 1 along the last axis, and exactly 0 where `masked` is True (True = blocked).
    Returns the checked values as a new float array (a plain one, whatever `got` was)."""
    answer(name, got, atol=atol, weights=weights, masked=masked, values=False)
    got_shape, values = _checked_values(name, got, shape, weights, masked, atol)
    return _plain_array(values, got_shape)


def check_array(name, got, expected, atol=1e-6):
    """Compare a student's array (or number) with the expected one; fail with one clear sentence."""
    answer(name, got, atol=atol)
    _same_values(name, got, expected, atol)


def _same_values(name, got, expected, atol, _abs=abs, _range=range, _len=len,
                 _reference=lambda expected: np.asarray(expected, dtype=float)):
    expected = _reference(expected)
    shape, values = _checked_values(name, got, expected.shape)
    wanted = expected.ravel().tolist()
    for k in _range(_len(values)):
        got_k, want_k = values[k], wanted[k]
        if not (got_k == want_k or _abs(got_k - want_k) <= atol):      # ==: the same infinity on both sides
            at = f" at index {_index(k, shape)}" if shape else ""
            raise AssertionError(f"{name} differs from the expected value{at}: got {got_k:.6g}, expected {want_k:.6g}.")


def check_weights(name, got, expected=None, masked=None, atol=1e-6):
    """Attention weights: the form checks (>= 0, rows sum to 1, 0 where blocked), then, when an
    expected array is given, the values."""
    answer(name, got, atol=atol, weights=True, masked=masked, values=expected is not None)
    shape = np.shape(expected) if expected is not None else _as_values(name, got)[0]
    _checked_values(name, got, shape, weights=True, masked=masked, atol=atol)
    if expected is not None:
        _same_values(name, got, expected, atol)


def check_equal(name, got, expected):
    """An exact result (a count, a mask, a flag): the same shape and every value equal."""
    check_array(name, got, expected, atol=0.0)
