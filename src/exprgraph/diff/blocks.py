"""Sparse Hessians of weighted sums (a Lagrangian) kept per term: blocks, then a scatter-add.

The Hessian of ``L = sum_k w_k f_k`` (an objective and constraints weighted by multipliers) could
be built as the sparse Hessian of the sum: every entry is then one term adding up the second
derivatives of all the ``f_k`` that meet there, and entries differ in shape wherever the number
of contributors differs. :func:`block_hessian` keeps the blocks apart instead: the entries of
each ``f_k``'s own Hessian (the same expression shapes wherever ``f_k`` repeats, which is what a
code generator can turn into loops), with for each entry the term ``k`` it belongs to and the
pattern position it adds into. :meth:`BlockHessian.assemble` multiplies the entries' numbers by
their weights and scatter-adds them into the pattern (one ``numpy.bincount``).
:func:`jacobian_and_block_hessian` also gives the sparse Jacobian of the terms: the gradients its
first sweeps find are its entries.

How: terms that share no variable are differentiated together (the rows coloured as in
:mod:`exprgraph.diff.pattern`): one sweep for the gradient of their sum (each term seeded with its
own 1, as :func:`~exprgraph.diff.sparse_jacobian` seeds its rows), then one seeded sweep
per slot (the first non-constant partial of every term at once, then the second, ...). A
second derivative of that sum lies on two variables of one term only, so each entry found is
one term's entry, and the number of sweeps follows the number of colours and the variables per
term, not the number of terms.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ..core import Term, add, as_term
from ..core.op import get_op
from .constants import restored, standing_in
from .pattern import DEFAULT_MAX_PATTERN, by_colour, dependency_sets, groups_of, pattern_entries, row_colours
from .reverse import backprop, collector_paused, one_like
from .sparse import SparseMatrix, _check_scalars, _columns, _sorted_coo
from .sweep import SWEEP

__all__ = ["BlockHessian", "block_hessian", "jacobian_and_block_hessian"]

_NEG = get_op("neg")
#: the dtypes of the entries whose negation moves to their weight (exact: an int's -(-2**63) wraps)
_FLOATS = frozenset(("float64", "float32"))


@dataclass(frozen=True, eq=False)
class BlockHessian:
    """The lower triangle of ``sum_k w_k d2 f_k``, kept as per-term blocks and a scatter map.

    The pattern is ``(rows[p], cols[p])`` with ``rows[p] >= cols[p]``, sorted by row then column.
    Block entry ``e`` is the term ``values[e]``, negated where ``negated[e]``: a second derivative
    of ``terms[term[e]]`` alone; it adds into pattern entry ``position[e]``. Entries are ordered by
    term, then row and column. Negated entries are a mirror column's (``-Q``'s derivatives are
    ``Q``'s, negated: the same terms) and those the sweeps built as ``-v`` (kept as ``v``): the
    sign goes to the weight, ``(-w)*v == w*(-v)`` exactly, so no ``-v`` is built or evaluated.
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
    #: whether each block entry is the negation of its term in ``values`` (None: none is)
    negated: np.ndarray | None = None

    @property
    def nnz(self) -> int:
        """Number of entries of the (lower triangular) pattern."""
        return len(self.rows)

    def __repr__(self) -> str:
        return f"BlockHessian(shape={self.shape}, nnz={self.nnz}, blocks={len(self.values)}, terms={self.n_terms})"

    @cached_property
    def weight_index(self) -> np.ndarray:
        """Each entry's index into the signed weights ``[w, -w]``: ``term[e]``, plus ``n_terms`` where negated."""
        if self.negated is None or not self.negated.any():
            return self.term
        return self.term + self.n_terms * self.negated.astype(np.int64)

    def signs(self) -> np.ndarray:
        """The sign (1.0 or -1.0) of each block entry: its second derivative is ``signs()[e] * values[e]``."""
        if self.negated is None:
            return np.ones(len(self.values))
        return np.where(self.negated, -1.0, 1.0)

    def assemble(self, numbers: Any, weights: Any, scratch: np.ndarray | None = None) -> np.ndarray:
        """The pattern's values: ``numbers`` (of :attr:`values`) times their terms' signed ``weights``, scatter-added.

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
        index = self.weight_index
        negated = index is not self.term  # a negated entry: w*(-v) == (-w)*v, bit for bit
        if SWEEP is not None and _int64_rows(index) and _int64_rows(self.position):
            # the same sums in the same order, in one pass, reading [w, -w] without building it (_csweep_assemble.c)
            out = np.empty(self.nnz)
            SWEEP.assemble(self.position, index, np.ascontiguousarray(w), np.ascontiguousarray(data), out, negated)
            return out
        if negated:
            signed = np.empty(2 * len(w))
            signed[: len(w)] = w
            np.negative(w, out=signed[len(w) :])
            w = signed
        if scratch is None or scratch.shape != data.shape or scratch.dtype != np.float64:
            return np.bincount(self.position, weights=data * w[index], minlength=self.nnz)
        np.take(w, index, out=scratch)
        np.multiply(scratch, data, out=scratch)
        return np.bincount(self.position, weights=scratch, minlength=self.nnz)

    def summed(self, weights: Sequence[Any]) -> SparseMatrix:
        """The same lower triangle as one term per entry, ``sum w_k * entry`` (to check or to compile flat)."""
        if len(weights) != self.n_terms:
            raise ValueError(f"expected {self.n_terms} weights (one per term), got {len(weights)}")
        parts: list[list[Term]] = [[] for _ in self.rows]
        ws = [as_term(w) for w in weights]
        negated = [False] * len(self.values) if self.negated is None else self.negated.tolist()
        for value, k, p, neg in zip(self.values, self.term.tolist(), self.position.tolist(), negated, strict=True):
            parts[p].append(ws[k] * (-value if neg else value))
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


class _Entries:
    """Entries found sweep by sweep: the term, row and column of each (as arrays per sweep), its value and sign."""

    def __init__(self) -> None:
        self.parts: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
        self.values: list[Term] = []
        #: per sweep: whether each of its entries is its value negated (None: none is)
        self.flags: list[np.ndarray | None] = []

    def add(
        self,
        term: np.ndarray,
        row: np.ndarray,
        col: np.ndarray,
        values: Iterable[Term],
        negated: np.ndarray | None = None,
    ) -> None:
        """Appends one sweep's entries (``values`` in the arrays' order; ``negated[e]``: entry e is ``-value``)."""
        for part, a in zip(self.parts, (term, row, col), strict=True):
            part.append(a)
        self.values.extend(values)
        self.flags.append(negated)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The term, row and column of every entry, in the order they were added."""
        empty = np.empty(0, dtype=np.int64)
        term, row, col = (np.concatenate(p) if p else empty for p in self.parts)
        return term, row, col

    def negated(self) -> np.ndarray | None:
        """Whether each entry is its value negated, in the order they were added (None: none is)."""
        if all(f is None for f in self.flags):
            return None
        parts = [
            np.zeros(len(t), dtype=bool) if f is None else f for f, t in zip(self.flags, self.parts[0], strict=True)
        ]
        return np.concatenate(parts)


