"""Gradient rules recorded once and replayed: how the fast reverse sweep runs the op table's rules.

A gradient rule is a Python function ``grad(node, g)`` of the op table. For a scalar node, the
terms it builds depend only on the node's op and attr, the dtypes of its operands and of ``g``,
which operands are constants, and, for ops whose rule reads them (``Op.grad_reads_constants``:
pow's exponent), the constants' values (the rules look at no other structure: that is the contract
every rule of the table keeps, checked for each one by ``tests/core/test_grad_template.py``).
So :func:`record` runs the rule once on placeholder terms (``SLOT``, and for constants that are
not read a sentinel constant of an unlikely value) and keeps what it built as a
:class:`Template`: a straight-line program whose instructions read the adjoint, the node, an
operand or a constant, build a term, or call :func:`~exprgraph.core.grad_tools.product` /
:func:`~exprgraph.core.grad_tools.negate` (which recording defers, so that their folds see the real
terms). :func:`replay` runs a template on real terms and builds exactly what the rule would have.

The C sweeps of :mod:`exprgraph.diff` (``diff/_csweep_rules.c``) keep one template per signature
(:func:`signature`) and replay it without calling Python; :func:`sweep_facts` is what they are
configured with. The pure Python sweep calls the rules. Nodes with a shape, and ops with many
operands (more than :data:`MAX_OPERANDS`), are never recorded: the rule is called.

Imports grad_tools, leaves, op and term.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..errors import DifferentiationError
from .grad_tools import _O, DEFERRED_NEGATE, DEFERRED_PRODUCT, SLOT, negate, product, sum_to
from .leaves import const
from .op import get_op
from .term import Term

__all__ = [
    "Template",
    "SweepFacts",
    "sweep_facts",
    "record",
    "replay",
    "signature",
    "MAX_OPERANDS",
    "G",
    "NODE",
    "ARG",
    "CONST",
    "RAW",
    "PRODUCT",
    "NEGATE",
]

#: nodes with more operands than this are not recorded (their rule is called; a template per
#: operand count would be as long as the node)
MAX_OPERANDS = 16

# instruction kinds: what register k holds (the C sweep reads the same numbers)
G, NODE, ARG, CONST, RAW, PRODUCT, NEGATE = range(7)


@dataclass(frozen=True)
class Template:
    """A recorded rule: ``code[k] = (kind, op, attr, operands)`` fills register k; ``outputs`` are
    the registers of the contributions per operand (-1 for none)."""

    code: tuple[tuple[int, Any, Any, tuple[int, ...]], ...]
    outputs: tuple[int, ...]


def signature(node: Term, g: Term) -> tuple | None:
    """What a scalar node's rule may depend on, or None when the node is not recorded."""
    args = node.args
    if node.shape or g.shape or len(args) > MAX_OPERANDS:
        return None
    k = _O.const
    reads = node.op.grad_reads_constants
    parts: list[Any] = []
    for a in args:
        if a.shape:
            return None
        if a.op is not k:
            parts.append(a.dtype)
        elif reads or a.dtype == "bool":
            parts.append(a)
        else:
            parts.append(("const", a.dtype))
    return (node.op, node.attr, tuple(parts), g.dtype)


def _sentinel(i: int, dtype: str) -> Term:
    """A constant of ``dtype`` standing for the constant operand i while recording (a value no rule builds)."""
    if dtype == "float64":
        return const(-3.0e-300 - 1.0e-301 * i)
    if dtype == "float32":
        return const(np.float32(-3.0e-38 - 1.0e-39 * i))
    return const(-(2**62) - 987_654_321 - i, dtype)


