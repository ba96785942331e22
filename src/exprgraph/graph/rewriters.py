"""Node rewriters and graph rewriters.

A :class:`NodeRewriter` looks at one node (a compound term of the graph) and returns False/None
(nothing to do), a list holding the replacement of the node, or a dict ``{old: new}`` that may
replace other nodes too. ``tracks()`` names the ops it cares about, so drivers only offer it
those nodes. Drivers (walking, equilibrium) apply the results through one transaction driver
(:mod:`exprgraph.graph.transaction`).

A :class:`GraphRewriter` transforms a whole :class:`~exprgraph.graph.FunctionGraph`: ``apply``
does the work, ``add_requirements`` attaches the features it needs, ``rewrite`` does both and
returns a profile.

Ready-made node rewriters: :class:`SubstitutionNodeRewriter` (``op1`` -> ``op2``),
:class:`RemovalNodeRewriter` (``op(x)`` -> ``x``), :class:`PatternNodeRewriter` (patterns, in
the seed's tuple form with string variables or as :mod:`exprgraph.match` patterns),
:class:`KanrenRelationSub` (a miniKanren relation) and :class:`RuleNodeRewriter` (a rule of
:mod:`exprgraph.rules`).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..core import Op, Term, get_op
from ..errors import PatternError
from ..match import Choice, OpPattern, Pattern, Var, Where, compile_pattern
from ..match.patterns import format_pattern, pattern_children
from .profile import RewriteProfile, SequenceProfile

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
    "PatternNodeRewriter",
    "KanrenRelationSub",
    "RuleNodeRewriter",
    "rules_to_rewriters",
    "as_op",
    "to_pattern",
    "to_template",
]


def as_op(op: Any) -> Op:
    """An Op from an Op or an op name."""
    if isinstance(op, Op):
        return op
    if isinstance(op, str):
        return get_op(op)
    raise TypeError(f"expected an Op or an op name, not {op!r}")


class Rewriter:
    """Base of node and graph rewriters: a name and the features a rewriter needs."""

    name: str = ""

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach the features this rewriter needs to ``fgraph`` (none by default)."""

    def __str__(self) -> str:
        return self.name or type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>" if self.name else f"<{type(self).__name__}>"


