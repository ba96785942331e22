"""Fuzzing simplify: random small terms keep their values, and simplify is idempotent and never larger.

Terms over x and y of the ops of simplify's corpus (arithmetic, powers, roots, exp and logs, trig and
hyperbolic functions, abs, sign, min/max, floor/ceil/trunc, floor division and remainders), with exact
constants (integers, rationals, pi, e) and float ones (both zeros). Each is simplified at both strengths
and compared with its input at a grid of special points (both zeros, +-1, +-inf, nan, huge, tiny) and
points hypothesis draws:

- the default (safe) strength: where the input computes every step exactly (no rounding, overflow or
  underflow: :func:`_exact_steps`), the same value, nan where nan, infinities of the same sign (a zero's
  sign shows where a division reads it: the project's policy, as in ``tests/simplify/grid_values.py``);
  elsewhere the same to rounding, except where the input's own rounding decides its value
  (:func:`_rounding_decides`): there a more accurate form differs, rightly;
- ``unsafe=True``: its contract, at finite non-zero points where every step of the input is finite (and
  to rounding: where either form's own rounding decides its value, the two differ rightly);
- ``simplify(simplify(t)) is simplify(t)`` and the result is never larger (``no_larger``); the saturation
  alone (``method="egraph"``) keeps the values and is never larger too.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from eg_strategies import intermediate_scale
from fuzz_support import FUZZ
from grid_values import same_values
from hypothesis import given
from hypothesis import strategies as st
from test_simplify import _cancelled, _conditioning

import exprgraph as eg
from exprgraph import Term, evaluate, get_op, parse, postorder, simplify
from exprgraph.core.dtypes import is_float
from exprgraph.core.exact import ExactName, Rational
from exprgraph.errors import EvaluationError
from exprgraph.simplify.simplify import no_larger

X, Y = eg.symbols("x y")
#: exact constants whose floats are exact too (floor, mod and floordiv jump where a rounded 1/3 would)
EXACT_LEAVES = [eg.const(k) for k in (0, 1, 2, -1, 3)] + [parse(s) for s in ("rational(1, 2)", "rational(-1, 2)")]
#: exact constants that round as floats: only where no op jumps on them
ROUNDED_LEAVES = [parse(s) for s in ("rational(1, 3)", "rational(-2, 3)", "pi", "e")]
FLOAT_LEAVES = [eg.const(v) for v in (0.0, -0.0, 0.5, 2.0, -1.5, 1.0)]
SMOOTH = ["neg", "abs", "sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh"]
JUMPY = ["floor", "ceil", "trunc", "sign"]
BINARY = ["add", "sub", "mul", "truediv", "maximum", "minimum", "pow"]
JUMPY_BINARY = ["floordiv", "mod"]
EXPONENTS = [eg.const(k) for k in (-1, 2, 3, -2)] + [eg.const(v) for v in (0.5, -1.0, 2.0)]
EXPONENTS += [parse("rational(1, 2)"), parse("rational(1, 3)")]
#: special values: both zeros, +-1, +-inf, nan, huge and tiny, and a few small numbers
SPECIAL = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 1e300, -1e300, 1e-300, -1e-300, 0.5, -2.5, 3.0]
#: finite non-zero values (the unsafe contract's domain)
NONZERO = [1.0, -1.0, 0.5, -2.5, 3.0, 2.0, 1e300, -1e-300]
TINY = 2.2250738585072014e-308  # the smallest normal float64
#: ops exact at an operand of 0 (sin(0) is 0, exp(0) is 1), and the logs exact at 1 (log(1) is 0)
_EXACT_AT_ZERO = {"exp", "sin", "cos", "tan", "sinh", "cosh", "tanh"}
_LOGS = {"log", "log2", "log10"}
#: ops flat at 0 (their value there, reached from a tiny non-zero operand that it loses)
_FLAT_AT_ZERO = {"exp": 1.0, "cos": 1.0, "cosh": 1.0}


@st.composite
def terms(draw: st.DrawFn, max_depth: int = 3) -> Term:
    """A random float64 term over x and y of the ops above, at most ``max_depth`` ops deep."""

    def build(depth: int, jumps: bool) -> Term:
        kind = draw(st.integers(0, 9))
        if depth == 0 or kind < 2:
            leaves = [X, Y, X, Y, *EXACT_LEAVES, *FLOAT_LEAVES, *([] if jumps else ROUNDED_LEAVES)]
            return draw(st.sampled_from(leaves))
        if kind < 5:
            name = draw(st.sampled_from(SMOOTH + JUMPY))
            return get_op(name)(build(depth - 1, jumps or name in JUMPY))
        name = draw(st.sampled_from(BINARY + JUMPY_BINARY))
        inner = jumps or name in JUMPY_BINARY
        if name == "pow" and draw(st.integers(0, 3)):
            base = build(depth - 1, inner)
            k = draw(st.sampled_from(EXPONENTS))
            return base ** (k if is_float(base.dtype) or k.attr.__class__ is not int or k.attr > 0 else -1.0)
        return get_op(name)(build(depth - 1, inner), build(depth - 1, inner))

    t = build(max_depth, False)
    return t if t.free_symbols and is_float(t.dtype) else t + X


def _grid(values: list[float], drawn: list[tuple[float, float]]) -> dict[Term, np.ndarray]:
    """Every pair of ``values`` for (x, y), and the ``drawn`` points."""
    xs, ys = np.meshgrid(values, values)
    px = [p for p, _ in drawn]
    py = [q for _, q in drawn]
    return {X: np.concatenate([xs.ravel(), px]), Y: np.concatenate([ys.ravel(), py])}


def _values(terms: list[Term], env: dict[Term, np.ndarray]) -> list[np.ndarray]:
    """``terms`` at every point of ``env``, float64, broadcast to the points (floating-point warnings off)."""
    n = len(env[X])
    with np.errstate(all="ignore"):
        out = evaluate(terms, env)
    return [np.broadcast_to(np.asarray(v, dtype=np.float64), (n,)) for v in out]


def _step_exact(name: str, args: list[float], v: float) -> bool:
    """Whether float64's ``name(*args)`` (= ``v``) is the exact value: no rounding, overflow or underflow."""
    if math.isnan(v):
        return True
    if math.isinf(v):  # overflow: inf from finite non-zero operands; 1/0 and log(0) are exact
        return not all(math.isfinite(a) and a != 0 for a in args)
    if not all(math.isfinite(a) for a in args):
        return True  # max(inf, 1.0), tanh(inf), 1/inf: no rounding
    q = [Fraction(a) for a in args]
    if name in ("neg", "abs", "maximum", "minimum", "floor", "ceil", "trunc", "sign"):
        return True
    if name in ("add", "sub", "mul"):
        exact = q[0] + q[1] if name == "add" else q[0] - q[1] if name == "sub" else math.prod(q)
        if name == "add" and len(q) > 2:
            exact = sum(q)
        return exact == Fraction(v)
    if name == "truediv":
        return q[1] != 0 and q[0] / q[1] == Fraction(v)
    if name in ("floordiv", "mod"):
        if q[1] == 0:
            return False
        whole = (q[0] / q[1]).__floor__()
        return (Fraction(whole) if name == "floordiv" else q[0] - q[1] * whole) == Fraction(v)
    if name == "sqrt":
        return Fraction(v) ** 2 == q[0]
    if name == "pow":
        if q[1].denominator == 1 and abs(q[1]) <= 64 and q[0] != 0:
            return q[0] ** int(q[1]) == Fraction(v)
        return q[0] in (0, 1) or (q[1] == Fraction(1, 2) and Fraction(v) ** 2 == q[0])
    if name in _EXACT_AT_ZERO:
        return q[0] == 0
    if name in _LOGS:
        return q[0] == 1
    return False


