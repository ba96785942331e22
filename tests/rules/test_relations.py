"""miniKanren relations as rules: the seed's matrix-product distribution, in both directions."""

from __future__ import annotations

from kanren import conso, heado, run, tailo
from kanren.assoccomm import associative, commutative
from kanren_examples import dot_distributeo

from exprgraph import Symbol, add, matmul, mul
from exprgraph.match.unify import var
from exprgraph.rules import RuleSet, relation_rule, rewrite
from exprgraph.rules.relations import declare_op_facts

x, y, z, w = (Symbol(n, shape=(3,)) for n in "xyzw")
A, B = Symbol("A", shape=(3, 3)), Symbol("B", shape=(3, 3))


distribute = relation_rule(dot_distributeo, name="distribute")
gather = relation_rule(lambda a, b: dot_distributeo(b, a), name="gather")


def test_distribute_simple():
    assert rewrite(A @ (x + y), [distribute]) is A @ x + A @ y
    assert str(rewrite(A @ ((x + y) + (z + w)), [distribute])) == "(A @ x + A @ y) + (A @ z + A @ w)"


def test_distribute_nested_and_gather_back():
    t = A @ (x + (y + B @ (z + w)))
    res = rewrite(t, [distribute])
    assert res is A @ x + (A @ y + (A @ (B @ z) + A @ (B @ w)))
    assert str(res) == "A @ x + (A @ y + (A @ (B @ z) + A @ (B @ w)))"
    back = rewrite(res, [gather])
    assert back is t
    assert str(back) == "A @ (x + (y + B @ (z + w)))"


def test_relation_rule_leaves_unrelated_terms_alone():
    assert distribute(A @ x) is A @ x
    assert distribute(x) is x
    assert gather(A @ x + B @ y) is A @ x + B @ y  # different matrices: no common factor
    assert distribute.apply(x + y) is None


def test_relation_rules_can_be_indexed_by_op():
    indexed = relation_rule(dot_distributeo, ops=["matmul"])
    rs = RuleSet([indexed])
    assert rs.rules_for(matmul) == (indexed,) and rs.rules_for(add) == ()
    assert rewrite(A @ (x + y), rs) is A @ x + A @ y


def test_kanren_goals_run_on_terms_directly():
    q = var()
    assert run(1, q, heado(q, x + y)) == (add,)
    assert tuple(run(1, q, tailo(q, x + y))[0]) == (x, y)
    assert run(0, q, conso(mul, q, x + y)) == ()


def test_declare_op_facts():
    declare_op_facts([add, mul, matmul])
    assert (add,) in commutative.facts and (mul,) in associative.facts
    assert (matmul,) not in commutative.facts and (matmul,) in associative.facts