def _unnegated(values: list[Term], candidates: np.ndarray) -> np.ndarray | None:
    """Takes each float ``-v`` among ``values[candidates]`` as ``v``, negated: which entries were (None: none).

    ``w*(-v) == (-w)*v`` bit for bit, so the sign can go to the weight: no ``-v`` is evaluated.
    """
    flags = None
    for i in candidates.tolist():
        v = values[i]
        if v.op is _NEG and v.dtype in _FLOATS:
            if flags is None:
                flags = np.zeros(len(values), dtype=bool)
            values[i] = v.args[0]  # -v -> v, negated
            flags[i] = True
    return flags


@dataclass
class _Found:
    """What the sweeps of :func:`_group_blocks` found: second derivatives; first ones (row = col) when asked."""

    hessian: _Entries
    gradient: _Entries | None


def _group_blocks(
    group: list[int], terms: Sequence[Term], local: np.ndarray, owner: np.ndarray, targets: Sequence[Term], out: _Found
) -> None:
    """Adds to ``out`` the entries of the gradients and of the lower-triangle Hessians of the terms of ``group``.

    ``local``: the columns the group's terms depend on, ascending; ``owner``: the term of each.
    One sweep gives the gradient of the group's sum; then one seeded sweep per *slot*: the first
    variable of every term (by column) whose partial is not constant, then the second, and so on.
    The terms share no variable, so each sweep gives every term the column of its own variable.
    """
    member = np.searchsorted(np.asarray(group, dtype=np.int64), owner)  # the place in group of each owner
    variables = list(map(targets.__getitem__, local.tolist()))
    # the gradient of the group's sum: each term seeded with its own 1 (a float32 term's partials stay float32)
    summands = [terms[k] for k in group]
    wanted = set(variables)
    partials = backprop(summands, list(map(one_like, summands)), wanted)
    gradient = list(map(partials.get, variables))  # None: no partial (zero)
    position = dict(zip(variables, range(len(variables)), strict=True)).__getitem__  # variable -> its position in local
    if out.gradient is not None:
        at = np.fromiter(map(position, partials), np.int64, len(partials))
        out.gradient.add(owner[at], local[at], local[at], partials.values())
    # the positions whose partial is not constant (a constant partial: a zero column of the Hessian)
    live = np.flatnonzero([p is not None and (p.args != () or p.op.name == "symbol") for p in gradient])
    mirror = _Mirrors(gradient, live, member, len(group))
    seeded = live[~mirror.follows[live]]  # a mirror's column is not swept: its leader's sweep gives it
    slot = _ranks(member[seeded])  # which slot each seeded position goes to: its rank among its member's
    seeded_at = np.empty(len(group), dtype=np.int64)  # member -> the position seeded for it in this slot
    after = np.arange(len(local), dtype=np.int64)
    # wanted, from here on: the lower triangle only, each member's columns at or after the one seeded for it
    was = np.ones(len(local), dtype=bool)  # which positions are in wanted
    for s in range(int(slot.max()) + 1 if len(slot) else 0):
        seeds = seeded[slot == s]
        outputs = [partials[variables[p]] for p in seeds.tolist()]
        seeded_at.fill(len(local))  # (members without a seed here want nothing)
        seeded_at[member[seeds]] = seeds
        # a member's seed only moves on, slot after slot: its wanted columns shrink (none come back)
        now = after >= seeded_at[member]
        wanted.difference_update(map(variables.__getitem__, np.flatnonzero(was & ~now).tolist()))
        wanted.update(map(variables.__getitem__, np.flatnonzero(now & ~was).tolist()))
        was = now
        adjoints = backprop(outputs, list(map(one_like, outputs)), wanted)
        at = np.fromiter(map(position, adjoints), np.int64, len(adjoints))
        values = list(adjoints.values())
        # a -v entry is kept as v, negated; looked for in the rows of the variables whose partial is a -Q
        negated = _unnegated(values, np.flatnonzero(mirror.negative[at]))
        out.hessian.add(owner[at], local[at], local[seeded_at[member[at]]], values, negated)
        mirror.add(seeds, at, (values, negated), member, (owner, local), out.hessian)


