"""Pattern nodes: variables, wildcards, alternatives, negation, segments and op patterns.

A pattern is any Python value. Plain values match by ``==``; tuples, lists and dicts match
element-wise; terms and :class:`~exprgraph.core.Expression` nodes match structurally. The classes
here add the holes: :class:`Var` (a named hole), :data:`Dot` (an anonymous one), :class:`Choice`,
:class:`Not`, :class:`Where`, and the run-matching :class:`Star`, :class:`Plus` and :class:`Segment`
that may stand for several children of a sequence or of a variadic op.

Patterns over terms are written with the term operators: ``V.x * 1``, ``V.x / V.x``,
``P.sin(V.x) ** 2`` (``V`` makes variables, ``P`` makes op patterns for any op of the table).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..core import Op, Term, get_op
from ..core.operators import OperatorMethods, install_operators
from ..core.printing import emit
from ..errors import PatternError

__all__ = [
    "Pattern",
    "Var",
    "Dot",
    "Choice",
    "Not",
    "Where",
    "Star",
    "Plus",
    "Segment",
    "OpPattern",
    "V",
    "P",
    "pattern_children",
]

#: ``pattern >> rhs`` builds a rule; rules sit above match: :mod:`exprgraph.rules.rule` sets this to
#: its ``Rule`` class when it is imported (``import exprgraph`` always does)
rule_maker: Callable[[Any, Any], Any] | None = None


class Pattern(OperatorMethods["OpPattern"]):
    """Base class of pattern nodes; Python operators on patterns build op patterns."""

    __slots__ = ("__weakref__",)

    # -- operators build OpPatterns, like the term operators build terms (binary ones set below) --

    def __neg__(self) -> OpPattern:
        return OpPattern("neg", (self,))

    def __abs__(self) -> OpPattern:
        return OpPattern("abs", (self,))

    def __invert__(self) -> OpPattern:
        return OpPattern("logical_not", (self,))

    def __rshift__(self, rhs: Any) -> Any:
        """``pattern >> rhs`` is a rule (``V.x * 1 >> V.x``); ``rhs`` is a template or a handler."""
        if rule_maker is None:
            raise TypeError("pattern >> rhs builds a rule: import exprgraph.rules first")
        return rule_maker(self, rhs)

    def __bool__(self) -> bool:
        return True

    def __str__(self) -> str:
        return format_pattern(self)

    def __repr__(self) -> str:
        return format_pattern(self)


def _operators(name: str) -> tuple[Callable[..., OpPattern], Callable[..., OpPattern]]:
    """The forward and reflected operator methods building ``name`` op patterns."""

    def forward(self: Pattern, other: Any) -> OpPattern:
        return OpPattern(name, (self, other))

    def reflected(self: Pattern, other: Any) -> OpPattern:
        return OpPattern(name, (other, self))

    return forward, reflected


# ``p + q`` is OpPattern("add", (p, q)), and so on; ``<`` and friends have no reflected form
install_operators(Pattern, _operators)


def _check_name(name: Any, what: str) -> None:
    # any string names a variable (PyTensor's tests use "1", "2"); ``V.x`` spells the identifiers
    if not isinstance(name, str):
        raise PatternError(f"{what} name must be a string, not {name!r}")


class Var(Pattern):
    """A named hole: matches one value that passes every restriction; a repeated name must match equal values.

    Called, a variable stands for an op: ``V.f(V.x)`` matches a term of any op with one operand
    and binds ``f`` to the op (``attr=`` matches the op's attribute, as in :class:`OpPattern`).
    """

    __slots__ = ("name", "restrictions")

    def __init__(self, name: str, restrictions: Iterable[Callable[[Any], bool]] = ()) -> None:
        _check_name(name, "a variable")
        self.name = name
        self.restrictions = tuple(restrictions)
        for r in self.restrictions:
            if not callable(r):
                raise PatternError(f"restrictions of Var({name!r}) must be callables, not {r!r}")

    def __call__(self, *args: Any, attr: Any = None) -> OpPattern:
        """An op pattern whose op is this variable: ``V.f(V.x)``."""
        return OpPattern(self, args, attr)


class _DotType(Pattern):
    """The anonymous wildcard: matches any one value and binds nothing."""

    __slots__ = ()
    _instance: _DotType | None = None

    def __new__(cls) -> _DotType:
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    def __call__(self) -> _DotType:
        return self

    def __reduce__(self) -> str:
        return "Dot"


#: the anonymous wildcard (``Dot`` and ``Dot()`` are the same object)
Dot = _DotType()


class Choice(Pattern):
    """Alternatives tried in order; a later failure resumes with the next one. ``name`` binds the value."""

    __slots__ = ("alternatives", "name")

    def __init__(self, *alternatives: Any, name: str | None = None) -> None:
        if not alternatives:
            raise PatternError("Choice needs at least one alternative")
        if name is not None:
            _check_name(name, "a Choice")
        self.alternatives = alternatives
        self.name = name


class Not(Pattern):
    """Matches any value the inner pattern does not match (under the bindings so far); binds nothing."""

    __slots__ = ("pattern",)

    def __init__(self, pattern: Any) -> None:
        self.pattern = pattern


class Where(Pattern):
    """Matches like ``pattern``, then keeps only matches whose bindings satisfy ``test(bindings)``."""

    __slots__ = ("pattern", "test")

    def __init__(self, pattern: Any, test: Callable[[dict[str, Any]], bool]) -> None:
        if not callable(test):
            raise PatternError(f"Where needs a callable test, not {test!r}")
        self.pattern = pattern
        self.test = test


class Star(Pattern):
    """Zero or more consecutive children each matching ``pattern`` (shortest run first unless ``greedy``).

    ``name`` binds the run (a tuple, or a substring of a string); names listed in ``accumulate``
    are bound afresh for each child and collected into tuples; other names must agree across
    the run.
    """

    __slots__ = ("pattern", "name", "accumulate", "greedy", "min_count")

    def __init__(
        self, pattern: Any, name: str | None = None, accumulate: Iterable[str] = (), greedy: bool = False
    ) -> None:
        if name is not None:
            _check_name(name, "a Star")
        self.pattern = pattern
        self.name = name
        self.accumulate = tuple(accumulate)
        for a in self.accumulate:
            _check_name(a, "an accumulated")
        self.greedy = bool(greedy)
        self.min_count = 0


class Plus(Star):
    """One or more consecutive children each matching ``pattern`` (see :class:`Star`)."""

    __slots__ = ()

    def __init__(
        self, pattern: Any, name: str | None = None, accumulate: Iterable[str] = (), greedy: bool = False
    ) -> None:
        super().__init__(pattern, name, accumulate, greedy)
        self.min_count = 1


class Segment(Star):
    """A named run of any children (``Star(Dot, name)``); a name seen again must match the same run."""

    __slots__ = ()

    name: str  # always named

    def __init__(self, name: str, greedy: bool = False) -> None:
        _check_name(name, "a Segment")
        super().__init__(Dot, name, (), greedy)


class OpPattern(Pattern):
    """Matches a term of op ``op`` whose operands match ``args`` (and whose attr matches ``attr``).

    Commutative ops match their operands in any order; associative ops regroup or flatten
    operands when the counts differ (see :func:`exprgraph.match.match`).

    ``op`` may be a :class:`Var`: the pattern then matches a term of any op taking that many
    operands, binds the variable to the op, and matches the operands as that op's pattern would.
    """

    __slots__ = ("op", "args", "attr", "has_star", "branchy", "arg_ops", "_compiled", "_by_op")

    op: Op | Var  # a Var binds the op (see for_op)
    _compiled: Any  # the compiled matcher, made on first use
    _by_op: dict[Op, OpPattern | None] | None

    def __init__(self, op: Op | str | Var, args: Iterable[Any], attr: Any = None) -> None:
        if isinstance(op, str):
            try:
                op = get_op(op)
            except KeyError:
                raise PatternError(f"no op named {op!r}") from None
        args = tuple(args)
        self.args = args
        self.has_star = any(isinstance(a, Star) for a in args)
        self._compiled = None
        #: per operand, for pruning operand orders: None (a hole: anything goes), the op an op
        #: pattern needs, or False (ask the full test)
        self.arg_ops = tuple(
            (a.op if a.op.__class__ is not Var else None)
            if a.__class__ is OpPattern
            else (None if a.__class__ is Var or a.__class__ is _DotType else False)
            for a in args
        )
        if op.__class__ is Var:
            # a variable op: the operands are matched by the pattern of the op it binds (see for_op)
            self.op = op
            self.attr = attr
            self.branchy = True
            self._by_op = {}
            return
        if not isinstance(op, Op):
            raise PatternError(f"OpPattern needs an Op, an op name or a Var, not {op!r}")
        self.op = op
        self._by_op = None
        if attr is not None and not isinstance(attr, Pattern) and op.attr_key is not None:
            attr = op.attr_key(attr)
        self.attr = attr
        #: whether matching this node can leave alternatives behind
        self.branchy = op.commutative or op.associative or self.has_star
        lo, hi = op.arity
        if not self.has_star and (len(args) < lo or (hi is not None and len(args) > hi)):
            want = str(lo) if lo == hi else f"{lo}..{hi if hi is not None else ''}"
            raise PatternError(f"{op.name} takes {want} operands, the pattern has {len(args)}")
        if not arity_fits(op, args):
            raise PatternError(f"{op.name} takes at most {hi} operands, the pattern needs {min_operands(args)}")

    def for_op(self, op: Op) -> OpPattern | None:
        """For a variable op: this pattern with ``op`` in its place (None when ``op`` cannot take the operands)."""
        cache = self._by_op
        if cache is None:
            return self if op is self.op else None
        if op in cache:
            return cache[op]
        try:
            found: OpPattern | None = OpPattern(op, self.args, self.attr)
        except (PatternError, TypeError, ValueError):
            found = None
        if len(cache) < 256:  # bounded: ops are few, but registering ops in a loop must not leak
            cache[op] = found
        return found


def min_operands(args: Iterable[Any]) -> int:
    """The fewest operands a term must have to match ``args`` (a run counts its minimum: 0, or 1 for Plus)."""
    return sum(a.min_count if isinstance(a, Star) else 1 for a in args)


def arity_fits(op: Op, args: Iterable[Any]) -> bool:
    """Whether a term of ``op`` can have operands matching ``args`` (runs stretch; fixed operands do not)."""
    args = tuple(args)
    lo, hi = op.arity
    if any(isinstance(a, Star) for a in args):
        return hi is None or min_operands(args) <= hi  # a run can supply any missing operands
    return lo <= len(args) and (hi is None or len(args) <= hi)


class _VarFactory:
    """``V.x`` is ``Var("x")``; ``V("x", pred, ...)`` adds restrictions."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Var:
        if name.startswith("__"):
            raise AttributeError(name)
        return Var(name)

    def __call__(self, name: str, *restrictions: Callable[[Any], bool]) -> Var:
        return Var(name, restrictions)


class _OpFactory:
    """``P.sin(V.x)`` is ``OpPattern("sin", (V.x,))``; keyword ``attr`` or the op's attr name sets the attr."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Callable[..., OpPattern]:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            op = get_op(name)
        except KeyError:
            raise AttributeError(f"no op named {name!r}") from None

        def build(*args: Any, attr: Any = None, **kwargs: Any) -> OpPattern:
            if kwargs:
                if op.attr_name is None or set(kwargs) != {op.attr_name}:
                    raise PatternError(f"{op.name} takes no keyword arguments {sorted(kwargs)}")
                attr = kwargs[op.attr_name]
            return OpPattern(op, args, attr)

        build.__name__ = name
        return build


#: variable factory: ``V.x`` is ``Var("x")``
V = _VarFactory()
#: op-pattern factory: ``P.exp(V.x)`` matches ``exp`` terms
P = _OpFactory()


def pattern_children(p: Any) -> tuple:
    """The sub-patterns of ``p`` (operands, alternatives, elements, values), for analyses and printing."""
    cls = p.__class__
    if cls is OpPattern:
        return (*p.args, p.attr) if isinstance(p.attr, Pattern) else p.args
    if cls is Var or cls is _DotType:
        return ()
    if cls is Choice:
        return p.alternatives
    if cls is Not or cls is Where or isinstance(p, Star):
        return (p.pattern,)
    if cls is tuple or cls is list or isinstance(p, tuple):
        return tuple(p)
    if cls is dict:
        return tuple(p.values())
    return ()


# -- printing (iterative: patterns can be as deep as the terms they match) ---------------------------


def _format_leaf(p: Any) -> str | None:
    cls = p.__class__
    if cls is Var:
        if p.restrictions:
            return f"Var({p.name!r}, restrictions=...)"
        return f"V.{p.name}" if p.name.isidentifier() else f"Var({p.name!r})"
    if cls is _DotType:
        return "Dot"
    if cls is Segment:
        return f"Segment({p.name!r})"
    if cls is Term:
        if p.args and p.size > 50:
            return f"<{p.op.name} term of {p.size} nodes>"
        return str(p)
    if isinstance(p, Pattern) or cls in (tuple, list, dict):
        return None
    return repr(p)


def _pieces(node: Any) -> tuple[str, tuple, str]:
    """Opening text, children and closing text of a compound pattern node."""
    cls = node.__class__
    kids = pattern_children(node)
    if cls is OpPattern:
        if node.op.__class__ is Var:  # a variable op prints as its variable: V.f(V.x)
            head, attr_name = format_pattern(node.op), "attr"
        else:
            head, attr_name = node.op.name, node.op.attr_name or "attr"
        if isinstance(node.attr, Pattern):
            return f"{head}(", kids[:-1], f", {attr_name}=" + format_pattern(node.attr) + ")"
        tail = f", {attr_name}={node.attr!r})" if node.attr is not None else ")"
        return f"{head}(", kids, tail
    if cls is Choice:
        return "Choice(", kids, f", name={node.name!r})" if node.name else ")"
    if cls is Not:
        return "Not(", kids, ")"
    if cls is Where:
        return "Where(", kids, f", {getattr(node.test, '__name__', 'test')})"
    if isinstance(node, Star):
        extra = "".join(
            [
                f", name={node.name!r}" if node.name else "",
                f", accumulate={node.accumulate!r}" if node.accumulate else "",
                ", greedy=True" if node.greedy else "",
            ]
        )
        return f"{type(node).__name__}(", kids, extra + ")"
    if cls is list:
        return "[", kids, "]"
    return "(", kids, ",)" if len(kids) == 1 else ")"


def _pattern_parts(item: Any) -> list:
    """Reversed pieces of one pattern node (strings, and ``(node, False)`` pairs): the emitter's table."""
    leaf = _format_leaf(item)
    if leaf is not None:
        return [leaf]
    if item.__class__ is dict:
        out: list[Any] = ["}"]
        pairs = list(item.items())
        for i in range(len(pairs) - 1, -1, -1):
            k, v = pairs[i]
            out += [(v, False), (", " if i else "") + f"{k!r}: "]
        out.append("{")
        return out
    opening, kids, closing = _pieces(item)
    out = [closing]
    for i in range(len(kids) - 1, -1, -1):
        kid = kids[i]
        leaf = _format_leaf(kid)
        out.append((kid, False) if leaf is None else leaf)  # a leaf's text goes straight out
        if i:
            out.append(", ")
    out.append(opening)
    return out


def format_pattern(p: Any) -> str:
    """A readable one-line rendering of a pattern (``mul(V.x, 1)``), in time linear in its size.

    Printed by the printers' one emitter (:func:`exprgraph.core.printing.emit`) from this table.
    """
    leaf = _format_leaf(p)
    return leaf if leaf is not None else emit([p], _pattern_parts)
