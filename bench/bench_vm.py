"""The vm backend: encode time and call time against our C build (-O2) and CasADi's SX virtual machine.

Family: bench_lowering's branch terms ``v_i*v_j*(g_k*cos(t_i - t_j) + b*sin(t_i - t_j))`` with the
partials of each term in its four variables (five outputs per term), at 10^3, 10^4 and 10^5
outputs; each built grouped (loops over classes, the default) and straight-line (``loops=False``).

- **ready**: CPU seconds from terms to a callable (process + children: the C compiler counts),
  lowering included for every backend; our C build is forced to ``-O2`` in a fresh build cache.
- **call**: CPU seconds of one packed call at one point (``time.thread_time`` over a batch,
  best batch), ours and CasADi's VM (its input DM made outside the clock) interleaved in rounds;
  and at 10^4 points (packed rows; CasADi's ``map`` over a DM prepared outside the clock).

Optionally ``--opf case300,case1354_pegase``: the AC-OPF model of bench_opf (constraints, Jacobian,
Hessian of the Lagrangian in blocks) compiled by ``exprgraph.optimize`` with the vm and the C
backend: build CPU and the CPU of one round of callbacks (g, J, H).

Optionally ``--one-point case1354pegase,case2869pegase``: the vm's machine at one point on the same
callbacks (straight-line, as ``bench_opf --backend vm`` runs them), its lane interpreter against the
dense one-point code (``vm.ONE_POINT``; the same bits, checked), warm (best of batches) and cold
(median of single calls after 64 MB of other memory traffic, as between a solver's steps), CPU;
then the whole callbacks (``CompiledNLP.constraints/jacobian/hessian``: Python, the Hessian's
assembly) against CasADi's ``nlp_g``, ``nlp_jac_g``, ``nlp_hess_l`` of ``nlpsol`` on its VM (inputs as
DM made outside the clock; its ``nlp_jac_g`` also gives g), interleaved in one process.

Optionally ``--ready-parts case1354pegase,case2869pegase``: the straight-line vm callbacks of the same
model made from the derivative terms (what ``CompiledNLP``'s "compile" time is on the vm backend),
with the encoding read from the walk's arrays (``lower.KEEP_WALK``, the default) against the encoding
read from the terms again, taking turns in one process (CPU, median of rounds, the same words
checked); then the parts of the arrays' road: walk, encode, register allocation, machine.

Run from the repository root:
``python -m bench.bench_vm [--sizes 1000,10000,100000] [--flat-max 10000] [--opf case300] [--one-point case300]``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import resource
import tempfile
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from bench.bench_lowering import ours, pairs, theirs
from bench.opf_data import case_path, read_case
from bench.opf_model import build_exprgraph
from exprgraph.compile import c_backend, vm
from exprgraph.compile import compile as eg_compile
from exprgraph.compile.lower import lower
from exprgraph.optimize.callbacks import CompiledNLP

# the modules (the package exports functions of these names); their extensions are swapped for clocked ones
lower_mod: Any = importlib.import_module("exprgraph.compile.lower")
vm_encode: Any = importlib.import_module("exprgraph.compile.vm_encode")
vm_alloc: Any = importlib.import_module("exprgraph.compile.vm_alloc")


def cpu() -> float:
    """CPU seconds of this process and its finished children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def force_o2() -> None:
    """Our C backend at -O2 for every program size (its default picks -O3 or -O1 by size)."""
    c_backend._opt_flags = lambda statements: ("-O2", ())


