"""Sparse Jacobians and Hessians: the structural non-zeros only, as terms in coordinate (COO) form.

The pattern comes from dependency sets (:mod:`exprgraph.diff.pattern`), the rows are coloured so
that rows of one colour share no variable, and one reverse sweep per colour, seeded with 1 on all
its rows, gives every non-zero of those rows at once. The dense matrix is never built: the work is
about (number of colours) x (size of the graph), and a banded Hessian needs a handful of colours
whatever its size. A Hessian is the sparse Jacobian of the gradient; its sweeps only look for
the lower triangle, which is mirrored (the same terms) into the upper one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import Term, as_term
from ..errors import DifferentiationError
from .constants import restored, standing_in
from .pattern import DEFAULT_MAX_PATTERN, by_colour, dependency_sets, groups_of, pattern_entries, row_colours
from .reverse import _ONE, backprop, backprop_groups, collector_paused, grad, one_like, resolve_wrt, zeros_like
from .sparse_vector import scalar_form

__all__ = ["SparseMatrix", "sparse_jacobian", "sparse_hessian"]


@dataclass(frozen=True, eq=False)
class SparseMatrix:
    """A matrix of terms in coordinate form: entry ``values[k]`` sits at ``(rows[k], cols[k])``.

    Entries are sorted by row, then column; every other entry is structurally zero. ``values``
    is a list of terms, so ``evaluate(m.values, env)`` gives the numbers and ``compile`` takes
    them as one packed output.
    """

    #: row index of each entry
    rows: list[int]
    #: column index of each entry
    cols: list[int]
    #: the entries, as terms
    values: list[Term]
    #: (number of rows, number of columns)
    shape: tuple[int, int]

    @property
    def nnz(self) -> int:
        """Number of stored (structurally non-zero) entries."""
        return len(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self) -> Iterator[tuple[int, int, Term]]:
        return iter(zip(self.rows, self.cols, self.values, strict=True))

    def __repr__(self) -> str:
        return f"SparseMatrix(shape={self.shape}, nnz={self.nnz})"

    def to_scipy(self, numbers: Any) -> Any:
        """A ``scipy.sparse.coo_matrix`` holding ``numbers``, the values of :attr:`values` (same order)."""
        from scipy.sparse import coo_matrix  # scipy is optional: only this method needs it

        data = self._numbers(numbers)
        return coo_matrix(
            (data, (np.asarray(self.rows, dtype=np.int64), np.asarray(self.cols, dtype=np.int64))), self.shape
        )

    def to_dense(self, numbers: Any = None) -> Any:
        """The full matrix: a list of rows of terms (zeros filled in), or a numpy array given ``numbers``."""
        m, n = self.shape
        if numbers is not None:
            out = np.zeros(self.shape)
            out[self.rows, self.cols] = self._numbers(numbers)
            return out
        zero = zeros_like(self.values[0]) if self.values else zeros_like(_ONE)
        dense = [[zero] * n for _ in range(m)]
        for i, j, v in self:
            dense[i][j] = v
        return dense

    def _numbers(self, numbers: Any) -> np.ndarray:
        data = np.asarray([np.asarray(v, dtype=np.float64) for v in numbers] if isinstance(numbers, list) else numbers)
        data = np.asarray(data, dtype=np.float64)
        if data.shape != (self.nnz,):
            raise ValueError(
                f"expected {self.nnz} numbers (one per entry, scalars), got an array of shape {data.shape}"
            )
        return data


#: colour groups of at most this many rows on average (a dense Hessian's: its rows share most of
#: their graph, so each group's walk would repeat the others') are swept over one shared walk
#: (reverse.backprop_groups); groups of many rows (a banded one's) reach mostly their own part of
#: the graph, and one walk each is quicker (measured: trig and opf at 2*10^4 and 10^5). Either way
#: gives the same terms.
SHARED_WALK_ROWS = 2


def _check_scalars(terms: Sequence[Term], what: str) -> None:
    for t in terms:
        if t.shape:
            raise DifferentiationError(
                f"a sparse {what} needs scalar terms, but {t} has shape {t.shape}; use the dense form or "
                "split the tensor into scalars"
            )


def _compressed(
    outputs: Sequence[Term],
    columns: dict[Term, int],
    symmetric: bool,
    max_pattern: int,
) -> SparseMatrix:
    """The non-zeros ``d outputs[i] / d column j``, found by one seeded reverse sweep per colour.

    ``symmetric``: the outputs are a gradient over the same variables; only entries with
    ``j <= i`` are differentiated and each is mirrored to ``(j, i)``.
    """
    patterns = dependency_sets(outputs, columns, max_pattern)
    colours = row_colours(patterns, len(columns))
    rows, cols = pattern_entries(patterns)
    if symmetric:
        keep = cols <= rows
        rows, cols = rows[keep], cols[keep]
    order, starts = by_colour(colours, rows, cols)
    owners, cols = rows[order], cols[order]
    variables = list(map(list(columns).__getitem__, cols.tolist()))
    owner = np.empty(len(columns), dtype=np.int64)  # column -> the one row of the current group using it
    found_rows: list[np.ndarray] = []
    found_cols: list[np.ndarray] = []
    values: list[Term] = []
    swept = [(colour, group) for colour, group in enumerate(groups_of(colours)) if starts[colour] < starts[colour + 1]]
    group_outputs = [[outputs[r] for r in group] for _, group in swept]
    seeds = [list(map(one_like, outs)) for outs in group_outputs]
    targets = [set(variables[starts[colour] : starts[colour + 1]]) for colour, _ in swept]
    found: Iterable[dict[Term, Term]]
    if len(swept) > 1 and sum(map(len, group_outputs)) <= SHARED_WALK_ROWS * len(swept):
        found = backprop_groups(group_outputs, seeds, targets)
    else:
        found = map(backprop, group_outputs, seeds, targets)  # (lazily: one group's dict alive at a time)
    for (colour, _), adjoints in zip(swept, found, strict=True):
        lo, hi = starts[colour], starts[colour + 1]
        owner[cols[lo:hi]] = owners[lo:hi]  # (rows of one colour share no column)
        at = np.fromiter(map(columns.__getitem__, adjoints), np.int64, len(adjoints))
        found_rows.append(owner[at])
        found_cols.append(at)
        values.extend(adjoints.values())
    empty = np.empty(0, dtype=np.int64)
    rows = np.concatenate(found_rows) if found_rows else empty
    cols = np.concatenate(found_cols) if found_cols else empty
    which = np.arange(len(values), dtype=np.int64)  # the entry of values each (row, col) holds
    if symmetric:  # (i, j) below the diagonal is also (j, i) above it
        off = np.flatnonzero(rows != cols)
        rows, cols = np.concatenate([rows, cols[off]]), np.concatenate([cols, rows[off]])
        which = np.concatenate([which, off])
    return _sorted_coo(rows, cols, values, which, (len(outputs), len(columns)))


def _sorted_coo(
    rows: np.ndarray, cols: np.ndarray, values: list[Term], which: np.ndarray, shape: tuple[int, int]
) -> SparseMatrix:
    """The matrix with ``values[which[e]]`` at ``(rows[e], cols[e])``, sorted by row then column (no pair twice)."""
    order = np.argsort(rows * max(shape[1], 1) + cols)
    # one int object per index, shared by the entries (ndarray.tolist makes a new 32-byte int per entry)
    ints = np.arange(max(shape[0], shape[1], 1)).astype(object)
    terms = np.fromiter(values, dtype=object, count=len(values))
    return SparseMatrix(ints[rows[order]].tolist(), ints[cols[order]].tolist(), terms[which[order]].tolist(), shape)


def _columns(targets: Sequence[Term]) -> dict[Term, int]:
    """Each variable's column: its place in ``targets``; raises :class:`DifferentiationError` on a repeated one."""
    columns = dict(zip(targets, range(len(targets)), strict=True))
    if len(columns) != len(targets):
        seen: set[Term] = set()
        for t in targets:
            if t in seen:
                raise DifferentiationError(f"the variable {t} is listed twice: list each variable once")
            seen.add(t)
    return columns


