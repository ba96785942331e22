"""The runner: ``saturate(term_or_egraph, rules, ...)`` grows an e-graph to saturation or a limit.

Each iteration (egg's loop): every rule searches the rebuilt e-graph (the scheduler decides which
rules and how many matches), then every match is applied, then the e-graph is rebuilt. The run
stops with a :class:`StopReason`: saturated (an iteration changed nothing and no rule is banned),
the iteration, node, time or match limit, or *goal reached* when every ``goals`` pair has been
proved equal. The limits are checked inside the phases too, not only between iterations (see
:mod:`.budget`): searches read the clock as they go and stop at the deadline or at the matches an
iteration may hold, matches are applied a chunk at a time with the node limit and the clock checked
between chunks, and the apply phase stops early enough for the rebuild after it to end by the
deadline. The :class:`Report` keeps one :class:`Iteration` row per iteration (e-nodes, e-classes,
matches and applications per rule, seconds in search, apply and rebuild) and prints as a table.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..core import Term, as_term
from ..progress import Progress
from .budget import APPLY_CHUNK, CHUNK_SECONDS, Budget, running
from .egraph import EGraph
from .extract import Extracted, extract
from .rewrite import ERule, compile_rules
from .scheduler import Scheduler, make_scheduler

__all__ = ["saturate", "Report", "Iteration", "StopReason"]


class StopReason(StrEnum):
    """Why a run stopped."""

    SATURATED = "saturated"
    ITERATION_LIMIT = "iteration limit"
    NODE_LIMIT = "node limit"
    TIME_LIMIT = "time limit"
    MATCH_LIMIT = "match limit"
    GOAL_REACHED = "goal reached"

    def __str__(self) -> str:
        return self.value


@dataclass
class Iteration:
    """One iteration of a run: sizes after it, matches and applications per rule, seconds per phase."""

    index: int
    nodes: int = 0
    classes: int = 0
    matches: dict[str, int] = field(default_factory=dict)
    applied: dict[str, int] = field(default_factory=dict)
    search_time: float = 0.0
    apply_time: float = 0.0
    rebuild_time: float = 0.0
    rebuild_unions: int = 0

    @property
    def total_time(self) -> float:
        """Seconds in the three phases."""
        return self.search_time + self.apply_time + self.rebuild_time

    @property
    def n_matches(self) -> int:
        """Matches found in this iteration, all rules together."""
        return sum(self.matches.values())

    @property
    def n_applied(self) -> int:
        """Applications that changed the e-graph, all rules together."""
        return sum(self.applied.values())


@dataclass
class Report:
    """What :func:`saturate` did: the e-graph, its root classes, why it stopped, one row per iteration."""

    egraph: EGraph
    roots: list[int]
    stop_reason: StopReason
    iterations: list[Iteration]
    time: float = 0.0

    @property
    def root(self) -> int:
        """The class of the first term saturated (an e-graph given to :func:`saturate` has no roots)."""
        if not self.roots:
            raise ValueError("this run started from an e-graph, not a term: extract from report.egraph by class id")
        return self.egraph.find(self.roots[0])

    def best(self, cost: Any = "size", *, exact: bool = False) -> Term:
        """The cheapest term of the first root class (see :func:`~exprgraph.egraph.extract`)."""
        return self.extract(cost, exact=exact).term

    def extract(self, cost: Any = "size", *, exact: bool = False) -> Extracted:
        """``(cost, term)`` of the cheapest term of the first root class."""
        return extract(self.egraph, self.root, cost, exact=exact)

    def rule_totals(self) -> dict[str, tuple[int, int]]:
        """``{rule: (matches, applications)}`` over the whole run."""
        out: dict[str, list[int]] = {}
        for it in self.iterations:
            for name, n in it.matches.items():
                out.setdefault(name, [0, 0])[0] += n
            for name, n in it.applied.items():
                out.setdefault(name, [0, 0])[1] += n
        return {k: (v[0], v[1]) for k, v in out.items()}

    def table(self, *, times: bool = True) -> str:
        """The per-iteration rows as a markdown table (``times=False`` leaves out the seconds)."""
        head = "| iter | e-nodes | e-classes | matches | applied |"
        rule = "|---:|---:|---:|---:|---:|"
        if times:
            head += " search s | apply s | rebuild s |"
            rule += "---:|---:|---:|"
        lines = [head, rule]
        for it in self.iterations:
            row = f"| {it.index} | {it.nodes} | {it.classes} | {it.n_matches} | {it.n_applied} |"
            if times:
                row += f" {it.search_time:.4f} | {it.apply_time:.4f} | {it.rebuild_time:.4f} |"
            lines.append(row)
        return "\n".join(lines)

    def summary(self) -> str:
        """One line: stop reason, iterations, sizes, time."""
        eg = self.egraph
        return (
            f"stop: {self.stop_reason}; {len(self.iterations)} iterations; "
            f"{eg.number_of_nodes()} e-nodes in {eg.number_of_classes()} e-classes; {self.time:.3f} s"
        )

    def __str__(self) -> str:
        return self.summary() + "\n" + self.table()


def _goals_reached(egraph: EGraph, goals: list[tuple[Term, Term]]) -> bool:
    return bool(goals) and all(egraph.equivalent(a, b) for a, b in goals)


def _search(
    egraph: EGraph, rules: list[ERule], sched: Scheduler, i: int, it: Iteration, budget: Budget
) -> tuple[list[tuple[ERule, list]], StopReason | None]:
    """Every rule's matches (searches stop at the deadline, or once the iteration holds ``match_limit``).

    A rule whose pattern needs a head no e-node of the e-graph has is not searched (nor shown to the
    scheduler): it has no match, and most rules of a run find none of theirs in a small e-graph."""
    found: list[tuple[ERule, list]] = []
    present = egraph._index()[0].keys()
    for r in rules:
        if r.heads is not None and not present >= r.heads:
            continue  # a head the pattern needs has no e-node: no match
        ms = sched.search(i, r, egraph)
        found.append((r, ms))
        if ms:
            it.matches[r.name] = it.matches.get(r.name, 0) + len(ms)
            budget.matches -= len(ms)
        if budget.out_of_time():
            return found, StopReason.TIME_LIMIT
        if budget.matches <= 0:  # (a scheduler of the user's own may keep more than it was given)
            return found, StopReason.MATCH_LIMIT
    return found, None


def _apply(egraph: EGraph, found: list[tuple[ERule, list]], it: Iteration, budget: Budget) -> StopReason | None:
    """Apply the matches a chunk at a time, stopping at the node limit or when the upkeep would end past the deadline.

    Chunks of :data:`~.budget.APPLY_CHUNK` matches take milliseconds for a template without
    conditions; a rule that runs user code on each match (a condition or a handler) starts at one
    match a chunk instead, doubling while a chunk takes under :data:`~.budget.CHUNK_SECONDS`
    (halving when over), so however slow that code is the clock is read as often.
    """
    clock = time.perf_counter
    for r, ms in found:
        start, size = 0, 1 if r.conditional or r.handler is not None else APPLY_CHUNK
        while start < len(ms):
            began = clock()
            n = r.apply(egraph, ms[start : start + size])
            start += size
            if n:
                it.applied[r.name] = it.applied.get(r.name, 0) + n
            if egraph.total_size() > budget.nodes:
                return StopReason.NODE_LIMIT
            if budget.out_of_time(egraph.upkeep_seconds()):
                return StopReason.TIME_LIMIT
            size = max(1, size // 2) if clock() - began > CHUNK_SECONDS else min(APPLY_CHUNK, 2 * size)
    return None


def _iterate(
    egraph: EGraph, rules: list[ERule], sched: Scheduler, i: int, budget: Budget, match_limit: int
) -> tuple[Iteration, StopReason | None]:
    """One iteration: search every rule, apply every match, rebuild (a limit may cut it short)."""
    clock = time.perf_counter
    it = Iteration(i + 1)
    budget.matches = match_limit
    t0 = clock()
    found, stop = _search(egraph, rules, sched, i, it, budget)
    t1 = clock()
    it.search_time = t1 - t0
    if stop is None:
        stop = _apply(egraph, found, it, budget)
    t2 = clock()
    it.apply_time = t2 - t1
    it.rebuild_unions = egraph.rebuild()
    it.rebuild_time = clock() - t2
    it.nodes = egraph.number_of_nodes()
    it.classes = egraph.number_of_classes()
    return it, stop


def _egraph_of(term_or_egraph: Any, fold: bool, explanations: bool) -> tuple[EGraph, list[int]]:
    """The e-graph to grow and the e-classes of the given terms (none when an e-graph is given)."""
    if isinstance(term_or_egraph, EGraph):
        return term_or_egraph, []
    egraph = EGraph(fold=fold, explanations=explanations)
    terms = term_or_egraph if isinstance(term_or_egraph, (list, tuple)) else [term_or_egraph]
    return egraph, [egraph.add(as_term(t)) for t in terms]


def _limit_reached(egraph: EGraph, iterations: int, iter_limit: int, budget: Budget) -> StopReason | None:
    """The limit that stops the run before another iteration, if any (iterations, e-nodes, time)."""
    if iterations >= iter_limit:
        return StopReason.ITERATION_LIMIT
    if egraph.total_size() > budget.nodes:
        return StopReason.NODE_LIMIT
    if budget.out_of_time(egraph.upkeep_seconds()):  # the index the searches read is built first
        return StopReason.TIME_LIMIT
    return None


def saturate(
    term_or_egraph: Any,
    rules: Any,
    *,
    iter_limit: int = 30,
    node_limit: int = 10_000,
    time_limit: float = 5.0,
    match_limit: int = 1_000_000,
    scheduler: str | Scheduler = "backoff",
    goals: Iterable[tuple[Any, Any]] = (),
    machine: str = "compiled",
    fold: bool = True,
    explanations: bool = False,
) -> Report:
    """Apply ``rules`` to an e-graph (a new one holding ``term_or_egraph``, or that e-graph) until a stop reason.

    ``term_or_egraph`` is a term, a list of terms, or an :class:`EGraph` (grown in place; ``fold`` and
    ``explanations`` configure a new one). Limits are egg's defaults: 30 iterations, 10,000 e-nodes,
    5 seconds, checked inside each iteration (a run ends a few milliseconds after the deadline,
    plus its last rebuild's misestimate); ``match_limit`` bounds the matches one iteration holds at
    once (about 100 bytes each). ``goals`` are pairs of terms: the run stops as soon as each pair is
    proved equal.
    """
    egraph, roots = _egraph_of(term_or_egraph, fold, explanations)
    if iter_limit < 0 or node_limit < 0 or not time_limit >= 0 or match_limit < 1:  # a nan time limit too
        raise ValueError("limits must not be negative or nan (and match_limit at least 1)")
    compiled = compile_rules(rules, machine)
    sched = make_scheduler(scheduler)
    goal_pairs = [(as_term(a), as_term(b)) for a, b in goals]
    start = time.perf_counter()
    egraph.rebuild()
    iterations: list[Iteration] = []
    stop: StopReason | None = StopReason.GOAL_REACHED if _goals_reached(egraph, goal_pairs) else None
    clock = time.perf_counter
    budget = Budget(deadline=start + time_limit, nodes=node_limit)
    with Progress("saturating", total=iter_limit) as report, running(budget):
        while stop is None:
            stop = _limit_reached(egraph, len(iterations), iter_limit, budget)
            if stop is not None:
                break
            nodes_before, classes_before = egraph.total_size(), egraph.number_of_classes()
            it, stop = _iterate(egraph, compiled, sched, len(iterations), budget, match_limit)
            iterations.append(it)
            report.update(len(iterations), f"{it.nodes} e-nodes in {it.classes} classes")
            if stop is not None:
                break
            if _goals_reached(egraph, goal_pairs):
                stop = StopReason.GOAL_REACHED
            elif (
                not it.applied
                and egraph.total_size() == nodes_before
                and egraph.number_of_classes() == classes_before
                and sched.can_stop(len(iterations) - 1)
            ):
                stop = StopReason.SATURATED
    return Report(egraph, roots, stop, iterations, clock() - start)
