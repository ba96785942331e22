"""Shapes of real ONNX exports: ours vs onnx's and onnxruntime's shape inference, scored against onnxruntime runs.

The corpus (``bench/onnx_corpus.py``, cached under ``bench/data/onnx_models/``, built on the first
run) holds transformers and torchvision models exported by both torch exporters with dynamic
batch, sequence and image sizes, and the onnx package's light models; the truth is every value's
shape in onnxruntime runs at three input sizes. For each model three engines infer every shape:

- ours: ``exprgraph.interop.onnx_shapes.infer_shapes(model)``;
- onnx: ``onnx.shape_inference.infer_shapes(model, data_prop=True)``;
- ort: onnxruntime's ``SymbolicShapeInference`` with ``auto_merge=True`` (sympy-based; what ONNX users
  run). Its ``infer_shapes`` raises on an incomplete inference after writing the partial model to
  a file; we run the same steps and keep the partial model (its best), saying it was incomplete.

The models' ``value_info`` (torch's own shapes, which the dynamo exporter records) is removed first:
every engine infers from the graph inputs. Each dim of every node output is scored correct, wrong
or undecided at all three sizes (``bench/onnx_corpus_score.py``: anchors' ``dim_param`` text is
read by our dims parser, sympy's true division evaluated exactly; a false merge of unequal dims counts
as wrong). Times are process CPU seconds, best of N, interleaved, each call cold: sympy's cache (ort)
and our dims caches are cleared before it, untimed, as in the fresh process a user runs the tool in.
Goals (issue 27): every dynamic dim ort decides, 0 wrong, ours/ort time <= 0.05.

Run: ``python -m bench.bench_onnx_models [--quick] [--models gpt2,resnet18] [--engines ours] [--board|--no-board]``
(the scoreboard ``notes/onnx_scoreboard.md`` is rewritten when this module runs all engines over the whole
corpus, or with ``--board``, never with ``--no-board``; ``--engines ours`` times ours alone while iterating, the
others reported as not run; ``python -m bench`` prints the tables only).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bench import onnx_corpus as corpus
from bench.common import best_of, fmt_seconds, print_table, ratio, skip
from bench.onnx_corpus_score import Score, Scored, proto_shapes, score

ENGINES = ("ours", "onnx", "ort")
TIME_LIMIT = 120.0  # seconds of wall time per engine call (ort takes under 1 s on every model it finishes)


@dataclass
class Run:
    """One model: each engine's best CPU time, score, failure, and ours' crash details."""

    key: str
    entry: dict
    times: dict[str, float] = field(default_factory=dict)
    scored: dict[str, Scored] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def ort_infer(model: Any) -> Any:
    """onnxruntime's symbolic shape inference with ``auto_merge``; a partial model when it is incomplete."""
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference, get_opset

    if (get_opset(model) or 0) < 7:
        raise ValueError("opset below 7: the tool refuses it")
    tool = SymbolicShapeInference(2**31 - 1, True, False, 0)  # int_max, auto_merge, guess_output_rank, verbose
    complete = False
    tool._preprocess(model)
    while tool.run_:
        complete = tool._infer_impl()
    tool._update_output_from_vi()
    tool.out_mp_.doc_string = "" if complete else "incomplete"
    return tool.out_mp_


def _engines(model: Any) -> dict[str, Callable[[], Any]]:
    import onnx

    from exprgraph.interop.onnx_shapes import infer_shapes

    return {
        "ours": lambda: infer_shapes(model),
        "onnx": lambda: onnx.shape_inference.infer_shapes(model, data_prop=True),
        "ort": lambda: ort_infer(model),
    }


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise TimeoutError in the body after ``seconds`` of wall time (a hang is a finding, not the end of the run)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"no answer within {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _cold_caches() -> dict[str, Callable[[], Any]]:
    """Untimed before each call: sympy's cache (ort's tool) and our dims caches are emptied, as in a fresh process."""
    import sympy

    from exprgraph.dims import clear_caches

    return {"ours": clear_caches, "ort": sympy.core.cache.clear_cache}


