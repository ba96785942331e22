"""The rule combinators with the seed's examples, change detection by ==, limits and deep trees."""

from __future__ import annotations

import sys

import pytest

from exprgraph import Symbol, parse, symbols
from exprgraph.errors import RewriteLimitError
from exprgraph.match import Choice, Segment, V, Var
from exprgraph.rules import (
    bottom_up,
    in_order,
    iterated,
    make_rule,
    rewrite_subexpressions,
    rule,
    rule_list,
    term_rewriter,
    top_down,
    tree_children,
    tree_map,
)

one_to_three = make_rule(1, lambda: 3)
three_to_one = make_rule(3, lambda: 1)
Integer = lambda name: Var(name, restrictions=[lambda x: isinstance(x, int)])
Tuple = lambda name: Var(name, restrictions=[lambda x: isinstance(x, tuple)])
Positive = lambda name: Var(name, restrictions=[lambda x: isinstance(x, int), lambda x: x > 0])


# -- the seed's examples ------------------------------------------------------------------------------


def test_make_rule():
    r = make_rule(1, lambda: 2)
    assert r(1) == 2 and r(3) == 3
    add_one = make_rule(Var("x"), lambda x: x + 1)
    assert add_one(1) == 2 and add_one(2) == 3
    maybe_add_one = make_rule(Choice(1, 2, name="x"), lambda x: x + 1)
    assert (maybe_add_one(1), maybe_add_one(2), maybe_add_one(3)) == (2, 3, 3)


def test_rule_list():
    r = rule_list(one_to_three, three_to_one)
    assert (r(1), r(3), r(2)) == (3, 1, 2)


def test_rule_list_keeps_going_when_a_matching_rule_changes_nothing():
    # the seed: this still divides by zero on 0, because 0 -> 0 is "no change"
    r = rule_list(make_rule(0, lambda: 0), make_rule(Var("x"), lambda x: 1 / x))
    with pytest.raises(ZeroDivisionError):
        r(0)
    assert r(4) == 0.25


def test_in_order():
    r = in_order(one_to_three, three_to_one)
    assert (r(1), r(3), r(2)) == (1, 1, 2)


def test_iterated():
    add_one_until_five = iterated(make_rule(Var("x", restrictions=[lambda x: x < 5]), lambda x: x + 1))
    assert (add_one_until_five(1), add_one_until_five(-10), add_one_until_five(7)) == (5, 5, 7)


def test_iterated_cycle_raises_instead_of_looping():
    bad_rule = iterated(rule_list(one_to_three, three_to_one))
    with pytest.raises(RewriteLimitError) as info:
        bad_rule(1)
    assert "rule_list" in info.value.rule and info.value.steps == 2
    assert "cycles" in str(info.value)


def test_iterated_budget_for_unhashable_or_growing_values():
    grow = iterated(make_rule(Var("x"), lambda x: [*x, 0]), max_steps=50)
    with pytest.raises(RewriteLimitError, match="50 steps") as info:
        grow([])
    assert info.value.steps == 50


def test_rewrite_subexpressions():
    r = rewrite_subexpressions(rule_list(one_to_three, three_to_one))
    assert r(1) == 1
    assert r((1, 3)) == (3, 1)
    assert r(((1, 3),)) == ((1, 3),)


@pytest.mark.parametrize("walk", [bottom_up, top_down])
def test_bottom_up_and_top_down(walk):
    r = walk(rule_list(one_to_three, three_to_one))
    assert r(1) == 3
    assert r((1, 3)) == (3, 1)
    assert r(((1, 3),)) == ((3, 1),)


def test_bottom_up_order_adds_before_summing():
    r = bottom_up(in_order(make_rule(Integer("a"), lambda a: a + 1.0), make_rule(Tuple("t"), lambda t: sum(t))))
    assert r((1, 2, 3)) == 9  # children first: (2., 3., 4.), then the sum
    # the seed's page feeds floats, which the isinstance(int) restriction rejects: only the sum fires
    assert r((1.0, 2.0, 3.0)) == 6.0


def test_top_down_order_sums_first():
    r = top_down(in_order(make_rule(Integer("a"), lambda a: a + 1.0), make_rule(Tuple("t"), lambda t: sum(t))))
    # the root is summed first; the sum has no children left to rewrite
    assert r((1, 2, 3)) == 6
    nested = top_down(make_rule(Integer("a"), lambda a: a + 1))
    assert nested(((1, 2), 5)) == ((2, 3), 6)


