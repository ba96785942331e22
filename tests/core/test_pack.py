"""TermPack: many terms pickled as one flat node list, linear in the DAG, re-interned on load."""

from __future__ import annotations

import pickle

from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph import Symbol, const, cos, exp, sin
from exprgraph.core.pack import TermPack
from exprgraph.graph import FunctionGraph

x, y = Symbol("x"), Symbol("y")


def _nested(n: int) -> list:
    """n outputs, each one level deeper than the last: output k shares all of output k-1."""
    t, outs = x, []
    for _ in range(n):
        t = sin(t) + x
        outs.append(t)
    return outs


def test_a_pack_pickles_shared_nodes_once():
    small, large = _nested(500), _nested(2000)
    size = {len(outs): len(pickle.dumps(TermPack(outs))) for outs in (small, large)}
    assert size[2000] < 4.5 * size[500]  # linear: a list of the terms grows 16x
    assert len(pickle.dumps(large[:500])) > 20 * size[500]  # what a plain list costs (each term's DAG whole)


def test_a_pack_round_trips_to_the_same_interned_terms():
    outs = [*_nested(300), x, const(2.5), exp(y) * cos(x), x]  # repeats and leaves kept in place
    back = pickle.loads(pickle.dumps(TermPack(outs)))
    assert back.terms == tuple(outs)
    assert all(a is b for a, b in zip(back.terms, outs, strict=True))
    assert pickle.loads(pickle.dumps(TermPack([]))).terms == ()


def test_a_deep_pack_does_not_recurse():
    outs = _nested(100_000)
    back = pickle.loads(pickle.dumps(TermPack(outs[-3:])))
    assert back.terms[-1] is outs[-1]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=30), st.lists(st.integers(0, 29), max_size=10))
def test_graphs_pickle_their_terms_in_one_pack(steps, picks):
    made = [x, y]
    for k, s in enumerate(steps):
        a, b = made[k % len(made)], made[s % len(made)]
        made.append([a + b, a * b, sin(a), exp(b) - a, a / (b + 1), cos(a * b)][s])
    outs = [made[2 + p % len(steps)] for p in picks] or [made[-1]]
    graph = FunctionGraph([x, y], outs)
    back = pickle.loads(pickle.dumps(graph))
    assert back.outputs == graph.outputs and back.inputs == graph.inputs
    frozen = graph.freeze()
    assert pickle.loads(pickle.dumps(frozen)) == frozen