def run_model(key: str, repeat: int, engines: tuple[str, ...] = ENGINES) -> Run:
    """Time the engines on one corpus model (interleaved, best of ``repeat``) and score their shapes; an engine
    left out of ``engines`` is reported as not run."""
    model, entry = corpus.load(key, strip=True)  # no value_info: every engine infers from the graph inputs
    run = Run(key, entry, notes=list(entry.get("notes", [])))
    results: dict[str, Any] = {}

    def guarded(name: str, fn: Callable[[], Any]) -> Callable[[], Any]:
        def call() -> None:
            if name in run.failures:
                return
            try:
                with _time_limit(TIME_LIMIT):
                    results[name] = fn()
            except Exception as exc:  # an engine that fails on a model is a finding, not the end of the run
                run.failures[name] = f"{type(exc).__name__}: {str(exc)[:300]}"

        return call

    for name in ENGINES:
        if name not in engines:
            run.failures[name] = "not run (--engines)"
    fns = {name: guarded(name, fn) for name, fn in _engines(model).items() if name in engines}
    times = best_of(fns, repeat=repeat, setup=_cold_caches(), clock=time.process_time)
    truth, binds = entry["truth"], entry["bindings"]
    for name in ENGINES:
        out = results.get(name) if name not in run.failures else None
        if out is not None and name != "ours":
            if out.doc_string == "incomplete":
                run.notes.append(f"{name}: incomplete inference (partial result scored)")
            out = proto_shapes(out)
        run.scored[name] = score(out, truth, binds)
        if name not in run.failures:
            run.times[name] = times[name]
    return run


def _cell(s: Score) -> str:
    return f"{s.ok} ({s.ok_dynamic})"


def _missed(ours: Scored, other: Scored) -> tuple[int, int]:
    """Dynamic dims ``other`` gets right and ours does not, and the reverse."""
    lost = gained = 0
    for name, verdicts in ours.verdicts.items():
        for a, b, dyn in zip(verdicts, other.verdicts.get(name, ()), ours.dynamic[name], strict=False):
            if dyn:
                lost += b == "ok" and a != "ok"
                gained += a == "ok" and b != "ok"
    return lost, gained


def tables(runs: list[Run]) -> tuple[list[str], list[list[Any]], list[str], list[list[Any]]]:
    """The per-model table and the totals table (header, rows each)."""
    header = ["model", "dims", "dynamic", *[f"{e} ok (dyn)" for e in ENGINES], *[f"{e} wrong" for e in ENGINES]]
    header += ["dyn ort has, ours not", *[f"{e} CPU" for e in ENGINES], "ours/ort"]
    rows = []
    totals = {e: Score() for e in ENGINES}
    time_tot = dict.fromkeys(ENGINES, 0.0)
    paired = [0.0, 0.0]
    missed = [0, 0]
    for run in runs:
        sc = {e: run.scored[e].score for e in ENGINES}
        lost, gained = _missed(run.scored["ours"], run.scored["ort"])
        missed[0] += lost
        missed[1] += gained
        cpu = [fmt_seconds(run.times[e]) if e in run.times else "failed" for e in ENGINES]
        both = "ours" in run.times and "ort" in run.times
        if both:
            paired[0] += run.times["ours"]
            paired[1] += run.times["ort"]
        for e in ENGINES:
            totals[e].add(sc[e])
            time_tot[e] += run.times.get(e, 0.0)
        r = ratio(run.times["ours"], run.times["ort"]) if both else "n/a"
        rows.append([run.key, sc["ours"].dims, sc["ours"].dynamic, *[_cell(sc[e]) for e in ENGINES],
                     *[sc[e].wrong for e in ENGINES], lost, *cpu, r])  # fmt: skip
    t_header = ["engine", "models run", "dims", "dynamic", "correct", "correct dynamic", "wrong (false merges)",
                "CPU total", "ratio ours/engine (models both ran)"]  # fmt: skip
    t_rows = []
    for e in ENGINES:
        ran = sum(e not in r.failures for r in runs)
        mine = sum(r.times["ours"] for r in runs if e in r.times and "ours" in r.times)
        theirs = sum(r.times[e] for r in runs if e in r.times and "ours" in r.times)
        s = totals[e]
        t_rows.append([e, f"{ran}/{len(runs)}", s.dims, s.dynamic, s.ok, s.ok_dynamic, f"{s.wrong} ({s.merged_wrong})",
                       fmt_seconds(time_tot[e]), ratio(mine, theirs) if e != "ours" else ""])  # fmt: skip
    t_rows.append(["ours vs ort", "", "", "", "", f"ort-only dyn {missed[0]}, ours-only dyn {missed[1]}", "", "", ""])
    return header, rows, t_header, t_rows


