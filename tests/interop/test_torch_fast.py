"""The C fast path of TorchDims (``interop/_torch_fast.c``) against its twin, TorchDims' Python road.

Whenever the C walk answers (it returns NotImplemented otherwise), its answer must be the Python road's or tighter,
and true at every point of the ranges tried: random sympy expressions (torch's function names, relations, logic,
float names) over random ranges. The C ranges reader (``given``) must keep what the Python loop keeps.
"""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import pytest

sp = pytest.importorskip("sympy")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from interop_strategies import torch_expr  # noqa: E402

from exprgraph.interop import torch_fast  # noqa: E402
from exprgraph.interop.torch import TorchDims  # noqa: E402

pytestmark = pytest.mark.skipif(torch_fast.ANSWER is None, reason="the C fast path is not built (or pure Python)")

S = [
    sp.Symbol("s0", integer=True, positive=True),
    sp.Symbol("s1", integer=True, positive=True),
    sp.Symbol("u0", integer=True),
    sp.Symbol("p0", integer=True, nonnegative=True),
]
ZF = sp.Symbol("zf0", real=True)
FUNCTIONS = {
    name: type(name, (sp.Function,), {"is_integer": True})
    for name in ("FloorDiv", "CleanDiv", "PythonMod", "ModularIndexing", "Unknown")
}
RELATIONS = (sp.Eq, sp.Ne, sp.Lt, sp.Le, sp.Gt, sp.Ge)
#: what the test evaluates each function as, with Python integers
PY: dict[str, Callable[..., Any]] = {
    "FloorDiv": lambda a, b: a // b,
    "CleanDiv": lambda a, b: a // b,
    "PythonMod": lambda a, b: a % b,
    "ModularIndexing": lambda a, d, m: (a // d) % m,
}


def _leaf(rng: random.Random) -> Any:
    pick = rng.random()
    if pick < 0.03:
        return ZF  # a float name: no term
    if pick < 0.6:
        return rng.choice(S)
    return sp.Integer(rng.randint(-4, 9))


#: the calls of a random expression (torch_expr: 5 and 6 are Max and Min)
CALLS = [
    lambda rng, a, b: sp.Add(a, b),
    lambda rng, a, b: sp.Mul(a, b),
    lambda rng, a, b: FUNCTIONS[rng.choice(["FloorDiv", "CleanDiv"])](a, rng.choice([rng.randint(1, 8), b])),
    lambda rng, a, b: FUNCTIONS["ModularIndexing"](a, rng.randint(1, 4), rng.randint(1, 8)),
    lambda rng, a, b: FUNCTIONS["PythonMod"](a, rng.choice([rng.randint(1, 8), b])),
    lambda rng, a, b: sp.Max(a, b),
    lambda rng, a, b: sp.Min(a, b),
    lambda rng, a, b: sp.Pow(a, rng.randint(0, 3)),
    lambda rng, a, b: sp.Mod(a, rng.randint(1, 6)),
    lambda rng, a, b: FUNCTIONS["Unknown"](a, b),
]


def _expr(rng: random.Random, depth: int) -> Any:
    """A random sympy expression as torch builds them (its functions carry torch's names)."""
    return torch_expr(rng, depth, _leaf, CALLS, 0.25)


def _question(rng: random.Random) -> Any:
    while True:
        try:
            e = _expr(rng, 3)
            pick = rng.random()
            if pick < 0.5:
                return rng.choice(RELATIONS)(e, _expr(rng, 2))
            if pick < 0.65:  # products of names and numbers: common factors >= 1 cancel
                sides = [sp.Mul(rng.randint(-3, 5), *rng.choices(S, k=rng.randint(0, 3))) for _ in range(2)]
                if rng.random() < 0.3:  # parity: 2*s0 == 2*s1 + 1 never holds
                    sides[1] = sides[1] + rng.randint(-2, 2)
                if rng.random() < 0.4:  # a % q == a where 0 <= a < q
                    return rng.choice(RELATIONS)(FUNCTIONS["PythonMod"](sides[0], sides[0] * sides[1]), 0)
                return rng.choice(RELATIONS)(*sides)
            if pick < 0.7:
                return rng.choice([sp.And, sp.Or])(rng.choice(RELATIONS)(e, 0), sp.Not(sp.Eq(_expr(rng, 2), 1)))
            return e
        except TypeError:  # sympy refuses to compare what it built: draw again
            continue


def _ranges(rng: random.Random) -> dict[str, tuple[int | None, int | None]]:
    out: dict[str, tuple[int | None, int | None]] = {}
    for s in S:
        if rng.random() < 0.2:
            continue  # torch's default from the name's assumptions
        lo = rng.choice([None, rng.randint(-3, 4)])
        hi = rng.choice([None, (lo or 0) + rng.randint(0, 30)])
        if s.is_positive and (lo is None or lo < 1):
            lo = 1
            hi = None if hi is None else max(hi, 1)
        if s.is_nonnegative and (lo is None or lo < 0):
            lo = 0
            hi = None if hi is None else max(hi, 0)
        out[s.name] = (lo, hi)
    return out


def _value(e: Any, point: dict[Any, int]) -> Any:
    """The value of ``e`` at ``point`` (Python integers; None where undefined), children first, iteratively."""
    done: dict[int, Any] = {}
    stack = [(e, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in done:
            continue
        if not ready and node.args and not node.is_Symbol:
            stack.append((node, True))
            stack.extend((a, False) for a in node.args)
            continue
        vals = [done[id(a)] for a in node.args] if not node.is_Symbol else []
        done[id(node)] = _apply(node, vals, point)
    return done[id(e)]


def _apply(node: Any, vals: list[Any], point: dict[Any, int]) -> Any:
    if node.is_Symbol:
        return point.get(node)
    if node is sp.true or node is sp.false:
        return bool(node)
    if node.is_Integer:
        return int(node)
    if None in vals:
        return None
    name = type(node).__name__
    ops: dict[str, Callable[..., Any]] = {
        "Add": lambda *a: sum(a),
        "Mul": lambda *a: math.prod(a),
        "Pow": lambda a, k: a**k,
        "Mod": lambda a, b: a % b,
        "Max": max,
        "Min": min,
        "Equality": lambda a, b: a == b,
        "Unequality": lambda a, b: a != b,
        "StrictLessThan": lambda a, b: a < b,
        "LessThan": lambda a, b: a <= b,
        "StrictGreaterThan": lambda a, b: a > b,
        "GreaterThan": lambda a, b: a >= b,
        "And": lambda *a: all(a),
        "Or": lambda *a: any(a),
        "Not": lambda a: not a,
        **PY,
    }
    fn = ops.get(name)
    if fn is None:
        return None
    try:
        return fn(*vals)
    except (ZeroDivisionError, TypeError, ValueError):
        return None


def _points(ranges: dict[str, Any], rng: random.Random, n: int = 25) -> list[dict[Any, int]]:
    out = []
    for _ in range(n):
        point = {}
        for s in S:
            lo, hi = ranges.get(s.name, (1 if s.is_positive else 0 if s.is_nonnegative else None, None))
            lo_i = -60 if lo is None else lo
            hi_i = lo_i + 60 if hi is None else hi
            point[s] = rng.choice([lo_i, hi_i, rng.randint(lo_i, hi_i)])
        out.append(point)
    return out


def _python_road(ranges: dict[str, Any]) -> TorchDims:
    td = TorchDims(ranges)
    td._fast = None  # the twin: no C answer
    return td


def _check(expr: Any, ranges: dict[str, Any], rng: random.Random) -> str:
    """Compare the C answer with the Python road's on one question of each kind; what the C path did."""
    fast = TorchDims(ranges)
    road = _python_road(ranges)
    points = _points(ranges, rng)
    values = [_value(expr, p) for p in points]
    outcome = "passed"
    answer = torch_fast.ANSWER
    assert answer is not None
    for kind, ask in ((torch_fast.STATIC, "static_value"), (torch_fast.BOUND, "bound"), (torch_fast.TRUTH, "evaluate")):
        c = answer(expr, kind, fast._given, fast._reader.symbols)
        if c is NotImplemented:
            continue
        outcome = "answered"
        py = getattr(road, ask)(expr)
        assert c == getattr(fast, ask)(expr)  # TorchDims gives the C answer
        if kind == torch_fast.BOUND:
            lo, hi = c
            plo, phi = py
            if isinstance(lo, bool) or isinstance(plo, bool):
                assert c == py or (plo, phi) == (False, True), (expr, ranges, c, py)
                assert all(v is None or lo <= v <= hi for v in values), (expr, ranges, c)
                continue
            assert plo <= lo and hi <= phi, (expr, ranges, c, py)  # as tight or tighter
            assert all(v is None or lo <= v <= hi for v in values), (expr, ranges, c)
        else:
            assert py is None or (c == py and type(c) is type(py)), (expr, ranges, ask, c, py)
            if c is not None:
                assert all(v is None or v == c for v in values), (expr, ranges, ask, c)
    return outcome


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 2**32))
def test_the_c_answers_are_the_python_roads_or_tighter_and_hold(seed: int) -> None:
    rng = random.Random(seed)
    _check(_question(rng), _ranges(rng), rng)


def test_the_c_path_answers_most_of_a_random_sample() -> None:
    rng = random.Random(7)
    outcomes = [_check(_question(rng), _ranges(rng), rng) for _ in range(300)]
    assert outcomes.count("answered") > 100  # the fast path is not silently off


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["s0", "s1", "x0", "and", "é1", "u_2"]),
        st.one_of(
            st.none(),
            st.tuples(st.one_of(st.none(), st.integers(-(2**64), 2**64)), st.one_of(st.none(), st.integers(-9, 9))),
        ),
    )
)
def test_the_c_ranges_are_those_the_python_loop_keeps(var_to_range: dict[str, Any]) -> None:
    def kept(ranges: Any) -> Any:
        try:
            return TorchDims(ranges)._given
        except ValueError as err:
            return type(err)

    # a mapping that is not a dict takes the Python loop
    assert kept(var_to_range) == kept(MappingProxyType(var_to_range))


