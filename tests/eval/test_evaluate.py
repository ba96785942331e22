"""evaluate(): each op against numpy, dtypes, IEEE semantics, floor division, env and shape errors."""

from __future__ import annotations

import math
import uuid
import warnings

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import exprgraph as eg
from exprgraph import Symbol, const, get_op, symbols
from exprgraph.errors import EvaluationError
from exprgraph.eval import evaluate

x, y = symbols("x y")
i, j = symbols("i j", "int64")
p, q = symbols("p q", "bool")

floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
finite = st.floats(-1e6, 1e6, allow_nan=False)
small_ints = st.integers(-50, 50)


def float_pairs(min_size: int = 1, max_size: int = 12):
    """Two float arrays of one random length."""
    return st.integers(min_size, max_size).flatmap(
        lambda n: st.tuples(st.lists(floats, min_size=n, max_size=n), st.lists(floats, min_size=n, max_size=n))
    )


def int_pairs(ints=small_ints, max_size: int = 12):
    """Two int arrays of one random length."""
    return st.integers(1, max_size).flatmap(
        lambda n: st.tuples(st.lists(ints, min_size=n, max_size=n), st.lists(ints, min_size=n, max_size=n))
    )


def numpy_ref(fn, *values):
    with np.errstate(all="ignore"):
        return fn(*values)


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    # evaluation must never warn (IEEE results are silent), so every test here fails on a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# -- each op against numpy ---------------------------------------------------------------------------

FLOAT_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.true_divide,
    "floordiv": np.floor_divide,
    "mod": np.mod,
    "pow": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
}

FLOAT_UNARY = {
    "neg": np.negative,
    "abs": np.abs,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "logical_not": np.logical_not,
}


@pytest.mark.parametrize("name", sorted(FLOAT_BINARY))
@settings(max_examples=25, deadline=None)
@given(data=float_pairs())
def test_binary_float_op_matches_numpy(name, data):
    a, b = np.array(data[0]), np.array(data[1])
    got = evaluate(get_op(name)(x, y), {x: a, y: b})
    np.testing.assert_array_equal(got, numpy_ref(FLOAT_BINARY[name], a, b))


@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
@settings(max_examples=25, deadline=None)
@given(data=st.lists(floats, min_size=1, max_size=12))
def test_unary_float_op_matches_numpy(name, data):
    a = np.array(data)
    got = evaluate(get_op(name)(x), {x: a})
    np.testing.assert_array_equal(got, numpy_ref(FLOAT_UNARY[name], a))


@settings(max_examples=50, deadline=None)
@given(data=st.lists(finite, min_size=1, max_size=12))
def test_sigmoid_is_the_logistic_function(data):
    a = np.array(data)
    got = evaluate(eg.sigmoid(x), {x: a})
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, numpy_ref(lambda v: 1 / (1 + np.exp(-v)), a), rtol=1e-9, atol=1e-15)
    assert np.all((got >= 0) & (got <= 1))


def test_sigmoid_keeps_relative_precision_for_negative_inputs():
    a = np.array([-11.0, -30.0, -40.0, -700.0])
    want = np.exp(a) / (1 + np.exp(a))  # exact enough here: exp(a) is tiny, no cancellation
    np.testing.assert_allclose(evaluate(eg.sigmoid(x), {x: a}), want, rtol=1e-13)


INT_BINARY = {k: v for k, v in FLOAT_BINARY.items() if k != "pow"}


@pytest.mark.parametrize("name", sorted(INT_BINARY))
@settings(max_examples=25, deadline=None)
@given(data=int_pairs())
def test_binary_int_op_matches_numpy(name, data):
    a, b = np.array(data[0], dtype=np.int64), np.array(data[1], dtype=np.int64)
    term = get_op(name)(i, j)
    got = evaluate(term, {i: a, j: b})
    np.testing.assert_array_equal(got, numpy_ref(INT_BINARY[name], a, b))
    assert got.dtype == np.dtype(term.dtype)


@settings(max_examples=50, deadline=None)
@given(data=int_pairs(st.integers(-9, 9)))
def test_int_pow_with_non_negative_exponent_matches_numpy(data):
    a, b = np.array(data[0], dtype=np.int64), np.abs(np.array(data[1], dtype=np.int64))
    got = evaluate(i**j, {i: a, j: b})
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, a**b)


