"""Loops over repeated structure: C size, build CPU and call time, flat vs grouped vs CasADi SX.

The family: ``n`` branch terms ``v_i*v_j*(g_k*cos(t_i - t_j) + b*sin(t_i - t_j))`` over an index
list (as in AC power flow), with the partial derivatives of each term in its four variables: five
outputs per term. Build CPU is process + children (``resource.getrusage``), from terms to a loaded
function in a fresh build cache; call time is the best of several packed calls at one point.
CasADi: its SX Function called through its virtual machine (input DM prepared outside the clock),
and at the small size its code generation + ``gcc -O3``. LLVM: in process, grouped and (small
sizes) straight-line.

Run: ``python bench/bench_lowering.py [--sizes 1000,10000,100000] [--flat-max 20000]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import tempfile
import time

import numpy as np

import exprgraph as eg
from exprgraph.compile import compile as eg_compile
from exprgraph.diff import grad


def cpu() -> float:
    """CPU seconds of this process and its finished children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def pairs(terms: int, buses: int) -> list[tuple[int, int]]:
    """A fixed pseudo-random index list of ``terms`` branches over ``buses`` buses (no self loops)."""
    rng = np.random.default_rng(7)
    i = rng.integers(0, buses, terms)
    j = (i + 1 + rng.integers(0, buses - 1, terms)) % buses
    return list(zip(i.tolist(), j.tolist(), strict=True))


def ours(index: list[tuple[int, int]], buses: int) -> tuple[list[eg.Term], list[eg.Term]]:
    """The family's terms and partials in exprgraph."""
    v = [eg.Symbol(f"v{k}") for k in range(buses)]
    t = [eg.Symbol(f"t{k}") for k in range(buses)]
    outs = []
    for k, (i, j) in enumerate(index):
        d = t[i] - t[j]
        f = v[i] * v[j] * (eg.const(1.0 + 1e-3 * k) * eg.cos(d) + eg.const(-0.5) * eg.sin(d))
        outs.extend([f, *grad(f, [v[i], v[j], t[i], t[j]])])
    return outs, v + t


def theirs(index: list[tuple[int, int]], buses: int) -> object:
    """The same outputs as a CasADi SX Function."""
    import casadi as ca

    x = ca.SX.sym("x", 2 * buses)
    outs = []
    for k, (i, j) in enumerate(index):
        vi, vj, ti, tj = x[i], x[j], x[buses + i], x[buses + j]
        d = ti - tj
        f = vi * vj * ((1.0 + 1e-3 * k) * ca.cos(d) - 0.5 * ca.sin(d))
        outs.append(f)
        outs.append(ca.gradient(f, ca.vertcat(vi, vj, ti, tj)))
    return ca.Function("f", [x], [ca.vertcat(*outs)])


