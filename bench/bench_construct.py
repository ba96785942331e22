"""Construction and memory at scale: exprgraph vs CasADi SX on four families of different shape.

Families (``n`` is the size parameter; each side builds the same function):

- ``chain``: ``f_k = sin(f_{k-1})*f_{k-1} + x``, ``f_0 = x``, k <= n (one input, depth n);
- ``mlp``: a layer stack of width 10, ``h' = tanh(W h + b)`` with symbolic weights and biases,
  n // 100 layers (about n parameters), ``f = sum(h)``; gradient by every parameter, Hessian by
  the 10 inputs;
- ``trig``: ``s_i = x_i*x_{i+1}``, ``f = sum_i sin(s_i)*cos(s_{i+1}) + sin(s_i)**2*x_{i+2}``,
  i < n (subterms shared between neighbouring terms);
- ``opf``: a sum of n branch terms like AC-OPF's, ``v_i*v_j*(g*cos(t_i - t_j) + b*sin(t_i - t_j)) +
  g*v_i**2`` over random pairs of n // 2 buses, with a different constant pair per term.

CasADi is used as its users write it: SX vector symbols, vector and matrix operations (``mtimes``,
indexing with index lists, ``sum1``), ``gradient``, and the faster of ``hessian`` and
``jacobian(gradient)``. exprgraph: scalar symbols, ``grad`` and ``hessian(..., sparse=True)``.

Time: CPU time of the calling thread (``time.thread_time``), best of interleaved rounds (both sides
in one process, the collector paused during each timed call). Memory: the growth of the resident
set (``/proc/self/statm``) of a fresh child process from just before building the function (and
its gradient) to just after, divided by each side's own node count (exprgraph: distinct nodes of
``postorder``; CasADi: ``Function.n_nodes()``), and the ratio of the totals, the same way for both
sides. From n = 10^6 each timed call is preceded by writing (then freeing) a buffer of a few GB: on a
virtual machine the first touch of a page the host has not backed yet costs several times a later one,
and a step's first contender would pay that for the second (which reuses the pages it freed). The
long-lived case times ``bench_grad``'s gradient at n = 1000 fresh, then after the same
process built and dropped large expressions and their gradients.

Run: ``python -m bench.bench_construct [--sizes 1000,10000,100000] [--families trig,opf] [--steps build,gradient]
[--rounds 3] [--mem-sizes 100000,1000000] [--big-families chain,mlp] [--churn 200000] [--skip-time] [--skip-long]``.
"""

from __future__ import annotations

import argparse
import functools
import gc
import math
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import exprgraph as eg
from bench.bench_grad import build_f, casadi_f
from bench.common import anchor_module, best_of, fmt_seconds, print_table, ratio
from exprgraph.diff import grad, hessian

WIDTH = 10
FAMILIES = ("chain", "mlp", "trig", "opf")

#: a built function: (f, the inputs of the gradient, the inputs of the Hessian)
Built = tuple[Any, Any, Any]


# -- exprgraph's families ------------------------------------------------------------------------


def ours_chain(n: int) -> Built:
    """``f_k = sin(f_{k-1})*f_{k-1} + x``."""
    x = eg.Symbol("x")
    f = x
    for _ in range(n):
        f = eg.sin(f) * f + x
    return f, [x], [x]


