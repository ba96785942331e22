"""Exact square-root radicals: the field of rationals and square roots of square-free integers.

A *radical number* is a finite sum ``q_1*sqrt(m_1) + ... + q_n*sqrt(m_n)`` with rational ``q_i`` and
distinct square-free integers ``m_i >= 1`` (``m = 1`` is the rational part), held as a
:class:`Radical`, a read-only mapping ``{m: q}``. The square roots of distinct square-free integers
are linearly independent over the rationals, so this spelling is unique: two radical numbers are
equal exactly when their maps are. Sums, products, integer powers and inverses stay in the field:

- ``sqrt(a)*sqrt(b) = g*sqrt((a/g)*(b/g))`` with ``g = gcd(a, b)`` (the product of two square-free
  numbers, its square factor ``g**2`` taken out);
- ``1/v``: ``v = u + sqrt(p)*w`` (``p`` a prime of the radicands, ``u`` and ``w`` free of it) times
  its conjugate ``u - sqrt(p)*w`` is ``u**2 - p*w**2``, free of ``p``; once per prime, the
  denominator is rational (``1/(1 + sqrt(2)) = sqrt(2) - 1``). The conjugation ``sqrt(p) -> -sqrt(p)``
  is a field automorphism, so a non-zero ``v`` never gives a zero denominator.

:func:`radical_value` reads a term over int and rational constants with ``+ - * /``, integer
powers and square roots of rationals (None for anything else: ``pi``, ``log(3)``, a cube root, a
root of a radical); :func:`radical_term` writes a radical number as the smaller of two spellings,
``q_1*sqrt(m_1) + ... + q_0`` or ``rational(1, d)*(n_1*sqrt(m_1) + ... + n_0)``;
:func:`fold_radicals` rewrites a term into that form when it is no larger. Everything is bounded
(:data:`MAX_TERMS` terms in a number, radicands factored by trial division up to
:data:`TRIAL_BOUND`, :data:`MAX_POWER`, :data:`~.exact.MAX_BITS`): beyond the bounds the term stays.

>>> from exprgraph.core import parse
>>> for text in ["1/(1 + sqrt(2))", "(sqrt(2) + 1)*(sqrt(2) - 1)", "sqrt(2)*sqrt(6)", "(1 + sqrt(3))**2"]:
...     print(text, "->", radical_term(radical_value(parse(text))))
1/(1 + sqrt(2)) -> sqrt(2) + -1
(sqrt(2) + 1)*(sqrt(2) - 1) -> 1.0
sqrt(2)*sqrt(6) -> 2*sqrt(3)
(1 + sqrt(3))**2 -> 2*sqrt(3) + 4
"""

from __future__ import annotations

import math
import weakref
from collections.abc import ItemsView, Iterator, Mapping, ValuesView
from fractions import Fraction

from .dtypes import FLOAT64, INT64, INT64_MAX, INT64_MIN
from .exact import MAX_BITS, TRIAL_BOUND, Rational, prime_factors, squarefree_split
from .leaves import const
from .op import get_op
from .term import Term
from .walk import postorder

__all__ = [
    "Radical",
    "MAX_TERMS",
    "MAX_POWER",
    "TRIAL_BOUND",
    "squarefree_split",
    "sqrt_of_rational",
    "radical_value",
    "radical_term",
    "fold_radicals",
    "own_spelling",
    "no_larger",
]

#: at most this many terms in a radical number made by arithmetic (a product of sums grows as 2**primes)
MAX_TERMS = 16
#: integer powers up to this exponent (in absolute value) are expanded
MAX_POWER = 64
#: a term of more nodes than this (a shared one counted at each use) is not read as a radical number
MAX_NODES = 64

CONST, SQRT, ADD, SUB, MUL, NEG, DIV, POW = (
    get_op(n) for n in ("const", "sqrt", "add", "sub", "mul", "neg", "truediv", "pow")
)


