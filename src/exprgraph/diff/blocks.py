"""Sparse Hessians of weighted sums (a Lagrangian) kept per term: blocks, then a scatter-add.

The Hessian of ``L = sum_k w_k f_k`` (an objective and constraints weighted by multipliers) could
be built as the sparse Hessian of the sum: every entry is then one term adding up the second
derivatives of all the ``f_k`` that meet there, and entries differ in shape wherever the number
of contributors differs. :func:`block_hessian` keeps the blocks apart instead: the entries of
each ``f_k``'s own Hessian (the same expression shapes wherever ``f_k`` repeats, which is what a
code generator can turn into loops), with for each entry the term ``k`` it belongs to and the
pattern position it adds into. :meth:`BlockHessian.assemble` multiplies the entries' numbers by
their weights and scatter-adds them into the pattern (one ``numpy.bincount``).

How: terms that share no variable are differentiated together (the rows coloured as in
:mod:`exprgraph.diff.pattern`): one sweep for the gradient of their sum, then one seeded sweep
per slot (the first non-constant partial of every term at once, then the second, ...). A
second derivative of that sum lies on two variables of one term only, so each entry found is
one term's entry, and the number of sweeps follows the number of colours and the variables per
term, not the number of terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import Term, add, as_term
from .pattern import DEFAULT_MAX_PATTERN, colour_rows, dependency_sets
from .reverse import backprop, collector_paused, grad, one_like
from .sparse import SparseMatrix, _check_scalars, _columns

__all__ = ["BlockHessian", "block_hessian"]


@dataclass(frozen=True, eq=False)
class BlockHessian:
    """The lower triangle of ``sum_k w_k d2 f_k``, kept as per-term blocks and a scatter map.

    The pattern is ``(rows[p], cols[p])`` with ``rows[p] >= cols[p]``, sorted by row then column.
    Block entry ``e`` is the term ``values[e]``, a second derivative of ``terms[term[e]]`` alone;
    it adds into pattern entry ``position[e]``. Entries are ordered by term, then row and column.
    """

    #: row of each pattern entry (lower triangle)
    rows: list[int]
    #: column of each pattern entry
    cols: list[int]
    #: the block entries, as terms (unweighted second derivatives of one term each)
    values: list[Term]
    #: the term (weight index) of each block entry
    term: np.ndarray
    #: the pattern entry each block entry adds into
    position: np.ndarray
    #: (number of variables, number of variables)
    shape: tuple[int, int]
    #: how many terms (weights) the sum has
    n_terms: int

    @property
    def nnz(self) -> int:
        """Number of entries of the (lower triangular) pattern."""
        return len(self.rows)

    def __repr__(self) -> str:
        return f"BlockHessian(shape={self.shape}, nnz={self.nnz}, blocks={len(self.values)}, terms={self.n_terms})"

    def assemble(self, numbers: Any, weights: Any, scratch: np.ndarray | None = None) -> np.ndarray:
        """The pattern's values: ``numbers`` (of :attr:`values`) times their terms' ``weights``, scatter-added.

        ``scratch``: a float64 array of one entry per block entry to compute the weighted numbers in (a
        solver calling this every iteration keeps one, instead of two new arrays per call).
        """
        data = np.asarray(numbers, dtype=np.float64).reshape(-1)
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if data.shape != (len(self.values),):
            raise ValueError(f"expected {len(self.values)} block numbers, got an array of shape {data.shape}")
        if w.shape != (self.n_terms,):
            raise ValueError(f"expected {self.n_terms} weights (one per term), got an array of shape {w.shape}")
        if not len(data):
            return np.zeros(self.nnz)
        if scratch is None or scratch.shape != data.shape or scratch.dtype != np.float64:
            return np.bincount(self.position, weights=data * w[self.term], minlength=self.nnz)
        np.take(w, self.term, out=scratch)
        np.multiply(scratch, data, out=scratch)
        return np.bincount(self.position, weights=scratch, minlength=self.nnz)

    def summed(self, weights: Sequence[Any]) -> SparseMatrix:
        """The same lower triangle as one term per entry, ``sum w_k * entry`` (to check or to compile flat)."""
        if len(weights) != self.n_terms:
            raise ValueError(f"expected {self.n_terms} weights (one per term), got {len(weights)}")
        parts: list[list[Term]] = [[] for _ in self.rows]
        ws = [as_term(w) for w in weights]
        for value, k, p in zip(self.values, self.term.tolist(), self.position.tolist(), strict=True):
            parts[p].append(ws[k] * value)
        values = [ps[0] if len(ps) == 1 else add(*ps) for ps in parts]
        return SparseMatrix(list(self.rows), list(self.cols), values, self.shape)

    def to_scipy(self, assembled: Any, symmetric: bool = True) -> Any:
        """A ``scipy.sparse.coo_matrix`` of the assembled values; ``symmetric``: both triangles."""
        from scipy.sparse import coo_matrix  # scipy is optional: only this method needs it

        data = np.asarray(assembled, dtype=np.float64)
        rows, cols = np.asarray(self.rows, dtype=np.int64), np.asarray(self.cols, dtype=np.int64)
        if symmetric:
            off = rows != cols
            data = np.concatenate([data, data[off]])
            rows, cols = np.concatenate([rows, cols[off]]), np.concatenate([cols, rows[off]])
        return coo_matrix((data, (rows, cols)), self.shape)


def _group_blocks(
    group: list[int], terms: Sequence[Term], patterns: Sequence[frozenset[int]], targets: Sequence[Term]
) -> list[tuple[int, int, int, Term]]:
    """``(term, row, col, entry)`` of the lower triangles of the terms of ``group`` (no shared variable).

    One sweep gives the gradient of the group's sum; then one seeded sweep per *slot*: the first
    variable of every term (by column) whose partial is not constant, then the second, and so on.
    The terms share no variable, so each sweep gives every term the column of its own variable.
    """
    owner: dict[int, int] = {}
    for k in group:
        for j in patterns[k]:
            owner[j] = k
    local = sorted(owner)
    variables = [targets[j] for j in local]
    f = terms[group[0]] if len(group) == 1 else add(*(terms[k] for k in group))
    gradient = grad(f, variables)
    slots: list[list[int]] = []
    used = dict.fromkeys(group, 0)
    for pos, j in enumerate(local):
        partial = gradient[pos]
        if not partial.args and partial.op.name != "symbol":  # a constant partial: a zero column
            continue
        k = owner[j]
        if used[k] == len(slots):
            slots.append([])
        slots[used[k]].append(pos)
        used[k] += 1
    column_of = {targets[j]: j for j in local}
    columns_of: dict[int, list[int]] = {}  # term -> its columns, ascending
    for j in local:
        columns_of.setdefault(owner[j], []).append(j)
    found = []
    for positions in slots:
        seeded = {owner[local[p]]: local[p] for p in positions}  # term -> the column seeded for it
        outputs = [gradient[p] for p in positions]
        # the lower triangle only: each term's columns at or after the one seeded for it
        wanted = {targets[j] for k, c in seeded.items() for j in columns_of[k] if j >= c}
        adjoints = backprop(outputs, [one_like(o) for o in outputs], wanted)
        for var, value in adjoints.items():
            r = column_of[var]
            k = owner[r]
            found.append((k, r, seeded[k], value))
    return found


@collector_paused
def block_hessian(terms: Sequence[Any], wrt: Sequence[Any], *, max_pattern: int = DEFAULT_MAX_PATTERN) -> BlockHessian:
    """The Hessian of ``sum_k w_k terms[k]`` over ``wrt``, kept per term (see :class:`BlockHessian`).

    >>> from exprgraph import symbols
    >>> x, y, z = symbols("x y z")
    >>> H = block_hessian([x * y, y * y * z], [x, y, z])
    >>> list(zip(H.rows, H.cols)), H.term.tolist(), H.position.tolist()
    ([(1, 0), (1, 1), (2, 1)], [0, 1, 1], [0, 1, 2])
    >>> H.assemble([1.0, 2.0 * 3.0, 2.0 * 5.0], [2.0, 1.0]).tolist()   # at y = 5, z = 3
    [2.0, 6.0, 10.0]
    """
    fs = [as_term(t) for t in terms]
    targets = [as_term(w) for w in wrt]
    _check_scalars(fs, "Hessian")
    _check_scalars(targets, "Hessian")
    columns = _columns(targets)
    patterns = dependency_sets(fs, columns, max_pattern)
    found: list[tuple[int, int, int, Term]] = []
    for group in colour_rows(patterns):
        found.extend(_group_blocks(group, fs, patterns, targets))
    n = len(targets)
    ks, rs, cs, values = zip(*found, strict=True) if found else ((), (), (), ())
    term, row, col = (np.array(a, dtype=np.int64) for a in (ks, rs, cs))
    order = np.lexsort((col, row, term))  # by term, then row and column
    keys, position = np.unique(row[order] * n + col[order], return_inverse=True)  # the pattern, by row and column
    return BlockHessian(
        rows=(keys // n).tolist(),
        cols=(keys % n).tolist(),
        values=[values[e] for e in order.tolist()],
        term=term[order],
        position=position.reshape(-1).astype(np.int64),
        shape=(n, n),
        n_terms=len(fs),
    )