def test_what_the_c_path_leaves_to_python() -> None:
    s0, zf = S[0], ZF
    answer = torch_fast.ANSWER
    assert answer is not None
    given = {"s0": (2, None)}
    assert answer(sp.Integer(2**70) + s0, 1, given, {}) is NotImplemented  # past int64
    assert answer(FUNCTIONS["Unknown"](s0, 1), 1, given, {}) is NotImplemented  # a function it does not read
    assert answer(sp.Eq(s0, 3), 1, given, {}) == (False, True)  # two different leaves: settled
    s1 = S[1]
    parity = sp.Eq(2 * s0, 2 * s1 + 1, evaluate=False)  # never: neither side takes every integer, no end is shared
    assert answer(parity, 0, {"s0": (2, 9), "s1": (2, 9)}, {}) is NotImplemented
    assert TorchDims({"s0": (2, 9), "s1": (2, 9)}).static_value(parity) is False
    assert answer(s0 * s0 * 2**40 * 2**30, 1, given, {}) is NotImplemented  # an overflowing product
    assert answer(zf + s0, 0, given, {}) is None and answer(zf + s0, 1, given, {}) == (-math.inf, math.inf)
    deep = s0
    for i in range(300):
        deep = FUNCTIONS["FloorDiv"](deep + i, 2)
    assert answer(deep, 1, given, {}) is NotImplemented  # deeper than the C walk goes
    assert TorchDims(given).bound(deep)[0] >= 0  # the Python road answers it


