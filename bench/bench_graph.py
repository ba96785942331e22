"""Graph rewriting: exprgraph.graph vs PyTensor on the same random graph.

The graph: a fixed-seed random DAG of 0-d float add/mul/sub nodes over 10 inputs, operands
mostly from the last 200 nodes (so the DAG is deep), with injected redexes ``x + 0``, ``x * 1``
and ``(x*y)/y`` (4% each) and 15% duplicated nodes (a node built again from the same operands);
the outputs are the nodes nothing else uses. About 2k and 20k nodes. Rows:

- **FunctionGraph build**: a graph over expressions already built (PyTensor: ``clone=False``, its
  cheapest form); also expressions and graph together.
- **merge**: PyTensor's MergeOptimizer finds the duplicated nodes; ours has nothing to do, equal
  terms being one object from construction (its graph is smaller from the start: compare sizes).
- **merge + equilibrium**: merge, then an equilibrium of ``x*1 -> x``, ``x+0 -> x`` and
  ``(x*y)/y -> x`` (pattern rewriters, merge as cleanup), from a fresh graph.
- **canonicalize**: ``rewrite_graph(include=("canonicalize",))`` (ours: the safe rules), and
  ``include=("canonicalize", "unsafe")`` (with the cancellations PyTensor's canonicalize also
  does), both against PyTensor's ``canonicalize`` query. PyTensor's takes minutes at 20k nodes
  (about 400 s measured once, its graph growing to 35k nodes), so it runs at 2k only and the 20k
  rows say so.

Node counts are reported before and after each rewriting row (ours never grow). Timing: best of
N, interleaved, garbage collector paused (``bench.common.best_of``); rewriting rows get a fresh
graph before each timed call, built outside the clock.

Run: ``python -m bench.bench_graph``.
"""

from __future__ import annotations

import logging
import random
import warnings
from collections.abc import Callable
from typing import Any

from bench.common import best_of, fmt_seconds, print_table, ratio, skip
from exprgraph import Symbol, const
from exprgraph.graph import EquilibriumGraphRewriter, FunctionGraph, MergeOptimizer, PatternNodeRewriter, rewrite_graph

N_INPUTS = 10
SIZES = (2_000, 20_000)
#: PyTensor's canonicalize runs only up to this many nodes (it is superlinear: minutes at 20k)
PYTENSOR_CANONICALIZE_MAX = 2_000


# -- the graph, in a neutral form: (kind, operand indices); indices below N_INPUTS are inputs -------------


def make_spec(n_nodes: int, seed: int = 0, dup: float = 0.15, window: int = 200) -> list[tuple]:
    """The random DAG as a list of ``(kind, operand, ...)`` in construction order."""
    rng = random.Random(seed)
    spec: list[tuple] = []
    count = N_INPUTS
    binary: list[int] = []

    def pick() -> int:
        if rng.random() < 0.7 and count > N_INPUTS:
            return rng.randrange(max(0, count - window), count)
        return rng.randrange(count)

    while len(spec) < n_nodes:
        r = rng.random()
        if r < dup and binary:
            spec.append(spec[rng.choice(binary) - N_INPUTS])  # the same node, built again
        elif r < dup + 0.04:
            spec.append(("add0", pick()))
        elif r < dup + 0.08:
            spec.append(("mul1", pick()))
        elif r < dup + 0.12:
            a, b = pick(), pick()
            spec.append(("mul", a, b))
            count += 1
            spec.append(("div", count - 1, b))
        else:
            spec.append((rng.choice(("add", "mul", "sub")), pick(), pick()))
            binary.append(count)
        count += 1
    return spec


def sinks(spec: list[tuple]) -> list[int]:
    """Indices of the nodes no other node uses (the outputs)."""
    used = {i for s in spec for i in s[1:]}
    return [i for i in range(N_INPUTS, N_INPUTS + len(spec)) if i not in used]


def replay(spec: list[tuple], ins: list, zero: Any, one: Any) -> tuple[list, list]:
    """The inputs ``ins`` and the outputs of ``spec`` built on them (``zero``, ``one``: the library's constants)."""
    vals: list[Any] = list(ins)
    for s in spec:
        k = s[0]
        if k == "add0":
            vals.append(vals[s[1]] + zero)
        elif k == "mul1":
            vals.append(vals[s[1]] * one)
        elif k == "add":
            vals.append(vals[s[1]] + vals[s[2]])
        elif k == "mul":
            vals.append(vals[s[1]] * vals[s[2]])
        elif k == "sub":
            vals.append(vals[s[1]] - vals[s[2]])
        else:
            vals.append(vals[s[1]] / vals[s[2]])
    return ins, [vals[i] for i in sinks(spec)]


