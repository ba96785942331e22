"""Quick "undecided" answers (``exprgraph.dims.witness``): a relation said to hold at some values and fail at others.

Brute force over small finite ranges checks every claim of :func:`sometimes`: the relation holds at one point of
the box of ranges and fails at another. :func:`value_at` agrees with the reference evaluator wherever that one
is defined. Open ranges are checked on examples from torch's questions (padding, squares, products of sizes).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dims.test_intervals import OPS, _range_of, expressions, finite_ranges, truths
from exprgraph.dims import evaluate_expression, parse_expression
from exprgraph.dims.intervals import term_interval
from exprgraph.dims.ranges import INF
from exprgraph.dims.witness import meet, reached_ends, sometimes, value_at
from exprgraph.errors import EvaluationError


def _ask(op: str, left: Any, right: Any, given: dict, ends: dict | None = None) -> bool:
    """:func:`sometimes` as torch's bridge asks it: the sides' intervals computed first (in the memo); ``ends``
    shared between questions as the bridge shares it."""
    name_range = _range_of(given)
    memo: dict = {}
    bits: dict = {}
    term_interval(left, name_range, memo, bits)
    term_interval(right, name_range, memo, bits)
    return sometimes(op, left, right, name_range, memo, ends)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, expressions, finite_ranges, st.sampled_from(OPS))
def test_sometimes_is_witnessed_both_ways(left: Any, right: Any, given: dict, op: str) -> None:
    ends: dict = {}
    flipped = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}.get(op, op)
    if _ask(flipped, right, left, given, ends) != _ask(op, left, right, given, ends):  # (the second: values kept)
        raise AssertionError(("a relation and its mirror differ", op, left, right, given))
    if not _ask(op, left, right, given):
        return
    # (a division by 0 at a point: the claim is about the points where both sides are defined)
    assert truths(op, left, right, given, skip_undefined=True) == {True, False}, (op, left, right, given)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, finite_ranges, st.integers(0, 2**32))
def test_value_at_agrees_with_the_evaluator(t: Any, given: dict, seed: int) -> None:
    rng = random.Random(seed)
    point = {n: rng.randint(lo, hi) for n, (lo, hi) in given.items()}
    v = value_at(t, point.__getitem__)
    try:
        expected = evaluate_expression(t, point)
    except EvaluationError:
        assert v is None  # a divisor below 1 (0 here) is not evaluated
        return
    except ValueError:
        return  # (a power of a power: the reference evaluator reads dimension text, which has no power)
    if v is not None:
        assert v == expected, (t, point)


def test_torch_questions_that_depend_on_the_values() -> None:
    open_sizes = {"a": (2, None), "b": (2, None), "c": (33, None)}
    for op, left, right in [
        ("ne", "a", "2*b"),  # a takes every integer >= 2: 4 among them
        ("ne", "a*a", "2*b"),  # both reach 4 at their least values
        ("ne", "8*a", "b"),
        ("ne", "c*c", "4096"),  # c == 64: found by bisection over c (c*c rises with c)
        ("ne", "((c - 1)//2)*((c - 1)//2) + 2*((c - 1)//2)", "1023"),  # c == 63
        ("lt", "b*((c - 1)//2)*((c - 1)//2) + 1023", "1023*b + 33*((c - 1)//2)"),  # true at the least, false far
    ]:
        assert _ask(op, parse_expression(left), parse_expression(right), open_sizes), (op, left, right)


def test_relations_that_hold_everywhere_are_not_called_undecided() -> None:
    given = {"a": (2, None), "b": (2, None), "c": (33, None)}
    for op, left, right in [
        ("ne", "c*c", "4097"),  # no square
        ("ne", "a*a", "3"),
        ("lt", "a", "a*b"),
        ("ne", "2*a", "2*a + 1"),
        ("eq", "(a*b) % a", "0"),
    ]:
        assert not _ask(op, parse_expression(left), parse_expression(right), given), (op, left, right)


def test_meet_needs_exact_sides_over_other_names() -> None:
    dense = (2, float("inf"), True, 1, 5)  # a name >= 2: exact, increasing, dense
    even = (4, float("inf"), True, 2, 1)  # 2*b, b >= 2: exact, increasing, not dense
    assert meet("eq", dense, even) and meet("ne", even, dense)
    assert not meet("lt", dense, even)  # orders are settled elsewhere
    assert not meet("eq", dense, (4, float("inf"), True, 1, 1))  # a name on both sides
    assert not meet("eq", dense, (4, float("inf"), False, 2, 1))  # not exact
    assert not meet("eq", (6, 9, True, 1, 1), (7, 8, True, 2, 5))  # ends 6, 9 outside [7, 8]; 7, 8 may be missed


def _reached(t: Any, given: dict) -> tuple[Any, bool]:
    """The interval of ``t`` and whether :func:`reached_ends` says both its ends are reached."""
    name_range = _range_of(given)
    memo: dict = {}
    i = term_interval(t, name_range, memo, {})
    return i, bool(i) and reached_ends(t, i, name_range, memo, {})


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, finite_ranges)
def test_reached_ends_are_the_least_and_the_greatest_value(t: Any, given: dict) -> None:
    i, reached = _reached(t, given)
    if not reached:
        return
    values = []
    for point in itertools.product(*(range(given[n][0], given[n][1] + 1) for n in "abc")):
        try:
            values.append(evaluate_expression(t, dict(zip("abc", point, strict=True))))
        except (EvaluationError, ValueError):
            return
    assert (min(values), max(values)) == (i[0], i[1]), (t, given, i)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, st.sampled_from([(2, None), (None, 3), (None, None), (0, None)]))
def test_an_open_end_said_reached_is_passed_far_out(t: Any, open_range: tuple) -> None:
    given = {"a": open_range, "b": (1, 4), "c": (-2, None)}
    i, reached = _reached(t, given)
    if not reached:
        return
    values = []
    choices = {}
    for n, (lo, hi) in given.items():  # the ends, 0, and points far inside an open end (2**20: the witnesses' own)
        base_lo, base_hi = 0 if lo is None else lo, 0 if hi is None else hi
        near = (lo, hi, 0, base_lo + 2**20, base_hi - 2**20, base_lo + 10**9, base_hi - 10**9)
        choices[n] = [v for v in near if v is not None and (lo is None or v >= lo) and (hi is None or v <= hi)]
    for point in itertools.product(*(choices[n] for n in "abc")):
        try:
            values.append(evaluate_expression(t, dict(zip("abc", point, strict=True))))
        except (EvaluationError, ValueError):
            continue
    if i[0] == -INF:
        assert min(values) < -1000, (t, i)
    elif values:
        assert i[0] in values, (t, i)
    if i[1] == INF:
        assert max(values) > 1000, (t, i)
    elif values:
        assert i[1] in values, (t, i)


def test_torch_bounds_with_open_ends_are_reached() -> None:
    given = {"p0": (0, 14), "p1": (0, None), "p2": (0, None), "p3": (0, 63), "s": (33, None)}
    f = "((s - 1)//2)"
    text = f"64*p0*{f}*{f} + 128*p0*{f} + 64*p0 + 128*p1*{f} + 128*p1 + 128*p2 + p3 - 64*{f} - 128"
    i, reached = _reached(parse_expression(text), given)
    assert (i[0], i[1], reached) == (-INF, INF, True)  # below: -64*f - 128 (p = 0); above: 128*p2
    i, reached = _reached(parse_expression("p1 - p1"), given)
    assert not reached  # (-inf, inf) but always 0: p1 is on both sides
    i, reached = _reached(parse_expression(f"{f}*{f} - 3*{f}"), given)
    assert i[0] == -INF and not reached  # f*f - 3*f >= 208 (f >= 16): the interval's open lower end is not reached


def test_a_sum_that_one_name_takes_past_every_bound() -> None:
    given = {"p0": (0, None), "p1": (0, 31), "s": (2, 512)}
    text = "32*s*(p0//s) + 16*s*(p1//16) + 16*(p0 % s) + p1 % 16"  # torch's index arithmetic (bert, training)
    i, reached = _reached(parse_expression(text), given)
    assert (i[0], i[1], reached) == (0, INF, True)  # s == 2, p1 == 0: 64*(p0//2) + 16*(p0 % 2) grows with p0
    i, reached = _reached(parse_expression("p0 - 2*(p0//2)"), given)
    assert not reached  # p0 % 2 in disguise: its interval (-inf, inf) is far from [0, 1]


def test_a_sum_of_monomials_that_all_rise_with_one_name() -> None:
    given = {"i": (None, None), "p0": (0, 255), "s": (33, 64)}
    f = "((s - 1)//2)"
    text = f"i + (i//3)*{f} - 2*(i//3) + 2*(p0 % ({f} + 1)) - {f}"  # torch's indirect indexing (resnet, training)
    i, reached = _reached(parse_expression(text), given)
    assert (i[0], i[1], reached) == (-INF, INF, True)  # s == 33, p0 == 0: i + 14*(i//3) - 16 rises with i
    i, reached = _reached(parse_expression("i - 16*(i//3)"), given)
    assert (i[0], i[1], reached) == (-INF, INF, False)  # i rises, -16*(i//3) falls: not shown (it is reached)
    i, reached = _reached(parse_expression("i*i - 2*i"), {"i": (0, None)})
    assert not reached  # (-inf, inf) from the intervals, but i*i - 2*i >= -1: i*i rises, -2*i falls
