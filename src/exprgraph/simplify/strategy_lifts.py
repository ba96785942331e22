"""Unsafe rules lifted into the default strength where their stated condition is proven.

An unsafe rule is unsafe for a reason: ``x - x -> 0`` is nan, not 0, for an infinite ``x``;
``x/x -> 1`` needs a finite non-zero ``x``; ``sin(u)**2 + cos(u)**2 -> 1`` is nan at an infinite
``u``. Each :class:`Lift` below names the unsafe rule it lifts, states that reason as a
*condition* on one subterm (a name of :data:`CONDITIONS`), and finds in a canonical-form node
the subterm the condition is about. :func:`holds` is the one place that decides: it reads the
sign/interval analysis (:func:`~exprgraph.simplify.signs.facts_of`), which knows what the
symbols' assumptions (``Symbol("x", finite=True)``, bounds, SymPy's ``positive``) imply for
every subterm, rounding and overflow included. Where the condition is proven, the lifted rule is
exact (or one rounding of the exact value), so it runs at the default strength; where it is not
(no assumption, or a subterm that may overflow such as ``3*x`` of a finite ``x``), the node stays.

The e-graph stage lifts its own unsafe identities through the same conditions (its rule text
names them: ``sin(a)**2 + cos(a)**2 -> 1 where finite(a)``, see :data:`CONDITION_FUNCTIONS`).

Identities whose float input cancels catastrophically are not lifted either, though exact for finite
arguments: ``1/cos(u)**2 - tan(u)**2`` near ``u = pi/2`` and ``cosh(u)**2 - sinh(u)**2`` for ``u`` over
20 compute a difference of huge squares, far from the 1 the identity gives. Polynomial expansion
and cancellation are not lifted: an expanded or cancelled form rounds differently, and an
intermediate such as ``x**2`` overflows for finite ``x`` above 1.3e154 where the cancelled form
does not, so equality would need bounded symbols on every subterm of both forms (and a proof
that the cancelled factor is not zero on the box); they stay with ``unsafe=True``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from ..core import Term, get_op
from ..core.assumptions import assumptions_of
from ..core.dtypes import is_float
from .numbers import const_like, number
from .signs import facts_of

__all__ = ["Lift", "LIFTS", "CONDITIONS", "CONDITION_FUNCTIONS", "holds", "has_assumptions"]

MUL, POW = get_op("mul"), get_op("pow")
SIN, COS = get_op("sin"), get_op("cos")


def _finite(t: Term) -> bool:
    return facts_of(t).finite


def _finite_nonzero(t: Term) -> bool:
    f = facts_of(t)
    return f.finite and f.nonzero


def _nonnegative(t: Term) -> bool:
    return facts_of(t).nonnegative


#: the conditions an unsafe rule may state, by name: each a test of one subterm's proven facts
CONDITIONS: dict[str, Callable[[Term], bool]] = {
    "finite": _finite,  # a finite number (not inf, not nan)
    "finite_nonzero": _finite_nonzero,  # a finite number other than 0
    "nonnegative": _nonnegative,  # >= 0 or +inf, never nan
}


def holds(condition: str, term: Term) -> bool:
    """Whether ``condition`` (a name of :data:`CONDITIONS`) is proven for ``term``'s value: the one decider."""
    return CONDITIONS[condition](term)


def _value_test(name: str) -> Callable[[object], bool]:
    """The condition ``name`` on a bound value (a term; anything else is not proven)."""

    def test(v: object) -> bool:
        return isinstance(v, Term) and holds(name, v)

    test.__name__ = name
    return test


#: the conditions as functions of rule text (``... where finite(a)``), for the e-graph's rules
CONDITION_FUNCTIONS: dict[str, Callable[[object], bool]] = {name: _value_test(name) for name in CONDITIONS}


def has_assumptions(symbols: frozenset[Term]) -> bool:
    """Whether any of ``symbols`` carries assumptions (else no condition can be proven of a non-constant)."""
    return any(assumptions_of(s) is not None for s in symbols)


@dataclass(frozen=True)
class Lift:
    """An unsafe rule lifted under a condition: ``find(node) -> (subjects, result)`` where the rewrite
    ``node -> result`` is exact once ``condition`` holds for each subject; None when the node is not its shape."""

    name: str
    lifts: str
    condition: str
    ops: tuple[str, ...]
    doc: str
    find: Callable[[Term], tuple[tuple[Term, ...], Term] | None]

    def __call__(self, t: Term) -> Term | None:
        """The rewritten node, or None (not the rule's shape, or the condition not proven)."""
        found = self.find(t)
        if found is None:
            return None
        subjects, result = found
        return result if all(holds(self.condition, s) for s in subjects) else None


