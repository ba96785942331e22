"""E-matching: both machines agree with a brute-force matcher; literals, repeats, variadic ops, errors."""

from __future__ import annotations

import itertools

import pytest
from egraph_helpers import X, Y, arith_terms
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph import const, parse, rule
from exprgraph.egraph import EGraph, saturate
from exprgraph.egraph.ematch import EPattern, const_candidates
from exprgraph.egraph.mathsuite import MICRO_RULES, MICRO_TERMS
from exprgraph.errors import PatternError
from exprgraph.match import Choice, Segment, V

PATTERNS = [
    r.pattern
    for r in eg.rules.parse_rules(
        """
        a + b -> a
        a * (b + c) -> a
        a*b + a*c -> a
        a - a -> a
        a * 0 -> a
        a * 1 -> a
        (a + b) * (a + b) -> a
        sin(a) * a -> a
        a / (b * 2) -> a
        a -> a
        _ + a -> a
        x + (y + z) -> x
        """
    )
]


def brute_force(g: EGraph, pattern: EPattern) -> set[tuple]:
    """Every match by trying each class against the normalised pattern (recursion is fine: tiny patterns)."""
    index, _ = g._index()
    nodes_of: dict[int, list[tuple]] = {}
    for table in index.values():
        for c, keys in table.items():
            nodes_of.setdefault(c, []).extend(keys)
    leaf_classes = pattern._leaf_classes(g)

    def go(tree, c, binding):
        kind = tree[0]
        if kind == "var":
            name = tree[1]
            if name in binding:
                return [binding] if binding[name] == c else []
            return [{**binding, name: c}]
        if kind == "leaf":
            cands = {g.find(g.memo[(t,)]) for t in tree[1] if (t,) in g.memo}
            if c not in cands:
                return []
            name = tree[2] if len(tree) > 2 else None
            return [{**binding, name: c}] if name else [binding]
        out = []
        _, head, arity, kids = tree
        for key in nodes_of.get(c, ()):
            if key[0] is not head or len(key) != arity + 1:
                continue
            partial = [binding]
            for kid, child in zip(kids, key[1:], strict=True):
                partial = [b2 for b in partial for b2 in go(kid, child, b)]
            out.extend(partial)
        return out

    found = set()
    if leaf_classes is None:
        return found
    for c in g.class_ids():
        for b in go(pattern.tree, c, {}):
            found.add((c, *[b[n] for n in pattern.names]))
    return found


@settings(max_examples=25, deadline=None)
@given(st.lists(arith_terms(3), min_size=1, max_size=3), st.integers(0, 2))
def test_machines_agree_with_brute_force(terms, rounds):
    g = EGraph(fold=False)
    for t in terms:
        g.add(t)
    saturate(g, MICRO_RULES[:6], iter_limit=rounds, scheduler="simple")
    g.rebuild()
    for p in PATTERNS:
        compiled, vm = EPattern(p, "compiled"), EPattern(p, "vm")
        want = brute_force(g, compiled)
        assert set(compiled.search(g)) == want
        assert set(vm.search(g)) == want
        assert len(compiled.search(g)) == len(vm.search(g))


def test_machines_agree_on_the_micro_benchmark_graph():
    g = EGraph(fold=False)
    for t in MICRO_TERMS:
        g.add(t)
    saturate(g, MICRO_RULES, iter_limit=5, scheduler="simple")
    matched = 0
    for r in MICRO_RULES:
        a = EPattern(r.pattern, "compiled").search(g)
        b = EPattern(r.pattern, "vm").search(g)
        assert sorted(a) == sorted(b), r.name
        matched += bool(a)
    assert matched >= 15


def test_constants_match_by_value_and_repeats_must_agree():
    g = EGraph(fold=False)
    g.add(parse("x*1.0 + x*1"))
    g.add(parse("y - y"))
    g.add(parse("x - y"))
    ones = EPattern(rule("a*1 -> a").pattern).search(g)
    assert {m[1] for m in ones} == {g.lookup(X)} and len(ones) == 2
    same = EPattern(rule("a - a -> a").pattern).search(g)
    assert [m[1] for m in same] == [g.lookup(Y)]
    assert EPattern(rule("a*7 -> a").pattern).search(g) == []  # an absent literal: no search at all
    assert const(-0.0) in const_candidates(0) and const(2.0) in const_candidates(2)


def test_variadic_ops_match_by_operand_count():
    g = EGraph(fold=False)
    g.add(eg.get_op("add")(X, Y, X))
    g.add(X + Y)
    three = EPattern(rule("add(a, b, a) -> a").pattern)
    assert len(three.search(g)) == 1
    assert len(EPattern(rule("a + b -> a").pattern).search(g)) == 1


def test_limit_stops_the_search():
    g = EGraph(fold=False)
    for i in range(20):
        g.add(X + i)
    p = EPattern(rule("a + b -> a").pattern)
    assert len(p.search(g)) == 20
    assert len(p.search(g, 5)) == 5
    assert len(EPattern(rule("a + b -> a").pattern, "vm").search(g, 5)) == 5


def test_unsupported_patterns_raise_pattern_error():
    with pytest.raises(PatternError):
        EPattern(Choice(V.x * 1, V.x + 0))
    with pytest.raises(PatternError):
        EPattern(rule("add(x, *rest) -> x").pattern)
    with pytest.raises(PatternError):
        EPattern(Segment("rest"))
    with pytest.raises(ValueError):
        EPattern(V.x, machine="jit")


def test_generated_source_names_only_our_identifiers():
    p = EPattern(rule("a*(b + c) -> a").pattern)
    words = {w for w in itertools.chain.from_iterable(line.replace("(", " ").split() for line in p.source.splitlines())}
    assert "b" not in words and "c" not in words  # variables become slots v0, v1, ...


def test_deep_patterns_fall_back_to_the_machine():
    deep = X
    for _ in range(40):
        deep = eg.get_op("sin")(deep)
    g = EGraph(fold=False)
    g.add(deep)
    pattern = deep.args[0]  # a 39-deep literal term as a pattern
    p = EPattern(pattern)
    assert p.machine == "vm" and len(p.search(g)) == 1
    r = saturate(g, [rule(f"{pattern} -> x")])
    assert r.egraph.equivalent(deep, parse("sin(x)"))