def record(node: Term, g: Term) -> Template | None:
    """The template of ``node.op.grad`` for nodes like ``node`` with adjoints like ``g`` (None: not recordable)."""
    if signature(node, g) is None:
        return None
    rule = node.op.grad
    if rule is None:
        return None
    k = _O.const
    reads = node.op.grad_reads_constants
    slots = []
    operands: dict[Term, int] = {}  # sentinel constant -> operand index
    for i, a in enumerate(node.args):
        if a.op is not k:
            slots.append(Term(SLOT, (), (i, a.dtype, ())))
        elif reads or a.dtype == "bool":
            slots.append(a)
        else:
            s = _sentinel(i, a.dtype)
            operands[s] = i
            slots.append(s)
    adjoint = Term(SLOT, (), ("g", g.dtype, ()))
    placeholder = Term(node.op, tuple(slots), node.attr)
    found = rule(placeholder, adjoint)
    registers: dict[Term, int] = {}
    code: list[tuple[int, Any, Any, tuple[int, ...]]] = []
    for t in _postorder([c for c in found if c is not None], placeholder):
        registers[t] = len(code)
        code.append((ARG, None, operands[t], ()) if t in operands else _instruction(t, placeholder, registers))
    outputs = tuple(-1 if c is None else registers[c] for c in found)
    return Template(tuple(code), outputs)


def _postorder(roots: list[Term], placeholder: Term) -> list[Term]:
    """The recorded terms, operands first; the placeholder node and leaves are not entered."""
    out: list[Term] = []
    seen: set[Term] = set()
    stack: list[tuple[Term, bool]] = [(r, False) for r in reversed(roots)]
    while stack:
        t, done = stack.pop()
        if done:
            out.append(t)
            continue
        if t in seen:
            continue
        seen.add(t)
        stack.append((t, True))
        if t is not placeholder:
            stack.extend((a, False) for a in reversed(t.args) if a not in seen)
    return out


def _instruction(t: Term, placeholder: Term, registers: dict[Term, int]) -> tuple[int, Any, Any, tuple[int, ...]]:
    if t is placeholder:
        return (NODE, None, None, ())
    op = t.op
    if op is SLOT:
        role = t.attr[0]
        return (G, None, None, ()) if role == "g" else (ARG, None, role, ())
    if op is _O.const:
        return (CONST, None, t, ())
    operands = tuple(registers[a] for a in t.args)
    if op is DEFERRED_PRODUCT:
        return (PRODUCT, None, None, operands)
    if op is DEFERRED_NEGATE:
        return (NEGATE, None, None, operands)
    return (RAW, op, t.attr, operands)


def replay(template: Template, node: Term, g: Term) -> tuple[Term | None, ...]:
    """The contributions ``node.op.grad(node, g)`` builds, built from the template."""
    regs: list[Term] = []
    args = node.args
    for kind, op, attr, operands in template.code:
        if kind == G:
            v = g
        elif kind == NODE:
            v = node
        elif kind == ARG:
            v = args[attr]
        elif kind == CONST:
            v = attr
        elif kind == RAW:
            v = Term(op, tuple(regs[i] for i in operands), attr)
        elif kind == PRODUCT:
            v = product(regs[operands[0]], tuple(regs[i] for i in operands[1:]))
        else:
            v = negate(regs[operands[0]])
        regs.append(v)
    return tuple(None if i < 0 else regs[i] for i in template.outputs)


def _recorder(node: Term, g: Term) -> tuple | None:
    """For the C sweep: the template as plain tuples ``(code, outputs)``, or None to call the rule."""
    t = record(node, g)
    return None if t is None else (t.code, t.outputs)


class SweepFacts(NamedTuple):
    """What a compiled sweep calls and compares with (the arguments of ``exprgraph.diff._csweep.configure``)."""

    recorder: Any
    sum_to: Any
    const: Any
    error: type
    ops: tuple[Any, ...]
    ones: tuple[Term, Term, Term]
    float32: type


def sweep_facts() -> SweepFacts:
    """The recorder, the table's ops (const, add, mul, neg, truediv) and the constants 1.0, 1, float32 1."""
    ops = tuple(get_op(name) for name in ("const", "add", "mul", "neg", "truediv"))
    ones = (_O.one, _O.one_int, _O.one32)
    return SweepFacts(_recorder, sum_to, const, DifferentiationError, ops, ones, np.float32)
