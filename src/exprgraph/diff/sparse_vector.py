"""Sparse Jacobians and Hessians of vector code: every entry of a vector variable is a column of its own.

The outputs are read entry by entry (:func:`exprgraph.core.scalarise.scalarise`): a vector
symbol ``x`` of shape ``(n,)`` stands for the scalars ``x_0 ... x_{n-1}``, and each op gives the
scalar terms of its entries (a slice moves entries, ``sum`` is one ``add`` of them). The pattern is
then found on the scalar terms by dependency sets, so ``sum(x[1:] * x[:-1])`` has a banded Hessian
and nothing dense is built. The derivatives found are written back over the vector symbols
(``x_3`` becomes ``x[3]``), so they evaluate and compile with the values of the symbols the user
declared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..core import Term
from ..core.ops_index import getitem
from ..core.scalarise import entry_symbols, scalarise
from ..core.traversal import toposort
from ..errors import DifferentiationError

__all__ = ["ScalarForm", "scalar_form"]


@dataclass(frozen=True)
class ScalarForm:
    """Outputs and variables entry by entry, and the way back to the vector symbols."""

    #: every entry of every output, in order (C order within an output)
    outputs: list[Term]
    #: every entry of every variable, in order: the columns
    targets: list[Term]
    #: each entry symbol -> the scalar term reading it from its vector symbol (``x_3 -> x[3]``)
    back: dict[Term, Term]

    def restore(self, values: Sequence[Term]) -> list[Term]:
        """``values`` (terms over entry symbols) rewritten over the vector symbols, in one pass."""
        return substitute_all(values, self.back)


def scalar_form(outputs: Sequence[Term], targets: Sequence[Term]) -> ScalarForm:
    """The outputs and variables read entry by entry (a :class:`ScalariseError` naming an op it cannot read)."""
    for t in targets:
        if t.op.name != "symbol":
            raise DifferentiationError(
                f"with vector terms, a sparse derivative is taken by symbols, not by {t}: "
                "use the dense jacobian (or grad), or make it a symbol"
            )
    free: dict[Term, None] = dict.fromkeys(targets)
    for t in outputs:
        free.update(dict.fromkeys(sorted(t.free_symbols, key=_name)))
    symbols = entry_symbols(list(free), {s.name for s in free})
    entries = scalarise(outputs, symbols)
    back: dict[Term, Term] = {}
    for s, arr in symbols.items():
        if not s.shape:
            continue
        for k, e in enumerate(arr.reshape(-1)):
            back[e] = getitem(s, tuple(int(i) for i in np.unravel_index(k, arr.shape)))
    return ScalarForm(
        [e for arr in entries for e in arr.reshape(-1)],
        [e for t in targets for e in symbols[t].reshape(-1)],
        back,
    )


def substitute_all(values: Sequence[Term], mapping: Mapping[Term, Term]) -> list[Term]:
    """Each term with the leaves in ``mapping`` replaced, rebuilding each shared node once."""
    done: dict[Term, Term] = {}
    for node in toposort(values):
        found = mapping.get(node)
        if found is not None:
            done[node] = found
        elif not node.args:
            done[node] = node
        else:
            args = tuple(done[a] for a in node.args)
            changed = any(n is not a for n, a in zip(args, node.args, strict=True))
            done[node] = Term(node.op, args, node.attr) if changed else node
    return [done[v] for v in values]


def _name(t: Term) -> str:
    return str(t.name)
