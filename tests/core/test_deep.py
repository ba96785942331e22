"""Chains of a million nodes build, print, parse, traverse and evaluate at the default recursion limit."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import exprgraph as eg
from exprgraph import Symbol

N = 1_000_000


@pytest.fixture(scope="module")
def chain():
    assert sys.getrecursionlimit() <= 10_000
    x = Symbol("x")
    t = x
    for i in range(N):
        t = t + 1 if i % 2 else t * 0.5
    return t


def test_deep_chain_properties(chain):
    assert chain.depth == N
    assert chain.size == N + 3  # x, 1, 0.5 and the chain
    assert chain.free_symbols == frozenset({Symbol("x")})
    order = eg.postorder(chain)
    assert len(order) == N + 3 and order[-1] is chain


def test_deep_chain_prints_and_parses(chain, monkeypatch):
    text = str(chain)
    assert text.startswith("(" * 10) and text.endswith("*0.5 + 1")
    # 5 million characters: past the default text limit, read when the limit is raised
    with pytest.raises(eg.errors.SizeLimitError, match="EXPRGRAPH_MAX_TEXT"):
        eg.parse(text)
    monkeypatch.setenv("EXPRGRAPH_MAX_TEXT", str(len(text)))
    assert eg.parse(text) is chain


def test_deep_chain_evaluates(chain):
    # x -> x*0.5 + 1 converges to 2 from any start
    out = eg.evaluate(chain, {"x": np.array([0.0, 10.0, -4.0])})
    np.testing.assert_allclose(out, 2.0)


def test_deep_substitution():
    x, y = Symbol("x"), Symbol("y")
    t = x
    for _ in range(100_000):
        t = eg.tanh(t) + x
    out = eg.substitute(t, {x: y})
    assert out.free_symbols == frozenset({y})
    assert out.depth == t.depth == 200_000


def test_deep_listings():
    x = Symbol("x")
    t = x
    for _ in range(100_000):
        t = eg.sin(t) * 2
    assert repr(t).startswith("mul(sin(mul(sin(")
    assert len(eg.dformat(t).splitlines()) == 300_001  # mul, sin and the constant per level
    assert eg.to_dot(t).count("->") == 300_000


def test_deep_text_parses():
    depth = 100_000
    text = "x**" * depth + "2"
    t = eg.parse(text)
    assert t.depth == depth
    assert str(t) == text
    nested = "(" * depth + "x" + ")" * depth
    assert eg.parse(nested) is Symbol("x")
    assert eg.parse("-" * depth + "x").depth == depth
    calls = "exp(" * depth + "x" + ")" * depth
    assert eg.parse(calls).depth == depth
