"""Intervals of dimension terms (``exprgraph.dims.intervals``): sound everywhere, exact where they say so.

Brute force over small finite ranges checks every claim: every value lies in the interval; an exact interval's
ends are the least and the greatest value; a dense one takes every integer between them; a node said to be
nondecreasing (nonincreasing) in each name is, one step of one name at a time; a relation said to hold always
(never) holds at every point (at none); one said to hold sometimes holds at one point and fails at another; the
interval of a difference holds every value of it. Open ranges are checked at sampled points.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exprgraph import const, get_op
from exprgraph.dims import dim_name, evaluate_expression, parse_expression
from exprgraph.dims.intervals import (
    ALWAYS,
    ASK,
    DEC,
    DENSE,
    INC,
    NEVER,
    NO_INTERVAL,
    SOMETIMES,
    difference,
    quick_bound,
    quick_relation,
    relation_of_intervals,
    summands,
    term_interval,
)
from exprgraph.dims.ranges import INF
from exprgraph.errors import EvaluationError

NAMES = [dim_name(n) for n in ("a", "b", "c")]
_BINARY = ["add", "sub", "mul", "floordiv", "mod", "maximum", "minimum", "ceil_div"]
_leaves = st.one_of(st.sampled_from(NAMES), st.integers(-3, 9).map(const))
OPS = ("lt", "le", "gt", "ge", "eq", "ne")
CHECK = {
    "lt": lambda x, y: x < y,
    "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y,
    "ge": lambda x, y: x >= y,
    "eq": lambda x, y: x == y,
    "ne": lambda x, y: x != y,
}


def _extend(children: Any) -> Any:
    binary = st.tuples(st.sampled_from(_BINARY), children, children).map(lambda t: get_op(t[0])(t[1], t[2]))
    square = children.map(lambda t: get_op("pow")(t, const(2)))
    return st.one_of(binary, binary, children.map(lambda t: -t), children.map(abs), square)


expressions = st.recursive(_leaves, _extend, max_leaves=8)
finite_ranges = st.fixed_dictionaries(
    {n: st.tuples(st.integers(-3, 5), st.integers(0, 5)).map(lambda r: (r[0], r[0] + r[1])) for n in "abc"}
)


def truths(op: str, left: Any, right: Any, given: dict, *, skip_undefined: bool = False) -> set[bool] | None:
    """The values of ``left op right`` at every point of the finite box ``given`` of a, b, c; a point where a side is
    undefined is skipped with ``skip_undefined``, else the answer is None."""
    # (with skip_undefined, ValueError too: the evaluator's message could not print a power)
    undefined = (EvaluationError, ValueError) if skip_undefined else (EvaluationError,)
    seen: set[bool] = set()
    for point in itertools.product(*(range(given[n][0], given[n][1] + 1) for n in "abc")):
        values = dict(zip("abc", point, strict=True))
        try:
            seen.add(CHECK[op](evaluate_expression(left, values), evaluate_expression(right, values)))
        except undefined:
            if not skip_undefined:
                return None
    return seen


def _range_of(given: Mapping[str, tuple[int | None, int | None]]) -> Any:
    def name_range(name: str) -> tuple[int | float, int | float]:
        lo, hi = given[name]
        return (-INF if lo is None else lo, INF if hi is None else hi)

    return name_range


def _table(t: Any, given: dict[str, tuple[int, int]]) -> dict[tuple[int, ...], int] | None:
    """The value of ``t`` at every point of the box of ranges (None when it is undefined at a point: a division by
    0)."""
    out = {}
    for point in itertools.product(*(range(given[n][0], given[n][1] + 1) for n in "abc")):
        try:
            out[point] = evaluate_expression(t, dict(zip("abc", point, strict=True)))
        except EvaluationError:
            return None
    return out


def _values(t: Any, given: dict[str, tuple[int, int]]) -> list[int] | None:
    """Every value of ``t`` over the box of ranges (None when it is undefined at a point: a division by 0)."""
    table = _table(t, given)
    return None if table is None else list(table.values())


def _check_directions(table: dict[tuple[int, ...], int], flags: int) -> None:
    """A node said nondecreasing (nonincreasing) in each name is: one step of one name at a time."""
    for point, v in table.items():
        for k in range(3):
            step = (*point[:k], point[k] + 1, *point[k + 1 :])
            if step in table:
                if flags & INC:
                    assert v <= table[step], (point, step)
                if flags & DEC:
                    assert v >= table[step], (point, step)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, finite_ranges)
def test_every_value_is_inside_and_an_exact_interval_is_reached(t: Any, given: dict) -> None:
    i = term_interval(t, _range_of(given), {}, {})
    if not i:
        return
    table = _table(t, given)
    assert table is not None, "a term with an interval is defined everywhere (no divisor below 1)"
    values = list(table.values())
    lo, hi, exact, _, flags = i
    assert lo <= min(values) and max(values) <= hi
    if exact:
        assert (lo, hi) == (min(values), max(values))
        assert quick_bound(t, _range_of(given), {}, {}) == (lo, hi)
    if flags & DENSE:
        assert exact and set(range(lo, hi + 1)) <= set(values)
    _check_directions(table, flags)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, expressions, finite_ranges, st.sampled_from(OPS))
def test_a_decided_relation_holds_as_said(left: Any, right: Any, given: dict, op: str) -> None:
    answer = quick_relation(op, left, right, _range_of(given), {}, {})
    if answer == ASK:
        return
    seen = truths(op, left, right, given)
    if seen is None:
        return  # (not met: a side with an interval is defined everywhere)
    assert seen == {NEVER: {False}, ALWAYS: {True}, SOMETIMES: {True, False}}[answer], (op, left, right, given)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, expressions, expressions, finite_ranges, st.sampled_from(OPS))
def test_common_factors_divide_out_soundly(x: Any, y: Any, z: Any, given: dict, op: str) -> None:
    # x*y OP x*z, x*y OP x, (x*y) % (x*z): the relations with a common factor, decided as said
    mul, mod = get_op("mul"), get_op("mod")
    test_a_decided_relation_holds_as_said.hypothesis.inner_test(mul(x, y), mul(z, x), given, op)  # type: ignore[attr-defined]
    test_a_decided_relation_holds_as_said.hypothesis.inner_test(mul(x, y), x, given, op)  # type: ignore[attr-defined]
    test_every_value_is_inside_and_an_exact_interval_is_reached.hypothesis.inner_test(mod(y, mul(x, y)), given)  # type: ignore[attr-defined]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, st.sampled_from([(2, None), (None, 3), (None, None), (0, None)]), st.integers(0, 2**32))
def test_open_ranges_hold_every_sampled_value(t: Any, open_range: tuple, seed: int) -> None:
    given = {"a": open_range, "b": (1, 4), "c": (-2, None)}
    i = term_interval(t, _range_of(given), {}, {})
    if not i:
        return
    rng = random.Random(seed)
    for _ in range(30):
        point = {}
        for n, (lo, hi) in given.items():
            low = -(10**6) if lo is None else lo
            high = 10**6 if hi is None else hi
            point[n] = rng.choice([low, high, rng.randint(low, high), low + 1 if low < high else low])
        try:
            v = evaluate_expression(t, point)
        except EvaluationError:
            continue
        assert i[0] <= v <= i[1], (t, point, i)


def test_names_and_sums_are_exact_and_repeats_are_not() -> None:
    given = {"a": (2, None), "b": (0, 31), "c": (1, 1)}
    memo: dict = {}
    bits: dict = {}
    assert quick_bound(parse_expression("b + 32*a"), _range_of(given), memo, bits) == (64, INF)
    assert quick_bound(parse_expression("a*a"), _range_of(given), memo, bits) == (4, INF)  # nondecreasing in a
    assert quick_bound(parse_expression("a*a - a"), _range_of(given), memo, bits) is None  # not monotone in a
    assert term_interval(parse_expression("a - a"), _range_of(given), memo, bits)[:3] == (-INF, INF, False)
    assert quick_bound(parse_expression("(a - 1)//2"), _range_of(given), memo, bits) == (0, INF)
    assert quick_bound(parse_expression("(a - 1) % 8"), _range_of(given), memo, bits) == (0, 7)  # every residue
    assert quick_bound(parse_expression("(b + 5) % 8"), _range_of(given), memo, bits) == (0, 7)  # wraps: 0, 7 met
    assert quick_bound(parse_expression("(b // 8) % 8"), _range_of(given), memo, bits) == (0, 3)  # no wrap
    assert quick_bound(parse_expression("(2*b) % 8"), _range_of(given), memo, bits) is None  # not dense: open
    assert quick_bound(parse_expression("b*a + 3*a*a - 1"), _range_of(given), memo, bits) == (11, INF)
    mul, b = get_op("mul"), NAMES[1]  # (-1)*b is nonincreasing in b
    assert term_interval(mul(const(-1), b), _range_of(given), memo, bits)[4] & (INC | DEC) == DEC  # flipped
    assert quick_bound(parse_expression("c*7"), _range_of(given), memo, bits) == (7, 7)


def test_a_divisor_that_may_be_zero_has_no_interval() -> None:
    given = {"a": (0, 9), "b": (0, 4), "c": (-1, 3)}
    for text in ("a // b", "a % b", "CeilToInt(a, b)", "a // c", "a % (b - 1)"):
        assert term_interval(parse_expression(text), _range_of(given), {}, {}) == NO_INTERVAL, text


def test_relations_decided_and_settled() -> None:
    given = {"a": (2, None), "b": (2, None), "c": (0, None)}
    r = _range_of(given)

    def ask(text: str) -> int:
        left, op, right = text.split(" ")
        ops = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}
        return quick_relation(ops[op], parse_expression(left), parse_expression(right), r, {}, {})

    assert ask("a*b < 2") == NEVER and ask("1 < a") == ALWAYS and ask("a == 1") == NEVER
    assert ask("a < b") == SOMETIMES  # two names: each takes every integer of its range
    assert ask("(a-1)//2 == 0") == SOMETIMES  # an end of one side (0) is reached by both
    assert ask("(c-1)//2 == 0") == ASK  # 0 lies inside [-1, inf): both may not be reached
    assert ask("b < a*b") == ALWAYS  # b >= 1 divided out: 1 < a
    assert ask("a*b == a") == NEVER and ask("a*b*b >= 2*a*b") == ALWAYS and ask("c*a == c") == ASK  # (c may be 0)
    assert ask("a%(a*b) != 0") == ALWAYS  # 0 <= a < a*b: a % (a*b) == a
    assert ask("96%(96*b) == 0") == NEVER
    assert ask("a*a < b") == SOMETIMES  # a*a: nondecreasing in a, exact; b: independent of it
    assert ask("a*a-a < b") == ASK  # a*a - a: not monotone in a, nothing common: the polynomials decide


def test_relation_of_intervals_at_infinite_ends() -> None:
    assert relation_of_intervals("lt", (-INF, 3), (4, INF)) is True
    assert relation_of_intervals("ge", (-INF, 3), (4, INF)) is False
    assert relation_of_intervals("eq", (0, INF), (0, INF)) is None
    assert relation_of_intervals("ne", (5, 5), (6, INF)) is True
    assert math.isinf(term_interval(parse_expression("a"), _range_of({"a": (None, None)}), {}, {})[0])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, expressions, finite_ranges)
def test_the_difference_of_two_terms_holds_every_value(a: Any, b: Any, given: dict) -> None:
    memo: dict = {}
    bits: dict = {}
    if not term_interval(a - b, _range_of(given), memo, bits):
        return
    d = difference(a, b, memo)
    if d is None:
        return
    for v in _values(a - b, given) or []:
        assert d[0] <= v <= d[1], (a, b, d, v)


def test_monotone_sides_over_one_name_are_decided() -> None:
    given = {"a": (2, None), "b": (9, None), "c": (0, 15)}
    r = _range_of(given)

    def ask(op: str, left: str, right: str) -> int:
        return quick_relation(op, parse_expression(left), parse_expression(right), r, {}, {})

    f = "((b - 1)//4)"
    assert ask("ne", f"{f}*{f} + 2*{f}", "0") == ALWAYS  # f >= 2: nondecreasing in b, least value 8
    assert ask("lt", "4095", f"{f}*{f} + 2*{f}") == SOMETIMES  # exact over b, 0 among neither end: settled
    assert ask("eq", f"(64*{f} + 64) % (64*{f}*{f} + 128*{f} + 64)", "0") == NEVER  # a < q: a % q == a >= 192
    assert ask("lt", "a + 1", "a") == NEVER  # a + 1 - a == 1
    assert quick_bound(parse_expression("(c // 1) % 8"), r, {}, {}) == (0, 7)  # ModularIndexing(c, 1, 8)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, finite_ranges, st.sampled_from([1, -1]))
def test_summands_add_up_to_the_term(t: Any, given: dict, sign: int) -> None:
    parts = summands(t, sign, 64)
    assert parts is not None  # (at most 8 leaves: at most 8 parts)
    assert all(p.op.name not in ("add", "sub", "neg") and s in (1, -1) for p, s in parts)
    try:
        whole = _table(t, given)
        values = [_table(p, given) for p, _ in parts]
    except ValueError:  # (the evaluator's message could not print a power)
        return
    if whole is None or any(v is None for v in values):
        return
    for point, v in whole.items():
        assert sign * v == sum(s * table[point] for (_, s), table in zip(parts, values, strict=True)), (t, parts)


def test_summands_stop_past_the_limit_on_shared_sums() -> None:
    a = dim_name("a")
    t = a
    for _ in range(40):  # 2**40 parts as a tree, 41 nodes as a DAG
        t = t + t
    assert summands(t, 1, 64) is None
    parts = summands(a - (a + 3), -1, 3)  # -(a - (a + 3)) == -a + a + 3
    assert parts is not None and sorted((str(p), s) for p, s in parts) == [("3", 1), ("a", -1), ("a", 1)]
    assert summands(a - (a + 3), -1, 2) is None
