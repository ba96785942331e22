"""The tensor spelling of dims's canonical index polynomials: affine forms and terms in loop order.

exprgraph.dims computes index values (:mod:`.index_arith`); a canonical value is a polynomial of
degree 1 over atoms (loop variables, floor divisions and remainders by constants). This module is
the edge where such a polynomial becomes what a kernel shows: :func:`lin_of_poly` reads it as an
affine form (:class:`~.lin.Lin`) whose division atoms are spelled the tensor way, and
:func:`print_lin` writes a form as a term with its atoms in loop order and positive terms first.

The one spelling difference from dims: dims writes the inner of ``u % c`` with coefficients in
``[0, c)``; the tensor spelling takes them in ``(-c/2, c/2]`` (``(2*w - h)%5`` for dims's
``(4*h + 2*w)%5``), which keeps the ranges of remainders narrow. Every reading is dims's
(:meth:`~exprgraph.dims.DimEnv.poly`); nothing here simplifies. Walks are iterative.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Final

from ..core import Term, const, postorder
from ..core.op import Op, get_op
from ..dims import DimArith
from .index_values import ANY_INTEGER, NonAffineError
from .lin import Lin, Number

__all__ = ["Poly", "lin_of_poly", "print_lin", "value_of_lin", "as_term", "or_term", "has_division", "int_value"]

_ADD, _SUB, _MUL, _NEG = get_op("add"), get_op("sub"), get_op("mul"), get_op("neg")
_FLOORDIV, _MOD = get_op("floordiv"), get_op("mod")
_CONST, _SYMBOL = get_op("const"), get_op("symbol")

#: a dims polynomial: monomial (a tuple of (atom, power) pairs, () for the constant) -> coefficient
Poly = dict[tuple[tuple[Term, int], ...], int]


def int_value(c: Number, what: str) -> int:
    """``c`` as an int (a Fraction must be whole)."""
    if c.__class__ is int:
        return c
    if isinstance(c, Fraction):
        if c.denominator != 1:
            raise ValueError(f"to_term needs {what}")
        return int(c)
    return int(c)


#: dims's arithmetic where every loop variable is any integer
_DIMS: Final = DimArith(env=ANY_INTEGER)


def _poly(term: Term) -> Poly:
    """The dims polynomial of an int64 term, loop variables any integer (cached by dims: read-only)."""
    return ANY_INTEGER.poly(term)


#: dims atom -> its affine form with atoms spelled the tensor way
_forms: dict[Term, Lin] = {}
#: dims atoms whose forms are being worked out (a guard: a form never waits on itself)
_busy: set[Term] = set()


def _atom_form(atom: Term) -> Lin:
    """The affine form of a dims atom: a variable, or a quotient / remainder spelled the tensor way."""
    form = _forms.get(atom)
    if form is not None:
        return form
    if atom.op is _SYMBOL:
        form = Lin.atom(atom)
    elif (atom.op is _FLOORDIV or atom.op is _MOD) and atom.args[1].op is _CONST:
        form = _division_form(atom)
    else:
        raise NonAffineError(f"an index cannot use {atom.op.name}")
    if len(_forms) > 1 << 16:
        _forms.clear()
    _forms[atom] = form
    return form


def _reading(atom: Term, p: Poly) -> Lin:
    """The form of ``p`` read while ``atom`` is busy (so its own form is not waited on)."""
    _busy.add(atom)
    try:
        return lin_of_poly(p)
    finally:
        _busy.discard(atom)


def _division_form(atom: Term) -> Lin:
    """The form of a dims quotient or remainder atom (see the module doc)."""
    c = int(atom.args[1].attr)
    p = _poly(atom.args[0])
    inner = lin_of_poly(p)
    if not (atom in _busy or _renamed(p)):
        # an atom of the inner reads differently in the tensor spelling: dims divides that inner again
        return _reading(atom, _divided(atom.op, inner, c))
    if atom.op is _MOD:
        # (k*x) % c = ((k - c)*x) % c: the coefficient nearest 0
        centered = Lin({a: k - c if 2 * (k % c) > c else k % c for a, k in inner.coeffs.items()}, inner.const)
        if centered.coeffs != inner.coeffs and atom not in _busy:
            # dims may read the centered inner further (w - 2*(w//2) is w%2): then its reading stands
            p = _divided(_MOD, centered, c)
            if len(p) != 1 or p.get(((atom, 1),)) != 1:
                return _reading(atom, p)
        inner = centered
    return Lin.atom(Term(atom.op, (print_lin(inner, ()), atom.args[1]), None))


def _divided(op: Op, inner: Lin, c: int) -> Poly:
    """The polynomial of ``inner // c`` or ``inner % c`` as dims computes it (DimArith on the form's value)."""
    d = _DIMS
    value = value_of_lin(d, inner)
    out = or_term(d.floordiv(value, c) if op is _FLOORDIV else d.mod(value, c), op, (value, c))
    if isinstance(out, int):
        return {(): out} if out else {}
    return _poly(out)


