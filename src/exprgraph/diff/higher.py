"""Higher order and matrix-free derivatives: jacobian, hessian (dense or sparse), vjp and hvp.

A gradient is a term like any other, so second derivatives are gradients of gradients. ``vjp``
seeds the backward sweep with a cotangent instead of 1; ``hvp`` is forward mode over the
gradient (:mod:`exprgraph.diff.forward`), so a Hessian-vector product costs two sweeps and no
Hessian. Dense matrices are checked against a size limit before anything is built; with
``sparse=True`` only the structural non-zeros are built (:mod:`exprgraph.diff.sparse`).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..core import Term, as_term, const
from ..errors import DifferentiationError, SizeLimitError
from .forward import forward, tangent_seeds
from .pattern import DEFAULT_MAX_PATTERN
from .reverse import backprop, collector_paused, grad, one_like, resolve_wrt, zeros_like
from .sparse import SparseMatrix, sparse_hessian, sparse_jacobian

__all__ = ["jacobian", "hessian", "vjp", "hvp", "DEFAULT_MAX_ENTRIES", "ENV_MAX_ENTRIES"]

#: entries of a dense Jacobian or Hessian (a 2048 x 2048 matrix of terms) unless raised
DEFAULT_MAX_ENTRIES = 2**22
#: environment variable that sets that limit for every dense jacobian/hessian
ENV_MAX_ENTRIES = "EXPRGRAPH_MAX_DENSE_ENTRIES"


def _dense_limit(rows: int, cols: int, limit: int | None, what: str) -> None:
    """Raise SizeLimitError before building a dense ``rows x cols`` matrix larger than the limit."""
    if limit is None:
        text = os.environ.get(ENV_MAX_ENTRIES, "")
        try:
            limit = int(text.replace("_", "")) if text else DEFAULT_MAX_ENTRIES
        except ValueError:
            raise ValueError(f"${ENV_MAX_ENTRIES} must be a positive integer, not {text!r}") from None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"max_entries must be a positive int, not {limit!r}")
    size = rows * cols
    if size > limit:
        raise SizeLimitError(
            f"a dense {what} of {rows:,} x {cols:,} = {size:,} entries is more than the limit of {limit:,}: "
            f"use sparse=True (only the non-zeros), or pass max_entries=N or set ${ENV_MAX_ENTRIES}=N to allow more",
            size=size,
            limit=limit,
            setting=f"max_entries / ${ENV_MAX_ENTRIES}",
        )


def _outputs(fs: Any) -> list[Term]:
    if isinstance(fs, (list, tuple)):
        return [as_term(f) for f in fs]
    return [as_term(fs)]


def _scalar_rows(f: Term) -> list[tuple[Term, Term]]:
    """``(output, seed)`` pairs whose vjps are the rows of the Jacobian of ``f`` (one per entry)."""
    if not f.shape:
        return [(f, one_like(f))]
    if not all(d.__class__ is int for d in f.shape):
        raise DifferentiationError(f"jacobian needs outputs of known shape, not {f.shape}; use vjp with a cotangent")
    rows = []
    for index in np.ndindex(*f.shape):
        basis = np.zeros(f.shape, dtype=np.float32 if f.dtype == "float32" else np.float64)
        basis[index] = 1.0
        rows.append((f, const(basis)))
    return rows


def _finish(found: dict[Term, Term], targets: list[Term]) -> list[Term]:
    return [found[t] if t in found else zeros_like(t) for t in targets]


def _entries(t: Term) -> int:
    if not t.shape:
        return 1
    if not all(d.__class__ is int for d in t.shape):
        raise DifferentiationError(f"jacobian needs outputs of known shape, not {t.shape}; use vjp with a cotangent")
    return int(np.prod(t.shape))


@collector_paused
def jacobian(
    fs: Any,
    wrt: Any = None,
    *,
    sparse: bool = False,
    max_entries: int | None = None,
    max_pattern: int = DEFAULT_MAX_PATTERN,
) -> list[list[Term]] | SparseMatrix:
    """The Jacobian of ``fs`` (a term or a list of terms): ``J[i][j] = d fs_i / d wrt_j``.

    Dense (the default): rows of terms; a tensor-valued output of known shape gives one row per
    entry, in C order. Larger than ``max_entries`` entries raises :class:`SizeLimitError` before
    anything is built. ``sparse=True``: a :class:`SparseMatrix` of the structural non-zeros of
    scalar outputs by scalar variables. ``wrt`` as for :func:`grad` (None: every free symbol of the
    outputs, ordered by name).

    >>> from exprgraph import symbols
    >>> x, y = symbols("x y")
    >>> [[str(d) for d in row] for row in jacobian([x * y, x + y], [x, y])]
    [['y', 'x'], ['1.0', '1.0']]
    >>> jacobian([x * y, y], [x, y], sparse=True).cols
    [0, 1, 1]
    """
    if sparse:
        return sparse_jacobian(fs, wrt, max_pattern=max_pattern)
    outputs = _outputs(fs)
    targets, _ = resolve_wrt(outputs, wrt)
    _dense_limit(sum(_entries(f) for f in outputs), len(targets), max_entries, "Jacobian")
    rows: list[list[Term]] = []
    for f in outputs:
        for out, seed in _scalar_rows(f):
            rows.append(_finish(backprop([out], [seed], targets), targets))
    return rows


@collector_paused
def hessian(
    f: Any,
    wrt: Any = None,
    *,
    sparse: bool = False,
    max_entries: int | None = None,
    max_pattern: int = DEFAULT_MAX_PATTERN,
) -> list[list[Term]] | SparseMatrix:
    """The matrix of second derivatives ``H[i][j] = d2f / (d wrt_i d wrt_j)`` of a scalar ``f``.

    A vector or matrix variable stands for its entries in C order. Dense: row ``i`` is the gradient
    of ``df/dwrt_i``, checked against ``max_entries`` first. ``sparse=True``: a :class:`SparseMatrix` of the structural
    non-zeros, never building the dense matrix.

    >>> from exprgraph import symbols
    >>> x, y = symbols("x y")
    >>> [[str(d) for d in row] for row in hessian(x**2 * y, [x, y])]
    [['y*2', '2.0*x'], ['2.0*x', '0.0']]
    >>> hessian(x**2 * y, [x, y], sparse=True)
    SparseMatrix(shape=(2, 2), nnz=3)
    """
    if sparse:
        return sparse_hessian(f, wrt, max_pattern=max_pattern)
    f = as_term(f)
    targets, _ = resolve_wrt([f], wrt)
    if any(t.shape for t in targets):  # vector variables: entry by entry, through the sparse pattern
        sizes = [int(np.prod(t.shape)) if all(isinstance(d, int) for d in t.shape) else 0 for t in targets]
        _dense_limit(sum(sizes), sum(sizes), max_entries, "Hessian")
        return sparse_hessian(f, wrt, max_pattern=max_pattern).to_dense()
    _dense_limit(len(targets), len(targets), max_entries, "Hessian")
    first = grad(f, list(targets))
    return [grad(d, list(targets)) for d in first]


def _shaped(values: list[Term], targets: list[Term], kind: str) -> Any:
    if kind == "one":
        return values[0]
    if kind == "list":
        return values
    return dict(zip(targets, values, strict=True))


@collector_paused
def vjp(f: Term, wrt: Any, v: Any) -> Any:
    """The vector-Jacobian product ``v^T (df/dwrt)`` for a cotangent ``v`` of ``f``'s shape.

    Returns one term per variable, shaped like :func:`grad` (one, list or dict).

    >>> from exprgraph import Symbol
    >>> a = Symbol("a", shape=(3,))
    >>> print(vjp(2.0 * a, a, [1.0, 0.0, 0.0]))
    array([1.0, 0.0, 0.0])*2.0
    """
    f = as_term(f)
    targets, kind = resolve_wrt([f], wrt)
    return _shaped(_finish(backprop([f], [as_term(v)], targets), targets), targets, kind)


@collector_paused
def hvp(f: Any, wrt: Any, v: Any) -> Any:
    """The Hessian-vector product ``H v`` of a scalar ``f``: forward mode over the gradient, no Hessian.

    ``wrt`` one variable or a list, ``v`` the matching vector entries (terms or numbers of each
    variable's shape); the result is shaped like ``wrt`` (one term or a list).

    >>> from exprgraph import symbols
    >>> x, y = symbols("x y")
    >>> [str(t) for t in hvp(x**2 * y, [x, y], [1.0, 0.0])]
    ['y*2', '2.0*x']
    """
    f = as_term(f)
    if f.shape:
        raise DifferentiationError(f"hvp needs a scalar f, but f has shape {f.shape}")
    targets, kind, seeds = tangent_seeds([f], wrt, v, "hvp", "vector entries")
    gradient = grad(f, list(targets))
    found = forward(gradient, seeds)
    values = [zeros_like(t) if d is None else d for t, d in zip(targets, found, strict=True)]
    return _shaped(values, targets, kind)
