"""The shortcuts of the queries: max/min arguments dropped by their ranges give the answers that the values give."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.core.term import Term
from exprgraph.dims import DimEnv, clear_caches, dim_name, evaluate_expression, parse_expression, unparse
from exprgraph.dims.ranges import INF


def test_arguments_dropped_by_their_ranges() -> None:
    """max/min keep an argument unless another is always at least (at most) as large."""
    clear_caches()
    env = DimEnv({"a": (10, 20), "b": (0, 5), "c": (0, 30)})
    assert env.simplify("Max(a, b)") == "a" and env.simplify("Min(a, b)") == "b"
    assert env.simplify("Max(a, c)") == "a^c"  # the ranges overlap: both stay
    assert env.simplify("Max(a + b, b + 9)") == "a+b"  # a common term: the difference a - 9 >= 1
    assert env.simplify("Min(a + c, c + 21)") == "a+c"
    assert env.simplify("Max(a, b, c, 3)") == "a^c"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", ""]), st.integers(-3, 12)), min_size=2, max_size=5))
def test_max_and_min_keep_their_values(args: list[tuple[str, int]]) -> None:
    """At every point of small ranges, a simplified max/min of ``name + k`` arguments keeps its value."""
    ranges = {"a": (4, 6), "b": (0, 2), "c": (5, 5)}
    env = DimEnv(ranges)
    texts = [f"{name} + {k}" if name else str(k) for name, k in args]
    for fn, pick in (("Max", max), ("Min", min)):
        simplified = env.simplify(f"{fn}({', '.join(texts)})")
        for a, b, c in itertools.product(*(range(lo, hi + 1) for lo, hi in ranges.values())):
            point = {"a": a, "b": b, "c": c}
            want = pick((point[name] if name else 0) + k for name, k in args)
            got = simplified if isinstance(simplified, int) else evaluate_expression(simplified, point)
            assert got == want, (fn, texts, simplified, point)


def test_deep_and_long_inputs() -> None:
    """10^5 nested negations and a sum of 10^5 names: walked, read and summed without recursion."""
    clear_caches()
    x = dim_name("x")
    term = x
    for _ in range(100_001):
        term = Term("neg", (term,))
    env = DimEnv({"x": (1, 9)})
    assert env.simplify(term) == -x
    assert env.statically_known(term < 0) is True
    names = [f"n{i}" for i in range(100_000)]
    total = parse_expression(" + ".join(names))
    assert env.bound(total) == (0, INF)
    assert env.equal(total, " + ".join(reversed(names))) is True


def test_sums_read_without_a_walk_fall_back_when_they_must() -> None:
    """A sum over names is read at once; shared sub-sums and terms to normalise first go the long way."""
    clear_caches()
    a, b = dim_name("a"), dim_name("b")
    x = Term("add", (a, b))
    doubled = x
    for _ in range(200):  # 2**200 paths through shared sums: each must be read once
        doubled = Term("add", (doubled, doubled))
    env = DimEnv({"a": (1, 3), "b": (0, 2)})
    assert env.bound(Term("add", (x, x))) == (2, 10)
    assert env.bound(doubled) == (2**200, 5 * 2**200)
    divided = parse_expression("a + b - FloorDiv(a + b, 2) + 1")  # a division to normalise first
    assert unparse(env.simplify(divided)) == env.simplify("a + b - FloorDiv(a + b, 2) + 1") == "(1+a+b)//2+1"
    assert env.simplify("a + (b - a) - b") == 0
