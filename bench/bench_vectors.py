"""Vector code in the C and LLVM backends against CasADi and jax: build CPU and call time, side by side.

The model: ``f(x) = sum(sin(x[1:]*x[:-1]) + exp(x[1:])/(1 + x[1:]**2))`` and its gradient, for a
vector symbol ``x`` of length ``n``, written as each library's users write it:

- exprgraph: ``Symbol("x", shape=(n,))``, slices, ``sum``, ``grad`` (vector-shaped), then
  ``compile([f, g], [x], backend=...)``: the vector terms are lowered to one loop nest per vector
  node (:mod:`exprgraph.compile.vloop`), built by gcc (C, a fresh build cache) or in process
  (LLVM); ``--scalarised`` builds the scalarised form instead (the path before the loops);
- CasADi: ``MX.sym("x", n)`` with its slices and ``sum1``, ``gradient``, one ``Function`` called
  through its virtual machine (``SX`` too: the expanded form its users pick for speed);
- jax: ``jax.jit`` of ``(f, grad(f))``; its build is the first call (trace + XLA compile).

Build: CPU seconds from the model's construction to a callable that has run once (process +
children, ``resource.getrusage``); for the C backend the compiler's share (children CPU) is printed
as ``gcc s``. Call: the best of several calls at one point, CPU time. ``build/jax`` is our build
over jax's first call (the goal: <= 2 at n >= 10^4), ``call/best`` our call over the faster of
CasADi MX and jax. ``--opt O2,O3`` builds the C loops at each level (``vloop_c.VLOOP_OPT``).
The libraries run interleaved in one process, one size after another; the load average is printed.

Run: ``python bench/bench_vectors.py [--sizes 1000,10000,100000] [--backends c,llvm] [--opt O2,O3]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from collections.abc import Callable
from typing import Any
from unittest.mock import patch

import numpy as np

import exprgraph as eg
from exprgraph.compile import compile as eg_compile
from exprgraph.compile import vloop_c


def cpu() -> float:
    """CPU seconds of this process and its finished children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def best_call(call: Callable[[], Any], repeat: int = 7) -> float:
    """The least CPU seconds of ``repeat`` calls (after one untimed call)."""
    call()
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        call()
        best = min(best, time.process_time() - t)
    return best


def children() -> float:
    """CPU seconds of this process's finished children (the C compiler)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def ours(n: int, backend: str, point: np.ndarray, scalarised: bool = False) -> tuple[float, float, float, float]:
    """(build CPU, call CPU, f, compiler CPU) for exprgraph."""
    t, kids = cpu(), children()
    x = eg.Symbol("x", shape=(n,))
    f = eg.get_op("sum")(eg.sin(x[1:] * x[:-1]) + eg.exp(x[1:]) / (1 + x[1:] ** 2))
    g = eg.grad(f, x)
    if scalarised:
        with patch("exprgraph.compile.c_backend.plan_loops", lambda p: None):
            with patch("exprgraph.compile.llvm_backend.plan_loops", lambda p: None):
                fn = eg_compile([f, g], [x], backend=backend)
    else:
        fn = eg_compile([f, g], [x], backend=backend)
    value = float(fn(point)[0])
    build = cpu() - t
    return build, best_call(lambda: fn(point)), value, children() - kids


def casadi(n: int, kind: str, point: np.ndarray) -> tuple[float, float, float, float]:
    """(build CPU, call CPU, f) for CasADi MX or SX, through its virtual machine."""
    import casadi as ca

    t = cpu()
    sym = ca.MX if kind == "MX" else ca.SX
    x = sym.sym("x", n)
    a, b = x[1:], x[: n - 1]
    f = ca.sum1(ca.sin(a * b) + ca.exp(a) / (1 + a**2))
    fn = ca.Function("f", [x], [f, ca.gradient(f, x)])
    dm = ca.DM(point)
    value = float(fn(dm)[0])
    build = cpu() - t
    return build, best_call(lambda: fn(dm)), value, 0.0


def jax_jit(n: int, point: np.ndarray) -> tuple[float, float, float, float]:
    """(first call CPU, call CPU, f) for jax.jit of the value and the gradient."""
    import jax
    import jax.numpy as jnp

    t = cpu()

    def f(x: Any) -> Any:
        return jnp.sum(jnp.sin(x[1:] * x[:-1]) + jnp.exp(x[1:]) / (1 + x[1:] ** 2))

    fn = jax.jit(jax.value_and_grad(f))
    arr = jnp.asarray(point)
    value = float(fn(arr)[0])
    build = cpu() - t
    return build, best_call(lambda: jax.block_until_ready(fn(arr))), value, 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--backends", default="c,llvm")
    parser.add_argument("--opt", default="O3", help="C optimisation levels of the loops, e.g. O2,O3")
    parser.add_argument("--scalarised", action="store_true", help="also build the scalarised form")
    args = parser.parse_args()
    os.environ["EXPRGRAPH_CACHE"] = tempfile.mkdtemp(prefix="eg-bench-vectors-")  # cold builds
    import jax

    jax.config.update("jax_enable_x64", True)
    print(f"load average before: {os.getloadavg()}")
    print(f"{'n':>7} {'who':>22} {'build s':>9} {'gcc s':>7} {'call ms':>9} {'build/jax':>9} {'call/best':>9}")
    for n in (int(s) for s in args.sizes.split(",")):
        point = np.random.default_rng(n).uniform(-1, 1, n)
        rows: list[tuple[str, tuple[float, float, float, float]]] = []
        for backend in args.backends.split(","):
            for level in args.opt.split(",") if backend == "c" else ["-"]:
                if backend == "c":
                    vloop_c.VLOOP_OPT = f"-{level}"
                rows.append((f"exprgraph {backend} {level}", ours(n, backend, point)))
            if args.scalarised:
                rows.append((f"exprgraph {backend} scalar", ours(n, backend, point, scalarised=True)))
        vloop_c.VLOOP_OPT = "-O3"
        rows.append(("casadi MX", casadi(n, "MX", point)))
        rows.append(("casadi SX", casadi(n, "SX", point)))
        rows.append(("jax.jit", jax_jit(n, point)))
        want = rows[-1][1][2]
        first = rows[-1][1][0]
        best = min(rows[-1][1][1], rows[-3][1][1])
        for who, (build, call, value, gcc) in rows:
            assert abs(value - want) <= 1e-9 * max(1.0, abs(want)), (who, value, want)
            ratios = f"{build / first:>9.2f} {call / best:>9.2f}"
            print(f"{n:>7} {who:>22} {build:>9.3f} {gcc:>7.3f} {call * 1e3:>9.3f} {ratios}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
