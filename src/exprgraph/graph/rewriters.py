"""Node rewriters and graph rewriters: the ready-made ones, and the interfaces re-exported.

The interfaces (:class:`Rewriter`, :class:`NodeRewriter`, :class:`GraphRewriter` and the
decorators ``@node_rewriter``/``@graph_rewriter``) are in :mod:`exprgraph.graph.interface`, below
the drivers; they are importable from here too. Drivers (walking, equilibrium) apply the results
of node rewriters through one transaction driver (:mod:`exprgraph.graph.transaction`).
:class:`SequentialGraphRewriter` runs graph rewriters in order, walking node rewriters with
``in2out``.

Ready-made node rewriters: :class:`SubstitutionNodeRewriter` (``op1`` -> ``op2``),
:class:`RemovalNodeRewriter` (``op(x)`` -> ``x``), :class:`SequentialNodeRewriter` (several
node rewriters tried in order), :class:`KanrenRelationSub` (a miniKanren relation) and
:class:`RuleNodeRewriter` (a rule of :mod:`exprgraph.rules`); :class:`PatternNodeRewriter` is in
:mod:`exprgraph.graph.pattern_rewriter`.

Every rewriter has ``print_summary()``: its class and name, and the rewriters it applies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..core import Op, Term
from ..errors import RewriteLimitError
from ..rules.opindex import OpIndex
from .interface import (
    FromFunctionGraphRewriter,
    FromFunctionNodeRewriter,
    GraphRewriter,
    NodeRewriter,
    Rewriter,
    as_op,
    graph_rewriter,
    node_rewriter,
)
from .profile import SequenceProfile
from .transaction import replacement_pairs
from .walking import in2out

if TYPE_CHECKING:
    from .fgraph import FunctionGraph

__all__ = [
    "Rewriter",
    "NodeRewriter",
    "FromFunctionNodeRewriter",
    "node_rewriter",
    "GraphRewriter",
    "FromFunctionGraphRewriter",
    "graph_rewriter",
    "SequentialGraphRewriter",
    "SubstitutionNodeRewriter",
    "RemovalNodeRewriter",
    "SequentialNodeRewriter",
    "KanrenRelationSub",
    "RuleNodeRewriter",
    "rules_to_rewriters",
    "as_op",
]


class SequentialGraphRewriter(GraphRewriter):
    """Apply graph rewriters in order (node rewriters are walked with ``in2out``)."""

    def __init__(
        self, *rewriters: Rewriter, failure_callback: Any = None, name: str | None = None, verbose: bool = False
    ) -> None:
        super().__init__(name or "SequentialGraphRewriter")
        if len(rewriters) == 1 and isinstance(rewriters[0], (list, tuple)):
            rewriters = tuple(rewriters[0])
        made = [
            in2out(r, failure_callback=failure_callback or "raise", verbose=verbose)
            if isinstance(r, NodeRewriter)
            else r
            for r in rewriters
        ]
        self.rewriters: list[GraphRewriter] = []
        for r in made:
            if not isinstance(r, GraphRewriter):
                raise TypeError(f"SequentialGraphRewriter takes rewriters, not {r!r}")
            self.rewriters.append(r)
        #: called as ``failure_callback(exc, self, rewriter)`` when a child raises (None: re-raise)
        self.failure_callback = failure_callback

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Requirements of every child."""
        for r in self.rewriters:
            r.add_requirements(fgraph)

    def apply(self, fgraph: FunctionGraph) -> SequenceProfile:
        """Run each child once, in order."""
        prof = SequenceProfile(self.name, type(self).__name__, nodes_before=fgraph.node_count)
        for i, r in enumerate(self.rewriters):
            try:
                child = r.timed_apply(fgraph)
            except Exception as exc:
                cb = self.failure_callback
                if cb is None or cb == "raise":
                    raise
                if callable(cb):
                    cb(exc, self, r)
                elif cb == "warn":
                    import warnings

                    from ..errors import RewriteWarning

                    warnings.warn(f"graph rewriter {r.name} failed: {type(exc).__name__}: {exc}", RewriteWarning, 2)
                continue
            prof.children.append((i, child))
        return prof

    def summary_children(self) -> list[Rewriter]:
        """The rewriters of the sequence, in order."""
        return list(self.rewriters)

    def __repr__(self) -> str:
        return f"<SequentialGraphRewriter {self.name} of {len(self.rewriters)}>"


