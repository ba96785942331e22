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
from functools import reduce
from itertools import chain
from operator import or_

import numpy as np

from ..core import Term
from ..core.stdops import no_grad
from ..errors import SizeLimitError
from .reverse import live_order
from .sweep import SWEEP

#: the C module (diff._csweep: its dependency_sets is this module's, with the sets kept in the terms), or None
_native = SWEEP

__all__ = [
    "dependency_sets",
    "colour_rows",
    "row_colours",
    "groups_of",
    "pattern_entries",
    "by_colour",
    "DEFAULT_MAX_PATTERN",
]

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


def row_colours(patterns: Sequence[frozenset[int]], width: int | None = None) -> list[int]:
    """The colour of each row (-1 for an empty pattern): the lowest that no earlier row sharing a column has.

    ``width``: more than the largest column (found from the patterns when not given).
    """
    if width is None:
        width = 1 + max(map(max, filter(None, patterns)), default=-1)
    # column -> the colours of the rows coloured so far that depend on it, as the bits of an int
    used = [0] * width
    at = used.__getitem__
    colours = [-1] * len(patterns)
    for row, cols in enumerate(patterns):
        if not cols:
            continue
        taken = reduce(or_, map(at, cols), 0)
        bit = ~taken & (taken + 1)  # the lowest bit not set in taken: the lowest free colour
        colours[row] = bit.bit_length() - 1
        for c in cols:
            used[c] |= bit
    return colours


def colour_rows(patterns: Sequence[frozenset[int]], width: int | None = None) -> list[list[int]]:
    """Rows grouped so that no two rows of a group share a column (greedy, rows in order).

    Each row gets the lowest colour that no earlier row sharing one of its columns has (see
    :func:`row_colours`); rows with an empty pattern are left out (they have no derivative at all).
    """
    return groups_of(row_colours(patterns, width))


def groups_of(colours: Sequence[int]) -> list[list[int]]:
    """The rows of each colour ``0, 1, ...``, ascending (rows of colour -1 are left out)."""
    groups: list[list[int]] = [[] for _ in range(max(colours, default=-1) + 1)]
    for row, colour in enumerate(colours):
        if colour >= 0:
            groups[colour].append(row)
    return groups


def pattern_entries(patterns: Sequence[frozenset[int]]) -> tuple[np.ndarray, np.ndarray]:
    """The row and the column of every pattern entry, row by row (a row's columns in its set's order)."""
    sizes = np.fromiter(map(len, patterns), np.int64, len(patterns))
    cols = np.fromiter(chain.from_iterable(patterns), np.int64, int(sizes.sum()))
    return np.repeat(np.arange(len(patterns), dtype=np.int64), sizes), cols


def by_colour(colours: Sequence[int], rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """The order of the entries ``(rows, cols)`` by the colour of their row, then column; and where each colour starts.

    Colour ``g``'s entries are ``order[starts[g]:starts[g + 1]]``, columns ascending.
    """
    colour = np.asarray(colours, dtype=np.int64)[rows]
    order = np.lexsort((cols, colour))
    starts = np.searchsorted(colour[order], np.arange(max(colours, default=-1) + 2))
    return order, starts.tolist()
