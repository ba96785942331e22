"""Textual rules: ``rule("x*1 -> x")``, ``rule("(x*y)/y -> x", where="y != 0")``, ``RuleSet.parse(text)``.

Syntax of one rule (one per line in a rule file, ``#`` starts a comment)::

    [name:] lhs -> rhs [where condition]
    [name:] lhs <-> rhs [where condition]     (both directions: two rules, the second named name-rev)

Both sides use the infix syntax of :func:`exprgraph.parse` (same operators, precedences and
function calls). The *variables* are the names on the left; ``_`` is an anonymous wildcard and
``*rest`` (a whole argument of a call such as ``add(x, *rest)``) a segment of operands. Numbers
match constants by value. A right-hand side literal takes the dtype of the matched term when
that loses nothing (``x*0 -> 0`` on a float gives ``0.0``).

Conditions are decided conservatively, on constants and identical terms only: ``y != 0`` holds
when ``y`` is a non-zero constant, not for a symbol whose value is unknown, and a rule fires only
when its condition is *known* to hold. Comparisons, ``and``/``or``/``not``, arithmetic and the
predicates ``is_const``, ``is_symbol``, ``is_int``, ``is_float``, ``is_bool``, ``is_scalar`` are
available; ``functions=`` adds your own. Errors raise :class:`~exprgraph.errors.RuleSyntaxError`
with the position and a caret line. No string is ever evaluated as Python.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from itertools import product
from typing import Any

import numpy as np

from ..core import DTYPES, Op, Symbol, Term, get_op
from ..core.op import MAX_RANK, any_kind, result_kinds
from ..core.parsing import _Parser, tokenize
from ..errors import ParseError, PatternError, RuleSyntaxError, ShapeError
from ..match import Dot, OpPattern, Pattern, Segment, Star, Var
from ..match.patterns import pattern_children
from . import rule as _rule
from .rule import Rule

__all__ = ["rule", "parse_rules", "parse_condition", "PREDICATES"]

CONST = get_op("const")
SYMBOL = get_op("symbol")
_NAME_PREFIX = re.compile(r"\s*([A-Za-z_][A-Za-z_0-9]*)\s*:(?!=)")
_RESERVED = frozenset({"where"})


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
    tokens = tokenize(masked)[:-1]
    arrow, where = _find_arrow(tokens, line, 0)
    if arrow < 0:  # unbalanced brackets hide the arrow: take one at any depth, the parser will complain
        arrow, where = _find_arrow(tokens, line, None)
    if arrow < 0:
        raise ParseError("expected '->' between the two sides of the rule", line, len(line.rstrip()))
    lhs = tokens[:arrow]
    rhs = tokens[arrow + 2 : where if where >= 0 else len(tokens)]
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
        elif value == "-" and t + 1 < len(tokens) and tokens[t + 1][1] == ">" and tokens[t + 1][2] == pos + 1:
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


# -- validation: what would fail every time the rule fires is refused when it is made ------------------


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


def _parse_line(line: str, functions: dict | None, where: Any, name: str | None) -> Rule:
    rule_name, masked, lhs_t, rhs_t, cond_t, (arrow_pos, where_pos, end) = _split_rule(line)
    start = lhs_t[0][2] if lhs_t else arrow_pos
    lhs, lparser = _parse_part(masked, lhs_t, arrow_pos, functions, False, "left-hand side before '->'", start)
    rhs, rparser = _parse_part(masked, rhs_t, where_pos, functions, False, "right-hand side after '->'", arrow_pos + 2)
    if rparser.wild_pos is not None:
        raise ParseError("'_' matches anything; it cannot be used on the right-hand side", line, rparser.wild_pos)
    if rhs.__class__ is Term and rhs.op is CONST and rhs.attr.__class__ in (bool, int, float):
        rhs = rhs.attr  # a bare number takes the matched term's dtype (see Template)
    bound = _names(lhs)
    for nm, pos in rparser.name_pos.items():
        if nm not in bound:
            raise ParseError(f"{nm!r} on the right-hand side is not a variable of the left-hand side", line, pos)
    _validate(lhs, rhs, lparser, rparser, line)
    tests = []
    if cond_t is not None:
        cond, cparser = _parse_part(masked, cond_t, end, functions, True, "condition after 'where'", where_pos + 5)
        for nm, pos in cparser.name_pos.items():
            if nm not in bound:
                raise ParseError(f"{nm!r} in the condition is not a variable of the left-hand side", line, pos)
        tests.append(_condition_test(cond, line[where_pos + 5 :].strip()))
    if where is not None:
        tests.append(where if callable(where) else parse_condition(where, functions=functions, names=bound))
    test = _all_of(tests)
    text = line[len(line) - len(line.lstrip()) :].strip()
    if rule_name is not None:
        text = text[text.index(":") + 1 :].strip()
    if isinstance(where, str):
        text += f"  [where {where}]"
    return Rule(lhs, rhs, name=name or rule_name or text, where=test)


def _all_of(tests: list) -> Any:
    if not tests:
        return None
    callables = []
    for t in tests:
        if getattr(t, "_is_condition", False):
            callables.append(t)
        else:
            callables.append(_kw_test(t))

    def where(**b: Any) -> bool:
        return all(c(b) for c in callables)

    return where


def _kw_test(fn: Callable) -> Callable[[dict], bool]:
    def test(b: dict) -> bool:
        return bool(fn(**b))

    return test


def _bidirectional_arrow(line: str) -> int:
    """Position of the ``<`` of a top-level ``<->`` in a rule line, or -1."""
    m = _NAME_PREFIX.match(line)
    if m and "->" in line[m.end() :]:
        line = " " * m.end() + line[m.end() :]
    try:
        tokens = tokenize(line)[:-1]
    except ParseError:
        return -1
    depth = 0
    for t, (_kind, value, pos) in enumerate(tokens):
        if value in ("(", "["):
            depth += 1
        elif value in (")", "]"):
            depth -= 1
        elif (
            value == "<"
            and depth == 0
            and t + 2 < len(tokens)
            and (tokens[t + 1][1], tokens[t + 1][2], tokens[t + 2][1], tokens[t + 2][2]) == ("-", pos + 1, ">", pos + 2)
        ):
            return pos
    return -1


def _parse_rule_line(line: str, functions: dict | None, where: Any, name: str | None) -> list[Rule]:
    """The rule of one line; a bidirectional ``lhs <-> rhs`` gives two rules, one per direction."""
    at = _bidirectional_arrow(line)
    if at < 0:
        return [_parse_line(line, functions, where, name)]
    forward = _parse_line(line[:at] + " " + line[at + 1 :], functions, where, name)  # same offsets
    template = forward.template
    if template is None:  # pragma: no cover - a parsed rule has a template
        raise ParseError("a bidirectional rule needs a template on the right", line, at)
    lhs_names, rhs_names = _names(forward.pattern), _names(template.source)
    if lhs_names != rhs_names:
        raise ParseError("both sides of a bidirectional rule '<->' must use the same variables", line, at)
    try:
        backward = Rule(template.source, forward.pattern, where=forward.where)
    except PatternError as exc:
        raise ParseError(f"a bidirectional rule '<->' cannot reverse: {exc}", line, at) from None
    m = _NAME_PREFIX.match(line)
    label = name or (m.group(1) if m else None)
    if label is not None:
        forward.name, backward.name = label, f"{label}-rev"
    else:
        lhs_text = line[:at].strip()
        rhs_text, _, cond = line[at + 3 :].partition(" where ")
        cond = f" where {cond.strip()}" if cond.strip() else ""
        if isinstance(where, str):
            cond += f"  [where {where}]"
        forward.name = f"{lhs_text} -> {rhs_text.strip()}{cond}"
        backward.name = f"{rhs_text.strip()} -> {lhs_text}{cond}"
    return [forward, backward]


def rule(
    text: str,
    *,
    where: str | Callable[..., bool] | None = None,
    name: str | None = None,
    functions: dict[str, Callable] | None = None,
) -> Rule | tuple[Rule, Rule]:
    """One rule from text: ``rule("x*1 -> x")``, ``rule("(x*y)/y -> x", where="y != 0")``.

    A bidirectional rule ``rule("a*(b + c) <-> a*b + a*c")`` returns the pair ``(forward, backward)``.
    """
    if not isinstance(text, str):
        raise TypeError(f"rule() takes a string, not {type(text).__name__}")
    body = text.split("#", 1)[0]
    if "\n" in body.strip():
        raise RuleSyntaxError("rule() takes one rule; use RuleSet.parse for several", text, body.strip().index("\n"))
    try:
        found = _parse_rule_line(body, functions, where, name)
        return found[0] if len(found) == 1 else (found[0], found[1])
    except RuleSyntaxError:
        raise
    except ParseError as exc:
        raise RuleSyntaxError(exc.msg, text, exc.pos) from None


def parse_rules(text: str, *, functions: dict[str, Callable] | None = None) -> list[Rule]:
    """The rules of a rule file: one per line, blank lines and ``#`` comments ignored."""
    if not isinstance(text, str):
        raise TypeError(f"parse_rules() takes a string, not {type(text).__name__}")
    rules = []
    offset = 0
    for raw in text.split("\n"):
        line = raw.split("#", 1)[0]
        if line.strip():
            try:
                rules.extend(_parse_rule_line(line, functions, None, None))
            except ParseError as exc:
                raise RuleSyntaxError(exc.msg, text, offset + exc.pos) from None
        offset += len(raw) + 1
    return rules