class NodeRewriter(Rewriter):
    """Rewrites one node at a time; subclasses define :meth:`transform` (and :meth:`tracks`)."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name or type(self).__name__

    def tracks(self) -> list[Op] | None:
        """The ops of the nodes this rewriter wants (None: every node)."""
        return None

    def transform(self, fgraph: FunctionGraph, node: Term) -> Any:
        """False/None, ``[replacement]``, or ``{old: new, ...}`` for ``node`` of ``fgraph``."""
        raise NotImplementedError(f"{type(self).__name__} must define transform(fgraph, node)")


class FromFunctionNodeRewriter(NodeRewriter):
    """A node rewriter from a function ``fn(fgraph, node)`` (made by :func:`node_rewriter`)."""

    def __init__(self, fn: Callable[[FunctionGraph, Term], Any], tracks: Iterable[Any] | None, name: str) -> None:
        super().__init__(name)
        self.fn = fn
        self._tracks = None if tracks is None else [as_op(o) for o in tracks]
        self.__doc__ = fn.__doc__

    def tracks(self) -> list[Op] | None:
        """The ops given to the decorator."""
        return self._tracks

    def transform(self, fgraph: FunctionGraph, node: Term) -> Any:
        """Call the function."""
        return self.fn(fgraph, node)

    def __call__(self, fgraph: FunctionGraph, node: Term) -> Any:
        return self.fn(fgraph, node)


def node_rewriter(
    tracks: Iterable[Any] | None, *, name: str | None = None
) -> Callable[[Callable[[FunctionGraph, Term], Any]], FromFunctionNodeRewriter]:
    """Decorator: ``@node_rewriter([truediv])`` makes a node rewriter of ``fn(fgraph, node)``."""
    if callable(tracks) and not isinstance(tracks, (Op, list, tuple)):
        raise TypeError("node_rewriter takes the tracked ops first: @node_rewriter([op, ...]) or @node_rewriter(None)")

    def deco(fn: Callable[[FunctionGraph, Term], Any]) -> FromFunctionNodeRewriter:
        return FromFunctionNodeRewriter(fn, tracks, name or fn.__name__)

    return deco


class GraphRewriter(Rewriter):
    """Rewrites a whole graph: define :meth:`apply`; :meth:`rewrite` adds requirements, applies, profiles."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name or type(self).__name__

    def apply(self, fgraph: FunctionGraph) -> RewriteProfile | None:
        """Transform ``fgraph`` in place; may return a profile."""
        raise NotImplementedError(f"{type(self).__name__} must define apply(fgraph)")

    def rewrite(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> RewriteProfile:
        """``add_requirements`` then ``apply``; returns the profile (a basic one when ``apply`` gives none)."""
        self.add_requirements(fgraph)
        return self.timed_apply(fgraph, *args, **kwargs)

    def timed_apply(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> RewriteProfile:
        """``apply`` with timing and sizes filled in."""
        before = fgraph.node_count
        start = time.perf_counter()
        prof = self.apply(fgraph, *args, **kwargs)
        elapsed = time.perf_counter() - start
        if not isinstance(prof, RewriteProfile):
            prof = RewriteProfile(self.name or type(self).__name__, type(self).__name__, nodes_before=before)
        prof.time = max(prof.time, elapsed)
        prof.nodes_after = fgraph.node_count
        return prof

    def __call__(self, fgraph: FunctionGraph) -> RewriteProfile:
        return self.rewrite(fgraph)


class FromFunctionGraphRewriter(GraphRewriter):
    """A graph rewriter from a function ``fn(fgraph)`` (made by :func:`graph_rewriter`)."""

    def __init__(
        self, fn: Callable[[FunctionGraph], Any], requirements: Iterable[Callable] = (), name: str = ""
    ) -> None:
        super().__init__(name or fn.__name__)
        self.fn = fn
        self.requirements = tuple(requirements)
        self.__doc__ = fn.__doc__

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Call each requirement function with the graph."""
        for req in self.requirements:
            req(fgraph)

    def apply(self, fgraph: FunctionGraph) -> RewriteProfile | None:
        """Call the function."""
        out = self.fn(fgraph)
        return out if isinstance(out, RewriteProfile) else None


def graph_rewriter(
    fn: Callable[[FunctionGraph], Any] | None = None, *, requirements: Iterable[Callable] = (), name: str = ""
) -> Any:
    """Decorator: ``@graph_rewriter`` makes a graph rewriter of ``fn(fgraph)``."""

    def deco(f: Callable[[FunctionGraph], Any]) -> FromFunctionGraphRewriter:
        return FromFunctionGraphRewriter(f, requirements, name)

    return deco(fn) if fn is not None else deco


class SequentialGraphRewriter(GraphRewriter):
    """Apply graph rewriters in order (node rewriters are walked with ``in2out``)."""

    def __init__(
        self, *rewriters: Rewriter, failure_callback: Any = None, name: str | None = None, verbose: bool = False
    ) -> None:
        super().__init__(name or "SequentialGraphRewriter")
        if len(rewriters) == 1 and isinstance(rewriters[0], (list, tuple)):
            rewriters = tuple(rewriters[0])
        from .walking import in2out

        self.rewriters: list[GraphRewriter] = [
            in2out(r, failure_callback=failure_callback or "raise", verbose=verbose)
            if isinstance(r, NodeRewriter)
            else r
            for r in rewriters
        ]
        for r in self.rewriters:
            if not isinstance(r, GraphRewriter):
                raise TypeError(f"SequentialGraphRewriter takes rewriters, not {r!r}")
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


# -- patterns in the seed's tuple form ----------------------------------------------------------------------

_NUMBERS = (int, float, bool)


class _FgraphSlot:
    """Holds the graph being matched, for constraints written ``lambda fgraph, expr: ...``."""

    __slots__ = ("fgraph",)

    def __init__(self) -> None:
        self.fgraph: Any = None


def _constraint(fn: Callable, slot: _FgraphSlot) -> Callable[[Any], bool]:
    try:
        nparams = len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        nparams = 1
    if nparams >= 2:
        return lambda e: bool(fn(slot.fgraph, e))
    return lambda e: bool(fn(e))


def to_pattern(p: Any, _slot: _FgraphSlot | None = None) -> Any:
    """An :mod:`exprgraph.match` pattern from the seed's form.

    ``(op, sub, ...)`` is an op pattern (``op`` an Op or an op name), a string is a variable
    (the same name must match the same node), a number or a constant term matches constants of
    equal value, ``{"pattern": sub, "constraint": fn}`` adds a test ``fn(expr)`` (or
    ``fn(fgraph, expr)``), and our own pattern objects and terms pass through unchanged.
    """
    slot = _slot if _slot is not None else _FgraphSlot()
    done: dict[int, Any] = {}
    keep: list[Any] = []
    stack: list[tuple[Any, bool]] = [(p, False)]
    hidden = 0
    while stack:
        node, expanded = stack.pop()
        cls = node.__class__
        if cls is tuple:
            if not node:
                raise PatternError("an empty tuple is not a pattern")
            if not expanded:
                keep.append(node)
                stack.append((node, True))
                stack.extend((s, False) for s in node[1:])
                continue
            head = node[0]
            try:
                op = as_op(head)
            except (TypeError, KeyError):
                raise PatternError(f"a tuple pattern starts with an op, not {head!r}") from None
            done[id(node)] = OpPattern(op, [done[id(s)] for s in node[1:]])
        elif cls is dict:
            if set(node) - {"pattern", "constraint"} or "pattern" not in node:
                raise PatternError(f"a dict pattern has the keys 'pattern' and 'constraint', not {sorted(node)}")
            if not expanded:
                keep.append(node)
                stack.append((node, True))
                stack.append((node["pattern"], False))
                continue
            inner = done[id(node["pattern"])]
            test = node.get("constraint")
            if test is None:
                done[id(node)] = inner
            elif inner.__class__ is Var:
                done[id(node)] = Var(inner.name, (*inner.restrictions, _constraint(test, slot)))
            else:
                hidden += 1
                label = f"_constrained_{hidden}"
                check = _constraint(test, slot)
                done[id(node)] = Where(Choice(inner, name=label), lambda b, _l=label, _c=check: _c(b[_l]))
        elif cls is str:
            done[id(node)] = Var(node)
            keep.append(node)
        elif cls is Term and node.op.name == "const" and node.attr.__class__ in _NUMBERS:
            done[id(node)] = node.attr  # constants match by value
            keep.append(node)
        else:
            done[id(node)] = node
            keep.append(node)
    return done[id(p)]


def to_template(p: Any) -> Any:
    """A right-hand side from the seed's form: tuples build op patterns, strings are variables."""
    if p.__class__ is str:
        return Var(p)
    if p.__class__ is not tuple:
        return p
    done: dict[int, Any] = {}
    keep: list[Any] = []
    stack: list[tuple[Any, bool]] = [(p, False)]
    while stack:
        node, expanded = stack.pop()
        if node.__class__ is tuple:
            if not expanded:
                keep.append(node)
                stack.append((node, True))
                stack.extend((s, False) for s in node[1:])
                continue
            done[id(node)] = OpPattern(as_op(node[0]), [done[id(s)] for s in node[1:]])
        else:
            done[id(node)] = Var(node) if node.__class__ is str else node
            keep.append(node)
    return done[id(p)]


def _op_depth(p: Any) -> int:
    """Nesting depth of op patterns (1 for ``(op, 'x')``)."""
    best = 0
    stack = [(p, 0)]
    while stack:
        q, d = stack.pop()
        if q.__class__ is OpPattern:
            d += 1
            best = max(best, d)
        for c in pattern_children(q):
            if isinstance(c, (Pattern, tuple, list)):
                stack.append((c, d))
    return best


class PatternNodeRewriter(NodeRewriter):
    """Replace matches of ``in_pattern`` by ``out_pattern``.

    Patterns are the seed's tuples (``(truediv, (mul, "x", "y"), "y")`` -> ``"x"``) or
    :mod:`exprgraph.match` patterns (``(V.x * V.y) / V.y``). A repeated variable must bind the
    same node; constants match by value; commutative ops match in either operand order.
    ``out_pattern`` may also be a callable ``fn(fgraph, node, bindings)`` returning the
    replacement (None or False to decline). Unless ``allow_multiple_clients``, a match is
    rejected when a node matched inside the pattern (not the root) has other clients, because
    the rewrite would then duplicate it instead of removing it.
    """

    def __init__(
        self,
        in_pattern: Any,
        out_pattern: Any,
        allow_multiple_clients: bool = False,
        name: str | None = None,
        tracks: Iterable[Any] | None = None,
    ) -> None:
        self._slot = _FgraphSlot()
        self.in_pattern = in_pattern
        self.out_pattern = out_pattern
        self.pattern = to_pattern(in_pattern, self._slot)
        core = self.pattern.pattern if self.pattern.__class__ is Where else self.pattern
        if core.__class__ is not OpPattern:
            raise PatternError(f"the input pattern must be an op pattern, not {format_pattern(self.pattern)}")
        self.root_op: Op = core.op
        self.compiled = compile_pattern(self.pattern)
        self.allow_multiple_clients = allow_multiple_clients
        self._depth = _op_depth(core)
        self._tracks = [as_op(t) for t in tracks] if tracks is not None else [self.root_op]
        if callable(out_pattern) and not isinstance(out_pattern, (Pattern, Term, Op, tuple)):
            self.handler: Callable | None = out_pattern
            self.template = None
            shown = getattr(out_pattern, "__name__", "handler")
        else:
            from ..rules.ruleset import Template

            self.handler = None
            tmpl = to_template(out_pattern)
            self.template = Template(tmpl)
            shown = format_pattern(tmpl)
        super().__init__(name or f"{format_pattern(self.pattern)} -> {shown}")

    def tracks(self) -> list[Op]:
        """The root op of the input pattern (or the ops given)."""
        return self._tracks

    def match(self, node: Term, fgraph: FunctionGraph | None = None) -> dict[str, Any] | None:
        """The bindings of a match at ``node`` (client checks included when ``fgraph`` is given), or None."""
        if node.__class__ is not Term or node.op is not self.root_op:
            return None
        self._slot.fgraph = fgraph
        try:
            b = self.compiled.first(node)
        finally:
            self._slot.fgraph = None
        if b is None:
            return None
        if fgraph is not None and not self.allow_multiple_clients and self._depth > 1:
            if self._shared_inside(fgraph, node, b):
                return None
        return b

    def _shared_inside(self, fgraph: FunctionGraph, node: Term, b: dict) -> bool:
        bound = {id(v) for v in b.values() if v.__class__ is Term}
        limit = self._depth - 1
        stack = [(node, 0)]
        while stack:
            t, d = stack.pop()
            if d >= limit:
                continue
            for a in t.args:
                if a.args and id(a) not in bound:
                    if fgraph.client_count(a) > 1:
                        return True
                    stack.append((a, d + 1))
        return False

    def transform(self, fgraph: FunctionGraph, node: Term) -> Any:
        """The output pattern filled with the bindings, or False."""
        b = self.match(node, fgraph)
        if b is None:
            return False
        if self.handler is not None:
            out = self.handler(fgraph, node, b)
            if out is None or out is False:
                return False
            return [out]
        assert self.template is not None
        return [self.template.fill(b, node)]


class KanrenRelationSub(NodeRewriter):
    """A node rewriter from a miniKanren relation ``relation(in, out)``: the node becomes the first ``out``."""

    def __init__(
        self, relation: Callable[[Any, Any], Any], name: str | None = None, ops: Iterable[Any] = (), results: int = 4
    ) -> None:
        from ..rules.relations import RelationRule

        self.rule = RelationRule(relation, name=name, ops=[as_op(o) for o in ops], results=results)
        super().__init__(name or self.rule.name)

    def tracks(self) -> list[Op] | None:
        """The ops given (None: every node)."""
        return list(self.rule.root_ops) or None

    def transform(self, fgraph: FunctionGraph, node: Term) -> Any:
        """Ask kanren for a related term."""
        out = self.rule.apply(node)
        if out is None or out.dtype != node.dtype or out.shape != node.shape:
            return False
        return [out]


class RuleNodeRewriter(NodeRewriter):
    """A node rewriter from a rule of :mod:`exprgraph.rules` (a Rule, a rule string, or ``term -> term``).

    A result with another dtype or shape is declined, as the term rewriter declines it.
    """

    def __init__(self, rule: Any, name: str | None = None) -> None:
        from ..rules.ruleset import Rule, rule_name

        if isinstance(rule, str):
            from ..rules.textual import rule as text_rule

            rule = text_rule(rule)
        self.rule = rule
        if isinstance(rule, Rule):
            self._apply = rule.term_applier()
            root = rule.root_op
            self._tracks = [root] if root is not None else None
        else:
            apply = getattr(rule, "apply", None)
            if apply is None:

                def apply(e: Term, _fn: Callable = rule) -> Any:
                    out = _fn(e)
                    return None if out is e else out

            self._apply = apply
            roots = tuple(getattr(rule, "root_ops", ()))
            self._tracks = list(roots) or None
        super().__init__(name or rule_name(rule))

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
