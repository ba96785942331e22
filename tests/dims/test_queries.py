"""Ranges and queries: bounds, relations, equality, divisibility. Answers are checked on every point of small boxes."""

from __future__ import annotations

import itertools
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exprgraph import const, get_op
from exprgraph.dims import (
    DimEnv,
    DimExpressionError,
    bound,
    clear_caches,
    compare_expressions,
    dim_name,
    divisible,
    equal,
    evaluate_expression,
    exact_div,
    parse_expression,
    parse_relation,
    ranges_from_expressions,
    simplify_expression,
    statically_known,
    unparse,
)
from exprgraph.errors import EvaluationError

INF = math.inf

# -- examples ---------------------------------------------------------------------------------------------


def test_bounds():
    assert bound("x%8") == (0, 7)
    assert bound("x//4 + 1") == (1, INF)
    assert bound("-x") == (-INF, 0)
    assert bound("s0//2", {"s0": (2, 100)}) == (1, 50)
    assert bound("s0*s1 - s0", {"s0": (2, 100), "s1": (1, 64)}) == (0, 6300)  # as s0*(s1-1)
    assert bound("ModularIndexing(x, 64, s)", {"s": (1, 512)}) == (0, 511)
    assert bound("max(s0, s1) - 1", {"s0": (2, 9), "s1": (4, 5)}) == (3, 8)
    assert bound("7") == (7, 7)


def test_statically_known():
    env = DimEnv({"s0": (2, 2**31 - 1), "s1": (1, 64)})
    assert env.statically_known("s0 >= 2") is True
    assert env.statically_known("s0 > 2") is None
    assert env.statically_known("s0 < 2") is False
    assert env.statically_known("Eq(s0, 1)") is False
    assert env.statically_known("Ne(s0, 1)") is True
    assert env.statically_known("s0*s1 >= s0") is True
    assert env.statically_known("s0 % s1 < s1") is True
    assert env.statically_known("2*s0 == 2*s1 + 1") is False  # parity
    assert env.statically_known(dim_name("s0") >= 2) is True  # a core relational term
    assert env.statically_known(get_op("eq")(dim_name("s0"), const(0))) is False


def test_equal_divisible_compare_exact_div():
    assert equal("(a+b)*c", "a*c + b*c") is True
    assert equal("x//2 + (x+1)//2", "x") is True
    assert equal("x", "y") is None
    assert equal("x+1", "x") is False
    assert divisible("4*x + 8*y", 4) is True
    assert divisible("4*x + 2", 4) is False
    assert divisible("x*y", "y") is True
    assert divisible("x", 4) is None
    assert divisible("s0", 4, {"s0": (1, 3)}) is False  # 0 < s0 < 4
    assert compare_expressions("x + 1", "x") == ">"
    assert compare_expressions("x//2", "x") == "<="
    assert compare_expressions("x", "x") == "=="
    assert compare_expressions("2*x", "2*y + 1") == "!="
    assert compare_expressions("x", "y") is None
    assert exact_div("6*x*y + 3*y", "3*y") == "2*x+1"
    assert exact_div("x*x - 1", "x - 1") == "x+1"
    assert exact_div("(a+b)*c", "a+b") == "c"
    assert exact_div("x + 1", 2) is None
    assert exact_div("4*x", 2) == "2*x"
    assert exact_div(dim_name("x") * 6, 3) is const(2) * dim_name("x")  # a term gives a term


def test_simplify_under_ranges():
    env = DimEnv({"s0": (2, 2**31 - 1), "s1": (-4, 4)})
    assert env.simplify("max(s0, 1)") == "s0"
    assert env.simplify("s0 % 2**31") == "s0"
    assert env.simplify("s0 // 2**31") == 0
    assert env.simplify("max(s1, 5)") == 5
    assert env.simplify("min(s1, -5)") == -5
    assert env.simplify("broadcast(s0, 1)") == "s0"
    assert simplify_expression("max(s0, 1)") == "1^s0"  # without the range


