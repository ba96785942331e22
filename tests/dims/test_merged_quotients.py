"""Issue 19: the division identity where the quotient is known only by its canonical form, the
one-period test on a remainder's own spelling, and DimEnv.poly.

- ``k*(y//k) + y%k -> y`` and ``y - k*(y//k) -> y%k`` also when ``y//k`` was merged (``y = w//4``,
  ``k = 5``: ``y//k`` is ``w//20``);
- ``s % q -> s - j*q`` when ``s`` as written, or with coefficients nearest 0, stays in
  ``[j*q, j*q + q)`` (dims reduces coefficients into ``[0, q)`` first, which can span two periods).

Every rewrite is checked for value equality on random integers, negatives included.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.dims import DimEnv, evaluate_expression, parse_expression_tokens, simplify_expression

ANY = DimEnv(default=(None, None))  # every name any integer


def _agrees(text: str, got: str, points: list[dict[str, int]]) -> None:
    for env in points:
        assert evaluate_expression(got, env) == evaluate_expression(text, env), (text, got, env)


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


@pytest.mark.parametrize(("text", "want", "algebra"), MERGED, ids=[t for t, _, _ in MERGED])
def test_merged_quotient_identity(text, want, algebra):
    got = ANY.simplify(text)
    assert got == want
    names = sorted(parse_expression_tokens(text))
    _agrees(
        text, got, [dict(zip(names, v, strict=True)) for v in itertools.product(range(-41, 42, 3), repeat=len(names))]
    )


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


def test_poly_is_the_canonical_polynomial():
    p = ANY.poly("2*(w//4) - w//4 + 3")
    assert {(tuple((str(a), e) for a, e in m), c) for m, c in p.items()} == {((), 3), ((("w//4", 1),), 1)}
    assert ANY.poly("x - x") == {}
    assert ANY.poly("(w//4)%5 + 5*(w//20)") == ANY.poly("w//4")
    env = DimEnv({"u": (0, 3)}, default=(None, None))
    assert env.poly("(u + 8)//12") == {}
    assert env.poly(7) == {(): 7}
