"""to_sympy / from_sympy on every op of the table: SymPy computes our values, and the term read back does too."""

from __future__ import annotations

import numpy as np
import pytest
from test_convert_every_op import NO_VALUE, PACKAGE_OPS, TENSOR_OPS, assert_values, case, check_table

from exprgraph import Symbol, evaluate, get_op
from exprgraph.errors import ConversionError

sp = pytest.importorskip("sympy")
from exprgraph.interop.sympy import to_sympy  # noqa: E402
from exprgraph.interop.sympy_read import from_sympy  # noqa: E402

#: ops SymPy has no counterpart for, with the reason
NOT_THERE = {name: "SymPy's expressions are scalars: a tensor op has no SymPy counterpart" for name in TENSOR_OPS}
ALL = sorted(o.name for o in PACKAGE_OPS if o.name not in NO_VALUE)


def _sympy_values(expr, values: dict) -> np.ndarray:
    """SymPy's value of ``expr`` at the points (lambdify with scipy's erf and numpy)."""
    names = sorted(values)
    symbols = {s.name: s for s in expr.free_symbols}
    args = [symbols.get(n, sp.Symbol(n)) for n in names]
    f = sp.lambdify(args, expr, modules=["scipy", "numpy"])
    with np.errstate(all="ignore"):
        return np.broadcast_to(f(*(values[n] for n in names)), np.shape(next(iter(values.values()))))


@pytest.mark.parametrize("name", ALL)
def test_every_op_converts_both_ways(name):
    term, env = case(name)
    if name in NOT_THERE:
        # the op named, or what stops first: an array constant (take's index), a tensor operand (topk's)
        with pytest.raises(ConversionError, match=f"{name}|an array constant|converts scalar terms"):
            to_sympy(term)
        return
    values = env(16, np.random.default_rng(len(name)))
    want = evaluate(term, values)
    expr = to_sympy(term)
    assert_values(_sympy_values(expr, values), want, term.dtype)
    back = from_sympy(expr)
    assert_values(evaluate(back, values), want, term.dtype)


def test_no_op_is_left_unaccounted():
    assert check_table(NOT_THERE, lambda name: name in ALL) == []


@pytest.mark.parametrize(
    ("build", "op"),
    [
        (lambda x: sp.log(x, 2), "log2"),
        (lambda x: sp.log(x) / sp.log(10), "log10"),
        (lambda x: sp.floor(x), "floor"),
        (lambda x: sp.ceiling(x), "ceil"),
        (lambda x: sp.sqrt(x**2 + sp.Symbol("y", real=True) ** 2), "hypot"),
        (lambda x: sp.atan2(x, sp.Symbol("y", real=True)), "atan2"),
        (lambda x: sp.Rem(x, 3), "fmod"),
        (lambda x: sp.erfc(x), "erfc"),
        (lambda x: sp.acosh(x), "acosh"),
    ],
)
def test_sympy_forms_read_back_as_our_ops(build, op):
    x = sp.Symbol("x", real=True)
    assert from_sympy(build(x)).op.name == op


def test_reciprocal_functions_read_as_divisions():
    x = sp.Symbol("x", real=True)
    t = from_sympy(sp.cot(x) + sp.sech(x))
    point = {"x": np.array([0.3, -1.7])}
    np.testing.assert_allclose(evaluate(t, point), 1 / np.tan(point["x"]) + 1 / np.cosh(point["x"]))


def test_piecewise_of_many_pieces_and_no_otherwise():
    x = sp.Symbol("x", real=True)
    pw = sp.Piecewise((x, x < -1), (2 * x, x < 0), (x**2, x < 1))  # undefined from 1 on: nan
    t = from_sympy(pw)
    got = evaluate(t, {"x": np.array([-2.0, -0.5, 0.5, 2.0])})
    np.testing.assert_array_equal(got, [-2.0, -1.0, 0.25, np.nan])


def test_a_chain_of_wheres_is_one_piecewise_and_reads_back():
    x, y, z = (Symbol(n) for n in "xyz")
    t = get_op("where")(x > 0, x, get_op("where")(y > 0, y, z))
    expr = to_sympy(t)
    assert len(expr.args) == 3 and expr.args[-1].cond is sp.true
    assert from_sympy(expr) is t


def test_rationals_stay_exact_through_a_round_trip():
    t = from_sympy(sp.Rational(1, 3) * sp.Symbol("x", real=True))
    assert to_sympy(t) == sp.Symbol("x", real=True) / 3


def test_a_float_more_precise_than_float64_is_refused_not_rounded():
    with pytest.raises(ConversionError, match="bits"):
        from_sympy(sp.Float("0.1", 40))
    assert from_sympy(sp.Float("0.5", 40)).value == 0.5  # exact in float64: read
    assert from_sympy(sp.Float(0.1)).value == 0.1


def test_formulas_of_sympy_functions_compute_sympys_values():
    x, n = sp.Symbol("x", real=True), sp.Symbol("n", integer=True)
    e = sp.Heaviside(x) + sp.Heaviside(x, 1) + sp.sinc(x) + sp.frac(x) + sp.KroneckerDelta(n, 2)
    values = {"x": np.array([-1.5, 0.0, 0.7, 2.0]), "n": np.array([2, 2, 3, -2])}
    got = evaluate(from_sympy(e), values)
    want = [float(e.subs({x: a, n: int(b)})) for a, b in zip(values["x"], values["n"], strict=True)]
    np.testing.assert_allclose(got, want, rtol=1e-14)
    b, c = sp.symbols("b c")
    assert from_sympy(sp.Xor(b, c), symbols=[Symbol("b", "bool"), Symbol("c", "bool")]).op.name == "ne"


@pytest.mark.parametrize("expr", ["besselj(0, x)", "gamma(x)", "acot(x)", "LambertW(x)", "DiracDelta(x)"])
def test_unsupported_sympy_constructs_raise_naming_them(expr):
    x = sp.Symbol("x", real=True)
    built = {"besselj": sp.besselj(0, x), "gamma": sp.gamma(x), "acot": sp.acot(x), "LambertW": sp.LambertW(x)}
    built["DiracDelta"] = sp.DiracDelta(x)
    name = expr.split("(")[0]
    with pytest.raises(ConversionError, match=name):
        from_sympy(built[name])