class _Mirrors:
    """Pairs of one term's partials ``Q`` and ``-Q`` (a function of ``x_i - x_j``): one sweep gives both columns.

    Of a pair, the lower position (the *leader*) is swept; the other (the *mirror*) gets the
    leader's entries in its rows, each negated: ``d(-Q)/dx = -(dQ/dx)`` (the same terms, marked
    negated: the sign goes to the weight when the blocks are assembled). Every adjoint is linear
    in its seed and negation is exact, so these are the numbers a sweep of its own gives, bit for
    bit, except where that sweep's folds differ with the sign of the seed (``(1/b)*t`` becomes
    ``t/b``, ``(-1/b)*t`` stays): there they differ by a rounding. A position takes part in one
    pair at most.
    """

    def __init__(self, gradient: list[Term | None], live: np.ndarray, member: np.ndarray, members: int) -> None:
        self.follows = np.zeros(len(gradient), dtype=bool)  # position -> it is a mirror (not swept)
        self.mirror_of = np.full(len(gradient), -1, dtype=np.int64)  # leader position -> its mirror's position
        self.at = np.full(members, -1, dtype=np.int64)  # member -> the mirror position of its seed in this slot
        #: position -> its partial is a negation -Q (where the sweeps build -v second derivatives too)
        self.negative = np.zeros(len(gradient), dtype=bool)
        positions = live.tolist()
        partials = [g for g in map(gradient.__getitem__, positions) if g is not None]  # (all are: live)
        negated = [i for i, g in enumerate(partials) if g.op is _NEG]  # (live partials are terms)
        if not negated:
            return
        self.negative[[positions[i] for i in negated]] = True
        where = dict(zip(partials, positions, strict=True)).get  # a partial -> a live position holding it
        owner = member.tolist()
        paired: set[int] = set()
        leads: list[int] = []
        mirrors: list[int] = []
        for i in negated:
            p = positions[i]
            q = where(partials[i].args[0])
            if q is None or owner[q] != owner[p] or p in paired or q in paired:
                continue
            paired.add(p)
            paired.add(q)
            leads.append(min(p, q))
            mirrors.append(max(p, q))
        self.mirror_of[leads] = mirrors
        self.follows[mirrors] = True

    def add(
        self,
        seeds: np.ndarray,
        at: np.ndarray,
        found: tuple[list[Term], np.ndarray | None],
        member: np.ndarray,
        columns: tuple[np.ndarray, np.ndarray],
        hessian: _Entries,
    ) -> None:
        """Adds the mirrors' entries of one slot: the slot's entries (``found``: their values at positions
        ``at`` and which are negated), negated.

        ``columns``: the term and the column of each position (``owner``, ``local``).
        """
        mirrors = self.mirror_of[seeds]
        if not (mirrors >= 0).any():
            return
        who = self.at
        who.fill(-1)
        who[member[seeds]] = mirrors  # (each member has one seed in a slot)
        follow = who[member[at]]
        keep = np.flatnonzero((follow >= 0) & (at >= follow))  # the mirror's rows: at or after its own column
        if len(keep):
            owner, local = columns
            rows = at[keep]
            values, negated = found
            mirrored = list(map(values.__getitem__, keep.tolist()))  # -(dQ/dx): dQ/dx, negated
            signs = np.ones(len(keep), dtype=bool) if negated is None else ~negated[keep]
            hessian.add(owner[rows], local[rows], local[follow[keep]], mirrored, signs)