def test_environment_constraints():
    env = DimEnv(constraints=["s0 in [2, 2**31-1]", "s1 >= 1", "s2 == 2*s0 + 1", "2*s3 + 1 <= 17", "Ge(s4, 3)"])
    assert env.range_of("s0") == (2, 2**31 - 1)
    assert env.range_of("s1") == (1, INF)
    assert env.range_of("s2") == (5, 2**32 - 1)
    assert env.range_of("s3") == (0, 8)
    assert env.range_of("s4") == (3, INF)
    assert env.range_of("other") == (0, INF)
    assert ranges_from_expressions(["s0 >= 2", "s0 <= 2**10", "s1 == 2*s0 + 1"]) == {"s0": (2, 1024), "s1": (5, 2049)}
    # a range replaces the default, so names may be negative
    assert DimEnv({"x": (-3, 3)}).bound("x*x") == (0, 9)
    assert DimEnv({"x": (-3, 3)}).bound("x*x*x") == (-27, 27)
    assert DimEnv({"x": "[-3, 3]"}).range_of("x") == (-3, 3)
    assert DimEnv(default=(1, None)).bound("x - 1") == (0, INF)
    with pytest.raises(ValueError, match="contradict"):
        DimEnv(constraints=["s0 >= 5", "s0 <= 3"])
    with pytest.raises(DimExpressionError):
        DimEnv(constraints=["s0 >= +"])
    with pytest.raises(ValueError, match="not a relation"):
        parse_relation("s0 + 1")
    op, left, right = parse_relation("Max(a, b) >= (c == d)".replace("(c == d)", "c"))
    assert (op, unparse(left), unparse(right)) == ("ge", "a^b", "c")


def test_answers_are_memoised():
    clear_caches()  # environments with these ranges share their memo: start from none
    env = DimEnv({"s0": (2, 100)})
    assert env.bound("s0//2 + s0%3") == (1, 52)
    memo = dict(env._memo)
    assert ("bound", "s0//2 + s0%3") in memo
    env.context.clear()  # the simplifier's caches forgotten: only the memo can answer now
    for _ in range(5):
        assert env.bound("s0//2 + s0%3") == (1, 52)
    assert env._memo == memo  # answered from the memo, nothing new worked out
    assert not env.context.vals
    term = parse_expression("(s0 + 1)*(s0 - 1) - s0*s0")
    assert env.simplify(term) == -1
    assert len(env._memo) == 3  # the bound, the polynomial of its text, the simplified term
    env.declare("s0 <= 10")  # new ranges: new answers
    assert not env._memo
    assert env.bound("s0//2 + s0%3") == (1, 7)
    assert statically_known("x >= 0") is statically_known("x >= 0") is True


def test_equal_ranges_share_answers():
    """Environments with equal ranges share one state; narrowing one moves it to the state of its new ranges."""
    clear_caches()
    first, second = DimEnv({"s0": (2, 100), "s1": (0, 7)}), DimEnv({"s1": (0, 7), "s0": (2, 100)})
    assert first.bound("s0//2 + s1") == (1, 57)
    assert second.context is first.context and second._memo is first._memo
    assert ("bound", "s0//2 + s1") in second._memo
    other = DimEnv({"s0": (2, 100)}, default=(1, None))  # other names from 1: another state
    assert other.context is not first.context
    assert other.bound("s0//2 + s1") == (2, math.inf)
    second.declare("s0 <= 10")
    assert second.bound("s0//2 + s1") == (1, 12)
    assert first.bound("s0//2 + s1") == (1, 57)  # the first keeps its ranges and answers
    assert second._memo is not first._memo and second.context is not first.context
    third = DimEnv({"s0": (2, 10), "s1": (0, 7)})  # the narrowed ranges, given at once
    assert third.context is second.context and third.bound("s0//2 + s1") == (1, 12)
    clear_caches()  # a cleared cache: environments made afterwards start afresh
    assert DimEnv({"s0": (2, 100), "s1": (0, 7)}).context is not first.context


def test_many_names_and_long_sums():
    names = [f"s{i}" for i in range(256)]
    env = DimEnv({n: (2, 2**31 - 1) for n in names})
    total = " + ".join(names)
    assert env.statically_known(f"{total} >= 512") is True
    assert env.equal(total, " + ".join(reversed(names))) is True
    assert env.statically_known(f"{total} >= s17") is True
    assert env.bound(total) == (512, 256 * (2**31 - 1))
    assert env.equal("max(" + ", ".join(names) + ")", "s3") is None
    big = " + ".join(f"{i % 7 + 1}*x{i}" for i in range(10_000))
    assert equal(big, big + " + 0") is True
    assert bound(big) == (0, INF)
    assert divisible(" + ".join(f"6*x{i}" for i in range(10_000)), 3) is True


