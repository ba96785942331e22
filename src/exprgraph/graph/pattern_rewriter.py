"""PatternNodeRewriter: replace matches of an input pattern by an output pattern.

The rewriter reads a :class:`~exprgraph.rules.Rule`; a rule given in the seed's tuple form (or
with :mod:`exprgraph.match` patterns) is made into one:

- ``(op, sub, ...)`` is an op pattern; ``op`` is an Op, an op name, or a :class:`~exprgraph.match.Var`
  (which binds the op of the matched term);
- a string is a variable (any string: ``"x"``, ``"1"``); the same name must bind the same node;
- numbers, numpy arrays and constant terms match constants of equal value;
- ``{"pattern": sub, "constraint": fn}`` adds a test ``fn(expr)`` or ``fn(fgraph, expr)``;
- our own pattern objects and terms pass through unchanged.

An op pattern with an operand count its op cannot take never matches (as with unification in
the seed), where :class:`~exprgraph.match.OpPattern` itself refuses it at construction.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..core import Op, Term
from ..core.printing import emit
from ..errors import PatternError
from ..match import Choice, Dot, Not, OpPattern, Pattern, Var, Where
from ..match.patterns import arity_fits, format_pattern, pattern_children
from ..rules.rule import Rule
from .interface import NodeRewriter, as_op
from .propagation import as_term_like

if TYPE_CHECKING:
    from .fgraph import FunctionGraph

__all__ = ["PatternNodeRewriter", "to_pattern", "to_template", "seed_text"]

_NUMBERS = (int, float, bool)

#: the pattern that matches nothing (a tuple pattern whose op cannot take its operand count)
NEVER = Not(Dot)


class _FgraphSlot:
    """Holds the graph (and node) being rewritten, for ``lambda fgraph, expr: ...`` constraints and graph handlers."""

    __slots__ = ("fgraph", "node")

    def __init__(self) -> None:
        self.fgraph: Any = None
        self.node: Any = None


def _constraint(fn: Callable, slot: _FgraphSlot) -> Callable[[Any], bool]:
    try:
        nparams = len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        nparams = 1
    if nparams >= 2:
        return lambda e: bool(fn(slot.fgraph, e))
    return lambda e: bool(fn(e))


def _head(head: Any) -> Op | Var:
    """The op of a tuple pattern: an Op, an op name, or a variable standing for the op."""
    if head.__class__ is Var:
        return head
    try:
        return as_op(head)
    except (TypeError, KeyError):
        raise PatternError(f"a tuple pattern starts with an op, not {head!r}") from None


def _check_binding(label: str, check: Callable[[Any], bool]) -> Callable[[dict], bool]:
    """A Where condition: ``check`` on the value bound to ``label``."""
    return lambda b: check(b[label])


def _takes(op: Op | Var, args: Iterable[Any]) -> bool:
    """Whether ``op`` can take that many operands (a variable op always may; a run stretches, fixed operands do not)."""
    return not isinstance(op, Op) or arity_fits(op, args)


def to_pattern(p: Any, _slot: _FgraphSlot | None = None) -> Any:
    """An :mod:`exprgraph.match` pattern from the seed's form (see the module docstring)."""
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
            op = _head(node[0])
            args = [done[id(s)] for s in node[1:]]
            done[id(node)] = OpPattern(op, args) if _takes(op, args) else NEVER
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
                done[id(node)] = Where(Choice(inner, name=label), _check_binding(label, check))
        elif cls is str:
            done[id(node)] = Var(node)
            keep.append(node)
        elif cls is Term and node.op.name == "const" and node.attr.__class__ in _NUMBERS:
            done[id(node)] = node.attr  # constants match by value
            keep.append(node)
        else:  # numbers, numpy arrays (matched by value), terms and our own pattern objects
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
            done[id(node)] = OpPattern(_head(node[0]), [done[id(s)] for s in node[1:]])
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


def _root_constraints(p: Any, slot: _FgraphSlot) -> tuple[Any, list[Callable[[Any], bool]]]:
    """Peel ``{"pattern": ..., "constraint": fn}`` layers off the root: (the inner pattern, the tests)."""
    tests = []
    while p.__class__ is dict and set(p) <= {"pattern", "constraint"} and "pattern" in p:
        if p.get("constraint") is not None:
            tests.append(_constraint(p["constraint"], slot))
        p = p["pattern"]
    return p, tests


def _tuple_rule(
    in_pattern: Any, out_pattern: Any, slot: _FgraphSlot, name: str | None
) -> tuple[Rule, list[Callable[[Any], bool]]]:
    """The Rule of the seed's spelling, and the tests of ``{"pattern": ..., "constraint": fn}`` at its root."""
    root, tests = _root_constraints(in_pattern, slot)
    pattern = to_pattern(root, slot)
    if callable(out_pattern) and not isinstance(out_pattern, (Pattern, Term, Op, tuple)):
        handler = out_pattern

        def result(**b: Any) -> Any:  # the graph handler's own signature: (fgraph, node, bindings)
            return handler(slot.fgraph, slot.node, b)

        result.__name__ = getattr(handler, "__name__", "handler")
        return Rule(pattern, result, name=name), tests
    return Rule(pattern, to_template(out_pattern), name=name), tests


