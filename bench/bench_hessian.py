"""Sparse Hessians and derivative products: exprgraph vs CasADi SX, SymEngine term by term, jax.

The function is ``bench_grad``'s ``f = sum_i sin(x_i*x_{i+1}) + exp(x_i)/(1 + x_i**2)``, i < n,
whose Hessian is tridiagonal (3n + 1 non-zeros). Each tool is used the way its users would:

- exprgraph: ``hessian(f, xs, sparse=True)`` (a SparseMatrix of terms);
- CasADi 3.8 SX: ``hessian(f, x)`` (its sparse Hessian with the gradient) and ``jacobian`` of
  ``gradient(f, x)``; the anchor of the ratio is the faster of the two;
- SymEngine: term by term, the second derivatives of each term by the pairs of its own symbols,
  added up per entry (lower triangle, mirrored);
- jax: ``jax.hessian`` traced (``make_jaxpr``), a dense program (for orientation).

Products: ``jvp(f, xs, v)`` and ``hvp(f, xs, v)`` with symbolic tangents ``v`` against CasADi's
``jtimes(f, x, v)`` and ``jtimes(gradient(f, x), x, v)``. Building ``f`` is not timed.
Interleaved rounds, best of N, construction timed by the CPU time of the calling thread (where
every contender but jax works; the compiled rows by wall time), the garbage collector paused
during each timed call; the n = 10^5
line is one run with the collector enabled, as a user runs it (exprgraph's sweeps pause it
themselves, see ``exprgraph.diff.reverse.collector_paused``).

Run: ``python -m bench.bench_hessian``.
"""

from __future__ import annotations

import gc
import time
from typing import Any

import exprgraph as eg
from bench.bench_grad import build_f, build_terms, casadi_f, casadi_nodes, jax_fresh
from bench.common import anchor_module, best_of, fmt_seconds, print_table, ratio
from exprgraph.diff import hessian, hvp, jvp


def symengine_hessian(se: Any, terms: list[Any], xs: list[Any]) -> dict[tuple[int, int], Any]:
    """The sparse Hessian as a SymEngine user of a sum builds it: term by term, by pairs of its symbols."""
    index = {s: i for i, s in enumerate(xs)}
    parts: dict[tuple[int, int], list[Any]] = {}
    for t in terms:
        syms = sorted(t.free_symbols, key=index.__getitem__)
        for a in syms:
            da = t.diff(a)
            for b in syms:
                if index[b] <= index[a]:
                    parts.setdefault((index[a], index[b]), []).append(da.diff(b))
    entries = {k: se.Add(*p) for k, p in parts.items()}
    entries.update({(j, i): v for (i, j), v in list(entries.items()) if i != j})
    return entries


def jax_hessian(n: int) -> dict[str, Any]:
    """``jax.hessian`` traced, a fresh function each round."""
    found = jax_fresh(n)
    if found is None:
        return {}
    jax, x0, fresh = found
    return {"jax.hessian traced (dense)": lambda: jax.make_jaxpr(fresh(jax.hessian))(x0)}