def interleaved(calls: dict[str, Callable[[], Any]], rounds: int = 7, batch: int = 5) -> dict[str, float]:
    """Best CPU seconds per call of each callable, the callables taking turns in every round."""
    best = {name: float("inf") for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            start = time.thread_time()
            for _ in range(batch):
                fn()
            best[name] = min(best[name], (time.thread_time() - start) / batch)
    return best


def ready(outs: list, inputs: list, backend: str, loops: bool) -> tuple[Any, float]:
    """The packed function of ``outs`` and the CPU seconds it took to make it."""
    start = cpu()
    fn = eg_compile(outs, inputs, backend, packed=True, loops=loops)
    return fn, cpu() - start


def _calls(
    vm_f: Any, c_f: Any, ca_f: Any, point: Any, ca_x: Any, many: Any, ca_many: Any, ca_map: Any, n_out: int
) -> tuple:
    """Interleaved CPU per call at one point and at many points: vm, C, CasADi."""
    one = interleaved({"vm": lambda: vm_f(point), "c": lambda: c_f(point), "casadi": lambda: ca_f(ca_x)})
    out_v, out_c = np.empty((len(many), n_out)), np.empty((len(many), n_out))
    lots = interleaved(
        {
            "vm": lambda: vm_f(many, out=out_v),
            "c": lambda: c_f(many, out=out_c),
            "casadi": lambda: ca_map(ca_many),
        },
        rounds=3,
        batch=1,
    )
    return one, lots


def family_rows(n: int, flat_max: int, points: int) -> list[str]:
    """The table rows of one size of the family."""
    import casadi as ca

    terms = n // 5
    buses = max(4, terms // 3)
    index = pairs(terms, buses)
    outs, inputs = ours(index, buses)
    points = max(10, min(points, 2 * 10**7 // len(outs)))  # the outputs of a many-points call: <= 160 MB
    rng = np.random.default_rng(0)
    point = np.concatenate([rng.uniform(0.9, 1.1, buses), rng.uniform(-0.3, 0.3, buses)])
    many = np.ascontiguousarray(np.tile(point, (points, 1)) * rng.uniform(0.99, 1.01, (points, len(point))))
    start = cpu()
    theirs_f: Any = theirs(index, buses)
    ca_made = cpu() - start
    ca_x = ca.DM(point)
    ca_many = ca.DM(many.T)
    ca_map = theirs_f.map(points)
    want = np.array(theirs_f(ca_x)).ravel()
    rows = []
    for loops in (True, False):
        if not loops and n > flat_max:
            continue
        vm_f, vm_ready = ready(outs, inputs, "vm", loops)
        c_f, c_ready = ready(outs, inputs, "c", loops)
        for f in (vm_f, c_f):
            assert np.allclose(f(point), want, rtol=1e-12, atol=1e-12), "a backend differs from CasADi"
        one, lots = _calls(vm_f, c_f, theirs_f, point, ca_x, many, ca_many, ca_map, len(outs))
        kind = "grouped" if loops else "flat"
        rows.append(
            f"| {len(outs)} | {kind}, {points} points | {vm_ready:.3f} | {c_ready:.2f} | {ca_made:.2f} "
            f"| {vm_ready / c_ready:.4f} "
            f"| {one['vm'] * 1e6:.1f} | {one['c'] * 1e6:.1f} | {one['casadi'] * 1e6:.1f} "
            f"| {one['vm'] / one['c']:.2f} | {one['vm'] / one['casadi']:.2f} "
            f"| {lots['vm'] * 1e3:.1f} | {lots['c'] * 1e3:.1f} | {lots['casadi'] * 1e3:.1f} "
            f"| {lots['vm'] / lots['c']:.2f} | {lots['vm'] / lots['casadi']:.2f} |"
        )
    return rows


def opf_rows(name: str) -> list[str]:
    """Build CPU and one round of callbacks (g, J, H) of the AC-OPF of ``name``, vm vs C."""
    case = read_case(case_path(name), name)
    prob, lay = build_exprgraph(case)
    x0 = np.asarray(lay.x0, dtype=float)
    built = {}
    for backend in ("vm", "c"):
        start = cpu()
        nlp = prob.compile(backend, build_timeout=3000)
        built[backend] = (nlp, cpu() - start)
    lam = np.linspace(-1.0, 1.0, built["vm"][0].m)

    def round_of(nlp: Any) -> Callable[[], Any]:
        return lambda: (nlp.constraints(x0), nlp.jacobian(x0), nlp.hessian(x0, lam, 1.0))

    a = round_of(built["vm"][0])()
    b = round_of(built["c"][0])()
    for u, v in zip(a, b, strict=True):
        assert np.allclose(u, v, rtol=1e-10, atol=1e-10), "vm and C callbacks differ"
    calls = interleaved({k: round_of(v[0]) for k, v in built.items()}, rounds=5, batch=3)
    vm_nlp, vm_build = built["vm"]
    c_build = built["c"][1]
    return [
        f"| {name} | {vm_nlp.n} | {vm_nlp.m} | {vm_nlp.build['derivatives']:.2f} | {vm_build:.2f} | {c_build:.2f} "
        f"| {vm_build / c_build:.3f} | {calls['vm'] * 1e3:.2f} | {calls['c'] * 1e3:.2f} "
        f"| {calls['vm'] / calls['c']:.2f} |"
    ]


def _cold(calls: dict[str, Callable[[], Any]], rounds: int = 15) -> dict[str, float]:
    """Median CPU seconds of single calls, each after writing 64 MB elsewhere (caches cold), taking turns."""
    junk = np.ones(8 << 20)
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            junk += 1.0
            start = time.thread_time()
            fn()
            times[name].append(time.thread_time() - start)
    return {name: float(np.median(t)) for name, t in times.items()}


def _casadi_callbacks(case: Any, x0: np.ndarray, lam: np.ndarray) -> dict[str, Callable[[], Any]]:
    """CasADi's own callbacks of the same model (``nlpsol``'s functions on its VM), inputs made outside the clock."""
    import casadi as ca

    from bench.opf_model import build_casadi

    model, _, _, _ = build_casadi(case)
    solver = ca.nlpsol("opf", "ipopt", model, {"print_time": False, "ipopt.print_level": 0, "ipopt.sb": "yes"})
    x, p, one, lam_g = ca.DM(x0), ca.DM(), ca.DM(1.0), ca.DM(lam)
    g, jac, hess = (solver.get_function(k) for k in ("nlp_g", "nlp_jac_g", "nlp_hess_l"))
    return {
        "constraints": lambda: g.call([x, p]),
        "jacobian": lambda: jac.call([x, p]),
        "hessian": lambda: hess.call([x, p, one, lam_g]),
    }


def _packed_call(runner: Any, x: np.ndarray, out: np.ndarray) -> Callable[[], Any]:
    """A call of ``runner``'s packed entry at the point ``x``, into ``out``."""
    return lambda: runner.packed(x, out)


def one_point_rows(name: str) -> list[str]:
    """The vm at one point on the AC-OPF callbacks of ``name``: lane interpreter vs dense code, then vs CasADi."""
    case = read_case(case_path(name), name)
    prob, lay = build_exprgraph(case)
    x0 = np.asarray(lay.x0, dtype=float) * np.random.default_rng(0).uniform(0.95, 1.05, len(lay.x0))
    nlp = prob.compile("vm")
    lam = np.linspace(-1.0, 1.0, nlp.m)
    terms = {"constraints": nlp.problem.g, "jacobian": nlp.jac.values, "hessian": nlp.hess.values}
    rows = []
    for label, outs in terms.items():
        program = lower(list(outs), nlp.variables)
        runners = {}
        for flag in (False, True):
            vm.ONE_POINT = flag
            runners["dense" if flag else "lanes"] = vm.build_vm(program)
        vm.ONE_POINT = True
        outs_of = {k: np.empty(len(program.outputs)) for k in runners}
        calls = {k: _packed_call(r, x0, outs_of[k]) for k, r in runners.items()}
        warm, cold = interleaved(calls, rounds=9, batch=10), _cold(calls)
        assert outs_of["dense"].tobytes() == outs_of["lanes"].tobytes(), f"{label}: the dense code differs"
        words = runners["dense"].machine.one_words
        rows.append(
            f"| {name} | {label} | {len(runners['lanes'].encoded.code) // 5} | {words} | {warm['lanes'] * 1e3:.3f} "
            f"| {warm['dense'] * 1e3:.3f} | {warm['lanes'] / warm['dense']:.2f} | {cold['lanes'] * 1e3:.3f} "
            f"| {cold['dense'] * 1e3:.3f} | {cold['lanes'] / cold['dense']:.2f} |"
        )
    ours = {
        "constraints": lambda: nlp.constraints(x0),
        "jacobian": lambda: nlp.jacobian(x0),
        "hessian": lambda: nlp.hessian(x0, lam, 1.0),
    }
    theirs = _casadi_callbacks(case, x0, lam)
    both = {f"{side} {k}": f for side, fns in (("ours", ours), ("casadi", theirs)) for k, f in fns.items()}
    warm, cold = interleaved(both, rounds=7, batch=5), _cold(both)
    for k in ours:
        o, c = f"ours {k}", f"casadi {k}"
        rows.append(
            f"| {name} | {k}, whole callback vs CasADi | | | {warm[o] * 1e3:.3f} | {warm[c] * 1e3:.3f} "
            f"| {warm[o] / warm[c]:.2f} | {cold[o] * 1e3:.3f} | {cold[c] * 1e3:.3f} | {cold[o] / cold[c]:.2f} |"
        )
    return rows


def _callback_outputs(name: str) -> tuple[dict[str, list], list]:
    """The outputs of the five callbacks of the AC-OPF of ``name`` (derivatives made, nothing compiled)."""
    case = read_case(case_path(name), name)
    prob, _ = build_exprgraph(case)
    nlp = CompiledNLP.__new__(CompiledNLP)
    nlp.problem, nlp.variables, nlp.m = prob, prob.x, len(prob.g)
    nlp._derivatives(prob)
    outs = {"hessian": nlp.hess.values, "jacobian": nlp.jac.values, "constraints": prob.g}
    outs.update({"gradient": nlp.grad.values, "objective": [nlp.f]})
    return outs, list(prob.x)


def _timed_parts(outs: dict[str, list], inputs: list) -> dict[str, float]:
    """CPU seconds of each part of making the five vm machines: walk, encode, allocate, machine (and the rest)."""
    parts = dict.fromkeys(("walk", "encode", "allocate", "machine", "total"), 0.0)
    walk, enc, alloc, machine = lower_mod._native.walk, vm_encode._native, vm_alloc._native.allocate, vm._native
    clocked = {"walk": walk, "encode_walked": enc.encode_walked, "encode_flat": enc.encode_flat, "allocate": alloc}

    def clock(part: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*a: Any, **k: Any) -> Any:
            start = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                parts[part] += time.process_time() - start

        return run

    class Shim:
        """The extension, its walk, encodings, allocation and machine clocked."""

        def __getattr__(self, name: str) -> Any:
            part = {"walk": "walk", "allocate": "allocate", "Machine": "machine"}.get(name, "encode")
            return clock(part, clocked.get(name) or getattr(machine, name))

    saved = lower_mod._native, vm_encode._native, vm_alloc._native, vm._native
    lower_mod._native = vm_encode._native = vm_alloc._native = vm._native = Shim()
    try:
        start = time.process_time()
        for terms in outs.values():
            eg_compile(list(terms), inputs, "vm", packed=True, loops=False)
        parts["total"] = time.process_time() - start
    finally:
        lower_mod._native, vm_encode._native, vm_alloc._native, vm._native = saved
    return parts


def ready_parts_rows(name: str, rounds: int = 5) -> list[str]:
    """The vm callbacks of ``name`` made with the encoding read from the walk's arrays vs from the terms."""
    outs, inputs = _callback_outputs(name)
    made: dict[bool, list[float]] = {True: [], False: []}
    words: dict[bool, list[list[bytes]]] = {}
    for keep in (True, False):
        lower_mod.KEEP_WALK = keep
        encodings = [vars(vm_encode.encode(lower(list(t), inputs))) for t in outs.values()]
        words[keep] = [[v.tobytes() for v in e.values() if isinstance(v, np.ndarray)] for e in encodings]
    for _ in range(rounds):
        for keep in (True, False):
            lower_mod.KEEP_WALK = keep
            start = time.process_time()
            for terms in outs.values():
                eg_compile(list(terms), inputs, "vm", packed=True, loops=False)
            made[keep].append(time.process_time() - start)
    lower_mod.KEEP_WALK = True
    assert words[True] == words[False], "the two roads encode differently"
    parts = _timed_parts(outs, inputs)
    new, old = float(np.median(made[True])), float(np.median(made[False]))
    rest = parts["total"] - parts["walk"] - parts["encode"] - parts["allocate"] - parts["machine"]
    return [
        f"| {name} | {old:.3f} | {new:.3f} | {old / new:.2f}x | {parts['walk']:.3f} | {parts['encode']:.3f} "
        f"| {parts['allocate']:.3f} | {parts['machine']:.3f} | {rest:.3f} |"
    ]


def print_table(head_lines: list[str], cases: list[str], rows: Callable[[str], Iterable[str]]) -> None:
    """A markdown table: its heading lines (the last one the header row), then each case's rows as they come."""
    print("\n".join(head_lines))
    print("|" + "---|" * (head_lines[-1].count("|") - 1))
    for name in cases:
        for row in rows(name):
            print(row, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000", help="outputs (5 per term)")
    parser.add_argument("--flat-max", type=int, default=10000, help="largest size built straight-line too")
    parser.add_argument("--points", type=int, default=10000, help="points of the many-points call (fewer when large)")
    parser.add_argument("--opf", default="", help="comma list of cases (bench_opf's model), e.g. case300")
    parser.add_argument("--one-point", default="", help="comma list of cases: the vm's two interpreters at one point")
    parser.add_argument("--ready-parts", default="", help="comma list of cases: the vm callbacks' making, by part")
    parser.add_argument("--skip-family", action="store_true", help="only the --opf and --one-point tables")
    args = parser.parse_args()
    os.environ["EXPRGRAPH_CACHE"] = tempfile.mkdtemp(prefix="eg-bench-vm-")  # cold C builds
    force_o2()
    print(f"load average before: {os.getloadavg()}")
    print("\nReady = CPU s from terms to a packed callable (vm: lower + encode; C: lower + emit + gcc -O2 + load);")
    print("call = CPU us of one packed call at one point; many = CPU ms of a call at --points points\n")
    head = "| outputs | code | vm ready | C ready | CasADi construct | vm/C ready | vm call | C call | CasADi call "
    head += "| vm/C | vm/CasADi | vm many | C many | CasADi map | vm/C many | vm/CasADi many |"
    if not args.skip_family:
        print(head)
        print("|" + "---|" * 16)
    for n in (int(s) for s in args.sizes.split(",") if s and not args.skip_family):
        for row in family_rows(n, args.flat_max, args.points):
            print(row, flush=True)
    tables = [
        (
            args.opf,
            opf_rows,
            [
                "\n| case | n | m | derivatives s | vm build s | C build s | vm/C build | vm g+J+H ms | C g+J+H ms "
                "| vm/C |",
            ],
        ),
        (
            args.one_point,
            one_point_rows,
            [
                "\nAt one point, CPU ms: rows 1-3 the machine (lane interpreter vs dense code), the rest the callbacks",
                "| case | callback | lane instructions | dense words | lanes warm | dense warm | x | lanes cold "
                "| dense cold | x |",
            ],
        ),
        (
            args.ready_parts,
            ready_parts_rows,
            [
                "\nThe five vm callbacks (straight-line) made from the derivative terms, CPU s (median of 5 rounds);",
                "encoding from the walk's arrays vs from the terms; then the arrays' road by part (one more run)",
                "| case | from terms | from arrays | x | walk | encode | allocate | machine | rest (Python) |",
            ],
        ),
    ]
    for cases, rows, head_lines in tables:
        if cases:
            print_table(head_lines, cases.split(","), rows)
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
