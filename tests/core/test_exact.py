"""Exact constants: rationals, pi and e, exact folding, printing, evaluation and compilation."""

from __future__ import annotations

import math
import operator
import pickle
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arith_strategies import arithmetic
from exprgraph import Symbol, const, evaluate, parse, simplify, to_repr
from exprgraph.compile import CompilerNotFoundError
from exprgraph.compile import compile as compile_terms
from exprgraph.core import get_op
from exprgraph.core.exact import PI, ExactName, Rational, integer_root, rational_power, square_split
from exprgraph.core.exact_fold import float_constants, fold_exact, is_exact
from exprgraph.core.leaves import exact_constant, rational
from exprgraph.core.walk import postorder
from exprgraph.errors import EvaluationError, ParseError

X = Symbol("x")
SQRT, LOG, EXP = get_op("sqrt"), get_op("log"), get_op("exp")

fractions = st.builds(Fraction, st.integers(-50, 50), st.integers(1, 12))
proper = fractions.filter(lambda q: q.denominator != 1)
#: exponents of the random terms: no negative int (an int64 ** a negative int64 is an error)
_EXPONENTS = [Fraction(1, 2), Fraction(-1, 2), Fraction(3, 2), Fraction(1, 3), Fraction(-2, 3), 2, 3]


def leaves() -> st.SearchStrategy:
    return st.one_of(
        fractions.map(const),
        st.sampled_from([exact_constant("pi"), exact_constant("e")]),
    )


def exact_terms(symbol: bool = False) -> st.SearchStrategy:
    """Random exact terms (and, with ``symbol``, terms of x over exact constants)."""
    base = st.one_of(leaves(), st.just(X)) if symbol else leaves()

    def grow(inner: st.SearchStrategy) -> st.SearchStrategy:
        return st.one_of(
            *arithmetic(inner),
            inner.map(lambda a: -a),
            inner.map(lambda a: SQRT(a)),
            inner.map(lambda a: LOG(a)),
            st.tuples(inner, st.sampled_from(_EXPONENTS)).map(lambda p: p[0] ** const(p[1])),
        )

    return st.recursive(base, grow, max_leaves=6)


# -- values -----------------------------------------------------------------------------------------


def test_rational_constants_are_interned_by_exact_value():
    third = rational(1, 3)
    assert third is const(Fraction(2, 6)) is parse("rational(1, 3)")
    assert third.dtype == "float64" and third.value == Fraction(1, 3) and third.value.__class__ is Rational
    assert rational(1, 2) is not const(0.5)  # distinct from any float constant
    assert rational(4, 2) is const(2) and rational(4, 2).dtype == "int64"  # whole: an int64
    assert rational(-3, -6) is rational(1, 2)
    assert pickle.loads(pickle.dumps(third)) is third
    pi = exact_constant("pi")
    assert pickle.loads(pickle.dumps(pi)) is pi and pi.value is PI and pi is parse("pi")
    assert pi is not const(math.pi) and parse("e") is not const(math.e)


def test_rational_builder_refuses_what_is_not_two_ints():
    with pytest.raises(TypeError):
        rational(1.5, 2)  # type: ignore[arg-type]
    with pytest.raises(ZeroDivisionError):
        rational(1, 0)
    with pytest.raises(ValueError):
        exact_constant("tau")


def test_casts_of_exact_values_round_once():
    assert const(Fraction(1, 3), "float32").value == np.float32(1 / 3)
    assert const(Fraction(7, 2), "int64").value == 3
    assert const(PI, "float64") is exact_constant("pi")
    assert const(PI, "float32").value == np.float32(math.pi)


def test_dtype_inference_treats_exact_constants_as_float64():
    n = Symbol("n", "int64")
    assert (rational(1, 3) * n).dtype == "float64"
    assert (exact_constant("pi") + 1).dtype == "float64"


def test_value_helpers():
    assert integer_root(10**40, 4) == 10**10 and integer_root(10**40 + 1, 4) is None
    assert integer_root(2**300, 3) == 2**100
    assert square_split(8) == (2, 2) and square_split(49) == (7, 1) and square_split(30) == (1, 30)
    assert rational_power(Fraction(-8), Fraction(1, 3)) is None  # a real root of a negative: nan in float64
    assert rational_power(Fraction(0), Fraction(-1)) is None  # 0**-1 is inf
    assert rational_power(Fraction(2), Fraction(10**6)) is None  # too big: the term stays
    assert isinstance(PI, ExactName) and float(PI) == math.pi and int(PI) == 3


# -- folding --------------------------------------------------------------------------------------

_OPS = [(operator.add, "add"), (operator.sub, "sub"), (operator.mul, "mul"), (operator.truediv, "truediv")]


@given(proper, fractions, st.sampled_from(_OPS))
def test_exact_arithmetic_is_fraction_arithmetic(a, b, op):
    fn, _ = op
    if fn is operator.truediv and b == 0:
        return
    folded = fold_exact(fn(const(a), const(b)))
    want = fn(a, b)
    assert folded is not None and folded.is_const
    assert folded.dtype == "float64"
    got = folded.value
    assert (Fraction(got) if got.__class__ is float else got) == want


