"""Pattern construction: V and P factories, operators, validation, printing."""

from __future__ import annotations

import pytest

from exprgraph import get_op
from exprgraph.errors import PatternError
from exprgraph.match import Choice, Dot, Not, OpPattern, P, Plus, Segment, Star, V, Var, Where
from exprgraph.match.patterns import format_pattern


def test_v_makes_variables():
    v = V.alpha
    assert isinstance(v, Var) and v.name == "alpha" and v.restrictions == ()
    r = V("n", lambda t: True)
    assert r.name == "n" and len(r.restrictions) == 1


def test_operators_build_op_patterns_on_either_side():
    cases = {
        "add": V.x + 1,
        "sub": 1 - V.x,
        "mul": 2 * V.x,
        "truediv": V.x / V.y,
        "floordiv": V.x // 2,
        "mod": V.x % 2,
        "pow": V.x**2,
        "matmul": V.a @ V.b,
        "neg": -V.x,
        "abs": abs(V.x),
        "lt": V.x < 1,
        "ge": V.x >= 1,
        "logical_and": V.p & V.q,
        "logical_or": V.p | V.q,
        "logical_not": ~V.p,
    }
    for name, pat in cases.items():
        assert isinstance(pat, OpPattern) and pat.op is get_op(name), name
    assert (1 - V.x).args[0] == 1


def test_p_builds_any_op_with_attrs():
    pat = P.sum(V.x, axis=(0, 1))
    assert pat.op.name == "sum" and pat.attr == (0, 1)
    assert P.max(V.a, V.b).op.name == "maximum"
    with pytest.raises(AttributeError):
        _ = P.no_such_op
    with pytest.raises(PatternError):
        P.exp(V.x, axis=1)


def test_op_pattern_arity_is_checked():
    with pytest.raises(PatternError, match="takes 1"):
        OpPattern("exp", (V.a, V.b))
    with pytest.raises(PatternError):
        OpPattern("add", (V.a,))
    OpPattern("add", (Segment("all"),))  # a run may stand for any number of operands
    with pytest.raises(PatternError, match="no op"):
        OpPattern("nope", ())


def test_a_run_does_not_let_more_fixed_operands_than_the_op_takes():
    with pytest.raises(PatternError, match="at most 1 operands, the pattern needs 2"):
        OpPattern("sin", (V.x, Segment("rest"), V.y))
    with pytest.raises(PatternError, match="needs 2"):
        OpPattern("sin", (Plus(Dot), V.y))  # a Plus stands for one operand at least
    with pytest.raises(PatternError, match="needs 3"):
        OpPattern("sub", (Plus(Dot), Plus(Dot), V.z))
    OpPattern("sub", (Plus(Dot), Plus(Dot), Star(Dot)))  # two operands fit
    OpPattern("sin", (Star(Dot), V.x, Segment("rest")))  # runs may be empty: one operand fits
    OpPattern("sub", (Plus(Dot), V.y))


def test_names_are_strings():
    # any string names a variable (PyTensor's tuple patterns use "1", "2"); other values do not
    for ok in ("", "1x", "a b", "x-y"):
        assert Var(ok).name == ok and Segment(ok).name == ok
    for bad in (None, 3, b"x"):
        with pytest.raises(PatternError):
            Var(bad)
        with pytest.raises(PatternError):
            Segment(bad)
    with pytest.raises(PatternError):
        Var("ok", restrictions=[3])
    with pytest.raises(PatternError):
        Choice()


def test_star_family_defaults():
    s = Star(V.x)
    assert s.min_count == 0 and not s.greedy and s.accumulate == ()
    assert Plus(V.x).min_count == 1
    seg = Segment("r", greedy=True)
    assert seg.pattern is Dot and seg.name == "r" and seg.greedy


def test_format_pattern_is_readable_and_iterative():
    assert format_pattern(V.x * 1) == "mul(V.x, 1)"
    assert str(Choice(1, V.a, name="c")) == "Choice(1, V.a, name='c')"
    assert str(Not(Dot)) == "Not(Dot)"
    assert str((Segment("a"), [V.b], {"k": 2})) == "(Segment('a'), [V.b], {'k': 2})"
    assert "Where(" in str(Where(V.x, lambda b: True))
    deep = V.x
    for _ in range(50_000):
        deep = deep + 1
    assert format_pattern(deep).startswith("add(add(")
