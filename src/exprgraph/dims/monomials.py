"""dims' monomials are :mod:`exprgraph.poly.monomials`: products of powers of atoms, by the atoms' identities.

There is one monomial module in exprgraph; dims' modules import it through this name (stage
*normalise* of :mod:`.stages`). ``_check_degree`` and ``_mono_gcd`` are the names dims' modules
knew poly's ``check_degree`` and ``mono_gcd`` by.
"""

from __future__ import annotations

from ..poly.monomials import MAX_DEGREE, ONE, Mono, mono_div, mono_mul, mono_of_powers, mono_pow
from ..poly.monomials import check_degree as _check_degree
from ..poly.monomials import mono_gcd as _mono_gcd

__all__ = [
    "Mono",
    "ONE",
    "MAX_DEGREE",
    "mono_mul",
    "mono_of_powers",
    "mono_pow",
    "mono_div",
    "_check_degree",
    "_mono_gcd",
]