# -- answers are never wrong: random expressions on every point of small boxes ------------------------------

_NAMES = ["a", "b"]
_BINARY = ["add", "sub", "mul", "floordiv", "mod", "maximum", "minimum", "ceil_div"]
_leaves = st.one_of(st.sampled_from([dim_name(n) for n in _NAMES]), st.integers(-3, 6).map(const))


def _extend(children):
    binary = st.tuples(st.sampled_from(_BINARY), children, children).map(lambda t: get_op(t[0])(t[1], t[2]))
    return st.one_of(binary, binary, children.map(lambda t: -t))


expressions = st.recursive(_leaves, _extend, max_leaves=8)
_ranges = st.tuples(st.integers(-4, 3), st.integers(0, 5)).map(lambda t: (t[0], t[0] + t[1]))
boxes = st.fixed_dictionaries({n: _ranges for n in _NAMES})


def _values(term, box):
    out = []
    for combo in itertools.product(*[range(box[n][0], box[n][1] + 1) for n in _NAMES]):
        env = dict(zip(_NAMES, combo, strict=True))
        try:
            out.append((env, evaluate_expression(term, env)))
        except EvaluationError:
            out.append((env, None))  # undefined here (a division by zero)
    return out


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, boxes)
def test_bound_and_simplify_hold_on_the_box(e, box):
    env = DimEnv(box)
    lo, hi = env.bound(e)
    s = env.simplify(e)
    for point, v in _values(e, box):
        if v is None:
            continue
        assert lo <= v <= hi, (unparse(e), box, point, v, (lo, hi))
        assert evaluate_expression(s, point) == v, (unparse(e), unparse(s), box, point)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, expressions, boxes, st.sampled_from(["lt", "le", "gt", "ge", "eq", "ne"]))
