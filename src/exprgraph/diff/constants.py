"""Partials by constants: a constant variable becomes a symbol for the sweep, and comes back after.

The gradient rules never differentiate a constant operand (a constant does not move), so a sweep
seeded at, or asked for, a constant node finds nothing there: a partial by ``const(2.0)`` in
``sin(x*2.0)`` would read 0. A partial by a constant is the partial by a symbol standing in its
place (every use of the interned constant at once), at the constant's value: the sweeps run over
stand-in symbols and the stand-ins are put back into what they built. A bool constant has no
partial to speak of: it stays a constant (its partial reads 0).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

import numpy as np

from ..core import Symbol, Term, const, postorder
from ..core.op import get_op

__all__ = ["constant_targets", "stand_ins", "standing_in", "restore", "restore_terms", "restored"]

M = TypeVar("M")

_CONST = get_op("const")


def constant_targets(targets: Iterable[Term]) -> list[Term]:
    """The number constants (not bools) among ``targets``, each once (a quick pass: every sweep asks)."""
    found = [t for t in targets if t.op is _CONST and t.dtype != "bool"]
    return list(dict.fromkeys(found)) if len(found) > 1 else found


def stand_ins(
    terms: Sequence[Term], consts: Sequence[Term], taken: Iterable[str] = ()
) -> tuple[dict[Term, Term], dict[Term, Term]]:
    """``(rebuilt, back)``: each node of ``terms`` (and each constant) rebuilt over stand-in symbols for ``consts``
    (only the nodes that change), and each stand-in's constant (an int constant as a float: partials are floats).

    A stand-in is float64 (float32 for a float32 constant), named ``_const<n>`` with a name that
    neither the terms nor ``taken`` use.
    """
    used = {s.attr[0] for t in terms for s in t.free_symbols} | set(taken)
    rebuilt: dict[Term, Term] = {}
    back: dict[Term, Term] = {}
    n = 0
    for c in consts:
        while f"_const{n}" in used:
            n += 1
        symbol = Symbol(f"_const{n}", "float32" if c.dtype == "float32" else "float64", c.shape)
        n += 1
        rebuilt[c] = symbol
        back[symbol] = c if c.dtype in ("float64", "float32") else _as_float(c)
    _rebuild(terms, rebuilt)
    return rebuilt, back


def standing_in(
    outputs: Sequence[Term], targets: Sequence[Term], taken: Iterable[str] = ()
) -> tuple[list[Term], list[Term], dict[Term, Term]] | None:
    """``outputs`` and ``targets`` over stand-in symbols for the constants among the targets, and each
    stand-in's constant (None: no target is a number constant)."""
    consts = constant_targets(targets)
    if not consts:
        return None
    rebuilt, back = stand_ins([*outputs, *targets], consts, taken)
    return [rebuilt.get(o, o) for o in outputs], [rebuilt.get(t, t) for t in targets], back


def restore_terms(terms: Sequence[Term], back: dict[Term, Term]) -> list[Term]:
    """:func:`restore` of terms (no None among them)."""
    return [t for t in restore(terms, back) if t is not None]


def restored(matrix: M, back: dict[Term, Term]) -> M:
    """A sparse matrix (a dataclass with ``values``) built over stand-ins, with its entries over the constants."""
    values: Any = getattr(matrix, "values")  # noqa: B009 - M is any such dataclass
    return dataclasses.replace(matrix, values=restore_terms(values, back))  # type: ignore[type-var]


def restore(terms: Sequence[Term | None], back: dict[Term, Term]) -> list[Term | None]:
    """``terms`` with each stand-in symbol of ``back`` replaced by its constant (one walk for all of them)."""
    done: dict[Term, Term] = dict(back)
    present = [t for t in terms if t is not None]
    _rebuild(present, done)
    return [None if t is None else done.get(t, t) for t in terms]


def _rebuild(terms: Sequence[Term], done: dict[Term, Term]) -> None:
    """Adds to ``done`` each node of ``terms`` with an operand in ``done``, rebuilt over the replacements."""
    for node in postorder(list(terms)):  # children first: each node over its operands' replacements
        if node in done or not node.args:
            continue
        args = tuple(done.get(a, a) for a in node.args)
        if any(a is not b for a, b in zip(args, node.args, strict=True)):
            done[node] = node.op(*args, attr=node.attr)


def _as_float(c: Term) -> Term:
    """An int constant as the float64 constant of the same value."""
    value = c.value
    if hasattr(value, "array"):
        return const(np.asarray(value.array, dtype=np.float64))
    return const(float(value))
