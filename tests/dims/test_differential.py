"""Differential test: thousands of random expression texts, simplified, never change a value.

The texts (fixed seed) mix every operator, products of sums, torch's and sympy's functions, the
reference's calls and opaque functions. Each simplified text must have the original's value at
every point where the original is defined (names >= 0, as simplify_expression assumes), and a
DimEnv with signed ranges must keep the value at points of those ranges.
"""

from __future__ import annotations

import random

from exprgraph.dims import DimEnv, evaluate_expression, simplify_expression
from exprgraph.errors import EvaluationError

N_TEXTS = 4000
NAMES = ["a", "b", "c"]


def _opaque(*args: int) -> int:
    return (3 * sum(args) + 1) % 7


def _text(rng: random.Random, depth: int) -> str:
    if depth <= 0 or rng.random() < 0.25:
        return rng.choice(NAMES) if rng.random() < 0.6 else str(rng.choice([0, 1, 2, 3, 4, 7, 8, 16, -1, -3]))
    a, b = _text(rng, depth - 1), _text(rng, depth - 1)
    kind = rng.randrange(16)
    if kind < 6:
        return f"({a}){rng.choice(['+', '-', '*', '//', '%', '*'])}({b})"
    if kind == 6:
        return f"({a})^({b})"
    if kind == 7:
        return f"({a})&({b})"
    if kind == 8:
        return f"-({a})"
    if kind == 9:
        return f"{rng.choice(['FloorDiv', 'CleanDiv', 'CeilDiv', 'PythonMod', 'Mod', 'CeilToInt'])}({a}, {b})"
    if kind == 10:
        return f"ModularIndexing({a}, {b}, {_text(rng, depth - 1)})"
    if kind == 11:
        return f"{rng.choice(['floor', 'ceiling'])}(({a})/({b}))"
    if kind == 12:
        return f"f({a}, {b})"
    if kind == 13:
        return f"({a})*({b})*({_text(rng, depth - 1)})"
    if kind == 14:
        return f"Max({a}, {b}, {_text(rng, depth - 1)})"
    k = rng.choice([2, 3, 4])
    return f"({a})//{k} + ({a}+1)//{k}" if rng.random() < 0.5 else f"({a})//{k}*{k} + ({a})%{k}"


def _check(original: str, simplified, points: list[dict]) -> int:
    checked = 0
    for env in points:
        env = {**env, "f": _opaque}
        try:
            want = evaluate_expression(original, env)
        except EvaluationError:
            continue  # undefined here (a division by zero)
        assert evaluate_expression(simplified, env) == want, (original, simplified, env)
        checked += 1
    return checked


def test_random_texts_keep_their_values():
    rng = random.Random(16)
    points = [{n: rng.randint(0, 9) for n in NAMES} for _ in range(6)] + [{"a": 0, "b": 0, "c": 0}]
    signed_points = [{n: rng.randint(-6, 6) for n in NAMES} for _ in range(6)]
    signed = DimEnv({n: (-6, 6) for n in NAMES})
    checked = 0
    for _ in range(N_TEXTS):
        text = _text(rng, rng.randint(1, 4))
        checked += _check(text, simplify_expression(text), points)
        if rng.random() < 0.3:
            checked += _check(text, signed.simplify(text), signed_points)
    assert checked > N_TEXTS * 3
