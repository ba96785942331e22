"""Sampled points before the proof search (``prove.open_at_points``, switch ``prove.SAMPLE_POINTS``).

A relation the ranges leave open is evaluated at a few points of the ranges first: true at one point and false
at another (for eq/ne: no sign everywhere), no proof exists, so the proof search is skipped. The answers must be
those of the search run every time (the same True/False/None), and every point must be a value the ranges allow.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arith_strategies import RELATIONS, dim_expressions
from exprgraph import get_op
from exprgraph.dims import DimEnv, clear_caches, dim_name, evaluate_expression
from exprgraph.dims import prove as prove_module
from exprgraph.dims.prove import open_at_points
from exprgraph.dims.ring import p_sub

NAMES = [dim_name(n) for n in ("a", "b", "c")]
expressions = dim_expressions(NAMES, -3, 9, 10)
OPS = RELATIONS
_width = st.one_of(st.integers(0, 6), st.just(None))
ranges = st.fixed_dictionaries(
    {
        n: st.tuples(st.integers(-3, 5), _width).map(lambda r: (r[0], None if r[1] is None else r[0] + r[1]))
        for n in "abc"
    }
)


@contextmanager
def points_off() -> Iterator[None]:
    """The proof search for every open relation while the block runs."""
    assert prove_module.SAMPLE_POINTS is True
    prove_module.SAMPLE_POINTS = False
    try:
        yield
    finally:
        prove_module.SAMPLE_POINTS = True


def _answers(left: Any, right: Any, given: dict) -> list[Any]:
    """Each relation's answer on cold caches (or the error's type)."""
    out = []
    for op in OPS:
        clear_caches()
        try:
            out.append(DimEnv(given).ask(op, left, right) if op in ("ge", "gt") else _known(op, left, right, given))
        except Exception as err:  # the search must fail alike
            out.append(type(err))
    return out


def _known(op: str, left: Any, right: Any, given: dict) -> Any:
    return DimEnv(given).statically_known(get_op(op)(left, right))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, expressions, ranges)
def test_sampled_points_change_no_answer(left, right, given) -> None:
    sampled = _answers(left, right, given)
    with points_off():
        searched = _answers(left, right, given)
    assert sampled == searched


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, expressions, ranges, st.sampled_from(OPS))
def test_open_at_points_is_open_at_points_of_the_ranges(left, right, given, op) -> None:
    # where it says open, brute force over the (bounded part of the) ranges finds the values it claims
    clear_caches()
    env = DimEnv(given)
    try:
        d = p_sub(env.poly(left), env.poly(right))
    except Exception:
        return
    if not open_at_points(op, d, env.context):
        return
    grid = [range(lo, (hi if hi is not None else lo + 8) + 1) for lo, hi in (given[n] for n in "abc")]
    seen: set[bool] = set()
    signs: set[int] = set()
    for values in itertools.product(*grid):
        point = dict(zip("abc", values, strict=True))
        try:
            v = evaluate_expression(left, point) - evaluate_expression(right, point)
        except Exception:
            return  # undefined somewhere (x//0): the simplifier's polynomial may take any value there
        seen.add({"lt": v < 0, "le": v <= 0, "gt": v > 0, "ge": v >= 0, "eq": v == 0, "ne": v != 0}[op])
        signs.add((v > 0) - (v < 0))
    # the grid may miss the far point open_at_points used; when it covers the range, both answers occur
    if all(hi is not None for _, hi in given.values()):
        if op in ("eq", "ne"):
            assert signs - {0} and (signs & {0, -1}) and (signs & {0, 1})
        else:
            assert seen == {True, False}


def test_the_points_skip_the_search_for_an_open_product() -> None:
    env = DimEnv({"s0": (2, None), "s1": (2, None)})
    d = env.poly("s0*s1 - 4096")
    assert open_at_points("gt", d, env.context) and open_at_points("ne", d, env.context)
    assert env.statically_known("s0*s1 > 4096") is None
    assert env.statically_known("s0*s1 >= s0 + s1") is True  # decided by the search: no point refutes it
    assert not open_at_points("ge", p_sub(env.poly("s0*s1"), env.poly("s0 + s1")), env.context)


def test_atoms_without_a_value_are_not_sampled() -> None:
    env = DimEnv({"a": (0, 9)})
    d = env.poly(get_op("abs")(NAMES[0] - 5))  # abs is an atom without argument polynomials: no value
    assert not open_at_points("gt", d, env.context)
