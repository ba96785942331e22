"""exprgraph.poly: the one polynomial module, sparse multivariate polynomials over exact coefficients.

A polynomial is a dict ``{monomial: coefficient}``; a monomial a tuple of ``(atom, power)`` pairs
sorted by the atoms' identities (interned terms), ``()`` the monomial 1; a coefficient an int or a
:class:`fractions.Fraction` (never a whole one). :mod:`exprgraph.dims` keeps its integer
polynomials in the same representation. Here: the ring (:mod:`.ring`), division and monomial
orders (:mod:`.division`), gcds (:mod:`.gcd`), square-free decomposition and factorisation over
the integers (:mod:`.factor`, :mod:`.factor_univariate`), rational functions with ``cancel``,
``together`` and partial fractions (:mod:`.rational`), and terms to polynomials and back
(:mod:`.terms`). The term-level functions are :mod:`exprgraph.simplify.polynomial` and
:mod:`exprgraph.simplify.rational`.

Integers stack of docs/architecture.md, directly above core: imports core and errors only.
"""

from __future__ import annotations

from .. import accel as _accel  # noqa: F401 - first: picks the compiled ring or its source for the group
from .dense import Dense
from .division import from_univariate, order_key, p_divides, p_divmod, p_exact_div, p_leading, to_univariate
from .factor import p_factor, p_root_factors, p_sqf
from .factor_univariate import d_factor
from .gcd import atom_order, normal_sign, p_cofactors, p_gcd, p_gcd_list, p_lcm
from .monomials import MAX_DEGREE, ONE, Mono, mono_div, mono_gcd, mono_lcm, mono_mul, mono_of_powers, mono_pow
from .rational import Ratio, from_dense, r_add, r_apart, r_cancel, r_div, r_mul, r_normal, r_pow, r_sub, to_dense
from .ring import (
    MAX_WORK,
    Budget,
    Coeff,
    Poly,
    p_add,
    p_add_into,
    p_atom,
    p_atoms,
    p_const,
    p_const_value,
    p_content,
    p_degree,
    p_denominator,
    p_diff,
    p_div_mono,
    p_eval,
    p_is_const,
    p_is_integral,
    p_mono_gcd,
    p_mul,
    p_neg,
    p_pow,
    p_primitive,
    p_product,
    p_scale,
    p_sub,
    p_total_degree,
)
from .terms import (
    coeff_term,
    from_poly,
    from_ratio,
    negated,
    product_term,
    same_kind,
    sum_term,
    to_poly,
    to_ratio,
)

__all__ = [
    "Mono",
    "ONE",
    "MAX_DEGREE",
    "mono_mul",
    "mono_div",
    "mono_pow",
    "mono_gcd",
    "mono_lcm",
    "mono_of_powers",
    "Coeff",
    "Poly",
    "Dense",
    "Ratio",
    "Budget",
    "MAX_WORK",
    "p_const",
    "p_atom",
    "p_add",
    "p_add_into",
    "p_sub",
    "p_neg",
    "p_scale",
    "p_mul",
    "p_pow",
    "p_product",
    "p_const_value",
    "p_is_const",
    "p_content",
    "p_primitive",
    "p_denominator",
    "p_is_integral",
    "p_mono_gcd",
    "p_div_mono",
    "p_atoms",
    "p_degree",
    "p_total_degree",
    "p_diff",
    "p_eval",
    "order_key",
    "p_leading",
    "p_divmod",
    "p_exact_div",
    "p_divides",
    "to_univariate",
    "from_univariate",
    "atom_order",
    "normal_sign",
    "p_gcd",
    "p_gcd_list",
    "p_cofactors",
    "p_lcm",
    "p_sqf",
    "p_factor",
    "p_root_factors",
    "d_factor",
    "r_normal",
    "r_add",
    "r_sub",
    "r_mul",
    "r_div",
    "r_pow",
    "r_cancel",
    "r_apart",
    "to_dense",
    "from_dense",
    "to_poly",
    "to_ratio",
    "from_poly",
    "from_ratio",
    "coeff_term",
    "sum_term",
    "product_term",
    "same_kind",
    "negated",
]