@given(proper, st.integers(-4, 4))
def test_integer_powers_of_rationals_are_exact(q, k):
    folded = fold_exact(const(q) ** const(k))
    assert folded is not None and Fraction(folded.value) == q**k


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("sqrt(4)", "2.0"),
        ("sqrt(8)", "2*sqrt(2)"),
        ("sqrt(rational(1, 4))", "rational(1, 2)"),
        ("sqrt(rational(8, 9))", "rational(2, 3)*sqrt(2)"),
        ("sqrt(2)", None),
        ("sqrt(-4)", None),
        ("8**rational(1, 3)", "2.0"),
        ("rational(4, 9)**rational(3, 2)", "rational(8, 27)"),
        ("2**rational(1, 3)", None),
        ("sqrt(2)**2", "2.0"),
        ("2**rational(1, 2)", "sqrt(2)"),
        ("8**rational(1, 2)", "2*sqrt(2)"),
        ("sqrt(3)**4", "9.0"),
        ("log(1)", "0.0"),
        ("log(3)", None),
        ("log(e)", "1.0"),
        ("exp(0)", "1.0"),
        ("cos(0)", "1.0"),
        ("sin(pi)", None),
        ("1/3", "rational(1, 3)"),
        ("1/0", None),
        ("rational(7, 2)//1", "3.0"),
        ("rational(7, 2) % 1", "rational(1, 2)"),
        ("floor(rational(-7, 2))", "-4.0"),
        ("maximum(rational(1, 3), rational(1, 2))", "rational(1, 2)"),
        ("pi + 1", None),
    ],
)
def test_fold_exact_folds_only_to_exact_values(text, want):
    out = fold_exact(parse(text))
    assert (None if out is None else str(out)) == want


def test_int64_ops_keep_numpy_semantics_in_simplify():
    assert fold_exact(parse("2 + 3")) is None  # int64: not an exact fold
    wrapped = simplify(parse("(2**62)*4"))
    assert wrapped is const(0)  # int64 wraps around, as numpy computes it
    assert simplify(parse("-7//2")) is const(-4)  # floor division
    assert simplify(parse("7 % -2")) is const(-1)
    power = parse("2**-1")  # an int64 ** a negative int64 raises where it is evaluated: it stays
    assert simplify(power) is power and fold_exact(power) is None


def test_products_of_equal_roots_fold():
    root = SQRT(const(2))
    assert fold_exact(root * root) is const(2.0)
    assert fold_exact(SQRT(const(-2)) * SQRT(const(-2))) is None  # nan * nan, not -2
    assert fold_exact(parse("pi*pi")) is None


@given(exact_terms())
@settings(max_examples=150, deadline=None)
def test_folded_terms_evaluate_to_the_float_computation(t):
    """A fold never changes a value beyond rounding: evaluated, it agrees with the unfolded term."""
    for node in [t, simplify(t, method="rules")]:
        assert node.dtype == t.dtype
    with np.errstate(all="ignore"):
        try:
            want = float(evaluate(t))
        except EvaluationError:
            return  # an int64 ** a negative int64: an error of the input, kept where it is evaluated
        got = float(evaluate(simplify(t, method="rules")))
    if math.isnan(want) or math.isinf(want):
        return  # a nan or an inf may fold or not: not an exact value
    assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12), (str(t), want, got)


@given(exact_terms())
@settings(max_examples=100, deadline=None)
def test_is_exact_holds_for_exact_terms_and_folds_stay_exact(t):
    assert is_exact(t)
    out = fold_exact(t) if t.args else None
    if out is not None:
        assert is_exact(out) or (out.is_const and out.value.__class__ is float and out.value.is_integer())


def test_is_exact_refuses_floats_symbols_and_big_terms():
    assert not is_exact(parse("sqrt(2.0)")) and not is_exact(parse("sqrt(x)")) and not is_exact(const(True))
    big = rational(1, 3)
    for _ in range(100):
        big = big + rational(1, 3)
    assert not is_exact(big)


# -- printing, parsing ------------------------------------------------------------------------------


@given(exact_terms(symbol=True))
@settings(max_examples=150, deadline=None)
def test_print_parse_round_trip(t):
    assert parse(str(t)) is t
    assert parse(str(parse(str(t)))) is parse(str(t))


def test_repr_form_names_the_exact_builders():
    t = rational(1, 3) * X + exact_constant("pi")
    assert to_repr(t) == "add(mul(rational(1, 3), Symbol('x')), exact_constant('pi'))"
    assert str(rational(-2, 3) * X) == "rational(-2, 3)*x"
    assert str(-X * rational(1, 3)) == "-x*rational(1, 3)"


@pytest.mark.parametrize(
    "text", ["rational(1, 0)", "rational(x, 2)", "rational(1.5, 2)", "rational(1 2)", "rational(1, 2"]
)
def test_bad_rational_literals_raise_parse_errors(text):
    with pytest.raises(ParseError):
        parse(text)


