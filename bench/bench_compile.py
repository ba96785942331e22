"""Compiled evaluation of the 203-op expression over 10^6 points: both backends vs numpy by hand and numexpr.

The expression and the hand-written numpy code come from ``bench/bench_evaluate.py`` (the same
``formula`` builds the term, runs as numpy, and writes the numexpr string). Contenders:

- ``compile(term, xs)`` (numpy backend) against the hand-written numpy code (target <= 1.1x);
- ``compile(term, xs, backend="c")`` against numexpr (target: at least 1.5x faster, <= 0.67x);
- ``exprgraph.evaluate`` for reference.

Compile times are reported too: the numpy source generation, a C build into an empty cache, and
loading the same library from the disk cache. Interleaved rounds, best of N.

Run: ``python -m bench.bench_compile``.
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any

import numpy as np

from bench.bench_evaluate import N_POINTS, N_SYMBOLS, TEXT, _Text, build, formula, make_plan
from bench.common import best_of, fmt_seconds, print_table, ratio, skip
from exprgraph.compile import CompileError, cbuild
from exprgraph.compile import compile as compile_terms
from exprgraph.eval import evaluate


def _timed(fn: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main(n_points: int = N_POINTS, repeat: int = 5) -> None:
    """Time the backends and the anchors on the same inputs, check they agree, print the tables."""
    plan = make_plan()
    term, xs = build(plan)
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 1.5, n_points) for _ in range(N_SYMBOLS)]

    fn_np, t_gen = _timed(lambda: compile_terms(term, xs))
    compile_rows = [["numpy backend: generate + compile source", fmt_seconds(t_gen)]]
    contenders: dict[str, Any] = {
        "numpy backend": lambda: fn_np(*arrays),
        "numpy by hand": lambda: formula(arrays, np, plan),
        "evaluate": lambda: evaluate(term, dict(zip(xs, arrays, strict=True))),
    }
    fn_c = None
    saved = os.environ.get("EXPRGRAPH_CACHE")
    try:
        with tempfile.TemporaryDirectory() as fresh:
            os.environ["EXPRGRAPH_CACHE"] = fresh
            cbuild._loaded.clear()
            fn_c, t_build = _timed(lambda: compile_terms(term, xs, backend="c"))
            cbuild._loaded.clear()
            _, t_load = _timed(lambda: compile_terms(term, xs, backend="c"))
        compile_rows += [
            ["C backend: build into an empty cache", fmt_seconds(t_build)],
            ["C backend: load from the disk cache", fmt_seconds(t_load)],
        ]
        contenders["C backend"] = lambda: fn_c(*arrays)
    except CompileError as exc:
        skip("C backend", str(exc))
    finally:
        if saved is None:
            os.environ.pop("EXPRGRAPH_CACHE", None)
        else:
            os.environ["EXPRGRAPH_CACHE"] = saved
    threads = 0
    try:
        import numexpr

        source = formula([_Text(f"x{i}") for i in range(N_SYMBOLS)], TEXT, plan).src
        ne = numexpr.NumExpr(source, signature=[(f"x{i}", np.float64) for i in range(N_SYMBOLS)])
        contenders["numexpr"] = lambda: ne(*arrays)
        threads = numexpr.get_num_threads()
    except ImportError:
        skip("numexpr", "not installed")

    expected = formula(arrays, np, plan)
    for name, fn in contenders.items():
        np.testing.assert_allclose(fn(), expected, rtol=1e-12, atol=0, err_msg=name)
    del expected

    times = best_of(contenders, repeat)
    hand = times["numpy by hand"]
    rows = []
    for name, t in times.items():
        label = f"numexpr ({threads} threads)" if name == "numexpr" else name
        rows.append(
            [label, fmt_seconds(t), ratio(t, hand), ratio(t, times["numexpr"]) if "numexpr" in times else "n/a"]
        )
    print_table(
        f"203-op expression over {n_points:,} points, best of {repeat} (targets: numpy backend <= 1.1x numpy by "
        "hand; C backend <= 0.67x numexpr)",
        ["contender", "time", "/ numpy by hand", "/ numexpr"],
        rows,
    )
    print_table("compile times", ["step", "time"], compile_rows)


if __name__ == "__main__":
    main()