def test_term_rewriter():
    r = term_rewriter(make_rule(Positive("a"), lambda a: a - 1))
    assert r(1) == 0 and r(5) == 0
    assert r((2, 3)) == (0, 0)
    assert r(((1, 2), 3)) == ((0, 0), 0)


def test_tree_protocol_is_reexported():
    assert list(tree_children({"a": 1, "b": 2})) == [1, 2]
    assert tree_map([1, 2], lambda v: v * 10) == [10, 20]


# -- == change detection ------------------------------------------------------------------------------


def test_change_detection_uses_value_equality_on_plain_data():
    same_value_new_object = make_rule(Var("x"), lambda x: list(x))
    then = make_rule(Var("x"), lambda x: "second")
    r = rule_list(same_value_new_object, then)
    assert r([1, 2]) == "second"  # an equal list is "no change", so the next rule runs
    to_float = make_rule(Integer("x"), lambda x: float(x))
    assert rule_list(to_float, make_rule(Var("x"), lambda x: "next"))(1) == "next"  # 1.0 == 1


def test_change_detection_on_terms_is_identity_which_is_structural():
    x = Symbol("x")
    rebuild = make_rule(V.a + V.b, lambda a, b: a + b)  # builds the same interned term
    r = rule_list(rebuild, make_rule(V.a + V.b, lambda a, b: a * b))
    assert r(x + 1) is x * 1


def test_rules_accept_lists_and_dicts():
    r = term_rewriter(make_rule(Positive("a"), lambda a: a - 1))
    assert r([2, [3, {"k": 4}]]) == [0, [0, {"k": 0}]]
    flip = bottom_up(make_rule({"a": Var("v")}, lambda v: {"b": v}))
    assert flip([{"a": 1}, {"c": 2}]) == [{"b": 1}, {"c": 2}]


def test_segments_in_rules():
    drop_zeros = term_rewriter(make_rule((Segment("a"), 0, Segment("b")), lambda a, b: (*a, *b)))
    assert drop_zeros((1, 0, 2, 0, 0, 3)) == (1, 2, 3)


# -- limits and depth ------------------------------------------------------------------------------------


def test_top_down_that_keeps_creating_redexes_raises():
    wrap = top_down(make_rule(Integer("x"), lambda x: (x,)), max_steps=1000)
    with pytest.raises(RewriteLimitError) as info:
        wrap(1)
    assert info.value.steps == 1001 and "top_down" in str(info.value)


def test_term_rewriter_cycle_raises():
    swap = make_rule((V.a, V.b), lambda a, b: (b, a))
    with pytest.raises(RewriteLimitError):
        term_rewriter(swap, max_steps=100)((1, 2))


def _deep_tuple(n: int):
    t: tuple = (1,)
    for _ in range(n):
        t = (t, 3)
    return t


def test_deep_trees_at_default_recursion_limit():
    assert sys.getrecursionlimit() <= 10_000
    n = 50_000  # 10^5 nodes: a tuple and a leaf per level
    deep = _deep_tuple(n)
    flipped = bottom_up(rule_list(one_to_three, three_to_one))(deep)
    node = flipped
    for _ in range(n):
        assert node[1] == 1
        node = node[0]
    assert node == (3,)
    td = top_down(rule_list(one_to_three, three_to_one))(deep)
    assert td[1] == 1
    decrement = term_rewriter(make_rule(Positive("a"), lambda a: a - 1))(deep)
    assert decrement[1] == 0


def test_deep_terms_with_bottom_up_and_top_down():
    x = Symbol("x")
    t = x
    for _ in range(50_000):  # 10^5 nodes
        t = t * 1 + 0
    simplify = rule_list(rule("x*1 -> x"), rule("x+0 -> x"))
    assert bottom_up(simplify)(t) is x
    assert term_rewriter(rule("x*1 -> x"), rule("x+0 -> x"))(t) is x
    once = top_down(simplify)(parse("(a*1 + 0)*1"))
    assert str(once) == "a + 0"  # each node once: the root became a*1 + 0, then its children changed


def test_combinators_have_readable_names():
    r = iterated(rule_list(one_to_three, three_to_one))
    assert r.name.startswith("iterated(rule_list(")
    assert repr(bottom_up(one_to_three)).startswith("<rule bottom_up(")


def test_symbols_free_helpers_are_untouched():
    x, y = symbols("x y")
    assert bottom_up(lambda e: e)(x + y) is x + y