def build_ours(spec: list[tuple]) -> tuple[list, list]:
    """Our inputs and outputs for ``spec``."""
    return replay(spec, [Symbol(f"x{i}") for i in range(N_INPUTS)], const(0.0), const(1.0))


def build_pytensor(pt: Any, spec: list[tuple]) -> tuple[list, list]:
    """PyTensor's inputs and outputs (0-d float64 tensors) for ``spec``."""
    return replay(spec, [pt.dscalar(f"x{i}") for i in range(N_INPUTS)], 0.0, 1.0)


# -- the rewriters ----------------------------------------------------------------------------------------


def our_equilibrium() -> EquilibriumGraphRewriter:
    """x*1 -> x, x+0 -> x, (x*y)/y -> x to a fixpoint, merge as cleanup."""
    return EquilibriumGraphRewriter(
        [
            PatternNodeRewriter(("mul", "x", 1), "x"),
            PatternNodeRewriter(("add", "x", 0), "x"),
            PatternNodeRewriter(("truediv", ("mul", "x", "y"), "y"), "x"),
        ],
        max_use_ratio=10,
        cleanup_rewriters=[MergeOptimizer()],
    )


def pytensor_tools() -> dict[str, Any] | None:
    """PyTensor's pieces, or None when it is not installed."""
    try:
        import pytensor.tensor as pt
        from pytensor.compile import optdb
        from pytensor.graph.fg import FunctionGraph as PtFunctionGraph
        from pytensor.graph.rewriting.basic import EquilibriumGraphRewriter as PtEquilibrium
        from pytensor.graph.rewriting.basic import MergeOptimizer as PtMerge
        from pytensor.graph.rewriting.basic import PatternNodeRewriter as PtPattern
        from pytensor.graph.rewriting.db import RewriteDatabaseQuery
    except ImportError:
        return None

    def equilibrium() -> Any:
        return PtEquilibrium(
            [
                PtPattern((pt.mul, "x", 1.0), "x"),
                PtPattern((pt.add, "x", 0.0), "x"),
                PtPattern((pt.true_div, (pt.mul, "x", "y"), "y"), "x"),
            ],
            max_use_ratio=10,
            cleanup_rewriters=[PtMerge()],
        )

    return {
        "pt": pt,
        "FunctionGraph": PtFunctionGraph,
        "merge": PtMerge,
        "equilibrium": equilibrium,
        "canonicalize": lambda: optdb.query(RewriteDatabaseQuery(include=["canonicalize"])),
    }


# -- the benchmark --------------------------------------------------------------------------------------------