# -- ready-made node rewriters -------------------------------------------------------------------------


class SubstitutionNodeRewriter(NodeRewriter):
    """Replace every ``op1(args)`` by ``op2(args)``."""

    def __init__(self, op1: Any, op2: Any, name: str | None = None) -> None:
        self.op1 = as_op(op1)
        self.op2 = as_op(op2)
        super().__init__(name or f"{self.op1.name} -> {self.op2.name}")

    def tracks(self) -> list[Op]:
        """Nodes of ``op1``."""
        return [self.op1]

    def transform(self, fgraph: FunctionGraph, node: Term) -> Any:
        """``op2`` applied to the node's operands."""
        if node.op is not self.op1:
            return False
        return [self.op2(*node.args, attr=node.attr)]


class RemovalNodeRewriter(NodeRewriter):
    """Remove a unary op: ``op(x)`` becomes ``x``."""

    def __init__(self, op: Any, name: str | None = None) -> None:
        self.op = as_op(op)
        lo, hi = self.op.arity
        if (lo, hi) != (1, 1):
            raise ValueError(
                f"RemovalNodeRewriter needs a unary op (one operand in, one result out), not {self.op.name}"
            )
        super().__init__(name or f"remove_{self.op.name}")

    def tracks(self) -> list[Op]:
        """Nodes of ``op``."""
        return [self.op]

    def transform(self, fgraph: FunctionGraph, node: Term) -> Any:
        """The node's operand."""
        if node.op is not self.op:
            return False
        return [node.args[0]]


