"""Compiled matchers: small term patterns turned into chains of closures for the hot path.

Most rewrite rules are small op patterns over terms (``V.x * 1``, ``(V.x * V.y) / V.y``). For
those the general goal machine is overkill, so :func:`compile_pattern` turns them into a chain
of *steps*, one per op pattern in preorder, sharing a small register file: a step checks its
term's op, arity and attr, checks or binds its leaf operands inline (a literal is a set lookup
of interned constants, a repeated variable an identity test, by value for constants; checks
that bind nothing run first) and stores compound operands in registers for the steps after it.
The commonest shape, ``V.x op literal``, is a single small function. A commutative binary step
tries both operand orders by calling the rest of the chain twice, which is all the backtracking
these patterns need.

Why no undo is needed: steps run in a fixed order, and the step that first meets a name always
*sets* it, so a binding read later was written on the current path. Anything else (runs,
choices, structural term literals, associative regrouping) uses the general machine, and the
first match is the same either way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import ConstArray, Op, Term, const, get_op
from .cuts import cut_points
from .machine import solve
from .patterns import OpPattern, Pattern, Var, Where, _DotType
from .values import const_value_equal, literal_matches

__all__ = ["CompiledPattern", "compile_pattern"]

CONST = get_op("const")
SYMBOL = get_op("symbol")

#: patterns with more op nodes than this use the general machine (the chain recurses per step)
MAX_STEPS = 64


class _MachineNeededError(Exception):
    """Raised by a compiled chain when the general machine must decide (associative regrouping)."""


class CompiledPattern:
    """A pattern prepared for repeated matching: a fast chain when possible, else the machine."""

    __slots__ = ("pattern", "fast", "cuts", "root_op", "arity")

    def __init__(self, pattern: Any) -> None:
        self.pattern = pattern
        self.cuts = cut_points(pattern)
        core = pattern.pattern if pattern.__class__ is Where else pattern
        self.root_op = core.op if core.__class__ is OpPattern and core.op.__class__ is not Var else None
        self.arity = len(core.args) if core.__class__ is OpPattern and not core.has_star else None
        self.fast = _compile_fast(pattern) or _compile_leaf(pattern)

    def first(self, expr: Any, bindings: dict | None = None) -> dict | None:
        """Bindings of the first match of the pattern against ``expr``, or None."""
        fast = self.fast
        if fast is not None and not bindings:
            try:
                return fast(expr)
            except _MachineNeededError:
                pass
        return next(solve(self.pattern, expr, bindings, True, self.cuts), None)


def compile_pattern(pattern: Any) -> CompiledPattern:
    """Prepare ``pattern`` for repeated matching (``CompiledPattern.first``)."""
    return CompiledPattern(pattern)


# -- literal sets: a number literal matches every interned scalar constant equal to it ---------------

# literal -> the constants equal to it; holding them keeps them interned, so identity sets stay valid
_LITERALS: dict[tuple, frozenset] = {}


def _literal_set(v: Any) -> frozenset | None:
    if isinstance(v, np.generic):
        v = v.item()
    if v.__class__ not in (bool, int, float):
        return None
    key = (v.__class__, v if v == v else "nan", str(v))
    found = _LITERALS.get(key)
    if found is None:
        found = _LITERALS[key] = _literal_terms(v)
    return found


def _literal_terms(v: Any) -> frozenset:
    if v.__class__ is bool:
        terms = [const(v)]
    elif v.__class__ in (int, float):
        terms = []
        if v == v:  # NaN equals nothing
            for make in (int, float):
                try:
                    c = make(v)
                except (OverflowError, ValueError):
                    continue
                if c == v:
                    try:
                        terms.append(const(c))
                    except (OverflowError, ValueError, TypeError):
                        pass
            if v == 0:
                terms.append(const(-0.0))
    return frozenset(terms)


# -- compilation -----------------------------------------------------------------------------------


def _supported(p: Any) -> bool:
    """Whether every node of ``p`` is one the chain handles (checked without recursion)."""
    stack = [p]
    count = 0
    while stack:
        node = stack.pop()
        cls = node.__class__
        if cls is OpPattern:
            count += 1
            if count > MAX_STEPS or node.has_star or isinstance(node.attr, Pattern) or node.op.__class__ is Var:
                return False
            if node.op.commutative and len(node.args) > 2:
                return False
            stack.extend(node.args)
        elif cls is Var or cls is _DotType:
            continue
        elif cls is Term:
            if node.args or node.attr.__class__ is ConstArray:  # array constants compare by value
                return False
        elif isinstance(node, Pattern) or _literal_set(node) is None:
            return False
    return True


Check = Callable[[Any, dict, list], bool]


def _var_first(name: str, restrictions: tuple) -> Check:
    if not restrictions:

        def bind(e: Any, b: dict, regs: list) -> bool:
            b[name] = e
            return True

        return bind

    def bind_checked(e: Any, b: dict, regs: list) -> bool:
        for r in restrictions:
            if not r(e):
                return False
        b[name] = e
        return True

    return bind_checked


def _var_again(name: str) -> Check:
    def again(e: Any, b: dict, regs: list) -> bool:
        prev = b[name]
        return prev is e or (e.op is CONST and prev.op is CONST and const_value_equal(prev.attr, e.attr))

    return again


def _dot(e: Any, b: dict, regs: list) -> bool:
    return True


def _in_set(terms: frozenset) -> Check:
    def lit(e: Any, b: dict, regs: list) -> bool:
        return e in terms

    return lit


def _is(term: Term) -> Check:
    def same(e: Any, b: dict, regs: list) -> bool:
        return e is term

    return same


def _to_reg(j: int, op: Any) -> Check:
    def store(e: Any, b: dict, regs: list) -> bool:
        if e.__class__ is Term and e.op is op:
            regs[j] = e
            return True
        return False

    return store


Step = Callable[[list, dict], bool]


def _make_step(op: Any, attr: Any, in_reg: int, checks: list[Check], pure: list[bool], nxt: Step) -> Step:
    """One step: check op arity and attr, run the operand checks (pure ones first), continue."""
    if len(checks) == 1:
        return _step_one(attr, in_reg, checks[0], nxt)
    if len(checks) == 2:
        return _step_two(op, attr, in_reg, checks, pure, nxt)
    return _step_many(op, attr, in_reg, checks, pure, nxt)


def _step_one(attr: Any, in_reg: int, c0: Check, nxt: Step) -> Step:
    """The step of an op pattern with one operand."""

    def step1(regs: list, b: dict) -> bool:
        e = regs[in_reg]
        args = e.args
        if len(args) != 1 or e.attr != attr:
            return False
        return c0(args[0], b, regs) and nxt(regs, b)

    return step1


def _step_two(op: Any, attr: Any, in_reg: int, checks: list[Check], pure: list[bool], nxt: Step) -> Step:
    """The step of an op pattern with two operands (both orders when the op is commutative)."""
    assoc = op.associative
    # evaluate a check that binds nothing first: it rejects before any variable is bound
    first, second = (1, 0) if pure[1] and not pure[0] else (0, 1)
    cf, cs = checks[first], checks[second]
    comm = op.commutative

    def step2(regs: list, b: dict) -> bool:
        e = regs[in_reg]
        args = e.args
        if len(args) != 2:
            if assoc:
                raise _MachineNeededError
            return False
        if e.attr != attr:
            return False
        af, as_ = args[first], args[second]
        if cf(af, b, regs) and cs(as_, b, regs) and nxt(regs, b):
            return True
        if not comm or af is as_:
            return False
        return cf(as_, b, regs) and cs(af, b, regs) and nxt(regs, b)  # the other order

    return step2


def _step_many(op: Any, attr: Any, in_reg: int, checks: list[Check], pure: list[bool], nxt: Step) -> Step:
    """The step of an op pattern with three or more operands, in a fixed order."""
    k = len(checks)
    assoc = op.associative
    order = [i for i in range(k) if pure[i]] + [i for i in range(k) if not pure[i]]
    ordered = [(i, checks[i]) for i in order]

    def stepn(regs: list, b: dict) -> bool:
        e = regs[in_reg]
        args = e.args
        if len(args) != k:
            if assoc:
                raise _MachineNeededError
            return False
        if e.attr != attr:
            return False
        for i, c in ordered:
            if not c(args[i], b, regs):
                return False
        return nxt(regs, b)

    return stepn


def _compile_fast(pattern: Any) -> Callable[[Any], dict | None] | None:
    test = None
    if pattern.__class__ is Where:
        test = pattern.test
        pattern = pattern.pattern
    if pattern.__class__ is not OpPattern or not _supported(pattern):
        return None
    order, reg_of_child, nregs = _step_order(pattern)
    step_checks, step_pure = _operand_checks(order, reg_of_child)
    if len(order) == 1 and test is None:
        flat = _flat_binary(pattern)
        if flat is not None:
            return flat
    nxt: Step = _last_step(test)
    for s in range(len(order) - 1, -1, -1):
        node, reg = order[s]
        nxt = _make_step(node.op, node.attr, reg, step_checks[s], step_pure[s], nxt)
    root_step = nxt
    root_op = pattern.op
    blank: list[Any] = [None] * nregs
    # report bindings in the order the general machine makes them (left to right, depth first)
    names = _preorder_names(pattern)
    bound_order = [n for checks_node in order for n in _var_names(checks_node[0])]
    reorder = list(dict.fromkeys(bound_order)) != names

    def fast(e: Any) -> dict | None:
        if e.__class__ is not Term or e.op is not root_op:
            return None
        regs = blank.copy()
        regs[0] = e
        b: dict[str, Any] = {}
        if not root_step(regs, b):
            return None
        return {n: b[n] for n in names} if reorder else b

    return fast


def _step_order(pattern: OpPattern) -> tuple[list[tuple[OpPattern, int]], dict[tuple[int, int], int], int]:
    """The steps in preorder over op patterns, each with the register holding the term it examines;
    the register of each (step, operand position) that is an op pattern; the register count."""
    order: list[tuple[OpPattern, int]] = []
    stack: list[tuple[OpPattern, int]] = [(pattern, 0)]
    nregs = 1
    reg_of_child: dict[tuple[int, int], int] = {}
    while stack:
        node, reg = stack.pop()
        order.append((node, reg))
        kids = []
        for pos, a in enumerate(node.args):
            if a.__class__ is OpPattern:
                reg_of_child[(len(order) - 1, pos)] = nregs
                kids.append((a, nregs))
                nregs += 1
        stack.extend(reversed(kids))
    return order, reg_of_child, nregs


def _operand_checks(
    order: list[tuple[OpPattern, int]], reg_of_child: dict[tuple[int, int], int]
) -> tuple[list[list[Check]], list[list[bool]]]:
    """Each step's operand checks, and which of them bind nothing (pure).

    Built in execution order, so the first occurrence of a name is the one that binds (a step
    runs its pure checks, literals and ops, before its variables; see :func:`_make_step`).
    """
    seen: set[str] = set()
    step_checks: list[list[Check]] = []
    step_pure: list[list[bool]] = []
    for s, (node, _reg) in enumerate(order):
        checks: list[Check] = []
        step_pure.append([a.__class__ is not Var and a.__class__ is not _DotType for a in node.args])
        for pos, a in enumerate(node.args):
            cls = a.__class__
            if cls is OpPattern:
                checks.append(_to_reg(reg_of_child[(s, pos)], a.op))
            elif cls is Var:
                if a.name in seen:
                    checks.append(_var_again(a.name))
                else:
                    seen.add(a.name)
                    checks.append(_var_first(a.name, a.restrictions))
            elif cls is _DotType:
                checks.append(_dot)
            elif cls is Term and a.op is not CONST:
                checks.append(_is(a))
            else:
                lits = _literal_set(a.attr if cls is Term else a)
                checks.append(_in_set(lits) if lits is not None else _is(a))
        step_checks.append(checks)
    return step_checks, step_pure


def _last_step(test: Callable[[dict], Any] | None) -> Step:
    """The step after the last op pattern: accept, or run the ``Where`` test on the bindings."""
    if test is None:

        def done(regs: list, b: dict) -> bool:
            return True

        return done

    def done_test(regs: list, b: dict) -> bool:
        return bool(test(b))

    return done_test


def _var_names(node: OpPattern) -> list[str]:
    # the variables a step meets: its pure checks run first, but none of them binds
    return [a.name for a in node.args if a.__class__ is Var]


def _preorder_names(pattern: Any) -> list[str]:
    out: dict[str, None] = {}
    stack = [pattern]
    while stack:
        node = stack.pop()
        if node.__class__ is Var:
            out.setdefault(node.name)
        elif node.__class__ is OpPattern:
            stack.extend(reversed(node.args))
    return list(out)


def _flat_binary(pattern: OpPattern) -> Callable[[Any], dict | None] | None:
    """The commonest rule shape, ``V.x op literal`` (either order), as one small function."""
    args = pattern.args
    if len(args) != 2:
        return None
    var_pos = [i for i, a in enumerate(args) if a.__class__ is Var and not a.restrictions]
    if len(var_pos) != 1:
        return None
    vi = var_pos[0]
    li = 1 - vi
    lit = args[li]
    if lit.__class__ is Var or lit.__class__ is _DotType or lit.__class__ is OpPattern:
        return None
    lits = _literal_set(lit.attr if lit.__class__ is Term else lit)
    if lits is None:
        lits = frozenset((lit,))  # a symbol or an array constant: identity
    name = args[vi].name
    op = pattern.op
    if not isinstance(op, Op):  # a variable op: the general machine
        return None
    attr, assoc, comm = pattern.attr, op.associative, op.commutative

    def flat(e: Any) -> dict | None:
        if e.__class__ is not Term or e.op is not op:
            return None
        eargs = e.args
        if len(eargs) != 2:
            if assoc:
                raise _MachineNeededError
            return None
        if e.attr != attr:
            return None
        if eargs[li] in lits:
            return {name: eargs[vi]}
        if comm and eargs[vi] in lits:
            return {name: eargs[li]}
        return None

    return flat


def _compile_leaf(pattern: Any) -> Callable[[Any], dict | None] | None:
    """Matchers for a bare variable or a plain literal (the Oryx-style rules on plain data)."""
    cls = pattern.__class__
    if cls is Var:
        name, restrictions = pattern.name, pattern.restrictions

        def var(e: Any) -> dict | None:
            for r in restrictions:
                if not r(e):
                    return None
            return {name: e}

        return var
    if cls in (int, float, str, bool, type(None)):

        def literal(e: Any) -> dict | None:
            return {} if literal_matches(pattern, e) else None

        return literal
    return None
