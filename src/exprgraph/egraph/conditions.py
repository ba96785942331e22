"""Conditions on classes, usable as ``where=`` of a rule or by name in rule text.

Conditions see each bound class through its representative term (see :mod:`.rewrite`): the
constant the class folded to, else a symbol it holds, else a placeholder leaf (op ``eclass``). Each condition
is a function of variable names returning a callable of the bindings, so it works on terms as
well as on e-graphs::

    rule("x/x -> 1", where=not_zero("x"))
    rule("d(x, x**f) -> ...", where=not_zero("f") & not_zero("g"))
    parse_rules("x/x -> 1 where not_zero(x)", functions=FUNCTIONS)

- ``not_zero(v)``: ``v`` is not known to be zero (no constant, or a nonzero one);
- ``is_const(v)``: ``v`` is a known constant;
- ``is_sym(v)``: ``v`` is a symbol;
- ``const_or_distinct_var(c, x)``: ``c`` is a constant, or a symbol other than ``x``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import Term

__all__ = ["Condition", "not_zero", "is_const", "is_sym", "const_or_distinct_var", "FUNCTIONS"]


def _const_value(v: Any) -> Any:
    if v.__class__ is Term:
        return v.attr if v.op.name == "const" and not v.shape else None
    if isinstance(v, (bool, int, float)):
        return v
    return None


def nonzero_value(v: Any) -> bool:
    """The value is not known to be zero (``not_zero`` on one value)."""
    k = _const_value(v)
    return k is None or k != 0


def const_value(v: Any) -> bool:
    """The value is a known constant."""
    return _const_value(v) is not None


def symbol_value(v: Any) -> bool:
    """The value is a symbol."""
    return v.__class__ is Term and v.op.name == "symbol"


def const_or_distinct_symbol(c: Any, x: Any) -> bool:
    """``c`` is a constant, or a symbol that is not ``x``."""
    return c is not x and (const_value(c) or symbol_value(c))


class Condition:
    """A test of some bound variables: ``cond(**bindings) -> bool``; ``a & b`` needs both."""

    __slots__ = ("fn", "names", "__name__")

    def __init__(self, fn: Callable[..., bool], names: tuple[str, ...], name: str) -> None:
        self.fn = fn
        self.names = names
        self.__name__ = name

    def __call__(self, **bindings: Any) -> bool:
        """Whether the condition holds for these bindings (False when a name is unbound)."""
        try:
            values = [bindings[n] for n in self.names]
        except KeyError:
            return False
        return bool(self.fn(*values))

    def __and__(self, other: Condition) -> Condition:
        both = (self, other)
        names = tuple(dict.fromkeys(self.names + other.names))

        def all_of(*values: Any) -> bool:
            b = dict(zip(names, values, strict=True))
            return all(c(**b) for c in both)

        return Condition(all_of, names, f"{self.__name__} and {other.__name__}")

    def __repr__(self) -> str:
        return f"<condition {self.__name__}>"


def not_zero(v: str) -> Condition:
    """``v`` is not known to be zero."""
    return Condition(nonzero_value, (v,), f"not_zero({v})")


def is_const(v: str) -> Condition:
    """``v`` is a known constant."""
    return Condition(const_value, (v,), f"is_const({v})")


def is_sym(v: str) -> Condition:
    """``v`` is a symbol."""
    return Condition(symbol_value, (v,), f"is_sym({v})")


def const_or_distinct_var(c: str, x: str) -> Condition:
    """``c`` is a constant, or a symbol other than ``x``."""
    return Condition(const_or_distinct_symbol, (c, x), f"const_or_distinct_var({c}, {x})")


#: the same tests on values, for rule text: ``parse_rules(text, functions=FUNCTIONS)``
FUNCTIONS: dict[str, Callable[..., bool]] = {
    "not_zero": nonzero_value,
    "is_const": const_value,
    "is_sym": symbol_value,
    "const_or_distinct_var": const_or_distinct_symbol,
}
