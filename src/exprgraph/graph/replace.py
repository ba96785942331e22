"""PyTensor's ``graph_replace`` and ``clone_replace`` over terms: substitute subgraphs, all at once.

Replacements are simultaneous (a replacement is never looked into for other keys, so ``{x: y,
y: x}`` swaps), the outputs share one memo (a node used by several outputs is rebuilt once) and
the walk is iterative. Terms are immutable, so "cloning" builds only the terms that change: an
output with nothing replaced below it comes back as the same term.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core import Term
from ..core.walk import postorder, postorder_until
from ..errors import ReplacementTypeError
from .printing import short
from .propagation import as_term_like

__all__ = ["graph_replace", "clone_replace"]

#: ``clone_replace`` keywords of PyTensor's rebuild that have no meaning for immutable terms
_IGNORED_REBUILD_KEYWORDS = frozenset({"copy_inputs_over", "clone_inner_graphs", "no_default_updates"})


def _pairs(replace: Mapping[Term, Any] | Iterable[tuple[Term, Any]] | None, check_types: bool) -> dict[Term, Term]:
    """The replacements as a dict ``{old: new}`` (numbers made constants of the old term's dtype)."""
    if replace is None:
        return {}
    items = replace.items() if isinstance(replace, Mapping) else replace
    out: dict[Term, Term] = {}
    for item in items:
        try:
            old, new = item
        except (TypeError, ValueError):
            raise TypeError(f"replacements are (old, new) pairs or a dict, not {item!r}") from None
        if old.__class__ is not Term:
            raise TypeError(f"a replaced object must be a term, not {old!r}")
        new = new if new.__class__ is Term else as_term_like(new, old)
        if check_types and (old.dtype != new.dtype or old.shape != new.shape):
            raise ReplacementTypeError(
                f"cannot replace {short(old)} ({old.dtype}, shape {old.shape}) by {short(new)} "
                f"({new.dtype}, shape {new.shape}): dtype and shape must agree"
            )
        out[old] = new
    return out


def _substitute(outputs: list[Term], repl: dict[Term, Term]) -> tuple[list[Term], set[Term]]:
    """``outputs`` with every key of ``repl`` replaced at once, and the keys met on the way."""
    if not repl:
        return list(outputs), set()
    done: dict[Term, Term] = dict(repl)
    met = {o for o in outputs if o in repl}
    for node in postorder_until(outputs, repl.__contains__):
        args = node.args
        if not args:
            done[node] = node
            continue
        new = [done[a] for a in args]
        changed = False
        for a, b in zip(args, new, strict=True):
            if a is not b:
                changed = True
                if a in repl:
                    met.add(a)
        done[node] = node.op(*new, attr=node.attr) if changed else node
    return [done[o] for o in outputs], met


def _as_list(outputs: Term | Iterable[Term]) -> tuple[list[Term], bool]:
    if outputs.__class__ is Term:
        return [outputs], True
    outs = list(outputs)
    for o in outs:
        if o.__class__ is not Term:
            raise TypeError(f"graph outputs must be terms, not {o!r}")
    return outs, False


def graph_replace(
    outputs: Term | Iterable[Term],
    replace: Mapping[Term, Any] | Iterable[tuple[Term, Any]] | None = None,
    *,
    strict: bool = True,
) -> Term | list[Term]:
    """``outputs`` (a term, or a list of them) with the ``replace`` pairs (a dict or ``(old, new)`` pairs) substituted.

    Replacements must keep the dtype and shape (:class:`~exprgraph.errors.ReplacementTypeError`,
    a ``TypeError``). With ``strict``, a replaced term that is nowhere in the graph of
    ``outputs`` raises ``ValueError``.
    """
    outs, single = _as_list(outputs)
    repl = _pairs(replace, check_types=True)
    result, met = _substitute(outs, repl)
    if strict and len(met) < len(repl):
        present = set(postorder(outs))  # a key below another key is in the graph too
        unused = [k for k in repl if k not in met and k not in present]
        if unused:
            listing = ", ".join(f"{short(k)} -> {short(repl[k])}" for k in unused)
            raise ValueError(f"some replacements were not used (they are not in the graph): {listing}")
    return result[0] if single else result


def clone_replace(
    output: Term | Iterable[Term],
    replace: Mapping[Term, Any] | Iterable[tuple[Term, Any]] | None = None,
    **rebuild_kwds: Any,
) -> Term | list[Term]:
    """``output`` (a term, or a list of them) with ``replace`` substituted; unused replacements are ignored.

    ``rebuild_strict=True`` (the default) requires each replacement to keep the dtype and shape;
    with ``rebuild_strict=False`` the nodes above it are rebuilt with the new operands' types (an
    op that cannot take them raises). ``copy_inputs_over``, ``clone_inner_graphs`` and
    ``no_default_updates`` are accepted: terms are values, there is nothing to copy.
    """
    strict = rebuild_kwds.pop("rebuild_strict", True)
    unknown = sorted(set(rebuild_kwds) - _IGNORED_REBUILD_KEYWORDS)
    if unknown:
        raise TypeError(f"clone_replace() got unexpected keyword arguments: {', '.join(unknown)}")
    outs, single = _as_list(output)
    result, _ = _substitute(outs, _pairs(replace, check_types=bool(strict)))
    return result[0] if single else result
