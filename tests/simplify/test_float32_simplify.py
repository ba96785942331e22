"""simplify on float32 terms: float32 throughout, canonical, and a correct rewrite of the same formula.

A random float64 term and its float32 twin (float32 symbols and constants) simplify along the same
rules. The float32 result, widened back to float64 (every float32 number is a double), must be a
simplification of the float64 term: equal at random points up to the float32 rounding of the
constants it folded (``sin(0.5)`` folds to a float32), where the term is well conditioned.
"""

from __future__ import annotations

import numpy as np
from eg_strategies import SYMBOLS, intermediate_scale, point_arrays, random_terms, terms
from hypothesis import given, settings
from test_simplify import _cancelled, _conditioning

import exprgraph as eg
from exprgraph import Symbol, Term, const
from exprgraph.core import postorder
from exprgraph.rules import rule
from exprgraph.simplify import simplify


def _retype(term: Term, dtype: str) -> Term:
    """``term`` with its float symbols and number constants of ``dtype`` (built bottom-up, no recursion)."""
    done: dict[Term, Term] = {}
    for node in postorder(term):
        if node.op.name == "symbol":
            done[node] = Symbol(node.name, dtype) if node.dtype in ("float32", "float64") else node
        elif node.op.name == "const":
            # numbers are weak: an int or float constant of the formula is a constant of ``dtype``
            done[node] = const(float(node.attr), dtype) if node.dtype in ("int64", "float32", "float64") else node
        else:
            done[node] = Term(node.op, tuple(done[a] for a in node.args), node.attr)
    return done[term]


def _check(t: Term) -> None:
    t32 = _retype(t, "float32")
    if t32.dtype != "float32":
        return  # an int constant somewhere made it float64: nothing float32 to check
    s = simplify(t32)
    assert s.dtype == "float32" and simplify(s) is s, (str(t32), str(s))
    assert "float64" not in {n.dtype for n in postorder(s)}, str(s)
    _agree(t, _retype(s, "float64"), point_arrays(24, seed=7), t32)


def _agree(original: Term, simplified: Term, env: dict, single: Term) -> None:
    """Equal to float32 rounding of folded constants (1e-5 of the intermediates' scale) where ``original``
    computes finitely and is well conditioned, and so does its float32 twin ``single`` (float32
    overflows at 3e38, where float64 does not)."""
    nodes = postorder(original)
    with np.errstate(all="ignore"):
        want, got = (np.asarray(v, dtype=np.float64) for v in eg.evaluate([original, simplified], env))
        inner = eg.evaluate(nodes, env)
        singles = eg.evaluate(postorder(single), {s.name: v.astype(np.float32) for s, v in env.items()})
    shape = np.broadcast_shapes(want.shape, *(np.shape(v) for v in inner))
    want, got = np.broadcast_to(want, shape), np.broadcast_to(got, shape)
    keep = np.ones(shape, dtype=bool)
    for v in [*inner, *singles]:
        keep &= np.isfinite(np.asarray(v, dtype=np.float64))
    moves, flips = _conditioning(original, want, env)
    moves = np.maximum(moves, _constant_moves(original, want, env))
    scale = intermediate_scale(original, env)
    with np.errstate(all="ignore"):
        keep &= ~flips & ~(moves > 1e-6 * (np.abs(np.where(np.isfinite(want), want, 0.0)) + 1))
        keep &= ~_cancelled(nodes, inner, shape)
        diff = np.abs(got - want)
    assert np.all(diff[keep] <= (1e-5 * (np.abs(want) + scale) + 4 * moves)[keep]), (str(original), str(simplified))


def _constant_moves(original: Term, want: np.ndarray, env: dict) -> np.ndarray:
    """How far ``original`` moves when its float constants move by a float32 rounding (2**-23, relative).

    The float32 twin folds its constants in float32: ``sin(c + y)`` with ``c`` folded to 2826364.0 in
    float32 but 2826364.026 in float64 is the same formula at a shifted phase, not a wrong rewrite.
    """
    done: dict[Term, Term] = {}
    for node in postorder(original):
        if node.op.name == "const" and node.dtype == "float64":
            done[node] = const(float(node.attr) * (1 + 2.0**-23))
        elif node.op.name in ("symbol", "const"):
            done[node] = node
        else:
            done[node] = Term(node.op, tuple(done[a] for a in node.args), node.attr)
    with np.errstate(all="ignore"):
        moved = np.broadcast_to(np.asarray(eg.evaluate(done[original], env), dtype=np.float64), want.shape)
        return np.abs(np.where(np.isfinite(moved) & np.isfinite(want), moved - want, 0.0))


@settings(max_examples=80, deadline=None)
@given(t=terms(max_depth=4, kind="continuous"))
def test_random_float32_terms_simplify_correctly(t: Term) -> None:
    _check(t)


def test_a_corpus_of_float32_terms() -> None:
    for t in random_terms(60, seed=21, kind="continuous"):
        _check(t)
    x, y = (Symbol(s.name, "float32") for s in SYMBOLS[:2])
    assert str(simplify(x * 1 + 0 + x)) == "float32(2.0)*x"
    assert str(simplify(3 * x - x, unsafe=True)) == "float32(2.0)*x"
    assert str(simplify(x - y / x)) == "x - y/x"
    assert simplify(x - x, unsafe=True) is const(0.0, "float32")
    assert str(simplify(1 / (1 + eg.exp(-x)))) == "sigmoid(x)"


def test_rule_literals_are_weak_next_to_float32() -> None:
    # a number in a rule's text takes the float32 of the operands it meets, as numpy 2's Python numbers
    r = rule("x - y -> x + (-1)*y")
    a, b = Symbol("a", "float32"), Symbol("b", "float32")
    out = r(a - b)
    assert out.dtype == "float32" and out.args[1].args[0] is const(-1.0, "float32")
    u, v = Symbol("u"), Symbol("v")
    assert r(u - v).args[1].args[0] is const(-1)  # float64: the int -1 as before
    i = Symbol("i", "int64")
    assert r(a - i).dtype == "float64"  # float32 with int64 is float64: the -1 stays an int
    third = rule("x -> x * 0.1")(a)
    assert third.args[1] is const(0.1)  # 0.1 is no float32: the literal stays a float64
    np.testing.assert_equal(third.dtype, "float64")
