"""Power laws under assumptions, and the whole exp/log/power/abs/radical family the simplifier registers.

``(x**a)**b -> x**(a*b)`` and ``x**a * x**b -> x**(a + b)`` hold for positive ``x`` and any real
exponents, or for integer exponents (SymPy's powsimp/powdenest conditions; here a negative base
with a fractional exponent is nan, so the integer case also needs ``x**a`` to be a number). Both
are unsafe: the two sides round differently, and ``x**a`` may overflow where ``x**(a*b)`` does not.
The rules for numeric exponents (``(x**2)**3``, ``x**2 * x**3``) are the canonical form's own.
"""

from __future__ import annotations

from ..core import Term, const, get_op
from .absval import ABS_REWRITES
from .logs import LOG_REWRITES, Family
from .numbers import number
from .radicals import RADICAL_REWRITES
from .signs import facts_of

__all__ = ["ASSUMPTION_REWRITES", "POWER_REWRITES", "power_of_power_assumed", "merge_powers_assumed"]

ADD, MUL, POW = get_op("add"), get_op("mul"), get_op("pow")


def power_of_power_assumed(t: Term) -> Term | None:
    # (x**a)**b -> x**(a*b) where x > 0 and a, b real, or b is an integer and x**a a number (unsafe: rounds)
    inner, b = t.args
    if inner.op is not POW or t.shape != ():
        return None
    x, a = inner.args
    if number(a) is not None and number(b) is not None:
        return None  # numeric exponents: the canonical form's power_of_power decides
    fa, fb = facts_of(a), facts_of(b)
    if facts_of(x).positive and fa.real and fb.real:
        pass
    elif not (fb.integer and facts_of(inner).real):
        return None
    exponent = MUL(a, b)
    return POW(x, exponent) if exponent.dtype == a.dtype else None


def _base_exponent(f: Term) -> tuple[Term, Term | None]:
    """``x**a`` as ``(x, a)``; any other factor as ``(f, None)`` (an exponent of 1)."""
    return (f.args[0], f.args[1]) if f.op is POW else (f, None)


def merge_powers_assumed(t: Term) -> Term | None:
    # x**a * x**b -> x**(a + b) where x > 0, or a and b are integers (unsafe: rounds; inf*0 at x = inf, a = -b)
    if t.shape != ():
        return None
    groups: dict[Term, list[Term | None]] = {}
    for f in t.args:
        base, e = _base_exponent(f)
        groups.setdefault(base, []).append(e)
    merged: dict[Term, Term] = {}
    for base, exps in groups.items():
        if len(exps) < 2 or all(e is None or number(e) is not None for e in exps):
            continue  # a lone factor, or numeric exponents only (the canonical form's collect_product)
        facts = [facts_of(e) for e in exps if e is not None]
        if not (facts_of(base).positive and all(f.real for f in facts)) and not all(f.integer for f in facts):
            continue
        ints = all(e is None or e.dtype == "int64" for e in exps)
        merged[base] = POW(base, ADD(*(e if e is not None else const(1 if ints else 1.0) for e in exps)))
    if not merged:
        return None
    out: list[Term] = []
    done: set[Term] = set()
    for f in t.args:
        base, _ = _base_exponent(f)
        if base not in merged:
            out.append(f)
        elif base not in done:
            done.add(base)
            out.append(merged[base])
    return out[0] if len(out) == 1 else MUL(*out)


#: ``(name, handler, root ops, unsafe, algebra)`` of each power rule
POWER_REWRITES: Family = [
    ("power_of_power_assumed", power_of_power_assumed, ("pow",), True, "(x**a)**b -> x**(a*b) (x > 0; or b integer)"),
    ("merge_powers_assumed", merge_powers_assumed, ("mul",), True, "x**a * x**b -> x**(a+b) (x > 0; or a, b integers)"),
]

#: the exp/log/power/abs family under assumptions, registered by :mod:`.canonical`
ASSUMPTION_REWRITES: Family = LOG_REWRITES + ABS_REWRITES + POWER_REWRITES + RADICAL_REWRITES
