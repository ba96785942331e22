"""FunctionGraph: building, clients, replacement (lazy rebuilds), checkpoints, errors."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph import Symbol, const, cos, exp, get_op, sin, substitute, symbols
from exprgraph.errors import (
    InconsistencyError,
    MissingInputError,
    NotInGraphError,
    ReplacementTypeError,
)
from exprgraph.graph import OUTPUT, FunctionGraph

add, mul, truediv = get_op("add"), get_op("mul"), get_op("truediv")
x, y, z = symbols("x y z")


def test_build_clients_and_toposort():
    s = x + y
    out = s * s + z
    fg = FunctionGraph([x, y, z], [out])
    assert fg.inputs == (x, y, z)
    assert fg.outputs == [out]
    assert fg.toposort() == [s, s * s, out]
    assert sorted(fg.clients[s], key=lambda p: p[1]) == [(s * s, 0), (s * s, 1)]
    assert fg.clients[out] == [(OUTPUT, 0)]
    assert fg.node_count == len(fg) == 3
    assert s in fg and x in fg and (x - y) not in fg
    assert fg.apply_nodes == {s, s * s, out}
    assert fg.variables == {x, y, z, s, s * s, out}


def test_inputs_default_to_free_symbols_in_first_use_order():
    fg = FunctionGraph(outputs=[z * x + y])
    assert fg.inputs == (z, x, y)
    fg = FunctionGraph(outputs=x + 1)  # a single term works too
    assert fg.outputs == [x + 1]


def test_missing_and_bad_inputs():
    with pytest.raises(MissingInputError, match="y"):
        FunctionGraph([x], [x + y])
    with pytest.raises(TypeError):
        FunctionGraph([x + y], [x + y])
    dup = FunctionGraph([x, x], [x + 1])  # duplicate inputs are kept, as upstream
    assert dup.inputs == (x, x)
    dup.check_integrity()
    with pytest.raises(TypeError):
        FunctionGraph([x])


def test_toposort_is_cached_until_a_change():
    fg = FunctionGraph([x, y], [sin(x) + y])
    first = fg.toposort()
    assert fg._topo is not None
    fg.toposort()
    assert fg.toposort() == first
    fg.replace(sin(x), exp(x))
    assert fg._topo is None
    assert fg.toposort() == [exp(x), exp(x) + y]


def test_replace_rebuilds_ancestors_and_merges_by_interning():
    a = sin(x) * 2 + sin(y) * 2
    fg = FunctionGraph([x, y], [a])
    v = fg.version
    fg.replace(sin(y), sin(x))
    assert fg.version != v
    # sin(y)*2 was rebuilt as sin(x)*2, which is the node already there: one node, used twice
    assert fg.outputs == [sin(x) * 2 + sin(x) * 2]
    assert fg.client_count(sin(x) * 2) == 2
    assert sin(y) not in fg and sin(y) * 2 not in fg
    assert fg.node_count == 3
    fg.check_integrity()


def test_replace_output_and_leaf():
    fg = FunctionGraph([x, y], [x + y, x])
    fg.replace(x + y, y * 2)
    assert fg.outputs == [y * 2, x]
    fg.replace(x, y)  # every use of the input x now uses y; x stays an input
    assert fg.outputs == [y * 2, y]
    assert fg.inputs == (x, y) and x in fg
    fg.check_integrity()


def test_replace_errors_change_nothing():
    fg = FunctionGraph([x, y], [sin(x) + y])
    before = fg.outputs
    with pytest.raises(NotInGraphError):
        fg.replace(exp(x), y)
    with pytest.raises(ReplacementTypeError):
        fg.replace(sin(x), Symbol("n", "int64"))
    with pytest.raises(ReplacementTypeError):
        fg.replace(sin(x), Symbol("v", shape=(3,)))
    with pytest.raises(MissingInputError):
        fg.replace(sin(x), z)
    with pytest.raises(InconsistencyError, match="cycle"):
        fg.replace(x, sin(x) + y)  # sin(x) + y uses x: replacing x by it would need it inside itself
    assert fg.outputs == before
    fg.check_integrity()


def test_replacement_may_contain_the_replaced_node():
    fg = FunctionGraph([x], [sin(x) + 1])
    fg.replace(sin(x), sin(x) * 2)  # new uses old: no cycle, old stays as an operand of new
    assert fg.outputs == [sin(x) * 2 + 1]
    fg.check_integrity()


def test_python_numbers_become_constants_of_the_dtype():
    fg = FunctionGraph([x], [x * 0 + 1])
    fg.replace(x * 0, 0)
    assert fg.outputs == [const(0.0) + 1]


def test_stale_reference_is_not_in_the_graph():
    inner = sin(x)
    mid = inner * y
    fg = FunctionGraph([x, y], [mid + 1])
    fg.replace(inner, exp(x))
    assert mid not in fg  # rebuilt as exp(x)*y: a different term
    assert fg.current(mid) is None
    assert exp(x) * y in fg
    with pytest.raises(NotInGraphError, match="walk"):
        fg.replace(mid, y)


def test_walk_yields_current_versions():
    t = ((x * y) / y) * z / z
    fg = FunctionGraph([x, y, z], [t])
    seen = []
    for node in fg.walk():
        seen.append(node)
        if node.op is truediv and node.args[0].op is mul:
            a, b = node.args[0].args
            if node.args[1] is b:
                fg.replace(node, a)
    assert fg.outputs == [x]
    assert (x * z) / z in seen  # the outer division, visited after its operand was rewritten
    assert list(fg.walk("out_to_in")) == []  # nothing left but the input
    with pytest.raises(ValueError):
        list(fg.walk("sideways"))


def test_add_and_remove_outputs():
    fg = FunctionGraph([x, y], [x + y])
    assert fg.add_output(sin(x)) == 1
    assert fg.outputs == [x + y, sin(x)]
    assert fg.remove_output(0) is x + y
    assert fg.outputs == [sin(x)]
    assert (x + y) not in fg
    assert fg.clients[sin(x)] == [(OUTPUT, 0)]
    fg.check_integrity()


def test_checkpoint_and_revert():
    fg = FunctionGraph([x, y], [sin(x) * y + 1])
    cp = fg.checkpoint()
    fg.replace(sin(x), exp(y))
    fg.replace(y, x)
    assert fg.outputs == [exp(x) * x + 1]
    fg.revert(cp)
    assert fg.outputs == [sin(x) * y + 1]
    fg.check_integrity()


def test_set_outputs_checks():
    fg = FunctionGraph([x], [x + 1])
    with pytest.raises(ValueError):
        fg.set_outputs([x, x])
    with pytest.raises(ReplacementTypeError):
        fg.set_outputs([Symbol("n", "int64")])


def test_copy_shares_terms():
    fg = FunctionGraph([x, y], [x * y])
    cp = fg.copy()
    cp.replace(x * y, x)
    assert fg.outputs == [x * y] and cp.outputs == [x]


def test_repr_tags_shared_nodes_like_the_seed():
    a = truediv(mul(add(y, z), x), add(y, z))
    fg = FunctionGraph([x, y, z], [a])
    assert repr(fg) == "FunctionGraph(truediv(mul(*1 -> add(y, z), x), *1))"
    fg = FunctionGraph([x, y], [x + 1, x + 1])
    assert repr(fg) == "FunctionGraph(*1 -> add(x, 1), *1)"
    big = x
    for _ in range(500):
        big = sin(big)
    assert repr(FunctionGraph([x], [big])) == "FunctionGraph(<500 nodes, 1 outputs>)"


def test_client_count_and_single_client():
    s = x + y
    fg = FunctionGraph([x, y], [s * s, s + 1])
    assert fg.client_count(s) == 3
    assert fg.client_count(s + 1) == 1
    assert fg.single_client(s + 1) is OUTPUT
    assert fg.single_client(s) is None
    assert fg.client_count(exp(x)) == 0


# -- property: lazy propagation agrees with substitution ----------------------------------------------

LEAVES = [x, y, z, const(2.0)]
OPS = [add, mul, get_op("sub")]


def _random_terms(rng: random.Random, n: int) -> list:
    made = list(LEAVES)
    for _ in range(n):
        op = rng.choice(OPS)
        made.append(op(rng.choice(made), rng.choice(made)))
    return made


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**9), st.booleans())
def test_replacements_agree_with_substitution(seed, read_between):
    """Each replace equals substituting old by new in the outputs (the eager meaning), checked at the end."""
    rng = random.Random(seed)
    made = _random_terms(rng, 25)
    outs = [rng.choice(made[4:]) for _ in range(3)]
    fg = FunctionGraph([x, y, z], outs)
    expected = list(outs)
    for _ in range(8):
        nodes = fg.toposort() if read_between else [n for n in _current_nodes(fg)]
        if not nodes:
            break
        old = rng.choice(nodes)
        pool = [t for t in made if t.op.name != "const" or True][:]
        new = rng.choice(OPS)(rng.choice(pool), rng.choice(pool)) if rng.random() < 0.5 else rng.choice(pool)
        try:
            fg.replace(old, new)
        except InconsistencyError:
            continue
        expected = [substitute(o, {old: new}) for o in expected]
        if read_between:
            assert fg.outputs == expected
    assert fg.outputs == expected
    fg.check_integrity()


def _current_nodes(fg):
    # nodes without bringing the whole graph up to date: walk and refresh one at a time
    return [n for n in fg.walk()]


# -- deep graphs ------------------------------------------------------------------------------------


def test_deep_chain_build_replace_and_toposort():
    n = 100_000
    t = x
    for _ in range(n):
        t = sin(t)
    fg = FunctionGraph([x, y], [t + y])
    assert fg.node_count == n + 1
    fg.replace(sin(x), exp(y))  # every ancestor is rebuilt, once, when the graph is read
    topo = fg.toposort()
    assert len(topo) == n + 1
    assert topo[0] is exp(y) and topo[1] is sin(exp(y))
    assert fg.client_count(exp(y)) == 1
    cp = fg.checkpoint()
    fg.replace(exp(y), x)
    fg.revert(cp)
    assert fg.toposort()[0] is exp(y)
    assert "100001 nodes" in repr(fg)


def test_clients_view_and_membership_during_lazy_rebuilds():
    inner = sin(x)
    fg = FunctionGraph([x, y], [inner * y + 1, inner * 2])
    fg.replace(inner, exp(x))  # parents are now stale, not yet rebuilt
    assert fg._stale
    # asking for the clients of exp(x) rebuilds exactly its parents
    assert sorted(str(c) for c, _ in fg.clients[exp(x)]) == ["exp(x)*2", "exp(x)*y"]
    assert exp(x) * 2 in fg and fg.current(exp(x) * y) is exp(x) * y
    assert len(fg.clients) == len(fg.variables) == 8  # x, y, 1, 2 and four nodes
    assert set(fg.clients) == fg.variables
    with pytest.raises(KeyError):
        fg.clients[sin(y)]
    assert sin(y) not in fg.clients
    # a node the pending rebuilds create can be replaced before anything was read
    fg2 = FunctionGraph([x, y], [sin(y) + y])
    fg2.replace(y, x)
    fg2.replace(sin(x), cos(x))
    assert fg2.outputs == [cos(x) + x]


def test_replace_all():
    fg = FunctionGraph([x, y], [sin(x) + cos(y)])
    fg.replace_all({sin(x): y, cos(y): x})
    assert fg.outputs == [y + x]
    with pytest.raises(ReplacementTypeError):
        fg.replace_all([(y + x, Symbol("k", "int64"))])
    assert fg.outputs == [y + x]
