"""The dims shortcuts against their general twins (listed in ``exprgraph.twins``): what each one saves.

- *fast reader*: ``polyparse.read_polynomial(text)`` against ``to_poly(parse_expression(text))``,
  the parse then the walk, on the expressions of the dimension reference table;
- *switched shortcuts*: each shortcut with a switch (a module attribute that makes it decline, so
  the general path runs) timed on and off, on two workloads: the canonical term of every
  expression of the reference table and of the simplify queries of the query replay corpus
  (``simplify``), and the answers of the whole replay corpus of ``bench_dims_queries``
  (``queries``, the expressions parsed beforehand).

Each round starts cold (``exprgraph.dims.clear_caches()``), thread CPU time, best of 7, the two
sides interleaved; both sides' answers are checked equal first. A shortcut stays when it gains
(shortcut/twin below 0.95 on a workload, and no loss on the other). On 2026-11-29 (compiled, medians
of 6 runs) four were measured: ``regions._quick`` (0.78x simplify, 0.86x queries) and
``combine.may_combine`` (0.88x, 0.92x) stayed; ``relations.decided_by_range`` (0.97x, 1.00x: the
simplify workload never calls it, so that column is the noise) and ``Context._nonnegative_product``
(0.98x, 1.00x) went, as did the flat-sum printer ``polyparse.read_value`` (0.97x). Run:
``python -m bench.bench_dims_shortcuts``.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from exprgraph.dims import (
    DimEnv,
    clear_caches,
    combine,
    compiled_modules,
    parse_expression,
    regions,
    simplify_term,
)
from exprgraph.dims.canonicalize import to_poly
from exprgraph.dims.context import context
from exprgraph.dims.polyparse import read_polynomial
from exprgraph.errors import DimExpressionError

from .bench_dims_queries import make_corpus
from .common import best_of, fmt_seconds, print_table, ratio

_TABLE = Path(__file__).resolve().parent.parent / "tests" / "data" / "dims" / "reference_cases.tsv"

#: (shortcut, its module, the switch attribute, what runs when it is off)
SWITCHES: tuple[tuple[str, Any, str, str], ...] = (
    ("regions._quick", regions, "QUICK_PATH", "the walk"),
    ("combine.may_combine", combine, "COMBINE_CHECK", "the rules on every sum"),
)


def texts() -> list[str]:
    """The single-expression inputs of the reference table that parse."""
    out = []
    with _TABLE.open(newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            args = json.loads(row["input"])
            if row["function"] == "simplify_expression" and len(args) == 1 and isinstance(args[0], str):
                out.append(args[0])
    return [t for t in out if _parses(t)]


def _parses(text: str) -> bool:
    try:
        parse_expression(text)
    except DimExpressionError:
        return False
    return True


def fast_texts() -> list[str]:
    """The reference inputs the fast reader takes."""
    return [t for t in texts() if read_polynomial(t, context(False)) is not None]


def _simplify_workload() -> Callable[[], list[Any]]:
    terms = [parse_expression(t) for t in texts()]
    for _, _, qs in make_corpus():
        terms += [parse_expression(args[0]) for kind, args in qs if kind == "simplify"]
    return lambda: [simplify_term(t) for t in terms]


def _queries_workload() -> Callable[[], list[Any]]:
    prepared = [
        (ranges, [(kind, tuple(parse_expression(a) for a in args)) for kind, args in qs])
        for _, ranges, qs in make_corpus()
    ]

    def run() -> list[Any]:
        answers = []
        for ranges, qs in prepared:
            env = DimEnv(ranges)
            answers += [env.ask(kind, *args) for kind, args in qs]
        return answers

    return run


@contextmanager
def switched_off(module: Any, attr: str) -> Iterator[None]:
    """The general path: ``module.attr`` False while the block runs."""
    setattr(module, attr, False)
    try:
        yield
    finally:
        setattr(module, attr, True)


def _off(module: Any, attr: str, fn: Callable[[], list[Any]]) -> Callable[[], list[Any]]:
    def run() -> list[Any]:
        with switched_off(module, attr):
            return fn()

    return run


def _cold(fn: Callable[[], list[Any]]) -> list[Any]:
    clear_caches()
    return fn()


def reader_row() -> list[Any]:
    """The fast reader against parse then walk."""
    items = fast_texts()
    ctx = context(False)
    for t in items:  # the same answers, else the timing says nothing
        clear_caches()
        fast = read_polynomial(t, ctx)
        clear_caches()
        assert fast == to_poly(parse_expression(t), ctx), t
    sides = {
        "fast": lambda: [read_polynomial(t, ctx) for t in items],
        "twin": lambda: [to_poly(parse_expression(t), ctx) for t in items],
    }
    times = best_of(sides, repeat=7, setup=dict.fromkeys(sides, clear_caches), clock=time.thread_time)
    fast, twin = times["fast"], times["twin"]
    row = ["polyparse.read_polynomial", "parse_expression + to_poly", "reference table"]
    return [*row, fmt_seconds(fast), fmt_seconds(twin), ratio(fast, twin)]


def switch_rows() -> list[list[Any]]:
    """Each switched shortcut on and off, on both workloads."""
    workloads = {"simplify": _simplify_workload(), "queries": _queries_workload()}
    rows = []
    for name, module, attr, twin in SWITCHES:
        for label, fn in workloads.items():
            off = _off(module, attr, fn)
            assert _cold(fn) == _cold(off), (name, label)
            sides = {"on": fn, "off": off}
            times = best_of(sides, repeat=7, setup=dict.fromkeys(sides, clear_caches), clock=time.thread_time)
            on_t, off_t = times["on"], times["off"]
            rows.append(
                [name, f"{attr}=False: {twin}", label, fmt_seconds(on_t), fmt_seconds(off_t), ratio(on_t, off_t)]
            )
    return rows


def main() -> None:
    """Print the table: each shortcut, its twin, their CPU times and the ratio."""
    rows = [reader_row(), *switch_rows()]
    build = "compiled" if compiled_modules() else "pure Python"
    title = f"dims shortcuts against their twins (cold caches, thread CPU, best of 7, dims {build})"
    print_table(title, ["shortcut", "twin", "workload", "shortcut CPU", "twin CPU", "shortcut/twin"], rows)


if __name__ == "__main__":
    main()
