"""Numeric gradients: values of all partials at a point or at many points at once, and gradient checks.

``numeric_gradient`` evaluates the symbolic gradient (built once per ``f`` and cached) together
with ``f`` in one vectorised pass, so arrays of parameter sets cost one evaluation. Semantics are
IEEE: a partial that is undefined somewhere is nan there, without an exception or a warning.
Partials with respect to intermediate nodes and constants are there too (CGraph's
``numeric_gradient`` gives every node's), and the mapping answers zero for a variable ``f`` does not
use. ``check_grad`` compares the gradient with central finite differences along a random direction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, overload

import numpy as np

from ..core import Term, as_term, postorder
from ..errors import MissingValueError
from ..eval import evaluate
from ..eval.bind import MISSING, lookup
from .constants import standing_in
from .reverse import GradientMap, grad, resolve_wrt

__all__ = ["numeric_gradient", "check_grad", "GradCheck", "GradientMap", "elementwise_errors"]


@dataclass(frozen=True)
class _ZeroPartial:
    """The numeric partial by a term ``f`` does not contain: zeros of the points' shape (and the term's)."""

    points: tuple[int, ...]

    def __call__(self, t: Term) -> Any:
        if not t.shape:
            return np.zeros(self.points)[()]
        if any(d.__class__ is not int for d in t.shape):
            raise KeyError(f"the zero partial by {t} has a symbolic shape {t.shape}: evaluate with wrt={t.name!r}")
        return np.zeros(self.points + tuple(t.shape))


#: the gradients kept for numeric_gradient: a loop over a few functions finds theirs, and many large
#: functions do not stay alive through the cache (each keeps its f and gradient terms)
GRADIENT_CACHE_SIZE = 32


@lru_cache(maxsize=GRADIENT_CACHE_SIZE)
def _gradient_terms(f: Term, targets: tuple[Term, ...]) -> tuple[Term, ...]:
    return tuple(grad(f, list(targets)))


def _free_constants(f: Term, targets: list[Term], env: Mapping[Any, Any]) -> tuple[Term, list[Term], dict[Term, Any]]:
    """``f`` and ``targets`` with each constant target made a symbol, and the constants' values by symbol.

    The gradient rules never differentiate a constant operand: the partial by a constant is the
    partial by a symbol in its place (:mod:`.constants`), at its value, so the gradient is built
    (and cached) over the stand-ins and evaluated with their values.
    """
    standing = standing_in([f], targets, (k for k in env if isinstance(k, str)))
    if standing is None:
        return f, targets, {}
    (over,), stand, back = standing
    values = {s: c.value.array if hasattr(c.value, "array") else c.value for s, c in back.items()}
    return over, stand, values


def _shape_values(f: Term, env: Mapping[Any, Any], targets: list[Term]) -> tuple[Any, list[Any]]:
    f, targets, stand_ins = _free_constants(f, targets, env)
    if stand_ins:
        env = {**env, **stand_ins}
    terms = _gradient_terms(f, tuple(targets))
    values = evaluate([f, *terms], env)
    fvalue, partials = values[0], values[1:]
    shape = np.shape(fvalue)
    out = []
    for t, p in zip(targets, partials, strict=True):
        p = np.asarray(p, dtype=np.float64)
        if not t.shape and p.shape != shape:
            # a partial that does not depend on every input: one value per point all the same
            p = np.broadcast_to(p, np.broadcast_shapes(p.shape, shape)).copy()
        out.append(p[()] if p.ndim == 0 else p)
    return fvalue, out


@overload
def numeric_gradient(f: Term, env: Mapping[Any, Any], wrt: Term | str, *, nodes: bool = False) -> Any: ...
@overload
def numeric_gradient(
    f: Term, env: Mapping[Any, Any], wrt: Sequence[Term | str], *, nodes: bool = False
) -> list[Any]: ...
@overload
def numeric_gradient(f: Term, env: Mapping[Any, Any], wrt: None = None, *, nodes: bool = False) -> GradientMap[Any]: ...


def numeric_gradient(f: Term, env: Mapping[Any, Any], wrt: Any = None, *, nodes: bool = False) -> Any:
    """Values of the partial derivatives of the scalar term ``f`` for the symbol values in ``env``.

    ``env`` maps symbols (or names) to numbers or arrays; arrays give the partials at every point
    at once (broadcast like ``evaluate``). ``wrt`` as for :func:`~exprgraph.diff.grad`, and any node
    of ``f`` may be named (an intermediate or a constant); None gives a :class:`GradientMap` over all
    free symbols, or with ``nodes=True`` over every node of ``f``, ``f`` itself included (CGraph's
    ``numeric_gradient``). Undefined partials are nan, infinite ones inf: no exceptions.

    >>> from exprgraph import symbols, sqrt, const
    >>> x, y, w = symbols("x y w")
    >>> d = numeric_gradient(x * y + 3, {x: 2.0, y: 3.0})
    >>> float(d[x]), float(d[y]), float(d[w])
    (3.0, 2.0, 0.0)
    >>> numeric_gradient(sqrt(x), {x: [-1.0, 0.0, 4.0]}, x).tolist()
    [nan, inf, 0.25]
    >>> all_nodes = numeric_gradient((x + 3) * y, {x: 2.0, y: 4.0}, nodes=True)
    >>> float(all_nodes[const(3)]), float(all_nodes[x + 3])
    (4.0, 4.0)
    """
    f = as_term(f)
    if nodes:
        if wrt is not None:
            raise TypeError("numeric_gradient: nodes=True gives the partial by every node; leave wrt out")
        targets, kind = postorder(f), "dict"
    else:
        targets, kind = resolve_wrt([f], wrt)
    fvalue, partials = _shape_values(f, env, targets)
    if kind == "one":
        return partials[0]
    if kind == "list":
        return partials
    return GradientMap(zip(targets, partials, strict=True), f, _ZeroPartial(np.shape(fvalue)))


@dataclass(frozen=True)
class GradCheck:
    """The outcome of :func:`check_grad`: directional derivatives by the gradient and by differences."""

    #: ``<grad f, v>`` at each point
    analytic: Any
    #: ``(f(x + h v) - f(x - h v)) / 2h`` at each point
    numeric: Any
    #: the largest ``|analytic - numeric| / (atol + rtol |numeric|)`` (at most 1 when the check passes)
    error: float
    #: whether they agree within the tolerances (nan matching nan)
    ok: bool

    def __bool__(self) -> bool:
        return self.ok


def check_grad(
    f: Term,
    env: Mapping[Any, Any],
    wrt: Any = None,
    *,
    step: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
) -> GradCheck:
    """Compare the gradient of ``f`` with central finite differences along a random direction.

    For a random direction ``v`` (one normal entry per variable and point, fixed by ``seed``), the
    directional derivative ``<grad f, v>`` must match ``(f(x + h v) - f(x - h v)) / 2h`` with
    ``h = step * max(1, |x|)``, within ``atol + rtol |numeric|`` plus the rounding of ``f``'s own
    values that the quotient carries (``4 eps |f| / 2h``). Only float64 variables are moved (``wrt``
    None: all of them).

    >>> from exprgraph import symbols, sin
    >>> x, y = symbols("x y")
    >>> check_grad(sin(x * y) + x**3, {x: [0.5, 1.5], y: 2.0}).ok
    True
    """
    f = as_term(f)
    targets, _ = resolve_wrt([f], wrt)
    targets = [t for t in targets if t.dtype == "float64" and t.op.name == "symbol"]
    base: dict[Any, Any] = dict(env)
    points: list[np.ndarray] = []
    for t in targets:
        raw = lookup(env, t)
        if raw is MISSING:
            raise MissingValueError(f"check_grad: no value for {t.name!r}")
        points.append(np.asarray(raw, dtype=np.float64))
    rng = np.random.default_rng(seed)
    directions = [rng.standard_normal(p.shape) for p in points]
    scale = max([1.0] + [float(np.max(np.abs(p[np.isfinite(p)]))) for p in points if np.isfinite(p).any()])
    h = step * scale
    _, partials = _shape_values(f, env, targets)
    analytic: Any = 0.0
    for t, p, v in zip(targets, partials, directions, strict=True):
        term = np.asarray(p) * v
        if t.shape:  # a tensor variable: the inner product over its own axes
            term = np.sum(term, axis=tuple(range(term.ndim - len(t.shape), term.ndim)))
        analytic = analytic + term

    def at(sign: float) -> Any:
        moved = dict(base)
        for t, p, v in zip(targets, points, directions, strict=True):
            moved.pop(t.name, None)
            moved[t] = p + sign * h * v
        return np.asarray(evaluate(f, moved), dtype=np.float64)

    with np.errstate(all="ignore"):
        ahead, behind = at(1.0), at(-1.0)
        numeric = (ahead - behind) / (2 * h)
        # each value of f is rounded at its own size: the difference quotient carries that rounding
        # divided by 2h (f = 262144 + x moves by 1e-6 and rounds by 3e-11), whatever the gradient
        noise = 4 * np.finfo(np.float64).eps * np.fmax(np.abs(ahead), np.abs(behind)) / (2 * h)
        noise = np.where(np.isfinite(noise), noise, 0.0)
    return _compare(analytic, numeric, rtol, atol + noise)


def elementwise_errors(actual: Any, expected: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(error, special)`` of two arrays (broadcast): the nan/inf rule of every gradient check.

    ``error`` is ``|actual - expected|`` where both values are finite, 0 where both are nan or the
    same infinity (those places are ``special``), and inf anywhere else: a nan or an infinity
    against anything else never passes a tolerance. :func:`check_grad` and the tensor kernels'
    checks (:mod:`exprgraph.tensor.check`) both judge with it.

    >>> nan, inf = float("nan"), float("inf")
    >>> err, special = elementwise_errors([1.0, nan, inf, nan], [1.5, nan, 1.0, 2.0])
    >>> err.tolist(), special.tolist()
    ([0.5, 0.0, inf, inf], [False, True, False, False])
    """
    with np.errstate(all="ignore"):
        a, e = np.broadcast_arrays(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64))
        finite = np.isfinite(a) & np.isfinite(e)
        special = (np.isnan(a) & np.isnan(e)) | (np.isinf(a) & (a == e))
        error = np.where(finite, np.abs(a - e), np.where(special, 0.0, np.inf))
    return error, special


def _compare(analytic: Any, numeric: Any, rtol: float, atol: Any) -> GradCheck:
    """The check of ``analytic`` against ``numeric``: within ``atol + rtol |numeric|``, nan/inf as
    :func:`elementwise_errors` says (nan matches nan, an infinity the same infinity)."""
    error, special = elementwise_errors(analytic, numeric)
    with np.errstate(all="ignore"):
        analytic, numeric = np.broadcast_arrays(np.asarray(analytic, dtype=np.float64), numeric)
        err = np.where(special, 0.0, error / (atol + rtol * np.abs(numeric)))
        err = np.where(np.isnan(err), np.inf, err)
    worst = float(np.max(err)) if err.size else 0.0
    return GradCheck(
        analytic[()] if analytic.ndim == 0 else analytic,
        numeric[()] if numeric.ndim == 0 else numeric,
        worst,
        worst <= 1.0,
    )
