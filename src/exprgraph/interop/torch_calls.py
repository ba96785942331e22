"""The reading of each node of torch's sympy expressions, by class name, its arguments read (see :mod:`.torch_read`).

Each call's reading is a function ``(reader, values of the arguments, node) -> value`` in :data:`CALLS`; a value is
a term (int64, or bool for a relation and logic), or a :class:`_Ratio` ``num/den`` that only a rounding call or a
relation takes (``floor(n/d) == n//d`` and ``ceil(n/d) == -((-n)//d)`` for every ``d != 0``). A class name without
a reading goes to :func:`other`: an integer function we do not know becomes an opaque dimension, anything else
raises :class:`~exprgraph.errors.ConversionError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from ..core.op import get_op
from ..core.term import Term
from ..dims import CEIL_DIV, dim_const, dim_fn
from ..errors import ConversionError

__all__ = [
    "CALLS",
    "other",
    "rounding",
    "is_bool",
    "TRUE",
    "FALSE",
    "REL_OPS",
    "INF_NAMES",
    "BOOL_NAMES",
    "INT64_RANGE",
]

#: the integers a dimension holds
INT64_RANGE: Final = (-(2**63), 2**63 - 1)
#: powers up to this exponent are read as products (the dimension printer has no power)
_MAX_FACTORS: Final = 64
_ADD, _MUL, _FLOORDIV, _MOD, _POW = (get_op(n) for n in ("add", "mul", "floordiv", "mod", "pow"))
_MAX, _MIN, _ABS, _NEG = (get_op(n) for n in ("maximum", "minimum", "abs", "neg"))
_AND, _OR, _NOT = get_op("logical_and"), get_op("logical_or"), get_op("logical_not")
#: the boolean constants
TRUE: Final = Term(get_op("const"), (), True)
FALSE: Final = Term(get_op("const"), (), False)
#: relation class names (torch's and sympy's spellings) -> the core's relational op
_RELATIONS: Final = {
    **dict.fromkeys(("Eq", "Equality"), get_op("eq")),
    **dict.fromkeys(("Ne", "Unequality"), get_op("ne")),
    **dict.fromkeys(("Lt", "StrictLessThan"), get_op("lt")),
    **dict.fromkeys(("Le", "LessThan"), get_op("le")),
    **dict.fromkeys(("Gt", "StrictGreaterThan"), get_op("gt")),
    **dict.fromkeys(("Ge", "GreaterThan"), get_op("ge")),
}
#: the names of the core's relational ops
REL_OPS: Final = frozenset(op.name for op in _RELATIONS.values())
#: class names of sympy's and torch's infinities -> their value
INF_NAMES: Final = {"IntInfinity": math.inf, "Infinity": math.inf, "NegativeIntInfinity": -math.inf}
INF_NAMES["NegativeInfinity"] = -math.inf
_INT_NAMES: Final = frozenset(("Integer", "Zero", "One", "NegativeOne", "IntegerConstant"))
#: class names of the boolean atoms -> the boolean constants
BOOL_NAMES: Final = {"BooleanTrue": TRUE, "BooleanFalse": FALSE, "true": TRUE, "false": FALSE}
#: calls whose one argument is the value (integer-valued floats included): f(x) -> x
_SAME: Final = frozenset(("Identity", "ToFloat", "TruncToFloat"))
#: rounding calls: name -> what they make of a ratio num/den
_ROUNDING: Final = frozenset(("FloorToInt", "CeilToInt", "TruncToInt", "floor", "ceiling", "RoundToInt"))


class _Ratio:
    """A rational value ``num/den`` (integer terms, ``den`` non-zero): only a rounding call or a relation takes it."""

    __slots__ = ("num", "den")

    def __init__(self, num: Term, den: Term) -> None:
        self.num, self.den = num, den


def is_bool(t: Any) -> bool:
    """Whether ``t`` is a boolean term (a relation, a logical combination, true or false)."""
    return type(t) is Term and t.dtype == "bool"


def _int(t: Any, what: Any) -> Term:
    """``t`` as an integer term (a ratio or a boolean is refused)."""
    if type(t) is Term and t.dtype == "int64":
        return t
    kind = "a ratio" if isinstance(t, _Ratio) else "a boolean"
    raise ConversionError(f"torch expression: {_name(what)} needs integer operands, got {kind}")


def _name(x: Any) -> str:
    return type(x).__name__


def _const(value: int) -> Term:
    if not INT64_RANGE[0] <= value <= INT64_RANGE[1]:
        raise ConversionError(f"torch expression: the integer {value} does not fit in int64")
    return dim_const(value)


def _chain(op: Any, args: list[Term]) -> Term:
    out = args[0]
    for a in args[1:]:
        out = Term(op, (out, a))  # (the op's own call wraps numbers: these are terms already)
    return out


def _parts(v: Term | _Ratio) -> tuple[Term, Term | None]:
    """Numerator and denominator (None for an integer)."""
    return (v.num, v.den) if isinstance(v, _Ratio) else (v, None)


def _plus(a: Term | _Ratio, b: Term | _Ratio) -> Term | _Ratio:
    # n1/d1 + n2/d2 = (n1*d2 + n2*d1)/(d1*d2); n1/d + n2/d = (n1 + n2)/d; n1 + n2/d = (n1*d + n2)/d
    (na, da), (nb, db) = _parts(a), _parts(b)
    if da is None and db is None:
        return _ADD(na, nb)
    if da is None:
        assert db is not None
        return _Ratio(_ADD(_MUL(na, db), nb), db)
    if db is None:
        return _Ratio(_ADD(na, _MUL(nb, da)), da)
    if da is db:
        return _Ratio(_ADD(na, nb), da)
    return _Ratio(_ADD(_MUL(na, db), _MUL(nb, da)), _MUL(da, db))


def _times(a: Term | _Ratio, b: Term | _Ratio) -> Term | _Ratio:
    # (n1/d1)*(n2/d2) = (n1*n2)/(d1*d2)
    (na, da), (nb, db) = _parts(a), _parts(b)
    if da is None and db is None:
        return _MUL(na, nb)
    den = db if da is None else da if db is None else _MUL(da, db)
    assert den is not None
    return _Ratio(_MUL(na, nb), den)


def rounding(name: str, v: Any, x: Any) -> Term:
    """A rounding call (``floor``, ``CeilToInt``...) of an integer or of a ratio ``n/d``."""
    if type(v) is Term:
        return _int(v, x)  # rounding an integer changes nothing
    if not isinstance(v, _Ratio):
        raise ConversionError(f"torch expression: {name} of a boolean")
    if name in ("FloorToInt", "floor"):
        return _FLOORDIV(v.num, v.den)  # floor(n/d) == n//d for every d != 0
    if name in ("CeilToInt", "ceiling"):
        return CEIL_DIV(v.num, v.den)  # ceil(n/d) == -((-n)//d)
    return dim_fn(name, v.num, v.den)  # trunc / round of n/d: opaque (sign dependent)


# -- the reading of each call, by class name (arguments read: terms, ratios or booleans) ------------------


def _associative(op: Any, args: list[Any], combine: Callable[[Any, Any], Any]) -> Any:
    """A sum or product: terms chained under ``op``; with a ratio among them, folded by ``combine``."""
    for a in args:
        if type(a) is not Term:  # a ratio among them
            out = args[0]
            for b in args[1:]:
                out = combine(out, b)
            return out
    return Term(op, (args[0], args[1])) if len(args) == 2 else _chain(op, args)  # a . b . ...


def _add(r: Any, args: list[Any], x: Any) -> Any:
    return _associative(_ADD, args, _plus)  # a + b + ...


def _mul(r: Any, args: list[Any], x: Any) -> Any:
    return _associative(_MUL, args, _times)  # a * b * ...


def _pow(r: Any, args: list[Any], x: Any) -> Any:
    base, exp = args
    if not (type(exp) is Term and exp.is_const and type(exp.attr) is int):
        raise ConversionError(f"torch expression: {x} has a power that is not an integer constant")
    k = exp.attr
    power = _power(_int(base, x), abs(k))
    return power if k >= 0 else _Ratio(_const(1), power)  # b**-k = 1/b**k


def _relation(op: Any) -> Callable[[Any, list[Any], Any], Term]:
    """The reading of the relation ``op`` (a ratio side cleared by a positive constant denominator)."""

    def read(r: Any, args: list[Any], x: Any) -> Term:
        a, b = args
        if type(a) is Term and type(b) is Term and a.dtype == "int64" and b.dtype == "int64":
            return Term(op, (a, b))  # two integers (the common case)
        if isinstance(a, _Ratio) or isinstance(b, _Ratio):
            a, b = _cleared(a, b, x)
        return Term(op, (_int(a, x), _int(b, x)))

    return read


def _logic(r: Any, args: list[Any], x: Any) -> Term:
    name = _name(x)
    for a in args:
        if not is_bool(a):
            raise ConversionError(f"torch expression: {name} needs boolean operands")
    return _chain(_AND if name == "And" else _OR, args)


def _not(r: Any, args: list[Any], x: Any) -> Term:
    if len(args) != 1 or not is_bool(args[0]):
        raise ConversionError("torch expression: Not needs a boolean operand")
    return _NOT(args[0])


def _same(r: Any, args: list[Any], x: Any) -> Any:
    return args[0] if len(args) == 1 else other(r, args, x)  # f(x) -> x


def _true_div(r: Any, args: list[Any], x: Any) -> Any:
    a, b = args  # a/b = a * (1/b); a/(n/d) = a * (d/n)
    return _times(a, _Ratio(b.den, b.num) if isinstance(b, _Ratio) else _Ratio(_const(1), _int(b, x)))


def _round(r: Any, args: list[Any], x: Any) -> Any:
    return rounding(_name(x), args[0], x) if len(args) == 1 else other(r, args, x)


def _floordiv(r: Any, args: list[Any], x: Any) -> Any:
    if len(args) != 2:
        return other(r, args, x)
    return Term(_FLOORDIV, (_int(args[0], x), _int(args[1], x)))  # a//b (CleanDiv: known exact)


def _mod(r: Any, args: list[Any], x: Any) -> Any:
    if len(args) != 2:
        return other(r, args, x)
    return Term(_MOD, (_int(args[0], x), _int(args[1], x)))  # a%b


def _modular_indexing(r: Any, args: list[Any], x: Any) -> Any:
    if len(args) != 3:
        return other(r, args, x)
    a, d, m = (_int(v, x) for v in args)
    return _MOD(_FLOORDIV(a, d), m)  # ModularIndexing(x, d, m) -> (x//d)%m


def _ceil_div(r: Any, args: list[Any], x: Any) -> Any:
    if len(args) != 2:
        return other(r, args, x)
    return CEIL_DIV(_int(args[0], x), _int(args[1], x))  # ceil(a/b)


def _maxmin(r: Any, args: list[Any], x: Any) -> Any:
    if not args:
        return other(r, args, x)
    return _chain(_MAX if _name(x) == "Max" else _MIN, [_int(a, x) for a in args])


def _abs(r: Any, args: list[Any], x: Any) -> Any:
    return _ABS(_int(args[0], x)) if len(args) == 1 else other(r, args, x)


def other(r: Any, args: list[Any], x: Any) -> Any:
    """A call without a reading of its own: an integer function we do not know is opaque, anything else refused."""
    name = _name(x)
    ints = [_int(a, x) for a in args]
    if getattr(x, "is_integer", None) is True and name.isidentifier() and ints:
        return dim_fn(name, *ints)  # an integer function we do not know: opaque (an atom such as Float(0.0): refused)
    raise ConversionError(f"torch expression: no dimension meaning for {name} (in {x})")


#: class name -> the reading of its calls
CALLS: Final[dict[str, Callable[[Any, list[Any], Any], Any]]] = {
    "Add": _add,
    "Mul": _mul,
    "Pow": _pow,
    "PowByNatural": _pow,
    **{name: _relation(op) for name, op in _RELATIONS.items()},
    "And": _logic,
    "Or": _logic,
    "Not": _not,
    **dict.fromkeys(_SAME, _same),
    "IntTrueDiv": _true_div,
    "FloatTrueDiv": _true_div,
    **dict.fromkeys(_ROUNDING, _round),
    "FloorDiv": _floordiv,
    "CleanDiv": _floordiv,
    "PythonMod": _mod,
    "Mod": _mod,
    "ModularIndexing": _modular_indexing,
    "CeilDiv": _ceil_div,
    "Max": _maxmin,
    "Min": _maxmin,
    "Abs": _abs,
}


def _power(base: Term, k: int) -> Term:
    """``base**k`` (k >= 0): a product of k factors when k is small (as dimension text prints it), else a power."""
    if k == 0:
        return _const(1)
    if k > _MAX_FACTORS:
        return _POW(base, _const(k))
    return _chain(_MUL, [base] * k)  # b**k = b*b*...*b


def _cleared(a: Any, b: Any, x: Any) -> tuple[Term, Term]:
    """``a REL b`` as ``a*d REL b*d`` for a positive constant denominator ``d`` (the relation is unchanged)."""
    d = 1
    for side in (a, b):
        if isinstance(side, _Ratio):
            den = side.den
            if not (den.is_const and type(den.attr) is int and den.attr > 0):
                raise ConversionError(f"torch expression: {x} compares a ratio with a symbolic denominator")
            d = d * den.attr // math.gcd(d, den.attr)
    out = []
    for side in (a, b):
        if isinstance(side, _Ratio):
            out.append(_MUL(side.num, _const(d // side.den.attr)))
        else:
            out.append(_MUL(_int(side, x), _const(d)))
    return out[0], out[1]
