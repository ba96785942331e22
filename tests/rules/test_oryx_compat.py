"""Code written for Oryx's matcher and rules runs here: the Oryx items of issue 15, and the idioms they enable."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph import Symbol, const, cos, evaluate, exp, get_op, parse, sin, symbols
from exprgraph.errors import MatchError, PatternError
from exprgraph.graph import FunctionGraph, PatternNodeRewriter, in2out
from exprgraph.match import Choice, Dot, OpPattern, Segment, Star, V, Var, is_match, match, match_all
from exprgraph.rules import RuleSet, bottom_up, make_rule, rewrite, rule_list, term_rewriter

x, y = symbols("x y")
add, mul, neg = get_op("add"), get_op("mul"), get_op("neg")


# -- PatternError is a ValueError ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        lambda: match(Star(V.x), (1, 2)),  # a run outside a sequence
        lambda: Choice(),
        lambda: OpPattern("no_such_op", ()),
        lambda: Var("x", restrictions=[3]),
        lambda: Var(7),
    ],
)
def test_pattern_errors_are_value_errors(bad):
    with pytest.raises(ValueError) as info:  # what code written for Oryx catches
        bad()
    assert isinstance(info.value, PatternError) and isinstance(info.value, TypeError)


def test_a_failed_match_is_a_value_error_too():
    with pytest.raises(ValueError):
        match((V.a, V.a), (1, 2))
    assert issubclass(MatchError, ValueError)


# -- a variable in the op position -----------------------------------------------------------------------------

is_const = V("c", lambda t: t.is_const)


def _fold(f, c):
    # f(c) for any op f: evaluate it and keep the result as a constant of the same dtype
    return const(evaluate(f(c), {}), dtype=f(c).dtype)


fold_unary = make_rule(V.f(is_const), _fold)  # op(constant) -> its value


def test_any_unary_op_of_a_constant_folds():
    assert fold_unary(sin(const(0.0))) is const(0.0)
    assert fold_unary(exp(const(0.0))) is const(1.0)
    assert fold_unary(-const(2)) is const(-2)
    assert fold_unary(sin(x)) is sin(x)  # the operand is no constant: unchanged
    assert fold_unary(x + 1) is x + 1  # two operands: not a unary pattern
    folded = rewrite(exp(sin(const(0.0))) * y + cos(const(0.0)), [fold_unary])
    assert folded is const(1.0) * y + const(1.0)


def test_the_op_variable_binds_the_op():
    b = match(V.f(V.a, V.b), x * y)
    assert b == {"f": mul, "a": x, "b": y}
    assert match(V.f(V.g(V.a)), sin(exp(x))) == {"f": get_op("sin"), "g": get_op("exp"), "a": x}
    assert not is_match(V.f(V.f(V.a)), sin(exp(x)))  # a repeated op variable: the same op
    assert is_match(V.f(V.f(V.a)), exp(exp(x)))
    assert not is_match(V.f(V.a), x) and not is_match(V.f(), const(1.0))  # leaves have no op to bind
    only_trig = Var("f", restrictions=[lambda op: op.name in ("sin", "cos")])
    assert is_match(only_trig(V.a), cos(x)) and not is_match(only_trig(V.a), exp(x))


def test_the_bound_op_keeps_its_algebra():
    # mul is commutative: the bound op matches its operands in either order
    assert [m["a"] for m in match_all(V.f(V.a, 2), 2 * x)] == [x]
    # add is associative: a pattern with fewer operands regroups them
    assert match(V.f(V.a, 0), add(x, const(0), y)) == {"f": add, "a": x + y}
    # attrs are matched too: a plain pattern matches no sum with an axis
    v = Symbol("v", shape=(2, 3))
    total = get_op("sum")(v, axis=0)
    assert not is_match(V.f(V.a), total)
    assert match(V.f(V.a, attr=V.ax), total) == {"f": get_op("sum"), "a": v, "ax": total.attr}


def test_templates_rebuild_with_the_bound_op():
    swap = make_rule(V.f(V.a, V.b), V.f(V.b, V.a))  # any binary op with its operands swapped
    assert swap(x - y) is y - x and swap(x / 2) is const(2) / x
    again = make_rule(V.f(V.a), V.f(V.f(V.a)))
    assert again(sin(x)) is sin(sin(x))


def test_rule_sets_offer_op_variable_rules_to_every_node():
    rs = RuleSet([fold_unary, make_rule(V.x * 1, V.x)])
    assert fold_unary.root_op is None
    assert fold_unary in rs.rules_for(get_op("sin")) and fold_unary in rs.rules_for(mul)
    assert rewrite(exp(const(0.0)) * x * 2, rs) is x * 2
    assert rewrite(exp(const(0.0)) * x, rs) is x  # 1.0*x: the literal 1 matches 1.0 by value


def test_patterns_print_the_op_variable():
    assert str(V.f(V.x, 1)) == "V.f(V.x, 1)"
    assert str(Var("f", restrictions=[callable])(V.x)) == "Var('f', restrictions=...)(V.x)"


def test_graph_rewriters_take_an_op_variable_head():
    idem = PatternNodeRewriter((V.f, (V.f, "x")), (V.f, "x"))  # f(f(x)) -> f(x), for any f
    fg = FunctionGraph(outputs=[abs(abs(x)), sin(sin(y)), sin(exp(x))])
    assert idem.tracks() is None
    in2out(idem).rewrite(fg)
    assert fg.outputs == [abs(x), sin(y), sin(exp(x))]


def test_on_plain_tuples_the_head_is_just_the_first_element():
    # Oryx's usual encoding of expressions: tuples whose head names the operation
    funcs = {"sin": math.sin, "exp": math.exp}
    num = V("c", lambda v: isinstance(v, (int, float)))
    fold = make_rule((Choice(*funcs, name="f"), num), lambda f, c: funcs[f](c))
    mul_one = make_rule(Choice(("mul", V.a, 1), ("mul", 1, V.a)), lambda a: a)
    simplify = term_rewriter(fold, mul_one)
    assert simplify(("add", ("mul", ("exp", 0), "y"), ("sin", 0.0))) == ("add", "y", 0.0)
    generic = make_rule((V.f, num), lambda f, c: (f, c + 1))
    assert generic(("sin", 1)) == ("sin", 2) and generic(("sin", "a")) == ("sin", "a")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["sin", "cos", "exp", "tanh", "neg", "abs"]), min_size=1, max_size=6),
    st.floats(-2, 2, allow_nan=False),
)
def test_folding_with_an_op_variable_keeps_the_value(names, start):
    term = const(start)
    for n in names:
        term = get_op(n)(term)
    expr = term * x + term
    folded = rewrite(expr, [fold_unary])
    assert all(a.is_const or a is x for a in folded.args[0].args)  # every unary chain folded
    for v in (-1.5, 0.0, 2.0):
        got, want = evaluate(folded, {"x": v}), evaluate(expr, {"x": v})
        assert np.isclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)


# -- the seed's semantics on plain data ---------------------------------------------------------------------------


def test_a_handler_that_returns_its_input_lets_the_next_rule_run():
    r = rule_list(make_rule(0, lambda: 0), make_rule(Var("x"), lambda x: 1 / x))
    assert r(2) == 0.5
    with pytest.raises(ZeroDivisionError):  # as the seed warns: the first rule leaves 0 unchanged
        r(0)


def test_segments_and_wildcards_on_tuples():
    assert match((Segment("head"), 3, Dot), (1, 2, 3, 4)) == {"head": (1, 2)}
    flip = bottom_up(make_rule((V.a, V.b), lambda a, b: (b, a)))
    assert flip(((1, 2), (3, 4))) == ((4, 3), (2, 1))


def test_numpy_arrays_compare_whole():
    assert is_match((V.a, np.array([1, 2])), ("k", np.array([1, 2])))
    assert not is_match(np.array([1, 2]), np.array([1, 2, 3]))  # another shape: no match, no error
    assert not is_match(np.array([1, 2]), (1, 2))
    b = match((V.a, V.a), (np.array([1.0, 2.0]), np.array([1.0, 2.0])))  # a repeated name, equal arrays
    assert list(b) == ["a"]
    assert is_match(V.x * np.array([2.0, 3.0]), x * const(np.array([2, 3])))  # constants by value
    assert not is_match(V.x * np.array([True, True]), x * const(np.array([1, 1])))  # booleans only booleans


# -- unification right after ``import exprgraph`` --------------------------------------------------------------


def test_unification_and_kanren_work_after_importing_exprgraph_only():
    # a fresh interpreter: nothing imports exprgraph.match.unify explicitly
    code = textwrap.dedent(
        """
        import sys
        import exprgraph as eg
        from etuples import etuple
        from kanren import eq, run, var as kvar
        from unification import reify, unify, var
        x, y = eg.symbols("x y")
        add, mul = eg.get_op("add"), eg.get_op("mul")
        lv = var()
        s = unify(x + y, etuple(add, x, lv))
        print(s[lv] is y)
        print(reify(etuple(mul, lv, lv), s).evaled_obj is y * y)
        q = kvar()
        print(run(1, q, eq(etuple(add, q, y), x + y))[0] is x)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "True"]


def test_the_unify_module_is_still_reachable_by_name():
    import exprgraph.match
    import exprgraph.match.unify as unify_module

    assert exprgraph.match.unify is unify_module and callable(unify_module.to_term)


def test_the_term_parses_that_the_tests_use():
    # guards the examples above against a parser change
    assert parse("exp(sin(0.0))*y") is exp(sin(const(0.0))) * y
    assert neg(const(2)).dtype == "int64"
