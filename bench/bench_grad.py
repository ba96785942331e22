"""Symbolic gradients: exprgraph vs CasADi SX, SymEngine and SymPy term by term, and jax.grad.

All partials of ``f = sum_i sin(x_i*x_{i+1}) + exp(x_i)/(1 + x_i**2)``, i < n (n + 1 inputs),
each tool used the way its users would at their best:

- exprgraph: ``grad(f, xs)``, one backward sweep over the whole sum;
- CasADi 3.8 SX: ``gradient(f, x)`` on the same function written with its vector ops;
- SymEngine and SymPy: term by term (the sum is a list of terms; each term is differentiated by
  the symbols it has, and the partials of each symbol are added up), which is linear in n;
- jax: ``jax.grad`` of the same function written with jax.numpy, traced (``make_jaxpr``) and
  traced + compiled (``jit(...).lower(x).compile()``), a fresh function every round so no cache
  answers. Its program is a handful of array ops whatever n is, so this row compares building a
  scalar graph with tracing a vectorised program (for orientation; not a goal).

Building ``f`` is not timed. Interleaved rounds, best of N, timed by the CPU time of the calling
thread (every contender but jax builds in that one thread, so other work on a busy machine cannot
stretch the figures; XLA may compile on other threads, so jax's jitted row is a lower bound), the
garbage collector paused during each timed call (for every contender alike); the n = 10^5 line
is one run with the collector enabled, as a user runs it (exprgraph's sweeps pause it themselves, see
``exprgraph.diff.reverse.collector_paused``). Sizes are distinct nodes: the gradient's DAG (f's
nodes it reuses included) against f's.

Run: ``python -m bench.bench_grad``.
"""

from __future__ import annotations

import gc
import time
from typing import Any

import exprgraph as eg
from bench.common import anchor_module, best_of, fmt_seconds, print_table, ratio, skip
from exprgraph.diff import grad

CHAIN_K = 30


def build_f(n: int) -> tuple[eg.Term, list[eg.Term]]:
    """exprgraph's ``f`` and its n + 1 symbols."""
    xs = [eg.Symbol(f"x{i}") for i in range(n + 1)]
    return eg.add(*(eg.sin(xs[i] * xs[i + 1]) + eg.exp(xs[i]) / (1 + xs[i] ** 2) for i in range(n))), xs


def build_terms(lib: Any, n: int) -> tuple[list[Any], list[Any]]:
    """The n terms of the sum and the n + 1 symbols, with SymEngine's or SymPy's constructors."""
    xs = list(lib.symbols(f"x0:{n + 1}"))
    return [lib.sin(xs[i] * xs[i + 1]) + lib.exp(xs[i]) / (1 + xs[i] ** 2) for i in range(n)], xs


def term_by_term(lib: Any, terms: list[Any], xs: list[Any]) -> list[Any]:
    """The gradient as a SymEngine/SymPy user of a sum computes it: each term by its own symbols."""
    parts: dict[Any, list[Any]] = {s: [] for s in xs}
    for t in terms:
        for s in t.free_symbols:
            parts[s].append(t.diff(s))
    return [lib.Add(*p) for p in parts.values()]


def casadi_f(ca: Any, n: int) -> tuple[Any, Any]:
    """CasADi's ``f`` over an SX vector of n + 1 symbols, written with its vector ops."""
    x = ca.SX.sym("x", n + 1)
    a, b = x[:-1], x[1:]
    return ca.sum1(ca.sin(a * b) + ca.exp(a) / (1 + a**2)), x


def casadi_nodes(ca: Any, inputs: Any, outputs: list[Any]) -> int:
    """Distinct nodes of CasADi expressions (its Function's count)."""
    return ca.Function("count", [inputs], outputs).n_nodes()


