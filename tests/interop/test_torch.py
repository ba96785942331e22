"""The torch bridge without torch: sympy expressions built with local functions that carry torch's class names."""

from __future__ import annotations

import math
import sys
from types import SimpleNamespace

import pytest

sp = pytest.importorskip("sympy")

from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from exprgraph.dims import evaluate_expression, unparse  # noqa: E402
from exprgraph.errors import ConversionError  # noqa: E402
from exprgraph.interop.torch import TorchDims, from_shape_env, read_torch_expr  # noqa: E402


def _fn(name: str, integer: bool = True) -> type:
    """A sympy function class named as torch's (the bridge reads class names), left unevaluated."""
    return type(name, (sp.Function,), {"is_integer": integer})


FloorDiv, CleanDiv, CeilDiv = _fn("FloorDiv"), _fn("CleanDiv"), _fn("CeilDiv")
ModularIndexing, PythonMod, TorchMod = _fn("ModularIndexing"), _fn("PythonMod"), _fn("Mod")
CeilToInt, FloorToInt, TruncToInt = _fn("CeilToInt"), _fn("FloorToInt"), _fn("TruncToInt")
IntTrueDiv, Identity, PowByNatural = _fn("IntTrueDiv", False), _fn("Identity"), _fn("PowByNatural")
Mystery, FloatThing = _fn("Mystery"), _fn("FloatThing", False)
TorchMax, TorchMin = _fn("Max"), _fn("Min")  # torch's Max and Min, unevaluated

s0, s1, s2 = sp.symbols("s0 s1 s2", integer=True, positive=True)
x0 = sp.Symbol("x0", integer=True, nonnegative=True)
u0 = sp.Symbol("u0", integer=True)
zf = sp.Symbol("zf", real=True)


def text(expr: object, **kw: object) -> str:
    """Our canonical text of a torch expression."""
    return unparse(read_torch_expr(expr, **kw))  # type: ignore[arg-type]


def test_torch_functions_read_by_name() -> None:
    assert text(FloorDiv(s0, 2)) == "s0//2"
    assert text(CleanDiv(s0 * s1, s1)) == "s0*s1//s1"
    assert text(ModularIndexing(x0, 4, 8)) == "x0//4%8"
    assert text(PythonMod(s0, 3) + TorchMod(s1, 4)) in ("s0%3+s1%4", "s1%4+s0%3")
    assert text(CeilDiv(s0, 8)) == "CeilToInt(s0,8)"
    assert text(sp.Max(s0, s1, 3)) and read_torch_expr(sp.Max(s0, s1)).op.name == "maximum"
    assert read_torch_expr(sp.Min(x0, 1)).op.name == "minimum"
    assert text(Identity(s0 + 1)) == text(s0 + 1)
    assert text(s0**2) == text(s0 * s0)
    assert text(PowByNatural(s0, 3)) == text(s0**3)
    assert read_torch_expr(Mystery(s0)).op.name == "dim_fn"  # an integer function we do not know: opaque


def test_rounding_of_ratios() -> None:
    td = TorchDims({"s0": (1, 100)})
    assert td.simplify(CeilToInt(IntTrueDiv(s0, 8))) == td.simplify(CeilDiv(s0, 8))
    assert td.simplify(FloorToInt(IntTrueDiv(s0, 2))) == td.simplify(FloorDiv(s0, 2))
    assert td.simplify(FloorToInt(sp.Rational(1, 2) * s0 + sp.Rational(1, 2))) == td.simplify(FloorDiv(s0 + 1, 2))
    assert td.simplify(CeilToInt(s0)) == td.simplify(s0)
    assert read_torch_expr(TruncToInt(IntTrueDiv(s0, 2))).op.name == "dim_fn"  # sign dependent: opaque
    assert td.evaluate(sp.Lt(s0 / 2, 51)) is True  # s0/2 < 51 <=> s0 < 102
    assert td.evaluate(sp.Le(sp.Rational(1, 3) * s0, 33)) is None


