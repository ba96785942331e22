"""One gradient check: the tensor kernels' comparison judges nan and inf as the diff check does."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.diff.numeric import _compare, elementwise_errors
from exprgraph.tensor.check import compare

VALUES = st.sampled_from([0.0, 1.0, -2.5, 1e-9, 3.0, np.nan, np.inf, -np.inf])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(VALUES, VALUES), min_size=1, max_size=8))
def test_both_checks_share_the_nan_inf_rule(pairs: list[tuple[float, float]]) -> None:
    got = np.array([p[0] for p in pairs])
    want = np.array([p[1] for p in pairs])
    err, special = elementwise_errors(got, want)
    both_finite = np.isfinite(got) & np.isfinite(want)
    agree = (np.isnan(got) & np.isnan(want)) | (np.isinf(got) & (got == want))
    assert special.tolist() == agree.tolist()
    with np.errstate(invalid="ignore"):
        assert np.array_equal(err[both_finite], np.abs(got - want)[both_finite])
    assert np.all(np.isinf(err[~both_finite & ~agree])) and np.all(err[agree] == 0)
    tensor = compare(got, want, "d")
    diff = _compare(got, want, rtol=1e-4, atol=1e-3)
    mismatched = bool(np.any(~both_finite & ~agree))
    if mismatched:  # a nan or an infinity against anything else fails both
        assert not tensor.ok and not diff.ok
    assert tensor.special == int(agree.sum())
    if not mismatched and np.array_equal(got[both_finite], want[both_finite]):
        assert tensor.ok and diff.ok  # equal finite values, nan/inf agreeing: both pass


def test_tensor_comparison_keeps_its_course_tolerance() -> None:
    # fail only where abs error >= 1e-3 and relative error >= 1e-4 (the diff check adds them instead)
    assert compare(np.array([1000.0]), np.array([1000.05]), "d").ok
    assert not compare(np.array([1000.0]), np.array([1000.5]), "d").ok
    assert compare(np.array([1e308]), np.array([-1e308]), "d").failures == 1  # the difference overflows
    assert not compare(np.array([1.0, 2.0]), np.array([1.0]), "d").ok
