"""The replay corpus of bench/bench_dims_queries.py answers as it always did (a golden file).

``tests/data/dims/query_corpus.json`` holds the 56 scenarios of the benchmark's corpus (fixed seed)
with the answer to every query, as the simplifier gave them before the speed work of this
session: a canonical text for ``simplify``, ``[lo, hi]`` for ``bound``, and True/False/None for
the relations. Speeding up the queries must not change one of them, whether the questions come as
terms or as text, on cold caches or warm ones, and whichever order the scenarios come in.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from exprgraph.dims import DimEnv, clear_caches, parse_expression, unparse

CORPUS = json.loads((Path(__file__).parents[1] / "data" / "dims" / "query_corpus.json").read_text())


def _ask(env: DimEnv, kind: str, args: tuple) -> Any:
    """The answer as the golden file writes it (text for terms, "inf" for an open bound)."""
    out = env.ask(kind, *args)
    if kind == "simplify":
        return out if isinstance(out, int | str) else unparse(out)
    if kind == "bound":
        lo, hi = out
        return [lo if lo.__class__ is int else "-inf", hi if hi.__class__ is int else "inf"]
    return out


def _ranges(scenario: dict) -> dict[str, tuple[int, int | None]]:
    return {name: (lo, hi) for name, (lo, hi) in scenario["ranges"].items()}


def _replay(scenarios: list[dict]) -> list[tuple[str, str, list, Any, Any]]:
    """(scenario, kind, args, got, want) of every query whose answer differs from the golden one."""
    wrong = []
    for scenario in scenarios:
        env = DimEnv(_ranges(scenario))
        for kind, args, want in scenario["queries"]:
            got = _ask(env, kind, tuple(parse_expression(a) for a in args))
            if got != want:
                wrong.append((scenario["name"], kind, args, got, want))
    return wrong


def test_the_corpus_is_the_benchmarks() -> None:
    bench = pytest.importorskip("bench.bench_dims_queries")
    corpus = bench.make_corpus()
    assert [(name, [(k, list(a)) for k, a in qs]) for name, _, qs in corpus] == [
        (sc["name"], [(k, a) for k, a, _ in sc["queries"]]) for sc in CORPUS
    ]


def test_cold_answers_are_the_golden_ones() -> None:
    clear_caches()
    assert _replay(CORPUS) == []


def test_warm_and_reordered_answers_are_the_golden_ones() -> None:
    # caches filled by other scenarios (environments with equal ranges share their state) and the
    # scenarios in reverse order: the answers stay the same
    assert _replay(CORPUS[::-1]) == []
    assert _replay(CORPUS) == []


def test_text_questions_get_the_same_answers() -> None:
    """The same queries asked with text sides (read straight into polynomials) where the API takes text."""
    clear_caches()
    wrong = []
    for scenario in CORPUS:
        env = DimEnv(_ranges(scenario))
        for kind, args, want in scenario["queries"]:
            if kind == "bound":
                lo, hi = env.bound(args[0])
                got: Any = [lo if not math.isinf(lo) else "-inf", hi if not math.isinf(hi) else "inf"]
            elif kind in ("ge", "gt"):
                got = env.statically_known(f"{args[0]} {'>=' if kind == 'ge' else '>'} {args[1]}")
            elif kind == "eq":
                got = env.equal(args[0], args[1])
            elif kind == "divisible":
                got = env.divisible(args[0], args[1])
            else:
                continue  # simplify of text answers text: compared through terms above
            if got != want:
                wrong.append((scenario["name"], kind, args, got, want))
    assert wrong == []