def value_of_lin(d: DimArith, lin: Lin) -> int | Term:
    """The value of an integer affine form, computed by ``d`` (its atoms are int64 terms).

    The form is the solver's (:class:`~.lin.Lin`), not a value of dims: it enters dims once, as the
    term of its sum read by :meth:`~exprgraph.dims.DimArith.simplify` (one reading is cheaper than
    a product per atom and a sum, each building its canonical term).
    """
    if not lin.coeffs:
        return int_value(lin.const, "an integer constant")
    parts = [
        a if c == 1 else Term(_MUL, (const(int_value(c, "integer coefficients")), a)) for a, c in lin.coeffs.items()
    ]
    k = int_value(lin.const, "an integer constant")
    if k:
        parts.append(const(k))
    term = parts[0] if len(parts) == 1 else Term(_ADD, tuple(parts))
    value = d.simplify(term)
    return term if value is None else value  # (None: too large for DimArith, read whole at the edge)


def as_term(value: int | Term) -> Term:
    """The term of a value (a constant for an int)."""
    return const(value) if value.__class__ is int else value  # type: ignore[return-value]


def or_term(value: int | Term | None, op: Op, operands: Sequence[int | Term]) -> int | Term:
    """DimArith's value, or, when it gave up (a term too large to follow), the term of the operation:
    dims reads it whole when it is needed, as any index term."""
    if value is not None:
        return value
    return Term(op, tuple(as_term(v) for v in operands), None)


def _renamed(p: Poly) -> bool:
    """True when every atom of ``p`` has a form of one atom (the form reads as ``p`` with atoms renamed)."""
    for m in p:
        for a, _ in m:
            form = _forms.get(a)
            if form is None or form.const != 0 or len(form.coeffs) != 1 or next(iter(form.coeffs.values())) != 1:
                return False
    return True


def _read_atoms(p: Poly) -> None:
    """Work out the forms of the division atoms of ``p`` innermost first (so no form recurses deeply)."""
    atoms = [a for m in p for a, _ in m if a.op is not _SYMBOL and a not in _forms]
    if atoms:
        for node in postorder(atoms):
            if (node.op is _FLOORDIV or node.op is _MOD) and node not in _forms:
                _atom_form(node)


def lin_of_poly(p: Poly) -> Lin:
    """The affine form of a dims polynomial of degree 1, atoms spelled the tensor way (NonAffineError
    for a product of atoms)."""
    _read_atoms(p)
    coeffs: dict[Term, Number] = {}
    k: Number = 0
    for m, c in p.items():
        if not m:
            k += c
            continue
        if len(m) != 1 or m[0][1] != 1:
            raise NonAffineError("an index may multiply a variable only by a constant")
        form = _atom_form(m[0][0])
        for a, d in form.coeffs.items():
            coeffs[a] = coeffs.get(a, 0) + c * d
        k += c * form.const
    return Lin(coeffs, k)


def has_division(lin: Lin) -> bool:
    """True when an atom of ``lin`` is a quotient or a remainder."""
    for a in lin.coeffs:
        if a.op is not _SYMBOL:
            return True
    return False


def _sort_key(order: Mapping[Term, int]) -> Callable[[Term], tuple[int, str]]:
    def key(atom: Term) -> tuple[int, str]:
        return (order.get(atom, len(order)), str(atom))

    return key


def _plus(acc: Term, piece: Term) -> Term:
    """``acc + piece``, one flat sum when ``acc`` is a sum: ``12*h + 4*w + u``, as it prints and parses."""
    return Term(_ADD, (*acc.args, piece) if acc.op is _ADD else (acc, piece))


def print_lin(lin: Lin, order: Sequence[Term]) -> Term:
    """The term of an integer form, atoms in loop order then by their text, positive terms first."""
    rank = {a: i for i, a in enumerate(order)}
    atoms = sorted(lin.coeffs, key=_sort_key(rank))
    parts = [(int_value(lin.coeffs[a], "integer coefficients"), a) for a in atoms]
    k = int_value(lin.const, "an integer constant")
    # positive terms first keeps ``h - r`` from printing as ``-r + h``
    parts.sort(key=lambda ca: ca[0] < 0)
    acc: Term | None = None
    if parts and parts[0][0] < 0 and k > 0:
        acc = const(k)
        k = 0
    for c, a in parts:
        mag = abs(c)
        piece = a if mag == 1 else Term(_MUL, (const(mag), a))
        if acc is None:
            acc = piece if c > 0 else Term(_NEG, (piece,))
        elif c > 0:
            acc = _plus(acc, piece)
        else:
            acc = Term(_SUB, (acc, piece))
    if acc is None:
        return const(k)
    if k > 0:
        acc = _plus(acc, const(k))
    elif k < 0:
        acc = Term(_SUB, (acc, const(-k)))
    return acc
