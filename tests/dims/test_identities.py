"""The integer identities of issue 16 (item 2), each proven on every value of a small box.

Each rule is checked twice: the identity itself (its two sides evaluated at every point, with
negative values too: the identities hold for every integer), and the simplifier applying it (the
expected text, and the result equal to the input at every point, for names >= 0 by default and
for names in a signed range through a DimEnv).
"""

from __future__ import annotations

import itertools

import pytest

from exprgraph.dims import DimEnv, evaluate_expression, parse_expression_tokens, simplify_expression
from exprgraph.errors import EvaluationError

SIGNED = range(-12, 13)


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


@pytest.mark.parametrize(("text", "want", "algebra"), IDENTITIES, ids=[t for t, _, _ in IDENTITIES])
def test_identity_holds_for_every_value_of_a_box(text, want, algebra):
    _same(text, want)  # the identity itself, negative values included


@pytest.mark.parametrize(("text", "want", "algebra"), IDENTITIES, ids=[t for t, _, _ in IDENTITIES])
def test_simplifier_applies_the_identity(text, want, algebra):
    assert simplify_expression(text) == want
    names = sorted(parse_expression_tokens(text))
    signed = DimEnv({n: (SIGNED[0], SIGNED[-1]) for n in names if n != "k"} | {"k": (1, 6)})
    got = signed.simplify(text)
    for env in _points(names, SIGNED):
        if env.get("k", 1) < 1:
            continue
        assert evaluate_expression(got, env) == evaluate_expression(text, env), (text, got, env)


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
    for env in _points(names, range(0, 25)):
        assert evaluate_expression(got, env) == evaluate_expression(text, env), (text, got, env)


def test_identities_apply_only_to_make_a_sum_smaller():
    # x//3 + (x+1)//3 == x - (x+2)//3 (Hermite): one floor division less; both give the same form
    assert simplify_expression("x//3 + (x+1)//3") == "-((2+x)//3)+x"
    assert simplify_expression("x - (x+2)//3") == "-((2+x)//3)+x"
    assert simplify_expression("x//2 + x%3") == "x%3+x//2"
    assert simplify_expression("(1+s0)//2") == "(1+s0)//2"