# -- conditions ------------------------------------------------------------------------------------------


def parse_condition(
    text: str, *, functions: dict[str, Callable] | None = None, names: set[str] | None = None
) -> Callable[[dict], bool]:
    """A condition string compiled to ``test(bindings) -> bool`` (True only when it surely holds)."""
    if not isinstance(text, str):
        raise TypeError(f"a condition is a string, not {type(text).__name__}")
    try:
        tokens = tokenize(text)
        cond, parser = _parse_part(text, tokens[:-1], len(text), functions, True, "condition", 0)
        if parser.wild_pos is not None:
            raise ParseError("'_' cannot be used in a condition", text, parser.wild_pos)
        if names is not None:
            for nm, pos in parser.name_pos.items():
                if nm not in names:
                    raise ParseError(f"{nm!r} in the condition is not a variable of the left-hand side", text, pos)
    except RuleSyntaxError:
        raise
    except ParseError as exc:
        raise RuleSyntaxError(exc.msg, text, exc.pos) from None
    return _condition_test(cond, text)


def _condition_program(cond: Any) -> tuple:
    program: list[tuple] = []
    stack: list[tuple[Any, bool]] = [(cond, False)]
    while stack:
        node, expanded = stack.pop()
        cls = node.__class__
        if cls is Var:
            program.append(("var", node.name))
        elif cls is Segment:
            raise PatternError("a segment cannot appear in a condition")
        elif cls is OpPattern or cls is _PredCall:
            if expanded:
                program.append(
                    (
                        "op" if cls is OpPattern else "pred",
                        node.op if cls is OpPattern else node.pred.fn,
                        len(node.args),
                        getattr(node, "attr", None),
                    )
                )
            else:
                stack.append((node, True))
                stack.extend((a, False) for a in reversed(node.args))
        else:
            program.append(("lit", node))
    return tuple(program)