class SequentialNodeRewriter(NodeRewriter):
    """Node rewriters tried in order on a node; the first that applies gives the result.

    With ``apply_all_rewrites=True`` the rewriters are tried again on that result, and so on
    until none applies (at most ``max_steps`` times, then :class:`~exprgraph.errors.RewriteLimitError`);
    the node is replaced by the last result. A dict result (replacing other nodes too) ends the
    chain. The rewriter tracks the union of its rewriters' ops. ``profile`` is accepted for
    upstream's signature (the drivers always count tries and applications).
    """

    def __init__(
        self,
        *rewriters: NodeRewriter,
        apply_all_rewrites: bool = False,
        profile: bool = False,
        max_steps: int = 1000,
        name: str | None = None,
    ) -> None:
        if len(rewriters) == 1 and isinstance(rewriters[0], (list, tuple)):
            rewriters = tuple(rewriters[0])
        for r in rewriters:
            if not isinstance(r, NodeRewriter):
                raise TypeError(f"SequentialNodeRewriter takes node rewriters, not {r!r}")
        super().__init__(name or "SequentialNodeRewriter")
        self.rewriters: list[NodeRewriter] = list(rewriters)
        self.apply_all_rewrites = apply_all_rewrites
        self.max_steps = max_steps
        self._index = OpIndex((r, r.tracks()) for r in self.rewriters)
        # the union of the ops tracked, in first-seen order (None when one rewriter tracks every node)
        self._tracks: list[Op] | None = None if self._index.wild else list(dict.fromkeys(self._ops_tracked()))

    def _ops_tracked(self) -> Iterable[Op]:
        for r in self.rewriters:
            yield from r.tracks() or ()

    def tracks(self) -> list[Op] | None:
        """Every op one of the rewriters tracks (None when one of them tracks every node)."""
        return None if self._tracks is None else list(self._tracks)

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Requirements of every rewriter."""
        for r in self.rewriters:
            r.add_requirements(fgraph)

    def summary_children(self) -> list[Rewriter]:
        """The rewriters, in the order they are tried."""
        return list(self.rewriters)

    def __str__(self) -> str:
        # upstream's: SequentialNodeRewriter(a,b)
        return f"{type(self).__name__}({','.join(str(r) for r in self.rewriters)})"

    def _first(self, fgraph: FunctionGraph, node: Term) -> Any:
        for r in self._index.get(node.op):
            out = r.transform(fgraph, node)
            if out is not None and out is not False:
                return out
        return None

    def transform(self, fgraph: FunctionGraph, node: Term) -> Any:
        """The first result of a rewriter at ``node`` (or, applying all, the end of the chain)."""
        if node.__class__ is not Term:
            return False
        out = self._first(fgraph, node)
        if out is None or not self.apply_all_rewrites:
            return False if out is None else out
        result = out
        for _ in range(self.max_steps):
            if isinstance(result, dict):
                return result  # it replaces other nodes too: the chain ends here
            pairs = replacement_pairs(node, result)
            if not pairs:
                return result
            new = pairs[0][1]
            if not new.args:
                return [new]
            nxt = self._first(fgraph, new)
            if nxt is None:
                return [new]
            node, result = new, nxt
        raise RewriteLimitError(
            f"{self.name}: the rewriters kept applying to their own results for {self.max_steps} steps",
            rule=self.name,
            steps=self.max_steps,
        )


class KanrenRelationSub(NodeRewriter):
    """A node rewriter from a miniKanren relation ``relation(in, out)``: the node becomes a related ``out``.

    By default the first ground ``out`` that differs from the node is taken (among the first
    ``results`` answers). ``results_filter(results)`` instead receives the lazy stream of kanren's
    answers and returns the one to use (or None); ``node_filter(node)`` returning False skips a
    node. A result of another dtype or shape than the node is declined.
    """

    def __init__(
        self,
        relation: Callable[[Any, Any], Any],
        results_filter: Callable[[Any], Any] | None = None,
        node_filter: Callable[[Term], Any] | None = None,
        *,
        name: str | None = None,
        ops: Iterable[Any] = (),
        results: int = 4,
    ) -> None:
        from ..rules.relations import RelationRule

        for label, fn in (("results_filter", results_filter), ("node_filter", node_filter)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{label} must be a function, not {fn!r}")
        self.rule = RelationRule(relation, name=name, ops=[as_op(o) for o in ops], results=results)
        self.results_filter = results_filter
        self.node_filter = node_filter
        super().__init__(name or self.rule.name)

    def tracks(self) -> list[Op] | None:
        """The ops given (None: every node)."""
        return list(self.rule.root_ops) or None

    def transform(self, fgraph: FunctionGraph, node: Term) -> Any:
        """Ask kanren for a related term."""
        if self.node_filter is not None and self.node_filter(node) is False:
            return False
        if self.results_filter is None:
            out = self.rule.apply(node)
            outs = [] if out is None else [out]
        else:
            outs = self._filtered(node)
        if not outs:
            return False
        for out in outs:
            if out.__class__ is not Term or out.dtype != node.dtype or out.shape != node.shape:
                return False
        return outs

    def _filtered(self, node: Term) -> list[Term]:
        from kanren import run

        from ..match.unify import to_term, var

        q = var()
        chosen = self.results_filter(run(None, q, self.rule.relation(node, q)))  # type: ignore[misc]
        if chosen is None or chosen is False:
            return []
        try:
            if isinstance(chosen, list):
                return [to_term(c) for c in chosen]
            return [to_term(chosen)]
        except (ValueError, TypeError):
            return []  # an answer with unbound logic variables is not a term


class RuleNodeRewriter(NodeRewriter):
    """A node rewriter from a rule of :mod:`exprgraph.rules` (a Rule, a rule string, or ``term -> term``).

    A result with another dtype or shape is declined, as the term rewriter declines it.
    """

    def __init__(self, rule: Any, name: str | None = None) -> None:
        from ..rules.rule import as_rule

        if isinstance(rule, str):
            from ..rules.textual import rule as text_rule

            rule = text_rule(rule)
        self.rule = rule
        made = as_rule(rule)  # a plain function is a rule without a pattern
        self._apply = made.term_applier()
        self._tracks = list(made.root_ops) or None
        super().__init__(name or made.name)

    def tracks(self) -> list[Op] | None:
        """The root op of the rule's pattern (None: every node)."""
        return self._tracks

    def transform(self, fgraph: FunctionGraph, node: Term) -> Any:
        """The rule's result at ``node``, or False."""
        out = self._apply(node)
        if out is None or out is node:
            return False
        if out.__class__ is not Term:
            from ..core import as_term

            out = as_term(out)
        if out.dtype != node.dtype or out.shape != node.shape:
            return False
        return [out]


def rules_to_rewriters(rules: Any) -> list[RuleNodeRewriter]:
    """One node rewriter per rule of a RuleSet (or an iterable of rules), in order."""
    return [RuleNodeRewriter(r) for r in rules]
