"""Random terms for the converter round trips, and the seeds' examples."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from exprgraph import Symbol, const, get_op, symbols

X, Y, Z = symbols("x y z")
N, M = Symbol("n", "int64"), Symbol("m", "int64")
B = Symbol("b", "bool")

UNARY = ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid"]
BINARY = ["add", "sub", "mul", "truediv", "maximum", "minimum"]
COMPARE = ["lt", "le", "gt", "ge", "eq", "ne"]
INT_BINARY = ["add", "sub", "mul", "floordiv", "mod", "maximum", "minimum"]


def _build(draw_op: str, *args):
    return get_op(draw_op)(*args)


@st.composite
def float_terms(draw, depth: int = 4, *, floor: bool = True):
    """A random float64 scalar term over x, y, z (with powers, where and, optionally, // and %)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return draw(st.sampled_from([X, Y, Z]))
        return const(draw(st.sampled_from([0.5, 1.0, 2.0, 3.0, -1.5, 2, 3])))
    kind = draw(st.integers(0, 9))
    if kind <= 3:
        return _build(draw(st.sampled_from(UNARY)), draw(float_terms(depth - 1, floor=floor)))
    if kind <= 7:
        op = draw(st.sampled_from(BINARY + (["floordiv", "mod"] if floor else [])))
        return _build(op, draw(float_terms(depth - 1, floor=floor)), draw(float_terms(depth - 1, floor=floor)))
    if kind == 8:
        base = draw(float_terms(depth - 1, floor=floor))
        return base ** const(draw(st.sampled_from([2, 3, 0.5, -1.0, 2.5])))
    # a condition on a symbol: comparisons of constants could tie, and SymPy compares them exactly
    cond = _build(draw(st.sampled_from(COMPARE)), draw(st.sampled_from([X, Y, Z])), draw(float_terms(1)))
    if draw(st.booleans()):
        cond = cond & (draw(st.sampled_from([X, Y, Z])) > 0) if draw(st.booleans()) else ~cond
    return get_op("where")(cond, draw(float_terms(depth - 1, floor=floor)), draw(float_terms(depth - 1, floor=floor)))


@st.composite
def int_terms(draw, depth: int = 4):
    """A random int64 scalar term over n, m (floor division and modulo by non-zero constants)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return draw(st.sampled_from([N, M]))
        return const(draw(st.sampled_from([1, 2, 3, -2, 5, 7])))
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return _build(draw(st.sampled_from(["neg", "abs"])), draw(int_terms(depth - 1)))
    op = draw(st.sampled_from(INT_BINARY))
    a = draw(int_terms(depth - 1))
    if op in ("floordiv", "mod"):
        return _build(op, a, const(draw(st.sampled_from([2, 3, -4, 7]))))
    return _build(op, a, draw(int_terms(depth - 1)))


def float_env(size: int = 64, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {"x": rng.uniform(-3, 3, size), "y": rng.uniform(-3, 3, size), "z": rng.uniform(0.1, 3, size)}


def int_env(size: int = 64, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {"n": rng.integers(-50, 50, size), "m": rng.integers(-50, 50, size)}


def seed_examples():
    """The CGraph seed's functions (and the PyTensor seed's scalar graphs) as terms."""
    x, y, z = X, Y, Z
    truediv = get_op("truediv")
    return [
        (x * y + 3) / (z - 2),
        (x + y) * x,
        x * x + y * y,
        (x + 3) * (y + 4) * z * z,
        x + x + x + x + x,
        z + truediv(y * x, y) * truediv(z, x),
        truediv((y + z) * x, y + z),
    ]


def torch_expr(rng, depth: int, leaf, calls: list, stop: float):
    """A random sympy expression as torch builds them: ``leaf(rng)`` at depth 0 (or with probability ``stop``),
    else ``calls[k](rng, a, b)`` of two random operands; calls 5 and 6 are Max and Min, which sympy evaluates
    when it builds them over numbers, so those draws take call 0 instead."""
    if depth == 0 or rng.random() < stop:
        return leaf(rng)
    a, b = torch_expr(rng, depth - 1, leaf, calls, stop), torch_expr(rng, depth - 1, leaf, calls, stop)
    kind = rng.randrange(len(calls))
    if kind in (5, 6) and (a.is_number or b.is_number):
        kind = 0
    return calls[kind](rng, a, b)
