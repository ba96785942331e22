"""Rules and rule sets.

A :class:`Rule` pairs a pattern with a right-hand side: a handler called with the bindings as
keyword arguments, or a *template* (a pattern-like tree such as ``V.x`` or ``2 * V.x``) filled in
with the bindings. Calling a rule on an expression returns the rewritten expression, or the input
unchanged when the pattern does not match (or the handler returns ``None`` to decline).

A :class:`RuleSet` is an ordered table of rules indexed by the root op of their patterns, so a
term only tries the rules that can match it, and each rule rejects on op and arity before it
binds anything. ``rewrite(term, ruleset)`` (:mod:`exprgraph.rules.rewrite`) drives it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..core import Op, Term, const, tree_map
from ..errors import PatternError
from ..match import Choice, OpPattern, Pattern, Segment, Star, Var, Where
from ..match.compile import CompiledPattern, _MachineNeededError, compile_pattern
from ..match.matcher import solve
from ..match.patterns import _DotType, format_pattern

__all__ = ["Rule", "RuleSet", "make_rule", "Template"]

_BOOL_INT_FLOAT = (bool, int, float)


# -- templates: right-hand sides filled in with bindings ----------------------------------------------


class _Splice:
    __slots__ = ("items",)

    def __init__(self, items: Any) -> None:
        self.items = tuple(items)


def _template_children(t: Any) -> tuple:
    cls = t.__class__
    if cls is OpPattern:
        return (*t.args, t.attr) if isinstance(t.attr, Pattern) else t.args
    if cls is tuple or cls is list:
        return tuple(t)
    if cls is dict:
        return tuple(t.values())
    return ()


class Template:
    """A right-hand side compiled to a small stack program (no recursion, any depth)."""

    __slots__ = ("source", "program", "names", "root_literal", "_literals")

    def __init__(self, source: Any) -> None:
        self.source = source
        program: list[tuple] = []
        names: set[str] = set()
        number: list[bool] = []  # per value the program has pushed: whether it is a number literal
        stack: list[tuple[Any, bool]] = [(source, False)]
        while stack:
            node, expanded = stack.pop()
            added = len(program)
            cls = node.__class__
            if cls is Var:
                names.add(node.name)
                program.append(("var", node.name))
            elif cls is Segment:
                names.add(node.name)
                program.append(("seg", node.name))
            elif (
                cls is _DotType
                or isinstance(node, (Star, Choice, Where))
                or (isinstance(node, Pattern) and cls is not OpPattern)
            ):
                raise PatternError(f"{format_pattern(node)} cannot appear on the right-hand side of a rule")
            elif cls in (OpPattern, tuple, list, dict):
                if expanded:
                    if cls is OpPattern:
                        attr_var = isinstance(node.attr, Pattern)
                        if attr_var and node.attr.__class__ is not Var:
                            raise PatternError("an attr on the right-hand side must be a value or a variable")
                        op = node.op
                        if op.__class__ is Var:  # the op a variable bound on the left: V.f(...)
                            names.add(op.name)
                        n = len(node.args)
                        flags = number[len(number) - n - attr_var : len(number) - attr_var]
                        weak = tuple(k for k, f in enumerate(flags) if f)
                        program.append(("op", op, n, node.attr if not attr_var else None, attr_var, weak))
                    elif cls is dict:
                        program.append(("dict", tuple(node)))
                    else:
                        program.append((cls.__name__, len(node)))
                else:
                    stack.append((node, True))
                    stack.extend((k, False) for k in reversed(_template_children(node)))
            else:
                program.append(("lit", node))
            if len(program) > added:
                _track(program, number)
        self.program = tuple(program)
        self.names = frozenset(names)
        self.root_literal = source if source.__class__ in _BOOL_INT_FLOAT else None
        self._literals: dict[str, Any] = {}  # dtype -> the root literal as a constant of that dtype

    def fill(self, b: dict[str, Any], matched: Any = None) -> Any:
        """The template with its variables replaced by the bindings ``b``."""
        lit = self.root_literal
        if lit is not None:
            if matched.__class__ is not Term:
                return lit
            found = self._literals.get(matched.dtype)
            if found is None:
                found = self._literals[matched.dtype] = _literal_like(lit, matched)
            return found
        program = self.program
        if len(program) == 1 and program[0][0] == "var":
            return b[program[0][1]]
        vals: list[Any] = []
        for ins in program:
            kind = ins[0]
            if kind == "var":
                vals.append(b[ins[1]])
            elif kind == "lit":
                vals.append(ins[1])
            elif kind == "seg":
                vals.append(_Splice(b[ins[1]]))
            elif kind == "op":
                _, op, n, attr, attr_var, weak = ins
                if attr_var:
                    attr = vals.pop()
                if op.__class__ is Var:
                    op = b[op.name]
                if weak:
                    _weaken(vals, n, weak)
                args = _unsplice(vals[len(vals) - n :])
                del vals[len(vals) - n :]
                vals.append(op(*args, attr=attr))
            elif kind == "dict":
                keys = ins[1]
                items = vals[len(vals) - len(keys) :]
                del vals[len(vals) - len(keys) :]
                vals.append(dict(zip(keys, items, strict=True)))
            else:
                n = ins[1]
                items = _unsplice(vals[len(vals) - n :])
                del vals[len(vals) - n :]
                vals.append(tuple(items) if kind == "tuple" else list(items))
        return vals[0]


def _track(program: list[tuple], number: list[bool]) -> None:
    """Keep ``number`` (one flag per value on the stack) in step with the instruction just added."""
    ins = program[-1]
    kind = ins[0]
    if kind == "op":
        del number[len(number) - ins[2] - ins[4] :]
        number.append(False)
    elif kind == "dict":
        del number[len(number) - len(ins[1]) :]
        number.append(False)
    elif kind in ("tuple", "list"):
        del number[len(number) - ins[1] :]
        number.append(False)
    elif kind == "lit":
        v = ins[1]
        if v.__class__ is Term:
            v = v.attr if v.op.name == "const" else None
        number.append(v.__class__ in (int, float))
    else:
        number.append(False)


def _weaken(vals: list, n: int, weak: tuple[int, ...]) -> None:
    """Number literals among the last ``n`` values become float32 next to float32 operands (weak, as numpy 2's)."""
    start = len(vals) - n
    dtypes = []
    for k in range(n):
        if k in weak:
            continue
        v = vals[start + k]
        if v.__class__ is Term:
            dtypes.append(v.dtype)
        elif v.__class__ is _Splice:
            dtypes.extend(t.dtype for t in v.items if t.__class__ is Term)
    if "float32" not in dtypes or "float64" in dtypes or "int64" in dtypes:
        return
    for k in weak:
        lit = vals[start + k]
        value = lit.attr if lit.__class__ is Term else lit
        single = const(value, "float32")
        if float(single.attr) == value:  # only when float32 holds the number exactly
            vals[start + k] = single


def _unsplice(items: list) -> list:
    if not any(v.__class__ is _Splice for v in items):
        return items
    out: list = []
    for v in items:
        if v.__class__ is _Splice:
            out.extend(v.items)
        else:
            out.append(v)
    return out


def _literal_like(value: Any, matched: Any) -> Any:
    """A literal result; for a matched term, a constant of its dtype when int/float casting loses nothing."""
    if matched.__class__ is not Term:
        return value
    dtype = matched.dtype
    if value.__class__ is bool or dtype == "bool":
        return const(value)
    try:
        c = const(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        return const(value)
    return c if c.attr == value else const(value)


# -- rules ------------------------------------------------------------------------------------------------


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
        comp = self.compiled
        fast = comp.fast
        pattern = comp.pattern
        cuts = comp.cuts
        template = self.template
        handler = self.handler
        if fast is None:
            first = comp.first
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

                def apply_var(e: Term) -> Any:
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

    def __repr__(self) -> str:
        return f"Rule({self.name!r})"


def _where_test(where: Any) -> Callable[[dict], bool] | None:
    if where is None:
        return None
    if isinstance(where, str):
        from .textual import parse_condition

        return parse_condition(where)
    if callable(where):

        def test(b: dict) -> bool:
            return bool(where(**b))

        test.__name__ = getattr(where, "__name__", "where")
        return test
    raise TypeError(f"where must be a callable or a condition string, not {where!r}")


def make_rule(pattern: Any, handler: Any, *, name: str | None = None, where: Any = None) -> Rule:
    """A rule replacing matches of ``pattern`` by ``handler(**bindings)`` (or by a template)."""
    return Rule(pattern, handler, name=name, where=where)


def rule_name(rule: Any) -> str:
    """A readable name for a rule or any rule-like callable."""
    name = getattr(rule, "name", None)
    if isinstance(name, str):
        return name
    return getattr(rule, "__name__", None) or repr(rule)


# -- rule sets -----------------------------------------------------------------------------------------


class RuleSet:
    """An ordered collection of rules, indexed by the root op of their patterns.

    Rules may be :class:`Rule` objects, rule strings (``"x*1 -> x"``) or any callable
    ``expr -> expr`` (tried on every node). Earlier rules take precedence.
    """

    def __init__(self, rules: Iterable[Any] = (), *, name: str | None = None) -> None:
        self.name = name
        self._rules: list[Any] = []
        self._table: tuple[dict, tuple] | None = None
        self.extend(rules)

    @classmethod
    def parse(cls, text: str, *, name: str | None = None, functions: dict[str, Callable] | None = None) -> RuleSet:
        """A rule set from text: one ``lhs -> rhs [where cond]`` per line, ``#`` comments."""
        from .textual import parse_rules

        return cls(parse_rules(text, functions=functions), name=name)

    def add(self, rule: Any) -> RuleSet:
        """Append a rule (a Rule, a rule string or a callable); returns the set."""
        if isinstance(rule, str):
            from .textual import rule as text_rule

            rule = text_rule(rule)
            if isinstance(rule, tuple):  # "a <-> b": the rule and its reverse
                return self.extend(rule)
        if not callable(rule):
            raise TypeError(f"a rule must be a Rule, a rule string or a callable, not {rule!r}")
        self._rules.append(rule)
        self._table = None
        return self

    def extend(self, rules: Iterable[Any]) -> RuleSet:
        """Append several rules; returns the set."""
        if isinstance(rules, (str, Rule)):
            rules = [rules]
        for r in rules:
            self.add(r)
        return self

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, str):
            for r in self._rules:
                if rule_name(r) == key:
                    return r
            raise KeyError(key)
        return self._rules[key]

    def __add__(self, other: Iterable[Any]) -> RuleSet:
        return RuleSet([*self._rules, *other], name=self.name)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"<RuleSet{label} of {len(self._rules)} rules>"

    def rules_for(self, op: Op) -> tuple:
        """The rules a term with root op ``op`` tries, in order."""
        table, wild = self.table()
        return tuple(r for r, _ in table.get(op, wild))

    def table(self) -> tuple[dict, tuple]:
        """``({op: ((rule, applier), ...)}, wildcard entries)``: the dispatch table of the driver."""
        if self._table is None:
            entries = []
            for r in self._rules:
                if isinstance(r, Rule):
                    entries.append((r, (r.root_op,) if r.root_op is not None else (), r.term_applier()))
                else:
                    # rule-like objects may offer their own ``term_applier`` and ``root_ops`` (relations do)
                    make = getattr(r, "term_applier", None)
                    apply = make() if make is not None else _callable_applier(r)
                    entries.append((r, tuple(getattr(r, "root_ops", ())), apply))
            ops = {op for _, rops, _ in entries for op in rops}
            table = {op: tuple((r, a) for r, rops, a in entries if not rops or op in rops) for op in ops}
            wild = tuple((r, a) for r, rops, a in entries if not rops)
            self._table = (table, wild)
        return self._table

    def __call__(self, expr: Any, **kwargs: Any) -> Any:
        """``rewrite(expr, self, **kwargs)``."""
        from .rewrite import rewrite

        return rewrite(expr, self, **kwargs)


def _callable_applier(fn: Callable[[Any], Any]) -> Callable[[Term], Any]:
    def apply(e: Term) -> Any:
        out = fn(e)
        return None if out is e else out

    return apply


def rebuild(node: Any, children: list) -> Any:
    """``node`` with its children replaced, in order, by ``children`` (through ``tree_map``)."""
    it = iter(children)
    return tree_map(node, lambda _old: next(it))
