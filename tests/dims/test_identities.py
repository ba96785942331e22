"""Integer identities (issue 16, item 2; issue 19: merged quotients), each proven on every value of a box.

Each identity row is checked twice: the identity itself (its two sides evaluated at every point, with
negative values too: the identities hold for every integer), and the simplifier applying it (the
expected text, and the result equal to the input at every point, names negative too). Two tables:
``IDENTITIES`` gives the simplifier's text for names >= 0, ``MERGED`` for any integer names.

The merged quotients of issue 19:

- ``k*(y//k) + y%k -> y`` and ``y - k*(y//k) -> y%k`` also when ``y//k`` was merged (``y = w//4``,
  ``k = 5``: ``y//k`` is ``w//20``);
- ``s % q -> s - j*q`` when ``s`` as written, or with coefficients nearest 0, stays in
  ``[j*q, j*q + q)`` (dims reduces coefficients into ``[0, q)`` first, which can span two periods).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.dims import DimEnv, evaluate_expression, parse_expression_tokens, simplify_expression
from exprgraph.errors import EvaluationError

SIGNED = range(-12, 13)
ANY = DimEnv(default=(None, None))  # every name any integer


def _points(names: list[str], values: range) -> list[dict[str, int]]:
    n = len(names)
    vals = values if n <= 2 else range(values.start // 2, values.stop // 2)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(vals, repeat=n)]


def _same(a: str, b: str, values: range = SIGNED) -> None:
    names = sorted(parse_expression_tokens(a) | parse_expression_tokens(b))
    checked = 0
    for env in _points(names, values):
        try:
            want = evaluate_expression(a, env)
        except EvaluationError:
            continue  # a division by zero: undefined here
        assert evaluate_expression(b, env) == want, (a, b, env)
        checked += 1
    assert checked


def _agrees(text: str, got: str, points: list[dict[str, int]]) -> None:
    for env in points:
        assert evaluate_expression(got, env) == evaluate_expression(text, env), (text, got, env)


def _applies(text: str, want: str, simplify: Callable[[str], object], env: DimEnv, values: range) -> None:
    """``simplify(text)`` is ``want``, and ``env`` simplifies ``text`` to its value on the box of ``values``."""
    assert simplify(text) == want
    names = sorted(parse_expression_tokens(text))
    points = [p for p in _points(names, values) if p.get("k", 1) >= 1]  # k is a divisor: at least 1
    _agrees(text, env.simplify(text), points)


# (input, what the simplifier gives for names >= 0, the algebra)
IDENTITIES = [
    # Hermite's identity: sum_{r=0}^{k-1} (x+r)//k == x
    ("a//2 + (a+1)//2", "a", "x//2 + (x+1)//2 == x"),
    ("x//3 + (x+1)//3 + (x+2)//3", "x", "x//3 + (x+1)//3 + (x+2)//3 == x"),
    ("x//4 + (x+1)//4 + (x+2)//4 + (x+3)//4", "x", "k = 4"),
    # with constant offsets: (x+c+r)//k summed over r == x + c
    ("(x+5)//3 + (x+3)//3 + (x+4)//3", "x+3", "(x+3)//3 + (x+4)//3 + (x+5)//3 == x + 3"),
    ("(s0+s1)//2 + (s0+s1+1)//2", "s0+s1", "a sum as x"),
    ("(s0-s1)//2 + (s0-s1+1)//2", "s0-s1", "x with a negative coefficient"),
    ("3*y*(x//2) + 3*y*((x+1)//2)", "3*x*y", "times a common factor"),
    # real Split shapes: CeilToInt(n, 2) == (n+1)//2
    ("CeilToInt(b+c, 2) + (b+c)//2", "b+c", "CeilToInt(n, 2) + n//2 == n"),
    ("CeilDiv(s0, 3) + (s0+1)//3 + s0//3", "s0", "CeilDiv(n, 3) == (n+2)//3"),
    # x//2 + x%2 == (x+1)//2: x%2 == x - 2*(x//2), then x - x//2 == (x+1)//2 (Hermite, k = 2)
    ("s0//2 + s0%2", "(1+s0)//2", "x//2 + x%2 == (x+1)//2"),
    ("x - x//2", "(1+x)//2", "x - x//2 == (x+1)//2"),
    ("(s0+s1)//2 + (s0+s1)%2", "(1+s0+s1)//2", "a sum as x"),
    # (x//k)*k + x%k == x when x has a negative coefficient: x%k is written (x mod k)%k
    ("(s0 - s1)//4*4 + (s0 - s1)%4", "s0-s1", "x == k*(x//k) + x%k"),
    ("(x//k)*k + x%k", "x", "a symbolic k"),
    ("(2*a - 3*b)//5*5 + (2*a - 3*b)%5", "2*a-3*b", "any integer coefficients"),
    ("(s0 - s1) - (s0 - s1)//4*4", "(s0+3*s1)%4", "x - k*(x//k) == x%k"),
]


# (input, canonical form for any integer names, the algebra)
MERGED = [
    ("(w//4)%5 + 5*(w//20)", "w//4", "y%k + k*(y//k) == y, y//k == (w//4)//5 == w//20"),
    ("3*((w//4)%5) + 15*(w//20)", "3*(w//4)", "times a constant"),
    ("h//4 - 3*(h//12)", "h//4%3", "y - k*(y//k) == y%k, y//k == (h//4)//3 == h//12"),
    ("w//4 - 5*(w//20)", "w//4%5", "the same, k = 5"),
    ("(2*w)//3 - 2*(w//3)", "2*w//3%2", "y = (2*w)//3: y//2 == (2*w)//6 == w//3"),
    ("x*(h//4) - 3*x*(h//12)", "h//4%3*x", "times an atom"),
    ("((w+1)//4)%5 + 5*((w+1)//20) + 1", "(1+w)//4+1", "an offset inside"),
    ("(w+1)//2 - 2*((w+3)//4)", "(1+(1+w)//2)%2-1", "x - 2*((x+1)//2) == (x+1)%2 - 1, x = (w+1)//2"),
]


@pytest.mark.parametrize(("text", "want", "algebra"), IDENTITIES + MERGED, ids=[t for t, _, _ in IDENTITIES + MERGED])
def test_identity_holds_for_every_value_of_a_box(text, want, algebra):
    _same(text, want)  # the identity itself, negative values included


@pytest.mark.parametrize(("text", "want", "algebra"), IDENTITIES, ids=[t for t, _, _ in IDENTITIES])
def test_simplifier_applies_the_identity(text, want, algebra):
    names = sorted(parse_expression_tokens(text))
    signed = DimEnv({n: (SIGNED[0], SIGNED[-1]) for n in names if n != "k"} | {"k": (1, 6)})
    _applies(text, want, simplify_expression, signed, SIGNED)


@pytest.mark.parametrize(("text", "want", "algebra"), MERGED, ids=[t for t, _, _ in MERGED])
def test_merged_quotient_identity(text, want, algebra):
    _applies(text, want, ANY.simplify, ANY, range(-41, 42, 3))


@pytest.mark.parametrize(
    "text",
    [
        "a//2 + (a+1)//2 + a//2",  # a family with a member twice: a + a//2, no smaller
        "x//3 + (x+1)//3",  # an incomplete family stays
        "x//2 + x%3",  # different divisors
        "2*(x//2) + x%2 + y",
        "s0 - 2*(s0//2) - s0%2",
        "x//2 - (x+1)//2",
        "(x+1)//2 - x%2",
    ],
)
def test_partial_and_mixed_families_keep_their_value(text):
    got = simplify_expression(text)
    names = sorted(parse_expression_tokens(text))
    _agrees(text, got, _points(names, range(0, 25)))


def test_identities_apply_only_to_make_a_sum_smaller():
    # x//3 + (x+1)//3 == x - (x+2)//3 (Hermite): one floor division less; both give the same form
    assert simplify_expression("x//3 + (x+1)//3") == "-((2+x)//3)+x"
    assert simplify_expression("x - (x+2)//3") == "-((2+x)//3)+x"
    assert simplify_expression("x//2 + x%3") == "x%3+x//2"
    assert simplify_expression("(1+s0)//2") == "(1+s0)//2"


def test_merged_quotient_for_names_at_least_zero():
    assert simplify_expression("(w//4)%5 + 5*(w//20)") == "w//4"
    assert simplify_expression("h//4 - 3*(h//12)") == "h//4%3"


def test_unrelated_quotients_stay():
    # (w//4)//3 is w//12, not w//20: nothing recombines, the value stays
    for text in ["(w//4)%5 + 5*(w//12)", "h//4 - 3*(h//20)", "h//4 - 2*(h//12)", "(w//4)%5 + 4*(w//20)"]:
        got = ANY.simplify(text)
        assert "//4" in got and ("//12" in got or "//20" in got), got
        _agrees(text, got, [{"w": v, "h": v} for v in range(-90, 91)])


small = st.integers(-3, 3)
divisor = st.integers(2, 6)
value = st.integers(-(10**6), 10**6)


@settings(max_examples=150, deadline=None)
@given(small, st.integers(-4, 4), divisor, divisor, small.filter(bool), st.lists(value, min_size=8, max_size=8))
def test_sum_form_recombines_and_keeps_its_value(s, t, r, k, c, ws):
    # c*((s*w + t)//r % k) + c*k*((s*w + t)//(r*k)) == c*((s*w + t)//r)  (y = (s*w+t)//r)
    y = f"({s}*w + {t})//{r}"
    text = f"{c}*(({y}) % {k}) + {c * k}*(({s}*w + {t})//{r * k})"
    got = ANY.simplify(text)
    assert got == ANY.simplify(f"{c}*({y})")
    _agrees(text, str(got), [{"w": w} for w in ws])


@settings(max_examples=150, deadline=None)
@given(
    small.filter(bool),
    st.integers(-4, 4),
    divisor,
    divisor,
    small.filter(bool),
    st.lists(value, min_size=8, max_size=8),
)
def test_difference_form_gives_a_remainder_and_keeps_its_value(s, t, r, m, c, ws):
    # c*y - c*m*(y//m) == c*(y % m)  for y = (s*w + t)//r, y//m written (s*w + t)//(r*m)
    y = f"({s}*w + {t})//{r}"
    text = f"{c}*({y}) - {c * m}*(({s}*w + {t})//{r * m})"
    got = ANY.simplify(text)
    # one quotient and a remainder by m (the offset inside the remainder may be any that fits:
    # (x+1)%3 + 1 and (x+2)%3 agree for x = (3*w+1)//2, which is never 1 modulo 3)
    assert got.count("//") == str(ANY.simplify(y)).count("//") and f"%{m}" in got, got
    _agrees(text, str(got), [{"w": w} for w in ws])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-30, 30), min_size=3, max_size=3),
    st.integers(-40, 40),
    st.integers(2, 16),
    st.lists(st.tuples(st.integers(-5, 5), st.integers(0, 4)), min_size=3, max_size=3),
)
def test_remainder_in_one_period_keeps_its_value(coeffs, const, q, boxes):
    names = ["u", "v", "w"]
    ranges = {n: (lo, lo + width) for n, (lo, width) in zip(names, boxes, strict=True)}
    text = " + ".join(f"{c}*{n}" for c, n in zip(coeffs, names, strict=True)) + f" + {const}"
    env = DimEnv(ranges, default=(None, None))
    got = env.simplify(f"({text}) % {q}")
    points = [
        dict(zip(names, v, strict=True)) for v in itertools.product(*(range(lo, hi + 1) for lo, hi in ranges.values()))
    ]
    _agrees(f"({text}) % {q}", str(got), points)
    spellings = [coeffs, [c % q - q if 2 * (c % q) > q else c % q for c in coeffs]]
    for cs in spellings:
        vals = [sum(c * p[n] for c, n in zip(cs, names, strict=True)) + const for p in points]
        if min(vals) // q == max(vals) // q:
            assert "%" not in str(got), (text, q, ranges, got)  # one period: no remainder left


def test_remainder_in_one_period_examples():
    env = DimEnv({"u": (0, 3), "w": (0, 2)}, default=(None, None))
    assert env.simplify("(11 - u - 4*w)%12") == "-u-4*w+11"
    assert env.simplify("(11 - u - 4*w)//12") == 0
    assert env.simplify("(13 - u)%12") == "(1+11*u)%12"  # 13 - u in [10, 13], 1 - u in [-2, 1]: two periods
    assert env.simplify("(23 - u)%12") == "-u+11"
    # one period before a common factor is divided out (2*((v + w)%2) would span two periods of 2)
    pinned = DimEnv({"v": (0, 0), "w": (1, 2)}, default=(None, None))
    assert "%" not in str(pinned.simplify("(2*v - 2*w) % 4"))


def test_poly_is_the_canonical_polynomial():
    p = ANY.poly("2*(w//4) - w//4 + 3")
    assert {(tuple((str(a), e) for a, e in m), c) for m, c in p.items()} == {((), 3), ((("w//4", 1),), 1)}
    assert ANY.poly("x - x") == {}
    assert ANY.poly("(w//4)%5 + 5*(w//20)") == ANY.poly("w//4")
    env = DimEnv({"u": (0, 3)}, default=(None, None))
    assert env.poly("(u + 8)//12") == {}
    assert env.poly(7) == {(): 7}