def _number_like(value: int | float | Fraction, t: Term) -> Term | None:
    """The number ``value`` as a constant of ``t``'s dtype (``0.0`` for a float ``t``, ``0`` for an int one)."""
    if is_float(t.dtype) and value.__class__ is int:
        value = float(value)
    return const_like(value, t)


def _pair(t: Term) -> tuple[Term, Term] | None:
    """The two operands of a binary node."""
    return (t.args[0], t.args[1]) if len(t.args) == 2 else None


def _zero_unit(t: Term) -> tuple[tuple[Term, ...], Term] | None:
    # c*r + (-c)*r -> 0: (-c)*r is exactly -(c*r) (IEEE rounding is symmetric), so the sum is exactly +0.0
    # where c*r is finite (round to nearest), nan where it is infinite: x - x -> 0 for a finite x
    pair = _pair(t)
    if pair is None:
        return None
    (c1, r1), (c2, r2) = _scaled(pair[0]), _scaled(pair[1])
    if r1 == r2 and c1 == -c2 and c1 != 0:  # type: ignore[operator]
        zero = _number_like(0, t)
        return None if zero is None else (pair, zero)  # both operands finite (either may round apart)
    return None


def _scaled(t: Term) -> tuple[object, tuple[Term, ...]]:
    """``(c, factors)`` for a product ``c*f1*f2...`` of a number ``c`` (``c*(f1*f2)`` too), else
    ``(1, factors of t)``: the same factors for ``x*y``, ``(-1)*x*y`` and ``(-1)*(x*y)`` (no term is built)."""
    c: object = 1
    factors: tuple[Term, ...] = (t,)
    if t.op is MUL:
        k = number(t.args[0])
        c, factors = (1, t.args) if k is None else (k, t.args[1:])
    if len(factors) == 1 and factors[0].op is MUL and number(factors[0].args[0]) is None:
        factors = factors[0].args
    return c, factors


def _one_unit(t: Term) -> tuple[tuple[Term, ...], Term] | None:
    # r * r**-1 -> 1: r/r is exactly 1 for a finite non-zero r (0/0 and inf/inf are nan)
    pair = _pair(t)
    if pair is None:
        return None
    for a, b in (pair, pair[::-1]):
        if b.op is POW and b.args[0] is a and number(b.args[1]) == -1:
            one = _number_like(1, t)
            return None if one is None else ((a,), one)
    return None


def _squared(t: Term, op: object) -> Term | None:
    """``u`` for ``op(u)**2``, else None."""
    if t.op is POW and number(t.args[1]) == 2 and t.args[0].op is op:
        return t.args[0].args[0]
    return None


def _pythagoras(t: Term) -> tuple[tuple[Term, ...], Term] | None:
    # c*sin(u)**2 + c*cos(u)**2 -> c: the identity, exact for finite u (sin and cos of a float are
    # within an ulp of their true values, so the input is within 3 ulps of c and c is its exact value)
    pair = _pair(t)
    if pair is None:
        return None
    (c1, fa), (c2, fb) = _scaled(pair[0]), _scaled(pair[1])
    if c1 != c2 or len(fa) != 1 or len(fb) != 1:
        return None
    for p, q in ((fa[0], fb[0]), (fb[0], fa[0])):
        u = _squared(p, SIN)
        if u is not None and _squared(q, COS) is u:
            if not _finite_number(c1):
                return None
            k = _number_like(c1, t)  # type: ignore[arg-type]
            return None if k is None else ((u,), k)
    return None


def _finite_number(c: object) -> bool:
    """Whether the number ``c`` is finite."""
    try:
        return abs(float(c)) < float("inf")  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return False


#: the lifted rules of the canonical pass, each naming the unsafe rule it lifts and its condition
LIFTS: list[Lift] = [
    Lift("zero_unit_finite", "cancel_sum", "finite", ("add",), "x - x -> 0 for a finite x", _zero_unit),
    Lift("one_unit_finite", "cancel_product", "finite_nonzero", ("mul",), "x/x -> 1, finite non-zero x", _one_unit),
    Lift("pythagoras_finite", "trig_sum", "finite", ("add",), "sin(u)**2 + cos(u)**2 -> 1, finite u", _pythagoras),
]
