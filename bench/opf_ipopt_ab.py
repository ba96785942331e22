"""IPOPT builds side by side on one AC-OPF case, in one process, interleaved: IPOPT's own CPU by its timing statistics.

Usage::

    python -m bench.opf_ipopt_ab [--case case2869pegase] [--reps 3] [--libs cyipopt,wheel,casadi]

Each round solves the case once per IPOPT route of ours - ``cyipopt`` (cyipopt and its wheel's IPOPT),
``wheel`` (that libipopt through IPOPT's C interface, exprgraph.optimize.ipopt_c), ``casadi`` (CasADi's
libipopt through the C interface), or a path - and once with CasADi SX + ``nlpsol("ipopt")``, the same
callbacks (compiled once, on the vm) and options on our side. Printed per solve: iterations, objective,
IPOPT's own CPU (its ``OverallAlgorithm`` minus its ``Function Evaluations``), its linear solves
(``PDSystemSolverTotal``), the function evaluations as IPOPT times them (the binding's work included)
and as our callbacks time themselves (so the difference is what the binding adds), then the minimum
and median of each route. On a shared machine single solves vary by +-40%: compare medians.
First, the binding's own cost per callback: each callback called directly and through its C
callback (ctypes: IPOPT's arrays wrapped as numpy views, the result written into IPOPT's array),
best thread CPU of 7 x 50 calls at the start point.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bench.bench_opf import IPOPT_LIBS, read_timing, timing_options
from bench.opf_data import case_path, read_case
from bench.opf_model import build_casadi, build_exprgraph
from exprgraph.optimize import ipopt_backend, ipopt_c, load_library, solve
from exprgraph.progress import Progress


def binding_overhead(nlp: Any) -> None:
    """Print each callback's thread CPU called directly and through the ctypes callback IPOPT calls."""
    lib = load_library("auto")
    with Progress("binding", enabled=False) as report:
        cb = ipopt_c._Callbacks(nlp, lib.bool_type, ipopt_backend.IterationLog(nlp, report))
    n, m, nj, nh = nlp.n, nlp.m, len(cb.jac_rows), len(cb.hess_rows)
    x, lam = nlp.x0.copy(), np.ones(m)
    grad, g, jac, hess, obj = np.zeros(n), np.zeros(m), np.zeros(nj), np.zeros(nh), ctypes.c_double()
    xp, lp = x.ctypes.data, lam.ctypes.data
    pairs: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {
        "objective": (lambda: nlp.objective(x), lambda: cb.c_f(n, xp, True, ctypes.addressof(obj), None)),
        "gradient": (lambda: nlp.gradient(x), lambda: cb.c_grad_f(n, xp, True, grad.ctypes.data, None)),
        "constraints": (lambda: nlp.constraints(x), lambda: cb.c_g(n, xp, True, m, g.ctypes.data, None)),
        "jacobian": (
            lambda: nlp.jacobian(x),
            lambda: cb.c_jac_g(n, xp, True, m, nj, None, None, jac.ctypes.data, None),
        ),
        "hessian": (
            lambda: nlp.hessian(x, lam, 1.0),
            lambda: cb.c_h(n, xp, True, 1.0, m, lp, True, nh, None, None, hess.ctypes.data, None),
        ),
    }
    print(f"binding ({lib.describe()}), us per call: direct / through the C callback (jacobian nnz {nj}, hessian {nh})")
    for name, fns in pairs.items():
        best = []
        for fn in fns:
            for _ in range(3):
                fn()
            times = []
            for _ in range(7):
                start = time.thread_time()
                for _ in range(50):
                    fn()
                times.append((time.thread_time() - start) / 50)
            best.append(min(times) * 1e6)
        print(f"  {name:12s} {best[0]:9.1f} / {best[1]:9.1f}  (+{best[1] - best[0]:.1f})")
    assert cb.error is None, cb.error
    np.testing.assert_allclose(jac, nlp.jacobian(x))  # written in place, the same numbers


def _ours(nlp: Any, library: str | None) -> Callable[[str], dict[str, Any]]:
    def run(path: str) -> dict[str, Any]:
        res = solve(nlp, "ipopt", progress=False, ipopt_library=library, options=timing_options(path))
        return {"iterations": res.iterations, "f": res.f, "callbacks": res.timings["callbacks"]}

    return run


def _casadi(case: Any) -> Callable[[str], dict[str, Any]]:
    import casadi as ca

    model, lay, lbg, ubg = build_casadi(case)
    args = {"x0": ca.DM(lay.x0), "lbx": ca.DM(lay.lbx), "ubx": ca.DM(lay.ubx), "lbg": ca.DM(lbg), "ubg": ca.DM(ubg)}

    def run(path: str) -> dict[str, Any]:
        opts: dict[str, Any] = {"print_time": False, "ipopt.print_level": 0, "ipopt.sb": "yes"}
        opts.update({f"ipopt.{k}": v for k, v in timing_options(path).items()})
        solver = ca.nlpsol("opf", "ipopt", model, opts)
        sol = solver(**args)
        stats = solver.stats()
        del solver  # closes IPOPT's output file
        callbacks = sum(v for k, v in stats.items() if k.startswith("t_proc_nlp_"))
        return {"iterations": int(stats["iter_count"]), "f": float(sol["f"]), "callbacks": callbacks}

    return run


def main(argv: list[str] | None = None) -> int:
    """Solve the case with each route and CasADi, interleaved, and print IPOPT's own CPU per solve and per route."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="case2869pegase")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--libs", default="cyipopt,wheel,casadi", help="our routes: cyipopt, wheel, casadi or paths")
    args = ap.parse_args(argv)
    case = read_case(case_path(args.case), args.case)
    prob, _ = build_exprgraph(case)
    nlp = prob.compile("vm")
    routes: dict[str, Callable[[str], dict[str, Any]]] = {
        lib: _ours(nlp, IPOPT_LIBS.get(lib, lib)) for lib in args.libs.split(",")
    }
    routes["CasADi"] = _casadi(case)
    print(f"{args.case}: {nlp.n} variables, {nlp.m} constraints; CPU s; load {os.getloadavg()[0]:.1f}")
    binding_overhead(nlp)
    own: dict[str, list[float]] = {name: [] for name in routes}
    for _ in range(args.reps):
        for name, run in routes.items():
            with tempfile.TemporaryDirectory(prefix="opf-ab-") as tmp:
                path = os.path.join(tmp, "ipopt.out")
                start = time.process_time()
                out = run(path)
                solve_cpu = time.process_time() - start
                gc.collect()  # the cyipopt problem closes its output file when freed
                timing = read_timing(path)
            evals = timing.get("Function Evaluations", 0.0)
            own[name].append(timing["OverallAlgorithm"] - evals)
            print(
                f"{name:8s} it {out['iterations']} f {out['f']:.12g} solve {solve_cpu:6.2f} "
                f"IPOPT own {own[name][-1]:5.2f} linear {timing.get('PDSystemSolverTotal', float('nan')):5.2f} "
                f"evaluations: IPOPT's {evals:5.2f}, callbacks' {out['callbacks']:5.2f}; "
                f"load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    for name, values in own.items():
        print(f"{name:8s} IPOPT own CPU: min {min(values):.2f}, median {float(np.median(values)):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
