"""The polynomial forms ``simplify(unsafe=True)`` tries: ``expand``, ``factor`` and ``cancel`` of a term.

Each is worked out once per call of ``simplify`` (through the call's ``Run.once``): ``factor`` and ``cancel``
read a term's rational function in lowest terms once, and a rational function met again (a term and
its canonical form often have the same one: ``x*y + x*z`` and ``x*z + x*y``) is not factored again.
A form's term depends on the rational function and on the dtype of the term it came from only. A term
without a quotient is read once, as a polynomial (:func:`~exprgraph.poly.to_poly`), for all three forms:
that polynomial over 1 is its rational function in lowest terms, and expand writes it back, as cancel does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..core import Term, get_op, postorder
from ..core.dtypes import is_float
from ..errors import ExprgraphError
from ..poly import ONE, Budget, Poly, Ratio, from_poly, r_cancel, same_kind, to_poly, to_ratio
from .polynomial import expand, factored
from .rational import fraction_term

__all__ = ["FORMS", "formed", "forms_for", "small_integers", "settled"]

#: the forms, in the order they are tried
FORMS = ("expand", "factor", "cancel")

_NEG, _POW, _TRUEDIV, _CONST = get_op("neg"), get_op("pow"), get_op("truediv"), get_op("const")
_MUL = get_op("mul")
#: the sums, and the products, quotients and powers, of the polynomial algebra
_SUMS = frozenset({get_op("add"), get_op("sub")})
_PRODUCTS = frozenset({get_op("mul"), get_op("truediv"), get_op("pow")})
_RING = _SUMS | _PRODUCTS
#: operands of one sum (through the sums it adds) beyond which every form is tried
_MAX_FLAT = 64


def forms_for(term: Term) -> tuple[str, ...]:
    """The forms (of :data:`FORMS`) that may reshape ``term`` (:func:`_forms_for`, a lone negation of an atom
    read as the monomial it is)."""
    return _forms_for(term, True)


def _forms_for(term: Term, atom_negations: bool) -> tuple[str, ...]:
    """The forms (of :data:`FORMS`) that may reshape ``term``, by a check over its nodes before any algebra.

    All three where a product, quotient or power has a sum operand, a product or quotient is raised
    to a power, a power is negative, a quotient has an atom above and below the line, a sum has like
    operands or two constants (through the sums it adds), a negation is met (``(-x)**2``: expand
    writes ``x**2``) or an operation on constants alone; ``factor`` (and ``cancel`` where a quotient
    is met: else it writes what ``expand`` does) only where, besides, a sum has a product, quotient or
    power operand (``sin(x)**2 + cos(x)**2``: a sum of monomials, expanded already). Else the rational
    function of ``term`` and of each argument of its atoms is a sum of distinct atoms and at most one
    constant, or a product of powers of distinct atoms over others (``max(x + 1, x)``,
    ``2*sin(x)*cos(x)``), which no form reshapes.

    With ``atom_negations``, a negation of an atom that is the term or an argument of atoms only
    (``-cos(2*x)``, ``exp(-x)``) is the monomial ``(-1)*a``, which each form writes as it is: only a
    negation under a sum, product, quotient, power or negation, or of anything but an atom, gives all three.
    """
    expanded, quotient = True, False
    operands: dict[Term, list[Term]] = {}  # each sum's operands, through the sums it adds
    lone: set[Term] = set()  # negations of atoms met so far, each allowed while no sum, product or negation uses it
    for node in postorder((term,)):
        op = node.op
        if lone and (op is _NEG or op in _RING) and any(a in lone for a in node.args):
            return FORMS  # -a under the polynomial algebra (``(-x)**2``, ``x + -x``): as any negation
        if op is _NEG and atom_negations and _is_atom(node.args[0]):
            lone.add(node)  # -a alone, or inside an atom (``exp(-x)``): (-1)*a, written as it is by every form
            continue
        if op is _NEG or (op in _RING and all(a.op is _CONST for a in node.args)):
            return FORMS  # a negation (``(-x)**2``), or constants the passes left unfolded (``1**-1`` in integers)
        if op in _SUMS:
            flat = operands[node] = [u for a in node.args for u in (operands[a] if a.op in _SUMS else (a,))]
            if len(set(flat)) < len(flat) or sum(u.op is _CONST for u in flat) > 1 or len(flat) > _MAX_FLAT:
                return FORMS  # like terms (``(x + x) + (y + y)``: factor writes ``2*(x + y)``), or constants
            if expanded is True and any(a.op in _PRODUCTS for a in node.args):
                expanded = False  # a sum of monomials: factor and cancel may reshape it
        elif op is _TRUEDIV:
            quotient = True
        if op in _PRODUCTS and (
            any(a.op in _SUMS for a in node.args)  # (x + 1)*y, (x + 1)**2, (x + 1)/y
            or (op is _POW and (node.args[0].op in _PRODUCTS or _negative(node.args[1])))  # (x*y)**2, x**-1
            or (op is _TRUEDIV and not _atoms_of(node.args[0]).isdisjoint(_atoms_of(node.args[1])))  # x*y/x
        ):
            return FORMS
    if expanded:
        return ()
    return ("factor", "cancel") if quotient else ("factor",)  # without a quotient, cancel writes what expand does


def _is_atom(t: Term) -> bool:
    """Whether ``t`` is an atom of the polynomial algebra other than a constant (a symbol, ``sin(x)``)."""
    return t.op is not _NEG and t.op is not _CONST and t.op not in _RING


def _negative(t: Term) -> bool:
    """Whether ``t`` is a negative scalar constant (a power by it is a quotient the forms write as one)."""
    return t.op is _CONST and not t.shape and t.attr.__class__ in (int, float) and t.attr < 0


def _atoms_of(t: Term) -> set[Term]:
    """The factors of the product of powers ``t`` other than constants (through products, quotients, powers)."""
    out: set[Term] = set()
    stack = [t]
    while stack:
        u = stack.pop()
        if u.op in _PRODUCTS or u.op is _NEG:
            stack.extend(u.args)
        elif u.op is not _CONST:
            out.add(u)
    return out


#: ``once(key, make)`` (a call's :meth:`~.simplify.Run.once`): ``make()`` the first time ``key`` is asked
#: for in the call, the same value after
Once = Callable[[tuple, Callable[[], Any]], Any]


def _now(key: tuple, make: Callable[[], Any]) -> Any:
    """``make()`` (the ``once`` of a call without a memo: every time)."""
    return make()


def formed(name: str, base: Term, once: Once | None = None) -> Term:
    """The form ``name`` (one of :data:`FORMS`) of ``base``; raises what the polynomial algebra raises
    past its limits (:class:`~exprgraph.errors.TermTooLargeError`, ValueError, ZeroDivisionError).
    With ``once``, each rational function is worked out once a call."""
    work = once or _now
    if name == "expand":
        poly = _polynomial(base, work)
        if poly is None:  # a quotient: expand reads its divisions as atoms (``x/(x + 1)``), cancel and factor not
            return expand(base)
        return same_kind(_written(poly, frozenset(poly.items()), base, work), base)
    ratio, key = _lowest_terms(base, work)
    if name == "cancel" and len(ratio[1]) == 1 and ratio[1].get(ONE) == 1:
        return same_kind(_written(ratio[0], key[0], base, work), base)  # fraction_term of ``(n, 1)``: from_poly(n)

    def make() -> Term:
        return factored(ratio, base) if name == "factor" else fraction_term(ratio, base)

    return same_kind(work((name, key, base.dtype, base.shape), make), base)


def _written(poly: Poly, key: frozenset, like: Term, once: Once) -> Term:
    """``from_poly(poly, like=like)`` once a call for a polynomial (its items ``key``) and ``like``'s dtype, which
    is all from_poly reads of ``like`` (a lone constant takes it): expand's form, and cancel's over 1."""
    return once(("written", key, like.dtype), lambda: from_poly(poly, like=like))


def _lowest_terms(base: Term, once: Once) -> tuple[Ratio, tuple]:
    """``base``'s rational function in lowest terms and a hashable key of it (once a call; a failure too)."""

    def make() -> Any:
        try:
            poly = _polynomial(base, once)
            if poly is not None:  # a polynomial over 1 is in lowest terms: r_cancel's gcd with 1 is 1
                return ((poly, {ONE: 1}), (frozenset(poly.items()), _ONE_KEY))
            ratio = r_cancel(to_ratio(base))
            return (ratio, (frozenset(ratio[0].items()), frozenset(ratio[1].items())))
        except (ExprgraphError, ValueError, ZeroDivisionError) as e:  # kept: raised again for the other form
            return e

    found = once(("ratio", base), make)
    if isinstance(found, Exception):
        raise found
    return found


