"""Evaluating a 203-op expression over 10^6 points: exprgraph vs hand-written numpy (and numexpr).

The expression is a sum of 26 products of sin/exp/log over 10 symbols, written once as Python
(`formula`) against a namespace of functions: given exprgraph's builders and symbols it builds
the term; given numpy and arrays it *is* the hand-written numpy code (the same ufunc calls a person
would write, temporaries freed by reference counting); given a text namespace it writes the
numexpr string. Index choices come from a fixed seed and never repeat a sub-expression, so the
term has exactly 203 distinct non-leaf nodes and the numpy code does no redundant work.

Run: ``python -m bench.bench_evaluate``.
"""

from __future__ import annotations

import random
import types
from typing import Any

import numpy as np

import exprgraph as eg
from bench.common import best_of, fmt_bytes, fmt_seconds, peak_memory, print_table, ratio, skip
from exprgraph.eval import evaluate

N_SYMBOLS = 10
N_POINTS = 10**6
TARGET_OPS = 203


# -- the expression ---------------------------------------------------------------------------------


def term_a(x: Any, f: Any, i: int, j: int, k: int, m: int) -> Any:
    """sin(x_i*x_j) * exp(x_k - x_m) + log(x_j*x_k + 1): 9 ops."""
    return f.sin(x[i] * x[j]) * f.exp(x[k] - x[m]) + f.log(x[j] * x[k] + 1.0)


def term_b(x: Any, f: Any, i: int, j: int, k: int) -> Any:
    """x_i * exp(x_j*x_k) * sin(x_k + x_i): 6 ops."""
    return x[i] * f.exp(x[j] * x[k]) * f.sin(x[k] + x[i])


def term_c(x: Any, f: Any, i: int, j: int) -> Any:
    """log(1 + exp(x_i - x_j)), a softplus: 4 ops."""
    return f.log(1.0 + f.exp(x[i] - x[j]))


def make_plan(seed: int = 203) -> list[tuple]:
    """26 term specs (10 of a, 12 of b, 4 of c: 9*10 + 6*12 + 4*4 ops + 25 adds = 203), no repeats."""
    rng = random.Random(seed)
    used: set[tuple] = set()

    def fresh(*keys: tuple) -> bool:
        # a pair used twice by the same binary op would be one shared node
        if len(set(keys)) < len(keys) or any(k in used for k in keys):
            return False
        used.update(keys)
        return True

    kinds = ["a"] * 10 + ["b"] * 12 + ["c"] * 4
    rng.shuffle(kinds)
    plan: list[tuple] = []
    for kind in kinds:
        while True:
            idx = rng.sample(range(N_SYMBOLS), 4)
            i, j, k, m = idx
            if kind == "a" and fresh(("*", i, j), ("*", j, k), ("-", k, m)):
                plan.append(("a", i, j, k, m))
                break
            if kind == "b" and fresh(("*", j, k), ("+", k, i)):
                plan.append(("b", i, j, k))
                break
            if kind == "c" and fresh(("-", i, j)):
                plan.append(("c", i, j))
                break
    return plan


_TERMS = {"a": term_a, "b": term_b, "c": term_c}


def formula(x: Any, f: Any, plan: list[tuple]) -> Any:
    """The sum of the plan's terms, left to right."""
    total = None
    for kind, *idx in plan:
        term = _TERMS[kind](x, f, *idx)
        total = term if total is None else total + term
    return total


class _Text:
    """Builds numexpr source text with the same operators as terms and arrays."""

    def __init__(self, src: str) -> None:
        self.src = src

    def _bin(self, sym: str, other: Any, swap: bool = False) -> _Text:
        a, b = self.src, other.src if isinstance(other, _Text) else repr(other)
        return _Text(f"({b} {sym} {a})" if swap else f"({a} {sym} {b})")

    def __add__(self, o: Any) -> _Text:
        return self._bin("+", o)

    def __radd__(self, o: Any) -> _Text:
        return self._bin("+", o, swap=True)

    def __sub__(self, o: Any) -> _Text:
        return self._bin("-", o)

    def __mul__(self, o: Any) -> _Text:
        return self._bin("*", o)


TEXT = types.SimpleNamespace(**{name: (lambda a, n=name: _Text(f"{n}({a.src})")) for name in ("sin", "exp", "log")})


# -- the benchmark ----------------------------------------------------------------------------------


def build(plan: list[tuple]) -> tuple[eg.Term, list[eg.Term]]:
    """The term and its symbols."""
    xs = [eg.Symbol(f"x{i}") for i in range(N_SYMBOLS)]
    return formula(xs, eg, plan), xs


def count_ops(term: eg.Term) -> tuple[int, int]:
    """(distinct non-leaf nodes, non-leaf nodes of the expanded tree)."""
    distinct = sum(1 for n in eg.postorder(term) if n.args)
    tree: dict[eg.Term, int] = {}
    for n in eg.postorder(term):
        tree[n] = (1 + sum(tree[a] for a in n.args)) if n.args else 0
    return distinct, tree[term]


def main(n_points: int = N_POINTS, repeat: int = 7) -> None:
    """Time ours, hand numpy and numexpr on the same inputs; check they agree; print the table."""
    plan = make_plan()
    term, xs = build(plan)
    distinct, tree = count_ops(term)
    assert distinct == TARGET_OPS, f"expression has {distinct} ops, expected {TARGET_OPS}"
    assert tree == distinct, "the expression must share no sub-expression (numpy would recompute it)"

    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 1.5, n_points) for _ in range(N_SYMBOLS)]
    env = {x: a for x, a in zip(xs, arrays, strict=True)}

    def ours() -> Any:
        return evaluate(term, env)

    def hand() -> Any:
        return formula(arrays, np, plan)

    contenders = {"exprgraph": ours, "numpy by hand": hand}
    try:
        import numexpr

        source = formula([_Text(f"x{i}") for i in range(N_SYMBOLS)], TEXT, plan).src
        local = {f"x{i}": a for i, a in enumerate(arrays)}
        compiled = numexpr.NumExpr(source, signature=[(f"x{i}", np.float64) for i in range(N_SYMBOLS)])

        def with_numexpr() -> Any:
            return compiled(*arrays)

        np.testing.assert_allclose(numexpr.evaluate(source, local_dict=local), hand(), rtol=1e-12)
        contenders["numexpr"] = with_numexpr
        threads = numexpr.get_num_threads()
    except ImportError:
        numexpr = None
        threads = 0

    expected = hand()
    got = ours()
    assert got.dtype == np.float64 and got.shape == (n_points,)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    if numexpr is not None:
        np.testing.assert_allclose(contenders["numexpr"](), expected, rtol=1e-12)
    del got, expected

    times = best_of(contenders, repeat)
    peaks = {name: peak_memory(fn) for name, fn in contenders.items()}
    base_t, base_m = times["numpy by hand"], peaks["numpy by hand"]
    rows = []
    for name in contenders:
        label = f"numexpr ({threads} threads)" if name == "numexpr" else name
        rows.append(
            [
                label,
                fmt_seconds(times[name]),
                ratio(times[name], base_t),
                fmt_bytes(peaks[name]),
                ratio(peaks[name], base_m),
            ]
        )
    print_table(
        f"evaluate a {distinct}-op expression over {n_points:,} points (best of {repeat}; targets: "
        "time <= 1.2x, peak memory <= 2x numpy by hand)",
        ["contender", "time", "time / hand numpy", "peak memory", "memory / hand numpy"],
        rows,
    )
    if numexpr is None:
        skip("numexpr", "not installed")


if __name__ == "__main__":
    main()