def hessian_table(n: int = 1000) -> None:
    """Sparse Hessian construction at one n, with non-zeros and sizes."""
    ca, se = anchor_module("casadi"), anchor_module("symengine")
    f, xs = build_f(n)
    contenders: dict[str, Any] = {"exprgraph": lambda: hessian(f, xs, sparse=True)}
    h = hessian(f, xs, sparse=True)
    nnz = {"exprgraph": h.nnz}
    sizes = {"exprgraph": len(eg.postorder([f, *h.values]))}
    if ca is not None:
        cf, cx = casadi_f(ca, n)
        contenders["CasADi hessian"] = lambda: ca.hessian(cf, cx)
        contenders["CasADi jacobian(gradient)"] = lambda: ca.jacobian(ca.gradient(cf, cx), cx)
        ch = ca.hessian(cf, cx)[0]
        nnz["CasADi hessian"] = nnz["CasADi jacobian(gradient)"] = ch.nnz()
        sizes["CasADi hessian"] = casadi_nodes(ca, cx, [cf, ch])
    if se is not None:
        terms, sxs = build_terms(se, n)
        contenders["symengine term by term"] = lambda: symengine_hessian(se, terms, sxs)
        nnz["symengine term by term"] = len(symengine_hessian(se, terms, sxs))
    contenders.update(jax_hessian(n))
    times = best_of(contenders, 5, clock=time.thread_time)
    anchor = min((t for name, t in times.items() if name.startswith("CasADi")), default=None)
    rows = []
    for name, t in times.items():
        goal = "<= 2.0 (vs the faster CasADi)" if name.startswith("CasADi") else ""
        size = sizes.get(name)
        rows.append(
            [
                name,
                fmt_seconds(t),
                "" if name == "exprgraph" else ratio(times["exprgraph"], t),
                goal,
                f"{nnz[name]:,}" if name in nnz else "dense",
                f"{size:,}" if size else "",
            ]
        )
    title = f"sparse Hessian construction, n = {n} ({n + 1} inputs, f has {f.size:,} nodes)"
    if anchor is not None:
        title += f": ours / faster CasADi = {ratio(times['exprgraph'], anchor)}"
    print_table(title, ["contender", "best time", "exprgraph / this", "goal", "non-zeros", "f + H nodes"], rows)


def products_table(n: int = 1000) -> None:
    """jvp and hvp construction with symbolic tangents, against CasADi's jtimes."""
    ca = anchor_module("casadi")
    f, xs = build_f(n)
    vs = [eg.Symbol(f"v{i}") for i in range(n + 1)]
    contenders: dict[str, Any] = {
        "exprgraph jvp": lambda: jvp(f, xs, vs),
        "exprgraph hvp": lambda: hvp(f, xs, vs),
    }
    if ca is not None:
        cf, cx = casadi_f(ca, n)
        cv = ca.SX.sym("v", n + 1)
        contenders["CasADi jtimes(f)"] = lambda: ca.jtimes(cf, cx, cv)
        contenders["CasADi jtimes(gradient)"] = lambda: ca.jtimes(ca.gradient(cf, cx), cx, cv)
    times = best_of(contenders, 5, clock=time.thread_time)
    pairs = [("exprgraph jvp", "CasADi jtimes(f)"), ("exprgraph hvp", "CasADi jtimes(gradient)")]
    rows = []
    for ours, anchor in pairs:
        t_anchor = times.get(anchor)
        rows.append(
            [
                ours.split()[1],
                fmt_seconds(times[ours]),
                fmt_seconds(t_anchor) if t_anchor else "",
                ratio(times[ours], t_anchor) if t_anchor else "",
            ]
        )
    print_table(
        f"products with symbolic tangents, n = {n}", ["product", "exprgraph", "CasADi jtimes", "ours/CasADi"], rows
    )


def scale_table(sizes: tuple[int, ...] = (10_000, 100_000)) -> None:
    """Sparse Hessian construction as n grows."""
    ca = anchor_module("casadi")
    rows = []
    for n in sizes:
        f, xs = build_f(n)
        contenders: dict[str, Any] = {"exprgraph": lambda f=f, xs=xs: hessian(f, xs, sparse=True)}
        if ca is not None:
            cf, cx = casadi_f(ca, n)
            contenders["casadi"] = lambda cf=cf, cx=cx: ca.hessian(cf, cx)
        times = best_of(contenders, 2 if n < 100_000 else 1, clock=time.thread_time)
        t_ca = times.get("casadi")
        rows.append(
            [
                n,
                fmt_seconds(times["exprgraph"]),
                fmt_seconds(t_ca) if t_ca else "",
                ratio(times["exprgraph"], t_ca) if t_ca else "",
            ]
        )
        del f, xs, contenders
    print_table("sparse Hessian construction as n grows", ["n", "exprgraph", "CasADi hessian", "ours/CasADi"], rows)