def _ranks(keys: np.ndarray) -> np.ndarray:
    """For each entry, how many earlier entries have the same key (``[4, 7, 4, 4] -> [0, 0, 1, 2]``)."""
    if not len(keys):
        return keys
    by_key = np.argsort(keys, kind="stable")
    ordered = keys[by_key]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    counts = np.diff(np.append(starts, len(keys)))
    ranks = np.empty_like(keys)
    ranks[by_key] = np.arange(len(keys), dtype=keys.dtype) - np.repeat(starts, counts)
    return ranks


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
    standing = standing_in([as_term(t) for t in terms], [as_term(w) for w in wrt])
    if standing is not None:  # constant variables: swept as symbols standing in for them, put back in the entries
        return restored(block_hessian(*standing[:2], max_pattern=max_pattern), standing[2])
    fs, targets, found = _sweeps(terms, wrt, max_pattern, None)
    return _assembled(found.hessian, len(fs), len(targets))


@collector_paused
def jacobian_and_block_hessian(
    terms: Sequence[Any], wrt: Sequence[Any], first_row: int = 0, *, max_pattern: int = DEFAULT_MAX_PATTERN
) -> tuple[SparseMatrix, BlockHessian]:
    """The sparse Jacobian of ``terms[first_row:]`` and :func:`block_hessian` of ``terms``, from the same sweeps.

    The block Hessian's first sweeps are the gradients of its terms: the Jacobian of a
    Lagrangian's constraints (given after the objective's ``first_row`` terms) comes with them,
    entry for entry the terms :func:`~exprgraph.diff.sparse_jacobian` gives.

    >>> from exprgraph import symbols
    >>> x, y = symbols("x y")
    >>> J, H = jacobian_and_block_hessian([x * x, x * y], [x, y], 1)
    >>> J.rows, J.cols, [str(v) for v in J.values], H.nnz
    ([0, 0], [0, 1], ['y', 'x'], 2)
    """
    if not 0 <= first_row <= len(terms):
        raise ValueError(f"first_row must be between 0 and the number of terms ({len(terms)}), not {first_row}")
    standing = standing_in([as_term(t) for t in terms], [as_term(w) for w in wrt])
    if standing is not None:  # constant variables: swept as symbols standing in for them, put back in the entries
        jac, hess = jacobian_and_block_hessian(*standing[:2], first_row, max_pattern=max_pattern)
        return restored(jac, standing[2]), restored(hess, standing[2])
    gradients = _Entries()
    fs, targets, found = _sweeps(terms, wrt, max_pattern, gradients)
    term, _, col = gradients.arrays()
    mine = np.flatnonzero(term >= first_row)  # the entries of the rows asked for
    shape = (len(fs) - first_row, len(targets))
    jacobian = _sorted_coo(term[mine] - first_row, col[mine], gradients.values, mine, shape)
    return jacobian, _assembled(found.hessian, len(fs), len(targets))


