"""Right-hand-side expressions of kernel statements: a small immutable node type and iterative walks.

A node is ``Expr(op, args, attr, pos)``. Leaves are numbers (``"num"``, attr the value) and tensor
reads (``"ref"``, attr an :class:`Access`). Inner ops: ``add sub mul div floordiv mod neg``, function
calls ``call`` (attr the function name: exp, log, sqrt, tanh, max, min) and, in gradient kernels
only, the 0/1 steps ``ge``/``gt`` (``a >= b``, ``a > b``) that max and min differentiate to.
Nodes compare by identity; every walk uses an explicit stack, so deep expressions are safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..core import Term

__all__ = [
    "Access",
    "Expr",
    "num",
    "ref",
    "binary",
    "neg",
    "call",
    "postorder",
    "accesses",
    "map_expr",
    "format_expr",
    "FUNCTIONS",
    "BINARY_SYMBOLS",
]

#: functions a right-hand side may call, with their arity
FUNCTIONS: dict[str, int] = {"exp": 1, "log": 1, "sqrt": 1, "tanh": 1, "max": 2, "min": 2}

#: infix symbol and precedence of each binary op (in the kernel language)
BINARY_SYMBOLS: dict[str, tuple[str, int]] = {
    "add": ("+", 1),
    "sub": ("-", 1),
    "mul": ("*", 2),
    "div": ("/", 2),
    "floordiv": ("//", 2),
    "mod": ("%", 2),
    "ge": (">=", 0),
    "gt": (">", 0),
}
_UNARY_PREC = 3
_ATOM_PREC = 4


@dataclass(frozen=True)
class Access:
    """A read or write of a tensor element: ``name[index...]`` (index () for a scalar ``alpha<1>``)."""

    name: str
    index: tuple[Term, ...]

    def __str__(self) -> str:
        if not self.index:
            return self.name
        return f"{self.name}[{', '.join(str(t) for t in self.index)}]"


class Expr:
    """An immutable node of a right-hand side: ``op``, operand nodes ``args``, payload ``attr``, source ``pos``."""

    __slots__ = ("op", "args", "attr", "pos")

    op: str
    args: tuple[Expr, ...]
    attr: Any
    pos: int | None

    def __init__(self, op: str, args: tuple[Expr, ...] = (), attr: Any = None, pos: int | None = None) -> None:
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "attr", attr)
        object.__setattr__(self, "pos", pos)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("expression nodes are immutable")

    @property
    def is_num(self) -> bool:
        """True for a number leaf."""
        return self.op == "num"

    @property
    def is_ref(self) -> bool:
        """True for a tensor read."""
        return self.op == "ref"

    def __repr__(self) -> str:
        return f"Expr({format_expr(self)!r})"

    def __str__(self) -> str:
        return format_expr(self)


def num(value: int | float, pos: int | None = None) -> Expr:
    """A number leaf."""
    return Expr("num", (), value, pos)


def ref(name: str, index: tuple[Term, ...], pos: int | None = None) -> Expr:
    """A tensor read ``name[index]``."""
    return Expr("ref", (), Access(name, tuple(index)), pos)


def binary(op: str, a: Expr, b: Expr, pos: int | None = None) -> Expr:
    """A binary node (``add sub mul div floordiv mod ge gt``)."""
    if op not in BINARY_SYMBOLS:
        raise ValueError(f"unknown binary op {op!r}")
    return Expr(op, (a, b), None, pos)


def neg(a: Expr, pos: int | None = None) -> Expr:
    """Unary minus."""
    return Expr("neg", (a,), None, pos)


def call(fn: str, args: tuple[Expr, ...], pos: int | None = None) -> Expr:
    """A call of one of :data:`FUNCTIONS`."""
    if FUNCTIONS.get(fn) != len(args):
        raise ValueError(f"{fn} takes {FUNCTIONS.get(fn)} arguments")
    return Expr("call", tuple(args), fn, pos)


def postorder(root: Expr) -> list[Expr]:
    """Distinct nodes under ``root``, children before parents (iterative)."""
    out: list[Expr] = []
    seen: set[int] = set()
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            out.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for a in reversed(node.args):
            if id(a) not in seen:
                stack.append((a, False))
    return out


def accesses(root: Expr) -> Iterator[tuple[Access, int | None]]:
    """Every tensor read under ``root`` (with its source position), left to right."""
    for node in postorder(root):
        if node.op == "ref":
            yield node.attr, node.pos


def map_expr(root: Expr, leaf: Callable[[Expr], Expr]) -> Expr:
    """Rebuild ``root`` with every leaf replaced by ``leaf(node)`` (shared nodes stay shared)."""
    done: dict[int, Expr] = {}
    for node in postorder(root):
        if not node.args:
            done[id(node)] = leaf(node)
        else:
            args = tuple(done[id(a)] for a in node.args)
            same = all(x is y for x, y in zip(args, node.args, strict=True))
            done[id(node)] = node if same else Expr(node.op, args, node.attr, node.pos)
    return done[id(root)]


def _default_leaf(node: Expr) -> str:
    if node.op == "num":
        return _num_text(node.attr)
    return str(node.attr)


def _num_text(value: int | float) -> str:
    if isinstance(value, float):
        text = repr(value)
        return text if ("." in text or "e" in text or "n" in text) else text + ".0"
    return str(value)


def format_expr(root: Expr, leaf: Callable[[Expr], str] | None = None) -> str:
    """Infix text of ``root`` with minimal parentheses (iterative; ``leaf`` renders leaves)."""
    leaf = leaf or _default_leaf
    # each entry: (text, precedence)
    done: dict[int, tuple[str, int]] = {}
    for node in postorder(root):
        op = node.op
        if not node.args:
            text = leaf(node)
            prec = _ATOM_PREC if not text.startswith("-") else _UNARY_PREC
            done[id(node)] = (text, prec)
        elif op == "neg":
            text, prec = done[id(node.args[0])]
            # -(-x) must not print as --x (a decrement in C)
            inner = text if prec >= _UNARY_PREC and not text.startswith("-") else f"({text})"
            done[id(node)] = (f"-{inner}", _UNARY_PREC)
        elif op == "call":
            args = ", ".join(done[id(a)][0] for a in node.args)
            done[id(node)] = (f"{node.attr}({args})", _ATOM_PREC)
        else:
            symbol, prec = BINARY_SYMBOLS[op]
            (lt, lp), (rt, rp) = done[id(node.args[0])], done[id(node.args[1])]
            left = lt if lp >= prec else f"({lt})"
            # binary ops associate to the left: a right operand of equal precedence needs parentheses
            right = rt if rp > prec else f"({rt})"
            done[id(node)] = (f"{left} {symbol} {right}", prec)
    return done[id(root)][0]