_COMPARE = {
    "lt": (np.less, False),
    "le": (np.less_equal, True),
    "gt": (np.greater, False),
    "ge": (np.greater_equal, True),
    "eq": (np.equal, True),
    "ne": (np.not_equal, False),
}


def _apply(op: Any, args: list, attr: Any) -> Any:
    """One op of a condition on values (numbers, terms, or None for unknown)."""
    name = op.name
    if name == "logical_not":
        v = _truth(args[0])
        return None if v is None else not v
    if name in ("logical_and", "logical_or"):
        vals = [_truth(a) for a in args]
        if name == "logical_and":
            return False if False in vals else (None if None in vals else True)
        return True if True in vals else (None if None in vals else False)
    if any(a is None for a in args):
        return None
    nums = [_num(a) for a in args]
    if name in _COMPARE:
        fn, on_identical = _COMPARE[name]
        a, b = nums
        if a is not None and b is not None:
            with np.errstate(all="ignore"):
                return bool(fn(a, b))
        if args[0].__class__ is Term and args[0] is args[1]:
            return on_identical
        return None
    if all(n is not None for n in nums):
        impl = op.impl if op.impl is not None else op.ufunc
        if impl is not None:
            try:
                with np.errstate(all="ignore"):
                    out = impl(*nums, attr=attr) if op.impl is not None and op.attr_name else impl(*nums)
                return out.item() if isinstance(out, np.generic) else out
            except Exception:
                return None
    try:
        return op(*args, attr=attr)
    except Exception:
        return None


def _truth(v: Any) -> bool | None:
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    n = _num(v)
    if n is not None:
        return bool(n)
    return None


def _condition_test(cond: Any, text: str) -> Callable[[dict], bool]:
    program = _condition_program(cond)

    def test(b: dict) -> bool:
        vals: list[Any] = []
        for kind, *rest in program:
            if kind == "var":
                vals.append(b.get(rest[0]))
            elif kind == "lit":
                vals.append(rest[0])
            else:
                fn, n, attr = rest
                args = vals[len(vals) - n :]
                del vals[len(vals) - n :]
                if kind == "op":
                    vals.append(_apply(fn, args, attr))
                else:
                    try:
                        vals.append(None if any(a is None for a in args) else fn(*args))
                    except Exception:
                        vals.append(None)
        return _truth(vals[0]) is True

    test.__name__ = f"where {text}"
    test._is_condition = True  # type: ignore[attr-defined]
    return test


_rule.condition_parser = parse_condition