def family_table(runs: list[Run]) -> tuple[list[str], list[list[Any]]]:
    """Totals per model family (transformers, torchvision, onnx light): dynamic dims decided, wrong, CPU."""
    header = [
        "family",
        "models",
        "dims",
        "dynamic",
        *[f"{e} dyn ok" for e in ENGINES],
        *[f"{e} wrong" for e in ENGINES],
    ]
    header += ["ours CPU", "ort CPU", "ours/ort"]
    rows = []
    for family in sorted({r.entry.get("family", "?") for r in runs}):
        group = [r for r in runs if r.entry.get("family", "?") == family]
        sc = {e: Score() for e in ENGINES}
        for r in group:
            for e in ENGINES:
                sc[e].add(r.scored[e].score)
        both = [r for r in group if "ours" in r.times and "ort" in r.times]
        ours, ort = sum(r.times["ours"] for r in both), sum(r.times["ort"] for r in both)
        counts = [*[sc[e].ok_dynamic for e in ENGINES], *[sc[e].wrong for e in ENGINES]]
        cpu = [fmt_seconds(ours), fmt_seconds(ort), ratio(ours, ort)]
        rows.append([family, len(group), sc["ours"].dims, sc["ours"].dynamic, *counts, *cpu])
    return header, rows


def build_kind() -> str:
    """Whether our dims fast path ran compiled (mypyc) or as pure Python."""
    from exprgraph.dims import compiled_modules

    return "dims compiled (mypyc)" if compiled_modules() else "dims pure Python (compiled modules absent or stale)"


def load_average() -> str:
    """The 1, 5 and 15 minute load averages."""
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def main() -> None:
    """Build (or reuse) the corpus, run the three engines on every model, print the tables, write the scoreboard."""
    parser = argparse.ArgumentParser(description="ONNX shapes of real exports vs onnx and onnxruntime")
    parser.add_argument("--quick", action="store_true", help="one round per engine (default: best of 3)")
    parser.add_argument("--repeat", type=int, default=0, help="rounds per engine (overrides --quick)")
    parser.add_argument("--models", default="", help="comma-separated model names or entries (gpt2, swin-ts)")
    parser.add_argument("--board", action="store_true", help="rewrite notes/onnx_scoreboard.md even for --models")
    parser.add_argument("--no-board", action="store_true", help="never rewrite the scoreboard")
    parser.add_argument("--engines", default=",".join(ENGINES), help="engines to run (ours alone while iterating)")
    args = parser.parse_args(sys.argv[1:] if __name__ == "__main__" else [])
    for mod in ("torch", "onnxruntime"):
        try:
            __import__(mod)
        except ImportError:
            skip("bench_onnx_models", f"{mod} is not installed (pip install -e '.[models]', or make bench-models)")
            return
    logging.getLogger("onnxruntime.tools.symbolic_shape_infer").setLevel(logging.CRITICAL)
    names = [n for n in args.models.split(",") if n] or None
    failed = corpus.build(names, log=lambda line: print(line.splitlines()[0], flush=True))
    repeat = args.repeat or (1 if args.quick else 3)
    engines = tuple(e for e in ENGINES if e in args.engines.split(","))
    keys = corpus.available(names)
    if keys:  # untimed warm-up: each engine's first call imports and initialises its modules
        for name, fn in _engines(corpus.load(keys[0], strip=True)[0]).items():
            if name not in engines:
                continue
            with contextlib.suppress(Exception):
                fn()
    runs = []
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for key in keys:
        run = run_model(key, repeat, engines)
        runs.append(run)
        fails = "; ".join(f"{e} failed: {m}" for e, m in run.failures.items())
        timings = ", ".join(f"{e} {fmt_seconds(t)}" for e, t in run.times.items())
        print(f"{key}: {timings}" + (f" ({fails})" if fails else ""), flush=True)
    header, rows, t_header, t_rows = tables(runs)
    print()
    print_table(f"ONNX shapes per model: correct dims (dynamic), wrong, CPU best of {repeat}", header, rows)
    print_table(f"ONNX shapes, totals ({started}, load average {load_average()}, {build_kind()})", t_header, t_rows)
    fam = family_table(runs)
    print_table("ONNX shapes by family", *fam)
    for key, why in sorted(failed.items()):
        print(f"- corpus: {key} not built: {why.splitlines()[0][:200]}")
    if (
        (names is None and __name__ == "__main__" and engines == ENGINES) or args.board
    ) and not args.no_board:  # not from `python -m bench`
        from bench.onnx_corpus_board import write_board

        path = write_board(
            runs, failed, (header, rows), (t_header, t_rows), fam, started, f"{load_average()}, {build_kind()}", repeat
        )
        print(f"\nscoreboard written to {path}")


if __name__ == "__main__":
    main()
