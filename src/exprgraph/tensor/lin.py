"""Affine forms ``sum(c_k * atom_k) + c0`` over index atoms, with integer or Fraction coefficients.

The index solver (:mod:`.solve`) works on these forms with Fractions (solving ``2*i = x`` gives
``i = x/2``); :mod:`.affine` reads index terms into them and writes integer ones back as
canonical terms. Atoms are loop variables and floor-division / modulo terms. Imports: the core only.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from math import gcd

from ..core import Term

__all__ = ["Lin", "Number"]

Number = int | Fraction


class Lin:
    """An affine form ``sum(coeffs[atom] * atom) + const`` (atoms: variables, div/mod terms)."""

    __slots__ = ("coeffs", "const")

    def __init__(self, coeffs: Mapping[Term, Number] | None = None, const: Number = 0) -> None:
        self.coeffs: dict[Term, Number] = {a: c for a, c in (coeffs or {}).items() if c != 0}
        self.const: Number = const

    @staticmethod
    def atom(term: Term) -> Lin:
        """The form ``1*term``."""
        return Lin({term: 1}, 0)

    def __add__(self, other: Lin) -> Lin:
        out = dict(self.coeffs)
        for a, c in other.coeffs.items():
            out[a] = out.get(a, 0) + c
        return Lin(out, self.const + other.const)

    def __sub__(self, other: Lin) -> Lin:
        return self + other.scale(-1)

    def scale(self, k: Number) -> Lin:
        """``k`` times this form."""
        if k == 0:
            return Lin({}, 0)
        return Lin({a: c * k for a, c in self.coeffs.items()}, self.const * k)

    @property
    def is_const(self) -> bool:
        """True when no atom remains."""
        return not self.coeffs

    def coeff(self, atom: Term) -> Number:
        """The coefficient of ``atom`` (0 when absent)."""
        return self.coeffs.get(atom, 0)

    def substitute(self, atom: Term, form: Lin) -> Lin:
        """Replace ``atom`` by ``form``."""
        c = self.coeffs.get(atom, 0)
        if c == 0:
            return self
        rest = Lin({a: k for a, k in self.coeffs.items() if a is not atom}, self.const)
        return rest + form.scale(c)

    def denominator(self) -> int:
        """Least common denominator of the coefficients and the constant."""
        d = 1
        for c in (*self.coeffs.values(), self.const):
            if isinstance(c, Fraction):
                d = d * c.denominator // gcd(d, c.denominator)
        return d

    def key(self) -> tuple:
        """A hashable identity of the form."""
        return (frozenset(self.coeffs.items()), self.const)

    def __repr__(self) -> str:
        parts = [f"{c}*{a}" for a, c in self.coeffs.items()]
        return f"Lin({' + '.join(parts) or '0'} + {self.const})"
