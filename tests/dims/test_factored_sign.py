"""Signs decided by factors (``exprgraph.dims.relations.factored_range``, ``exprgraph.poly.p_root_factors``).

When the ranges of a difference leave its sign open, its linear factors ``x - e`` at an end ``e`` of an atom's range
are taken out and the sign is read from the factors' ranges. Brute force over small finite ranges checks every answer
(a wrong one is the worst bug); the examples are torch's questions that only the factors decide.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exprgraph.core.op import get_op
from exprgraph.dims import DimEnv, dim_name, parse_expression
from exprgraph.dims.intervals import term_interval
from exprgraph.dims.relations import quick_factored
from exprgraph.interop.torch import TorchDims
from exprgraph.poly import ONE, p_add, p_mul, p_pow, p_root_factors

NAMES = ("x", "y", "z")
OPS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}
CHECK = {"lt": lambda v: v < 0, "le": lambda v: v <= 0, "gt": lambda v: v > 0, "ge": lambda v: v >= 0}


def _text(p: dict[Any, int]) -> str:
    """A polynomial over the names as dimension text."""
    parts = []
    for m, c in p.items():
        factors = [str(c)] + [a.name for a, k in m for _ in range(k)]
        parts.append("*".join(factors))
    return " + ".join(parts) if parts else "0"


def _value(p: dict[Any, int], point: dict[str, int]) -> int:
    total = 0
    for m, c in p.items():
        v = c
        for a, k in m:
            v *= point[a.name] ** k
        total += v
    return total


def _mono(powers: tuple[int, ...]) -> Any:
    items = [(dim_name(n), k) for n, k in zip(NAMES, powers, strict=True) if k]
    return tuple(sorted(items, key=lambda ak: id(ak[0])))


_monos = st.tuples(*(st.integers(0, 2) for _ in NAMES)).map(_mono)
_polys = st.dictionaries(_monos, st.integers(-4, 4).filter(bool), min_size=1, max_size=4)
_ranges = st.fixed_dictionaries(
    {n: st.tuples(st.integers(-3, 4), st.integers(0, 4)).map(lambda r: (r[0], r[0] + r[1])) for n in NAMES}
)


@st.composite
def factored_cases(draw: Any) -> tuple[dict[Any, int], dict[str, tuple[int, int]], str]:
    """A difference with a factor ``(x - e)**k``, ``e`` an end of x's range (what factored_range takes out),
    plus sometimes a constant that spoils it; the ranges; a relation to 0."""
    ranges = draw(_ranges)
    name = draw(st.sampled_from(NAMES))
    end = draw(st.sampled_from(ranges[name]))
    factor = {((dim_name(name), 1),): 1, **({ONE: -end} if end else {})}
    d = p_mul(p_pow(factor, draw(st.integers(1, 2))), draw(_polys))
    d = p_add(d, {ONE: draw(st.sampled_from([0, 0, 0, 1, -1]))})
    return d, ranges, draw(st.sampled_from(sorted(OPS)))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(factored_cases())
def test_answers_hold_at_every_point(case: tuple[dict[Any, int], dict[str, tuple[int, int]], str]) -> None:
    d, ranges, op = case
    answer = DimEnv(ranges).statically_known(f"{_text(d)} {OPS[op]} 0")
    if answer is None:
        return
    for point in itertools.product(*(range(ranges[n][0], ranges[n][1] + 1) for n in NAMES)):
        value = _value(d, dict(zip(NAMES, point, strict=True)))
        assert CHECK[op](value) == answer, (op, _text(d), ranges, point, value)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(factored_cases())
def test_quick_answers_hold_at_every_point(case: tuple[dict[Any, int], dict[str, tuple[int, int]], str]) -> None:
    # torch's quick path: the factors of a - b over the nodes the intervals bound, no DimEnv
    d, ranges, op = case
    left, right = parse_expression(_text(d)), parse_expression("0")
    memo: dict = {}
    bits: dict = {}
    for side in (left, right):
        term_interval(side, lambda n: ranges[n], memo, bits)
    answer = quick_factored(op, left, right, memo)
    if answer is None:
        return
    for point in itertools.product(*(range(ranges[n][0], ranges[n][1] + 1) for n in NAMES)):
        value = _value(d, dict(zip(NAMES, point, strict=True)))
        assert CHECK[op](value) == answer, (op, _text(d), ranges, point, value)


@settings(max_examples=300, deadline=None)
@given(_polys, _ranges, st.data())
def test_root_factors_multiply_back(q: dict[Any, int], ranges: dict[str, tuple[int, int]], data: Any) -> None:
    name = data.draw(st.sampled_from(NAMES))
    root = data.draw(st.integers(-3, 4))
    factor = {((dim_name(name), 1),): 1, **({ONE: -root} if root else {})}
    p = p_mul(factor, q)
    roots = {dim_name(n): [*r, root] for n, r in ranges.items()}
    found, rest = p_root_factors(p, roots)
    product = rest
    for atom, r, k in found:
        product = p_mul(product, p_pow({((atom, 1),): 1, **({ONE: -r} if r else {})}, k))
    assert product == p
    assert any(a is dim_name(name) and r == root for a, r, _ in found)  # p vanishes at name == root


def test_torch_question_decided_by_its_factors() -> None:
    # resnet+train: s*k**2 + 2*s*k + 3 < 3*s + 3*k with k = (c - 1)//32 >= 1 and s in [2, 15]; the difference
    # is (k - 1)*(s*(k + 3) - 3) >= 0, so the relation never holds
    env = DimEnv({"s": (2, 15), "c": (33, None)})
    k = "((c - 1)//32)"
    assert env.statically_known(f"3 + s*{k}*{k} + 2*s*{k} < 3*s + 3*{k}") is False
    assert env.statically_known(f"3 + s*{k}*{k} + 2*s*{k} >= 3*s + 3*{k}") is True
    assert env.compare(f"3 + s*{k}*{k} + 2*s*{k}", f"3*s + 3*{k}") == ">="


def test_torch_asks_it_without_a_dim_env() -> None:
    td = TorchDims({"s": (2, 15), "c": (33, None)})
    k = "((c - 1)//32)"
    left, right = td.term_of_text(f"3 + s*{k}*{k} + 2*s*{k}"), td.term_of_text(f"3*s + 3*{k}")
    assert td.evaluate(get_op("lt")(left, right)) is False
    assert td.evaluate(get_op("ge")(left, right)) is True
    assert td._env is None  # the intervals and the factors answered: no DimEnv made


def test_two_names_decided_by_a_factor_at_a_range_end() -> None:
    # x*x*y - 3*x - 4*y + 6 == (x - 2)*(x*y + 2*y - 3): >= 0 for x >= 2, y >= 2 (the terms' ranges alone: open)
    env = DimEnv({"x": (2, None), "y": (2, 15)})
    assert env.statically_known("x*x*y - 3*x - 4*y + 6 >= 0") is True
    assert env.statically_known("x*x*y - 3*x - 4*y + 6 < 0") is False
    assert env.statically_known("x*x*y - 3*x - 4*y + 6 > 0") is None  # 0 at x == 2


def test_no_factor_at_the_ends_stays_undecided() -> None:
    # x*x - 5*x + 6 == (x - 2)*(x - 3) is 0 at 2 and 3 and > 0 elsewhere; no end of [0, 10] is a root: None
    env = DimEnv({"x": (0, 10)})
    assert env.statically_known("x*x - 5*x + 6 >= 0") is None