@pytest.mark.parametrize("exponent", [2, 2.0])
def test_square_matches_power_exactly(exponent):
    a = np.array([0.0, -0.0, -3.5, 1e200, -1e-200, np.inf, -np.inf, np.nan, 1 / 3])
    got = evaluate(x**exponent, {x: a})
    np.testing.assert_array_equal(got, numpy_ref(np.power, a, exponent))
    assert np.signbit(got[1]) == np.signbit(numpy_ref(np.power, -0.0, exponent))
    ints = np.array([-3, 0, 7, 3_037_000_500])  # the last one overflows int64 exactly as power does
    np.testing.assert_array_equal(evaluate(i**2, {i: ints}), numpy_ref(np.power, ints, 2))


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=8))
def test_an_array_of_exponents_2_gives_the_square_a_scalar_2_gives(values):
    # numpy squares for a scalar 2 but calls C's pow for an array of 2s (an ulp off at some points)
    a = np.array(values)
    k = Symbol("k", "int64")
    want = evaluate(x**2.0, {x: a})
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(want, a * a)
    for exponent, s in ((np.full(a.shape, 2.0), y), (np.full(a.shape, 2), k)):
        got = evaluate(x**s, {x: a, s: exponent})
        assert np.array_equal(got, want, equal_nan=True), (values, got, want)
        numpy_backend = eg.compile([x**s], [x, s], backend="numpy")(a, exponent)[0]
        assert np.array_equal(numpy_backend, want, equal_nan=True)
    assert evaluate(x**y, {x: 2.610434542726609, y: np.array([2.0, 0.5])})[0] == 2.610434542726609**2


def test_where_and_variadic_ops():
    a, b = np.array([-1.0, 0.0, 2.0]), np.array([5.0, -5.0, 1.0])
    np.testing.assert_array_equal(evaluate(eg.where(x > 0, x, y), {x: a, y: b}), np.where(a > 0, a, b))
    z = Symbol("z")
    c = np.array([1.0, 1.0, -7.0])
    env = {x: a, y: b, z: c}
    np.testing.assert_array_equal(evaluate(eg.add(x, y, z, x), env), a + b + c + a)
    np.testing.assert_array_equal(evaluate(eg.mul(x, y, z), env), a * b * c)
    np.testing.assert_array_equal(evaluate(eg.maximum(x, y, z), env), np.maximum(np.maximum(a, b), c))
    np.testing.assert_array_equal(evaluate(eg.minimum(x, y, z), env), np.minimum(np.minimum(a, b), c))
    assert evaluate(eg.where(p, i, x), {p: True, i: 3, x: 1.5}) == 3.0
    assert evaluate(eg.where(p, i, x), {p: True, i: 3, x: 1.5}).dtype == np.float64


def test_tensor_ops_match_numpy():
    rng = np.random.default_rng(1)
    A = Symbol("A", shape=(3, 4))
    B = Symbol("B", shape=(4, 2))
    v = Symbol("v", shape=(4,))
    T = Symbol("T", shape=(2, 3, 4))
    a, b, vv, t = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=4), rng.normal(size=(2, 3, 4))
    env = {A: a, B: b, v: vv, T: t}
    np.testing.assert_array_equal(evaluate(A @ B, env), a @ b)
    np.testing.assert_array_equal(evaluate(A @ v, env), a @ vv)
    np.testing.assert_array_equal(evaluate(eg.dot(A, B), env), np.dot(a, b))
    np.testing.assert_array_equal(evaluate(eg.dot(v, v), env), np.dot(vv, vv))
    np.testing.assert_array_equal(evaluate(eg.sum(A), env), np.sum(a))
    np.testing.assert_array_equal(evaluate(eg.sum(A, axis=1), env), np.sum(a, axis=1))
    np.testing.assert_array_equal(evaluate(eg.sum(T, axis=(0, 2)), env), np.sum(t, axis=(0, 2)))
    np.testing.assert_array_equal(evaluate(eg.transpose(A), env), a.T)
    np.testing.assert_array_equal(evaluate(eg.transpose(T, axes=(1, 0, 2)), env), np.transpose(t, (1, 0, 2)))
    np.testing.assert_array_equal(evaluate(T @ B, env), t @ b)
    Ai = Symbol("Ai", "int64", shape=(2, 2))
    Ab = Symbol("Ab", "bool", shape=(2, 2))
    m = np.array([[1, 2], [3, 4]])
    got = evaluate(Ai @ Ab, {Ai: m, Ab: [[True, False], [True, True]]})
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, m @ np.array([[1, 0], [1, 1]]))
    assert evaluate(eg.sum(Ab), {Ab: [[True, True], [True, False]]}) == 3