class Radical(Mapping[int, Fraction]):
    """A radical number: the read-only map ``{m: q}`` of ``sum q*sqrt(m)`` (square-free ``m``, non-zero ``q``)."""

    __slots__ = ("_terms",)

    def __init__(self, terms: Mapping[int, Fraction] | None = None) -> None:
        self._terms = {m: q if q.__class__ is Fraction else Fraction(q) for m, q in (terms or {}).items() if q != 0}

    def __getitem__(self, m: int) -> Fraction:
        return self._terms[m]

    def __iter__(self) -> Iterator[int]:
        return iter(self._terms)

    def __len__(self) -> int:
        return len(self._terms)

    # the dict's own read-only views and lookups (the Mapping mixins would go through __getitem__ per key)
    def __contains__(self, m: object) -> bool:
        return m in self._terms

    def values(self) -> ValuesView[Fraction]:
        """The coefficients ``q``."""
        return self._terms.values()

    def items(self) -> ItemsView[int, Fraction]:
        """The pairs ``(m, q)``."""
        return self._terms.items()

    def __repr__(self) -> str:
        return f"Radical({dict(sorted(self._terms.items()))})"

    def rational(self) -> Fraction | None:
        """The value when it is rational (no radical term), else None."""
        if any(m != 1 for m in self._terms):
            return None
        return self._terms.get(1, Fraction(0))

    def primes(self) -> set[int] | None:
        """The primes of the radicands (None when one is beyond trial division: a product of two large primes)."""
        out: set[int] = set()
        for m in self._terms:
            found = prime_factors(m)
            if found is None:
                return None
            out.update(p for p, _ in found)
        return out


def _made(terms: dict[int, Fraction]) -> Radical:
    """The radical number of ``terms``, a dict of Fractions made here (no copy, no conversion; zeros dropped)."""
    out = Radical.__new__(Radical)
    out._terms = {m: q for m, q in terms.items() if q}
    return out


def sqrt_of_rational(q: Fraction) -> Radical | None:
    """``sqrt(q)`` of a rational ``q >= 0`` as a radical number: ``sqrt(n/d) = sqrt(n*d)/d``; None for ``q < 0``."""
    if q < 0:
        return None  # nan in float64
    if q == 0:
        return Radical()
    split = squarefree_split(q.numerator * q.denominator)
    if split is None:
        return None
    a, m = split
    return Radical({m: Fraction(a, q.denominator)})


def _plus(u: Mapping[int, Fraction], v: Mapping[int, Fraction], sign: int = 1) -> Radical:
    # (sum a_m sqrt(m)) + (sum b_m sqrt(m)) = sum (a_m + b_m) sqrt(m)
    out = dict(u)
    for m, q in v.items():
        old, q = out.get(m), q if sign > 0 else -q
        out[m] = q if old is None else old + q
    return _made(out)


