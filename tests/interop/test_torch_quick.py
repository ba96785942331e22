"""The quick answers of :class:`TorchDims` (intervals of terms, ``exprgraph.dims.intervals``) and their twin.

The twin is the DimEnv. A TorchDims answers a relation or a bound from the intervals of the terms first, and
asks its DimEnv only when they leave it open; ``_quick = False`` (what handing out ``td.env`` does) asks the
DimEnv every time. On random terms and ranges both must agree wherever the DimEnv decides, a bound from the
intervals must be at least as tight as the DimEnv's, and the intervals may decide more (their soundness is
checked by brute force in ``tests/dims/test_intervals.py``).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arith_strategies import RELATIONS, dim_expressions
from exprgraph import const, get_op
from exprgraph.dims import clear_caches, dim_name
from exprgraph.interop.torch import TorchDims

NAMES = [dim_name(n) for n in ("s0", "s1", "p0")]
expressions = dim_expressions(NAMES, -2, 9, 8)
OPS = RELATIONS
_end = st.one_of(st.integers(-2, 6), st.none())
ranges = st.fixed_dictionaries(
    {n: st.tuples(st.integers(-2, 4), st.one_of(st.integers(0, 40), st.none())) for n in ("s0", "s1", "p0")}
).map(lambda d: {k: (lo, None if w is None else lo + w) for k, (lo, w) in d.items()})


def _both(given: dict) -> tuple[TorchDims, TorchDims]:
    clear_caches()
    quick, general = TorchDims(given), TorchDims(given)
    general._quick = False
    return quick, general


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, expressions, ranges, st.sampled_from(OPS))
def test_quick_relations_agree_with_the_dimenv(left: Any, right: Any, given: dict, op: str) -> None:
    quick, general = _both(given)
    rel = get_op(op)(left, right)
    q, g = quick.static_value(rel), general.static_value(rel)
    assert g is None or q == g, (rel, given, q, g)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, ranges)
def test_quick_bounds_are_at_least_as_tight_as_the_dimenv(t: Any, given: dict) -> None:
    quick, general = _both(given)
    (qlo, qhi), (glo, ghi) = quick.bound(t), general.bound(t)
    assert glo <= qlo and qhi <= ghi, (t, given, (qlo, qhi), (glo, ghi))
    sq, sg = quick.static_value(t), general.static_value(t)
    assert sg is None or sq == sg


def test_handing_out_the_env_turns_the_quick_answers_off() -> None:
    td = TorchDims({"s0": (2, None), "s1": (None, 5)})
    s0, s1 = NAMES[0], NAMES[1]
    assert td.static_value(get_op("lt")(s1, s0)) is None  # two names: settled by their ranges
    td.env.declare("s0 >= s1 + 10")  # facts relate the names: the DimEnv answers from now on
    assert td._quick is False and td.static_value(get_op("lt")(s1, s0)) is True


def test_the_dimenv_is_made_only_when_asked() -> None:
    td = TorchDims({"s0": (2, None), "s1": (0, 31)})
    s0, s1 = NAMES[0], NAMES[1]
    assert td.bound(get_op("add")(s1, get_op("mul")(const(32), s0))) == (64, float("inf"))
    assert td.static_value(get_op("lt")(get_op("mul")(s0, s1), const(0))) is False
    assert td._env is None  # the intervals answered both
    left = get_op("sub")(get_op("mul")(s0, get_op("add")(s1, const(2))), s0)
    assert td.static_value(get_op("gt")(left, get_op("mul")(s0, s1))) is True
    assert td._env is not None  # s0*(s1 + 2) - s0 > s0*s1: the polynomials decide


def _typed(value: Any) -> Any:
    return tuple((type(v).__name__, v) for v in value) if isinstance(value, tuple) else (type(value).__name__, value)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(expressions, expressions, st.sampled_from(OPS)), min_size=1, max_size=4), ranges, ranges)
def test_ranges_made_by_with_ranges_answer_as_fresh_ones(questions: list, first: dict, other: dict) -> None:
    # a TorchDims made by with_ranges shares the reading only: its answers are those of its own ranges
    clear_caches()
    partial = {k: v for k, v in other.items() if k != "p0"}  # p0 given in the first only: its default here
    root = TorchDims(first)
    child = root.with_ranges(other)
    grandchild = child.with_ranges(partial)
    back = grandchild.with_ranges(first)
    asked = [(t, get_op(op)(t, u)) for t, u, op in questions]
    for td, own in ((root, first), (child, other), (grandchild, partial), (back, first), (root, first)):
        fresh = TorchDims(own)
        for t, rel in asked:
            assert _typed(td.bound(t)) == _typed(fresh.bound(t)), (t, own)
            assert _typed(td.static_value(rel)) == _typed(fresh.static_value(rel)), (rel, own)


def test_with_ranges_answers_under_its_own_ranges_only() -> None:
    s0, s1 = NAMES[0], NAMES[1]
    t = get_op("add")(get_op("mul")(const(2), s0), const(1))  # 2*s0 + 1
    u = get_op("mul")(const(3), s1)  # 3*s1: s1 has the same range everywhere below
    root = TorchDims({"s0": (1, 10), "s1": (0, 4)})
    assert root.bound(t) == (3, 21) and root.bound(u) == (0, 12)
    narrow = root.with_ranges({"s0": (5, 6), "s1": (0, 4)})
    assert narrow.bound(t) == (11, 13) and narrow.bound(u) == (0, 12) and narrow._reader is root._reader
    unranged = narrow.with_ranges({"s1": (0, 4)})  # s0 has no range: unbounded
    assert unranged.bound(t) == (-float("inf"), float("inf")) and unranged.bound(u) == (0, 12)
    again = unranged.with_ranges({"s0": (1, 10), "s1": (0, 4)})
    assert again.bound(t) == (3, 21) and again.static_value(get_op("lt")(t, const(22))) is True