def jax_fresh(n: int) -> tuple[Any, Any, Any] | None:
    """``(jax, x0, fresh)``: ``fresh(transform)`` is ``transform`` of a new jax ``f`` (no cache hit), or None."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        skip("jax rows", "jax is not installed")
        return None
    jax.config.update("jax_enable_x64", True)
    x0 = jnp.linspace(-1.0, 1.0, n + 1)

    def fresh(transform: Any) -> Any:
        def f(x: Any) -> Any:
            a, b = x[:-1], x[1:]
            return jnp.sum(jnp.sin(a * b) + jnp.exp(a) / (1 + a**2))

        return transform(f)

    return jax, x0, fresh


def jax_contenders(n: int) -> dict[str, Any]:
    """``jax.grad`` traced, and traced + compiled, each round with a new function (no cache hit)."""
    found = jax_fresh(n)
    if found is None:
        return {}
    jax, x0, fresh = found
    return {
        "jax.grad traced": lambda: jax.make_jaxpr(fresh(jax.grad))(x0),
        "jax.grad jitted": lambda: jax.jit(fresh(jax.grad)).lower(x0).compile(),
    }


def gradient_table(n: int = 1000) -> None:
    """Every contender at one n, with sizes."""
    ca, se, sp = anchor_module("casadi"), anchor_module("symengine"), anchor_module("sympy")
    f, xs = build_f(n)
    contenders: dict[str, Any] = {"exprgraph": lambda: grad(f, xs)}
    sizes = {"exprgraph": len(eg.postorder([f, *grad(f, xs)]))}
    if ca is not None:
        cf, cx = casadi_f(ca, n)
        contenders["CasADi SX gradient"] = lambda: ca.gradient(cf, cx)
        sizes["CasADi SX gradient"] = casadi_nodes(ca, cx, [cf, ca.gradient(cf, cx)])
    for name, lib in (("symengine term by term", se), ("sympy term by term", sp)):
        if lib is not None:
            terms, sxs = build_terms(lib, n)
            contenders[name] = lambda lib=lib, terms=terms, sxs=sxs: term_by_term(lib, terms, sxs)
    contenders.update(jax_contenders(n))
    repeat = dict.fromkeys(contenders, 7)
    repeat.update({"sympy term by term": 2, "jax.grad jitted": 3})
    times = best_of(contenders, repeat, clock=time.thread_time)
    goals = {"CasADi SX gradient": "<= 1.0", "symengine term by term": "<= 1.0"}
    rows = []
    for name, t in times.items():
        size = sizes.get(name)
        rows.append(
            [
                name,
                fmt_seconds(t),
                "" if name == "exprgraph" else ratio(times["exprgraph"], t),
                goals.get(name, ""),
                f"{size:,}" if size else "",
            ]
        )
    print_table(
        f"gradient construction, n = {n} ({n + 1} inputs; f has {f.size:,} nodes, ours f + gradient "
        f"{sizes['exprgraph']:,} = {sizes['exprgraph'] / f.size:.2f}x f, goal <= 2x)",
        ["contender", "best time", "exprgraph / this", "goal", "f + gradient nodes"],
        rows,
    )


def symengine_scale(sizes: tuple[int, ...] = (1000, 10_000, 100_000)) -> None:
    """exprgraph vs SymEngine term by term (and CasADi) as n grows."""
    ca, se = anchor_module("casadi"), anchor_module("symengine")
    rows = []
    for n in sizes:
        f, xs = build_f(n)
        contenders: dict[str, Any] = {"exprgraph": lambda f=f, xs=xs: grad(f, xs)}
        if se is not None:
            terms, sxs = build_terms(se, n)
            contenders["symengine"] = lambda terms=terms, sxs=sxs: term_by_term(se, terms, sxs)
        if ca is not None:
            cf, cx = casadi_f(ca, n)
            contenders["casadi"] = lambda cf=cf, cx=cx: ca.gradient(cf, cx)
        times = best_of(contenders, 3 if n < 100_000 else 1, clock=time.thread_time)
        row = [n, fmt_seconds(times["exprgraph"])]
        for name in ("symengine", "casadi"):
            row += [fmt_seconds(times[name]), ratio(times["exprgraph"], times[name])] if name in times else ["", ""]
        rows.append(row)
        del f, xs, contenders
    print_table(
        "gradient construction as n grows (goal: <= 1.0 symengine term by term at every n)",
        ["n", "exprgraph", "symengine term by term", "ours/symengine", "CasADi SX", "ours/CasADi"],
        rows,
    )


def with_collector(n: int = 100_000) -> None:
    """One gradient at n = 10^5 with the garbage collector enabled (what a user sees)."""
    f, xs = build_f(n)
    gc.collect()
    start = time.perf_counter()
    d = grad(f, xs)
    elapsed = time.perf_counter() - start
    print(f"n = {n:,}, collector enabled: gradient in {fmt_seconds(elapsed)} ({len(d):,} partials)\n")


def chain(lib: Any, k: int) -> tuple[Any, Any]:
    x = eg.Symbol("x") if lib is eg else lib.Symbol("x")
    f = x
    for _ in range(k):
        f = lib.sin(f) * f + x
    return f, x


def deep_chain() -> None:
    """``f_k = sin(f_{k-1})*f_{k-1} + x``, ``df_k/dx``: time and linear size."""
    se = anchor_module("symengine")
    f, x = chain(eg, CHAIN_K)
    contenders = {"exprgraph": lambda: grad(f, x)}
    if se is not None:
        sf, sx = chain(se, CHAIN_K)
        contenders["symengine"] = lambda: sf.diff(sx)
    times = best_of(contenders, 20, clock=time.thread_time)
    rows = [
        [CHAIN_K, name, fmt_seconds(t), ratio(times["exprgraph"], t) if name != "exprgraph" else ""]
        for name, t in times.items()
    ]
    print_table(
        f"deep chain f_k = sin(f_k-1)*f_k-1 + x, df/dx at k = {CHAIN_K}",
        ["k", "contender", "time", "exprgraph / this"],
        rows,
    )
    size_rows = []
    for k in (10, 30, 120):
        fk, xk = chain(eg, k)
        size_rows.append([k, fk.size, grad(fk, xk).size, f"{grad(fk, xk).size / k:.1f}"])
    print_table(
        "deep chain sizes (distinct nodes; linear in k)",
        ["k", "size of f_k", "size of df_k/dx", "per level"],
        size_rows,
    )


def main() -> None:
    """Print every table."""
    gradient_table()
    symengine_scale()
    with_collector()
    deep_chain()


if __name__ == "__main__":
    main()
