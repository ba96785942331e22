"""What an env gives an evaluation: symbol values, values that replace intermediate terms, and unused entries.

An env maps symbols, or their names, to values (:mod:`.bind` binds those). It may also map any
other term of the DAG, an intermediate or a constant, to a value, as PyTensor's ``w.eval({z: 3})``
does: that term is then a leaf of the evaluation, its value is the one given, and what lies below
it is computed only when another node still needs it. So ``evaluate(f, {t: v, ...})`` equals
``evaluate(substitute(f, {t: const(v)}), {...})``.

An entry the outputs do not need (a name that matches no symbol, a term not in the DAG, or one cut
off by another given term) follows ``on_unused_input``, PyTensor's policy: ``"raise"`` (PyTensor's
default), ``"warn"`` or ``"ignore"`` (ours): one env of all the variables then serves many
expressions, as in CGraph's ``value(d[x], {x: 2, y: 3})`` for a derivative that no longer uses ``y``,
or a test that evaluates random terms against one env of names.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import numpy as np

from ..core.term import Term
from ..errors import EvaluationError, UnusedInputError, UnusedInputWarning
from .bind import NUMPY_DTYPES

__all__ = ["OnUnusedInput", "POLICIES", "check_env", "check_unused", "given_value"]

#: what to do with an env entry the outputs do not need
OnUnusedInput = Literal["raise", "warn", "ignore"]

#: the policies ``on_unused_input`` accepts
POLICIES: tuple[OnUnusedInput, ...] = ("raise", "warn", "ignore")


def check_env(env: Any) -> dict[Term, Any]:
    """Check the env's keys (terms or names); return its entries for terms other than symbols."""
    if not isinstance(env, Mapping):
        raise TypeError(f"env must be a mapping of symbols or names to values, not {type(env).__name__}")
    given: dict[Term, Any] = {}
    for key in env:
        if key.__class__ is Term:
            if key.op.name != "symbol":
                given[key] = env[key]
        elif not isinstance(key, str):
            raise EvaluationError(f"env keys must be terms or names, not {type(key).__name__} {key!r}")
    return given


def _dimension_symbols(symbols: Iterable[Term]) -> set[Term]:
    """The symbols in the shapes of tensor ``symbols`` (bound by size, or given in the env)."""
    dims: set[Term] = set()
    for s in symbols:
        for d in s.attr[2]:
            if d.__class__ is Term:
                dims |= d.free_symbols
    return dims


def check_unused(env: Mapping[Any, Any], order: list[Term], symbols: list[Term], policy: OnUnusedInput) -> None:
    """Apply ``policy`` to the env entries that the evaluation of ``order`` does not read.

    ``symbols`` are the symbol leaves of ``order``. A name is read when a symbol of ``order`` (or a
    dimension in the shape of one) has it; a term when it is in ``order`` (or such a dimension).
    """
    if policy == "ignore":
        return
    if policy not in POLICIES:
        raise ValueError(f"on_unused_input must be 'raise', 'warn' or 'ignore', not {policy!r}")
    dims = _dimension_symbols(symbols)
    names = {s.attr[0] for s in symbols} | {d.attr[0] for d in dims}
    used: set[Term] | None = None
    unused: list[Any] = []
    for key in env:
        if key.__class__ is str:
            if key not in names:
                unused.append(key)
            continue
        if used is None:
            used = set(order) | dims
        if key not in used:
            unused.append(key)
    if not unused:
        return
    listed = ", ".join(repr(k) if k.__class__ is str else str(k) for k in unused)
    message = f"the evaluation does not use the env entries for {listed}"
    if policy == "raise":
        raise UnusedInputError(f"{message}; pass on_unused_input='warn' or 'ignore' to allow them")
    warnings.warn(f"{message} (on_unused_input='warn')", UnusedInputWarning, stacklevel=4)


def given_value(raw: Any, node: Term) -> Any:
    """``raw`` as the value of the given term ``node``: a numpy value of its dtype, of its shape."""
    want = NUMPY_DTYPES[node.dtype]
    try:
        value = np.asarray(raw, dtype=want)
    except (TypeError, ValueError, OverflowError) as exc:
        raise EvaluationError(f"cannot use a {type(raw).__name__} as the value of {node}: {exc}") from None
    shape = node.shape
    if shape:
        got = value.shape
        if len(got) != len(shape) or any(d.__class__ is int and d != n for d, n in zip(shape, got, strict=True)):
            expected = ", ".join(str(d) for d in shape)
            raise EvaluationError(f"the value given for {node} has shape {got}, expected ({expected})")
    return value[()] if value.ndim == 0 else value