def test_an_integer_atom_without_a_reading_is_unknown_on_both_roads() -> None:
    zero = sp.Float(0.0)  # an atom sympy says is an integer, with no arguments: no dimension term
    for td in (TorchDims({}), _python_road({})):
        assert td.bound(zero) == (-math.inf, math.inf) and td.static_value(zero) is None


def test_pure_python_switches_the_c_path_off() -> None:
    env = {**os.environ, "EXPRGRAPH_PURE_PYTHON": "1"}
    code = "from exprgraph.interop import torch_fast; print(torch_fast.ANSWER is None and torch_fast.GIVEN is None)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


#: names of the witness tests: small finite ranges, so every point can be tried
W = [sp.Symbol(f"w{i}", integer=True, nonnegative=True) for i in range(3)]


def _witness_expr(rng: random.Random, depth: int) -> Any:
    """A random integer expression over W with symbolic divisors (no interval for many of its nodes)."""
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(W) if rng.random() < 0.7 else sp.Integer(rng.randint(0, 9))
    a, b = _witness_expr(rng, depth - 1), _witness_expr(rng, depth - 1)
    pick = rng.randrange(7)
    if pick == 0:
        return sp.Add(a, b)
    if pick == 1:
        return sp.Mul(a, b)
    if pick == 2:
        return FUNCTIONS["FloorDiv"](a, b + 1)
    if pick == 3:
        return FUNCTIONS["ModularIndexing"](a, b + 1, rng.choice([b + 1, sp.Integer(rng.randint(1, 6))]))
    if pick == 4:
        return FUNCTIONS["PythonMod"](a, b + rng.randint(0, 2))
    if pick == 5:
        return sp.Pow(a, 2)
    return sp.Add(a, -b)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32))