class _Fresh:
    """A fresh graph made outside the clock before each timed call (``best_of`` setup)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make
        self.graph: Any = None

    def __call__(self) -> None:
        self.graph = self.make()


def _row(step: str, nodes: str, t: dict[str, float], sizes: str = "") -> list[str]:
    ours = t["ours"]
    anchor = t.get("pytensor")
    if anchor is None:
        return [step, nodes, fmt_seconds(ours), "not run", "", sizes]
    return [step, nodes, fmt_seconds(ours), fmt_seconds(anchor), ratio(ours, anchor), sizes]


def bench_size(n: int, tools: dict[str, Any] | None, rows: list[list[str]]) -> None:
    """All rows for a graph of about ``n`` nodes."""
    spec = make_spec(n)
    ins, outs = build_ours(spec)
    ours_nodes = FunctionGraph(ins, outs).node_count
    label = f"{n:,}"
    pt_ins = pt_outs = None
    if tools is not None:
        pt_ins, pt_outs = build_pytensor(tools["pt"], spec)
    slow = {"ours": 5, "pytensor": 2 if n >= 10_000 else 3}

    # FunctionGraph build
    contenders: dict[str, Callable[[], Any]] = {"ours": lambda: FunctionGraph(ins, outs)}
    if tools is not None:
        contenders["pytensor"] = lambda: tools["FunctionGraph"](pt_ins, pt_outs, clone=False)
    t = best_of(contenders, repeat=slow)
    pt_nodes = len(tools["FunctionGraph"](pt_ins, pt_outs, clone=False).apply_nodes) if tools else None
    sizes = f"{ours_nodes:,} / {pt_nodes:,}" if pt_nodes else f"{ours_nodes:,}"
    rows.append(_row("FunctionGraph build", label, t, sizes))

    contenders = {"ours": lambda: FunctionGraph(*build_ours(spec))}
    if tools is not None:
        contenders["pytensor"] = lambda: tools["FunctionGraph"](*build_pytensor(tools["pt"], spec), clone=False)
    rows.append(_row("expressions + FunctionGraph", label, best_of(contenders, repeat=slow), sizes))

    # merge
    fresh_ours = _Fresh(lambda: FunctionGraph(ins, outs))
    fresh_pt = _Fresh(lambda: tools["FunctionGraph"](pt_ins, pt_outs, clone=True)) if tools else None
    after: dict[str, int] = {}

    def ours_merge() -> Any:
        MergeOptimizer().rewrite(fresh_ours.graph)
        after["ours"] = fresh_ours.graph.node_count

    def pt_merge() -> Any:
        tools["merge"]().rewrite(fresh_pt.graph)
        after["pytensor"] = len(fresh_pt.graph.apply_nodes)

    contenders = {"ours": ours_merge}
    setup: dict[str, Callable[[], Any]] = {"ours": fresh_ours}
    if tools is not None:
        contenders["pytensor"] = pt_merge
        setup["pytensor"] = fresh_pt
    t = best_of(contenders, repeat=slow, setup=setup)
    rows.append(_row("merge (CSE)", label, t, _sizes(ours_nodes, pt_nodes, after)))

    # merge + equilibrium of the three patterns
    def ours_eq() -> Any:
        MergeOptimizer().rewrite(fresh_ours.graph)
        our_equilibrium().rewrite(fresh_ours.graph)
        after["ours"] = fresh_ours.graph.node_count

    def pt_eq() -> Any:
        tools["merge"]().rewrite(fresh_pt.graph)
        tools["equilibrium"]().rewrite(fresh_pt.graph)
        after["pytensor"] = len(fresh_pt.graph.apply_nodes)

    contenders = {"ours": ours_eq}
    if tools is not None:
        contenders["pytensor"] = pt_eq
    t = best_of(contenders, repeat=slow, setup=setup)
    rows.append(_row("merge + equilibrium (3 patterns, merge cleanup)", label, t, _sizes(ours_nodes, pt_nodes, after)))

    # canonicalize (as the issue names it), then with the unsafe cancellations PyTensor's also does
    pt_canon_times: dict[str, float] = {}
    for label_step, include in (
        ("canonicalize", ("canonicalize",)),
        ("canonicalize + unsafe", ("canonicalize", "unsafe")),
    ):

        def ours_canon(include: tuple = include) -> Any:
            rewrite_graph(fresh_ours.graph, include=include)
            after["ours"] = fresh_ours.graph.node_count

        def pt_canon() -> Any:
            tools["canonicalize"]().rewrite(fresh_pt.graph)
            after["pytensor"] = len(fresh_pt.graph.apply_nodes)

        contenders = {"ours": ours_canon}
        canon_setup: dict[str, Callable[[], Any]] = {"ours": fresh_ours}
        run_pt = tools is not None and n <= PYTENSOR_CANONICALIZE_MAX and not pt_canon_times
        if run_pt:
            contenders["pytensor"] = pt_canon
            canon_setup["pytensor"] = fresh_pt
        t = best_of(contenders, repeat={"ours": 3, "pytensor": 2}, setup=canon_setup)
        if run_pt:
            pt_canon_times["pytensor"] = t["pytensor"]
            pt_after = after["pytensor"]
        elif pt_canon_times:  # the same PyTensor run compares with both of ours
            t["pytensor"] = pt_canon_times["pytensor"]
            after["pytensor"] = pt_after
        else:
            after.pop("pytensor", None)
        with_pt = "pytensor" in t
        rows.append(_row(label_step, label, t, _sizes(ours_nodes, pt_nodes if with_pt else None, after)))


def _sizes(ours_before: int, pt_before: int | None, after: dict[str, int]) -> str:
    text = f"ours {ours_before:,} -> {after['ours']:,}"
    if pt_before is not None and "pytensor" in after:
        text += f"; pytensor {pt_before:,} -> {after['pytensor']:,}"
    return text


def main() -> None:
    """Print the table of both sizes."""
    tools = pytensor_tools()
    if tools is None:
        skip("the pytensor rows", "pytensor is not installed (pip install pytensor)")
    # PyTensor warns about missing C compilers and similar; the timings do not need it
    logging.getLogger("pytensor").setLevel(logging.ERROR)
    logging.getLogger("exprgraph.graph").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    rows: list[list[str]] = []
    for n in SIZES:
        bench_size(n, tools, rows)
    print_table(
        "graph rewriting: exprgraph.graph vs PyTensor (random 0-d float DAG)",
        ["step", "nodes", "ours", "pytensor", "ours/pytensor", "nodes (ours / pytensor)"],
        rows,
    )
    print(
        f"(pytensor's canonicalize is run up to {PYTENSOR_CANONICALIZE_MAX:,} nodes only: at 20k nodes it takes "
        "minutes, about 400 s when measured, and its graph grows to ~35k nodes)"
    )
    print("(ours: equal subterms are one term from construction, so our graphs start without the duplicates)")


if __name__ == "__main__":
    main()