def _sweeps(
    terms: Sequence[Any], wrt: Sequence[Any], max_pattern: int, gradients: _Entries | None
) -> tuple[list[Term], list[Term], _Found]:
    """The terms, the variables, and the Hessian entries of every term (its gradient's into ``gradients``, if given)."""
    fs = [as_term(t) for t in terms]
    targets = [as_term(w) for w in wrt]
    _check_scalars(fs, "Hessian")
    _check_scalars(targets, "Hessian")
    columns = _columns(targets)
    patterns = dependency_sets(fs, columns, max_pattern)
    colours = row_colours(patterns, len(targets))
    owners, cols = pattern_entries(patterns)
    order, starts = by_colour(colours, owners, cols)  # each colour's columns, ascending
    owners, cols = owners[order], cols[order]
    found = _Found(_Entries(), gradients)
    for colour, group in enumerate(groups_of(colours)):
        lo, hi = starts[colour], starts[colour + 1]
        _group_blocks(group, fs, cols[lo:hi], owners[lo:hi], targets, found)
    return fs, targets, found


def _int64_rows(a: np.ndarray) -> bool:
    """Whether ``a`` is a contiguous int64 array (what the C scatter-add reads)."""
    return a.dtype == np.int64 and a.flags.c_contiguous


def _assembled(entries: _Entries, n_terms: int, n: int) -> BlockHessian:
    """The block Hessian of the entries found: sorted by term, row and column, with the pattern they add into."""
    term, row, col = entries.arrays()
    at = row * n + col  # an entry's place in the n x n matrix
    # by term, then row and column: one stable sort of one key (lexsort's order) while the key fits in 63 bits
    order = np.argsort(term * (n * n) + at, kind="stable") if n_terms * n * n < 2**62 else np.lexsort((col, row, term))
    keys, position = np.unique(at[order], return_inverse=True)  # the pattern, by row and column
    negated = entries.negated()
    return BlockHessian(
        rows=(keys // n).tolist(),
        cols=(keys % n).tolist(),
        values=list(map(entries.values.__getitem__, order.tolist())),
        term=term[order],
        position=position.reshape(-1).astype(np.int64),
        shape=(n, n),
        n_terms=n_terms,
        negated=None if negated is None else negated[order],
    )
