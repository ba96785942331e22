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
with the position and a caret line; a text (a rule, or a whole rule file) longer than the parsers'
limit raises :class:`~exprgraph.errors.SizeLimitError` (see :func:`exprgraph.core.tokens.max_text`).
No string is ever evaluated as Python.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import Term
from ..core.parsing import tokenize
from ..core.tokens import check_text_size
from ..errors import ParseError, PatternError, RuleSyntaxError
from . import rule as _rule
from .conditions import _condition_test, parse_condition
from .rule import Rule
from .rule_checks import _validate
from .rule_parser import (
    _NAME_PREFIX,
    CONST,
    PREDICATES,
    _names,
    _parse_part,
    _split_rule,
)

__all__ = ["rule", "parse_rules", "parse_condition", "PREDICATES"]


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
    tag: str = "safe",
    guard: Callable[[Any, Any], bool] | None = None,
    doc: str = "",
) -> Rule | tuple[Rule, Rule]:
    """One rule from text: ``rule("x*1 -> x")``, ``rule("(x*y)/y -> x", where="y != 0")``.

    A bidirectional rule ``rule("a*(b + c) <-> a*b + a*c")`` returns the pair ``(forward, backward)``.
    ``tag``, ``guard`` and ``doc`` set those fields of the :class:`Rule` (its strength, the test
    its results must pass, a note on its algebra).
    """
    if not isinstance(text, str):
        raise TypeError(f"rule() takes a string, not {type(text).__name__}")
    check_text_size(text)
    body = text.split("#", 1)[0]
    if "\n" in body.strip():
        raise RuleSyntaxError("rule() takes one rule; use RuleSet.parse for several", text, body.strip().index("\n"))
    try:
        found = _parse_rule_line(body, functions, where, name)
        for r in found:
            r.tag, r.guard, r.doc = tag, guard, doc
        return found[0] if len(found) == 1 else (found[0], found[1])
    except RuleSyntaxError:
        raise
    except ParseError as exc:
        raise RuleSyntaxError(exc.msg, text, exc.pos) from None


def parse_rules(text: str, *, functions: dict[str, Callable] | None = None) -> list[Rule]:
    """The rules of a rule file: one per line, blank lines ignored; a ``#`` comment after a rule is its ``doc``."""
    if not isinstance(text, str):
        raise TypeError(f"parse_rules() takes a string, not {type(text).__name__}")
    check_text_size(text)  # the whole file: each line is checked again as it is tokenized
    rules = []
    offset = 0
    for raw in text.split("\n"):
        line, _, comment = raw.partition("#")
        if line.strip():
            try:
                found = _parse_rule_line(line, functions, None, None)
            except ParseError as exc:
                raise RuleSyntaxError(exc.msg, text, offset + exc.pos) from None
            for r in found:
                r.doc = comment.strip()
            rules.extend(found)
        offset += len(raw) + 1
    return rules


_rule.condition_parser = parse_condition