#: the key of the denominator 1
_ONE_KEY = frozenset({ONE: 1}.items())


def _polynomial(base: Term, once: Once) -> Poly | None:
    """``to_poly(base)`` when ``base`` has no quotient (:func:`_mul_operands`), where it is also the numerator of
    ``to_ratio(base)`` over 1 (once a call; raises what ``to_poly`` raises); None for a base with a quotient.

    Without a division nor a negative power, ``to_ratio`` does the ring operations of ``to_poly`` on the
    numerators (the same values, in the same order), each over 1, and writes the atoms' arguments back as
    ``to_poly`` does (``from_ratio`` of ``n/1`` is ``from_poly(n)``). Its budget spends ``to_poly``'s plus 1
    per operand of a product beyond the first (``1*1`` below the line): where ``to_poly`` leaves less than
    that, the long way decides (it may run out where ``to_poly`` did not).
    """

    def make() -> Any:
        extra = _mul_operands(base)
        if extra is None:
            return None
        budget = Budget()
        try:
            poly = to_poly(base, budget)
        except (ExprgraphError, ValueError, ZeroDivisionError) as e:  # to_ratio, spending more, raises as well
            return e
        return poly if budget.left >= extra else None

    found = once(("poly", base), make)
    if isinstance(found, Exception):
        raise found
    return found


