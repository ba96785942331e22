"""Sparsity patterns of derivatives by dependency sets, and the row colouring that compresses them.

The pattern of a Jacobian row is the set of variables its output depends on through operands
that a gradient rule can send something to: every operand, except those of piecewise-constant
ops (comparisons, logic, floordiv: their rule is :func:`~exprgraph.core.stdops.no_grad`). A
reverse sweep can only reach variables along such edges, so the pattern holds every entry a sweep
can produce (it may hold a few more, which then turn out to have no derivative).

Rows whose patterns share no column get the same colour. A reverse sweep seeded with 1 on all
rows of one colour gives each column the derivative of the one row that depends on it: a node
that two rows of the colour both reach depends on no column of theirs, so no adjoint mixes rows.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core import Term
from ..core.stdops import no_grad
from ..errors import SizeLimitError
from .reverse import live_order
from .sweep import SWEEP

#: the C module (diff._csweep: its dependency_sets is this module's, with the sets kept in the terms), or None
_native = SWEEP

__all__ = ["dependency_sets", "colour_rows", "DEFAULT_MAX_PATTERN"]

#: the largest total size of the dependency sets a pattern may build (entries, summed over nodes)
DEFAULT_MAX_PATTERN = 50_000_000

_EMPTY: frozenset[int] = frozenset()


def dependency_sets(
    outputs: Sequence[Term], columns: dict[Term, int], max_pattern: int = DEFAULT_MAX_PATTERN
) -> list[frozenset[int]]:
    """For each output, the indices (by ``columns``) of the variables a reverse sweep could reach.

    Sets are shared between nodes whenever one operand's set already holds the union, so a
    graph made of local pieces costs about its size. Raises :class:`SizeLimitError` when the
    patterns, or the sets built on the way, hold more than ``max_pattern`` entries (a dense derivative).
    """
    if _native is not None:
        found = _native.dependency_sets(outputs, columns, max_pattern, no_grad, _too_dense)
        if found is not NotImplemented:  # (another C traversal is running: the Python one below)
            patterns: list[frozenset[int]] = found
            return patterns
    targets = set(columns)
    order, _ = live_order(outputs, targets)
    deps: dict[Term, frozenset[int]] = {}
    built = 0
    get = deps.get
    for node in order:  # live nodes only, children first: the others depend on no column
        args = node.args
        if not args:
            deps[node] = frozenset((columns[node],))
            continue
        if node.op.grad is no_grad:
            continue
        best: frozenset[int] | None = None
        more: list[frozenset[int]] | None = None
        for a in args:
            s = get(a)
            if s is None or s is best:
                continue
            if best is None:
                best = s
            elif more is None:
                more = [s]
            else:
                more.append(s)
        if more is not None and best is not None:  # (there is a best whenever there are more)
            best, built = _union(best, more, built)
            if built > max_pattern:
                _too_dense(built, max_pattern)
        if node in targets:  # a target that is not a leaf (an intermediate node) is its own column too
            best = frozenset((columns[node],)) if best is None else best | {columns[node]}
        if best is not None:
            deps[node] = best
    patterns = [deps.get(out, _EMPTY) for out in outputs]
    entries = sum(len(p) for p in patterns)
    if entries > max_pattern:
        _too_dense(entries, max_pattern)
    return patterns


def _union(best: frozenset[int], more: list[frozenset[int]], built: int) -> tuple[frozenset[int], int]:
    """The union of ``best`` and ``more``, reusing one of them when it holds the others; and ``built``
    plus the size of any set made."""
    if len(more) == 1:  # two operands' sets (the usual case): keep the one holding the other
        other = more[0]
        if len(other) > len(best):
            best, other = other, best
        if not other <= best:
            best = best | other
            built += len(best)
        return best, built
    biggest = max(best, *more, key=len)
    if not all(s <= biggest for s in (best, *more)):
        biggest = best.union(*more)
        built += len(biggest)
    return biggest, built


def _too_dense(size: int, limit: int) -> None:
    raise SizeLimitError(
        f"the sparsity pattern has more than {limit:,} entries (a dense derivative): pass max_pattern=N "
        "to allow more, or differentiate fewer variables",
        size=size,
        limit=limit,
        setting="max_pattern",
    )


def colour_rows(patterns: Sequence[frozenset[int]]) -> list[list[int]]:
    """Rows grouped so that no two rows of a group share a column (greedy, rows in order).

    Rows with an empty pattern are left out (they have no derivative at all).
    """
    colour_of: list[int] = [-1] * len(patterns)
    users: dict[int, list[int]] = {}  # column -> rows coloured so far that depend on it
    groups: list[list[int]] = []
    for row, cols in enumerate(patterns):
        if not cols:
            continue
        taken: set[int] = set()
        for c in cols:
            rows = users.get(c)
            if rows is not None:
                taken.update(colour_of[r] for r in rows)
        colour = 0
        while colour in taken:
            colour += 1
        if colour == len(groups):
            groups.append([])
        groups[colour].append(row)
        colour_of[row] = colour
        for c in cols:
            users.setdefault(c, []).append(row)
    return groups
