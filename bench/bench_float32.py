"""float32 against float64: the 203-op expression of ``bench_compile`` over 10^6 points, in both precisions.

The same ``formula`` builds the term over float64 symbols and over float32 symbols (its Python
numbers are weak, so the float32 term is float32 throughout). Contenders, on the same inputs
rounded to float32: our C, LLVM and numpy backends on the float32 term, the C backend on the
float64 term, hand-written numpy on float32 arrays (anchor) and numexpr on float32 arrays (anchor;
numexpr's literals are doubles, so it computes this expression in float64). Each float32 result
is checked against float64 numpy on the same inputs (relative error ~1e-6).

Run: ``python -m bench.bench_float32``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import exprgraph as eg
from bench.bench_evaluate import N_POINTS, N_SYMBOLS, TEXT, _Text, build, formula, make_plan
from bench.common import best_of, fmt_seconds, print_table, ratio, skip
from exprgraph.compile import CompileError
from exprgraph.compile import compile as compile_terms


def main(n_points: int = N_POINTS, repeat: int = 5) -> None:
    """Time the backends in float32 and float64 and the float32 anchors, interleaved; print the table."""
    plan = make_plan()
    term64, xs64 = build(plan)
    xs32 = [eg.Symbol(f"x{i}", "float32") for i in range(N_SYMBOLS)]
    term32 = formula(xs32, eg, plan)
    assert {t.dtype for t in eg.postorder(term32)} == {"float32"}
    rng = np.random.default_rng(0)
    singles = [rng.uniform(0.5, 1.5, n_points).astype(np.float32) for _ in range(N_SYMBOLS)]
    doubles = [a.astype(np.float64) for a in singles]

    contenders: dict[str, Any] = {"numpy by hand, float32": lambda: formula(singles, np, plan)}
    for backend in ("c", "llvm", "numpy"):
        try:
            fn32 = compile_terms(term32, xs32, backend=backend)
            contenders[f"{backend} backend, float32"] = lambda fn=fn32: fn(*singles)
            if backend == "c":
                fn64 = compile_terms(term64, xs64, backend="c")
                contenders["c backend, float64"] = lambda fn=fn64: fn(*doubles)
        except CompileError as exc:
            skip(f"{backend} backend", str(exc))
    try:
        import numexpr

        source = formula([_Text(f"x{i}") for i in range(N_SYMBOLS)], TEXT, plan).src
        ne = numexpr.NumExpr(
            source, signature=[(f"x{i}", float) for i in range(N_SYMBOLS)]
        )  # numexpr: float is float32
        contenders["numexpr, float32 inputs"] = lambda: ne(*singles)  # its double constants make it compute in float64
    except ImportError:
        skip("numexpr", "not installed")

    exact = formula(doubles, np, plan)
    errors = {}
    for name, fn in contenders.items():
        out = fn()
        worst = float(np.max(np.abs(out - exact) / np.abs(exact)))
        assert worst < (1e-12 if "float64" in name else 1e-5), (name, worst)
        errors[name] = f"{worst:.1e}"
    del exact

    times = best_of(contenders, repeat)
    hand = times["numpy by hand, float32"]
    numexpr_time = times.get("numexpr, float32 inputs")
    rows = [
        [
            name,
            fmt_seconds(t),
            ratio(t, hand),
            ratio(t, numexpr_time) if numexpr_time else "n/a",
            errors[name],
        ]
        for name, t in times.items()
    ]
    print_table(
        f"203-op expression over {n_points:,} points, float32 and float64, best of {repeat}",
        ["contender", "time", "/ numpy by hand (f32)", "/ numexpr (f32)", "max rel. error vs float64"],
        rows,
    )


if __name__ == "__main__":
    main()
