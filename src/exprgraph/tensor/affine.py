"""Index arithmetic: affine forms over loop variables and canonical index terms, on exprgraph.dims.

An index expression is a core int64 term built from loop variables (int64 symbols), integer
constants, ``+ - *`` (by constants), and ``//`` / ``%`` by positive constants. The integer
simplifier is exprgraph.dims's: :func:`linearize` reads a term's dims polynomial (degree 1) as an
affine form ``sum(c_k * atom_k) + c0`` (:class:`~.lin.Lin`, whose Fraction coefficients the index
solver uses) whose atoms are loop variables and floor-division / modulo terms of canonical inner
expressions; :func:`to_term` writes a form back as a canonical term (so equal forms give the very
same interned term), its atoms in loop order. :func:`reduce_atoms` simplifies under loop ranges
and :func:`bounds` (from :mod:`.index_values`) gives the range dims proves.

What stays here is the tensor spelling on top of dims: atoms printed in loop order, remainders
with coefficients nearest 0 (``(2*w - h)%5``, not dims's ``(4*h + 2*w)%5``). All walks are
iterative (the core's postorder).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import lru_cache

from ..core import INT64, Symbol, Term, const, postorder, substitute
from ..core.op import get_op
from ..dims import DimEnv
from ..dims.ranges import ceil_div, floor_div
from .index_values import ANY_INTEGER, NonAffineError, bounds, dims_env, evaluate_index, index_constant
from .lin import Lin, Number

__all__ = [
    "Lin",
    "NonAffineError",
    "linearize",
    "to_term",
    "bounds",
    "index_var",
    "is_var",
    "variables",
    "floordiv_int",
    "ceildiv_int",
    "evaluate_index",
    "reduce_atoms",
    "substitute_var",
]

_ADD, _SUB, _MUL, _NEG = get_op("add"), get_op("sub"), get_op("mul"), get_op("neg")
_FLOORDIV, _MOD = get_op("floordiv"), get_op("mod")
_CONST, _SYMBOL = get_op("const"), get_op("symbol")


def index_var(name: str) -> Term:
    """The loop variable ``name`` (an int64 scalar symbol)."""
    return Symbol(name, INT64)


def is_var(term: Term) -> bool:
    """True for a loop variable (an int64 symbol)."""
    return term.op is _SYMBOL


def variables(term: Term) -> frozenset[Term]:
    """The loop variables an index term uses."""
    return term.free_symbols


#: floor and ceiling division of integers: the integer algebra's own (see exprgraph.dims.ranges)
floordiv_int = floor_div
ceildiv_int = ceil_div


def _int_value(c: Number, what: str) -> int:
    """``c`` as an int (a Fraction must be whole)."""
    if c.__class__ is int:
        return c
    if isinstance(c, Fraction):
        if c.denominator != 1:
            raise ValueError(f"to_term needs {what}")
        return int(c)
    return int(c)


# -- the integer algebra: exprgraph.dims ----------------------------------------------------------------
#
# Index terms are read by the integer simplifier of exprgraph.dims, in an environment where loop
# variables may take any integer value (solved indices can run below 0): its polynomial normal form
# takes out multiples of a divisor, divides by common factors, merges nested quotients, reads
# remainders of remainders, recombines k*(u//c) with u%c (also where u//c was merged: (w//4)%5 +
# 5*(w//20) is w//4), and drops a division whose value stays in one period. A canonical term of
# dims is a polynomial of degree 1 over atoms (variables, floor divisions and remainders by
# constants); this module reads it as a Lin whose atoms are printed the tensor way (see _atom_form).


#: a dims polynomial: monomial (a tuple of (atom, power) pairs, () for the constant) -> coefficient
Poly = dict[tuple[tuple[Term, int], ...], int]


def _poly(term: Term, env: DimEnv = ANY_INTEGER) -> Poly:
    """The dims polynomial of an int64 term under ``env`` (cached by dims per term: read-only)."""
    return env.poly(term)


def _check_fragment(term: Term) -> None:
    """NonAffineError unless ``term`` is in the index fragment."""
    problem = _fragment_problem(term)
    if problem is not None:
        raise NonAffineError(problem)


@lru_cache(maxsize=1 << 16)
def _fragment_problem(term: Term) -> str | None:
    """Why ``term`` is not an index term, or None when it is (iterative, cached)."""
    for node in postorder(term):
        op = node.op
        if op is _SYMBOL or op is _ADD or op is _SUB or op is _NEG:
            continue
        if op is _CONST:
            if node.attr.__class__ not in (int, bool):
                return f"index constant {node.attr!r} is not an integer"
        elif op is _MUL:
            varying = [a for a in node.args if a.free_symbols]
            if len(varying) > 1 and sum(1 for a in varying if index_constant(a) is None) > 1:
                return "an index may multiply a variable only by a constant"
        elif op is _FLOORDIV or op is _MOD:
            div = index_constant(node.args[1])
            if div is None:
                return "the divisor of an index must be a constant"
            if div <= 0:
                return "an index may divide only by a positive constant"
        else:
            return f"an index cannot use {op.name}"
    return None


#: dims atom -> its affine form with atoms printed the tensor way
_forms: dict[Term, Lin] = {}
#: dims atoms whose forms are being worked out (a guard: a form never waits on itself)
_busy: set[Term] = set()


def _atom_form(atom: Term) -> Lin:
    """The affine form of a dims atom: a variable, or a quotient / remainder printed the tensor way.

    dims writes the inner of ``u % c`` with coefficients in ``[0, c)``; the tensor spelling takes
    them in ``(-c/2, c/2]`` (``(2*w - h)%5`` for ``(4*h + 2*w)%5``), which keeps ranges narrow.
    """
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


def _division_form(atom: Term) -> Lin:
    """The form of a dims quotient or remainder atom (see _atom_form)."""
    c = int(atom.args[1].attr)
    p = _poly(atom.args[0])
    inner = _lin_of(p)
    if not (atom in _busy or _renamed(p)):
        # an atom of the inner reads differently in the tensor spelling: divide that inner again
        _busy.add(atom)
        try:
            return _lin_of(_poly(Term(atom.op, (_raw(inner), atom.args[1]), None)))
        finally:
            _busy.discard(atom)
    if atom.op is _MOD:
        # (k*x) % c = ((k - c)*x) % c: the coefficient nearest 0
        centered = Lin({a: k - c if 2 * (k % c) > c else k % c for a, k in inner.coeffs.items()}, inner.const)
        if centered.coeffs != inner.coeffs and atom not in _busy:
            # dims may read the centered inner further (w - 2*(w//2) is w%2): then its reading stands
            p = _poly(Term(_MOD, (_raw(centered), atom.args[1]), None))
            if len(p) != 1 or p.get(((atom, 1),)) != 1:
                _busy.add(atom)
                try:
                    return _lin_of(p)
                finally:
                    _busy.discard(atom)
        inner = centered
    return Lin.atom(Term(atom.op, (_print(inner, ()), atom.args[1]), None))


def _renamed(p: Poly) -> bool:
    """True when every atom of ``p`` has a form of one atom (the form reads as ``p`` with atoms renamed)."""
    for m in p:
        for a, _ in m:
            form = _forms.get(a)
            if form is None or form.const != 0 or len(form.coeffs) != 1 or next(iter(form.coeffs.values())) != 1:
                return False
    return True


def _lin_of(p: Poly) -> Lin:
    """The affine form of a dims polynomial of degree 1 (NonAffineError for a product of atoms)."""
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


def _raw(lin: Lin) -> Term:
    """A term of an integer form, in no particular order (for dims to read)."""
    parts = [
        a if c == 1 else Term(_MUL, (const(_int_value(c, "integer coefficients")), a)) for a, c in lin.coeffs.items()
    ]
    k = _int_value(lin.const, "an integer constant")
    if k or not parts:
        parts.append(const(k))
    return parts[0] if len(parts) == 1 else Term(_ADD, tuple(parts))


def _read_atoms(p: Poly) -> None:
    """Work out the forms of the division atoms of ``p`` innermost first (so no form recurses deeply)."""
    atoms = [a for m in p for a, _ in m if a.op is not _SYMBOL and a not in _forms]
    if atoms:
        for node in postorder(atoms):
            if (node.op is _FLOORDIV or node.op is _MOD) and node not in _forms:
                _atom_form(node)


@lru_cache(maxsize=1 << 16)
def linearize(term: Term) -> Lin:
    """The affine form of an index term (iterative, cached: treat the result as immutable).

    Raises NonAffineError outside the fragment.
    """
    _check_fragment(term)
    p = _poly(term)
    _read_atoms(p)
    return _lin_of(p)


def _sort_key(order: Mapping[Term, int]):
    def key(atom: Term) -> tuple:
        return (order.get(atom, len(order)), str(atom))

    return key


def _plus(acc: Term, piece: Term) -> Term:
    """``acc + piece``, one flat sum when ``acc`` is a sum: ``12*h + 4*w + u``, as it prints and parses."""
    return Term(_ADD, (*acc.args, piece) if acc.op is _ADD else (acc, piece))


def to_term(lin: Lin, order: Sequence[Term] = ()) -> Term:
    """The canonical term of an integer affine form; atoms follow ``order``, then their text."""
    if not _has_division(lin):
        return _print(lin, order)  # a sum of variables is its own canonical form
    return _print(_lin_of(_poly(_raw(lin))), order)


def _has_division(lin: Lin) -> bool:
    """True when an atom of ``lin`` is a quotient or a remainder."""
    for a in lin.coeffs:
        if a.op is not _SYMBOL:
            return True
    return False


def _print(lin: Lin, order: Sequence[Term]) -> Term:
    """The term of a form, atoms in loop order then by their text, positive terms first."""
    rank = {a: i for i, a in enumerate(order)}
    atoms = sorted(lin.coeffs, key=_sort_key(rank))
    parts = [(_int_value(lin.coeffs[a], "integer coefficients"), a) for a in atoms]
    k = _int_value(lin.const, "an integer constant")
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


def substitute_var(lin: Lin, var: Term, form: Lin) -> Lin:
    """``lin`` with the variable ``var`` replaced by the integer form ``form``, inside division atoms too."""
    out = Lin({}, lin.const)
    term = None
    for a, c in lin.coeffs.items():
        if a is var:
            out = out + form.scale(c)
        elif var in a.free_symbols:
            if term is None:
                term = to_term(form)
            out = out + linearize(substitute(a, {var: term})).scale(c)
        else:
            out = out + Lin({a: c})
    return out


def reduce_atoms(term: Term, ranges: Mapping[Term, tuple[int, int]]) -> Term:
    """``term`` with floor divisions and modulos that stay in one period on ``ranges`` removed, canonical.

    If ``k*c <= u < (k+1)*c`` everywhere then ``u // c = k`` and ``u % c = u - k*c``: dims's
    canonical form under the ranges drops those (a remainder as written, or with coefficients
    nearest 0, as well as dims's own spelling). The tensor spelling is read back by dims under the
    ranges until it stays the same (a few rounds).
    """
    _check_fragment(term)
    env = dims_env(ranges)
    order = tuple(ranges)
    cur = term
    for _ in range(8):
        nxt = to_term(_lin_of(_poly(cur, env)), order)
        if nxt is cur or not _has_division(linearize(nxt)):
            return nxt
        cur = nxt
    return cur