def test_static_truth_and_bounds() -> None:
    td = TorchDims({s0: SimpleNamespace(lower=2, upper=sp.oo), "s1": (1, 64), x0: (0, 15)})
    assert td.statically_known_true(sp.Ge(s0, 2))
    assert td.evaluate(sp.Eq(s0, 1)) is False
    assert td.evaluate(sp.Gt(s1, 10)) is None
    assert td.evaluate(sp.Lt(ModularIndexing(x0, 1, 8), 8)) is True
    assert td.evaluate(sp.And(sp.Ge(s0, 2), sp.Le(s1, 64))) is True
    assert td.evaluate(sp.Or(sp.Eq(s0, 1), sp.Gt(s1, 10))) is None
    assert td.evaluate(sp.Not(sp.Eq(s0, 1))) is True
    assert td.evaluate(sp.true) is True and td.statically_known_true(False) is False
    assert td.bound(FloorDiv(s1, 2)) == (0, 32)
    assert td.bound(s1 - 1) == (0, 63)
    assert td.bound(sp.Eq(s0, 1)) == (False, False)
    assert td.static_value(ModularIndexing(x0, 16, 4)) == 0  # x0 < 16
    assert td.static_value(s1) is None and td.static_value(sp.Integer(7)) == 7


def test_unbounded_and_default_ranges() -> None:
    td = TorchDims()
    assert td.bound(u0) == (-math.inf, math.inf)  # an integer symbol without assumptions: unbounded
    assert td.statically_known_true(sp.Ge(s0, 1))  # a positive symbol without a range: >= 1 (torch's default)
    assert td.evaluate(sp.Ge(x0, 0)) is True and td.evaluate(sp.Ge(x0, 1)) is None
    assert td.evaluate(sp.Ge(u0, 0)) is None


def test_infinity_spellings() -> None:
    int_oo = type("IntInfinity", (), {})()  # torch's int_oo, known by its class name
    td = TorchDims({"s0": (2, int_oo), "s1": (sp.Integer(1), sp.oo), "s2": (-sp.oo, sp.Integer(5))})
    assert td.bound(s0) == (2, math.inf) and td.bound(s1) == (1, math.inf) and td.bound(s2) == (-math.inf, 5)
    assert TorchDims({"s0": (0.5, 7.5)}).bound(s0) == (1, 7)  # an integer inside a real range


def test_unsupported_input_is_a_named_error() -> None:
    for bad in (zf + 1, FloatThing(s0), s0**s1, s0 / s1, sp.oo, sp.Integer(2**70)):
        with pytest.raises(ConversionError):
            read_torch_expr(bad)
    assert issubclass(ConversionError, ValueError)
    td = TorchDims()
    assert td.evaluate(sp.Lt(zf, 0)) is None and td.bound(zf) == (-math.inf, math.inf)
    assert not td.statically_known_true(sp.Lt(zf, 0))


def test_bad_ranges_are_a_named_error() -> None:
    for bad in ({"s0": "garbage"}, {"s0": (1, 2, 3)}, {"a b": (0, 1)}, {"s0": (5, 1)}):
        with pytest.raises(ConversionError):
            TorchDims(bad)
    assert TorchDims({"b": SimpleNamespace(lower=sp.false, upper=sp.true, is_bool=True)}).bound(s0) == (1, math.inf)


def test_replacements_and_shape_env() -> None:
    env = SimpleNamespace(
        var_to_range={s0: SimpleNamespace(lower=2, upper=100), s1: SimpleNamespace(lower=2, upper=100)},
        replacements={s1: 2 * s0},
    )
    td = from_shape_env(env)
    assert td.evaluate(sp.Eq(s1, 2 * s0)) is True
    assert td.static_value(PythonMod(s1, 2)) == 0
    with pytest.raises(ConversionError):
        read_torch_expr(s0 + 1, replacements={s0: s1 + 1, s1: s0 - 1})  # a cycle


def test_deep_expression_at_default_recursion_limit() -> None:
    # built without sympy's evaluation (Expr.__new__), as fast as a chain of 10**5 nodes can be made
    e, one = s0, sp.Integer(1)
    for i in range(100_000):
        e = sp.Expr.__new__(FloorDiv, e, one) if i % 2 else sp.Expr.__new__(Identity, e)
    assert sys.getrecursionlimit() <= 10_000
    t = read_torch_expr(e)
    assert t.op.name == "floordiv"


