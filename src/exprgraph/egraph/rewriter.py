"""``EqualitySaturationRewriter``: equality saturation as one pass of a FunctionGraph pipeline.

A :class:`~exprgraph.graph.GraphRewriter`: it puts every output of the graph into one e-graph
(shared subterms are shared classes), saturates it with the given rules (the :mod:`.algebra` rules
by default), extracts one node per class for all outputs together (so the outputs keep sharing
what they share), and replaces each output that got cheaper. Its profile is a
:class:`SaturationProfile` carrying the saturation report.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..graph import FunctionGraph, GraphRewriter
from ..graph.profile import RewriteProfile
from ..simplify.simplify import cost as term_cost
from .algebra import SAFE, UNSAFE
from .dag import greedy_dag, improve
from .egraph import EGraph
from .extract import build_term, class_nodes, node_cost_fn
from .runner import Report, saturate
from .saturation import SIMPLIFY_COSTS, binarize

__all__ = ["EqualitySaturationRewriter", "SaturationProfile"]


@dataclass
class SaturationProfile(RewriteProfile):
    """The profile of one saturation pass: the run's report and how many outputs were replaced."""

    iterations: int = 0
    egraph_nodes: int = 0
    egraph_classes: int = 0
    replaced: int = 0
    #: the saturation's report (this field stands in for the rule table ``report()`` of term rewriting)
    report: Report | None = field(default=None, repr=False)  # type: ignore[assignment]

    def lines(self, indent: str = "") -> list[str]:
        """The printed profile as lines."""
        return [
            indent + self.header(),
            f"{indent}  {self.iterations} iterations, e-graph {self.egraph_nodes} nodes in "
            f"{self.egraph_classes} classes, {self.replaced} outputs replaced",
        ]


class EqualitySaturationRewriter(GraphRewriter):
    """Saturate the graph's outputs with ``rules`` and keep the cheapest equal outputs."""

    def __init__(
        self,
        rules: Any = None,
        *,
        unsafe: bool = False,
        cost: Any = None,
        iter_limit: int = 8,
        node_limit: int = 10_000,
        time_limit: float = 5.0,
        scheduler: str = "backoff",
        name: str | None = None,
    ) -> None:
        super().__init__(name or "EqualitySaturationRewriter")
        self.rules = (UNSAFE if unsafe else SAFE) if rules is None else rules
        self.cost = SIMPLIFY_COSTS if cost is None else cost
        kind, node_cost = node_cost_fn(self.cost)
        if kind != "sum" or node_cost is None:
            raise ValueError("EqualitySaturationRewriter needs an additive cost: 'size' or a dict of op costs")
        self._node_cost = node_cost
        self.limits: dict[str, Any] = {"iter_limit": iter_limit, "node_limit": node_limit, "time_limit": time_limit}
        self.scheduler = scheduler

    def apply(self, fgraph: FunctionGraph) -> SaturationProfile:
        """Saturate, extract, and replace the outputs that got cheaper."""
        start = time.perf_counter()
        prof = SaturationProfile(self.name, type(self).__name__, nodes_before=fgraph.node_count)
        outputs = fgraph.outputs
        egraph = EGraph()
        roots = [egraph.add(binarize(o)) for o in outputs]
        report = saturate(egraph, self.rules, scheduler=self.scheduler, **self.limits)
        egraph.rebuild()
        nodes = class_nodes(egraph)
        choice = greedy_dag(nodes, self._node_cost)
        for r in roots:
            choice = improve(nodes, egraph.find(r), choice, self._node_cost)
        news = [build_term(egraph, egraph.find(r), choice) for r in roots]
        for i, new in enumerate(news):
            old = outputs[i]
            current = fgraph.outputs[i]
            if new is current or new.dtype != old.dtype or new.shape != old.shape:
                continue
            if term_cost(new) < term_cost(current) or (
                term_cost(new) == term_cost(current) and new.size < current.size
            ):
                fgraph.replace(current, new, reason=self.name)
                prof.replaced += 1
        prof.report = report
        prof.iterations = len(report.iterations)
        prof.egraph_nodes = egraph.number_of_nodes()
        prof.egraph_classes = egraph.number_of_classes()
        prof.stop_reason = str(report.stop_reason)
        prof.nodes_after = fgraph.node_count
        prof.time = time.perf_counter() - start
        return prof
