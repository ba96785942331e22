"""to_sympy / from_sympy: round trips on random terms, the seeds' examples, deep chains."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from interop_strategies import N, X, Y, Z, float_env, float_terms, int_env, int_terms, seed_examples

from exprgraph import Symbol, const, evaluate, get_op, parse, postorder, sin, symbols, where
from exprgraph.errors import ConversionError, ParseError
from exprgraph.interop import from_sympy, to_sympy

sp = pytest.importorskip("sympy")


def _close_where_defined(original, converted, env):
    """Equal values wherever every subterm of ``original`` is finite (SymPy knows no nan).

    Rounding differs with the order SymPy rebuilt things in, and grows with the size of the
    subterms (sin of a huge argument): the tolerance scales with the largest subterm at each point.
    """
    parts = postorder(original)
    values = evaluate([*parts, converted], env)
    shape = np.broadcast_shapes(*(np.shape(v) for v in values))
    subterms = np.array([np.broadcast_to(np.asarray(v, dtype=float), shape) for v in values[:-1]])
    defined = np.all(np.isfinite(subterms), axis=0)
    scale = np.max(np.abs(np.where(np.isfinite(subterms), subterms, 0)), axis=0)
    want = subterms[-1]
    got = np.broadcast_to(np.asarray(values[-1], dtype=float), shape)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf where undefined: masked below
        error = np.abs(got - want)
    allowed = 1e-6 * np.abs(want) + 1e-9 + 1e-12 * scale
    bad = defined & ~(error <= allowed)
    assert not bad.any(), (got[bad], want[bad])


def _same_sympy_values(first, second, env, **assumptions):
    """Two SymPy expressions agree where the first is a finite real (SymPy's forms depend on build order)."""
    if first == second or first.has(sp.zoo):
        return
    names = sp.symbols(" ".join(env), **assumptions)
    if assumptions.get("integer"):
        # integer forms exactly (numpy's floats round n**2/3 + n/3, and floor turns that into an off-by-one)
        points = [[sp.Integer(int(v)) for v in row] for row in zip(*env.values(), strict=True)]
        f, g = ([complex(e.subs(dict(zip(names, p, strict=True)))) for p in points] for e in (first, second))
    else:
        with np.errstate(all="ignore"):
            f, g = (sp.lambdify(names, e, "numpy")(*env.values()) for e in (first, second))
    f, g = np.broadcast_arrays(np.asarray(f, dtype=complex), np.asarray(g, dtype=complex))
    # where a branch goes complex (sqrt of a negative under Max) numpy's complex comparisons decide
    # for one form and not the other: those points say nothing about the forms
    ok = np.isfinite(f) & (f.imag == 0) & np.isfinite(g)
    np.testing.assert_allclose(g[ok], f[ok], rtol=1e-6, atol=1e-6)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(float_terms(floor=False))
def test_random_float_terms_round_trip(t):
    s = to_sympy(t)
    # SymPy evaluates as it builds: a branch it folds to x/0 is complex infinity, refused on the way back
    assume(not s.has(sp.zoo, sp.nan))
    back = from_sympy(s)
    _close_where_defined(t, back, float_env())  # term side: the same values (where t is defined)
    _same_sympy_values(s, to_sympy(back), float_env(seed=1), real=True)  # SymPy side


@settings(max_examples=100, deadline=None)
@given(int_terms())
@example(-((N + N * N) // 3))  # SymPy's floor(n**2/3 + n/3): numpy's floats were off by one there
def test_random_int_terms_round_trip(t):
    s = to_sympy(t)
    back = from_sympy(s)
    want, got = evaluate([t, back], int_env())
    np.testing.assert_array_equal(np.broadcast_to(got, np.shape(want)), want)  # exact: integers
    assert back.dtype == "int64"
    _same_sympy_values(s, to_sympy(back), int_env(seed=1), integer=True)


def test_seed_examples_values_and_sympy_forms():
    x, y, z = sp.symbols("x y z", real=True)
    f = to_sympy(seed_examples()[0])
    assert f == (x * y + 3) / (z - 2)
    assert f.subs({x: 2, y: 3, z: 3}) == 9
    assert sp.diff(f, x).subs({x: 2, y: 3, z: 3}) == 3  # the seed's df/dx
    for t in seed_examples():
        back = from_sympy(to_sympy(t))
        _close_where_defined(t, back, float_env(seed=3))
    # SymPy simplifies (x*y)/y on construction: the PyTensor seed's rewrite, done by SymPy
    assert to_sympy(seed_examples()[5]) == z + x * z / x


def test_sympy_expressions_in():
    x, y = sp.symbols("x y", real=True)
    n = sp.Symbol("n", integer=True)
    assert str(from_sympy(x - y)) == "x - y"
    assert str(from_sympy(x / y)) == "x/y"
    assert str(from_sympy(-x)) == "-x"
    assert str(from_sympy(sp.sqrt(x) + 1 / sp.sqrt(y))) == "sqrt(x) + 1/sqrt(y)"
    assert from_sympy(n).dtype == "int64"
    assert from_sympy(sp.floor(x / y)) is X // Y
    assert from_sympy(sp.Mod(n, 3)) is Symbol("n", "int64") % 3
    assert from_sympy(sp.Piecewise((x, x > 0), (0, True))) is where(X > 0, X, 0)
    assert from_sympy(sp.Rational(1, 3)) is const(Fraction(1, 3))  # an exact rational constant (docs/exact.md)
    assert float(evaluate(from_sympy(sp.pi + sp.E))) == pytest.approx(np.pi + np.e)
    assert from_sympy([x, y]) == [X, Y]
    # exactly the same SymPy expression back, for expressions in SymPy's canonical form
    for e in [x - y, x / y, -x, sp.sqrt(x) + 1 / sp.sqrt(y), x**2 * sp.exp(-y), sp.Max(x, y, 1), sp.Mod(n, 3)]:
        assert to_sympy(from_sympy(e)) == e
    plain = sp.Symbol("x")  # no assumptions: real=False keeps it so
    assert to_sympy(from_sympy(plain + 1), real=False) == plain + 1
    assert str(from_sympy(sp.floor((n + 1) / 2))) == "(1 + n)//2"
    # an undefined region of a Piecewise is nan
    assert np.isnan(evaluate(from_sympy(sp.Piecewise((x, x > 0))), {"x": -1.0}))


def test_symbols_argument_supplies_terms():
    x = sp.Symbol("x")
    b = Symbol("x", "bool")
    assert from_sympy(sp.Not(x), symbols={"x": b}) is ~b
    assert from_sympy(x + 1, symbols=[Symbol("x", "int64")]).dtype == "int64"


def test_errors_name_what_is_missing():
    x = sp.Symbol("x")
    with pytest.raises(ConversionError, match="besseli"):
        from_sympy(sp.besseli(1, x))
    with pytest.raises(ConversionError, match="not an identifier"):
        from_sympy(sp.Symbol("x y"))
    with pytest.raises(ConversionError, match="scalar"):
        to_sympy(Symbol("A", shape=(2,)) + 1)
    with pytest.raises(ConversionError, match="int64"):
        from_sympy(sp.Integer(2**70))


def test_shared_subterms_and_big_graphs_convert_without_recursion():
    x, y = sp.symbols("x y", real=True)
    s = sin(X * Y)
    assert to_sympy(s * s + s) == sp.sin(x * y) ** 2 + sp.sin(x * y)
    # SymPy's own methods recurse on nesting, so a deep chain is one SymPy folds as it builds
    chain = X
    for _ in range(100_000):
        chain = chain + 1
    assert to_sympy(chain) == x + 100_000
    wide = sp.Add(*(sp.Symbol(f"v{i}", real=True) * i for i in range(1, 1_000)))
    back = from_sympy(wide)
    assert back.depth == 999  # a chain of additions of products
    assert to_sympy(back) == wide
    assert from_sympy(to_sympy(Z)) is symbols("z")


def test_text_is_parsed_by_our_parser_never_run(monkeypatch):
    # sympify is eval: this text would have set the variable; our parser refuses it at the quote
    monkeypatch.delenv("EXPRGRAPH_CANARY", raising=False)
    code = "__import__('os').environ.__setitem__('EXPRGRAPH_CANARY', 'ran')"
    with pytest.raises(ParseError):
        from_sympy(code)
    assert "EXPRGRAPH_CANARY" not in __import__("os").environ
    n = Symbol("n", "int64")
    assert from_sympy("x**2 + sin(y)") is parse("x**2 + sin(y)")
    assert from_sympy(["n // 2", sp.Symbol("x") + 1, 3, 2.5], symbols=[n]) == [n // 2, 1 + X, const(3), const(2.5)]
    for other in (object(), 1j, b"x", np.array([1.0])):
        with pytest.raises(ConversionError, match="takes SymPy expressions"):
            from_sympy(other)


def test_constructs_without_a_real_value_are_refused_by_name():
    x = sp.Symbol("x", real=True)
    cases = {
        "imaginary unit I": [sp.I, 2 + 3 * sp.I, sp.sqrt(-2), sp.log(-2), x + sp.I],
        "zoo": [sp.zoo, sp.zoo * x],
        "AccumBounds": [sp.AccumBounds(-1, 1), sp.sin(sp.oo)],
        "complex number": [sp.Integer(-8) ** sp.Rational(1, 3), sp.Pow(-2, 0.5, evaluate=False)],
        "not real": [sp.Symbol("z", imaginary=True) + 1],
    }
    for name, exprs in cases.items():
        for e in exprs:
            with pytest.raises(ConversionError, match=name):
                from_sympy(e)
    # IEEE has these: oo, -oo and nan are inf, -inf and nan
    assert [float(evaluate(from_sympy(e))) for e in (sp.oo, -sp.oo)] == [np.inf, -np.inf]
    assert np.isnan(evaluate(from_sympy(sp.nan)))
    assert float(evaluate(from_sympy(sp.Pow(-8, 2.0, evaluate=False)))) == 64.0  # a whole power is real


def test_divisions_by_zero_bools_and_refusals_convert_to_our_values():
    n, m, b = Symbol("n", "int64"), Symbol("m", "int64"), Symbol("b", "bool")
    env = {
        "x": np.array([-2.0, -0.0, 0.0, 3.0, np.inf]),
        "n": np.arange(-2, 3),
        "m": np.arange(5),
        "b": np.arange(5) % 2 == 0,
    }
    terms = [X % 0.0, n % 0, n // (m - m), X // 0.0, X / (const(0.5) - 0.5), n / 0, where(X > 0, X / 0, 1.0)]
    terms += [b + b, get_op("maximum")(b, X), ~sin(get_op("eq")(const(False), X)), where(X, b, X > 1)]
    for t in terms:  # raised ZeroDivisionError, TypeError or gave nan where evaluate gives +-inf
        back = from_sympy(to_sympy(t), symbols=[b])
        names = {s.name for s in t.free_symbols}
        want, got = evaluate([t, back], {k: v for k, v in env.items() if k in names})
        np.testing.assert_array_equal(np.broadcast_to(got, np.shape(want)), want)
    assert to_sympy(X / 0.0) == sp.Piecewise(
        (sp.oo, sp.Symbol("x", real=True) > 0), (-sp.oo, sp.Symbol("x", real=True) < 0), (sp.nan, True)
    )
    # exact int64 arithmetic wraps around in evaluate, and so does its SymPy constant
    assert int(evaluate(from_sympy(to_sympy(const(2**62) * 4)))) == 0
    with pytest.raises(ConversionError, match="SymPy cannot build"):
        to_sympy(X + (X < const(5e-324) / b))  # SymPy: "Invalid comparison of non-real zoo"
    with pytest.raises(ConversionError, match="int64"):
        from_sympy(sp.floor(sp.Symbol("x") / sp.Integer(2**70)))  # was a raw OverflowError
