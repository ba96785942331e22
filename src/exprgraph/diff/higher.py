"""Higher order and matrix-free derivatives: jacobian, hessian, vjp and jvp, all by reverse mode.

A gradient is a term like any other, so second derivatives are gradients of gradients. ``vjp``
seeds the backward sweep with a cotangent instead of 1. ``jvp`` (a forward-mode product) is
obtained from ``vjp`` by linearity: ``vjp(f, wrt, u)`` is linear in the fresh symbol ``u``, and
the gradient of ``<vjp(f, wrt, u), v>`` with respect to ``u`` is ``J v``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import Symbol, Term, add, as_term, const, mul
from ..core import sum as sum_
from ..errors import DifferentiationError
from .reverse import _ONE, backprop, grad, resolve_wrt, zeros_like

__all__ = ["jacobian", "hessian", "vjp", "jvp"]


def _outputs(fs: Any) -> list[Term]:
    if isinstance(fs, (list, tuple)):
        return [as_term(f) for f in fs]
    return [as_term(fs)]


def _scalar_rows(f: Term) -> list[tuple[Term, Term]]:
    """``(output, seed)`` pairs whose vjps are the rows of the Jacobian of ``f`` (one per entry)."""
    if not f.shape:
        return [(f, _ONE)]
    if not all(d.__class__ is int for d in f.shape):
        raise DifferentiationError(f"jacobian needs outputs of known shape, not {f.shape}; use vjp with a cotangent")
    rows = []
    for index in np.ndindex(*f.shape):
        basis = np.zeros(f.shape)
        basis[index] = 1.0
        rows.append((f, const(basis)))
    return rows


def _finish(found: dict[Term, Term], targets: list[Term]) -> list[Term]:
    return [found[t] if t in found else zeros_like(t) for t in targets]


def jacobian(fs: Any, wrt: Any = None) -> list[list[Term]]:
    """The Jacobian of ``fs`` (a term or a list of terms) as rows of terms: ``J[i][j] = d fs_i / d wrt_j``.

    A tensor-valued output of known shape gives one row per entry, in C order. ``wrt`` as for
    :func:`grad` (None: every free symbol of the outputs, ordered by name).

    >>> from exprgraph import symbols
    >>> x, y = symbols("x y")
    >>> [[str(d) for d in row] for row in jacobian([x * y, x + y], [x, y])]
    [['y', 'x'], ['1.0', '1.0']]
    """
    outputs = _outputs(fs)
    targets, _ = resolve_wrt(outputs, wrt)
    rows: list[list[Term]] = []
    for f in outputs:
        for out, seed in _scalar_rows(f):
            rows.append(_finish(backprop([out], [seed], targets), targets))
    return rows


def hessian(f: Term, wrt: Any = None) -> list[list[Term]]:
    """The matrix of second derivatives ``H[i][j] = d2f / (d wrt_i d wrt_j)`` of a scalar ``f``.

    The variables must be scalars. Row ``i`` is the gradient of ``df/dwrt_i``.

    >>> from exprgraph import symbols
    >>> x, y = symbols("x y")
    >>> [[str(d) for d in row] for row in hessian(x**2 * y, [x, y])]
    [['y*2', '2*x'], ['2*x', '0.0']]
    """
    f = as_term(f)
    targets, _ = resolve_wrt([f], wrt)
    for t in targets:
        if t.shape:
            raise DifferentiationError(f"hessian takes scalar variables; {t} has shape {t.shape} (use jacobian)")
    first = grad(f, list(targets))
    return [grad(d, list(targets)) for d in first]


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
    values = _finish(backprop([f], [as_term(v)], targets), targets)
    if kind == "one":
        return values[0]
    if kind == "list":
        return values
    return dict(zip(targets, values, strict=True))


def _fresh_symbol(f: Term, taken: Sequence[Term]) -> Term:
    used = {s.name for s in f.free_symbols} | {s.name for t in taken for s in as_term(t).free_symbols}
    for i in itertools.count():
        name = f"_jvp_u{i}"
        if name not in used:
            return Symbol(name, "float64", f.shape)
    raise AssertionError("unreachable")  # pragma: no cover


def jvp(f: Term, wrt: Any, v: Any) -> Term:
    """The Jacobian-vector product ``(df/dwrt) v``: the derivative of ``f`` along the tangent ``v``.

    ``wrt`` is one variable or a list; ``v`` the matching tangent (or list of tangents), each of
    its variable's shape (numbers and arrays are made constants). The result has ``f``'s shape.

    >>> from exprgraph import symbols, sin
    >>> x, y = symbols("x y")
    >>> print(jvp(x * y, [x, y], [1.0, 2.0]))
    y + x*2.0
    """
    f = as_term(f)
    targets, kind = resolve_wrt([f], wrt)
    tangents = [v] if kind == "one" else list(v) if kind == "list" else None
    if tangents is None:
        raise TypeError("jvp needs the variables wrt as a term or a list, matching the tangents v")
    if len(tangents) != len(targets):
        raise ValueError(f"jvp got {len(tangents)} tangents for {len(targets)} variables")
    tangents = [as_term(t) for t in tangents]
    u = _fresh_symbol(f, tangents) if f.shape else _ONE
    found = backprop([f], [u], targets)
    terms = []
    for t, tangent in zip(targets, tangents, strict=True):
        if t not in found:
            continue
        d = found[t]
        unit = tangent.is_const and tangent.attr.__class__ is float and tangent.attr == 1.0 and d.dtype == "float64"
        p = d if unit else mul(d, tangent)
        terms.append(sum_(p) if p.shape else p)
    if not terms:
        return zeros_like(f)
    total = terms[0] if len(terms) == 1 else add(*terms)
    if not f.shape:
        return total
    out = grad(total, u)
    if u in out.free_symbols:  # pragma: no cover - every gradient rule is linear in its upstream
        raise DifferentiationError("jvp: a gradient rule is not linear in its upstream value")
    return out
