"""Checking generated kernels: the course tolerance, random inputs, and gradient checks.

The course grader filled inputs uniformly from [-10, 10) and failed an element when the absolute
error was >= 1e-3 *and* the relative error >= 1e-4; :func:`compare` applies that rule (NaNs and
infinities must agree exactly). :func:`check_kernel` runs the compiled kernel against
:func:`~exprgraph.tensor.reference.reference`; :func:`check_grad` runs the compiled gradient
kernel against the numeric reverse mode (:func:`reference_grad`) and against central finite
differences of the forward kernel evaluated in float64 (per element for small inputs, along
random directions otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .build import build, numpy_dtype
from .grad import grad_kernel, grad_name
from .ir import Kernel
from .reference import evaluate_kernel, reference, reference_grad

__all__ = ["Comparison", "compare", "random_inputs", "check_kernel", "check_grad", "GradCheck", "ABS_TOL", "REL_TOL"]

#: the course tolerance: an element fails when abs error >= ABS_TOL and relative error >= REL_TOL
ABS_TOL = 1e-3
REL_TOL = 1e-4
#: inputs up to this many elements get an elementwise finite-difference check
FD_ELEMENTWISE = 256
#: random directions for the finite-difference check of larger inputs
FD_DIRECTIONS = 6


@dataclass
class Comparison:
    """The result of comparing arrays: ``ok``, the worst absolute and relative errors, failing elements."""

    ok: bool
    max_abs: float
    max_rel: float
    failures: int
    what: str = ""

    def __str__(self) -> str:
        verdict = "ok" if self.ok else f"MISMATCH ({self.failures} element(s))"
        return f"{self.what}: {verdict}, worst abs error {self.max_abs:.3g}, worst rel error {self.max_rel:.3g}"


def compare(actual: Any, expected: Any, what: str = "", *, atol: float = ABS_TOL, rtol: float = REL_TOL) -> Comparison:
    """Compare with the course rule: fail where abs error >= atol and relative error >= rtol."""
    a = np.asarray(actual, np.float64)
    e = np.asarray(expected, np.float64)
    if a.shape != e.shape:
        return Comparison(False, float("inf"), float("inf"), max(a.size, e.size), what)
    same_special = (np.isnan(a) & np.isnan(e)) | (np.isinf(a) & np.isinf(e) & (np.sign(a) == np.sign(e)))
    with np.errstate(all="ignore"):
        err = np.where(same_special, 0.0, np.abs(a - e))
        err = np.where(np.isnan(err), np.inf, err)
        rel = np.where(err == 0, 0.0, err / np.abs(e))
    bad = (err >= atol) & (rel >= rtol)
    max_abs = float(err.max()) if err.size else 0.0
    max_rel = float(np.nanmax(rel)) if rel.size else 0.0
    return Comparison(not bad.any(), max_abs, max_rel, int(bad.sum()), what)


def random_inputs(kernel: Kernel, names: Sequence[str], seed: int = 0, low: float = -10, high: float = 10) -> dict:
    """Arrays for ``names`` drawn uniformly from [low, high) (integers for int kernels), in the kernel's dtype."""
    rng = np.random.default_rng(seed)
    dtype = numpy_dtype(kernel)
    out = {}
    for n in names:
        shape = kernel.tensors[n].shape
        if kernel.data_type == "int":
            out[n] = rng.integers(int(low), int(high), shape).astype(dtype)
        else:
            out[n] = rng.uniform(low, high, shape).astype(dtype)
    return out


def check_kernel(kernel: Kernel, seed: int = 0, **build_options: Any) -> list[Comparison]:
    """Build ``kernel``, run it on random inputs (outputs start random too) and compare with the reference."""
    values = random_inputs(kernel, kernel.params, seed)
    got = build(kernel, **build_options)(**values)
    want = reference(kernel, **values)
    return [compare(got[n], want[n], n) for n in want]


@dataclass
class GradCheck:
    """Results of :func:`check_grad`: one comparison per gradient against the reference and the finite differences."""

    gradient: Kernel
    comparisons: list[Comparison] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every comparison passed."""
        return all(c.ok for c in self.comparisons)

    def __str__(self) -> str:
        return "\n".join(str(c) for c in self.comparisons)


def _phi(kernel: Kernel, values: Mapping[str, Any], upstream: Mapping[str, np.ndarray]) -> float:
    outs = evaluate_kernel(kernel, values, exact=True)
    return float(sum(np.sum(outs[o] * upstream[o]) for o in kernel.outs))


def check_grad(
    kernel: Kernel,
    grad_to: Sequence[str] | None = None,
    seed: int = 0,
    *,
    strategy: str = "solve",
    finite_differences: bool = True,
    **build_options: Any,
) -> GradCheck:
    """Build the gradient kernel, run it on random inputs in [-10, 10) and check it two ways."""
    grad_to = tuple(kernel.grad_to if grad_to is None else grad_to)
    gk = grad_kernel(kernel, grad_to, strategy=strategy)
    inputs = random_inputs(kernel, kernel.ins, seed)
    ups = random_inputs(kernel, kernel.outs, seed + 1)
    upstream = {o: ups[o].astype(np.float64) for o in kernel.outs}
    values = {**inputs, **{grad_name(o): ups[o] for o in kernel.outs}}
    got = build(gk, **build_options)(**{n: values[n] for n in gk.params if n in values})
    want = reference_grad(kernel, grad_to, **values)
    report = GradCheck(gk)
    for x in grad_to:
        d = grad_name(x)
        report.comparisons.append(compare(got[d], want[d], f"{d} vs numpy reverse mode"))
    if not finite_differences:
        return report
    base = {n: inputs[n].astype(np.float64) for n in kernel.ins}
    rng = np.random.default_rng(seed + 2)
    for x in grad_to:
        d = grad_name(x)
        arr = base[x]
        h = 1e-3
        if arr.size <= FD_ELEMENTWISE:
            fd = np.zeros(arr.shape)
            flat = fd.reshape(-1)
            for k in range(arr.size):
                plus, minus = arr.copy(), arr.copy()
                plus.reshape(-1)[k] += h
                minus.reshape(-1)[k] -= h
                flat[k] = (_phi(kernel, {**base, x: plus}, upstream) - _phi(kernel, {**base, x: minus}, upstream)) / (
                    2 * h
                )
            report.comparisons.append(compare(got[d], fd, f"{d} vs finite differences"))
        else:
            proj_got, proj_fd = [], []
            for _ in range(FD_DIRECTIONS):
                v = rng.standard_normal(arr.shape)
                fd = (
                    _phi(kernel, {**base, x: arr + h * v}, upstream) - _phi(kernel, {**base, x: arr - h * v}, upstream)
                ) / (2 * h)
                proj_got.append(float(np.sum(got[d].astype(np.float64) * v)))
                proj_fd.append(fd)
            report.comparisons.append(
                compare(
                    np.array(proj_got), np.array(proj_fd), f"{d} vs finite differences ({FD_DIRECTIONS} directions)"
                )
            )
    return report
