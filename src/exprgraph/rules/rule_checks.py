"""Checks a textual rule passes when it is made: what would fail every time the rule fires is refused.

Segment splices that cannot fit, predicates called with the wrong arity, right-hand sides of
impossible dtype or rank. Imports core, match and :mod:`.rule_parser`.
"""

from __future__ import annotations

from itertools import product
from typing import Any

from ..core import DTYPES, Op, Symbol, Term
from ..core.op import MAX_RANK, any_kind, result_kinds
from ..errors import ParseError, ShapeError
from ..match import Dot, OpPattern, Pattern, Segment, Star, Var
from .rule_parser import (
    CONST,
    _PatternParser,
)


def _pattern_postorder(root: Any) -> list[Any]:
    """The pattern nodes under ``root`` (operands of op patterns), children first, iteratively."""
    out: list[Any] = []
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            out.append(node)
            continue
        stack.append((node, True))
        if node.__class__ is OpPattern:
            stack.extend((a, False) for a in reversed(node.args))
    return out


def _segment_ranges(lhs: Any) -> dict[str, tuple[int, int | None]]:
    """For each ``*name`` of the left-hand side, how many operands it can hold: ``(least, most or None)``."""
    ranges: dict[str, tuple[int, int | None]] = {}
    for node in _pattern_postorder(lhs):
        if node.__class__ is not OpPattern or not isinstance(node.op, Op) or not node.has_star:
            continue
        lo, hi = node.op.arity
        stars = [a for a in node.args if isinstance(a, Star)]
        fixed = len(node.args) - len(stars)
        for seg in stars:
            if seg.__class__ is not Segment:
                continue
            least = max(0, lo - fixed) if len(stars) == 1 else 0
            most = None if hi is None else max(0, hi - fixed)
            if seg.name in ranges:  # a name seen twice is the same run: both bounds hold
                old_lo, old_hi = ranges[seg.name]
                least = max(least, old_lo)
                most = old_hi if most is None else most if old_hi is None else min(most, old_hi)
            ranges[seg.name] = (least, most)
    return ranges


def _describe_count(least: int, most: int | None) -> str:
    if most is None:
        return f"{least} or more"
    return str(least) if least == most else f"{least} to {most}"


def _check_splices(lhs: Any, rhs: Any, rparser: _PatternParser, line: str) -> None:
    """``*name`` on the right only for a run of the left, a run only spliced, and op arities that always hold."""
    runs = _segment_ranges(lhs)
    for node in _pattern_postorder(rhs):
        cls = node.__class__
        pos = rparser.positions.get(id(node), 0)
        if cls is Segment and node.name not in runs:
            raise ParseError(
                f"*{node.name} splices a run of operands, but {node.name!r} matches one term on the left-hand side "
                f"(write {node.name} without '*')",
                line,
                pos,
            )
        if cls is Var and node.name in runs:
            raise ParseError(
                f"{node.name!r} is a run of operands on the left-hand side (*{node.name}): splice it as *{node.name}",
                line,
                pos,
            )
        if cls is not OpPattern or node.op.__class__ is Var or not node.has_star:
            continue
        least = sum(1 for a in node.args if a.__class__ is not Segment)
        most: int | None = least
        for a in node.args:
            if a.__class__ is Segment:
                lo, hi = runs[a.name]
                least += lo
                most = None if most is None or hi is None else most + hi
        lo, hi = node.op.arity
        if least < lo or (hi is not None and (most is None or most > hi)):
            raise ParseError(
                f"{node.op.name} takes {_describe_count(lo, hi)} operand(s), but here it may get "
                f"{_describe_count(least, most)}",
                line,
                pos,
            )


def _max_rank(*roots: Any) -> int:
    """A rank high enough for every axis written in the rule (``sum(x, axis=5)`` needs 6)."""
    rank = 2
    for root in roots:
        for node in _pattern_postorder(root):
            if (
                node.__class__ is OpPattern
                and isinstance(node.op, Op)
                and node.attr is not None
                and node.op.attr_name is not None
            ):
                axes = node.attr if isinstance(node.attr, tuple) else (node.attr,)
                for a in axes:
                    if isinstance(a, int) and not isinstance(a, bool):
                        rank = max(rank, a + 1 if a >= 0 else -a)
    return min(rank, MAX_RANK)


def _constant_kinds(t: Term, rank: int) -> frozenset | None:
    if t.op is not CONST:
        return None
    if t.shape:
        return frozenset((d, t.shape) for d in DTYPES)  # an array literal matches its values, any dtype
    return frozenset((d, ()) for d in DTYPES)  # a number matches constants of any dtype by value


def _check_kinds(root: Any, parser: _PatternParser, line: str, rank: int) -> None:
    """Refuse an op pattern that no operands of any dtype and shape could satisfy (``x @ 2``)."""
    kinds: dict[int, frozenset | None] = {}
    generic = any_kind(rank)
    for node in _pattern_postorder(root):
        cls = node.__class__
        if cls is Var or node is Dot:
            kinds[id(node)] = generic
        elif cls is Term:
            kinds[id(node)] = _constant_kinds(node, rank)
        elif cls is OpPattern and node.op.__class__ is not Var and not node.has_star:
            args = tuple(kinds.get(id(a)) for a in node.args)
            attr = node.attr
            if any(a is None for a in args) or isinstance(attr, Pattern):
                kinds[id(node)] = None
                continue
            found = result_kinds(node.op, args, attr)
            if found is not None and not found:
                raise ParseError(_why_not(node.op, args, attr), line, parser.positions.get(id(node), 0))
            kinds[id(node)] = found
        else:
            kinds[id(node)] = None


def _why_not(op: Any, args: tuple, attr: Any) -> str:
    """The op's own complaint about the combination of operand kinds of highest rank (all of them fail)."""
    for combo in sorted(product(*args), key=lambda c: -sum(len(shape) for _, shape in c)):
        try:
            op.check(tuple(Symbol("_", d, shape) for d, shape in combo), attr)
        except (ShapeError, TypeError, ValueError) as exc:
            return f"{op.name} cannot apply here, whatever the operands' shapes: {exc}"
    return f"{op.name} cannot apply here, whatever the operands' shapes"  # pragma: no cover


def _validate(lhs: Any, rhs: Any, lparser: _PatternParser, rparser: _PatternParser, line: str) -> None:
    """Check a rule completely when it is made: splices, arities and shapes on both sides."""
    _check_splices(lhs, rhs, rparser, line)
    rank = _max_rank(lhs, rhs)
    _check_kinds(lhs, lparser, line, rank)
    _check_kinds(rhs, rparser, line, rank)
