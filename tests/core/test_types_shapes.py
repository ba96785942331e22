"""dtype and shape rules of the op table, symbolic dimensions and their errors."""

from __future__ import annotations

import pytest

import exprgraph as eg
from exprgraph import DTypeError, ShapeError, Symbol, const, symbols


def test_arithmetic_dtypes():
    x = Symbol("x")
    n, m = symbols("n m", dtype="int64")
    b = Symbol("b", dtype=bool)
    assert (n + m).dtype == "int64"
    assert (n + x).dtype == "float64"
    assert (b + b).dtype == "int64"  # bools count as integers
    assert (n / m).dtype == "float64"
    assert (n // m).dtype == "int64" and (n % m).dtype == "int64"
    assert (n**m).dtype == "int64"
    assert (-b).dtype == "int64"
    assert eg.exp(n).dtype == "float64"
    assert eg.maximum(b, b).dtype == "bool"
    assert (n < x).dtype == "bool"
    assert (b & b).dtype == "bool" and (~b).dtype == "bool"
    assert eg.where(b, n, x).dtype == "float64"
    assert eg.where(b, n, m).dtype == "int64"


def test_dtype_spellings():
    assert eg.as_dtype(float) == "float64"
    assert eg.as_dtype("int") == "int64"
    assert eg.as_dtype(bool) == "bool"
    import numpy as np

    assert eg.as_dtype(np.float64) == "float64"
    with pytest.raises(DTypeError):
        eg.as_dtype("complex128")
    with pytest.raises(DTypeError):
        Symbol("x", dtype="float16")


def test_broadcasting_shapes():
    A = Symbol("A", shape=(3, 1))
    B = Symbol("B", shape=(4,))
    x = Symbol("x")
    assert (A + B).shape == (3, 4)
    assert (A * x).shape == (3, 1)
    assert eg.where(x < 0, A, B).shape == (3, 4)
    with pytest.raises(ShapeError, match="do not broadcast"):
        Symbol("C", shape=(3,)) + Symbol("D", shape=(4,))


def test_symbolic_dimensions():
    X = Symbol("X", shape=("batch", 3))
    batch = Symbol("batch", "int64")
    assert X.shape == (batch, 3)
    Y = Symbol("Y", shape=("seq+1",))
    (d,) = Y.shape
    assert d is Symbol("seq", "int64") + 1
    assert Symbol("Z", shape=(batch * 2, const(4))).shape == (batch * 2, 4)
    # a symbolic dim against a known size: the known size wins (the symbol must be 1 or equal)
    assert (X + Symbol("W", shape=(7, 3))).shape == (7, 3)
    # two different symbolic dims broadcast to their maximum
    S = Symbol("S", shape=("s",))
    T = Symbol("T", shape=("t",))
    assert (S + T).shape == (eg.maximum(Symbol("s", "int64"), Symbol("t", "int64")),)
    assert (X * X).shape is X.shape


def test_bad_dimensions():
    with pytest.raises(ShapeError):
        Symbol("A", shape=(-1,))
    with pytest.raises(ShapeError):
        Symbol("A", shape=(1.5,))
    with pytest.raises(ShapeError):
        Symbol("A", shape=(True,))
    with pytest.raises(ShapeError):
        Symbol("A", shape=(Symbol("f"),))  # a float term is no dimension
    with pytest.raises(eg.ParseError):
        Symbol("A", shape=("n+",))


def test_dot_and_matmul_shapes():
    A = Symbol("A", shape=(2, 3))
    B = Symbol("B", shape=(3, 4))
    v = Symbol("v", shape=(3,))
    assert eg.dot(A, B).shape == (2, 4)
    assert eg.dot(A, v).shape == (2,)
    assert eg.dot(v, v).shape == ()
    assert (A @ B).shape == (2, 4)
    assert (A @ v).shape == (2,)
    assert (v @ B).shape == (4,)
    assert (Symbol("S", shape=(5, 2, 3)) @ B).shape == (5, 2, 4)
    with pytest.raises(ShapeError, match="contracted"):
        A @ A
    with pytest.raises(ShapeError):
        eg.dot(A, Symbol("C", shape=(4, 4)))
    with pytest.raises(ShapeError):
        Symbol("x") @ A
    with pytest.raises(ShapeError):
        eg.dot(Symbol("S", shape=(1, 2, 3)), B)
    m = Symbol("M", shape=("n", "k"))
    assert (m @ Symbol("N", shape=("k", 2))).shape == (Symbol("n", "int64"), 2)


def test_sum_and_transpose_shapes():
    A = Symbol("A", shape=(2, 3, 4))
    assert eg.sum(A).shape == ()
    assert eg.sum(A, axis=1).shape == (2, 4)
    assert eg.sum(A, axis=(0, -1)).shape == (3,)
    assert eg.sum(A, axis=[0, 2]) is eg.sum(A, axis=(0, 2))
    assert eg.transpose(A).shape == (4, 3, 2)
    assert eg.transpose(A, axes=(1, 0, 2)).shape == (3, 2, 4)
    with pytest.raises(ShapeError):
        eg.sum(A, axis=3)
    with pytest.raises(ShapeError):
        eg.sum(A, axis=(0, 0))
    with pytest.raises(ShapeError):
        eg.transpose(A, axes=(0, 1))
    assert eg.sum(Symbol("b", "bool", shape=(3,))).dtype == "int64"


def test_arity_is_checked():
    x = Symbol("x")
    with pytest.raises(TypeError, match="operands"):
        eg.exp(x, x)
    with pytest.raises(TypeError):
        eg.add(x)
    assert eg.add(x, x, x).args == (x, x, x)
    with pytest.raises(TypeError):
        eg.Term(eg.get_op("add"), (x, 1))
    with pytest.raises(TypeError):
        eg.exp(x, axis=0)
