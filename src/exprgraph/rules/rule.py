"""The rule: a pattern and a right-hand side (a handler of the bindings, or a template), or a
Python function of the whole term; with a condition, a name, a strength tag and a guard.

:class:`Rule` is the one rule class: rule text, ``make_rule``, ``pattern >> rhs``, the
simplifier's ``GuardedRule``, kanren relations, plain functions in a rule set and the graph's
pattern rewriters all build (or are) a Rule, and :func:`as_rule` reads any rule-like callable.

Imports core, match and :mod:`.template`. The condition language of ``where="..."`` lives in
:mod:`.textual`, above this module: it registers its parser in :data:`condition_parser` when it
is imported. ``pattern >> rhs`` builds a :class:`Rule` through ``match.patterns.rule_maker``, set
here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..core import Op, Term, as_term, get_op, tree_map
from ..match import OpPattern, Pattern, Where
from ..match import patterns as _patterns
from ..match.compile import CompiledPattern, _MachineNeededError, compile_pattern
from ..match.matcher import solve
from ..match.patterns import format_pattern
from .template import Template

__all__ = ["Rule", "TAGS", "as_rule", "keeps_dtype", "make_rule", "rule_name", "rebuild"]

#: ``parse_condition(text) -> test(bindings)``; set by :mod:`exprgraph.rules.textual` on import
condition_parser: Callable[[str], Callable[[dict], bool]] | None = None


def _describe(rhs: Any) -> str:
    if callable(rhs) and not isinstance(rhs, Pattern):
        return getattr(rhs, "__name__", "handler")
    return format_pattern(rhs)


#: the usual strength tags: exact rewrites, those exact only for finite (or non-zero) values,
#: numerically stable forms, and cheaper operations (any other string is allowed too)
TAGS = ("safe", "unsafe", "stabilize", "specialize")


class Rule:
    """A rewrite rule: a pattern and a result, a condition, a name, a strength tag and a guard.

    The result is a template (a pattern-like tree filled in with the bindings), a handler
    ``fn(**bindings) -> term or None``, or, for a rule without a pattern (``pattern=None``, see
    :meth:`of_function`), a Python function of the whole term ``fn(term) -> term`` (None, or the
    term itself, when it does not apply) tried on terms whose op is in ``ops``.

    ``rule(expr)`` returns the rewritten expression, or ``expr`` itself when the pattern does not
    match or the result declines. ``where`` (a callable of the bindings, or a condition string in
    the textual-rule language) filters matches; the matcher backtracks to find one that passes.
    ``tag`` says how strong the rule is (``"safe"``: exact; ``"unsafe"``: exact only for finite or
    non-zero values; ``"stabilize"``, ``"specialize"``...); ``guard(term, result)`` must hold for
    a result to be taken (:func:`keeps_dtype` declines a change of dtype). Every engine reads this
    one class: the term rewriter (:func:`~exprgraph.rules.rewrite`), the graph rewriters and the
    e-graphs.
    """

    __slots__ = (
        "pattern",
        "rhs",
        "name",
        "where",
        "condition",
        "tag",
        "guard",
        "doc",
        "function",
        "compiled",
        "template",
        "handler",
        "root_op",
        "root_ops",
        "leaves",
        "__weakref__",
    )

    def __init__(
        self,
        pattern: Any,
        rhs: Any,
        *,
        name: str | None = None,
        where: Any = None,
        tag: str = "safe",
        guard: Callable[[Any, Any], bool] | None = None,
        doc: str = "",
        ops: Iterable[Any] = (),
        leaves: bool = True,
    ) -> None:
        self.pattern = pattern
        #: whether the rule may apply to a term without operands (False: the driver need not visit leaves for it)
        self.leaves = leaves
        self.rhs = rhs
        self.where = where
        self.condition = _where_test(where)  # where as a test of the bindings (None: always)
        self.tag = tag
        self.guard = guard
        self.doc = doc
        self.function: Callable[[Any], Any] | None = None
        self.handler: Callable[..., Any] | None = None
        self.template: Template | None = None
        self.root_op: Op | None = None
        if pattern is None:
            self._init_function(rhs, ops)
        else:
            self._init_pattern(pattern, rhs)
        if name is None:
            name = f"{format_pattern(pattern)} -> {_describe(rhs)}" if pattern is not None else _describe(rhs)
            if isinstance(where, str):
                name += f" where {where}"
        self.name = name

    def _init_pattern(self, pattern: Any, rhs: Any) -> None:
        if callable(rhs) and not isinstance(rhs, (Pattern, Term)):
            self.handler = rhs
        else:
            self.template = Template(rhs)
        test = self.condition
        self.compiled: CompiledPattern | None = compile_pattern(Where(pattern, test) if test is not None else pattern)
        if pattern.__class__ is OpPattern and isinstance(pattern.op, Op):  # (not a Var standing for the op)
            self.root_op = pattern.op
        elif pattern.__class__ is Term and pattern.args:
            self.root_op = pattern.op
        self.root_ops: tuple[Op, ...] = (self.root_op,) if self.root_op is not None else ()

    def _init_function(self, fn: Any, ops: Iterable[Any]) -> None:
        if not callable(fn):
            raise TypeError(f"a rule without a pattern needs a function of the term, not {fn!r}")
        if self.condition is not None:
            raise TypeError("a rule without a pattern has no bindings for a where condition")
        self.function = fn
        self.compiled = None
        self.root_ops = tuple(get_op(o) if isinstance(o, str) else o for o in ops)
        self.root_op = self.root_ops[0] if len(self.root_ops) == 1 else None

    @classmethod
    def of_function(
        cls,
        fn: Callable[[Any], Any],
        *,
        name: str | None = None,
        ops: Iterable[Any] = (),
        tag: str = "safe",
        guard: Callable[[Any, Any], bool] | None = None,
        doc: str = "",
        leaves: bool = True,
    ) -> Rule:
        """A rule whose result is ``fn(term)`` (None or ``term``: no rewrite), tried on ``ops`` (all if empty;
        ``leaves=False``: never on a term without operands, where ``fn`` must then decline)."""
        return cls(None, fn, name=name, ops=ops, tag=tag, guard=guard, doc=doc, leaves=leaves)

    @property
    def unsafe(self) -> bool:
        """Whether the rule holds only for finite (or non-zero) values (``tag == "unsafe"``)."""
        return self.tag == "unsafe"

    def match(self, expr: Any) -> dict[str, Any] | None:
        """The bindings of the first match that passes ``where``, or None (always None without a pattern)."""
        return None if self.compiled is None else self.compiled.first(expr)

    def build(self, bindings: dict[str, Any], matched: Any = None) -> Any:
        """The right-hand side for these bindings (None if the handler declines)."""
        if self.template is not None:
            return self.template.fill(bindings, matched)
        if self.handler is not None:
            return self.handler(**bindings)
        raise TypeError(f"rule {self.name!r} has no pattern: call apply(term)")

    def apply(self, expr: Any) -> Any:
        """The rewritten expression, or None when the rule does not apply."""
        if self.function is not None:
            out = self.function(expr)
            if out is expr:
                return None
        else:
            assert self.compiled is not None
            b = self.compiled.first(expr)
            if b is None:
                return None
            out = self.build(b, expr)
        if out is None or self.guard is None:
            return out
        return _checked(self.guard, expr, out)

    def __call__(self, expr: Any) -> Any:
        """Rewrite ``expr`` once at its root (Oryx semantics: unchanged when the rule does not apply)."""
        out = self.apply(expr)
        return expr if out is None else out

    def term_applier(self) -> Callable[[Term], Any]:
        """A fast ``term -> result or None`` closure for the rewrite driver."""
        if self.function is not None:
            if self.guard is not None:  # the guarded applier declines an unchanged term itself
                return _guarded_applier(self.function, self.guard)
            apply = _function_applier(self.function)
        else:
            apply = self._pattern_applier()
        return apply if self.guard is None else _guarded_applier(apply, self.guard)

    def bare_applier(self) -> Callable[[Term], Any]:
        """``term -> result`` without the guard, for a driver that checks :attr:`guard` on a changed result
        itself: None, the term itself or anything ``as_term`` reads (:meth:`term_applier` with one frame less)."""
        return self.function if self.function is not None else self._pattern_applier()

    def _pattern_applier(self) -> Callable[[Term], Any]:
        """The applier of a rule with a pattern: the compiled matcher's, else the goal machine's."""
        assert self.compiled is not None
        if self.compiled.fast is not None:
            return _fast_applier(self.compiled.fast, self.compiled, self.template, self.handler)
        return _machine_applier(self.compiled.first, self.template, self.handler)

    def __repr__(self) -> str:
        return f"Rule({self.name!r})"


def keeps_dtype(term: Any, out: Any) -> bool:
    """A guard: the result has the dtype of the term it replaces."""
    return out.dtype == term.dtype


def _checked(guard: Callable[[Any, Any], bool], expr: Any, out: Any) -> Any:
    """``out`` as a term when ``guard(expr, out)`` holds, else None."""
    if out is expr:
        return None
    if out.__class__ is not Term:
        out = as_term(out)
    return out if guard(expr, out) else None


def _function_applier(fn: Callable[[Any], Any]) -> Callable[[Term], Any]:
    def apply_function(e: Term) -> Any:
        out = fn(e)
        return None if out is e else out

    return apply_function


def _guarded_applier(apply: Callable[[Term], Any], guard: Callable[[Any, Any], bool]) -> Callable[[Term], Any]:
    def apply_guarded(e: Term) -> Any:
        out = apply(e)
        if out is None or out is e:
            return None
        if out.__class__ is not Term:
            out = as_term(out)
        return out if guard(e, out) else None

    return apply_guarded


def as_rule(obj: Any) -> Rule:
    """``obj`` as a :class:`Rule`: a Rule itself, or a callable ``expr -> expr`` as a rule without a pattern.

    A callable's ``root_ops`` (if it has them) limit the ops it is tried on.
    """
    if isinstance(obj, Rule):
        return obj
    if not callable(obj):
        raise TypeError(f"a rule must be a Rule, a rule string or a callable, not {obj!r}")
    return Rule.of_function(obj, name=rule_name(obj), ops=tuple(getattr(obj, "root_ops", ())))


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


def make_rule(pattern: Any, handler: Any, *, name: str | None = None, where: Any = None, **options: Any) -> Rule:
    """A rule replacing matches of ``pattern`` by ``handler(**bindings)`` (or by a template).

    ``options``: the other fields of :class:`Rule` (``tag``, ``guard``, ``doc``).
    """
    return Rule(pattern, handler, name=name, where=where, **options)


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
