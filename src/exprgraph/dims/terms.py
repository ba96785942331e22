"""Dimension terms: integer names and constants, and the ops this package adds to the op table.

A dimension expression is an ordinary int64 scalar term of the core: names are
``Symbol(name, "int64")`` and the operators are the core's add, sub, mul, floordiv, mod, neg,
maximum and minimum. Three more ops are registered here once:

- ``ceil_div`` (``CeilToInt(n, d)``): the ceiling of n/d;
- ``broadcast_dim`` (``broadcast(a, b)``): the size two broadcast dimensions give, ``a`` when
  ``b == 1``, else ``b`` (valid operands are equal or one of them is 1);
- ``dim_fn`` (``NAME(args)`` for any other name): an opaque integer function, the name in the
  term's attr. Nothing is known about its value; it prints back as it was read.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from ..core import dtypes, tokens
from ..core.leaves import Symbol
from ..core.op import Op, find_op, get_op, register_op
from ..core.stdops import arith
from ..core.term import Term
from ..core.termbase import find_term, native
from ..errors import DimConstantOverflowError

__all__ = [
    "CEIL_DIV",
    "BROADCAST",
    "FN",
    "dim_fn",
    "broadcast_value",
    "dim_name",
    "dim_const",
    "memo_table",
    "remember",
    "clear_memos",
    "INT64",
    "INT64_MAX",
    "INT64_MIN",
    "TERM",
    "RESERVED_NAMES",
    "ADD",
    "SUB",
    "MUL",
    "NEG",
    "FLOORDIV",
    "MOD",
    "POW",
    "ABS",
    "MAX",
    "MIN",
    "CONST",
    "SYMBOL",
    "is_dim_term",
    "make_term",
    "live_term",
    "is_leaf",
]


# The core's term class and constants, as this package's own module constants: the compiled build
# keeps a Final name in a C static, where a name imported from a pure Python module is looked up in
# the module's dictionary at each use (the hot paths build and test terms all the time).

#: the term class (``TERM(op, args)``, ``type(t) is TERM``)
TERM: Final[type[Term]] = Term
#: the int64 dtype name, and its range
INT64: Final[str] = dtypes.INT64
INT64_MAX: Final[int] = dtypes.INT64_MAX
INT64_MIN: Final[int] = dtypes.INT64_MIN
#: names the parser rejects (``None``, ``True``...)
RESERVED_NAMES: Final[frozenset[str]] = tokens.RESERVED_NAMES
#: the core ops this package builds and reads (CEIL_DIV, its own op, is registered below)
ADD: Final[Op] = get_op("add")
SUB: Final[Op] = get_op("sub")
MUL: Final[Op] = get_op("mul")
NEG: Final[Op] = get_op("neg")
FLOORDIV: Final[Op] = get_op("floordiv")
MOD: Final[Op] = get_op("mod")
POW: Final[Op] = get_op("pow")
ABS: Final[Op] = get_op("abs")
MAX: Final[Op] = get_op("maximum")
MIN: Final[Op] = get_op("minimum")
CONST: Final[Op] = get_op("const")
SYMBOL: Final[Op] = get_op("symbol")


def _ceil_div(n: Any, d: Any) -> Any:
    # floats: ceil(n/d) == -((-n)//d) for every d, whatever the signs (-0.0 and inf included);
    # integers: n//d, plus 1 where d does not divide n (-n wraps at -2**63, where -((-n)//d) has the wrong sign)
    kind = np.result_type(n, d)
    if kind.kind == "f":  # an int operand is made a float first: its negation would wrap at -2**63
        return np.negative(np.floor_divide(np.negative(np.asarray(n, dtype=kind)), d))
    with np.errstate(divide="ignore"):
        return np.floor_divide(n, d) + (np.mod(n, d) != 0)


def _register() -> Op:
    existing = find_op("ceil_div")
    if existing is not None:
        return existing
    return register_op(
        Op(
            "ceil_div",
            2,
            arith,
            impl=_ceil_div,
            notation="call",
            aliases=("CeilToInt",),
            c_render="eg_ceil_div({0}, {1})",
            llvm={
                "float64": "call double @eg_ceil_div_d(double {0}, double {1})",
                "float32": "call float @eg_ceil_div_f(float {0}, float {1})",
                "int64": "call i64 @eg_ceil_div_i(i64 {0}, i64 {1})",
            },
            doc="Ceiling division ceil(n/d) of integers (CeilToInt in dimension expressions).",
        )
    )


#: the ceiling-division op; ``CEIL_DIV(n, d)`` builds ``ceil_div(n, d)``
CEIL_DIV: Final[Op] = _register()


def broadcast_value(a: int, b: int) -> int:
    """The broadcast size of two dimensions: ``a`` when ``b == 1``, else ``b`` (ValueError if they do not broadcast)."""
    if b == 1 or a == b:
        return a
    if a == 1:
        return b
    raise ValueError(f"the dimensions {a} and {b} do not broadcast")


def _broadcast(a: Any, b: Any) -> Any:
    # where b == 1 the size is a, elsewhere b (equal to a, or a == 1)
    return np.where(np.equal(b, 1), a, b)


def _int_scalar(args: tuple, attr: Any) -> tuple[str, tuple]:
    # an opaque dimension function: an int64 scalar whatever its operands
    return INT64, ()


def _register_more() -> tuple[Op, Op]:
    broadcast = find_op("broadcast_dim")
    if broadcast is None:
        broadcast = register_op(
            Op(
                "broadcast_dim",
                2,
                arith,
                impl=_broadcast,
                notation="call",
                c_render="((({1}) == 1) ? ({0}) : ({1}))",
                llvm={
                    "float64": "call double @eg_broadcast_d(double {0}, double {1})",
                    "float32": "call float @eg_broadcast_f(float {0}, float {1})",
                    "int64": "call i64 @eg_broadcast_i(i64 {0}, i64 {1})",
                },
                doc="Broadcast size of two dimensions: a where b == 1, else b (broadcast(a, b) in dimension text).",
            )
        )
    fn = find_op("dim_fn")
    if fn is None:
        fn = register_op(
            Op(
                "dim_fn",
                (1, None),
                _int_scalar,
                notation="call",
                attr_name="name",
                doc="An opaque integer function of dimension expressions (NAME(args) with an unknown NAME).",
            )
        )
    return broadcast, fn


_MORE: Final = _register_more()
#: ``broadcast(a, b)``: a where b == 1, else b
BROADCAST: Final[Op] = _MORE[0]
#: an opaque function ``NAME(args...)``: ``Term(FN, args, name)``
FN: Final[Op] = _MORE[1]


#: whether terms are interned in C (then the constructor is the quick way to a live term)
_NATIVE: Final[bool] = native()


def make_term(op: Op, args: tuple[Term, ...]) -> Term:
    """``Term(op, args)``: with the pure Python term base, the live term straight from the op's
    intern table when there is one.

    Dimension expressions repeat (a compiler asks about the same sizes again and again), so most
    terms built here are alive already; the pure base's table lookup skips the constructor's
    checks for them (the C base's constructor does that lookup first anyway).
    """
    if not _NATIVE:
        ref = op.table.get(args)  # the key of a term without an attr is its args (see PureTermBase)
        if ref is not None:
            term = ref()
            if term is not None:
                return term
    return TERM(op, args)


def live_term(op: Op, args: tuple[Term, ...]) -> Term | None:
    """The live term ``op(args)`` (no attr) if there is one, else None; nothing is built.

    A term that is not alive is in no polynomial: a rule that looks for one can stop there.
    """
    found: Term | None = find_term(op, args)
    return found


# -- memo tables: every cache of this package, bounded and emptied together ------------------------------

_MEMOS: Final[list[dict[Any, Any]]] = []


def memo_table() -> dict[Any, Any]:
    """A new memo table: ``remember`` bounds it and ``clear_memos`` empties it with the others."""
    table: dict[Any, Any] = {}
    _MEMOS.append(table)
    return table


def remember(table: dict[Any, Any], key: Any, value: Any, limit: int = 1 << 16) -> Any:
    """``value``, stored under ``key`` in ``table`` (emptied first once it holds more than ``limit`` entries)."""
    if len(table) > limit:
        table.clear()
    table[key] = value
    return value


def clear_memos() -> None:
    """Empty every memo table made by ``memo_table`` (answers do not change, only their speed)."""
    for table in _MEMOS:
        table.clear()


def dim_fn(name: str, *args: Term) -> Term:
    """The opaque call ``name(args...)`` (an int64 term)."""
    return TERM(FN, tuple(args), name)


_names: Final[dict[str, Term]] = memo_table()


def dim_name(name: str) -> Term:
    """The int64 symbol called ``name`` (cached: dimension names repeat a lot)."""
    term = _names.get(name)
    if term is None:
        if name.isascii() and name.isidentifier() and name not in RESERVED_NAMES:  # [A-Za-z_][A-Za-z0-9_]*
            term = TERM(SYMBOL, (), (name, INT64, ()))  # what Symbol() builds, without its checks
        else:
            term = Symbol(name, INT64)
        remember(_names, name, term)
    return term


_consts: Final[dict[int, Term]] = memo_table()


def dim_const(value: int) -> Term:
    """The int64 constant ``value`` (DimConstantOverflowError, an OverflowError, names a value outside int64)."""
    term = _consts.get(value)
    if term is None:
        if not INT64_MIN <= value <= INT64_MAX:
            big = value.bit_length() >= 256
            shown = f"{'-' if value < 0 else ''}2**{value.bit_length() - 1}..." if big else str(value)
            raise DimConstantOverflowError(f"the dimension constant {shown} does not fit in int64")
        term = TERM(CONST, (), int(value))  # what const() builds for an int, without its checks
        remember(_consts, value, term)
    return term


def is_dim_term(term: Any) -> bool:
    """Whether ``term`` is an int64 scalar term (what a symbolic dimension must be)."""
    return type(term) is TERM and term.dtype == INT64 and term.shape == ()


def is_leaf(t: Term) -> bool:
    """Whether ``t`` is a name or an integer constant (every integer of its range is a value, independently)."""
    op = t.op
    return op is SYMBOL or (op is CONST and type(t.attr) is int)