def test_a_witnessed_undecided_relation_takes_both_truths(seed: int) -> None:
    """Whenever the C walk answers a relation over small ranges, every point agrees with it, and "undecided"
    (None) only where the relation is true at one point and false at another (its witnesses are real)."""
    rng = random.Random(seed)
    ranges = {}
    for s in W:
        lo = rng.randint(0, 6)
        ranges[s.name] = (lo, lo + rng.randint(0, 6))
    try:
        expr = rng.choice(RELATIONS)(_witness_expr(rng, 3), _witness_expr(rng, 3))
    except TypeError:
        return
    if expr is sp.true or expr is sp.false:
        return
    points = [
        {W[0]: a, W[1]: b, W[2]: c}
        for a in range(ranges["w0"][0], ranges["w0"][1] + 1)
        for b in range(ranges["w1"][0], ranges["w1"][1] + 1)
        for c in range(ranges["w2"][0], ranges["w2"][1] + 1)
    ]
    truths = {_value(expr, p) for p in points}
    answer = torch_fast.ANSWER
    assert answer is not None
    road = _python_road(ranges).static_value(expr)
    for kind in (torch_fast.STATIC, torch_fast.TRUTH):
        c = answer(expr, kind, ranges, {})
        if c is NotImplemented:
            continue
        assert road is None or c == road, (expr, ranges, c, road)  # the Python road's answer, or undecided there
        if None in truths:
            continue  # a divisor 0 at some point: no truth there
        if c is None:
            assert truths == {True, False}, (expr, ranges, truths)
        else:
            assert truths == {c}, (expr, ranges, truths, c)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 80), st.integers(-5, 5000), st.sampled_from([2, 4, 8]), st.booleans())
def test_an_equation_with_a_monotone_side_is_undecided_where_a_value_meets_it(
    lo: int, k: int, d: int, equal: bool
) -> None:
    """``X**2 + 2*X == k`` (``!=``) for ``X = (s0 - 1) // d``, s0 >= lo: the C search of a value of s0 where the
    side meets k answers "undecided" exactly where one exists (else it leaves the question, or says never)."""
    s0 = S[0]
    x = FUNCTIONS["FloorDiv"](s0 - 1, d)
    expr = (sp.Eq if equal else sp.Ne)(x**2 + 2 * x, k)
    x0 = (lo - 1) // d
    meets = any(v * v + 2 * v == k for v in range(x0, x0 + 80))  # (X**2 + 2X grows past 5000 by X = 80)
    answer = torch_fast.ANSWER
    assert answer is not None
    c = answer(expr, torch_fast.STATIC, {"s0": (lo, None)}, {})
    if meets:
        assert c is None or c is NotImplemented, (lo, k, d, c)
        if k > x0 * x0 + 2 * x0:  # met past the least value: found by the search
            assert c is None, (lo, k, d, c)
    else:
        assert c is NotImplemented or c is (not equal), (lo, k, d, c)


def test_the_witness_points_of_torch_questions() -> None:
    """Questions of a resnet replay that the Python road leaves undecided, answered in C by witnesses."""
    s65, s21, i0, q1 = (sp.Symbol(n, integer=True, positive=True) for n in ("s65", "s21", "indirect0", "q1"))
    fd, mi = FUNCTIONS["FloorDiv"], FUNCTIONS["ModularIndexing"]
    x, y = fd(s65 - 1, 2), fd(s65 - 1, 4)
    given = {"s65": (33, None), "s21": (2, 15)}
    answer = torch_fast.ANSWER
    assert answer is not None
    assert answer(sp.Ne(x**2 + 2 * x, 1023), torch_fast.STATIC, given, {}) is None  # s65 = 63: equal (a searched value)
    assert answer(sp.Ne(s65**2, 4096), torch_fast.STATIC, given, {}) is None
    assert (
        answer(sp.Lt(s21 * s65**2 + 4160, 4096 * s21 + 65 * s65), torch_fast.STATIC, given, {}) is None
    )  # order: two points
    boxed = {"s65": (33, 64), "indirect0": (0, 8), "q1": (0, 255)}
    lhs = i0 + fd(i0, 3) * x + 2 * x * mi(q1, y + 1, y + 1) + 2 * mi(q1, 1, y + 1) + 2 * mi(q1, y + 1, y + 1)
    rhs = 2 * fd(i0, 3) + x**2 + 3 * x + 3
    assert (
        answer(sp.Lt(lhs, rhs), torch_fast.STATIC, boxed, {}) is None
    )  # false near the high corner (s65 = 62), true at the least
