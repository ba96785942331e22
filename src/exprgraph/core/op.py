"""Op: one entry of the op table, and the registry every layer reads.

An op declares everything the layers need to know about it: arity, dtype/shape rule, algebraic
properties, numpy evaluation, printing (notation, symbol, precedence, associativity), C rendering
and a slot for its gradient rule. Adding an op is one :func:`register_op` call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import DTypeError
from .term import REGISTRY, Term

__all__ = [
    "Op",
    "register_op",
    "get_op",
    "ops",
    "PREC_OR",
    "PREC_AND",
    "PREC_NOT",
    "PREC_CMP",
    "PREC_ADD",
    "PREC_MUL",
    "PREC_UNARY",
    "PREC_POW",
    "PREC_ATOM",
]

# precedence levels shared by the printer and the parser (Python's order, loosest first)
PREC_OR = 1
PREC_AND = 2
PREC_NOT = 3
PREC_CMP = 4
PREC_ADD = 6
PREC_MUL = 7
PREC_UNARY = 8
PREC_POW = 9
PREC_ATOM = 10

#: notations: how an op is printed and parsed (``index``: ``T[i, j]``, the first operand indexed by the rest)
NOTATIONS = ("leaf", "infix", "prefix", "call", "index")

Infer = Callable[[tuple, Any], tuple[str, tuple]]


class Op:
    """An operation of the op table; calling it builds a term (``ops.add(x, 1)``)."""

    __slots__ = (
        "name",
        "arity",
        "infer",
        "impl",
        "ufunc",
        "commutative",
        "associative",
        "identity",
        "absorbing",
        "idempotent",
        "notation",
        "symbol",
        "precedence",
        "assoc",
        "attr_name",
        "attr_key",
        "relational",
        "aliases",
        "c_render",
        "llvm",
        "grad",
        "doc",
        "table",
        "batch_attr",
    )

    def __init__(
        self,
        name: str,
        arity: int | tuple[int, int | None],
        infer: Infer,
        *,
        impl: Callable[..., Any] | None = None,
        ufunc: Any = None,
        commutative: bool = False,
        associative: bool = False,
        identity: Any = None,
        absorbing: Any = None,
        idempotent: bool = False,
        notation: str = "call",
        symbol: str | None = None,
        precedence: int = PREC_ATOM,
        assoc: str | None = None,
        attr_name: str | None = None,
        attr_key: Callable[[Any], Any] | None = None,
        relational: bool = False,
        aliases: tuple[str, ...] = (),
        c_render: str | Callable[..., str] | None = None,
        llvm: dict[str, str] | None = None,
        grad: Callable[..., Any] | None = None,
        batch_attr: Callable[[Any, int, int], Any] | None = None,
        doc: str = "",
    ) -> None:
        if notation not in NOTATIONS:
            raise ValueError(f"notation must be one of {NOTATIONS}, not {notation!r}")
        if not name.isidentifier():
            raise ValueError(f"op name {name!r} must be an identifier")
        self.name = name
        #: (min, max) operand count; max None means variadic
        self.arity = (arity, arity) if isinstance(arity, int) else arity
        #: ``infer(args, attr) -> (dtype, shape)``; raises ShapeError/DTypeError on bad operands
        self.infer = infer
        #: ``impl(*values, attr=attr)`` numpy evaluation (None: use ``ufunc``)
        self.impl = impl
        #: a numpy ufunc, so evaluation can write into a dead operand's buffer
        self.ufunc = ufunc
        self.commutative = commutative
        self.associative = associative
        self.identity = identity
        self.absorbing = absorbing
        self.idempotent = idempotent
        self.notation = notation
        self.symbol = symbol if symbol is not None else name
        self.precedence = precedence if notation in ("infix", "prefix") else PREC_ATOM
        #: "left", "right" or None (non-associative: chained use needs parentheses)
        self.assoc = assoc
        #: keyword under which ``attr`` is printed and parsed (``sum(A, axis=0)``)
        self.attr_name = attr_name
        #: maps attr to its intern key (constants intern by dtype and exact bits)
        self.attr_key = attr_key
        self.relational = relational
        self.aliases = aliases
        #: C expression template (``"sin({0})"``) or function of the operand strings
        self.c_render = c_render
        #: LLVM IR instruction per compute dtype (``{"float64": "fadd double {0}, {1}"}``); operands
        #: arrive cast to that dtype, ``{t}`` is its LLVM type (see exprgraph.compile.llvm_emit)
        self.llvm = llvm
        #: gradient rule ``grad(node, upstream) -> tuple of per-argument contributions``
        self.grad = grad
        #: ``batch_attr(attr, ndim, value_ndim)``: the attr to evaluate with when the operand's value
        #: carries leading batch axes (many parameter sets) beyond the term's ``ndim`` axes
        self.batch_attr = batch_attr
        self.doc = doc
        #: intern table of this op's live terms (see Term.__new__)
        self.table: dict = {}

    def check(self, args: tuple, attr: Any) -> tuple[str, tuple]:
        """Validate the operands and return the result's ``(dtype, shape)``."""
        lo, hi = self.arity
        n = len(args)
        if n < lo or (hi is not None and n > hi):
            want = str(lo) if lo == hi else f"{lo}..{hi if hi is not None else ''}"
            raise TypeError(f"{self.name} takes {want} operands, got {n}")
        for a in args:
            if a.__class__ is not Term:
                raise TypeError(f"operands of {self.name} must be terms, got {type(a).__name__}")
        if attr is not None and self.attr_name is None and self.notation != "leaf":
            raise TypeError(f"{self.name} takes no attribute, got {attr!r}")
        return self.infer(args, attr)

    def __call__(self, *args: Any, attr: Any = None, **kwargs: Any) -> Term:
        """Build the term ``self(*args)``; Python numbers are wrapped as constants."""
        if kwargs:
            if self.attr_name is None or set(kwargs) != {self.attr_name}:
                raise TypeError(f"{self.name} takes no keyword arguments {sorted(kwargs)}")
            attr = kwargs[self.attr_name]
        if attr is not None and self.attr_name is not None and self.attr_key is not None:
            attr = self.attr_key(attr)
        for a in args:
            if a.__class__ is not Term:
                args = tuple(a if a.__class__ is Term else as_term(a) for a in args)
                break
        return Term(self, args, attr)

    def __repr__(self) -> str:
        return f"<Op {self.name}>"

    def __reduce__(self) -> tuple:
        return (get_op, (self.name,))


def register_op(op: Op, *, replace: bool = False) -> Op:
    """Add ``op`` to the op table (every layer sees it at once); returns the op."""
    if not replace:
        for key in (op.name, *op.aliases):
            if key in REGISTRY:
                raise ValueError(f"an op named {key!r} is already registered; pass replace=True")
    REGISTRY[op.name] = op
    for alias in op.aliases:
        REGISTRY[alias] = op
    return op


def get_op(name: str) -> Op:
    """The registered op called ``name`` (or one of its aliases)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"no op named {name!r}") from None


def ops() -> list[Op]:
    """All registered ops, each once, in registration order."""
    seen: dict[int, Op] = {}
    for op in REGISTRY.values():
        seen.setdefault(id(op), op)
    return list(seen.values())


def as_term(value: Any) -> Term:
    """A term for ``value``: terms pass through, numbers and arrays become constants."""
    if value.__class__ is Term:
        return value
    from .leaves import const

    try:
        return const(value)
    except DTypeError:
        raise TypeError(f"cannot use {type(value).__name__} {value!r} as a term") from None
