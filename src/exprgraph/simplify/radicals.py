"""Radicals: simple denesting over the rationals, and exact factors of a product merged.

``sqrt(a + b*sqrt(c))`` with rationals ``a > 0``, ``b != 0`` and ``c > 0`` denests when
``a**2 - b**2*c`` is the square ``d**2`` of a rational: it is ``sqrt((a + d)/2) + sign(b)*sqrt((a - d)/2)``
(square both sides: ``a + 2*sign(b)*sqrt((a**2 - d**2)/4) = a + b*sqrt(c)``; ``d**2 >= 0`` gives
``a >= |b|*sqrt(c)``, so both sides are real, and ``a + d >= a - d >= 0`` makes the right side
nonnegative). The halves may be fractions (``sqrt(3/2 + sqrt(2)) = 1 + sqrt(1/2)``); each root is
written in the radical normal form of :mod:`exprgraph.core.exact_radicals`, and the result is taken
only when it is no larger. Exact constants are exact values, so the rule is safe.

Sums, products, quotients and integer powers of exact radicals are the constant folding's
(:func:`~exprgraph.core.exact_fold.fold_exact`: ``1/(1 + sqrt(2)) -> sqrt(2) - 1``,
``(sqrt(2) + 1)*(sqrt(2) - 1) -> 1``, ``sqrt(2)*sqrt(6) -> 2*sqrt(3)``); the exact factors of a
product with symbols are merged here (``x*sqrt(2)*sqrt(6) -> 2*sqrt(3)*x``), an unsafe rule (it
reassociates a float product, which may overflow where the merged one does not, or back).
"""

from __future__ import annotations

from fractions import Fraction

from ..core import Term, get_op
from ..core.dtypes import FLOAT64
from ..core.exact import rational_root
from ..core.exact_fold import is_exact
from ..core.exact_radicals import Radical, no_larger, radical_term, radical_value, sqrt_of_rational
from .logs import Family

__all__ = ["RADICAL_REWRITES", "denest_sqrt", "merge_exact_factors"]

MUL, CONST = get_op("mul"), get_op("const")


def _denested(v: Radical) -> Radical | None:
    """``sqrt(v)`` for ``v = a + b*sqrt(c)`` (rationals, one radical) when ``a**2 - b**2*c`` is a rational square."""
    if len(v) != 2 or 1 not in v:
        return None
    a = v[1]
    (c,) = (m for m in v if m != 1)
    b = v[c]
    d = rational_root(a * a - b * b * c, 2) if a > 0 and a * a >= b * b * c else None
    if d is None:
        return None
    p, q = sqrt_of_rational((a + d) / 2), sqrt_of_rational((a - d) / 2)
    if p is None or q is None:
        return None
    out = dict(p)
    for m, k in q.items():
        out[m] = out.get(m, Fraction(0)) + (k if b > 0 else -k)
    return Radical(out)


def denest_sqrt(t: Term) -> Term | None:
    # sqrt(a + b*sqrt(c)) -> sqrt((a + d)/2) + sign(b)*sqrt((a - d)/2) where d**2 = a**2 - b**2*c (rationals, a > 0)
    if t.shape != () or t.dtype != FLOAT64:
        return None
    v = radical_value(t.args[0])
    root = None if v is None else _denested(v)
    out = None if root is None else radical_term(root)
    return out if out is not None and out is not t and no_larger(out, t) else None


def merge_exact_factors(t: Term) -> Term | None:
    # c1*c2*x -> c*x for exact radicals c1, c2 with c = c1*c2 in radical normal form (sqrt(2)*sqrt(6)*x -> 2*sqrt(3)*x)
    # (unsafe: reassociates a float product, which may overflow or lose bits where the merged one does not)
    if t.shape != () or t.dtype != FLOAT64:
        return None
    exact = [a for a in t.args if a.dtype == FLOAT64 and not a.shape and is_exact(a)]
    if len(exact) < 2 or len(exact) == len(t.args):
        return None  # one exact factor, or no symbol: the constant folding's
    v = radical_value(MUL(*exact))
    merged = None if v is None else radical_term(v)
    if merged is None:
        return None
    others = [a for a in t.args if a not in exact]
    head = list(merged.args) if merged.op is MUL and merged.args[0].op is CONST else [merged]
    out = MUL(*head, *others)
    return out if out.size < t.size and no_larger(out, t) else None


#: ``(name, handler, root ops, unsafe, algebra)`` of each rule
RADICAL_REWRITES: Family = [
    (
        "denest_sqrt",
        denest_sqrt,
        ("sqrt",),
        False,
        "sqrt(a + b*sqrt(c)) -> sqrt(p) + sqrt(q) (rationals, a**2 - b**2*c a square, no larger)",
    ),
    (
        "merge_exact_factors",
        merge_exact_factors,
        ("mul",),
        True,
        "sqrt(2)*sqrt(6)*x -> 2*sqrt(3)*x (exact factors merged; reassociates: unsafe)",
    ),
]