def ours_mlp(n: int) -> Built:
    """A tanh layer stack of width 10 with symbolic weights, about n parameters."""
    xs = [eg.Symbol(f"x{i}") for i in range(WIDTH)]
    params: list[eg.Term] = []
    h = xs
    for layer in range(max(1, n // (WIDTH * WIDTH))):
        w = [eg.Symbol(f"W{layer}_{k}") for k in range(WIDTH * WIDTH)]
        b = [eg.Symbol(f"b{layer}_{j}") for j in range(WIDTH)]
        params += w + b
        h = [eg.tanh(eg.add(*(w[j * WIDTH + i] * h[i] for i in range(WIDTH))) + b[j]) for j in range(WIDTH)]
    return eg.add(*h), xs + params, xs


def ours_trig(n: int) -> Built:
    """Neighbouring trig terms sharing ``s_i = x_i*x_{i+1}`` and ``sin(s_i)``."""
    xs = [eg.Symbol(f"x{i}") for i in range(n + 2)]
    s = [xs[i] * xs[i + 1] for i in range(n + 1)]
    sn = [eg.sin(si) for si in s]
    f = eg.add(*(sn[i] * eg.cos(s[i + 1]) + sn[i] ** 2 * xs[i + 2] for i in range(n)))
    return f, xs, xs


@functools.cache
def opf_data(n: int) -> tuple[int, list[int], list[int], list[float], list[float]]:
    """Buses, the two ends of each of the n branches and their two constants (seeded)."""
    rng = random.Random(29)
    buses = max(2, n // 2)
    ends_i, ends_j = [], []
    for _ in range(n):
        i, j = rng.sample(range(buses), 2)
        ends_i.append(i)
        ends_j.append(j)
    return buses, ends_i, ends_j, [rng.uniform(1, 2) for _ in range(n)], [rng.uniform(-9, -5) for _ in range(n)]


def ours_opf(n: int) -> Built:
    """A sum of n AC-OPF-like branch terms."""
    buses, ei, ej, g, b = opf_data(n)
    v = [eg.Symbol(f"v{i}") for i in range(buses)]
    t = [eg.Symbol(f"t{i}") for i in range(buses)]
    terms = []
    for k in range(n):
        i, j = ei[k], ej[k]
        d = t[i] - t[j]
        terms.append(v[i] * v[j] * (g[k] * eg.cos(d) + b[k] * eg.sin(d)) + g[k] * v[i] ** 2)
    return eg.add(*terms), v + t, v + t


# -- CasADi's families, written as its users write them ------------------------------------------


def casadi_chain(ca: Any, n: int) -> Built:
    """The chain over one SX symbol."""
    x = ca.SX.sym("x")
    f = x
    for _ in range(n):
        f = ca.sin(f) * f + x
    return f, x, x


def casadi_mlp(ca: Any, n: int) -> Built:
    """The layer stack with ``mtimes`` over SX matrix symbols."""
    x = ca.SX.sym("x", WIDTH)
    h, params = x, [x]
    for layer in range(max(1, n // (WIDTH * WIDTH))):
        w = ca.SX.sym(f"W{layer}", WIDTH, WIDTH)
        b = ca.SX.sym(f"b{layer}", WIDTH)
        params += [ca.vec(w), b]
        h = ca.tanh(ca.mtimes(w, h) + b)
    return ca.sum1(h), ca.vertcat(*params), x


def casadi_trig(ca: Any, n: int) -> Built:
    """The trig terms with vector slices."""
    x = ca.SX.sym("x", n + 2)
    s = x[: n + 1] * x[1 : n + 2]
    sn = ca.sin(s[:n])
    return ca.sum1(sn * ca.cos(s[1:]) + sn**2 * x[2:]), x, x


def casadi_opf(ca: Any, n: int) -> Built:
    """The branch terms with index lists and constant vectors."""
    buses, ei, ej, g, b = opf_data(n)
    v, t = ca.SX.sym("v", buses), ca.SX.sym("t", buses)
    gd, bd = ca.DM(g), ca.DM(b)
    vi, vj = v[ei], v[ej]
    d = t[ei] - t[ej]
    f = ca.sum1(vi * vj * (gd * ca.cos(d) + bd * ca.sin(d)) + gd * vi**2)
    xv = ca.vertcat(v, t)
    return f, xv, xv


OURS: dict[str, Callable[[int], Built]] = {
    "chain": ours_chain,
    "mlp": ours_mlp,
    "trig": ours_trig,
    "opf": ours_opf,
}
THEIRS: dict[str, Callable[[Any, int], Built]] = {
    "chain": casadi_chain,
    "mlp": casadi_mlp,
    "trig": casadi_trig,
    "opf": casadi_opf,
}


def rounds(n: int) -> int:
    """Best-of rounds for a size (fewer for the large ones)."""
    return 5 if n <= 1000 else 3 if n <= 10_000 else 1


def slope(sizes: list[int], times: list[float]) -> float:
    """The least-squares exponent of ``time ~ n**k`` over the sizes."""
    xs = [math.log(n) for n in sizes]
    ys = [math.log(max(t, 1e-9)) for t in times]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else float("nan")


def casadi_hessian(ca: Any, f: Any, x: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """CasADi's two ways to a sparse Hessian."""
    return (lambda: ca.hessian(f, x)), (lambda: ca.jacobian(ca.gradient(f, x), x))


#: from this size on each timed step starts from pages already backed (see :func:`touch_pages`)
TOUCH_FROM = 1_000_000
#: bytes :func:`touch_pages` writes at most (and at most half of the memory available)
TOUCH_BYTES = 8 << 30


def touch_pages(limit: int = TOUCH_BYTES) -> None:
    """Write one byte a page of a buffer of ``limit`` bytes (at most half the memory available), then free it.

    Neither contender of the next step then meets pages the virtual machine's host has not backed
    yet, which the first of them would otherwise meet alone.
    """
    available = limit
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
    except OSError:  # not Linux: no such file, and no virtual machine's pages to warm that we know of
        return
    size = min(limit, available // 2)
    buf = bytearray(size)
    page = os.sysconf("SC_PAGE_SIZE")
    view = memoryview(buf)
    view[::page] = b"\1" * len(range(0, size, page))  # (a zeroed buffer may be mapped lazily: write each page)
    del view, buf


#: the timed steps, in order
STEPS = ("build", "gradient", "hessian")
#: each step's column header
STEP_TITLES = {"build": "build", "gradient": "gradient", "hessian": "sparse Hessian"}


def time_family(
    ca: Any, family: str, n: int, steps: tuple[str, ...] = STEPS, reps: int | None = None
) -> dict[str, tuple[float, float]]:
    """(ours, CasADi) CPU seconds of each of ``steps`` (building, the gradient, the sparse Hessian) at one n,
    best of ``reps`` rounds (by default :func:`rounds`)."""
    clock = time.thread_time
    reps = reps or rounds(n)
    opf_data(n)  # the random data of opf, made once outside the clock
    touch: dict[str, Callable[[], Any]] | None = None
    if n >= TOUCH_FROM:
        touch = dict.fromkeys(("ours", "casadi", "casadi jac(grad)"), touch_pages)
    out: dict[str, tuple[float, float]] = {}
    if "build" in steps:
        build = best_of(
            {"ours": lambda: OURS[family](n), "casadi": lambda: THEIRS[family](ca, n)}, reps, clock=clock, setup=touch
        )
        out["build"] = (build["ours"], build["casadi"])
    if "gradient" not in steps and "hessian" not in steps:
        return out
    f, wg, wh = OURS[family](n)
    cf, cg, ch = THEIRS[family](ca, n)
    if "gradient" in steps:
        gradient = best_of(
            {"ours": lambda: grad(f, wg), "casadi": lambda: ca.gradient(cf, cg)}, reps, clock=clock, setup=touch
        )
        out["gradient"] = (gradient["ours"], gradient["casadi"])
    if "hessian" in steps:
        hess_a, hess_b = casadi_hessian(ca, cf, ch)
        hess = best_of(
            {"ours": lambda: hessian(f, wh, sparse=True), "casadi": hess_a, "casadi jac(grad)": hess_b},
            reps,
            clock=clock,
            setup=touch,
        )
        out["hessian"] = (hess["ours"], min(hess["casadi"], hess["casadi jac(grad)"]))
    return out


def time_tables(
    ca: Any,
    sizes: list[int],
    families: tuple[str, ...] = FAMILIES,
    steps: tuple[str, ...] = STEPS,
    reps: int | None = None,
) -> None:
    """Per family: time ratios of ``steps`` at each n and the growth exponents of both sides."""
    for family in families:
        found: dict[str, list[tuple[float, float]]] = {step: [] for step in steps}
        rows = []
        for n in sizes:
            gc.collect()
            load = os.getloadavg()[0]
            res = time_family(ca, family, n, steps, reps)
            for step, pair in res.items():
                found[step].append(pair)
            cells = [f"{fmt_seconds(a)} / {fmt_seconds(b)} = {ratio(a, b)}" for a, b in res.values()]
            rows.append([f"{n:,}", *cells, f"{load:.1f}-{os.getloadavg()[0]:.1f}"])
        if len(sizes) > 1:
            exps = []
            for pairs in found.values():
                ours_k = slope(sizes, [p[0] for p in pairs])
                theirs_k = slope(sizes, [p[1] for p in pairs])
                exps.append(f"n^{ours_k:.2f} / n^{theirs_k:.2f}")
            rows.append(["growth", *exps, ""])
        print_table(
            f"{family}: CPU time, exprgraph / CasADi SX (goal <= 1x)",
            ["n", *(STEP_TITLES[step] for step in steps), "load"],
            rows,
        )


# -- memory, each side in a fresh child process ------------------------------------------------


def rss() -> int:
    """Resident set size of this process in bytes."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def measure_memory(side: str, family: str, n: int) -> tuple[int, int, int, int]:
    """(bytes of f, nodes of f, bytes of f and its gradient, nodes of both), in this process."""
    opf_data(n)  # outside the measure: data, not expression
    gc.collect()
    before = rss()
    if side == "ours":
        f, wg, _ = OURS[family](n)
        gc.collect()
        mid = rss()
        nodes_f = len(eg.postorder([f]))
        g = grad(f, wg)
        gc.collect()
        after = rss()
        nodes_all = len(eg.postorder([f, *g]))
    else:
        ca = anchor_module("casadi")
        f, xg, _ = THEIRS[family](ca, n)
        gc.collect()
        mid = rss()
        g = ca.gradient(f, xg)
        gc.collect()
        after = rss()
        nodes_f = ca.Function("f", [xg], [f]).n_nodes()
        nodes_all = ca.Function("fg", [xg], [f, g]).n_nodes()
    return mid - before, nodes_f, after - before, nodes_all


def memory_table(sizes: list[int], families: tuple[str, ...], big_families: tuple[str, ...]) -> None:
    """Bytes per node and the ratio of totals, from fresh child processes (rows printed as they come).

    Sizes from 10^6 up run only ``big_families``: the others' gradients need more than the ~4 GB
    that a shared machine allows.
    """
    header = ["family", "n", "f: ours", "f: CasADi", "f ratio", "f+grad: ours", "f+grad: CasADi", "f+grad ratio"]
    print("### memory (RSS growth in a fresh process, per own node; goal: total <= 1x CasADi)\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|", flush=True)
    for n in sizes:
        for family in families if n < 1_000_000 else big_families:
            res = {}
            for side in ("ours", "casadi"):
                cmd = [sys.executable, "-m", "bench.bench_construct", "--child", side, family, str(n)]
                out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()
                res[side] = [int(v) for v in out[-4:]]
            o, c = res["ours"], res["casadi"]
            row = [
                family,
                f"{n:,}",
                f"{o[0] / max(o[1], 1):.0f} B x {o[1]:,}",
                f"{c[0] / max(c[1], 1):.0f} B x {c[1]:,}",
                ratio(o[0], c[0]),
                f"{o[2] / max(o[3], 1):.0f} B x {o[3]:,}",
                f"{c[2] / max(c[3], 1):.0f} B x {c[3]:,}",
                ratio(o[2], c[2]),
            ]
            print("| " + " | ".join(row) + " |", flush=True)
    print()


# -- the long-lived process ----------------------------------------------------------------------


def long_lived(ca: Any, churn: int) -> None:
    """bench_grad's gradient at n = 1000 fresh, then after building and dropping large expressions."""
    f, xs = build_f(1000)
    cf, cx = casadi_f(ca, 1000)
    contenders = {"ours": lambda: grad(f, xs), "casadi": lambda: ca.gradient(cf, cx)}
    fresh = best_of(contenders, 7, clock=time.thread_time)
    for family in FAMILIES:
        big, wg, _ = OURS[family](churn)
        g = grad(big, wg)
        cbig, cg, _ = THEIRS[family](ca, churn)
        cgr = ca.gradient(cbig, cg)
        del big, wg, g, cbig, cg, cgr
    gc.collect()
    after = best_of(contenders, 7, clock=time.thread_time)
    rows = [
        ["fresh", fmt_seconds(fresh["ours"]), fmt_seconds(fresh["casadi"]), ratio(fresh["ours"], fresh["casadi"])],
        [
            f"after building and dropping the 4 families at n = {churn:,}",
            fmt_seconds(after["ours"]),
            fmt_seconds(after["casadi"]),
            ratio(after["ours"], after["casadi"]),
        ],
    ]
    print_table(
        "long-lived process: gradient of bench_grad's f at n = 1000",
        ["state", "exprgraph", "CasADi", "ours/CasADi"],
        rows,
    )


def main() -> None:
    """Print the tables (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--families", default=",".join(FAMILIES), help="the families timed")
    parser.add_argument("--steps", default=",".join(STEPS), help="the steps timed (build, gradient, hessian)")
    parser.add_argument("--rounds", type=int, help="best of this many rounds a step (default: 5, 3, then 1 from 10^5)")
    parser.add_argument("--mem-sizes", default="100000,1000000")
    parser.add_argument("--big-families", default="chain,mlp", help="the families measured at n >= 10^6")
    parser.add_argument("--churn", type=int, default=200_000)
    parser.add_argument("--skip-time", action="store_true")
    parser.add_argument("--skip-long", action="store_true")
    parser.add_argument("--child", nargs=3, metavar=("SIDE", "FAMILY", "N"))
    opts = parser.parse_args()
    if opts.child:
        side, family, n = opts.child
        print(*measure_memory(side, family, int(n)))
        return
    ca = anchor_module("casadi")
    if ca is None:
        return
    print(f"exprgraph native terms: {eg.core.termbase.native()}; load average: {os.getloadavg()}")
    if not opts.skip_time:
        sizes = [int(s) for s in opts.sizes.split(",") if s]
        time_tables(ca, sizes, tuple(opts.families.split(",")), tuple(opts.steps.split(",")), opts.rounds)
    if opts.mem_sizes:
        big = tuple(opts.big_families.split(","))
        memory_table([int(s) for s in opts.mem_sizes.split(",")], FAMILIES, big)
    if not opts.skip_long:
        long_lived(ca, opts.churn)
    print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