def _rounds(c: Term) -> bool:
    """Whether the constant ``c`` is exact and its float64 value rounds (``rational(1, 3)``, ``pi``; not 1/2)."""
    cls = c.attr.__class__
    return cls is ExactName or (cls is Rational and Fraction(float(c.attr)) != c.attr)


def _exact_steps(t: Term, env: dict[Term, np.ndarray]) -> np.ndarray:
    """Per point, whether every float step of ``t`` is exact there (its value is no rounding's)."""
    nodes = postorder(t)
    value_of = dict(zip(nodes, _values(nodes, env), strict=True))
    out = np.ones(len(env[X]), dtype=bool)
    for node in nodes:
        if node.is_const and _rounds(node):
            return np.zeros_like(out)  # rational(1, 3), pi: a rounded float from the start
        if not node.args or not is_float(node.dtype):
            continue
        name, args = node.op.name, [value_of[a] for a in node.args]
        for i in np.flatnonzero(out):
            out[i] = _step_exact(name, [float(a[i]) for a in args], float(value_of[node][i]))
    return out


def _rounding_decides(t: Term, env: dict[Term, np.ndarray]) -> np.ndarray:
    """Points where ``t``'s own rounding decides its value, so that a more accurate form differs there: an
    intermediate overflow or underflow, a sum that loses most of an operand (``1.0 + 1e-300``) or cancels to
    noise, a function flat at 0 that loses its operand (``exp(1e-300)`` is 1.0), or a value that moves far
    (or turns nan or inf) when the inputs move by 2**-40."""
    nodes = postorder(t)
    values = _values(nodes, env)
    value_of = dict(zip(nodes, values, strict=True))
    shape = values[-1].shape
    out = _cancelled(nodes, values, shape)
    with np.errstate(all="ignore"):
        for node in nodes:
            if not node.args or not is_float(node.dtype):
                continue
            args = [value_of[a] for a in node.args]
            for used, v in _partials(node, args, value_of[node]):  # x*y*z is (x*y)*z: x*y may overflow
                finite = np.logical_and.reduce([np.isfinite(a) for a in used])
                nonzero = np.logical_and.reduce([a != 0 for a in used])
                out |= np.isinf(v) & finite & nonzero  # overflow
                if node.op.name in ("mul", "truediv", "pow", "exp"):
                    out |= (np.abs(v) < TINY) & finite & nonzero  # underflow
            if node.op.name in ("add", "sub"):
                small = np.min([np.where(a != 0, np.abs(a), np.inf) for a in args], axis=0)
                big = np.max([np.abs(a) for a in args], axis=0)
                out |= finite & (small < 2.0**-40 * big)  # the small operand is (nearly) lost
            flat = _FLAT_AT_ZERO.get(node.op.name)
            if flat is not None:  # exp(-1e-300) is 1.0: the operand is lost (log(exp(x))/x is 0.0 there, not 1)
                out |= (value_of[node] == flat) & (args[0] != 0) & np.isfinite(args[0])
        want = value_of[t]
        moves, flips = _conditioning(t, want, env)
        out |= flips | (moves > 1e-6 * (np.abs(np.where(np.isfinite(want), want, 0.0)) + 1))
    return out


