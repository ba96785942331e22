"""The dims shortcuts against their general twins (listed in ``exprgraph.twins``): what each one saves.

- *fast reader*: ``polyparse.read_polynomial(text)`` against ``to_poly(parse_expression(text))``,
  the parse then the walk, on the expressions of the dimension reference table;
- *flat-sum printer*: ``polyparse.read_value(text)`` against printing the polynomial the fast
  reader gives (``polyprint.poly_value``).

Each round starts cold (``exprgraph.dims.clear_caches()``), thread CPU time, best of 7, the two
sides interleaved; both sides' answers are checked equal first. Run:
``python -m bench.bench_dims_shortcuts``.
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

from exprgraph.dims import clear_caches, compiled_modules, parse_expression
from exprgraph.dims.canonicalize import to_poly
from exprgraph.dims.context import context
from exprgraph.dims.polyparse import read_polynomial, read_value
from exprgraph.dims.polyprint import poly_value

from .common import best_of, fmt_seconds, print_table, ratio

_TABLE = Path(__file__).resolve().parent.parent / "tests" / "data" / "dims" / "reference_cases.tsv"


def texts() -> list[str]:
    """The single-expression inputs of the reference table that the fast reader takes."""
    out = []
    with _TABLE.open(newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            args = json.loads(row["input"])
            if row["function"] == "simplify_expression" and len(args) == 1 and isinstance(args[0], str):
                out.append(args[0])
    return [t for t in out if read_polynomial(t, context(False)) is not None]


def main() -> None:
    """Print the table: each shortcut, its twin, their CPU times and the ratio."""
    items = texts()
    for t in items:  # the same answers, else the timing says nothing
        clear_caches()
        fast = read_polynomial(t, context(False))
        clear_caches()
        assert fast == to_poly(parse_expression(t), context(False)), t
    sides = {
        "fast reader": lambda: [read_polynomial(t, context(False)) for t in items],
        "parse then walk": lambda: [to_poly(parse_expression(t), context(False)) for t in items],
        "flat-sum printer": lambda: [read_value(t, context(False)) for t in items],
        "read then print": lambda: [poly_value(read_polynomial(t, context(False))) for t in items],
    }
    setup = dict.fromkeys(sides, clear_caches)
    times = best_of(sides, repeat=7, setup=setup, clock=time.thread_time)
    pairs = [
        ("polyparse.read_polynomial", "parse_expression + to_poly", "fast reader", "parse then walk"),
        ("polyparse.read_value", "poly_value(read_polynomial)", "flat-sum printer", "read then print"),
    ]
    rows = [
        [name, twin, len(items), fmt_seconds(times[a]), fmt_seconds(times[b]), ratio(times[a], times[b])]
        for name, twin, a, b in pairs
    ]
    build = "compiled" if compiled_modules() else "pure Python"
    title = f"dims shortcuts against their twins (cold caches, thread CPU, best of 7, dims {build})"
    print_table(title, ["shortcut", "twin", "expressions", "shortcut CPU", "twin CPU", "shortcut/twin"], rows)


if __name__ == "__main__":
    main()
