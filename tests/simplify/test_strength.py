"""One default strength everywhere: the safe rules, unless the unsafe ones are asked for by name."""

from __future__ import annotations

import inspect

import pytest
from eg_strategies import terms
from hypothesis import given, settings

import exprgraph as eg
from exprgraph.cli import main
from exprgraph.egraph import EqualitySaturationRewriter
from exprgraph.egraph.algebra import SAFE, algebra_rules
from exprgraph.egraph.saturation import saturation_simplify
from exprgraph.graph import FunctionGraph, rewrite_graph
from exprgraph.simplify import canonical, canonical_ruleset, output_ruleset, rules, simplify

UNSAFE_ONLY = ["x*0 + y", "(x*y)/y", "x - x", "3*x - x", "log(exp(x))", "exp(x)*exp(y)", "-x - y"]


@pytest.mark.parametrize(
    "fn",
    [
        simplify,
        canonical,
        rules,
        canonical_ruleset,
        output_ruleset,
        saturation_simplify,
        algebra_rules,
        EqualitySaturationRewriter.__init__,
    ],
)
def test_every_unsafe_parameter_defaults_to_false(fn: object) -> None:
    assert inspect.signature(fn).parameters["unsafe"].default is False  # type: ignore[arg-type]


def test_the_default_graph_query_is_safe() -> None:
    include = inspect.signature(rewrite_graph).parameters["include"].default
    assert "unsafe" not in include and "canonicalize" in include
    assert [r.name for r in algebra_rules()] == [r.name for r in SAFE]


@pytest.mark.parametrize("text", UNSAFE_ONLY)
def test_simplify_and_rewrite_graph_agree_at_both_strengths(text: str) -> None:
    t = eg.parse(text)
    safe = simplify(t)
    assert safe is simplify(t, unsafe=False) is rewrite_graph(t)
    unsafe = simplify(t, unsafe=True)
    assert unsafe is rewrite_graph(t, include=("canonicalize", "unsafe"))
    assert unsafe is not safe  # each of these needs an unsafe rule
    assert canonical(t) is canonical(t, unsafe=False)


def _operations(t: eg.Term) -> int:
    return sum(1 for n in eg.postorder(t) if n.args)


@settings(max_examples=60, deadline=None)
@given(t=terms(max_depth=4, kind="continuous"))
def test_on_a_tree_the_graph_default_is_simplify_default(t: eg.Term) -> None:
    out, simplified = rewrite_graph(t), simplify(t)
    for u in (t, simplified):  # sin(--x) * sin(x) shares sin(x) once --x is x
        nodes = eg.postorder(u)
        if any(sum(a is n for m in nodes for a in m.args) > 1 for n in nodes if n.args):
            return  # a shared node is a region boundary in the graph: the results may differ in form
    # the whole tree is one region, normalised by simplify at the default strength; the graph
    # never grows, so a result with more operations than the tree is declined
    assert out is (simplified if _operations(simplified) <= _operations(t) else t)


def test_the_egraph_defaults_are_safe() -> None:
    x, y = eg.symbols("x y")
    assert simplify(x * 0, method="egraph") is x * 0
    assert simplify(x * 0, method="egraph", unsafe=True) is eg.const(0.0)
    fg = FunctionGraph([x, y], [x * 0 + y])
    EqualitySaturationRewriter().rewrite(fg)
    assert fg.outputs[0] is not y  # x*0 -> 0 is unsafe: not by default


def test_the_commands_default_to_safe(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["simplify", "x - x"], ["rewrite", "x - x"], ["saturate", "x - x"]):
        assert main(argv) == 0
        assert capsys.readouterr().out.splitlines()[0] == "x - x", argv
    unsafe_rewrite = ["rewrite", "x - x", "--include", "canonicalize", "--include", "unsafe"]
    for argv in (["simplify", "x - x", "--unsafe"], unsafe_rewrite):
        assert main(argv) == 0
        assert capsys.readouterr().out.splitlines()[0] == "0.0", argv
