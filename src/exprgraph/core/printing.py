"""Printing: infix text that parses back, constructor-form repr, a DAG listing and Graphviz.

Every printer is iterative (an explicit stack of text pieces), so million-node chains print at
the default recursion limit in linear time. The parenthesisation reads the precedence table
(:mod:`.notation`: the op table's precedences and associativities), which the parser shares, so
``parse(str(t)) is t`` (a symbol's name is spelled by :func:`~.tokens.name_text`, the parser's
table: quoted, `` `e` ``, where the bare name reads as something else); the LaTeX printer
(:mod:`.latex`) applies the same rule with its own spellings, through the same emitter (:func:`emit`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable
from typing import Any, Literal, TextIO, overload

import numpy as np

from ..errors import TermTooLargeError
from .assumptions import assumptions_text
from .exact import ExactName, Rational
from .leaves import ConstArray
from .notation import SYNTAX, operand_need
from .op import PREC_UNARY
from .term import Term, hooks
from .tokens import name_text
from .walk import postorder

__all__ = ["to_infix", "to_repr", "dprint", "dformat", "to_dot", "format_const", "MAX_PRINT_NODES"]

#: printing expands shared nodes; beyond this many tree nodes use dprint() instead
MAX_PRINT_NODES = 20_000_000


def format_const(value: Any) -> str:
    """Text of a constant's value as the parser reads it back (float32 ones as ``float32(0.1)``).

    Exact constants: a rational as ``rational(-1, 3)`` (a call, so it binds as an atom), ``pi``, ``e``.
    """
    cls = value.__class__
    if cls is float:
        return repr(value)  # 1.0, -0.0, 1e-10, inf, nan
    if cls is bool or cls is int:
        return repr(value)
    if cls is Rational:
        return f"rational({value.numerator}, {value.denominator})"
    if cls is ExactName:
        return value.name
    if cls is np.float32:
        return f"float32({single_text(value)})"
    text = f"array({value.array.tolist()!r})"
    return f"float32({text})" if value.array.dtype == np.float32 else text


def single_text(value: Any) -> str:
    """The shortest decimal text that reads back (through a double) as exactly the float32 ``value``."""
    text = str(value)  # numpy's shortest unique digits for a float32: 0.1, not 0.10000000149011612
    if text.lstrip("-") in ("inf", "nan"):
        return text
    if np.float32(float(text)).tobytes() != value.tobytes():
        text = repr(float(value))  # exact: every float32 is a double
    return text


def _negative(value: Any) -> bool:
    cls = value.__class__
    if cls is float:
        return math.copysign(1.0, value) < 0 and value == value
    return cls is int and value < 0


_CALL, _SIGNED, _LITERAL = SYNTAX["call"], SYNTAX["signed literal"], SYNTAX["literal"]


class _Needs(dict):
    """op -> the precedence its left and right operands need to go bare (operand_need, memoised)."""

    def __missing__(self, op: Any) -> tuple[int, int]:
        found = self[op] = (operand_need(op.precedence, op.assoc, 0), operand_need(op.precedence, op.assoc, 1))
        return found


_NEEDS = _Needs()


def _prec(node: Term) -> int:
    """Precedence of the printed form of ``node`` (how tightly it binds)."""
    op = node.op
    notation = op.notation
    if notation == "infix":
        n = len(node.args)
        return op.precedence if n == 2 or (n > 2 and op.chains) else _CALL
    if notation == "prefix":
        return op.precedence
    if notation == "leaf":
        return _SIGNED if op.name == "const" and _negative(node.attr) else _LITERAL
    return SYNTAX[notation]


def check_tree_size(roots: Iterable[Term], limit: int, what: str = "printing") -> None:
    """TermTooLargeError when writing ``roots`` out as trees (shared nodes expanded) passes ``limit`` nodes."""
    tree: dict[Term, int] = {}
    for node in postorder(roots):
        n = 1
        for a in node.args:
            n += tree[a]
        if n > limit:
            raise TermTooLargeError(f"{what} would expand shared nodes into more than {limit} tree nodes; use dprint()")
        tree[node] = n


def _infix_parts(node: Term) -> list:
    """Pieces (strings, or (term, parenthesise) pairs) that print ``node``, in reverse order."""
    op = node.op
    args = node.args
    notation = op.notation
    if notation == "leaf":
        return [name_text(node.attr[0]) if op.name == "symbol" else format_const(node.attr)]
    if notation == "infix" and op.chains and len(args) >= 2:
        return _chain_parts(node)
    if notation == "infix" and len(args) == 2:
        p = op.precedence
        left, right = args
        lp, rp = _prec(left), _prec(right)
        lneed, rneed = _NEEDS[op]
        lpar = lp < lneed
        # a right operand that starts with its sign needs no parentheses, however tightly the
        # operator binds: x**-y (the parser reads the sign as the start of the operand)
        rpar = rp < rneed and not (rp == PREC_UNARY and right.op.notation in ("prefix", "leaf"))
        sym = op.symbol
        sep = f" {sym} " if p <= 6 or sym == "@" else sym
        return [(right, rpar), sep, (left, lpar)]
    if notation == "prefix":
        (arg,) = args
        ap = _prec(arg)
        par = ap < op.precedence or arg.op.name == "const"
        sym = op.symbol + (" " if op.symbol.isalpha() else "")
        return [(arg, par), sym]
    if notation == "index":
        return _index_parts(node)
    return _call_parts(node)


def _chain_parts(node: Term) -> list:
    """Reversed pieces of ``a*b*c``: the operands of one variadic term, as the parser reads a flat chain.

    An operand of the same op is parenthesised (flat, it would join the chain), and so is every
    operand after the first that binds no tighter than the op: ``(a*b)*c`` is ``mul(mul(a, b), c)``,
    ``a*b*c`` is ``mul(a, b, c)``, ``a - b + c`` is ``add(sub(a, b), c)``.
    """
    op = node.op
    p = op.precedence
    sym = op.symbol
    sep = f" {sym} " if p <= 6 or sym == "@" else sym
    args = node.args
    parts: list = []
    for i in range(len(args) - 1, -1, -1):
        arg = args[i]
        ap = _prec(arg)
        same = arg.op is op and ap == p
        need = _NEEDS[op][0] if i == 0 else p + 1
        parts.append((arg, same or ap < need))
        if i:
            parts.append(sep)
    return parts


def _index_parts(node: Term) -> list:
    """Reversed pieces of ``T[i, j]``: the first operand indexed by the others."""
    args = node.args
    parts: list = ["]"]
    for i in range(len(args) - 1, 0, -1):
        parts.append((args[i], False))
        if i > 1:
            parts.append(", ")
    parts += ["[", (args[0], False)]
    return parts


def _call_parts(node: Term) -> list:
    """Reversed pieces of the call form ``name(a, b, attr=...)``."""
    op = node.op
    args = node.args
    parts: list = [")"]
    if op.attr_name is not None and node.attr is not None:
        parts.append(f", {op.attr_name}={node.attr!r}")
    for i in range(len(args) - 1, -1, -1):
        parts.append((args[i], False))
        if i:
            parts.append(", ")
    parts.append(op.name + "(")
    return parts


def emit(roots: list[Term], parts_of: Callable[[Term], list], opening: str = "(", closing: str = ")") -> str:
    """The text of ``roots`` (comma-separated), every format's one emitter, with an explicit stack.

    ``parts_of(node)`` is the format's table: the pieces of ``node`` in reverse order, strings
    and ``(operand, parenthesise)`` pairs; a parenthesised operand is wrapped in ``opening`` and
    ``closing``.
    """
    out: list[str] = []
    stack: list = []
    for i in range(len(roots) - 1, -1, -1):
        stack.append((roots[i], False))
        if i:
            stack.append(", ")
    while stack:
        item = stack.pop()
        if item.__class__ is str:
            out.append(item)
            continue
        node, par = item
        if par:
            stack.append(closing)
        stack.extend(parts_of(node))
        if par:
            stack.append(opening)
    return "".join(out)


def to_infix(term: Term, *, limit: int = MAX_PRINT_NODES) -> str:
    """Infix text with the fewest parentheses that still parses back to ``term``."""
    if not term.args and term.op.notation == "leaf":
        return _infix_parts(term)[0]
    check_tree_size((term,), limit)
    return emit([term], _infix_parts)


def _repr_parts(node: Term) -> list:
    op = node.op
    if op.name == "symbol":
        name, dtype, shape = node.attr
        extra = "" if dtype == "float64" else f", {dtype!r}"
        if shape:
            extra += f", shape=({', '.join(str(d) if d.__class__ is int else repr(str(d)) for d in shape)}"
            extra += ",)" if len(shape) == 1 else ")"
        return [f"Symbol({name!r}{extra}{assumptions_text(node.attr)})"]
    if op.name == "const":
        attr = node.attr
        if attr.__class__ is np.float32:
            return [f"const({single_text(attr)}, 'float32')"]
        if attr.__class__ is ExactName:
            return [f"exact_constant({attr.name!r})"]
        if attr.__class__ is Rational:
            return [format_const(attr)]
        if attr.__class__ is not ConstArray or attr.array.dtype != np.float32:
            return [f"const({format_const(attr)})"]
        return [f"const(array({attr.array.tolist()!r}), 'float32')"]
    return _call_parts(node)


def to_repr(term: Term, *, limit: int = MAX_PRINT_NODES) -> str:
    """Constructor form: ``add(Symbol('x'), const(1))``, evaluable with ``exprgraph`` names."""
    if term.args:
        check_tree_size((term,), limit)
    return emit([term], _repr_parts)


def _ident(n: int) -> str:
    letters = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        letters = chr(65 + r) + letters
    return letters


def _label(node: Term) -> str:
    op = node.op
    if op.name == "symbol":
        text = node.attr[0]
    elif op.name == "const":
        text = format_const(node.attr)
    else:
        text = op.name
        if op.attr_name is not None and node.attr is not None:
            text += f"{{{op.attr_name}={node.attr!r}}}"
    shape = "" if not node.shape else "[" + ", ".join(str(d) for d in node.shape) + "]"
    return f"{text} {node.dtype}{shape}"


def dformat(terms: Term | Iterable[Term], *, max_indent: int = 32, depth: int | None = None, ids: str = "CHAR") -> str:
    """A DAG listing: one line per node, a shared node expanded once and then cited by id.

    Indentation stops growing after ``max_indent`` levels (deeper lines show their depth as
    ``[depth]``), so the listing of a deep chain stays linear in its size. As PyTensor's
    ``debugprint``: ``depth`` lists that many levels only (None or -1: all), and ``ids`` names
    the shared nodes ``"CHAR"`` (A, B, ..., AA), ``"int"`` (0, 1, ...), ``"id"`` (Python's id)
    or ``""`` (no ids: a node met again shows its label and ···).
    """
    if ids not in ("CHAR", "int", "id", ""):
        raise ValueError(f"ids must be 'CHAR', 'int', 'id' or '', not {ids!r}")
    roots = [terms] if isinstance(terms, Term) else list(terms)
    limit = None if depth is None or depth < 0 else depth
    names: dict[Term, str] = {}
    shared = _shared(roots)
    lines: list[str] = []
    stack: list[tuple[Term, str, str, int]] = [(r, "", "", 0) for r in reversed(roots)]
    while stack:
        node, lead, cont, level = stack.pop()
        if level > max_indent:
            lead = f"{cont}[{level}] "
        if node in names:
            cited = f"[id {names[node]}]" if ids else _label(node)
            lines.append(f"{lead}{cited} ···")
            continue
        tag = ""
        if node in shared:
            n = len(names)
            names[node] = _ident(n) if ids == "CHAR" else str(n) if ids == "int" else str(id(node))
            tag = f" [id {names[node]}]" if ids else ""
        lines.append(f"{lead}{_label(node)}{tag}")
        args = node.args
        if limit is not None and level + 1 >= limit:
            continue  # the levels below are not listed
        for i in range(len(args) - 1, -1, -1):
            last = i == len(args) - 1
            if level >= max_indent:
                stack.append((args[i], cont, cont, level + 1))
            else:
                stack.append((args[i], cont + ("└─ " if last else "├─ "), cont + ("   " if last else "│  "), level + 1))
    return "\n".join(lines)


def _shared(roots: list[Term]) -> set[Term]:
    count: dict[Term, int] = {}
    for r in roots:
        count[r] = count.get(r, 0) + 1
    for node in postorder(roots):
        for a in node.args:
            count[a] = count.get(a, 0) + 1
    return {n for n, c in count.items() if c > 1 and n.args}


@overload
def dprint(terms: Term | Iterable[Term], file: Literal["str"], **options: Any) -> str: ...
@overload
def dprint(terms: Term | Iterable[Term], file: TextIO | None = None, **options: Any) -> None: ...


def dprint(terms: Term | Iterable[Term], file: TextIO | str | None = None, **options: Any) -> str | None:
    """Print :func:`dformat` of ``terms`` to ``file`` (stdout by default), or return it with ``file="str"``.

    ``options`` are dformat's (``max_indent``, ``depth``, ``ids``). The contract of PyTensor's
    ``debugprint`` and of ``FunctionGraph.dprint``: the text for ``"str"``, else None.
    """
    text = dformat(terms, **options)
    if isinstance(file, str):
        if file != "str":
            raise ValueError(f"file must be a stream, None or 'str', not {file!r}")
        return text
    print(text, file=file if file is not None else sys.stdout)
    return None


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(terms: Term | Iterable[Term], name: str = "expr") -> str:
    """Graphviz source of the DAG: one node per distinct term, edges labelled by operand index."""
    roots = [terms] if isinstance(terms, Term) else list(terms)
    order = postorder(roots)
    num = {node: i for i, node in enumerate(order)}
    lines = [f'digraph "{_dot_escape(name)}" {{', "  rankdir=BT;"]
    for node in order:
        shape = "box" if not node.args else "ellipse"
        lines.append(f'  n{num[node]} [label="{_dot_escape(_label(node))}", shape={shape}];')
    for node in order:
        for i, a in enumerate(node.args):
            lines.append(f'  n{num[a]} -> n{num[node]} [label="{i}"];')
    lines.append("}")
    return "\n".join(lines)


hooks.to_infix = to_infix
hooks.to_repr = to_repr
