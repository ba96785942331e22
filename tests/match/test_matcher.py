"""The matcher on plain data, containers, strings, dicts, terms and Expression nodes."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import pytest

from exprgraph import Expression, Symbol, add, const, exp, mul, parse, symbols
from exprgraph import sum as sum_
from exprgraph.errors import MatchError, PatternError
from exprgraph.match import (
    Choice,
    Dot,
    Not,
    OpPattern,
    P,
    Plus,
    Segment,
    Star,
    V,
    Var,
    Where,
    is_match,
    match,
    match_all,
)

x, y, z = symbols("x y z")


# -- plain values -----------------------------------------------------------------------------------


def test_plain_values_match_by_equality():
    assert match(1, 1) == {}
    assert match("abc", "abc") == {}
    assert match(1, 1.0) == {}  # Python ==
    assert not is_match(1, 2)
    assert not is_match("a", "b")
    with pytest.raises(MatchError, match="does not match"):
        match(1, 2)


def test_match_error_is_a_value_error_with_short_message():
    big = tuple(range(10_000))
    with pytest.raises(ValueError) as info:
        match((V.a, 1), big)
    assert len(str(info.value)) < 500


def test_var_binds_and_dot_binds_nothing():
    assert match(V.x, 5) == {"x": 5}
    assert match(Dot, 5) == {}
    assert match(Dot(), (1, 2)) == {}
    assert Dot() is Dot


def test_var_restrictions_are_checked_before_binding():
    positive = Var("x", restrictions=[lambda v: isinstance(v, int), lambda v: v > 0])
    assert match(positive, 3) == {"x": 3}
    assert not is_match(positive, -3)
    assert not is_match(positive, "s")  # the first restriction stops the second (which would raise)


def test_repeated_names_must_bind_equal_values():
    assert match((V.a, V.a), (1, 1)) == {"a": 1}
    assert not is_match((V.a, V.a), (1, 2))
    assert match((V.a, V.a), ((1, 2), (1, 2))) == {"a": (1, 2)}
    assert match((V.a, V.a), ([1], [1])) == {"a": [1]}  # unhashable values compare by ==


def test_initial_bindings_constrain_the_match():
    assert match((V.a, V.b), (1, 2), {"a": 1}) == {"a": 1, "b": 2}
    assert not is_match((V.a, V.b), (1, 2), {"a": 2})


# -- containers ---------------------------------------------------------------------------------------


def test_tuples_and_lists():
    assert match((V.a, 2, V.b), (1, 2, 3)) == {"a": 1, "b": 3}
    assert not is_match((V.a, V.b), (1, 2, 3))
    assert match([V.a, 2], [1, 2]) == {"a": 1}
    assert match([V.a, 2], (1, 2)) == {"a": 1}  # a list pattern matches a tuple
    assert not is_match((V.a, 2), [1, 2])  # a tuple pattern matches tuples only
    assert match(((V.a, V.b), V.c), ((1, 2), 3)) == {"a": 1, "b": 2, "c": 3}
    assert match((), ()) == {}


def test_dicts_need_the_same_keys():
    assert match({"a": V.x, "b": 2}, {"b": 2, "a": 5}) == {"x": 5}
    assert not is_match({"a": V.x}, {"a": 1, "b": 2})
    assert not is_match({"a": V.x, "b": 2}, {"a": 1})
    assert not is_match({"a": V.x}, (1,))
    assert match({"k": (V.x, Segment("r"))}, {"k": (1, 2, 3)}) == {"x": 1, "r": (2, 3)}


def test_strings_are_sequences_of_characters():
    found = list(match_all([Segment("a"), "b", Segment("c")], "abcb"))
    assert found == [{"a": "a", "c": "cb"}, {"a": "abc", "c": ""}]
    assert match([V.first, Segment("rest")], "hello") == {"first": "h", "rest": "ello"}
    assert match(["a", "b"], "ab") == {}
    assert not is_match(("a", "b"), "ab")  # tuple patterns do not match strings
    assert match([Segment("a"), Segment("a")], "abab") == {"a": "ab"}


def test_namedtuple_patterns_need_the_same_type():
    from collections import namedtuple

    Pt = namedtuple("Pt", "x y")
    Other = namedtuple("Other", "x y")
    assert match(Pt(V.a, 2), Pt(1, 2)) == {"a": 1}
    assert not is_match(Pt(V.a, 2), Other(1, 2))


# -- Choice, Not, Where ---------------------------------------------------------------------------------


def test_choice_tries_alternatives_in_order_and_binds_its_name():
    assert match(Choice(1, 2, name="x"), 2) == {"x": 2}
    assert not is_match(Choice(1, 2), 3)
    assert list(match_all(Choice(V.a, V.b), 1)) == [{"a": 1}, {"b": 1}]


def test_choice_backtracks_when_a_later_part_fails():
    # the first alternative binds a=1, then (a vs 2) fails: the second alternative is tried
    assert match((Choice(V.a, V.b), V.a), (1, 2)) == {"b": 1, "a": 2}
    assert match((Choice((1, V.x), (V.x, 2)), V.x), ((1, 2), 1)) == {"x": 1}
    assert list(match_all((Choice(1, V.q), Choice(V.q, 1)), (1, 1))) == [{"q": 1}, {}, {"q": 1}, {"q": 1}]


def test_not_matches_what_its_pattern_does_not():
    assert match(Not(1), 2) == {}
    assert not is_match(Not(1), 1)
    assert match((V.x, Not(V.x)), (1, 2)) == {"x": 1}
    assert not is_match((V.x, Not(V.x)), (1, 1))
    assert match(Not(Not(V.z)), 4) == {}  # Not binds nothing


def test_where_filters_and_backtracks():
    bigger = Where((V.a, V.b), lambda b: b["a"] > b["b"])
    assert match(bigger, (3, 2)) == {"a": 3, "b": 2}
    assert not is_match(bigger, (2, 3))
    # commutative matching offers (x, y) then (y, x): the test picks the order it accepts
    first_is_y = Where(V.p + V.q, lambda b: b["p"] is y)
    assert match(first_is_y, x + y) == {"p": y, "q": x}


# -- runs: Star, Plus, Segment --------------------------------------------------------------------------


def test_segment_enumeration_shortest_first():
    found = list(match_all((Segment("a"), Segment("b")), (1, 2, 3)))
    assert found == [
        {"a": (), "b": (1, 2, 3)},
        {"a": (1,), "b": (2, 3)},
        {"a": (1, 2), "b": (3,)},
        {"a": (1, 2, 3), "b": ()},
    ]


def test_greedy_segment_enumerates_longest_first():
    found = [m["a"] for m in match_all((Segment("a", greedy=True), Segment("b")), (1, 2, 3))]
    assert found == [(1, 2, 3), (1, 2), (1,), ()]


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
def test_three_segments_count_all_splits(n):
    found = list(match_all((Segment("a"), Segment("b"), Segment("c")), tuple(range(n))))
    assert len(found) == (n + 2) * (n + 1) // 2
    assert all(m["a"] + m["b"] + m["c"] == tuple(range(n)) for m in found)


def test_star_and_plus_with_a_pattern():
    assert [m["ones"] for m in match_all((Star(1, name="ones"), Segment("rest")), (1, 1, 2))] == [(), (1,), (1, 1)]
    assert [m["r"] for m in match_all((Plus(V.x, name="r"), Segment("s")), (5, 5, 6))] == [(5,), (5, 5)]
    assert not is_match((Plus(1),), ())
    assert match((Star(1),), ()) == {}


def test_names_inside_a_star_must_agree_across_the_run():
    assert match((Star(V.x),), (4, 4, 4)) == {"x": 4}
    assert not is_match((Star(V.x),), (4, 4, 5))
    assert not is_match((Star((V.k, V.v)),), ((1, 2), (3, 4)))


def test_accumulate_collects_names_into_tuples():
    pat = (Star((V.k, V.v), name="items", accumulate=("k", "v")),)
    assert match(pat, ((1, 2), (3, 4))) == {"k": (1, 3), "v": (2, 4), "items": ((1, 2), (3, 4))}
    assert match(pat, ()) == {"k": (), "v": (), "items": ()}
    # accumulated and shared names together: v must be equal across the run, k is collected
    mixed = (Star((V.k, V.v), accumulate=("k",)), Segment("tail"))
    first = match(mixed, ((1, 0), (2, 0), (3, 9)))
    assert first == {"k": (), "tail": ((1, 0), (2, 0), (3, 9))}
    all_k = [m["k"] for m in match_all(mixed, ((1, 0), (2, 0), (3, 9)))]
    assert all_k == [(), (1,), (1, 2), (1, 2, 3)][:3]


def test_accumulated_name_bound_outside_must_agree():
    pat = (V.k, Star((V.k,), accumulate=("k",)))
    assert not is_match(pat, (1, (1,), (2,)))
    assert match((V.k, Star((V.j,), accumulate=("j",))), (1, (1,), (2,))) == {"k": 1, "j": (1, 2)}


def test_bound_segment_must_match_the_same_run_again():
    assert match((Segment("a"), Segment("a")), (1, 2, 1, 2)) == {"a": (1, 2)}
    assert not is_match((Segment("a"), Segment("a")), (1, 2, 3))
    assert list(match_all((Segment("a"), 0, Segment("a")), (1, 0, 1))) == [{"a": (1,)}]


def test_star_outside_a_sequence_is_a_pattern_error():
    with pytest.raises(PatternError):
        match(Star(1), 1)


# -- terms ----------------------------------------------------------------------------------------------


def test_term_operators_build_op_patterns():
    pat = V.x * 1
    assert isinstance(pat, OpPattern) and pat.op.name == "mul"
    assert match(pat, x * 1) == {"x": x}
    assert match(V.x / V.x, (x + 1) / (x + 1)) == {"x": x + 1}
    assert not is_match(V.x / V.x, x / y)
    assert match(P.exp(V.a) ** 2, exp(y) ** 2) == {"a": y}
    assert match(-V.a, -x) == {"a": x}


def test_constants_match_by_value_but_bools_only_bools():
    assert is_match(V.x * 1, x * 1.0)
    assert is_match(V.x * 1.0, x * 1)
    assert not is_match(V.x * 1, x * True)
    assert is_match(V.x + 0, x + const(-0.0))
    assert is_match(const(2), 2.0) and is_match(2, const(2))


def test_repeated_names_compare_constants_by_value():
    assert match(V.a - V.a, const(1.0) - const(1)) == {"a": const(1.0)}
    assert not is_match(V.a - V.a, const(True) - const(1))
    assert not is_match((V.a, V.a), (const(2), 2.0))  # a bound term never equals plain data


def test_commutative_ops_match_in_either_order():
    assert match(V.x * 1, 1 * y) == {"x": y}
    assert match((V.a * V.b) / V.b, (y * x) / y) == {"a": x, "b": y}
    found = list(match_all(V.p + V.q, x + y))
    assert found == [{"p": x, "q": y}, {"p": y, "q": x}]
    assert list(match_all(V.p + V.q, x + x)) == [{"p": x, "q": x}]  # equal operands: one order


def test_noncommutative_ops_keep_the_order():
    assert match(V.a - V.b, x - y) == {"a": x, "b": y}
    assert not is_match(V.a - 1, 1 - x)


def test_variadic_commutative_matching():
    t = add(x, const(2), y)
    assert match(P.add(2, V.a, V.b), t) == {"a": x, "b": y}
    found = list(match_all(P.add(V.a, Segment("rest")), t))
    assert [m["a"] for m in found] == [x, const(2), y]
    assert found[0]["rest"] == (const(2), y)


def test_associative_ops_regroup_and_flatten():
    assert match(V.x + 0, add(x, const(0), y)) == {"x": x + y}
    assert match(P.add(V.a, V.b, V.c), x + (y + z)) == {"a": x, "b": y, "c": z}
    assert not is_match(P.add(V.a, V.b, V.c, V.d), x + (y + z))
    found = list(match_all(V.a + V.b, add(x, y, z)))
    assert found == [{"a": x, "b": y + z}, {"a": x + y, "b": z}]
    A, B, C = (Symbol(n, shape=(2, 2)) for n in "ABC")
    mm = P.matmul(V.l, V.r)  # matmul is associative, not commutative
    assert list(match_all(mm, P.matmul(A, B, C) if False else (A @ B) @ C)) == [{"l": A @ B, "r": C}]


def test_attr_of_op_patterns():
    m = Symbol("m", shape=(2, 3))
    assert match(P.sum(V.a, axis=0), sum_(m, axis=0)) == {"a": m}
    assert not is_match(P.sum(V.a, axis=1), sum_(m, axis=0))
    assert not is_match(P.sum(V.a), sum_(m, axis=0))
    assert match(P.sum(V.a, axis=V.ax), sum_(m, axis=1)) == {"a": m, "ax": 1}


def test_terms_as_patterns_match_structurally():
    assert match(x + 1, x + 1) == {}
    assert match(x + 1, x + 1.0) == {}  # constants by value
    assert match(x + 1, 1 + x) == {}  # commutative
    assert not is_match(x + 1, y + 1)
    assert not is_match(x, y)
    assert match((x, V.a), (x, 3)) == {"a": 3}


def test_terms_do_not_match_containers():
    assert not is_match((V.a, V.b), x + y)
    assert not is_match(V.a + V.b, (x, y))


@dataclass
class Node(Expression):
    """A tiny user tree node: a head and children."""

    head: str
    kids: tuple

    def tree_children(self):
        return iter(self.kids)

    def tree_map(self, fn):
        return Node(self.head, tuple(fn(k) for k in self.kids))


@dataclass
class Headed(Node):
    """A node that names its head, so patterns with runs compare heads too."""

    def match_head(self):
        return self.head


def test_expression_nodes_match_structurally():
    tree = Node("f", (1, Node("g", (2,))))
    assert match(Node("f", (V.a, Node("g", (V.b,)))), tree) == {"a": 1, "b": 2}
    assert not is_match(Node("h", (V.a, Dot)), tree)
    assert not is_match(Node("f", (V.a,)), tree)
    assert match(Node("f", (Segment("all"),)), tree) == {"all": (1, Node("g", (2,)))}
    assert not is_match(Headed("f", (Segment("all"),)), Headed("h", (1, 2)))
    assert match(Headed("f", (V.a, Segment("r"))), Headed("f", (1, 2))) == {"a": 1, "r": (2,)}


# -- size and depth ----------------------------------------------------------------------------------------


def test_deep_chain_matches_at_default_recursion_limit():
    assert sys.getrecursionlimit() <= 10_000
    e: Any = x
    p: Any = V.x
    for _ in range(100_000):
        e = e - x
        p = p - V.x
    assert match(p, e) == {"x": x}
    assert not is_match(p, e - y)


def test_flat_tuple_of_ten_thousand_variables():
    n = 10_000
    pat = tuple(Var(f"v{i}") for i in range(n))
    found = match(pat, tuple(range(n)))
    assert len(found) == n and found["v9999"] == 9999
    same = tuple(V.a for _ in range(n))
    assert match(same, (7,) * n) == {"a": 7}
    assert not is_match(same, (7,) * (n - 1) + (8,))


def _balanced(depth: int, op, last: Any = None):
    leaves = [Symbol(f"s{i}") for i in range(2**depth)]
    pats: list[Any] = [Var(f"v{i}") for i in range(2**depth)]
    if last is not None:
        pats[-1] = last
    while len(leaves) > 1:
        leaves = [op(leaves[i], leaves[i + 1]) for i in range(0, len(leaves), 2)]
        pats = [OpPattern(op, (pats[i], pats[i + 1])) for i in range(0, len(pats), 2)]
    return leaves[0], pats[0]


def test_big_commutative_tree_matches_and_fails_without_blowup():
    e, p = _balanced(12, mul)
    found = match(p, e)
    assert len(found) == 4096 and found["v0"] is Symbol("s0")
    e, p = _balanced(10, mul, last=5)  # fails at the last leaf whatever the operand orders
    assert not is_match(p, e)


def test_match_all_is_lazy():
    gen = match_all((Segment("a"), Segment("b")), tuple(range(10_000)))
    assert next(gen) == {"a": (), "b": tuple(range(10_000))}
    assert next(gen)["a"] == (0,)


def test_parse_builds_terms_that_patterns_match():
    assert match((V.a * V.b) / V.b, parse("(p*q)/q"))["a"] is Symbol("p")