def best(fn, reps: int = 20) -> float:
    """Best wall time of ``fn()`` over ``reps`` calls (seconds)."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure_ours(outs: list, inputs: list, backend: str, loops: bool, point: np.ndarray) -> dict:
    """Build CPU, source size and call time of one build."""
    start = cpu()
    fn = eg_compile(outs, inputs, backend, packed=True, loops=loops)
    built = cpu() - start
    values = fn(point)
    return {
        "build": built,
        "size": len(fn.source),
        "call": best(lambda: fn(point)),
        "classes": len(fn.info["classes"]),
        "values": values,
    }


def measure_casadi(index: list, buses: int, point: np.ndarray, codegen: bool) -> dict:
    """CasADi's construction, VM call time, and (optionally) code generation + gcc -O3."""
    import casadi as ca

    start = cpu()
    f = theirs(index, buses)
    made = cpu() - start
    x = ca.DM(point)
    row = {"build": made, "call": best(lambda: f(x)), "values": np.array(f(x)).ravel(), "gcc": None}
    if codegen:
        with tempfile.TemporaryDirectory() as tmp:
            start = cpu()
            f.generate("eg_casadi.c", {"with_header": False})
            os.replace("eg_casadi.c", os.path.join(tmp, "f.c"))
            subprocess.run(
                ["gcc", "-O3", "-shared", "-fPIC", os.path.join(tmp, "f.c"), "-o", os.path.join(tmp, "f.so")],
                check=True,
            )
            row["gcc"] = cpu() - start
            row["size"] = os.path.getsize(os.path.join(tmp, "f.c"))
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000", help="outputs (5 per term)")
    parser.add_argument("--flat-max", type=int, default=20000, help="largest size built straight-line too")
    parser.add_argument("--casadi-codegen-max", type=int, default=1000)
    parser.add_argument("--llvm-flat-max", type=int, default=1000, help="largest size built by LLVM straight-line")
    args = parser.parse_args()
    os.environ["EXPRGRAPH_CACHE"] = tempfile.mkdtemp(prefix="eg-bench-lowering-")  # cold builds
    print(f"load: {os.getloadavg()}")
    print("| outputs | build | bytes | build CPU s | call us | classes | build/flat | call/flat | call/CasADi VM |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        terms = n // 5
        buses = max(4, terms // 3)
        index = pairs(terms, buses)
        outs, inputs = ours(index, buses)
        point = np.random.default_rng(0).uniform(0.9, 1.1, len(inputs))
        point[buses:] = np.random.default_rng(1).uniform(-0.3, 0.3, buses)
        ca_row = measure_casadi(index, buses, point, n <= args.casadi_codegen_max)
        grouped = measure_ours(outs, inputs, "c", True, point)
        assert np.allclose(grouped["values"], ca_row["values"], rtol=1e-12, atol=1e-12), "grouped C differs from CasADi"
        flat = measure_ours(outs, inputs, "c", False, point) if n <= args.flat_max else None
        rows = [("C flat", flat), ("C grouped", grouped)]
        for name, r in rows:
            if r is None:
                continue
            vs_flat = f"{r['build'] / flat['build']:.3f} / " if flat else "- / "
            print(
                f"| {len(outs)} | {name} | {r['size']} | {r['build']:.2f} | {r['call'] * 1e6:.1f} | {r['classes']} "
                f"| {vs_flat.split(' / ')[0]} | {(r['call'] / flat['call']) if flat else float('nan'):.3f} "
                f"| {r['call'] / ca_row['call']:.3f} |"
            )
        gcc = f", codegen+gcc {ca_row['gcc']:.2f} s ({ca_row['size']} bytes of C)" if ca_row["gcc"] is not None else ""
        print(
            f"| {len(outs)} | CasADi SX | - | {ca_row['build']:.2f} (construction){gcc} "
            f"| {ca_row['call'] * 1e6:.1f} | - | - | - | 1 |"
        )
        for backend, loops in (("llvm", True), ("llvm", False)):
            if loops or n <= args.llvm_flat_max:
                r = measure_ours(outs, inputs, backend, loops, point)
                assert np.allclose(r["values"], ca_row["values"], rtol=1e-12, atol=1e-12), "LLVM differs from CasADi"
                print(
                    f"| {len(outs)} | LLVM {'grouped' if loops else 'flat'} | {r['size']} | {r['build']:.2f} "
                    f"| {r['call'] * 1e6:.1f} | {r['classes']} | - | - | {r['call'] / ca_row['call']:.3f} |"
                )
        numpy_grouped = measure_ours(outs, inputs, "numpy", True, point)
        print(
            f"| {len(outs)} | numpy grouped | {numpy_grouped['size']} | {numpy_grouped['build']:.2f} "
            f"| {numpy_grouped['call'] * 1e6:.1f} | {numpy_grouped['classes']} | - | - "
            f"| {numpy_grouped['call'] / ca_row['call']:.3f} |"
        )


if __name__ == "__main__":
    main()
