"""Unsafe rules lifted into the default strength where the symbols' assumptions prove their condition.

Each lift fires where its condition is proven and declines where it is not; on random terms over
symbols with random assumptions, the default ``simplify`` equals its input at points satisfying
those assumptions (inf and nan included where they allow them), is idempotent and never larger.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_simplify import values_agree

import exprgraph as eg
from exprgraph import Symbol
from exprgraph.egraph.identities import LIFTED_TEXT, identity_rules
from exprgraph.simplify import cost, simplify
from exprgraph.simplify.canonical import CANONICAL_RULES
from exprgraph.simplify.simplify import size
from exprgraph.simplify.strategy_lifts import CONDITIONS, LIFTS, holds

xf, yf = Symbol("x", finite=True), Symbol("y", finite=True)
nz = Symbol("n", finite=True, nonzero=True)
px = Symbol("p", positive=True)  # positive, +inf allowed (SymPy's extended_positive)
pf = Symbol("p", positive=True, finite=True)  # SymPy's positive
bx, by = Symbol("b", lower=-10.0, upper=10.0), Symbol("c", lower=-10.0, upper=10.0)
q = Symbol("q", nonnegative=True)
w = Symbol("w", lower=1e-3, upper=1e3)
plain = Symbol("x")


def test_each_lift_names_an_unsafe_rule_and_a_known_condition() -> None:
    unsafe = {r.name for r in CANONICAL_RULES if r.unsafe}
    for lift in LIFTS:
        assert lift.lifts in unsafe, lift.name
        assert lift.condition in CONDITIONS, lift.name
    names = {r.name for r in CANONICAL_RULES}
    assert {lift.name for lift in LIFTS} <= names
    assert all(not r.unsafe for r in CANONICAL_RULES if r.name in {lift.name for lift in LIFTS})


@pytest.mark.parametrize(
    ("term", "want"),
    [
        (xf - xf, "0.0"),  # x - x -> 0, finite x
        (plain - plain, "x - x"),  # inf - inf is nan: unproven
        (nz / nz, "1.0"),  # x/x -> 1, finite non-zero x
        (xf / xf, "x/x"),  # 0/0 is nan: unproven
        (px / px, "p/p"),  # inf/inf is nan: unproven
        (pf / pf, "1.0"),
        (eg.sin(xf) ** 2 + eg.cos(xf) ** 2, "1.0"),  # finite u
        (eg.sin(plain) ** 2 + eg.cos(plain) ** 2, "cos(x)**2 + sin(x)**2"),  # nan at inf
        (eg.sin(xf + yf) ** 2 + eg.cos(xf + yf) ** 2, "sin(x + y)**2 + cos(x + y)**2"),  # x + y may overflow
        (eg.sin(bx + by) ** 2 + eg.cos(bx + by) ** 2, "1.0"),  # bounded: x + y is finite
        (xf * yf - xf * yf, "x*y - x*y"),  # x*y may overflow
        (bx * by - bx * by, "0.0"),
        (eg.log(px) - eg.log(px), "log(p) - log(p)"),  # log(inf) - log(inf) is nan
        (eg.log(w) - eg.log(w), "0.0"),  # log of [1e-3, 1e3] is finite
        (xf + yf - xf, "y"),  # y + (x - x) -> y
        (Symbol("k", "int64") - Symbol("k", "int64"), "0"),
    ],
)
def test_lifts_fire_exactly_where_proven(term: eg.Term, want: str) -> None:
    s = simplify(term)
    assert str(s) == want
    assert s.dtype == term.dtype


def test_the_egraph_lifts_through_the_same_conditions() -> None:
    names = {r.name for r in identity_rules(False, lifted=True)} - {r.name for r in identity_rules(False)}
    assert names == {line.split(":")[0] for line in LIFTED_TEXT.split("\n") if line.strip()}
    assert names.isdisjoint(r.name for r in identity_rules(True, lifted=True))  # unsafe has them unconditionally
    assert str(simplify(eg.exp(eg.log(q)) + eg.abs(q))) == "2*q"  # exp(log(q)) -> q for q >= 0
    assert str(simplify(eg.exp(eg.log(plain)))) == "exp(log(x))"  # nan for x < 0


def test_holds_reads_the_interval_analysis() -> None:
    assert holds("finite", xf) and not holds("finite", plain) and not holds("finite", px)
    assert holds("finite", 2.0 * bx) and not holds("finite", 2.0 * xf)  # 2*x overflows for finite x
    assert holds("finite_nonzero", nz) and not holds("finite_nonzero", xf)
    assert holds("nonnegative", q) and holds("nonnegative", px) and not holds("nonnegative", plain)


# -- random terms over symbols with random assumptions --------------------------------------------

#: the points: moderate values, signed zeros and the non-finite ones the assumptions may allow (huge and
#: subnormal values are left to the unit tests: there every safe rule may give the exact value where the
#: input overflows or underflows, as ``x*y/y -> x*(y/y)`` does, which this comparison would flag)
_SPECIAL = [0.0, -0.0, 1.0, -2.5, 0.3, 7.0, -0.8, math.inf, -math.inf, math.nan]
#: assumption sets, with the test their values satisfy
_KINDS: list[tuple[dict, object]] = [
    ({}, lambda v: True),
    ({"real": True}, lambda v: not math.isnan(v)),
    ({"finite": True}, math.isfinite),
    ({"finite": True, "nonzero": True}, lambda v: math.isfinite(v) and v != 0),
    ({"positive": True}, lambda v: v > 0),
    ({"positive": True, "finite": True}, lambda v: math.isfinite(v) and v > 0),
    ({"nonnegative": True}, lambda v: v >= 0),
    ({"lower": -10.0, "upper": 10.0}, lambda v: -10 <= v <= 10),
]


@st.composite
def _symbols(draw: st.DrawFn) -> tuple[list[eg.Term], list[list[float]]]:
    made, pools = [], []
    for name in ("x", "y"):
        kw, ok = draw(st.sampled_from(_KINDS))
        made.append(Symbol(name, **kw))
        pools.append([v for v in _SPECIAL if ok(v)])  # type: ignore[operator]
    return made, pools


@st.composite
def _terms(draw: st.DrawFn, leaves: list[eg.Term], depth: int = 3) -> eg.Term:
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from([*leaves, eg.const(2.0), eg.const(0.5)]))
    a = draw(_terms(leaves, depth - 1))
    kind = draw(st.integers(0, 8))
    if kind == 0:
        return eg.sin(a)
    if kind == 1:
        return eg.exp(a)
    if kind == 2:
        return eg.log(a)
    if kind == 3:  # the shapes the lifts are about, over a random operand
        return draw(st.sampled_from([a - a, a / a, eg.sin(a) ** 2 + eg.cos(a) ** 2, eg.exp(eg.log(a))]))
    b = draw(_terms(leaves, depth - 1))
    return [a + b, a - b, a * b, a / b, a + b - a][kind - 4]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_default_keeps_values_under_random_assumptions(data: st.DataObject) -> None:
    leaves, pools = data.draw(_symbols())
    t = data.draw(_terms(leaves))
    s = simplify(t)
    assert size(s) <= size(t) and cost(s) <= cost(t), (str(t), str(s))
    assert simplify(s) is s, (str(t), str(s))
    points = list(itertools.product(*pools))
    env = {sym: np.array([p[i] for p in points]) for i, sym in enumerate(leaves)}
    values_agree(t, s, _not_overflowing(t, s, env), finite_only=False)


def _not_overflowing(t: eg.Term, s: eg.Term, env: dict) -> dict:
    """The points of ``env`` but those where ``t`` computes an inf or nan from finite symbols and ``s`` a
    finite value: there the input overflowed (``x*y/y`` at 1e300), and the safe contract lets the
    rewrite give the exact value (``x*(y/y)``), as for every safe rule (docs/simplify.md)."""
    nodes = [n for n in eg.postorder(t) if not n.is_symbol and not n.is_const]
    with np.errstate(all="ignore"):
        values = eg.evaluate([*nodes, s], env)
    n = len(next(iter(env.values())))
    symbols_finite = np.all([np.isfinite(v) for v in env.values()], axis=0)
    broke = np.zeros(n, dtype=bool)
    for v in values[:-1]:
        broke |= ~np.isfinite(np.broadcast_to(np.asarray(v, dtype=np.float64), (n,)))
    out_finite = np.isfinite(np.broadcast_to(np.asarray(values[-1], dtype=np.float64), (n,)))
    keep = ~(broke & symbols_finite & out_finite)
    return {sym: v[keep] for sym, v in env.items()}