def test_signed_rational_literals_parse():
    assert parse("rational(-1, 3)") is rational(-1, 3)
    assert parse("rational(1, -3)") is rational(-1, 3)
    assert parse("rational(+2, 4)") is rational(1, 2)


def test_int64_parse_reads_pi_and_e_as_names():
    assert parse("e + 1", dtype="int64").args[0] is Symbol("e", "int64")


# -- evaluation and compilation ---------------------------------------------------------------------


@given(exact_terms(symbol=True), st.floats(0.25, 4.0))
@settings(max_examples=100, deadline=None)
def test_evaluation_is_the_float_computation(t, x):
    """Exact constants evaluate as their float64 values: the same as the term with float constants."""
    (floats,) = float_constants([t])
    assert not any(n.is_const and n.value.__class__ in (Rational, ExactName) for n in _nodes(floats))
    with np.errstate(all="ignore"):
        a, b = evaluate(t, {"x": x}), evaluate(floats, {"x": x})
    assert np.array_equal(a, b, equal_nan=True)


def _nodes(t):
    return postorder((t,))


@given(exact_terms(symbol=True))
@settings(max_examples=30, deadline=None)
def test_the_numpy_backend_agrees_with_evaluate(t):
    xs = np.array([0.5, 1.25, 3.0])
    fn = compile_terms(t, [X], backend="numpy")
    with np.errstate(all="ignore"):
        want = np.broadcast_to(evaluate(t, {"x": xs}), xs.shape)
        got = np.broadcast_to(fn(xs), xs.shape)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0, equal_nan=True)


@pytest.mark.parametrize("backend", ["numpy", "llvm", "c"])
def test_backends_compute_exact_constants_as_floats(backend):
    t = parse("rational(1, 3)*x + pi*sin(x) + sqrt(2)*e + 2**rational(1, 3)*x**2")
    xs = np.linspace(-2.0, 2.0, 9)
    want = xs / 3 + math.pi * np.sin(xs) + math.sqrt(2) * math.e + 2 ** (1 / 3) * xs**2
    try:
        fn = compile_terms(t, [X], backend=backend)
    except (ImportError, CompilerNotFoundError) as exc:  # an optional backend, or no C compiler
        pytest.skip(f"{backend}: {exc}")
    tol = 1e-14 if backend == "c" else 1e-15  # the C backend's vector math may differ by an ulp
    np.testing.assert_allclose(fn(xs), want, rtol=tol, atol=tol)
    np.testing.assert_allclose(evaluate(t, {"x": xs}), want, rtol=1e-15, atol=1e-15)


# -- the simplifier ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("1/3 + 1/6", "rational(1, 2)"),
        ("sqrt(2)*sqrt(2)", "2.0"),
        ("rational(1, 3)*x + rational(2, 3)*x", "x"),
        ("2*x/4 + x/2", "x"),
        ("sqrt(12) - 2*sqrt(3)", "0.0"),
        ("2**(1/2)*2**(1/2)", "2.0"),
        ("log(0) - log(0)", "log(0) - log(0)"),  # -inf - -inf is nan: not a finite exact number
        ("sqrt(-1) - sqrt(-1)", "sqrt(-1) - sqrt(-1)"),
        ("x/3 + x/3 + x/3", "x"),
        ("sqrt(2) + 0.5", "1.9142135623730951"),
        ("x**rational(1, 3)*x**rational(1, 6)", None),
    ],
)
def test_simplify_keeps_exact_numbers(text, want):
    out = simplify(parse(text))
    if want is not None:
        assert str(out) == want
    with np.errstate(all="ignore"):
        got, want = float(evaluate(out, {"x": 1.7})), float(evaluate(parse(text), {"x": 1.7}))
    assert math.isclose(got, want, rel_tol=1e-15, abs_tol=1e-15) or (math.isnan(got) and math.isnan(want))


def test_rules_keep_exact_constants_symbolic():
    assert str(simplify(parse("2*pi*x"), method="rules")) == "2*pi*x"
    out = simplify(parse("log(2*x) - log(2)"), method="rules")
    assert not any(n.is_const and n.value.__class__ is float for n in _nodes(out))  # log(2) stays exact
    assert str(simplify(parse("x**rational(1, 3)*x**rational(1, 6)"), unsafe=True)) == "x**rational(1, 2)"


@given(st.lists(st.integers(1, 9), min_size=2, max_size=4), st.floats(-100, 100))
@settings(max_examples=60, deadline=None)
def test_like_terms_over_exact_divisors_collect_exactly(divisors, x):
    t = X / const(divisors[0])
    for d in divisors[1:]:
        t = t + X / const(d)
    total = sum(Fraction(1, d) for d in divisors)
    out = simplify(t)
    got = float(evaluate(out, {"x": x}))
    assert math.isclose(got, float(total * Fraction(x)), rel_tol=1e-14, abs_tol=1e-300)