def _partials(node: Term, args: list[np.ndarray], value: np.ndarray) -> list[tuple[list[np.ndarray], np.ndarray]]:
    """The values a variadic sum or product computes on the way (left to right), each with the operands it
    read so far; its own value last."""
    if len(args) < 3 or node.op.name not in ("add", "mul"):
        return [(args, value)]
    out, v = [], args[0]
    for i in range(1, len(args)):
        v = v + args[i] if node.op.name == "add" else v * args[i]
        out.append((args[: i + 1], v))
    return out


def _agree(t: Term, s: Term, env: dict[Term, np.ndarray], keep: np.ndarray) -> None:
    """``s`` equals ``t`` at the points ``keep``: nan where nan, infinities alike, finite values to rounding."""
    want, got = _values([t, s], env)
    assert np.array_equal(np.isnan(want[keep]), np.isnan(got[keep])), (str(t), str(s))
    inf = keep & np.isinf(want)
    assert np.array_equal(want[inf], got[inf]), (str(t), str(s))
    with np.errstate(all="ignore"):
        allowed = 1e-9 * (np.abs(np.where(np.isfinite(want), want, 0.0)) + intermediate_scale(t, env))
        diff = np.abs(np.where(np.isfinite(want), got - want, 0.0))
    assert np.all(diff[keep] <= allowed[keep]), (str(t), str(s))


