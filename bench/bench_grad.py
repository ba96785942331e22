"""Symbolic gradients: exprgraph vs SymEngine and SymPy (time and result size).

1. All partials of ``f = sum_i sin(x_i*x_{i+1}) + exp(x_i)/(1 + x_i**2)``, i < n: exprgraph's
   reverse mode (``grad(f, xs)``: one backward sweep) vs ``[f.diff(x) for x in xs]`` in the
   anchors. The size of the result is the number of distinct nodes of all partials together
   (a DAG; for the anchors, distinct subexpressions of their trees), next to the size of ``f``.
2. The deep chain ``f_k = sin(f_{k-1})*f_{k-1} + x``, ``df_k/dx``: time at k = 30 and size at
   several k (linear for exprgraph).

Building ``f`` is not timed. Interleaved rounds, best of N (SymPy runs once per size). SymPy at
n = 1000 takes minutes: it runs only with ``--sympy-1000`` (or ``EXPRGRAPH_BENCH_SYMPY_1000=1``);
otherwise its time at n = 1000 is extrapolated from n = 100 and n = 300 and marked as such.

Run: ``python -m bench.bench_grad [--sympy-1000]``.
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import Any

import exprgraph as eg
from bench.common import best_of, fmt_seconds, print_table, ratio, skip
from exprgraph.diff import grad

SIZES = (100, 1000)
CHAIN_K = 30


def build_f(lib: Any, n: int) -> tuple[Any, list[Any]]:
    """``f`` and its n + 1 symbols, built with ``lib``'s own constructors."""
    if lib is eg:
        xs = [eg.Symbol(f"x{i}") for i in range(n + 1)]
        return eg.add(*(eg.sin(xs[i] * xs[i + 1]) + eg.exp(xs[i]) / (1 + xs[i] ** 2) for i in range(n))), xs
    xs = list(lib.symbols(f"x0:{n + 1}"))
    return lib.Add(*(lib.sin(xs[i] * xs[i + 1]) + lib.exp(xs[i]) / (1 + xs[i] ** 2) for i in range(n))), xs


def anchor_size(exprs: list[Any]) -> int:
    """Distinct subexpressions of the anchor's results (their trees seen as one DAG)."""
    seen: set[Any] = set()
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        stack.extend(e.args)
    return len(seen)


def chain(lib: Any, k: int) -> tuple[Any, Any]:
    x = eg.Symbol("x") if lib is eg else lib.Symbol("x")
    f = x
    for _ in range(k):
        f = lib.sin(f) * f + x
    return f, x


def _anchors() -> dict[str, Any]:
    found = {}
    for name in ("symengine", "sympy"):
        try:
            found[name] = __import__(name)
        except ImportError:
            skip(f"{name} rows", "not installed")
    return found


def all_partials(full_sympy: bool) -> None:
    anchors = _anchors()
    rows = []
    extrapolate: dict[int, float] = {}
    for n in SIZES:
        f, xs = build_f(eg, n)
        contenders = {"exprgraph": lambda f=f, xs=xs: grad(f, xs)}
        built = {}
        for name, lib in anchors.items():
            if name == "sympy" and n >= 1000 and not full_sympy:
                continue
            sf, sxs = build_f(lib, n)
            built[name] = (sf, sxs)
            contenders[name] = lambda sf=sf, sxs=sxs: [sf.diff(s) for s in sxs]
        repeat = {"exprgraph": 5, "symengine": 3 if n < 1000 else 2, "sympy": 1}
        times = best_of(contenders, {k: repeat[k] for k in contenders})
        ours_size = len(eg.postorder(grad(f, xs)))
        sizes = {"exprgraph": ours_size}
        for name, (sf, sxs) in built.items():
            if name == "symengine" or n <= 100:
                sizes[name] = anchor_size([sf.diff(s) for s in sxs])
        if "sympy" in times and n < 1000:
            extrapolate[n] = times["sympy"]
        for name, t in times.items():
            size = sizes.get(name)
            rows.append(
                [
                    n,
                    name,
                    fmt_seconds(t),
                    ratio(times["exprgraph"], t) if name != "exprgraph" else "",
                    f"{size:,}" if size else "n/a",
                    f"{f.size:,}",
                    f"{size / f.size:.2f}" if size else "n/a",
                ]
            )
        if n >= 1000 and "sympy" in anchors and not full_sympy:
            # SymPy's cost per partial grows with n (each diff walks all of f): fit t = c*n^p on n=100, 300
            sf, sxs = build_f(anchors["sympy"], 300)
            t0 = time.perf_counter()
            [sf.diff(s) for s in sxs]
            t300 = time.perf_counter() - t0
            p = math.log(t300 / extrapolate[100]) / math.log(3.0)
            est = t300 * (n / 300) ** p
            rows.append(
                [n, "sympy (extrapolated)", f"~{fmt_seconds(est)}", ratio(times["exprgraph"], est), "n/a", "", ""]
            )
            print(
                f"(sympy at n=1000 not run: extrapolated from n=100 ({fmt_seconds(extrapolate[100])}) and "
                f"n=300 ({fmt_seconds(t300)}) as c*n^{p:.2f}; run with --sympy-1000 to measure it)\n"
            )
    print_table(
        "all partials of sum_i sin(x_i*x_{i+1}) + exp(x_i)/(1+x_i**2) (targets at n=1000: <= 0.1x symengine, "
        "<= 1/300 sympy, size <= 2x f)",
        ["n", "contender", "time", "exprgraph / this", "result size", "size of f", "result / f"],
        rows,
    )


def deep_chain() -> None:
    anchors = _anchors()
    f, x = chain(eg, CHAIN_K)
    contenders = {"exprgraph": lambda: grad(f, x)}
    if "symengine" in anchors:
        sf, sx = chain(anchors["symengine"], CHAIN_K)
        contenders["symengine"] = lambda: sf.diff(sx)
    times = best_of(contenders, 20)
    rows = [
        [CHAIN_K, name, fmt_seconds(t), ratio(times["exprgraph"], t) if name != "exprgraph" else ""]
        for name, t in times.items()
    ]
    if "sympy" in anchors:
        for k in (6, 8, 10):
            sf, sx = chain(anchors["sympy"], k)
            t = best_of({"sympy": lambda sf=sf, sx=sx: sf.diff(sx)}, 1)["sympy"]
            rows.append([k, "sympy", fmt_seconds(t), ""])
    print_table(
        f"deep chain f_k = sin(f_k-1)*f_k-1 + x, df/dx (target: k={CHAIN_K} under 10 ms)",
        ["k", "contender", "time", "exprgraph / this"],
        rows,
    )
    size_rows = []
    for k in (10, 20, 30, 60, 120):
        fk, xk = chain(eg, k)
        size_rows.append([k, fk.size, grad(fk, xk).size, f"{grad(fk, xk).size / k:.1f}"])
    print_table(
        "deep chain sizes (distinct nodes; linear in k)",
        ["k", "size of f_k", "size of df_k/dx", "per level"],
        size_rows,
    )


def main(full_sympy: bool | None = None) -> None:
    """Print both tables."""
    if full_sympy is None:
        full_sympy = "--sympy-1000" in sys.argv or os.environ.get("EXPRGRAPH_BENCH_SYMPY_1000") == "1"
    all_partials(full_sympy)
    deep_chain()


if __name__ == "__main__":
    main()
