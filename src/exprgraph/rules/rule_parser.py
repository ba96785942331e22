"""Parsing the sides of a textual rule into patterns (names become variables, ``_`` a wildcard).

The core infix parser (:mod:`exprgraph.core.parsing`, on the shared tokens of the expression
language, :mod:`exprgraph.core.tokens`) with pattern-building hooks, and the
splitting of a rule line into name, sides and condition. Imports core and match only.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import Term, get_op
from ..core.parsing import _Parser
from ..core.tokens import EXPRESSION, Lexicon, tokenize
from ..errors import ParseError, PatternError
from ..match import Dot, OpPattern, Segment, Var
from ..match.patterns import pattern_children

__all__ = ["PREDICATES"]


CONST = get_op("const")


SYMBOL = get_op("symbol")


_NAME_PREFIX = re.compile(r"\s*([A-Za-z_][A-Za-z_0-9]*)\s*:(?!=)")


_RESERVED = frozenset({"where"})

#: rule text's tokens: the expression language's and the arrow between the sides
RULE = Lexicon((*EXPRESSION.operators, "->"), words=EXPRESSION.words)


def _num(v: Any) -> Any:
    """The number a value stands for (a scalar constant's value), or None."""
    if v.__class__ is Term:
        if v.op is CONST and v.attr.__class__ in (bool, int, float):
            return v.attr
        return None
    if isinstance(v, (bool, int, float, np.number, np.bool_)):
        return v.item() if isinstance(v, np.generic) else v
    return None


def _dtype_of(v: Any) -> str | None:
    if v.__class__ is Term:
        return v.dtype
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int64"
    if isinstance(v, (float, np.floating)):
        return "float64"
    return None


#: predicates usable in conditions: name -> function of the values (True, False or None for unknown)
PREDICATES: dict[str, Callable[..., Any]] = {
    "is_const": lambda v: _num(v) is not None or (v.__class__ is Term and v.op is CONST),
    "is_symbol": lambda v: v.__class__ is Term and v.op is SYMBOL,
    "is_int": lambda v: _dtype_of(v) == "int64",
    "is_float": lambda v: _dtype_of(v) == "float64",
    "is_bool": lambda v: _dtype_of(v) == "bool",
    "is_scalar": lambda v: (v.shape == ()) if v.__class__ is Term else _num(v) is not None,
}


class _Pred:
    """A predicate function in a condition (shaped like an op for the core parser)."""

    __slots__ = ("name", "fn", "attr_name", "notation")

    def __init__(self, name: str, fn: Callable[..., Any]) -> None:
        self.name = name
        self.fn = fn
        self.attr_name = None
        self.notation = "call"


class _PredCall:
    __slots__ = ("pred", "args")

    def __init__(self, pred: _Pred, args: tuple) -> None:
        self.pred = pred
        self.args = args


def _check_predicate_arity(pred: _Pred, n: int, parser: _PatternParser, pos: int) -> None:
    """A condition's predicate called with a count of arguments its function cannot take."""
    try:
        signature = inspect.signature(pred.fn)
    except (TypeError, ValueError):
        return  # a builtin without a signature: it answers for itself (None, unknown) when called
    try:
        signature.bind(*range(n))
    except TypeError:
        raise parser.fail(f"{pred.name}() cannot take {n} argument(s)", pos) from None


class _PatternParser(_Parser):
    """The core infix parser, building patterns: names become variables, ``_`` a wildcard."""

    def __init__(self, text: str, tokens: list, functions: dict[str, Callable] | None, allow_preds: bool) -> None:
        super().__init__(text, {}, "float64", False)
        self.tokens = tokens
        self.functions = functions or {}
        self.allow_preds = allow_preds
        self.name_pos: dict[str, int] = {}
        self.wild_pos: int | None = None
        #: source position of each pattern node made (by id), for errors found after parsing
        self.positions: dict[int, int] = {}

    def symbol(self, name: str, pos: int) -> Any:
        if name in _RESERVED:
            raise self.fail(f"{name!r} is a keyword here", pos)
        if name == "_":
            if self.wild_pos is None:
                self.wild_pos = pos
            return Dot
        self.name_pos.setdefault(name, pos)
        var = Var(name)
        self.positions[id(var)] = pos
        return var

    def build(self, op: Any, args: tuple, attr: Any, pos: int) -> Any:
        if op.__class__ is _Pred:
            _check_predicate_arity(op, len(args), self, pos)
            return _PredCall(op, args)
        try:
            node = OpPattern(op, args, attr)
        except PatternError as exc:
            raise self.fail(str(exc), pos) from None
        self.positions[id(node)] = pos
        return node

    def open_call(self, name: str, pos: int) -> None:
        if self.allow_preds:
            fn = self.functions.get(name) or PREDICATES.get(name)
            if fn is not None:
                self.ops.append(("call", _Pred(name, fn), pos, len(self.operands), {}))
                return
        super().open_call(name, pos)

    def operand(self, kind: str, value: str, pos: int) -> bool:
        if kind == "op" and value == "*":
            nk, nv, _npos = self.peek(1)
            if nk == "name":
                top = self.ops[-1] if self.ops else None
                prev = self.tokens[self.i - 1][1] if self.i > 0 else ""
                after = self.peek(2)[1]
                if top is None or top[0] != "call" or prev not in ("(", ",") or after not in (",", ")"):
                    raise self.fail(f"a segment *{nv} must be a whole argument of a function call", pos)
                self.i += 2
                self.name_pos.setdefault(nv, pos)
                seg = Segment(nv)
                self.positions[id(seg)] = pos
                self.operands.append(seg)
                return False
        return super().operand(kind, value, pos)


def _names(p: Any) -> set[str]:
    out: set[str] = set()
    stack = [p]
    while stack:
        node = stack.pop()
        if node.__class__ is Var or node.__class__ is Segment:
            if node.name is not None:
                out.add(node.name)
        elif node.__class__ is _PredCall:
            stack.extend(node.args)
        elif node.__class__ is not Term:
            stack.extend(pattern_children(node))
    return out


def _parse_part(
    line: str, tokens: list, end: int, functions: dict | None, allow_preds: bool, what: str, at: int
) -> tuple[Any, _PatternParser]:
    if not tokens:
        raise ParseError(f"missing {what}", line, at)
    parser = _PatternParser(line, [*tokens, ("end", "", end)], functions, allow_preds)
    return parser.parse(), parser


def _split_rule(line: str) -> tuple[str | None, str, list, list, list | None, tuple[int, int, int]]:
    """Split one rule line into its name, lhs/rhs/condition tokens and the part boundaries."""
    name = None
    masked = line
    m = _NAME_PREFIX.match(line)
    if m and "->" in line[m.end() :]:
        name = m.group(1)
        masked = " " * m.end() + line[m.end() :]
    tokens = tokenize(masked, RULE)[:-1]
    arrow, where = _find_arrow(tokens, line, 0)
    if arrow < 0:  # unbalanced brackets hide the arrow: take one at any depth, the parser will complain
        arrow, where = _find_arrow(tokens, line, None)
    if arrow < 0:
        raise ParseError("expected '->' between the two sides of the rule", line, len(line.rstrip()))
    lhs = tokens[:arrow]
    rhs = tokens[arrow + 1 : where if where >= 0 else len(tokens)]
    cond = tokens[where + 1 :] if where >= 0 else None
    arrow_pos = tokens[arrow][2]
    where_pos = tokens[where][2] if where >= 0 else len(line)
    return name, masked, lhs, rhs, cond, (arrow_pos, where_pos, len(line))


def _find_arrow(tokens: list, line: str, at_depth: int | None) -> tuple[int, int]:
    """Token indices of ``->`` and ``where`` (-1 if absent) at bracket depth ``at_depth`` (None: any)."""
    depth = 0
    arrow = where = -1
    for t, (kind, value, pos) in enumerate(tokens):
        if value in ("(", "["):
            depth += 1
        elif value in (")", "]"):
            depth -= 1
        elif at_depth is not None and depth != at_depth:
            continue
        elif kind == "op" and value == "->":
            if arrow >= 0:
                raise ParseError("a rule has one '->'", line, pos)
            arrow = t
        elif kind == "name" and value == "where":
            if arrow < 0:
                raise ParseError("'where' comes after the right-hand side", line, pos)
            if where >= 0:
                raise ParseError("a rule has one 'where'", line, pos)
            where = t
    return arrow, where