def test_relations_are_never_wrong(e1, e2, box, op):
    env = DimEnv(box)
    answer = env.statically_known(get_op(op)(e1, e2))
    if answer is None:
        return
    check = {"lt": int.__lt__, "le": int.__le__, "gt": int.__gt__, "ge": int.__ge__, "eq": int.__eq__, "ne": int.__ne__}
    for (point, v1), (_, v2) in zip(_values(e1, box), _values(e2, box), strict=True):
        if v1 is None or v2 is None:
            continue
        assert check[op](v1, v2) == answer, (op, unparse(e1), unparse(e2), box, point)
    eq = env.equal(e1, e2)
    assert eq is None or eq == (env.statically_known(get_op("eq")(e1, e2)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, st.one_of(st.integers(1, 6), expressions), boxes)
def test_divisible_and_exact_div_are_never_wrong(e, k, box):
    env = DimEnv(box)
    answer = env.divisible(e, k)
    q = env.exact_div(e, k)
    k_term = const(k) if isinstance(k, int) else k
    for (point, v), (_, d) in zip(_values(e, box), _values(k_term, box), strict=True):
        if v is None or d is None or d == 0:
            continue
        if answer is not None:
            assert (v % d == 0) == answer, (unparse(e), unparse(k_term), box, point)
        if q is not None:
            assert evaluate_expression(q, point) * d == v, (unparse(e), unparse(k_term), unparse(q), point)


def test_parse_relation_forms():
    for text, op in [("a < b", "lt"), ("a <= b", "le"), ("a > b", "gt"), ("a >= b", "ge"), ("a == b", "eq")]:
        assert parse_relation(text)[0] == op
    assert parse_relation("a != b")[0] == "ne"
    assert parse_relation("Lt(a, b)")[0] == "lt"
    assert parse_relation(dim_name("a") < dim_name("b")) == ("lt", dim_name("a"), dim_name("b"))
    with pytest.raises(DimExpressionError) as info:
        parse_relation("a + * 2 >= b")
    assert info.value.pos == 4
    assert parse_expression("a") is parse_relation("a >= 2**3")[1]


def test_queries_on_text_are_never_wrong():
    # text sides are read straight into polynomials (not through terms): the same guarantee
    import importlib.util
    import random
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("dims_differential", Path(__file__).with_name("test_differential.py"))
    differential = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(differential)
    _opaque, _text = differential._opaque, differential._text

    rng = random.Random(7)
    env = DimEnv({"a": (-3, 4), "b": (0, 5), "c": (1, 3)})
    points = [dict(zip("abc", p, strict=True)) for p in itertools.product(range(-3, 5), range(0, 6), range(1, 4))]
    checks = {"<": int.__lt__, "<=": int.__le__, ">": int.__gt__, ">=": int.__ge__, "==": int.__eq__, "!=": int.__ne__}
    decided = 0
    for _ in range(300):
        t1, t2 = _text(rng, rng.randint(1, 3)), _text(rng, rng.randint(1, 3))
        op = rng.choice(sorted(checks))
        answers = {
            "rel": env.statically_known(f"{t1} {op} {t2}"),
            "eq": env.equal(t1, t2),
            "div": env.divisible(t1, t2),
            "bound": env.bound(t1),
        }
        decided += answers["rel"] is not None
        for point in points:
            point = {**point, "f": _opaque}
            try:
                v1, v2 = evaluate_expression(t1, point), evaluate_expression(t2, point)
            except EvaluationError:
                continue
            if answers["rel"] is not None:
                assert checks[op](v1, v2) == answers["rel"], (t1, op, t2, point)
            if answers["eq"] is not None:
                assert (v1 == v2) == answers["eq"], (t1, t2, point)
            if answers["div"] is not None and v2 != 0:
                assert (v1 % v2 == 0) == answers["div"], (t1, t2, point)
            assert answers["bound"][0] <= v1 <= answers["bound"][1], (t1, point)
    assert decided > 30


@pytest.mark.parametrize("op", [">=", "<="])
def test_relations_decided_after_the_rules_rewrite_the_difference(op):
    """H - ((H-1)//2 + 1) is rewritten by the rules across terms (x - x//2 -> (x+1)//2, in place),
    then decided by its range; the quick range of the raw difference alone does not decide it."""
    env = DimEnv({"H": (32, 4096)})
    left, right = parse_expression("H"), parse_expression("FloorDiv(H - 1, 2) + 1")
    rel = left >= right if op == ">=" else right <= left
    assert env.statically_known(rel) is True
    assert env.statically_known(f"H {op} FloorDiv(H - 1, 2) + 1" if op == ">=" else f"FloorDiv(H - 1, 2) + 1 {op} H")
    assert env.statically_known(left < right) is False
    assert env.statically_known(left > right) is True  # (H+1)//2 - 1 >= 15 for H >= 32
    assert env.compare("H", "FloorDiv(H - 1, 2) + 1") == ">"


def test_ask_replays_a_query_by_its_kind() -> None:
    env = DimEnv(constraints=["s0 in [2, 64]"])
    assert env.ask("ge", "s0", 2) is True and env.ask("gt", "s0", "64") is False
    assert env.ask("bound", "s0//2") == env.bound("s0//2") == (1, 32)
    assert env.ask("eq", "s0*2", "2*s0") is True and env.ask("divisible", "4*s0", 2) is True
    assert env.ask("simplify", "2*s0//s0") == env.simplify("2*s0//s0")
    with pytest.raises(ValueError, match="unknown query kind"):
        env.ask("maybe", "s0")


# -- ranges given as pairs --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "r",
    [(0.5, 3), (Fraction(1, 2), 3), (Decimal("1.5"), 3), ("0", 3), (0, math.nan), (0, 2.0), 3, (1, 2, 3), None, b"ab"],
)
def test_a_range_of_anything_but_integers_and_open_ends_is_refused_by_name(r: object) -> None:
    """A fraction is never rounded into a range end (``int(0.5)`` would widen ``[0.5, 3]`` to ``[0, 3]``)."""
    with pytest.raises(DimExpressionError, match=r"a range must be a pair|a bound must be an integer"):
        DimEnv({"a": r})
    with pytest.raises(DimExpressionError):
        DimEnv(default=r)  # type: ignore[arg-type]


def test_range_ends_of_any_integer_kind_and_open_ends() -> None:
    """numpy's integers, bools, None and the infinities (numpy's too) are range ends; each end comes back a Python
    int or an infinity."""
    env = DimEnv({"a": (np.int64(2), np.int32(9)), "b": [None, INF], "c": np.array([0, 7]), "d": (False, np.inf)})
    assert env.ranges == {"a": (2, 9), "b": (-INF, INF), "c": (0, 7), "d": (0, INF)}
    assert all(type(end) is int or end in (INF, -INF) for r in env.ranges.values() for end in r)