def _times(u: Mapping[int, Fraction], v: Mapping[int, Fraction]) -> Radical | None:
    # a*sqrt(m1) * b*sqrt(m2) = a*b*g*sqrt((m1/g)*(m2/g)), g = gcd(m1, m2) (square-free m1, m2); each coefficient
    # summed as an int pair (numerator, denominator), made a Fraction once: the same rational, reduced once
    acc: dict[int, tuple[int, int]] = {}
    right = [(m, q.numerator, q.denominator) for m, q in v.items()]
    for m1, a in u.items():
        n1, d1 = a.numerator, a.denominator
        for m2, n2, d2 in right:
            g = math.gcd(m1, m2)
            m, n, d = (m1 // g) * (m2 // g), n1 * n2 * g, d1 * d2
            old = acc.get(m)
            if old is not None:  # n0/d0 + n/d: over the same denominator, or over d0*d
                n, d = (old[0] + n, d) if old[1] == d else (old[0] * d + n * old[1], old[1] * d)
            acc[m] = (n, d)
    made = _made({m: Fraction(n, d) for m, (n, d) in acc.items() if n})
    return made if _bounded(made) else None


def _bounded(v: Radical) -> bool:
    """Whether ``v`` is within the bounds: few terms, small coefficients, radicands that factor."""
    if len(v) > MAX_TERMS:
        return False
    for q in v.values():  # coefficients of at most MAX_BITS bits
        if q.numerator.bit_length() > MAX_BITS or q.denominator.bit_length() > MAX_BITS:
            return False
    return v.primes() is not None


def _inverse(v: Radical) -> Radical | None:
    # 1/v: multiply by the conjugate u - sqrt(p)*w of v = u + sqrt(p)*w, once per prime p; a rational at the end
    primes = v.primes()
    if primes is None:
        return None
    num: Radical | None = Radical({1: Fraction(1)})
    den: Radical | None = v
    for p in sorted(primes):
        if den is None or num is None:
            return None
        conjugate = Radical({m: (-q if m % p == 0 else q) for m, q in den.items()})
        num, den = _times(num, conjugate), _times(den, conjugate)
    if den is None or num is None:
        return None
    d = den.rational()
    if d is None or d == 0:
        return None  # pragma: no cover - the conjugates remove every prime and keep a non-zero value
    out = Radical({m: q / d for m, q in num.items()})
    return out if _bounded(out) else None


def _power(v: Radical, k: int) -> Radical | None:
    # v**k by squaring; v**-k = (1/v)**k; v**0 = 1 (numpy's 0**0 is 1 too)
    if abs(k) > MAX_POWER:
        return None
    if k < 0:
        if not v:
            return None  # 0**-k is inf
        inverse = _inverse(v)
        return None if inverse is None else _power(inverse, -k)
    out: Radical | None = Radical({1: Fraction(1)})
    base: Radical | None = v
    while k and out is not None and base is not None:
        if k & 1:
            out = _times(out, base)
        k >>= 1
        if k:
            base = _times(base, base)
    return out


def _leaf_value(t: Term) -> Radical | None:
    """An int or rational constant as a radical number (None for floats, pi, e, bools, arrays)."""
    cls = t.attr.__class__
    if cls is int or cls is Rational:
        return Radical({1: Fraction(t.attr)})
    return None


def _pow_value(base: Radical, exponent: Radical, t: Term) -> Radical | None:
    """``base**exponent`` for an integer exponent, or a half-integer one of a rational base >= 0."""
    k = exponent.rational()
    if k is None:
        return None
    if k.denominator == 1:
        if t.dtype == INT64 and k < 0:
            return None  # an int64 ** a negative int64 is an error
        return _power(base, int(k))
    q = base.rational()
    if k.denominator != 2 or q is None:
        return None
    root = sqrt_of_rational(q)  # q**(n/2) = sqrt(q)**n
    return None if root is None else _power(root, int(k * 2))


def _node_value(t: Term, values: Mapping[Term, Radical | None]) -> Radical | None:
    """The radical number of ``t`` from its operands' (None when it is not one)."""
    op = t.op
    if op is CONST:
        return _leaf_value(t)
    args = [values[a] for a in t.args]
    if any(a is None for a in args):
        return None
    vals: list[Radical] = args  # type: ignore[assignment]
    out: Radical | None = None
    if op is ADD:
        out = Radical()
        for v in vals:
            out = _plus(out, v)
    elif op is SUB:
        out = _plus(vals[0], vals[1], -1)
    elif op is NEG:
        out = Radical({m: -q for m, q in vals[0].items()})
    elif op is MUL:
        out = Radical({1: Fraction(1)})
        for v in vals:
            out = None if out is None else _times(out, v)
    elif op is DIV:
        inverse = _inverse(vals[1]) if vals[1] else None
        out = None if inverse is None else _times(vals[0], inverse)
    elif op is SQRT:
        q = vals[0].rational()
        out = None if q is None else sqrt_of_rational(q)
    elif op is POW:
        out = _pow_value(vals[0], vals[1], t)
    if out is not None and t.dtype == INT64:
        q = out.rational()  # an int64 op keeps numpy's wrapping semantics: only values in range are exact
        if q is None or q.denominator != 1 or not INT64_MIN <= q <= INT64_MAX:
            return None
    return out


def _few_nodes(t: Term) -> bool:
    """Whether ``t`` has at most :data:`MAX_NODES` nodes (shared ones counted each time) and no symbol."""
    stack = [t]
    seen = 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > MAX_NODES or (not node.args and node.op is not CONST):
            return False
        stack.extend(node.args)
    return True


#: the radical number of each term read so far (None: not one); terms are immutable, so it never goes stale
_VALUES: weakref.WeakKeyDictionary[Term, Radical | None] = weakref.WeakKeyDictionary()
_UNKNOWN = object()


def radical_value(t: Term) -> Radical | None:
    """The radical number ``t`` stands for, or None (symbols, floats, pi, logs, cube roots, roots of radicals).

    Values are remembered per term, so reading a term whose operands were read before (the
    rewrite driver folds bottom-up) costs one step.
    """
    found = _VALUES.get(t, _UNKNOWN)
    if found is not _UNKNOWN:
        return found  # type: ignore[return-value]
    if t.shape or not _few_nodes(t):
        return None
    # a plain dict for the walk (a weak dict's every lookup makes a weak reference): _VALUES read once an operand
    known: dict[Term, Radical | None] = {}
    made: list[Term] = []
    remembered = _VALUES.get
    stack = [t]
    while stack:  # operands first, each read once (an explicit stack: no recursion)
        node = stack[-1]
        if node in known:
            stack.pop()
            continue
        missing = []
        for a in node.args:
            if a not in known:
                v = remembered(a, _UNKNOWN)
                if v is _UNKNOWN:
                    missing.append(a)
                else:
                    known[a] = v  # type: ignore[assignment]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        ok = not node.shape and node.dtype in (FLOAT64, INT64)
        known[node] = _node_value(node, known) if ok else None
        made.append(node)
    for node in made:
        _VALUES[node] = known[node]
    return known[t]


def _constant(q: Fraction) -> Term | None:
    """The float64-typed constant of ``q``: a rational, or the float of a whole value (None: no float holds it)."""
    if q.denominator != 1:
        return const(q)
    try:
        v = float(q)
    except OverflowError:
        return None
    return const(v) if Fraction(v) == q else None


def _summands(v: Mapping[int, Fraction]) -> list[Term]:
    """``q*sqrt(m)`` for each radical term (ascending ``m``), the rational part last: the canonical sum's order."""
    out = []
    for m in sorted(v):
        q = v[m]
        if m == 1:
            continue
        root = SQRT(const(m))
        out.append(root if q == 1 else MUL(const(q), root))
    if 1 in v:
        out.append(const(v[1]))
    return out


def _sum(parts: list[Term]) -> Term:
    """``((a + b) + c) + ...``: binary sums, as the safe canonical form associates a float sum (a flat
    sum would be re-nested there, and then flattened here again)."""
    out = parts[0]
    for p in parts[1:]:
        out = ADD(out, p)
    return out


def radical_term(v: Radical) -> Term | None:
    """The float64 term of a radical number: the smaller of ``q_1*sqrt(m_1) + ... + q_0`` and
    ``rational(1, d)*(n_1*sqrt(m_1) + ... + n_0)`` (distinct nodes, then operations; the first on a tie).

    None for a whole value no float64 holds exactly."""
    q = v.rational()
    if q is not None:
        return _constant(q)
    first = _sum(_summands(v))
    d = math.lcm(*(c.denominator for c in v.values()))
    if d == 1 or len(v) == 1:
        return first
    second = MUL(const(Fraction(1, d)), _sum(_summands({m: c * d for m, c in v.items()})))
    return second if (second.size, _cost(second)) < (first.size, _cost(first)) else first


def _cost(t: Term) -> int:
    """Operations and symbols of ``t`` (its distinct nodes that are not scalar constants)."""
    return sum(1 for n in postorder([t]) if n.op is not CONST)


def no_larger(new: Term, old: Term) -> bool:
    """Whether ``new`` has no more distinct nodes (constants included) and no more operations than ``old``."""
    return new.size <= old.size and _cost(new) <= _cost(old)


def fold_radicals(t: Term) -> Term | None:
    """``t`` (a float64 term over exact operands) in radical normal form when that is no larger, else None.

    Strictly smaller always; as large only when ``t`` is not a sum or product already (a quotient,
    a power, a difference, a root), so the canonical rules and this one never undo each other; a
    quotient even one node larger (its coefficient), as the division it replaces would round:
    ``1/(1 + sqrt(2)) -> sqrt(2) - 1``, ``sqrt(2)*sqrt(6) -> 2*sqrt(3)``, ``sqrt(2)/2 -> rational(1, 2)*sqrt(2)``.
    """
    if t.dtype != FLOAT64 or not t.args:
        return None
    found = _FOLDED.get(t, _UNKNOWN)
    if found is _UNKNOWN:
        found = _FOLDED[t] = _fold(t)
    return found  # type: ignore[return-value]


#: the result of :func:`fold_radicals` for each term asked about (a pure function of an immutable term)
_FOLDED: weakref.WeakKeyDictionary[Term, Term | None] = weakref.WeakKeyDictionary()


def own_spelling(t: Term) -> bool:
    """Whether ``t`` is a sum (in any order and association) or a product of radical terms with whole
    coefficients: ``sqrt(m)`` or ``k*sqrt(m)`` (int64 ``k`` neither 0 nor 1) for distinct square-free ``m > 1``,
    and at most one int64 constant other than 0. Its value has exactly these terms (the square roots of
    distinct square-free numbers are independent), so its radical form (:func:`radical_term`) is made of the
    same terms and as many sums or more: never smaller, and :func:`fold_radicals` leaves ``t`` without
    reading its value."""
    stack = [t]
    radicands: set[int] = set()
    constant = False
    while stack:
        node = stack.pop()
        if node.op is ADD:
            if len(node.args) < 2:
                return False
            stack.extend(node.args)
            continue
        if node.op is CONST:
            if constant or not _whole_constant(node, 0):
                return False
            constant = True
            continue
        root = node
        if node.op is MUL:
            if len(node.args) != 2 or not _whole_constant(node.args[0], 0, 1):
                return False
            root = node.args[1]
        if root.op is not SQRT or not _whole_constant(root.args[0]):
            return False
        m = root.args[0].attr
        split = None if m <= 1 or m in radicands else squarefree_split(m)
        if split is None or split[0] != 1:
            return False
        radicands.add(m)
    return bool(radicands)


def _whole_constant(t: Term, *excluded: int) -> bool:
    """Whether ``t`` is an int64 constant (a Python int) other than ``excluded``."""
    return t.op is CONST and t.attr.__class__ is int and t.dtype == INT64 and t.attr not in excluded


def clear_radical_caches() -> None:
    """Forget the radical values, folds and factorisations worked out so far (none goes stale)."""
    _VALUES.clear()
    _FOLDED.clear()
    prime_factors.cache_clear()


def _fold(t: Term) -> Term | None:
    """:func:`fold_radicals`, computed: none for a sum or product of radical terms (:func:`own_spelling`)."""
    if (t.op is ADD or t.op is MUL) and own_spelling(t):
        return None
    return _fold_value(t)


def _fold_value(t: Term) -> Term | None:
    """:func:`fold_radicals` from the radical number of ``t``."""
    v = radical_value(t)
    out = None if v is None else radical_term(v)
    if out is None or out is t:
        return None
    if t.op is DIV and out.size <= t.size + 1 and _cost(out) <= _cost(t):
        # a quotient is written exactly even one node larger (its coefficient: sqrt(2)/2 -> rational(1, 2)*sqrt(2)),
        # rather than left to the canonical form's division, which rounds: simplify still returns no larger a term
        return out
    if not no_larger(out, t) or (out.size == t.size and t.op in (ADD, MUL)):
        return None  # larger; or a sum or product as large: the canonical form's own order decides
    return out
