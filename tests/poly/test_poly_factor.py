"""Factorisation: the factors multiply back exactly; irreducible factors counted as sympy counts them."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from poly_helpers import ATOMS, X, Y, polys

from exprgraph.poly import (
    ONE,
    d_factor,
    mono_of_powers,
    p_add,
    p_atom,
    p_const,
    p_factor,
    p_mul,
    p_pow,
    p_scale,
    p_sqf,
    p_sub,
)
from exprgraph.poly.dense import d_mul, d_pow, d_trim
from exprgraph.poly.ring import Poly


def _product(c, factors):
    out = {ONE: c} if c else {}
    for f, e in factors:
        out = p_mul(out, p_pow(f, e))
    return out


@settings(max_examples=40, deadline=None)
@given(polys(max_terms=3, max_degree=2), polys(max_terms=3, max_degree=2), polys(max_terms=3, max_degree=2))
def test_factor_multiplies_back(a, b, c):
    p = p_mul(p_mul(a, b), p_mul(b, c))
    cst, factors = p_factor(p)
    assert _product(cst, factors) == p
    cst, parts = p_sqf(p)
    assert _product(cst, parts) == p


def _dense_random(rng: random.Random) -> list:
    out: list = [1]
    for _ in range(rng.randint(1, 4)):
        f = [rng.randint(-5, 5) for _ in range(rng.randint(1, 3))] + [rng.choice([1, 2, -3])]
        out = d_mul(out, d_pow(f, rng.randint(1, 2)))
    return d_trim(out)


def test_univariate_factor_against_sympy():
    sympy = pytest.importorskip("sympy")
    t = sympy.Symbol("t")
    rng = random.Random(7)
    for _ in range(150):
        a = _dense_random(rng)
        if not a:
            continue
        c, factors = d_factor(a)
        prod: list = list(c)
        for f, e in factors:
            prod = d_mul(prod, d_pow(f, e))
        assert prod == a
        _, theirs = sympy.factor_list(sum(int(k) * t**i for i, k in enumerate(a)))
        assert sorted((len(f) - 1, e) for f, e in factors) == sorted((sympy.degree(f, t), e) for f, e in theirs)


def _agrees_with_sympy(p: Poly, sympy: Any) -> None:
    """``p``'s factors multiply back, and as many irreducible factors (with multiplicity) as sympy finds."""
    sym = {a: sympy.Symbol(a.name) for a in ATOMS}
    c, factors = p_factor(p)
    assert _product(c, factors) == p
    expr = sum(sympy.Integer(k) * sympy.Mul(*[sym[a] ** e for a, e in m]) for m, k in p.items())
    _, theirs = sympy.factor_list(expr)
    assert sum(e for _, e in factors) == sum(e for _, e in theirs), (p, factors, theirs)


def test_multivariate_factor_against_sympy():
    sympy = pytest.importorskip("sympy")
    rng = random.Random(11)
    for _ in range(40):
        p = {ONE: 1}
        for _ in range(rng.randint(1, 3)):
            f = {}
            for _ in range(rng.randint(1, 3)):
                chosen = rng.sample(ATOMS, rng.randint(0, 2))
                m = mono_of_powers({a: rng.randint(1, 2) for a in chosen})
                f = p_add(f, {m: rng.choice([-2, -1, 1, 3])})
            p = p_mul(p, f)
        if p:
            _agrees_with_sympy(p, sympy)


def test_textbook_factorisations():
    x, y = p_atom(X), p_atom(Y)
    one = p_const(1)
    c, f = p_factor(p_sub(p_pow(x, 4), one))
    assert c == 1 and [len(g) for g, _ in f] == [2, 2, 2]
    c, f = p_factor(p_scale(p_sub(p_mul(x, x), p_mul(y, y)), 6))
    assert c == 6 and len(f) == 2
    # Swinnerton-Dyer polynomial: irreducible, though it splits modulo every prime
    sd = {ONE: 576, ((X, 2),): -960, ((X, 4),): 352, ((X, 6),): -40, ((X, 8),): 1}
    assert p_factor(sd) == (1, [(sd, 1)])
    c, f = p_factor(p_mul(p_pow(p_add(x, one), 3), p_pow(y, 2)))
    assert sorted(e for _, e in f) == [2, 3]


def _homogeneous(rng: random.Random, degree: int) -> Poly:
    """A random homogeneous polynomial of ``degree`` in the first three atoms."""
    out: Poly = {}
    for _ in range(rng.randint(1, 3)):
        i = rng.randint(0, degree)
        j = rng.randint(0, degree - i)
        powers = dict(zip(ATOMS[:3], (i, j, degree - i - j), strict=True))
        out = p_add(out, {mono_of_powers({a: k for a, k in powers.items() if k}): rng.choice([-3, -1, 1, 2])})
    return out


def test_homogeneous_factorisations_against_sympy():
    # homogeneous polynomials are factored in one atom less (the last set to 1, each factor made homogeneous again)
    sympy = pytest.importorskip("sympy")
    rng = random.Random(5)
    for _ in range(60):
        p: Poly = {ONE: 1}
        for _ in range(rng.randint(1, 3)):
            p = p_mul(p, _homogeneous(rng, rng.randint(1, 2)))
        if p:
            _agrees_with_sympy(p, sympy)
    x, y, z = (p_atom(a) for a in ATOMS[:3])
    cube = p_sub(p_add(p_add(p_pow(x, 3), p_pow(y, 3)), p_pow(z, 3)), p_scale(p_mul(p_mul(x, y), z), 3))
    assert len(p_factor(cube)[1]) == 2  # x**3 + y**3 + z**3 - 3xyz = (x + y + z)(x**2 + ... - zx)
