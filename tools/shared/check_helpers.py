# shared helper: check_helpers (the exercise checks' messages; the same code in every chapter)
def _as_array(name, got):
    """The student's result as a NumPy array, or one clear sentence saying why it is not one."""
    if isinstance(got, (list, tuple)):
        raise AssertionError(f"{name} is a {type(got).__name__}; return a NumPy array (np.asarray) instead.")
    if torch.is_tensor(got):
        got = got.detach().cpu().numpy()
    if not isinstance(got, np.ndarray):
        raise AssertionError(f"{name} should be a NumPy array, got {type(got).__name__}.")
    return got


def check_form(name, got, shape, weights=False, masked=None, atol=1e-6):
    """Checks that give no value away: type, shape and NaN; for attention weights also >= 0,
    a sum of 1 along the last axis, and exactly 0 where `masked` is True (True = blocked)."""
    got = _as_array(name, got)
    if got.shape != tuple(shape):
        raise AssertionError(f"{name} has shape {got.shape}; expected {tuple(shape)}.")
    if np.isnan(got).any():
        raise AssertionError(f"{name} contains NaN; look for an overflow or a division by zero.")
    if weights and (got < -atol).any():
        raise AssertionError(f"{name} has a negative weight ({got.min():.3g}); softmax weights are never negative.")
    if weights and not np.allclose(got.sum(axis=-1), 1.0, rtol=0.0, atol=atol):
        raise AssertionError(f"{name} does not sum to 1 along the last axis; divide by the sum of the exponentials.")
    if masked is not None and (got[np.broadcast_to(np.asarray(masked, dtype=bool), got.shape)] != 0).any():
        raise AssertionError(f"{name} is not exactly 0 at the blocked positions; give them a score of -inf.")
    return got


def check_array(name, got, expected, atol=1e-6):
    """Compare a student's array with the expected one; fail with one clear sentence."""
    expected = np.asarray(expected)
    got = check_form(name, got, expected.shape)
    if not np.allclose(got, expected, rtol=0.0, atol=atol):
        worst = tuple(int(i) for i in np.unravel_index(np.argmax(np.abs(got - expected)), got.shape))
        raise AssertionError(f"{name} differs from the expected value at index {worst}: "
                             f"got {got[worst]:.6g}, expected {expected[worst]:.6g}.")


def check_weights(name, got, expected=None, masked=None, atol=1e-6):
    """Attention weights: the form checks (>= 0, rows sum to 1, 0 where blocked), then, when an
    expected array is given, the values."""
    shape = np.shape(expected) if expected is not None else np.shape(_as_array(name, got))
    check_form(name, got, shape, weights=True, masked=masked, atol=atol)
    if expected is not None:
        check_array(name, got, expected, atol=atol)