def with_collector(n: int = 100_000) -> None:
    """One sparse Hessian at n = 10^5 with the garbage collector enabled (what a user sees)."""
    f, xs = build_f(n)
    gc.collect()
    start = time.perf_counter()
    h = hessian(f, xs, sparse=True)
    elapsed = time.perf_counter() - start
    print(f"n = {n:,}, collector enabled: sparse Hessian in {fmt_seconds(elapsed)} ({h.nnz:,} non-zeros)\n")


def compiled_table(n: int = 1000, repeat: int = 3) -> None:
    """The Hessian's non-zeros compiled: to a loaded library, and called at one point (packed)."""
    import numpy as np

    from bench.bench_codegen import _FreshCache, casadi_build
    from exprgraph.compile import compile as compile_terms

    ca = anchor_module("casadi")
    f, xs = build_f(n)
    h = hessian(f, xs, sparse=True)
    fresh = _FreshCache()
    built: dict[str, Any] = {}

    def ours() -> Any:
        fresh.next()
        built["ours"] = compile_terms(h, xs, backend="c", packed=True)  # a SparseMatrix: its values, packed
        return built["ours"]

    contenders: dict[str, Any] = {"exprgraph": ours}
    if ca is not None:
        import os
        import tempfile

        cf, cx = casadi_f(ca, n)
        hc = ca.hessian(cf, cx)[0]
        function = ca.Function("H", [cx], [hc])
        work = tempfile.mkdtemp(prefix="casadi-hess-")
        counter = iter(range(10**6))

        def theirs() -> Any:
            here = os.getcwd()
            os.chdir(work)
            try:
                built["casadi"] = casadi_build(ca, function, work, f"h{next(counter)}")
            finally:
                os.chdir(here)
            return built["casadi"]

        contenders["casadi"] = theirs
    times = best_of(contenders, repeat)
    rows = [
        [
            f"n = {n}: Hessian non-zeros ({h.nnz:,}) to a loaded library",
            fmt_seconds(times["exprgraph"]),
            fmt_seconds(times["casadi"]) if "casadi" in times else "n/a",
            ratio(times["exprgraph"], times["casadi"]) if "casadi" in times else "n/a",
            "<= 1.0",
        ]
    ]
    point = np.random.default_rng(0).uniform(-1, 1, n + 1)
    fn = built["ours"]
    want = np.array(eg.evaluate(h.values, {s: point[i] for i, s in enumerate(xs)}), dtype=float)
    np.testing.assert_allclose(fn(point), want, rtol=1e-12, atol=1e-12)
    calls = 100  # one-point calls are timed in runs of 100
    one = {"exprgraph": lambda: [fn(point) for _ in range(calls)]}
    if "casadi" in built:
        fc = built["casadi"]
        one["casadi"] = lambda: [fc(point) for _ in range(calls)]
    t1 = {k: v / calls for k, v in best_of(one, 7).items()}
    rows.append(
        [
            f"n = {n}: Hessian non-zeros at one point (packed)",
            fmt_seconds(t1["exprgraph"]),
            fmt_seconds(t1["casadi"]) if "casadi" in t1 else "n/a",
            ratio(t1["exprgraph"], t1["casadi"]) if "casadi" in t1 else "n/a",
            "<= 2.0",
        ]
    )
    fresh.close()
    print_table(
        "the Hessian's non-zeros compiled (anchor: CasADi SX generate + gcc -O3 -march=native, its compiled call)",
        ["workload", "exprgraph", "CasADi", "ours/CasADi", "goal"],
        rows,
    )


def main() -> None:
    """Print every table."""
    compiled_table()
    hessian_table()
    products_table()
    scale_table()
    with_collector()


if __name__ == "__main__":
    main()
