"""float32 terms: numpy 2's promotion, weak Python numbers, constants that print and parse back, evaluation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph import Symbol, const, parse, promote
from exprgraph.core.dtypes import weak_dtype
from exprgraph.errors import ParseError
from exprgraph.eval import evaluate

NP = {"bool": np.bool_, "int64": np.int64, "float32": np.float32, "float64": np.float64}
x = Symbol("x", "float32")
y = Symbol("y", "float32")


@pytest.mark.parametrize(("a", "b"), list(itertools.product(NP, repeat=2)))
def test_promotion_is_numpys_for_arrays(a: str, b: str) -> None:
    # promote() answers what numpy 2 gives two arrays of these dtypes
    assert promote(a, b) == np.result_type(NP[a], NP[b]).name.replace("bool", "bool")
    sa, sb = Symbol("a", a), Symbol("b", b)
    got = evaluate(sa * sb, {sa: np.ones(2, NP[a]), sb: np.ones(2, NP[b])})
    want = (np.ones(2, NP[a]) * np.ones(2, NP[b])).dtype
    # arithmetic counts bools as integers (numpy's bool * bool is a bool, ours an int64)
    assert (sa * sb).dtype == got.dtype.name == (want.name if want != np.bool_ else "int64")


def test_float32_dtype_rules() -> None:
    i = Symbol("i", "int64")
    b = Symbol("b", "bool")
    z = Symbol("z")
    assert (x + y).dtype == "float32" and (x * b).dtype == "float32" and (b + x).dtype == "float32"
    assert (x + z).dtype == "float64" and (x + i).dtype == "float64"  # numpy 2: float32 with int64 is float64
    assert (x / y).dtype == "float32" and (x / b).dtype == "float32" and (i / b).dtype == "float64"
    assert eg.sin(x).dtype == "float32" and eg.exp(b).dtype == "float64" and eg.sigmoid(x).dtype == "float32"
    assert eg.maximum(x, b).dtype == "float32" and eg.where(b, x, i).dtype == "float64"
    assert eg.sum(Symbol("V", "float32", shape=(3,))).dtype == "float32"
    assert eg.get_op("add")(b, b, x).dtype == "float32" and eg.get_op("add")(i, b, x).dtype == "float64"
    assert eg.as_dtype(np.float32) == "float32" and eg.as_dtype("f4") == "float32"


def test_python_numbers_are_weak_next_to_float32() -> None:
    # numpy 2 (NEP 50): a Python int or float takes the float32 operand's type; numpy scalars do not
    a = np.array([0.1, 2.5], dtype=np.float32)
    cases = [
        (x + 1.5, a + 1.5),
        (2 * x, 2 * a),
        (x**2, a**2),
        (x - 0.1, a - 0.1),
        (eg.maximum(x, 0), np.maximum(a, 0)),
        (eg.where(x > 1, x, 0.5), np.where(a > 1, a, 0.5)),
        (np.add(x, 1.5), np.add(a, 1.5)),
        (np.add(x, np.float64(1.5)), np.add(a, np.float64(1.5))),
        (x + True, a + True),
    ]
    for term, want in cases:
        got = evaluate(term, {x: a})
        assert term.dtype == want.dtype.name == got.dtype.name, term
        assert np.array_equal(got, want), term
    # a comparison with 0.1 compares with float32(0.1), as numpy 2 does
    assert evaluate(eq(x, 0.1), {x: np.float32(0.1)}) == (np.float32(0.1) == 0.1)
    # next to float64 or int64 operands a Python number keeps its own dtype
    assert (Symbol("z") + 1.5).args[1].dtype == "float64" and (Symbol("i", "int64") + 1).args[1].dtype == "int64"
    assert eg.maximum(x, Symbol("i", "int64"), 0.1).args[2].value == 0.1  # float64(0.1): the result is float64
    assert weak_dtype(1, "float32") == "float32" and weak_dtype(True, "float32") is None
    assert weak_dtype(1.5, "float64") is None


def eq(a: object, b: object) -> eg.Term:
    return eg.get_op("eq")(a, b)


def test_float32_constants_intern_by_bits() -> None:
    c = const(np.float32(1.5))
    assert c.dtype == "float32" and c.value.__class__ is np.float32
    assert const(1.5, "float32") is c and const(np.array(1.5, np.float32)) is c
    assert const(1.5) is not c  # a float64 1.5 is another constant
    assert const(-0.0, "float32") is not const(0.0, "float32")
    assert const(float("nan"), "float32") is const(np.float32("nan"))
    assert const(1e300, "float32").value == np.inf  # rounded as numpy casts
    arr = const(np.array([1.0, 2.0], np.float32))
    assert arr.dtype == "float32" and const([1.0, 2.0], "float32") is arr and const([1.0, 2.0]) is not arr


SINGLES = st.floats(width=32, allow_nan=True, allow_infinity=True)


@given(SINGLES)
@settings(max_examples=300, deadline=None)
def test_float32_constants_print_and_parse_back(v: float) -> None:
    c = const(np.float32(v), "float32")
    for term in (c, x * c - c, eg.sin(c + x)):
        text = str(term)
        assert parse(text, [x]) is term, text
        names = {**vars(eg), "array": np.array, "inf": math.inf, "nan": math.nan}
        assert eval(repr(term), names) is term  # the repr is exprgraph constructor code


def test_float32_constants_print_shortest() -> None:
    assert str(x + 0.1) == "x + float32(0.1)"
    assert str(x * -2.5) == "x*float32(-2.5)"
    assert repr(const(0.1, "float32")) == "const(0.1, 'float32')"
    arr = const(np.array([0.5, -1.0], np.float32))
    assert str(arr) == "float32(array([0.5, -1.0]))" and parse(str(arr)) is arr
    assert parse("float32(-inf)").value == -np.inf and parse("float32(1e-45)").value == np.float32(1e-45)
    assert eg.latex(x * 0.1) == "x \\cdot 0.1"


@pytest.mark.parametrize("text", ["float32(x)", "float32()", "float32(1, 2)", "float32(True)", "float32(-)"])
def test_bad_float32_literals_raise_parse_errors(text: str) -> None:
    with pytest.raises(ParseError, match="float32"):
        parse(text)


def test_evaluate_in_float32() -> None:
    rng = np.random.default_rng(1)
    a = rng.uniform(-3, 3, 1000).astype(np.float32)
    b = rng.uniform(0.1, 3, 1000).astype(np.float32)
    f = eg.sin(x * y) * eg.exp(-x) / (1 + x**2) + eg.sqrt(y) + eg.tanh(x) + eg.log(y) + x // y + x % y
    got = evaluate(f, {x: a, y: b})
    want = np.sin(a * b) * np.exp(-a) / (1 + a**2) + np.sqrt(b) + np.tanh(a) + np.log(b) + a // b + a % b
    assert got.dtype == np.float32 and want.dtype == np.float32
    assert np.array_equal(got, want)  # the same float32 ufuncs, step by step
    # a float64 env value is rounded to the symbol's float32
    assert evaluate(x, {x: 0.1}) == np.float32(0.1) and evaluate(x, {x: 0.1}).dtype == np.float32
    special = np.array([np.nan, np.inf, -np.inf, -0.0], np.float32)
    out = evaluate([x * 1.0, -x, eg.sigmoid(x)], {x: special})
    assert np.isnan(out[0][0]) and out[0][1] == np.inf and math.copysign(1, out[1][3]) == 1.0
    assert out[2].tolist()[1:] == [1.0, 0.0, 0.5] and out[2].dtype == np.float32
