"""Checking generated kernels: the course tolerance, random inputs, and gradient checks.

The course grader filled inputs uniformly from [-10, 10) and failed an element when the absolute
error was >= 1e-3 *and* the relative error >= 1e-4; :func:`compare` applies that rule to finite
values, and passes a nan or an infinity only where both sides have it (a check never says "ok" about
a nan it compared with a number): the nan/inf rule of
:func:`exprgraph.diff.numeric.elementwise_errors`, which :func:`exprgraph.diff.check_grad` uses too.
Inputs are drawn inside the domain of the ops that read them (:func:`input_domains`: ``log(A[i])``
draws A from (0, 10), a divisor stays away from 0). :func:`check_kernel` runs the compiled kernel
against :func:`~exprgraph.tensor.reference.reference`; :func:`check_kernel_grad` runs the compiled gradient
kernel against the numeric reverse mode (:func:`reference_grad`) and against central finite
differences of the forward kernel evaluated in float64 (per element for small inputs, along random
directions otherwise).

Before anything is allocated, :func:`check_limits` compares what a check needs (tensor elements
and loop iterations) with ``max_elements`` and ``max_points`` and raises
:class:`~exprgraph.errors.SizeLimitError` (which says how to raise them) when a case is too large.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import Term
from ..core.op import Interval, domain_within, operand_domain
from ..diff.numeric import elementwise_errors
from ..errors import SizeLimitError
from ..eval.limits import positive_limit
from ..progress import Progress
from .build import build, numpy_dtype
from .grad import grad_kernel, grad_name
from .ir import Kernel
from .reference import evaluate_kernel, reference, reference_grad
from .terms import is_access, tensor_name, value_nodes

__all__ = [
    "Comparison",
    "compare",
    "random_inputs",
    "input_domains",
    "check_limits",
    "check_kernel",
    "check_kernel_grad",
    "KernelGradCheck",
    "ABS_TOL",
    "REL_TOL",
    "MAX_ELEMENTS",
    "MAX_POINTS",
]

#: the course tolerance: an element fails when abs error >= ABS_TOL and relative error >= REL_TOL
ABS_TOL = 1e-3
REL_TOL = 1e-4
#: inputs up to this many elements get an elementwise finite-difference check
FD_ELEMENTWISE = 256
#: random directions for the finite-difference check of larger inputs
FD_DIRECTIONS = 6
#: default limits of a check: tensor elements held at once, and loop iterations evaluated in numpy
MAX_ELEMENTS = 2**24
MAX_POINTS = 2**27
ENV_MAX_ELEMENTS = "EXPRGRAPH_CHECK_MAX_ELEMENTS"
ENV_MAX_POINTS = "EXPRGRAPH_CHECK_MAX_POINTS"
#: where inputs are drawn from, unless an op that reads them needs less
LOW, HIGH = -10.0, 10.0
#: kernel-language names of ops whose name in the op table differs


@dataclass
class Comparison:
    """The result of comparing arrays: ``ok``, the worst errors, failing elements, nan/inf agreeing."""

    ok: bool
    max_abs: float
    max_rel: float
    failures: int
    what: str = ""
    #: elements where both sides are nan, or the same infinity (they pass, but are reported)
    special: int = 0

    def __str__(self) -> str:
        verdict = "ok" if self.ok else f"MISMATCH ({self.failures} element(s))"
        text = f"{self.what}: {verdict}, worst abs error {self.max_abs:.3g}, worst rel error {self.max_rel:.3g}"
        if self.special:
            text += f", {self.special} element(s) nan or inf on both sides"
        return text


def compare(actual: Any, expected: Any, what: str = "", *, atol: float = ABS_TOL, rtol: float = REL_TOL) -> Comparison:
    """Compare with the course rule: fail where abs error >= atol and relative error >= rtol.

    An element passes only when both values are finite and within tolerance, or both are nan, or
    both the same infinity; a nan or an infinity against anything else fails with an infinite error.
    """
    a = np.asarray(actual, np.float64)
    e = np.asarray(expected, np.float64)
    if a.shape != e.shape:
        return Comparison(False, float("inf"), float("inf"), max(a.size, e.size), what)
    err, special = elementwise_errors(a, e)  # the gradient check's nan/inf rule (exprgraph.diff.numeric)
    with np.errstate(all="ignore"):
        scale = np.abs(e)
        rel = np.where(err == 0, 0.0, np.where(scale > 0, err / np.where(scale > 0, scale, 1.0), np.inf))
    bad = ~special & ((err >= atol) & (rel >= rtol) | np.isinf(err))
    max_abs = float(err.max()) if err.size else 0.0
    max_rel = float(rel.max()) if rel.size else 0.0
    return Comparison(not bad.any(), max_abs, max_rel, int(bad.sum()), what, int(special.sum()))


def input_domains(kernel: Kernel, low: float = LOW, high: float = HIGH) -> dict[str, list[Interval]]:
    """Where each input read directly by a domain-restricted op must lie, within ``[low, high)``.

    ``log(A[i])`` and ``sqrt(A[i])`` give A the interval (0, high) kept clear of 0, a divisor
    ``x / B[i]`` the two sides of 0; ``-A[i]`` under such an op flips the interval. Inputs read
    only through sums and other compound operands are not restricted (their values may still
    leave the domain: the check then reports the nan or inf it finds).
    """
    ins = set(kernel.ins)
    found: dict[str, list[Interval]] = {}
    for st in kernel.statements:
        for node in value_nodes(st.rhs):
            for i, arg in enumerate(node.args):
                domain = operand_domain(node.op, i)
                if domain is None:
                    continue
                name, sign = _direct_read(arg)
                if name is None or name not in ins:
                    continue
                if sign < 0:
                    domain = tuple((-hi, -lo) for lo, hi in reversed(domain))
                parts = domain_within(domain, low, high)
                found[name] = _intersect(found[name], parts) if name in found else parts
    return found


def _direct_read(arg: Term) -> tuple[str | None, int]:
    """``(tensor name, sign)`` when ``arg`` is a read ``A[...]`` or its negation ``-A[...]``."""
    sign = 1
    while arg.op.name == "neg":
        sign = -sign
        arg = arg.args[0]
    if is_access(arg):
        return tensor_name(arg), sign
    return None, 1


def _intersect(a: list[Interval], b: list[Interval]) -> list[Interval]:
    out = []
    for lo1, hi1 in a:
        for lo2, hi2 in b:
            lo, hi = max(lo1, lo2), min(hi1, hi2)
            if lo < hi:
                out.append((lo, hi))
    return out


def random_inputs(
    kernel: Kernel,
    names: Sequence[str],
    seed: int = 0,
    low: float = LOW,
    high: float = HIGH,
    *,
    domains: Mapping[str, Sequence[Interval]] | None = None,
) -> dict:
    """Arrays for ``names`` drawn uniformly from [low, high) (integers for int kernels), in the kernel's dtype.

    A name in ``domains`` is drawn from its intervals instead (see :func:`input_domains`).
    """
    rng = np.random.default_rng(seed)
    dtype = numpy_dtype(kernel)
    out = {}
    for n in names:
        shape = kernel.tensors[n].shape
        parts = list(domains.get(n, ())) if domains is not None else []
        if kernel.data_type == "int":
            ranges = [(int(np.ceil(lo)), int(np.floor(hi - 1e-9 if hi == int(hi) else hi))) for lo, hi in parts]
            ranges = [(lo, hi) for lo, hi in ranges if lo <= hi] or [(int(low), int(high) - 1)]
            out[n] = _draw(rng, [(lo, hi + 1) for lo, hi in ranges], shape, integers=True).astype(dtype)
        else:
            out[n] = _draw(rng, parts or [(low, high)], shape, integers=False).astype(dtype)
    return out


def _draw(rng: np.random.Generator, parts: list[Interval], shape: tuple[int, ...], integers: bool) -> np.ndarray:
    """Uniform values from the union of ``parts`` (each part chosen with probability by its width)."""
    if len(parts) == 1:
        lo, hi = parts[0]
        return rng.integers(int(lo), int(hi), shape) if integers else rng.uniform(lo, hi, shape)
    widths = np.array([hi - lo for lo, hi in parts], dtype=np.float64)
    which = rng.choice(len(parts), size=shape, p=widths / widths.sum())
    lows = np.array([lo for lo, _ in parts])[which]
    highs = np.array([hi for _, hi in parts])[which]
    if integers:
        return np.floor(lows + rng.uniform(0.0, 1.0, shape) * (highs - lows)).astype(np.int64)
    return lows + rng.uniform(0.0, 1.0, shape) * (highs - lows)


def _points(kernel: Kernel) -> int:
    """Loop iterations of one numpy evaluation of ``kernel`` (every statement's loop box)."""
    total = 0
    for st in kernel.statements:
        box = 1
        for lp in st.loops:
            box *= max(lp.extent, 0)
        total += box
    return total


def check_limits(
    kernel: Kernel,
    gradient: Kernel | None = None,
    grad_to: Sequence[str] = (),
    *,
    max_elements: int | None = None,
    max_points: int | None = None,
    finite_differences: bool = True,
) -> tuple[int, int]:
    """``(elements, points)`` a check of ``kernel`` (and ``gradient``) needs; SizeLimitError beyond the limits.

    Elements count every tensor of both kernels (each is held a few times: inputs, a float64
    copy, the compiled kernel's buffers); points count the loop iterations the numpy reference
    evaluates, the finite differences included. The limits default to ``MAX_ELEMENTS`` and
    ``MAX_POINTS``, or ``$EXPRGRAPH_CHECK_MAX_ELEMENTS`` / ``$EXPRGRAPH_CHECK_MAX_POINTS``.
    """
    elements_limit = positive_limit(max_elements, ENV_MAX_ELEMENTS, MAX_ELEMENTS, "max_elements")
    points_limit = positive_limit(max_points, ENV_MAX_POINTS, MAX_POINTS, "max_points")
    kernels = [kernel] if gradient is None else [kernel, gradient]
    elements = sum(t.size for k in kernels for t in k.tensors.values())
    if elements > elements_limit:
        raise SizeLimitError(
            f"checking {kernel.name} needs {elements:,} tensor elements, more than the limit of "
            f"{elements_limit:,}: pass --max-elements N (max_elements=N, or set ${ENV_MAX_ELEMENTS}) to allow more",
            size=elements,
            limit=elements_limit,
            setting=f"--max-elements / max_elements / ${ENV_MAX_ELEMENTS}",
        )
    forward = _points(kernel)
    points = forward
    if gradient is not None:
        points += 2 * forward + _points(gradient)  # the numeric reverse mode, and the compiled gradient's run
        if finite_differences:
            for x in grad_to:
                size = kernel.tensors[x].size
                points += forward * 2 * (size if size <= FD_ELEMENTWISE else FD_DIRECTIONS)
    if points > points_limit:
        raise SizeLimitError(
            f"checking {kernel.name} evaluates {points:,} loop iterations, more than the limit of "
            f"{points_limit:,}: pass --max-points N (max_points=N, or set ${ENV_MAX_POINTS}) to allow more",
            size=points,
            limit=points_limit,
            setting=f"--max-points / max_points / ${ENV_MAX_POINTS}",
        )
    return elements, points


def check_kernel(
    kernel: Kernel,
    seed: int = 0,
    *,
    max_elements: int | None = None,
    max_points: int | None = None,
    **build_options: Any,
) -> list[Comparison]:
    """Build ``kernel``, run it on random inputs (outputs start random too) and compare with the reference.

    Inputs are drawn inside the domains of the ops reading them; a case larger than the limits
    (see :func:`check_limits`) raises SizeLimitError before anything is allocated.
    """
    check_limits(kernel, max_elements=max_elements, max_points=max_points)
    with Progress(f"checking kernel {kernel.name}") as report:
        values = random_inputs(kernel, kernel.params, seed, domains=input_domains(kernel))
        got = build(kernel, **build_options)(**values)
        report.update(note="built and run; computing the numpy reference")
        want = reference(kernel, **values)
    return [compare(got[n], want[n], n) for n in want]


@dataclass
class KernelGradCheck:
    """Results of :func:`check_kernel_grad`: one comparison per gradient against the reference and differences."""

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


def check_kernel_grad(
    kernel: Kernel,
    grad_to: Sequence[str] | None = None,
    seed: int = 0,
    *,
    strategy: str = "solve",
    finite_differences: bool = True,
    max_elements: int | None = None,
    max_points: int | None = None,
    **build_options: Any,
) -> KernelGradCheck:
    """Build the gradient kernel, run it on random inputs in [-10, 10) and check it two ways.

    Inputs are drawn inside the domains of the ops reading them (``log(A[i])``: A in (0, 10));
    a case larger than the limits (see :func:`check_limits`) raises SizeLimitError first.
    """
    grad_to = tuple(kernel.grad_to if grad_to is None else grad_to)
    gk = grad_kernel(kernel, grad_to, strategy=strategy)
    check_limits(
        kernel,
        gk,
        grad_to,
        max_elements=max_elements,
        max_points=max_points,
        finite_differences=finite_differences,
    )
    with Progress(f"checking the gradient of kernel {kernel.name}") as progress:
        return _check_kernel_grad(kernel, gk, grad_to, seed, finite_differences, progress, build_options)


def _check_kernel_grad(
    kernel: Kernel,
    gk: Kernel,
    grad_to: tuple[str, ...],
    seed: int,
    finite_differences: bool,
    progress: Progress,
    build_options: dict[str, Any],
) -> KernelGradCheck:
    """The body of :func:`check_kernel_grad` (limits checked), reporting its progress to ``progress``."""
    inputs = random_inputs(kernel, kernel.ins, seed, domains=input_domains(kernel))
    ups = random_inputs(kernel, kernel.outs, seed + 1)
    upstream = {o: ups[o].astype(np.float64) for o in kernel.outs}
    values = {**inputs, **{grad_name(o): ups[o] for o in kernel.outs}}
    got = build(gk, **build_options)(**{n: values[n] for n in gk.params if n in values})
    want = reference_grad(kernel, grad_to, **values)
    report = KernelGradCheck(gk)
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
                progress.update(k, f"finite differences of {x} ({arr.size} elements)")
                plus, minus = arr.copy(), arr.copy()
                plus.reshape(-1)[k] += h
                minus.reshape(-1)[k] -= h
                flat[k] = (_phi(kernel, {**base, x: plus}, upstream) - _phi(kernel, {**base, x: minus}, upstream)) / (
                    2 * h
                )
            report.comparisons.append(compare(got[d], fd, f"{d} vs finite differences"))
        else:
            proj_got, proj_fd = [], []
            for k in range(FD_DIRECTIONS):
                progress.update(k, f"finite differences of {x} ({FD_DIRECTIONS} directions)")
                v = rng.standard_normal(arr.shape)
                along = (
                    _phi(kernel, {**base, x: arr + h * v}, upstream) - _phi(kernel, {**base, x: arr - h * v}, upstream)
                ) / (2 * h)
                proj_got.append(float(np.sum(got[d].astype(np.float64) * v)))
                proj_fd.append(along)
            report.comparisons.append(
                compare(
                    np.array(proj_got), np.array(proj_fd), f"{d} vs finite differences ({FD_DIRECTIONS} directions)"
                )
            )
    return report
