"""The rule: a pattern and a right-hand side (a handler of the bindings, or a template).

Imports core, match and :mod:`.template`. The condition language of ``where="..."`` lives in
:mod:`.textual`, above this module: it registers its parser in :data:`condition_parser` when it
is imported. ``pattern >> rhs`` builds a :class:`Rule` through ``match.patterns.rule_maker``, set
here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import Op, Term, tree_map
from ..match import OpPattern, Pattern, Where
from ..match import patterns as _patterns
from ..match.compile import CompiledPattern, _MachineNeededError, compile_pattern
from ..match.matcher import solve
from ..match.patterns import format_pattern
from .template import Template

__all__ = ["Rule", "make_rule", "rule_name", "rebuild"]

#: ``parse_condition(text) -> test(bindings)``; set by :mod:`exprgraph.rules.textual` on import
condition_parser: Callable[[str], Callable[[dict], bool]] | None = None


def _describe(rhs: Any) -> str:
    if callable(rhs) and not isinstance(rhs, Pattern):
        return getattr(rhs, "__name__", "handler")
    return format_pattern(rhs)


class Rule:
    """A rewrite rule ``pattern -> rhs`` (``rhs``: a handler of the bindings, or a template).

    ``rule(expr)`` returns the rewritten expression, or ``expr`` itself when the pattern does not
    match or the handler returns ``None``. ``where`` (a callable of the bindings, or a condition
    string in the textual-rule language) filters matches; the matcher backtracks to find one
    that passes.
    """

    __slots__ = ("pattern", "rhs", "name", "where", "compiled", "template", "handler", "root_op", "__weakref__")

    def __init__(self, pattern: Any, rhs: Any, *, name: str | None = None, where: Any = None) -> None:
        self.pattern = pattern
        self.rhs = rhs
        self.where = where
        if callable(rhs) and not isinstance(rhs, (Pattern, Term)):
            self.handler = rhs
            self.template = None
        else:
            self.handler = None
            self.template = Template(rhs)
        test = _where_test(where)
        self.compiled: CompiledPattern = compile_pattern(Where(pattern, test) if test is not None else pattern)
        root = pattern
        self.root_op: Op | None = None
        if root.__class__ is OpPattern and isinstance(root.op, Op):  # (not a Var standing for the op)
            self.root_op = root.op
        elif root.__class__ is Term and root.args:
            self.root_op = root.op
        if name is None:
            name = f"{format_pattern(pattern)} -> {_describe(rhs)}"
            if isinstance(where, str):
                name += f" where {where}"
        self.name = name

    def match(self, expr: Any) -> dict[str, Any] | None:
        """The bindings of the first match that passes ``where``, or None."""
        return self.compiled.first(expr)

    def build(self, bindings: dict[str, Any], matched: Any = None) -> Any:
        """The right-hand side for these bindings (None if the handler declines)."""
        if self.template is not None:
            return self.template.fill(bindings, matched)
        return self.handler(**bindings)

    def apply(self, expr: Any) -> Any:
        """The rewritten expression, or None when the rule does not apply."""
        b = self.compiled.first(expr)
        if b is None:
            return None
        return self.build(b, expr)

    def __call__(self, expr: Any) -> Any:
        """Rewrite ``expr`` once at its root (Oryx semantics: unchanged when the rule does not apply)."""
        out = self.apply(expr)
        return expr if out is None else out

    def term_applier(self) -> Callable[[Term], Any]:
        """A fast ``term -> result or None`` closure for the rewrite driver."""
        fast = self.compiled.fast
        if fast is None:
            return _machine_applier(self.compiled.first, self.template, self.handler)
        return _fast_applier(fast, self.compiled, self.template, self.handler)

    def __repr__(self) -> str:
        return f"Rule({self.name!r})"


def _where_test(where: Any) -> Callable[[dict], bool] | None:
    if where is None:
        return None
    if isinstance(where, str):
        if condition_parser is None:
            raise TypeError("a condition string needs exprgraph.rules.textual (import exprgraph.rules)")
        return condition_parser(where)
    if callable(where):

        def test(b: dict) -> bool:
            return bool(where(**b))

        test.__name__ = getattr(where, "__name__", "where")
        return test
    raise TypeError(f"where must be a callable or a condition string, not {where!r}")


def _machine_applier(
    first: Callable[[Any], dict | None], template: Template | None, handler: Any
) -> Callable[[Term], Any]:
    """The applier of a rule whose pattern needs the goal machine (``first`` finds the bindings)."""
    if template is not None:
        fill = template.fill

        def apply_slow(e: Term) -> Any:
            b = first(e)
            return None if b is None else fill(b, e)

        return apply_slow

    def apply_slow_handler(e: Term) -> Any:
        b = first(e)
        return None if b is None else handler(**b)

    return apply_slow_handler


def _fast_applier(
    fast: Callable[[Any], Any], comp: CompiledPattern, template: Template | None, handler: Any
) -> Callable[[Term], Any]:
    """The applier of a rule with the compiled matcher ``fast`` (falling back to the machine on demand)."""
    pattern = comp.pattern
    cuts = comp.cuts

    def matcher(e: Term) -> dict | None:
        try:
            return fast(e)
        except _MachineNeededError:
            return next(solve(pattern, e, None, True, cuts), None)

    if template is not None:
        fill = template.fill
        program = template.program
        if template.root_literal is None and len(program) == 1 and program[0][0] == "var":
            name = program[0][1]

            def apply_var(e: Term) -> Any:  # the template is one variable: return its binding
                try:
                    b = fast(e)
                except _MachineNeededError:
                    b = matcher(e)
                return None if b is None else b[name]

            return apply_var

        def apply_template(e: Term) -> Any:
            try:
                b = fast(e)
            except _MachineNeededError:
                b = matcher(e)
            return None if b is None else fill(b, e)

        return apply_template

    def apply_handler(e: Term) -> Any:
        try:
            b = fast(e)
        except _MachineNeededError:
            b = matcher(e)
        return None if b is None else handler(**b)

    return apply_handler


def make_rule(pattern: Any, handler: Any, *, name: str | None = None, where: Any = None) -> Rule:
    """A rule replacing matches of ``pattern`` by ``handler(**bindings)`` (or by a template)."""
    return Rule(pattern, handler, name=name, where=where)


def rule_name(rule: Any) -> str:
    """A readable name for a rule or any rule-like callable."""
    name = getattr(rule, "name", None)
    if isinstance(name, str):
        return name
    return getattr(rule, "__name__", None) or repr(rule)


def rebuild(node: Any, children: list) -> Any:
    """``node`` with its children replaced, in order, by ``children`` (through ``tree_map``)."""
    it = iter(children)
    return tree_map(node, lambda _old: next(it))


_patterns.rule_maker = Rule