def _seed_parts(p: Any) -> list:
    """The pieces (reversed) of a seed-form pattern in upstream's notation: ``e(truediv, e(mul, ~x, ~y), ~y)``."""
    cls = p.__class__
    if cls is tuple:
        head = p[0]
        name = head.name if isinstance(head, Op) else format_pattern(head) if isinstance(head, Pattern) else str(head)
        out: list = [")"]
        for a in reversed(p[1:]):
            out += [(a, False), ", "]
        out.append(f"e({name}")
        return out
    if cls is str:
        return [f"~{p}"]
    if cls is dict:
        test = p.get("constraint")
        note = "" if test is None else f" [{getattr(test, '__name__', type(test).__name__)}]"
        return [note, (p.get("pattern"), False)]
    if isinstance(p, Pattern):
        return [format_pattern(p)]
    if callable(p) and not isinstance(p, (Term, Op)):
        return [getattr(p, "__name__", type(p).__name__)]  # a graph handler, by its name
    return [str(p)]


def seed_text(in_pattern: Any, out_pattern: Any) -> str:
    """``in -> out`` in upstream's notation for a pattern rewriter given in the seed's form (its default name)."""
    return f"{emit([in_pattern], _seed_parts)} -> {emit([out_pattern], _seed_parts)}"


class PatternNodeRewriter(NodeRewriter):
    """Replace matches of ``in_pattern`` by ``out_pattern``: a node rewriter reading one :class:`~exprgraph.rules.Rule`.

    ``in_pattern`` is a Rule (rule text made into one, ``"x**2 -> x*x"``, then ``out_pattern``
    is left out), or the seed's tuples (``(truediv, (mul, "x", "y"), "y")`` -> ``"x"``) or
    :mod:`exprgraph.match` patterns (``(V.x * V.y) / V.y``), which are made into a Rule
    (:attr:`rule`). A repeated variable must bind the same node; constants match by value;
    commutative ops match in either operand order. ``out_pattern`` may also be a callable
    ``fn(fgraph, node, bindings)`` returning the replacement (None or False to decline). A
    replacement of another dtype or shape than the node is declined, and one the rule's guard
    rejects. Unless ``allow_multiple_clients``, a match is rejected when a node matched inside the
    pattern (not the root) has other clients, because the rewrite would then duplicate it instead
    of removing it.
    """

    def __init__(
        self,
        in_pattern: Any,
        out_pattern: Any = None,
        allow_multiple_clients: bool = False,
        name: str | None = None,
        tracks: Iterable[Any] | None = None,
    ) -> None:
        self._slot = _FgraphSlot()
        if isinstance(in_pattern, Rule) and out_pattern is None:
            self.rule = in_pattern
            self._root_tests: list[Callable[[Any], bool]] = []
        else:
            self.rule, self._root_tests = _tuple_rule(in_pattern, out_pattern, self._slot, name)
        rule = self.rule
        if rule.pattern is None:
            raise PatternError(f"a pattern rewriter needs a rule with a pattern, not {rule.name!r}")
        self.in_pattern = in_pattern
        self.out_pattern = out_pattern if out_pattern is not None else rule.rhs
        self.pattern = rule.pattern
        core = self.pattern.pattern if self.pattern.__class__ is Where else self.pattern
        self.root_op: Op | None = rule.root_op if core is not NEVER else None
        self.compiled = rule.compiled if core is not NEVER else None
        if core is NEVER and in_pattern.__class__ is tuple:
            # the root op cannot take that many operands: a rewriter that never applies
            head = _head(in_pattern[0])
            self.root_op = head if isinstance(head, Op) else None
            self._depth = 0
        elif core.__class__ is not OpPattern:
            raise PatternError(f"the input pattern must be an op pattern, not {format_pattern(self.pattern)}")
        else:
            self._depth = _op_depth(core)
        self.allow_multiple_clients = allow_multiple_clients
        if tracks:
            self._tracks: list[Op] | None = [as_op(t) for t in tracks]
        else:
            self._tracks = [self.root_op] if self.root_op is not None else None
        self.template = rule.template
        if name is None and not isinstance(in_pattern, (Rule, Pattern)):
            name = seed_text(in_pattern, out_pattern)  # upstream's name for an unnamed seed-form rewriter
        super().__init__(name or rule.name)

    def tracks(self) -> list[Op] | None:
        """The root op of the input pattern (or the ops given; None for a variable root op)."""
        return self._tracks

    def match(self, node: Term, fgraph: FunctionGraph | None = None) -> dict[str, Any] | None:
        """The bindings of a match at ``node`` (client checks included when ``fgraph`` is given), or None."""
        compiled = self.compiled
        if compiled is None or node.__class__ is not Term:
            return None
        root_op = self.root_op
        if root_op is not None and node.op is not root_op:
            return None
        self._slot.fgraph = fgraph
        try:
            b = compiled.first(node)
            if b is not None and self._root_tests and not all(t(node) for t in self._root_tests):
                b = None
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
        """The output pattern filled with the bindings, or False (no match, or another dtype or shape)."""
        b = self.match(node, fgraph)
        if b is None:
            return False
        self._slot.fgraph, self._slot.node = fgraph, node
        try:
            out = self.rule.build(b, node)
        finally:
            self._slot.fgraph = self._slot.node = None
        if out is None or out is False:
            return False
        if out.__class__ is not Term:
            out = as_term_like(out, node)
        if out.dtype != node.dtype or out.shape != node.shape:
            return False  # as the seed does: a replacement must have the node's type
        if self.rule.guard is not None and not self.rule.guard(node, out):
            return False
        return [out]

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__  # upstream's: the name, or ``e(op, ~x, ...) -> ...``