# -- dtypes ------------------------------------------------------------------------------------------

DTYPE_VALUES = {"float64": 2.5, "int64": 3, "bool": True}
DTYPE_CASES = [
    (name, da, db)
    for name in ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "maximum", "minimum", "lt", "eq"]
    for da in DTYPE_VALUES
    for db in DTYPE_VALUES
]


@pytest.mark.parametrize(("name", "da", "db"), DTYPE_CASES)
def test_result_has_the_declared_dtype(name, da, db):
    a, b = Symbol("a", da), Symbol("b", db)
    term = get_op(name)(a, b)
    for va, vb in [(DTYPE_VALUES[da], DTYPE_VALUES[db]), ([DTYPE_VALUES[da]] * 3, DTYPE_VALUES[db])]:
        got = evaluate(term, {a: va, b: vb})
        assert got.dtype == np.dtype(term.dtype), (name, da, db)


@pytest.mark.parametrize("name", ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid"])
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_unary_result_dtype(name, dtype):
    a = Symbol("a", dtype)
    term = get_op(name)(a)
    for value in (DTYPE_VALUES[dtype], [DTYPE_VALUES[dtype]] * 4):
        got = evaluate(term, {a: value})
        assert got.dtype == np.dtype(term.dtype)
    if term.dtype == "float64" and name != "sigmoid":
        # bools and ints are computed in float64 (numpy alone would use float16 for bools)
        assert evaluate(term, {a: DTYPE_VALUES[dtype]}) == get_op(name).ufunc(np.float64(DTYPE_VALUES[dtype]))


def test_bools_count_as_integers_in_arithmetic():
    env = {p: True, q: True}
    assert evaluate(p + q, env) == 2
    assert evaluate(p - q - q, env) == -1
    assert evaluate(-p, env) == -1
    assert evaluate(abs(p), env) == 1
    assert evaluate(p * q * 3, env) == 3
    assert evaluate(p // q, env) == 1
    assert evaluate(eg.maximum(p, q), env).dtype == np.bool_  # max keeps bools
    got = evaluate(p + q, {p: [True, False], q: [True, True]})
    assert got.dtype == np.int64
    assert got.tolist() == [2, 1]
    assert evaluate(p & q, env).dtype == np.bool_
    assert evaluate(~p, env) == np.False_


def test_scalar_results_are_numpy_scalars_of_the_dtype():
    assert type(evaluate(x + 1, {x: 1})) is np.float64
    assert type(evaluate(i + 1, {i: 1})) is np.int64
    assert type(evaluate(x < 1, {x: 1})) is np.bool_
    assert type(evaluate(eg.sum(eg.Symbol("V", shape=(2,))), {"V": [1.0, 2.0]})) is np.float64


def test_constants_evaluate_to_their_numpy_values():
    assert type(evaluate(const(2), {})) is np.int64
    assert type(evaluate(const(2.0), {})) is np.float64
    assert type(evaluate(const(True), {})) is np.bool_
    arr = evaluate(const([1, 2, 3]), {})
    assert arr.dtype == np.int64 and arr.tolist() == [1, 2, 3]
    assert evaluate(const(-0.0)) == 0.0 and math.copysign(1, evaluate(const(-0.0))) == -1
    assert np.isnan(evaluate(const(math.nan)))


def test_symbol_values_are_cast_to_the_declared_dtype():
    assert evaluate(i, {i: 2.9}) == 2
    assert evaluate(i * 1, {i: [1.0, 2.0]}).dtype == np.int64
    assert evaluate(p + 0, {p: [0, 2]}).tolist() == [0, 1]
    got = evaluate(x + 0, {x: np.array([1, 2], dtype=np.int32)})
    assert got.dtype == np.float64
    got = evaluate(x * 2, {x: np.array([1.5], dtype=np.float32)})
    assert got.dtype == np.float64
    with pytest.raises(EvaluationError, match="'x'"):
        evaluate(x + 1, {x: "not a number"})
    with pytest.raises(EvaluationError, match="'i'"):
        evaluate(i + 1, {i: 2**70})
    with pytest.raises(EvaluationError, match=r"'i'.*NaN"):
        evaluate(i + 1, {i: [np.nan]})
    assert evaluate(i + 1, {i: np.array([np.nan, 2.5])}).dtype == np.int64  # numpy's unsafe cast, silently


# -- IEEE semantics without warnings -----------------------------------------------------------------


@pytest.mark.parametrize("value", [0.0, -1.0, np.array([0.0, -1.0, np.inf, np.nan])])
def test_ieee_results_without_warnings(value):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        terms = [eg.log(x), 1 / x, x / x, eg.sqrt(x), eg.exp(-1000 * x), x // 0, x % 0, eg.log(x) * 0]
        got = evaluate(terms, {x: value})
    with np.errstate(all="ignore"):
        a = np.asarray(value, dtype=np.float64)
        want = [np.log(a), 1 / a, a / a, np.sqrt(a), np.exp(-1000 * a), a // 0, a % 0, np.log(a) * 0]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_ieee_special_values():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(evaluate(eg.log(x), {x: -1.0}))
        assert evaluate(1 / x, {x: 0.0}) == np.inf
        assert evaluate(-1 / x, {x: 0.0}) == -np.inf
        assert evaluate(eg.log(x), {x: 0.0}) == -np.inf
        assert evaluate(eg.exp(x), {x: 1000.0}) == np.inf
        assert np.isnan(evaluate(x * 0, {x: np.inf}))
        big = 2**62
        assert evaluate(i * 4, {i: big}) == np.int64(0)  # int64 wraps around, silently
        assert evaluate(i // 0, {i: 7}) == 0
        assert evaluate(i % 0, {i: -7}) == 0
        assert evaluate(i // j, {i: [1, -1], j: 0}).tolist() == [0, 0]


def test_no_warning_leaks_to_the_caller_state():
    evaluate(eg.log(x), {x: -1.0})
    assert np.geterr()["invalid"] == "warn"


# -- floor semantics -----------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(a=st.integers(-1000, 1000), b=st.integers(-1000, 1000).filter(bool))
def test_integer_floordiv_and_mod_follow_python(a, b):
    assert evaluate(i // j, {i: a, j: b}) == a // b
    assert evaluate(i % j, {i: a, j: b}) == a % b


@settings(max_examples=100, deadline=None)
@given(a=finite, b=finite.filter(bool))
def test_float_floordiv_and_mod_follow_python(a, b):
    assert evaluate(x // y, {x: a, y: b}) == a // b
    assert evaluate(x % y, {x: a, y: b}) == a % b


def test_floor_semantics_for_negative_ints():
    a = np.array([-7, -7, 7, 7, -1, 0])
    b = np.array([2, -2, -2, 2, 3, -3])
    assert evaluate(i // j, {i: a, j: b}).tolist() == [u // v for u, v in zip(a.tolist(), b.tolist(), strict=True)]
    assert evaluate(i % j, {i: a, j: b}).tolist() == [u % v for u, v in zip(a.tolist(), b.tolist(), strict=True)]


def test_integer_to_negative_integer_power_is_an_error():
    with pytest.raises(EvaluationError, match="negative integer"):
        evaluate(i**j, {i: 2, j: -1})
    with pytest.raises(EvaluationError, match="negative integer"):
        evaluate(i**j, {i: [2, 3], j: [1, -2]})
    with pytest.raises(EvaluationError, match="negative integer"):
        evaluate(i ** const(-3), {i: 2})
    assert evaluate(i**j, {i: 2, j: 3}) == 8
    assert evaluate(x**j, {x: 2.0, j: -1}) == 0.5
    assert evaluate(i ** const(-1.0), {i: 2}) == 0.5


# -- env ---------------------------------------------------------------------------------------------------


def test_env_by_name_and_by_term():
    assert evaluate(x - y, {"x": 5.0, "y": 2.0}) == 3.0
    assert evaluate(x - y, {x: 5.0, y: 2.0}) == 3.0
    assert evaluate(x - y, {x: 5.0, "y": 2.0}) == 3.0
    assert evaluate(x - y, {x: 5.0, "x": 100.0, "y": 2.0}) == 3.0  # the term key wins
    assert evaluate(const(3) + 1) == 4  # no env needed without symbols
    # two symbols named alike but of different dtypes each get the name's value in their dtype
    xi = Symbol("x", "int64")
    assert evaluate(x + xi, {"x": 2.5}) == 4.5


def test_missing_symbol_names_it():
    with pytest.raises(EvaluationError, match=r"'y'"):
        evaluate(x * y + 1, {x: 1.0})
    with pytest.raises(EvaluationError, match=r"'weight'"):
        evaluate([x, Symbol("weight") * 2], {"x": 1.0})
    with pytest.raises(EvaluationError, match=r"'A'"):
        evaluate(eg.sum(Symbol("A", shape=(2,))), {})


def test_bad_env_and_arguments():
    # (a term other than a symbol is a key too: its value replaces its computation, see test_inputs.py)
    with pytest.raises(EvaluationError, match="terms or names"):
        evaluate(x + 1, {3: 2.0})
    with pytest.raises(TypeError, match="mapping"):
        evaluate(x + 1, [(x, 1.0)])
    with pytest.raises(TypeError, match="term"):
        evaluate("x + 1", {x: 1.0})
    with pytest.raises(TypeError, match="terms"):
        evaluate([x, 1.0], {x: 1.0})


def test_list_and_tuple_of_terms_give_a_list():
    got = evaluate((x + 1, x * 2, x), {x: 3.0})
    assert isinstance(got, list) and got == [4.0, 6.0, 3.0]
    assert evaluate([], {}) == []
    assert evaluate([x + 1, x + 1], {x: 1.0}) == [2.0, 2.0]


# -- vectorisation and broadcasting ----------------------------------------------------------------------


def test_vectorised_over_parameter_sets():
    rng = np.random.default_rng(7)
    xs, ys = rng.normal(size=1000), rng.normal(size=1000)
    f = eg.sin(x * y) + eg.exp(-(x**2)) * y - x / (1 + y * y)
    got = evaluate(f, {x: xs, y: ys})
    want = [evaluate(f, {x: a, y: b}) for a, b in zip(xs[:50], ys[:50], strict=True)]
    np.testing.assert_allclose(got[:50], want, rtol=1e-15)
    np.testing.assert_allclose(got, np.sin(xs * ys) + np.exp(-(xs**2)) * ys - xs / (1 + ys * ys), rtol=1e-15)


def test_broadcasting_between_scalar_symbols():
    a = np.arange(3.0).reshape(3, 1)
    b = np.arange(4.0)
    got = evaluate(x * 10 + y, {x: a, y: b})
    assert got.shape == (3, 4)
    np.testing.assert_array_equal(got, a * 10 + b)
    got = evaluate([x + y, x], {x: 2.0, y: b})
    np.testing.assert_array_equal(got[0], 2.0 + b)
    assert got[1] == 2.0


def test_operands_that_do_not_broadcast_raise():
    with pytest.raises(EvaluationError, match="add"):
        evaluate(x + y, {x: np.zeros(3), y: np.zeros(2)})


# -- shapes and symbolic dimensions ----------------------------------------------------------------------


def test_tensor_symbol_needs_its_declared_shape():
    A = Symbol("A", shape=(2, 3))
    assert evaluate(eg.sum(A), {A: np.ones((2, 3))}) == 6.0
    with pytest.raises(EvaluationError, match=r"'A'.*shape \(3, 2\).*axis 0 is 3, expected 2"):
        evaluate(eg.sum(A), {A: np.ones((3, 2))})
    with pytest.raises(EvaluationError, match=r"'A'.*shape \(6,\): expected 2 axes, got 1"):
        evaluate(eg.sum(A), {A: np.ones(6)})
    with pytest.raises(EvaluationError, match=r"'A'"):
        evaluate(eg.sum(A), {A: 1.0})


def test_symbolic_dimensions_bind_consistently():
    A = Symbol("A", shape=("m", "n"))
    B = Symbol("B", shape=("n", "k"))
    m, n = symbols("m n", "int64")
    a, b = np.ones((2, 3)), np.ones((3, 5))
    assert evaluate(A @ B, {A: a, B: b}).shape == (2, 5)
    with pytest.raises(EvaluationError, match=r"'B'.*axis 0.*'n' is 3 \(from axis 1 of 'A'\)"):
        evaluate(A @ B, {A: a, B: np.ones((4, 5))})
    # a dimension given in the env, by name or by term, must agree
    assert evaluate(A @ B, {A: a, B: b, "n": 3}).shape == (2, 5)
    with pytest.raises(EvaluationError, match=r"'n' is 4 \(from the env\)"):
        evaluate(A @ B, {A: a, B: b, n: 4})
    with pytest.raises(EvaluationError, match="non-negative integer"):
        evaluate(eg.sum(A), {A: a, "m": 2.5})
    # a dimension symbol used as a value takes its bound size
    got = evaluate(eg.sum(A) / (m * n), {A: np.arange(6.0).reshape(2, 3)})
    assert got == 2.5
    with pytest.raises(EvaluationError, match="'m'"):
        evaluate(m + 1, {})


def test_compound_dimensions_are_checked():
    n = Symbol("n", "int64")
    V = Symbol("V", shape=("n",))
    W = Symbol("W", shape=("n+1",))
    assert evaluate(eg.sum(V) + eg.sum(W), {V: np.ones(3), W: np.ones(4)}) == 7.0
    with pytest.raises(EvaluationError, match=r"'W'.*size 5 on axis 0.*n \+ 1 is 4"):
        evaluate(eg.sum(V) + eg.sum(W), {V: np.ones(3), W: np.ones(5)})
    assert evaluate(eg.sum(W), {W: np.ones(4), n: 3}) == 4.0
    with pytest.raises(EvaluationError, match="needs 'n'"):
        evaluate(eg.sum(W), {W: np.ones(4)})


# -- ops from the op table --------------------------------------------------------------------------------


def _unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def test_registered_ufunc_op_evaluates():
    op = eg.register_op(eg.Op(_unique("hypot"), 2, lambda args, attr: ("float64", args[0].shape), ufunc=np.hypot))
    assert evaluate(op(x, y), {x: 3.0, y: 4.0}) == 5.0
    np.testing.assert_array_equal(evaluate(op(x * 1, y), {x: [3.0, 5.0], y: 4.0}), [5.0, np.hypot(5.0, 4.0)])


def test_registered_impl_op_with_attr_evaluates():
    op = eg.register_op(
        eg.Op(
            _unique("scale"),
            1,
            lambda args, attr: ("float64", args[0].shape),
            impl=lambda v, attr: v * attr,
            attr_name="factor",
        )
    )
    assert evaluate(op(x, factor=3), {x: 2.0}) == 6.0
    # an impl returning a Python number is brought to the declared dtype
    op2 = eg.register_op(eg.Op(_unique("pyfloat"), 1, lambda args, attr: ("float64", ()), impl=lambda v: 1))
    got = evaluate(op2(x), {x: 2.0})
    assert type(got) is np.float64 and got == 1.0


def test_op_without_implementation_is_an_error():
    name = _unique("opaque")
    op = eg.register_op(eg.Op(name, 1, lambda args, attr: ("float64", args[0].shape)))
    with pytest.raises(EvaluationError, match=name):
        evaluate(op(x) + 1, {x: 1.0})


def test_axis_ops_on_scalar_terms_keep_the_points_apart():
    # a scalar term evaluated over many points: sum/transpose act on the term's own (no) axes
    from exprgraph import Symbol, sum, transpose  # noqa: A004

    x = Symbol("x")
    points = np.array([1.0, -2.0, 3.5])
    np.testing.assert_array_equal(evaluate(sum(x) * 2, {x: points}), points * 2)
    np.testing.assert_array_equal(evaluate(transpose(x) + 1, {x: points}), points + 1)
    A = Symbol("A", shape=(2, 3))
    value = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(evaluate(sum(A, axis=-1), {A: value}), value.sum(axis=-1))