def _mul_operands(term: Term) -> int | None:
    """The operands of products of ``term`` beyond the first of each, None if it has a quotient: a division or
    a power by anything but a constant int >= 0 (``x**-1``, ``x**y``, ``x**2.0``: a safe overstatement)."""
    extra = 0
    for node in postorder((term,)):
        op = node.op
        if op is _TRUEDIV:
            return None
        if op is _POW:
            k = node.args[1]
            if k.op is not _CONST or k.attr.__class__ is not int or k.attr < 0:
                return None
        elif op is _MUL:
            extra += len(node.args) - 1
    return extra


def small_integers(term: Term) -> bool:
    """Whether every scalar constant of ``term`` is an integer of at most 2**53 (exact as a float).

    The polynomial forms compute with exact coefficients: from floats such as 1e200 they make
    integers no float holds, whose written form then overflows or underflows where the input does not.
    """
    for t in postorder((term,)):
        if t.op.name == "const" and not t.shape:
            v = t.attr
            if isinstance(v, float) and not (math.isfinite(v) and v == int(v)):
                return False
            if abs(int(v)) > 2**53:
                return False
    return True


def settled(term: Term, forms: tuple[str, ...] | None = None) -> bool:
    """Whether no form reshapes ``term`` (:func:`forms_for`, or ``forms`` if known) and its constants are folded:
    no operation on constants alone, no division by a constant nor power of one (the passes leave ``(-1)**-1``
    and ``x/1**-1`` of integers, numpy raising on a negative integer power; a form folds them). A float
    operation on constants alone the passes leave is an exact number no fold simplifies (``sqrt(3)``): an
    atom to the forms too."""
    if forms_for(term) if forms is None else forms:
        return False
    for t in postorder((term,)):
        if t.args and (
            (all(a.op is _CONST for a in t.args) and not is_float(t.dtype))
            or (t.op is _TRUEDIV and t.args[1].op is _CONST)
            or (t.op is _POW and t.args[0].op is _CONST)
        ):
            return False
    return True
