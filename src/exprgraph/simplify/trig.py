"""Trigonometric and hyperbolic identities: the ``trig`` rule family of :func:`~exprgraph.simplify.simplify`.

Most identities are linear relations between three monomials, ``a0*M0 + a1*M1 + a2*M2 = 0``
(``sin(u)**2 + cos(u)**2 - 1 = 0``). In a sum, two terms ``l*a_x*M_x*O`` and ``l*a_y*M_y*O`` (one
factor ``l``, the same other factors ``O``) are the third, ``-l*a_z*M_z*O``: so
``1 - sin(u)**2 -> cos(u)**2`` and ``3*y*sin(u)**2 + 3*y*cos(u)**2 + z -> 3*y + z``. The relations
are data (:data:`RELATIONS`), each direction marked safe or not; products have their own table
(:data:`PRODUCTS`: ``sin(u)/cos(u) -> tan(u)``, read as reciprocals too); :func:`parity` takes a sign
out of odd functions; :func:`difference_of_squares` and :func:`square_over_one_minus`
(in :mod:`.trig_units`) handle a sum factor.

Safe directions (the default strength) give the input's value at every input, nan and the
infinities included, and are no less accurate: one rounding of the exact value, or a numerically
stable form (``1 - sin(u)**2`` cancels near ``u = pi/2``, ``cos(u)**2`` does not). They fire only
on a whole sum or product of exactly the two monomials, their argument ``u`` spelled once (a float
sum is never reassociated). Unsafe ones are exact for finite values only: a constant made from
``u`` loses a nan (``sin(u)**2 + cos(u)**2`` is nan at ``u = inf``, not 1), ``2*u`` and ``a + b``
round or overflow (``sin(2*u)`` is nan at ``u = 1e308``, where ``2*sin(u)*cos(u)`` is not), and
``inf - inf`` is nan where the identity gives a number (``cosh(u) + sinh(u)`` at ``u = -inf``).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from ..core import Term, const, get_op
from .numbers import const_like, number, power, scaled, split_coefficient
from .trig_terms import (
    FUNCTIONS,
    Key,
    Reading,
    contains,
    factor_terms,
    half,
    monomial,
    plus,
    product_factors,
    read_term,
    scale,
    size,
    sum_operands,
    with_factors,
)
from .trig_units import difference_of_squares, pythagoras_factor, square_over_one_minus

__all__ = [
    "TRIG_REWRITES",
    "RELATIONS",
    "PRODUCTS",
    "parity",
    "trig_sum",
    "trig_sum_safe",
    "trig_product",
    "trig_product_safe",
    "difference_of_squares",
    "square_over_one_minus",
    "pythagoras_factor",
]

ADD, MUL, POW = get_op("add"), get_op("mul"), get_op("pow")
ODD = frozenset({"sin", "tan", "sinh", "tanh"})
EVEN = frozenset({"cos", "cosh"})

#: a monomial: ``((op, argument form, exponent), ...)``; forms: u, 2u, -u (one argument), a, b, a+b, a-b
Spec = tuple[tuple[str, str, int], ...]
#: a relation: ``(name, algebra, ((a0, M0), (a1, M1), (a2, M2)), whether producing M0, M1, M2 is safe)``
Relation = tuple[str, str, tuple[tuple[int, Spec], ...], tuple[bool, bool, bool]]


def m(*parts: str) -> Spec:
    """A monomial from ``"op form exponent"`` strings: ``m("sin a 1", "cos b 1")`` is sin(a)*cos(b)."""
    out = []
    for p in parts:
        op, form, e = p.split()
        out.append((op, form, int(e)))
    return tuple(out)


def relation(name: str, algebra: str, text: str, safe: str) -> Relation:
    """A relation from ``"a0 op form e ... | a1 ... | a2 ..."`` (each monomial its coefficient, then its
    factors as op, argument form, exponent), ``safe`` one letter per monomial (``y``: safe to produce)."""
    parts = []
    for chunk in text.split("|"):
        words = chunk.split()
        factors = [" ".join(words[k : k + 3]) for k in range(1, len(words), 3)]
        parts.append((int(words[0]), m(*factors)))
    flags = tuple(ch == "y" for ch in safe)
    return name, algebra, tuple(parts), (flags[0], flags[1], flags[2])


RELATIONS: list[Relation] = [
    # sin(u)**2 + cos(u)**2 = 1: 1 - sin**2 -> cos**2 and 1 - cos**2 -> sin**2 are stable forms (the
    # difference cancels; nan at +-inf both ways); -> 1 is unsafe: nan at u = +-inf or nan, not 1
    relation("pythagorean", "sin(u)**2 + cos(u)**2 = 1", "1 sin u 2 | 1 cos u 2 | -1", "yyn"),
    # cosh(u)**2 - sinh(u)**2 = 1: 1 + sinh**2 -> cosh**2 and cosh**2 - 1 -> sinh**2 (stable, inf at
    # +-inf both ways); -> 1 is unsafe: inf - inf = nan above u = 355 and at +-inf, and cancels from u = 19
    relation("pythagorean_hyperbolic", "cosh(u)**2 - sinh(u)**2 = 1", "1 cosh u 2 | -1 sinh u 2 | -1", "yyn"),
    # 1 + tan(u)**2 = cos(u)**-2 (cos of a float is never 0; nan at +-inf both ways); -> 1 loses a nan
    relation("tan_secant", "1 + tan(u)**2 = cos(u)**-2", "1 tan u 2 | 1 | -1 cos u -2", "yny"),
    # 1 - tanh(u)**2 = cosh(u)**-2: 1 - tanh**2 cancels to 0 above u = 19, cosh**-2 does not; -> 1 loses a nan
    relation("tanh_secant", "tanh(u)**2 + cosh(u)**-2 = 1", "1 tanh u 2 | 1 cosh u -2 | -1", "yyn"),
    # cos(u)**2 - sin(u)**2 = cos(2*u), and its spellings with 1: 2*u overflows at |u| >= 9e307 (nan)
    relation("double_cos", "cos(u)**2 - sin(u)**2 = cos(2*u)", "1 cos u 2 | -1 sin u 2 | -1 cos 2u 1", "nnn"),
    relation("double_cos_cos", "2*cos(u)**2 - 1 = cos(2*u)", "2 cos u 2 | -1 | -1 cos 2u 1", "nnn"),
    relation("double_cos_sin", "1 - 2*sin(u)**2 = cos(2*u)", "-2 sin u 2 | 1 | -1 cos 2u 1", "nnn"),
    # cosh(u)**2 + sinh(u)**2 = cosh(2*u): the squares overflow where cosh(2*u) does (u > 355, 2*u
    # overflowing included); the other directions give inf - inf = nan at u = inf
    relation("double_cosh", "cosh(u)**2 + sinh(u)**2 = cosh(2*u)", "1 cosh u 2 | 1 sinh u 2 | -1 cosh 2u 1", "nny"),
    # exp(u) + exp(-u) = 2*cosh(u), exp(u) - exp(-u) = 2*sinh(u): stable forms (exp overflows first,
    # the difference cancels near 0; +-inf agree); the other directions give inf - inf
    relation("exp_cosh", "exp(u) + exp(-u) = 2*cosh(u)", "1 exp u 1 | 1 exp -u 1 | -2 cosh u 1", "nny"),
    relation("exp_sinh", "exp(u) - exp(-u) = 2*sinh(u)", "1 exp u 1 | -1 exp -u 1 | -2 sinh u 1", "nny"),
    # cosh(u) + sinh(u) = exp(u), cosh(u) - sinh(u) = exp(-u): inf - inf = nan below u = -710 and at
    # u = -inf (above 710, u = inf) where exp gives 0: unsafe
    relation("cosh_plus_sinh", "cosh(u) + sinh(u) = exp(u)", "1 cosh u 1 | 1 sinh u 1 | -1 exp u 1", "nnn"),
    relation("cosh_minus_sinh", "cosh(u) - sinh(u) = exp(-u)", "1 cosh u 1 | -1 sinh u 1 | -1 exp -u 1", "nnn"),
    # sin(u)*tan(u) + cos(u) = 1/cos(u) (sin(u)**2/cos(u) + cos(u)): each side is nan exactly at u = +-inf
    # and nan (cos of a float is never 0, tan stays below 2e18), and no direction cancels worse than its input
    relation("secant", "sin(u)*tan(u) + cos(u) = 1/cos(u)", "1 sin u 1 tan u 1 | 1 cos u 1 | -1 cos u -1", "yyy"),
    # sin(u)**4 - cos(u)**4 = (sin(u)**2 - cos(u)**2)*1 = -cos(2*u): 2*u overflows (unsafe)
    relation("fourth_powers", "sin(u)**4 - cos(u)**4 = -cos(2*u)", "1 sin u 4 | -1 cos u 4 | 1 cos 2u 1", "nnn"),
    # sin(3*u) = 3*sin(u) - 4*sin(u)**3, cos(3*u) = 4*cos(u)**3 - 3*cos(u): 3*u rounds (unsafe)
    relation("triple_sin", "3*sin(u) - 4*sin(u)**3 = sin(3*u)", "3 sin u 1 | -4 sin u 3 | -1 sin 3u 1", "nnn"),
    relation("triple_cos", "4*cos(u)**3 - 3*cos(u) = cos(3*u)", "4 cos u 3 | -3 cos u 1 | -1 cos 3u 1", "nnn"),
    # sum formulas: a + b rounds (sin(1e16 + 1) is not sin of the exact sum) and overflows: unsafe
    relation(
        "sin_sum",
        "sin(a)*cos(b) + cos(a)*sin(b) = sin(a + b)",
        "1 sin a 1 cos b 1 | 1 cos a 1 sin b 1 | -1 sin a+b 1",
        "nnn",
    ),
    relation(
        "sin_difference",
        "sin(a)*cos(b) - cos(a)*sin(b) = sin(a - b)",
        "1 sin a 1 cos b 1 | -1 cos a 1 sin b 1 | -1 sin a-b 1",
        "nnn",
    ),
    relation(
        "cos_sum",
        "cos(a)*cos(b) - sin(a)*sin(b) = cos(a + b)",
        "1 cos a 1 cos b 1 | -1 sin a 1 sin b 1 | -1 cos a+b 1",
        "nnn",
    ),
    relation(
        "cos_difference",
        "cos(a)*cos(b) + sin(a)*sin(b) = cos(a - b)",
        "1 cos a 1 cos b 1 | 1 sin a 1 sin b 1 | -1 cos a-b 1",
        "nnn",
    ),
]

#: product identities: ``(name, algebra, M, k, N, safe)``: ``M*O -> k*N*O``; a safe one only for the whole product
PRODUCTS: list[tuple[str, str, Spec, Fraction, Spec, bool]] = [
    # sin(u)/cos(u) = tan(u): one rounding of the exact quotient (cos of a float is never 0; nan at +-inf)
    ("quotient_tan", "sin(u)/cos(u) = tan(u)", m("sin u 1", "cos u -1"), Fraction(1), m("tan u 1"), True),
    # cos(u)/sin(u) = 1/tan(u): inf at u = +-0 both ways, nan at +-inf
    ("quotient_cot", "cos(u)/sin(u) = 1/tan(u)", m("cos u 1", "sin u -1"), Fraction(1), m("tan u -1"), True),
    # tan(u)*cos(u) = sin(u): one rounding of the exact product (nan at +-inf both ways)
    ("tan_times_cos", "tan(u)*cos(u) = sin(u)", m("tan u 1", "cos u 1"), Fraction(1), m("sin u 1"), True),
    # tanh(u)*cosh(u) = sinh(u): +-inf at +-inf both ways, and where cosh overflows sinh does
    ("tanh_times_cosh", "tanh(u)*cosh(u) = sinh(u)", m("tanh u 1", "cosh u 1"), Fraction(1), m("sinh u 1"), True),
    # sinh(u)/cosh(u) = tanh(u): unsafe, inf/inf = nan above u = 710 and at +-inf, where tanh is +-1
    ("quotient_tanh", "sinh(u)/cosh(u) = tanh(u)", m("sinh u 1", "cosh u -1"), Fraction(1), m("tanh u 1"), False),
    # sin(u)/tan(u) = cos(u): unsafe, 0/0 = nan at u = 0 where cos is 1
    ("sin_over_tan", "sin(u)/tan(u) = cos(u)", m("sin u 1", "tan u -1"), Fraction(1), m("cos u 1"), False),
    # 2*sin(u)*cos(u) = sin(2*u): unsafe, 2*u overflows at |u| >= 9e307 (nan where the product is not)
    ("double_sin", "2*sin(u)*cos(u) = sin(2*u)", m("sin u 1", "cos u 1"), Fraction(1, 2), m("sin 2u 1"), False),
    # 2*sinh(u)*cosh(u) = sinh(2*u): safe for the coefficient 2: both overflow from u = 355, +-inf agree
    ("double_sinh", "2*sinh(u)*cosh(u) = sinh(2*u)", m("sinh u 1", "cosh u 1"), Fraction(1, 2), m("sinh 2u 1"), True),
]


# -- argument forms -------------------------------------------------------------------------------


#: the argument forms that are multiples of u
_MULTIPLES = {"2u": 2, "3u": 3, "-u": -1}


def _form_linear(form: str, lin: dict[str, frozenset]) -> frozenset:
    """The linear form of an argument form (``2u`` is twice ``u``'s)."""
    if form in lin:
        return lin[form]
    if form in _MULTIPLES:
        return scale(lin["u"], _MULTIPLES[form])
    return plus(lin["a"], lin["b"], 1 if form == "a+b" else -1)


def _form_term(form: str, args: dict[str, Term]) -> Term:
    """The argument term of a form (``2u`` is ``2*u``; the canonical pass tidies it)."""
    if form in args:
        return args[form]
    if form in _MULTIPLES:
        u = args["u"]
        c = const_like(_MULTIPLES[form], u)  # 2, 3 and -1 are exact in float32 too
        return MUL(const(_MULTIPLES[form]) if c is None else c, u)
    a, b = args["a"], args["b"]
    if form == "a+b":
        return ADD(a, b)
    minus = const_like(-1, b)
    return ADD(a, MUL(const(-1) if minus is None else minus, b))


def _keys(spec: Spec, lin: dict[str, frozenset]) -> dict[Key, int]:
    """A monomial's factors by key, for the arguments' linear forms ``lin``."""
    return {(op, _form_linear(form, lin)): e for op, form, e in spec}


def _build(spec: Spec, args: dict[str, Term]) -> list[Term]:
    """A monomial's factors as terms, for the argument terms ``args``."""
    out = []
    for op, form, e in spec:
        f = get_op(op)(_form_term(form, args))
        p = power(f, e)  # e is a small int: never None
        out.append(f if p is None else p)
    return out


# -- reading and building terms -------------------------------------------------------------------


def _arguments(bases: dict[Key, Term], keys: dict[Key, int]) -> list[Term]:
    """The argument of each base of a monomial found in a term."""
    return [bases[k].args[0] for k in keys if k in bases]


def _strict(args: list[Term], u: Term) -> bool:
    """Whether each argument is ``u`` spelled the same way, up to an exact sign or coefficient."""
    base = split_coefficient(u)[1]
    return all(a is u or split_coefficient(a)[1] is base for a in args)


# -- sums: the relations --------------------------------------------------------------------------

Instance = tuple[Relation, dict[str, frozenset], dict[str, Term]]
_ONE_ARGUMENT = [r for r in RELATIONS if all(form in ("u", "2u", "3u", "-u") for _, s in r[2] for _, form, _ in s)]
_TWO_ARGUMENTS = [r for r in RELATIONS if r not in _ONE_ARGUMENT]


def _by_function(relations: list[Relation]) -> dict[str, list[tuple[Relation, bool, bool]]]:
    """Per function name, the relations with a factor of it, in order, and whether one has the argument
    ``u`` and one ``2u`` (a relation without the function takes no instance from its factors)."""
    out: dict[str, list[tuple[Relation, bool, bool]]] = {}
    for name in sorted(FUNCTIONS):
        for r in relations:
            forms = {form for _, s in r[2] for op, form, _ in s if op == name}
            if forms & {"u", "2u"}:
                out.setdefault(name, []).append((r, "u" in forms, "2u" in forms))
    return out


#: the one-argument relations by function, at each strength: the safe strength applies a relation only
#: where producing its third monomial is safe, so the relations with no safe direction are left out
#: (as are the two-argument ones: the sum formulas round, none has a safe direction)
_ONE_BY_FUNCTION = {
    True: _by_function(_ONE_ARGUMENT),
    False: _by_function([r for r in _ONE_ARGUMENT if any(r[3])]),
}
_TWO_BY_STRENGTH = {True: _TWO_ARGUMENTS, False: [r for r in _TWO_ARGUMENTS if any(r[3])]}


def _instances(exps: dict[Key, Any], bases: dict[Key, Term], unsafe: bool = True) -> list[Instance]:
    """The relations a term can take part in, with their arguments taken from its trigonometric bases
    (at the safe strength, only those with a safe direction)."""
    out: list[Instance] = []
    funcs = [k for k in exps if k[0] in FUNCTIONS]
    table = _ONE_BY_FUNCTION[unsafe]
    for k in funcs:
        u = bases[k].args[0]
        halved: tuple | None = None  # (linear form, term) of half of u, worked out once a base
        for r, has_u, has_2u in table.get(k[0], ()):
            if has_u:
                out.append((r, {"u": k[1]}, {"u": u}))
            if has_2u:  # cos(2*u) + 1 -> 2*cos(u)**2: u is half the argument
                if halved is None:
                    h = half(u)
                    halved = (None, None) if h is None else (scale(k[1], Fraction(1, 2)), h)
                if halved[1] is not None:
                    out.append((r, {"u": halved[0]}, {"u": halved[1]}))
    two = _TWO_BY_STRENGTH[unsafe]
    if not two:
        return out
    for k in funcs:
        for k2 in funcs:
            if k2 is not k and k[0] in ("sin", "cos") and k2[0] in ("sin", "cos"):
                a, b = bases[k].args[0], bases[k2].args[0]
                out += [(r, {"a": k[1], "b": k2[1]}, {"a": a, "b": b}) for r in two]
    return out


def _has_function(a: Term) -> bool:
    """Whether a term of a sum has a factor (or a power of one) among the FUNCTIONS."""
    for f in product_factors(a):
        while f.op is POW:
            f = f.args[0]
        if f.op.name in FUNCTIONS:
            return True
    return False


def _combine(t: Term, unsafe: bool) -> Term | None:
    """The first pair of terms of the sum ``t`` that a relation turns into one term, rewritten."""
    operands = sum_operands(t)
    if len(operands) > 64 or (not unsafe and len(operands) != 2):
        return None
    if not any(_has_function(a) for a in operands):
        return None  # cheap rejection: no term has a trigonometric, hyperbolic or exp factor
    readings = [read_term(a, strict=not unsafe) for a in operands]
    index: dict[frozenset, list[int]] = {}
    for j, r in enumerate(readings):
        if r is not None:
            index.setdefault(frozenset(r[1].items()), []).append(j)
    for i, r in enumerate(readings):
        if r is None:
            continue
        for inst in _instances(r[1], r[2], unsafe):
            out = _apply(t, operands, readings, index, i, inst, unsafe)
            if out is not None:
                return out
    return None


def _apply(
    t: Term, operands: list[Term], readings: list, index: dict, i: int, inst: Instance, unsafe: bool
) -> Term | None:
    """The relation ``inst`` applied to term ``i`` and a partner found through ``index`` (or None)."""
    (_, _, monomials, safe), lin, args = inst
    coef, exps, bases = readings[i]
    keys = [_keys(spec, lin) for _, spec in monomials]
    for x in range(3):
        rest = contains(exps, keys[x])
        if rest is None or (rest and not unsafe):
            continue  # the safe strength rewrites a term that is the monomial alone
        lam: Fraction | None = None  # the relation's scale, once a partner is found (exact arithmetic is dear)
        for y in range(3):
            if y == x or not (unsafe or safe[3 - x - y]):
                continue  # the safe strength produces only a monomial whose production is safe
            partners = [j for j in index.get(frozenset(with_factors(rest, keys[y]).items()), ()) if j != i]
            if not partners:
                continue
            if lam is None:
                lam = coef / monomials[x][0]
            want = lam * monomials[y][0]
            for j in partners:
                if readings[j][0] != want:
                    continue
                z = 3 - x - y
                c = -lam * monomials[z][0]
                if not unsafe:
                    matched = _arguments(bases, keys[x]) + _arguments(readings[j][2], keys[y])
                    if not (safe[z] and not rest and abs(c) in (1, 2) and _strict(matched, args["u"])):
                        continue
                others = factor_terms(rest, bases)
                new = None if others is None else monomial(c, others + _build(monomials[z][1], args), t)
                if new is None:
                    continue
                left = [a for k, a in enumerate(operands) if k not in (i, j)]
                out = ADD(*left, new) if left else new
                if size(out) <= size(t):
                    return out
    return None


def trig_sum(t: Term) -> Term | None:
    # c*sin(u)**2*O + c*cos(u)**2*O + rest -> c*O + rest, and every relation of RELATIONS both ways (unsafe)
    return _combine(t, unsafe=True)


def trig_sum_safe(t: Term) -> Term | None:
    # 1 - sin(u)**2 -> cos(u)**2, 1 + tan(u)**2 -> cos(u)**-2, exp(u) + exp(-u) -> 2*cosh(u): the safe
    # directions of RELATIONS, on a whole sum of two terms
    return _combine(t, unsafe=False)


# -- products -------------------------------------------------------------------------------------


def _inverse(spec: Spec) -> Spec:
    """The reciprocal of a monomial."""
    return tuple((op, form, -e) for op, form, e in spec)


#: PRODUCTS and their reciprocals: M*O -> k*N*O, and M**-1*O -> N**-1*O/k (1/(sinh(u)*cosh(u)) -> 2/sinh(2*u))
_PRODUCTS_BOTH_WAYS = PRODUCTS + [(n, a, _inverse(s), 1 / k, _inverse(r), safe) for n, a, s, k, r, safe in PRODUCTS]
#: the products each strength applies: the safe strength only the safe identities (in the same order)
_PRODUCTS_BY_STRENGTH = {True: _PRODUCTS_BOTH_WAYS, False: [p for p in _PRODUCTS_BOTH_WAYS if p[5]]}


def _product(t: Term, unsafe: bool, read: Reading | None = None) -> Term | None:
    """The first identity of PRODUCTS found in the product ``t`` (read as ``read`` if given), applied."""
    if read is None:
        if not _has_function(t):
            return None  # cheap rejection: every identity of PRODUCTS has a trigonometric or hyperbolic factor
        read = read_term(t, strict=not unsafe)
    if read is None:
        return None
    coef, exps, bases = read
    for _, _, spec, k, result, safe in _PRODUCTS_BY_STRENGTH[unsafe]:
        for key in [key for key in exps if key[0] == spec[0][0]]:
            u = bases[key].args[0]
            keys = _keys(spec, {"u": key[1]})
            rest = contains(exps, keys)
            if rest is None:
                continue
            c = coef * k
            if not unsafe and not (safe and not rest and abs(c) == 1 and _strict(_arguments(bases, keys), u)):
                continue
            others = factor_terms(rest, bases)
            out = None if others is None else monomial(c, others + _build(result, {"u": u}), t)
            if out is not None and size(out) <= size(t):
                return out
    return None


def trig_product(t: Term) -> Term | None:
    # c*sin(u)*cos(u)**-1*O -> c*tan(u)*O, 2*sin(u)*cos(u) -> sin(2*u), ... anywhere in a product, and
    # sin(u)**2/(1 - cos(u)) -> 1 + cos(u) (unsafe)
    if not _has_function(t):
        return None  # cheap rejection: both need a trigonometric or hyperbolic factor (sin(u)**2 above the line)
    read = read_term(t)  # (read once for both)
    if read is None:
        return None
    out = _product(t, True, read)
    return out if out is not None else square_over_one_minus(t, read)


def trig_product_safe(t: Term) -> Term | None:
    # sin(u)/cos(u) -> tan(u), tan(u)*cos(u) -> sin(u), 2*sinh(u)*cosh(u) -> sinh(2*u): a whole product
    return _product(t, unsafe=False)


# -- parity ---------------------------------------------------------------------------------------


def _positive(w: Term) -> Term | None:
    """``-w`` when ``w`` is spelled negated (``-1*u``, ``-2*u``, a sum of negated terms), else None."""
    if w.op is ADD:
        parts = [_positive(a) for a in w.args]
        return None if any(p is None for p in parts) else ADD(*parts)
    v = number(w)
    if v is not None:
        return const_like(-v, w) if v < 0 and v.__class__ is float else None
    c, rest = split_coefficient(w)
    if w.op is not MUL or c.__class__ not in (int, float) or not c < 0 or c == -(2**63) or c != c:
        return None
    return rest if c == -1 else scaled(-c, rest)


def parity(t: Term) -> Term | None:
    # sin(-u) -> -sin(u), tan(-u) -> -tan(u), sinh(-u) -> -sinh(u), tanh(-u) -> -tanh(u);
    # cos(-u) -> cos(u), cosh(-u) -> cosh(u): numpy and libm compute these symmetrically, bit for bit
    (w,) = t.args
    u = _positive(w)
    if u is None:
        return None
    f = t.op(u)
    if t.op.name in EVEN:
        return f
    minus = const_like(-1, f)
    return None if minus is None else MUL(minus, f)


#: ``(name, handler, root ops, unsafe, algebra)`` of each rule of the family (:mod:`.canonical` makes them rules)
TRIG_REWRITES: list[tuple[str, Callable[[Term], Term | None], tuple[str, ...], bool, str]] = [
    ("trig_parity", parity, tuple(sorted(ODD | EVEN)), False, "sin(-u) -> -sin(u), cos(-u) -> cos(u) (exact)"),
    ("trig_sum", trig_sum, ("add",), True, "sin(u)**2 + cos(u)**2 -> 1, sum formulas, ... (finite u)"),
    ("trig_sum_safe", trig_sum_safe, ("add",), False, "1 - sin(u)**2 -> cos(u)**2, ... (stable forms)"),
    ("trig_product", trig_product, ("mul",), True, "2*sin(u)*cos(u) -> sin(2*u), sin(u)**2/(1 - cos(u)) -> 1 + cos(u)"),
    ("trig_product_safe", trig_product_safe, ("mul",), False, "sin(u)/cos(u) -> tan(u), ... (one rounding)"),
    ("trig_difference_of_squares", difference_of_squares, ("mul",), False, "(1 - sin(u))*(1 + sin(u)) -> cos(u)**2"),
    ("trig_pythagoras_factor", pythagoras_factor, ("add",), False, "sin(u)**3 + sin(u)*cos(u)**2 -> sin(u)"),
]