# -- property: converted and evaluated equals Python integer evaluation of the sympy expression ------------

_NAMES = (s0, s1, x0)


class _OutsideError(Exception):
    """The point is outside the expression's domain (a zero divisor, an inexact CleanDiv, Mod of a negative)."""


def _need(ok: bool) -> None:
    if not ok:
        raise _OutsideError


def _ref(e: object, point: dict) -> int:
    """The value of a torch-style expression with Python integer semantics (_OutsideError outside its domain)."""
    if isinstance(e, sp.Symbol):
        return point[e]
    if isinstance(e, sp.Integer):
        return int(e)
    a = [_ref(x, point) for x in e.args]  # type: ignore[attr-defined]
    name = type(e).__name__
    if name == "Add":
        return sum(a)
    if name == "Mul":
        return math.prod(a)
    if name == "Pow":
        return a[0] ** a[1]  # sympy's Mul makes x*x into x**2
    if name in ("FloorDiv", "PythonMod", "CleanDiv", "Mod", "CeilDiv", "ModularIndexing"):
        _need(a[1] != 0 and (name != "ModularIndexing" or a[2] != 0))
    if name == "FloorDiv":
        return a[0] // a[1]
    if name == "CleanDiv":
        _need(a[0] % a[1] == 0)
        return a[0] // a[1]
    if name == "PythonMod":
        return a[0] % a[1]
    if name == "Mod":
        _need(a[0] >= 0 and a[1] > 0)  # torch's Mod is for these
        return a[0] % a[1]
    if name == "ModularIndexing":
        return (a[0] // a[1]) % a[2]
    if name == "CeilDiv":
        return -((-a[0]) // a[1])
    if name == "Max":
        return max(a)
    if name == "Min":
        return min(a)
    if name == "Identity":
        return a[0]
    raise AssertionError(name)


_leaf = st.one_of(st.sampled_from(_NAMES), st.integers(-9, 9).map(sp.Integer))


def _node(children: st.SearchStrategy) -> st.SearchStrategy:
    two = st.tuples(children, children)
    return st.one_of(
        two.map(lambda p: sp.Add(*p)),
        two.map(lambda p: sp.Mul(*p)),
        two.map(lambda p: FloorDiv(*p)),
        two.map(lambda p: PythonMod(*p)),
        two.map(lambda p: TorchMod(*p)),
        st.tuples(children, st.integers(1, 4)).map(lambda p: CleanDiv(p[0] * p[1], p[1])),
        two.map(lambda p: CeilDiv(*p)),
        st.tuples(children, children, children).map(lambda p: ModularIndexing(*p)),
        two.map(lambda p: TorchMax(*p)),
        two.map(lambda p: TorchMin(*p)),
        children.map(Identity),
    )


_exprs = st.recursive(_leaf, _node, max_leaves=8)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(_exprs, st.tuples(st.integers(-20, 20), st.integers(-20, 20), st.integers(0, 20)))
def test_converted_value_equals_python_integer_value(expr: object, values: tuple[int, int, int]) -> None:
    point = dict(zip(_NAMES, values, strict=True))
    try:
        expected = _ref(expr, point)
    except _OutsideError:
        assume(False)
    got = evaluate_expression(read_torch_expr(expr), {s.name: v for s, v in point.items()})
    assert got == expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(_exprs, st.integers(0, 6), st.integers(0, 4))
def test_static_answers_hold_at_every_point(expr: object, lo: int, width: int) -> None:
    # ranges small enough to check every point: a decided answer or a bound must hold at each
    ranges = {n.name: (lo, lo + width) for n in _NAMES}
    td = TorchDims(ranges)
    blo, bhi = td.bound(expr)
    grid = range(lo, lo + width + 1)
    for a in grid:
        for b in grid:
            for c in grid:
                try:
                    v = _ref(expr, {s0: a, s1: b, x0: c})
                except _OutsideError:
                    continue
                assert blo <= v <= bhi