def _evaluates(t: Term, env: dict[Term, np.ndarray]) -> bool:
    """Whether ``t`` evaluates (an int64 power with a negative exponent raises)."""
    try:
        _values([t], env)
    except EvaluationError:
        return False
    return True


def check_safe(t: Term, env: dict[Term, np.ndarray], method: str = "auto") -> None:
    """The default strength on ``t``: its values (bit for bit where ``t`` is exact), idempotent, never larger."""
    s = simplify(t, method=method)
    assert no_larger(s, t), (str(t), str(s))
    if method == "auto":
        assert simplify(s) is s, (str(t), str(s), str(simplify(s)))
    exact = _exact_steps(t, env)
    want, got = _values([t, s], env)
    assert same_values(want[exact], got[exact]), (str(t), str(s))
    _agree(t, s, env, ~exact & ~_rounding_decides(t, env))


def check_unsafe(t: Term, env: dict[Term, np.ndarray], method: str = "auto") -> None:
    """``unsafe=True`` on ``t``: its values where every step of ``t`` is finite, idempotent, never larger."""
    s = simplify(t, unsafe=True, method=method)
    assert no_larger(s, t), (str(t), str(s))
    if method == "auto":
        assert simplify(s, unsafe=True) is s, (str(t), str(s), str(simplify(s, unsafe=True)))
    nodes = postorder(t)
    finite = np.logical_and.reduce([np.isfinite(v) for v in _values(nodes, env)])
    # an unsafe form may reassociate: where its own steps overflow or underflow, it rounds differently; and it
    # rounds differently (log(exp(x)) -> x): next to a jump of floor or mod that rounding decides the value
    keep = finite & ~_rounding_decides(t, env) & ~_rounding_decides(s, env)
    _agree(t, s, env, keep & ~_near_jumps(t, env) & ~_near_jumps(s, env))


def _near_jumps(t: Term, env: dict[Term, np.ndarray]) -> np.ndarray:
    """Points where a floor, ceil, trunc, floor division or remainder of ``t`` reads a value next to its jump:
    within a relative 1e-9 of a whole number, not on it (where both forms are on it, both jump alike)."""
    nodes = postorder(t)
    value_of = dict(zip(nodes, _values(nodes, env), strict=True))
    out = np.zeros(len(env[X]), dtype=bool)
    with np.errstate(all="ignore"):
        for node in nodes:
            name = node.op.name
            if name in ("floor", "ceil", "trunc"):
                q = value_of[node.args[0]]
            elif name in ("floordiv", "mod"):
                q = value_of[node.args[0]] / value_of[node.args[1]]
            else:
                continue
            gap = np.abs(q - np.round(q))
            out |= (gap > 0) & (gap <= 1e-9 * np.maximum(1.0, np.abs(q)))
    return out


POINTS = st.lists(st.tuples(st.floats(), st.floats()), max_size=6)
NONZERO_POINTS = st.lists(
    st.tuples(*[st.floats(-1e6, 1e6).filter(lambda v: v != 0)] * 2), max_size=6
)  # finite, non-zero


@FUZZ
@given(terms(), POINTS)
def test_safe_simplify_keeps_values(t: Term, drawn: list[tuple[float, float]]) -> None:
    env = _grid(SPECIAL, drawn)
    if _evaluates(t, env):
        check_safe(t, env)


@FUZZ
@given(terms(), NONZERO_POINTS)
def test_unsafe_simplify_keeps_values_at_finite_points(t: Term, drawn: list[tuple[float, float]]) -> None:
    env = _grid(NONZERO, drawn)
    if _evaluates(t, env):
        check_unsafe(t, env)


@FUZZ
@given(terms(), st.sampled_from([False, True]))
def test_saturation_alone_keeps_values_and_is_never_larger(t: Term, unsafe: bool) -> None:
    env = _grid(NONZERO if unsafe else SPECIAL, [])
    if _evaluates(t, env):
        (check_unsafe if unsafe else check_safe)(t, env, method="egraph")