@collector_paused
def sparse_jacobian(fs: Any, wrt: Any = None, *, max_pattern: int = DEFAULT_MAX_PATTERN) -> SparseMatrix:
    """The structural non-zeros of the Jacobian ``d fs_i / d wrt_j`` of scalar outputs and variables.

    >>> from exprgraph import symbols, sin
    >>> x, y, z = symbols("x y z")
    >>> J = sparse_jacobian([x * y, sin(z)], [x, y, z])
    >>> J.rows, J.cols, [str(v) for v in J.values]
    ([0, 0, 1], [0, 1, 2], ['y', 'x', 'cos(z)'])
    """
    outputs = [as_term(f) for f in fs] if isinstance(fs, (list, tuple)) else [as_term(fs)]
    targets, _ = resolve_wrt(outputs, wrt)
    standing = standing_in(outputs, targets)
    if standing is not None:  # constant variables: swept as symbols standing in for them (the entry form reads symbols)
        return restored(sparse_jacobian(standing[0], standing[1], max_pattern=max_pattern), standing[2])
    columns = _columns(targets)
    if any(t.shape for t in (*outputs, *targets)):
        form = scalar_form(outputs, targets)  # each entry of a vector is a row or a column
        found = _compressed(form.outputs, _columns(form.targets), False, max_pattern)
        return dataclasses.replace(found, values=form.restore(found.values))
    return _compressed(outputs, columns, False, max_pattern)


@collector_paused
def sparse_hessian(f: Any, wrt: Any = None, *, max_pattern: int = DEFAULT_MAX_PATTERN) -> SparseMatrix:
    """The structural non-zeros of the Hessian ``d2f / (d wrt_i d wrt_j)`` of a scalar ``f``.

    Only the lower triangle is differentiated; each entry above the diagonal is the same term as
    its mirror image below.

    >>> from exprgraph import symbols
    >>> x, y, z = symbols("x y z")
    >>> H = sparse_hessian(x * y + z**3, [x, y, z])
    >>> list(zip(H.rows, H.cols)), [str(v) for v in H.values]
    ([(0, 1), (1, 0), (2, 2)], ['1.0', '1.0', '6.0*z'])
    """
    f = as_term(f)
    if f.shape:
        raise DifferentiationError(f"a Hessian needs a scalar f, but f has shape {f.shape}")
    targets, _ = resolve_wrt([f], wrt)
    standing = standing_in([f], targets)
    if standing is not None:  # constant variables: swept as symbols standing in for them (as sparse_jacobian)
        return restored(sparse_hessian(standing[0][0], standing[1], max_pattern=max_pattern), standing[2])
    columns = _columns(targets)
    if any(t.shape for t in (f, *targets)):
        form = scalar_form([f], targets)  # each entry of a vector variable is a column
        gradient = grad(form.outputs[0], form.targets)
        found = _compressed(gradient, _columns(form.targets), True, max_pattern)
        return dataclasses.replace(found, values=form.restore(found.values))
    gradient = grad(f, list(targets))
    return _compressed(gradient, columns, True, max_pattern)
