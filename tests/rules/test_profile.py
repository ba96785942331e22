"""One profile class: the term rewriter's per-rule profile and the graph rewriters' run profile."""

from __future__ import annotations

import io

from exprgraph.core import Symbol
from exprgraph.graph import FunctionGraph, MergeOptimizer
from exprgraph.graph import RewriteProfile as GraphRewriteProfile
from exprgraph.graph.profile import EquilibriumProfile, MergeProfile, SequenceProfile, WalkProfile
from exprgraph.graph.profile import RewriteProfile as GraphModuleProfile
from exprgraph.rules import RewriteProfile, rewrite
from exprgraph.rules.profile import RULES_KIND


def test_both_import_paths_give_the_one_class() -> None:
    assert GraphRewriteProfile is RewriteProfile and GraphModuleProfile is RewriteProfile
    for sub in (WalkProfile, MergeProfile, EquilibriumProfile, SequenceProfile):
        assert issubclass(sub, RewriteProfile)


def test_no_argument_profile_counts_rules() -> None:
    x = Symbol("x")
    prof = RewriteProfile()
    assert (prof.name, prof.kind) == (RULES_KIND, RULES_KIND) and not prof.changed
    assert rewrite(x * 1 + 0, ["x*1 -> x", "x + 0 -> x"], profile=prof) is x
    assert prof.steps == 2 and prof.changed
    assert prof.rules["x*1 -> x"].rewrites == 1 and prof.rules["x + 0 -> x"].rewrites == 1
    text = str(prof)
    assert text == prof.report() == prof.format()
    assert text.startswith("rewrite: ") and "| `x*1 -> x` |" in text


def test_positional_profile_of_a_graph_run() -> None:
    prof = RewriteProfile("cleanup", "MergeOptimizer", nodes_before=5, nodes_after=3)
    assert prof.changed and prof.rules == {} and prof.steps == 0
    assert prof.header() == "MergeOptimizer cleanup: 0.000s, nodes 5 -> 3, stop: done"
    assert str(prof) == prof.header()
    assert repr(prof) == "<RewriteProfile cleanup: 0s, nodes 5 -> 3, stop: done>"
    out = io.StringIO()
    prof.print_profile(out)
    assert out.getvalue() == prof.header() + "\n"
    assert not RewriteProfile("same", "X", nodes_before=2, nodes_after=2).changed


def test_graph_rewriters_return_the_one_class() -> None:
    x, y = Symbol("x"), Symbol("y")
    prof = MergeOptimizer().rewrite(FunctionGraph(outputs=[x + y, y + x]))
    assert isinstance(prof, RewriteProfile) and prof.kind == "MergeOptimizer"
    assert str(prof).startswith("MergeOptimizer ")
