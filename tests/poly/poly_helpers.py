"""Strategies of random polynomials and an exact (Fraction) evaluator of terms, for the poly tests."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from exprgraph.core import Term, postorder, symbols
from exprgraph.poly import Poly, mono_of_powers, p_add

X, Y, Z = symbols("x y z")
ATOMS = (X, Y, Z)


def polys(atoms: tuple[Term, ...] = ATOMS, max_terms: int = 5, max_degree: int = 3, fractions: bool = False):
    """Random polynomials over ``atoms`` with small int (or Fraction) coefficients."""
    coeff = st.integers(-6, 6)
    if fractions:
        coeff = st.one_of(coeff, st.fractions(min_value=-5, max_value=5, max_denominator=6))
    mono = st.lists(st.integers(0, max_degree), min_size=len(atoms), max_size=len(atoms))
    term = st.tuples(mono, coeff)

    def build(items: list) -> Poly:
        out: Poly = {}
        for powers, c in items:
            out = p_add(out, {mono_of_powers(dict(zip(atoms, powers, strict=True))): c} if c else {})
        return out

    return st.lists(term, min_size=0, max_size=max_terms).map(build)


def nonzero_polys(**kw):
    """Random non-zero polynomials."""
    return polys(**kw).filter(bool)


def exact_value(term: Term, env: dict[Term, Fraction]) -> Fraction:
    """The exact value of a term of +, -, *, /, neg, integer powers, int/float constants and symbols."""
    vals: dict[Term, Fraction] = {}
    for n in postorder([term]):
        name = n.op.name
        a = [vals[x] for x in n.args]
        if name == "const":
            v = Fraction(n.value)
        elif name == "symbol":
            v = env[n]
        elif name == "add":
            v = sum(a, Fraction(0))
        elif name == "sub":
            v = a[0] - a[1]
        elif name == "mul":
            v = Fraction(1)
            for x in a:
                v *= x
        elif name == "truediv":
            v = a[0] / a[1]
        elif name == "neg":
            v = -a[0]
        elif name == "pow":
            assert a[1].denominator == 1
            v = a[0] ** int(a[1])
        else:
            raise AssertionError(f"exact_value: no exact value for {name}")
        vals[n] = v
    return vals[term]


def poly_value(p: Poly, env: dict[Term, Fraction]) -> Fraction:
    """The exact value of a polynomial at a point."""
    total = Fraction(0)
    for m, c in p.items():
        v = Fraction(c)
        for a, k in m:
            v *= env[a] ** k
        total += v
    return total
