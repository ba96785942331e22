"""Op: one entry of the op table, and the registry every layer reads.

An op declares everything the layers need to know about it: arity, dtype/shape rule, algebraic
properties, numpy evaluation, printing (notation, symbol, precedence, associativity), C rendering
and a slot for its gradient rule. Adding an op is one :func:`register_op` call.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from typing import Any

from ..errors import DTypeError, ShapeError
from .dtypes import DTYPES, INT64, promote, weak_dtype
from .inference import arith, boolean, real, same, where_rule
from .leaves import Symbol, const
from .term import REGISTRY, Term, hooks
from .termbase import configure

__all__ = [
    "Op",
    "register_op",
    "get_op",
    "find_op",
    "ops",
    "Interval",
    "Domain",
    "ALL_REALS",
    "POSITIVE",
    "NONZERO",
    "operand_domain",
    "domain_within",
    "Kind",
    "any_kind",
    "result_kinds",
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

#: an open interval ``(low, high)`` of the real line (bounds may be infinite)
Interval = tuple[float, float]
#: where an operand may lie: a tuple of disjoint open intervals, or None for the whole real line
Domain = tuple[Interval, ...] | None

_INF = math.inf
ALL_REALS: Domain = None
#: x > 0 (log, sqrt, the base of a real power)
POSITIVE: Domain = ((0.0, _INF),)
#: x != 0 (a divisor, the kink of abs)
NONZERO: Domain = ((-_INF, 0.0), (0.0, _INF))


class Op:
    """An operation of the op table; calling it builds a term (``ops.add(x, 1)``).

    Every fact any layer needs about the op is a field here, given as a keyword when the op is
    declared (see :mod:`exprgraph.core.stdops` for the standard table).
    """

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
        "grad_reads_constants",
        "doc",
        "table",
        "batch_attr",
        "domain",
        "counts_bools",
        "float_result",
        "logical",
        "mixed_operands",
        "libmvec",
    )

    name: str
    #: (min, max) operand count; max None means variadic
    arity: tuple[int, int | None]
    #: ``infer(args, attr) -> (dtype, shape)``; raises ShapeError/DTypeError on bad operands
    infer: Infer
    #: ``impl(*values, attr=attr)`` numpy evaluation (None: use ``ufunc``)
    impl: Callable[..., Any] | None
    #: a numpy ufunc, so evaluation can write into a dead operand's buffer
    ufunc: Any
    commutative: bool
    associative: bool
    identity: Any
    absorbing: Any
    idempotent: bool
    #: one of :data:`NOTATIONS`: how the op is printed and parsed
    notation: str
    symbol: str
    precedence: int
    #: "left", "right" or None (non-associative: chained use needs parentheses)
    assoc: str | None
    #: keyword under which ``attr`` is printed and parsed (``sum(A, axis=0)``)
    attr_name: str | None
    #: maps attr to its intern key (constants intern by dtype and exact bits)
    attr_key: Callable[[Any], Any] | None
    #: a comparison: its terms have no truth value, its operands compare in their common dtype
    relational: bool
    aliases: tuple[str, ...]
    #: C expression template (``"sin({0})"``) or function of the operand strings
    c_render: str | Callable[..., str] | None
    #: LLVM IR instruction per compute dtype (``{"float64": "fadd double {0}, {1}"}``); operands
    #: arrive cast to that dtype, ``{t}`` is its LLVM type (see exprgraph.compile.llvm_emit)
    llvm: dict[str, str] | None
    #: gradient rule ``grad(node, upstream) -> tuple of per-argument contributions``
    grad: Callable[..., Any] | None
    #: the gradient rule reads the values of constant operands (pow's exponent), not only that
    #: they are constants: the fast sweep records it per constant (see core.grad_template)
    grad_reads_constants: bool
    #: ``batch_attr(attr, ndim, value_ndim)``: the attr to evaluate with when the operand's value
    #: carries leading batch axes (many parameter sets) beyond the term's ``ndim`` axes
    batch_attr: Callable[[Any, int, int], Any] | None
    #: where the op is defined and smooth in each operand, for drawing the inputs of numerical
    #: checks: one :data:`Domain` per operand (the last repeats for variadic ops), None when the
    #: op is smooth everywhere (``log``: ``(POSITIVE,)``; ``truediv``: ``(ALL_REALS, NONZERO)``)
    domain: tuple[Domain, ...] | None
    doc: str
    #: arithmetic: bool operands are counted as integers when evaluated (``True + True == 2``)
    counts_bools: bool
    #: a float result whatever the operand dtypes (float32 for float32 operands, else float64)
    float_result: bool
    #: logic: the operands are bools (code generators convert them to bool first)
    logical: bool
    #: the operands keep their own dtypes in C (C compares and selects across types as numpy does)
    mixed_operands: bool
    #: glibc's libmvec has SIMD variants of the libm function of this name that the C rendering calls
    libmvec: str | None
    #: intern table of this op's live terms (see Term.__new__)
    table: dict

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
        grad_reads_constants: bool = False,
        batch_attr: Callable[[Any, int, int], Any] | None = None,
        domain: tuple[Domain, ...] | None = None,
        counts_bools: bool = False,
        float_result: bool = False,
        logical: bool = False,
        mixed_operands: bool = False,
        libmvec: str | None = None,
        doc: str = "",
    ) -> None:
        _check_declaration(name, notation)
        self.name, self.infer, self.impl, self.ufunc = name, infer, impl, ufunc
        self.arity = (arity, arity) if isinstance(arity, int) else arity
        self.commutative, self.associative, self.idempotent = commutative, associative, idempotent
        self.identity, self.absorbing = identity, absorbing
        self.notation = notation
        self.symbol = symbol if symbol is not None else name
        self.precedence = precedence if notation in ("infix", "prefix") else PREC_ATOM
        self.assoc = assoc
        self.attr_name, self.attr_key = attr_name, attr_key
        self.relational, self.aliases = relational, aliases
        self.c_render, self.llvm, self.libmvec = c_render, llvm, libmvec
        self.grad, self.batch_attr, self.domain = grad, batch_attr, domain
        self.grad_reads_constants = grad_reads_constants
        self.counts_bools, self.float_result = counts_bools, float_result
        self.logical, self.mixed_operands = logical, mixed_operands
        self.doc = doc
        self.table = {}

    def __setattr__(self, name: str, value: Any) -> None:
        # an op's facts are read by every layer (and by the C term base at fixed offsets): set once
        if hasattr(self, "table"):
            raise AttributeError(f"the fields of Op {self.name!r} are read-only; declare a new Op instead")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"the fields of Op {self.name!r} cannot be deleted")

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
                # Python numbers are weak (numpy 2): next to float32 operands they are float32 constants
                context = promote(*(b.dtype for b in args if b.__class__ is Term))
                args = tuple(a if a.__class__ is Term else as_term(a, context) for a in args)
                break
        return Term(self, args, attr)

    @property
    def chains(self) -> bool:
        """Whether a flat chain ``a*b*c`` is one term of this op: an infix op of any operand count."""
        return self.notation == "infix" and self.arity[1] is None

    def __repr__(self) -> str:
        return f"<Op {self.name}>"

    def __reduce__(self) -> tuple:
        return (get_op, (self.name,))


# the C term base (when built) applies the scalar cases of these dtype rules itself
configure(Term, Op, (arith, real, same, boolean, where_rule))


def _check_declaration(name: str, notation: str) -> None:
    if notation not in NOTATIONS:
        raise ValueError(f"notation must be one of {NOTATIONS}, not {notation!r}")
    if not name.isidentifier():
        raise ValueError(f"op name {name!r} must be an identifier")


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


def find_op(name: str) -> Op | None:
    """The registered op called ``name``, or None when there is none (``get_op`` raises instead)."""
    return REGISTRY.get(name)


def ops() -> list[Op]:
    """All registered ops, each once, in registration order."""
    seen: dict[int, Op] = {}
    for op in REGISTRY.values():
        seen.setdefault(id(op), op)
    return list(seen.values())


def as_term(value: Any, context: str = "") -> Term:
    """A term for ``value``: terms pass through, numbers and arrays become constants.

    ``context`` is the dtype of the operands ``value`` meets: a Python number next to float32
    operands becomes a float32 constant, as numpy 2 treats Python scalars (:func:`weak_dtype`).
    """
    if value.__class__ is Term:
        return value
    try:
        return const(value, weak_dtype(value, context) if context else None)
    except DTypeError:
        raise TypeError(f"cannot use {type(value).__name__} {value!r} as a term") from None


def operand_domain(op: Op, position: int) -> Domain:
    """The :data:`Domain` of operand ``position`` of ``op`` (None: the whole real line)."""
    if op.domain is None or not op.domain:
        return None
    return op.domain[min(position, len(op.domain) - 1)]


def domain_within(domain: Domain, low: float, high: float, margin: float = 0.05) -> list[Interval]:
    """The parts of ``domain`` inside ``[low, high)``, kept away from the domain's finite ends.

    Each part is shrunk at a finite end of the domain by ``margin`` times the width of
    ``[low, high)`` (at most a quarter of the part), so values drawn from the parts stay clear of
    the poles and kinks where finite differences break down. An empty list means the domain
    misses ``[low, high)``.
    """
    parts = ((-_INF, _INF),) if domain is None else domain
    pad = margin * (high - low)
    out: list[Interval] = []
    for lo, hi in parts:
        a, b = max(lo, low), min(hi, high)
        if not a < b:
            continue
        cut = min(pad, (b - a) / 4)
        if lo > -_INF and a == lo:
            a += cut
        if hi < _INF and b == hi:
            b -= cut
        if a < b:
            out.append((a, b))
    return out


# -- what an op can give, for operands known only by their possible kinds ----------------------------

#: the kind of a value: ``(dtype, shape)``, a shape of ints and int64 terms
Kind = tuple[str, tuple]
#: most combinations of operand kinds :func:`result_kinds` tries (beyond, it answers None: unknown)
MAX_COMBINATIONS = 4096
#: highest rank :func:`any_kind` describes
MAX_RANK = 16
_PLACEHOLDERS: dict[Kind, Term] = {}


@functools.cache
def any_kind(max_rank: int = 2) -> frozenset[Kind]:
    """Every kind a value might have: each dtype, ranks 0..max_rank with symbolic dimensions."""
    dims = tuple(Symbol(f"_d{i}", INT64) for i in range(MAX_RANK))  # the symbol op is registered by now
    rank = max(0, min(max_rank, MAX_RANK))
    return frozenset((d, dims[:r]) for d in DTYPES for r in range(rank + 1))


def _placeholder(kind: Kind) -> Term:
    term = _PLACEHOLDERS.get(kind)
    if term is None:
        term = _PLACEHOLDERS[kind] = Symbol("_", kind[0], kind[1])
    return term


@functools.lru_cache(maxsize=4096)
def result_kinds(op: Op, operands: tuple[frozenset[Kind], ...], attr: Any = None) -> frozenset[Kind] | None:
    """The kinds ``op(*args, attr=attr)`` can have when each arg may be any of its ``operands`` kinds.

    An empty set means the op applies to no combination (``x @ 2``, ``transpose(x, axes=(0, 0))``);
    None means there were too many combinations to try. Symbolic dimensions stand for any size,
    so only what fails for every size is ruled out.
    """
    if math.prod(len(k) for k in operands) > MAX_COMBINATIONS:
        return None
    out: set[Kind] = set()
    for combo in itertools.product(*operands):
        try:
            dtype, shape = op.check(tuple(_placeholder(k) for k in combo), attr)
        except (ShapeError, DTypeError, TypeError, ValueError):
            continue
        out.add((dtype, tuple(shape)))
    return frozenset(out)


hooks.as_term = as_term
