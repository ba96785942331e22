"""Vector code in the C and LLVM backends against CasADi and jax: build CPU and call time, side by side.

The model: ``f(x) = sum(sin(x[1:]*x[:-1]) + exp(x[1:])/(1 + x[1:]**2))`` and its gradient, for a
vector symbol ``x`` of length ``n``, written as each library's users write it:

- exprgraph: ``Symbol("x", shape=(n,))``, slices, ``sum``, ``grad`` (vector-shaped), then
  ``compile([f, g], [x], backend=...)``: the vector terms are scalarised, the entries of one shape
  found as loops (:mod:`exprgraph.compile.vectors`), built by gcc (C, a fresh build cache) or in
  process (LLVM);
- CasADi: ``MX.sym("x", n)`` with its slices and ``sum1``, ``gradient``, one ``Function`` called
  through its virtual machine (``SX`` too: the expanded form its users pick for speed);
- jax: ``jax.jit`` of ``(f, grad(f))``; its build is the first call (trace + XLA compile).

Build: CPU seconds from the model's construction to a callable that has run once (process +
children, ``resource.getrusage``). Call: the best of several calls at one point, CPU time.
The three run interleaved in one process, one size after another; the load average is printed.

Run: ``python bench/bench_vectors.py [--sizes 1000,10000,100000] [--backends c,llvm]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import exprgraph as eg
from exprgraph.compile import compile as eg_compile


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


def ours(n: int, backend: str, point: np.ndarray) -> tuple[float, float, float]:
    """(build CPU, call CPU, f) for exprgraph."""
    t = cpu()
    x = eg.Symbol("x", shape=(n,))
    f = eg.get_op("sum")(eg.sin(x[1:] * x[:-1]) + eg.exp(x[1:]) / (1 + x[1:] ** 2))
    g = eg.grad(f, x)
    fn = eg_compile([f, g], [x], backend=backend)
    value = float(fn(point)[0])
    build = cpu() - t
    return build, best_call(lambda: fn(point)), value


def casadi(n: int, kind: str, point: np.ndarray) -> tuple[float, float, float]:
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
    return build, best_call(lambda: fn(dm)), value


def jax_jit(n: int, point: np.ndarray) -> tuple[float, float, float]:
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
    return build, best_call(lambda: jax.block_until_ready(fn(arr))), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--backends", default="c,llvm")
    args = parser.parse_args()
    os.environ["EXPRGRAPH_CACHE"] = tempfile.mkdtemp(prefix="eg-bench-vectors-")  # cold builds
    import jax

    jax.config.update("jax_enable_x64", True)
    print(f"load average before: {os.getloadavg()}")
    print(f"{'n':>7} {'who':>14} {'build s':>9} {'call ms':>9} {'f':>14}")
    for n in (int(s) for s in args.sizes.split(",")):
        point = np.random.default_rng(n).uniform(-1, 1, n)
        rows: list[tuple[str, tuple[float, float, float]]] = []
        for backend in args.backends.split(","):
            rows.append((f"exprgraph {backend}", ours(n, backend, point)))
        rows.append(("casadi MX", casadi(n, "MX", point)))
        rows.append(("casadi SX", casadi(n, "SX", point)))
        rows.append(("jax.jit", jax_jit(n, point)))
        want = rows[-1][1][2]
        for who, (build, call, value) in rows:
            assert abs(value - want) <= 1e-9 * max(1.0, abs(want)), (who, value, want)
            print(f"{n:>7} {who:>14} {build:>9.3f} {call * 1e3:>9.3f} {value:>14.6f}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
