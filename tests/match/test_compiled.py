"""Compiled chains agree with the general machine; cuts and memoised failures never change answers."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph import Symbol, Term, add, const, mul, neg, sub, truediv
from exprgraph.match import OpPattern, V, Var, compile_pattern, match_all
from exprgraph.match.matcher import NO_CUTS, cut_points, solve

x, y = Symbol("x"), Symbol("y")
LEAVES = [x, y, const(0), const(1), const(2), const(1.0)]
BINARY = [add, mul, sub, truediv]


@st.composite
def terms(draw: Any, depth: int = 3) -> Term:
    """Small random terms over x, y and a few constants."""
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(LEAVES))
    if draw(st.integers(0, 5)) == 0:
        return neg(draw(terms(depth - 1)))
    op = draw(st.sampled_from(BINARY))
    return op(draw(terms(depth - 1)), draw(terms(depth - 1)))


@st.composite
def patterns(draw: Any, depth: int = 3) -> Any:
    """Small random op patterns: variables (names repeat), literals, wildcard-free."""
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        kind = draw(st.integers(0, 3))
        if kind <= 1:
            return Var(draw(st.sampled_from("abc")))
        if kind == 2:
            return draw(st.sampled_from([0, 1, 2, 1.0]))
        return draw(st.sampled_from([x, y]))
    if draw(st.integers(0, 5)) == 0:
        return OpPattern("neg", (draw(patterns(depth - 1)),))
    op = draw(st.sampled_from(["add", "mul", "sub", "truediv"]))
    return OpPattern(op, (draw(patterns(depth - 1)), draw(patterns(depth - 1))))


@settings(max_examples=300, deadline=None)
@given(terms(), st.data())
def test_compiled_first_match_equals_machine(t, data):
    p = data.draw(patterns())
    if not isinstance(p, OpPattern):
        p = OpPattern("add", (p, V.z))
    comp = compile_pattern(p)
    assert comp.fast is not None
    fast = comp.fast(t)
    slow = next(solve(p, t, None, True, NO_CUTS), None)
    assert fast == slow
    # the cut machine and the full enumeration agree with both
    assert next(solve(p, t, None, True, cut_points(p)), None) == slow
    every = list(match_all(p, t))
    assert (every[0] if every else None) == slow


@settings(max_examples=200, deadline=None)
@given(terms(depth=4))
def test_a_term_matches_itself_as_a_pattern(t):
    assert next(solve(t, t, None, True), None) == {}


def test_compiled_path_handles_literals_terms_and_restrictions():
    p = OpPattern("mul", (Var("k", [lambda v: v.op.name == "const"]), V.a))
    comp = compile_pattern(p)
    assert comp.fast is not None
    assert comp.first(x * 2) == {"k": const(2), "a": x}
    assert comp.first(x * y) is None
    q = compile_pattern(V.a + x)
    assert q.first(y + x) == {"a": y} and q.first(x + x) == {"a": x}


def test_associative_arity_mismatch_falls_back_to_the_machine():
    comp = compile_pattern(V.a * 1)
    assert comp.fast is not None
    assert comp.first(mul(x, const(1), y)) == {"a": x * y}
    assert comp.first(add(x, y, const(1))) is None
