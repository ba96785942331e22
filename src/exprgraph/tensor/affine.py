"""Index arithmetic: affine forms over loop variables, canonical index terms, value ranges.

An index expression is a core int64 term built from loop variables (int64 symbols), integer
constants, ``+ - *`` (by constants), and ``//`` / ``%`` by positive constants. :func:`linearize`
reads it as an affine form ``sum(c_k * atom_k) + c0`` whose atoms are loop variables and
floor-division / modulo terms of canonical inner expressions; :func:`to_term` writes a form back
as a canonical term (so equal forms give the very same interned term). :func:`bounds` gives the
inclusive range of values of a term when each variable ranges over ``[lo, hi)``. All walks are
iterative (the core's postorder).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import lru_cache
from math import gcd

from ..core import INT64, Symbol, Term, const, postorder, substitute
from ..core.op import get_op
from ..dims.ranges import ceil_div, floor_div
from .index_values import NonAffineError, bounds, evaluate_index

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
]

Number = int | Fraction

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


class Lin:
    """An affine form ``sum(coeffs[atom] * atom) + const`` (atoms: variables, div/mod terms)."""

    __slots__ = ("coeffs", "const")

    def __init__(self, coeffs: Mapping[Term, Number] | None = None, const: Number = 0) -> None:
        self.coeffs: dict[Term, Number] = {a: c for a, c in (coeffs or {}).items() if c != 0}
        self.const: Number = const

    @staticmethod
    def atom(term: Term) -> Lin:
        """The form ``1*term``."""
        return Lin({term: 1}, 0)

    def __add__(self, other: Lin) -> Lin:
        out = dict(self.coeffs)
        for a, c in other.coeffs.items():
            out[a] = out.get(a, 0) + c
        return Lin(out, self.const + other.const)

    def __sub__(self, other: Lin) -> Lin:
        return self + other.scale(-1)

    def scale(self, k: Number) -> Lin:
        """``k`` times this form."""
        if k == 0:
            return Lin({}, 0)
        return Lin({a: c * k for a, c in self.coeffs.items()}, self.const * k)

    @property
    def is_const(self) -> bool:
        """True when no atom remains."""
        return not self.coeffs

    def coeff(self, atom: Term) -> Number:
        """The coefficient of ``atom`` (0 when absent)."""
        return self.coeffs.get(atom, 0)

    def substitute(self, atom: Term, form: Lin) -> Lin:
        """Replace ``atom`` by ``form``."""
        c = self.coeffs.get(atom, 0)
        if c == 0:
            return self
        rest = Lin({a: k for a, k in self.coeffs.items() if a is not atom}, self.const)
        return rest + form.scale(c)

    def substitute_deep(self, var: Term, form: Lin) -> Lin:
        """Replace the variable ``var`` by the integer form ``form``, inside division atoms too."""
        out = Lin({}, self.const)
        term = None
        for a, c in self.coeffs.items():
            if a is var:
                out = out + form.scale(c)
            elif var in a.free_symbols:
                if term is None:
                    term = to_term(form)
                out = out + linearize(substitute(a, {var: term})).scale(c)
            else:
                out = out + Lin({a: c})
        return out

    def denominator(self) -> int:
        """Least common denominator of the coefficients and the constant."""
        d = 1
        for c in (*self.coeffs.values(), self.const):
            if isinstance(c, Fraction):
                d = d * c.denominator // gcd(d, c.denominator)
        return d

    def key(self) -> tuple:
        """A hashable identity of the form."""
        return (frozenset(self.coeffs.items()), self.const)

    def __repr__(self) -> str:
        parts = [f"{c}*{a}" for a, c in self.coeffs.items()]
        return f"Lin({' + '.join(parts) or '0'} + {self.const})"


def _const_value(lin: Lin, what: str) -> int:
    if not lin.is_const:
        raise NonAffineError(f"{what} must be a constant")
    value = lin.const
    if isinstance(value, Fraction):
        if value.denominator != 1:
            raise NonAffineError(f"{what} is not an integer")
        value = int(value)
    return int(value)


@lru_cache(maxsize=1 << 16)
def linearize(term: Term) -> Lin:
    """The affine form of an index term (iterative, cached: treat the result as immutable).

    Raises NonAffineError outside the fragment.
    """
    forms: dict[Term, Lin] = {}
    for node in postorder(term):
        op = node.op
        if op is _SYMBOL:
            forms[node] = Lin.atom(node)
        elif op is _CONST:
            value = node.attr
            if value.__class__ not in (int, bool):
                raise NonAffineError(f"index constant {value!r} is not an integer")
            forms[node] = Lin({}, int(value))
        elif op is _ADD:
            acc = Lin()
            for a in node.args:
                acc = acc + forms[a]
            forms[node] = acc
        elif op is _SUB:
            forms[node] = forms[node.args[0]] - forms[node.args[1]]
        elif op is _NEG:
            forms[node] = forms[node.args[0]].scale(-1)
        elif op is _MUL:
            acc = Lin({}, 1)
            for a in node.args:
                f = forms[a]
                if f.is_const:
                    acc = acc.scale(f.const)
                elif acc.is_const:
                    acc = f.scale(acc.const)
                else:
                    raise NonAffineError("an index may multiply a variable only by a constant")
            forms[node] = acc
        elif op is _FLOORDIV or op is _MOD:
            inner, div = forms[node.args[0]], forms[node.args[1]]
            c = _const_value(div, "the divisor of an index")
            if c <= 0:
                raise NonAffineError("an index may divide only by a positive constant")
            forms[node] = _divmod_form(op is _FLOORDIV, inner, c)
        else:
            raise NonAffineError(f"an index cannot use {op.name}")
    return forms[term]


def _divmod_form(floor: bool, inner: Lin, c: int) -> Lin:
    """``inner // c`` or ``inner % c`` with the multiples of ``c`` taken out of the atom.

    ``(c*m + u) // c = m + u // c`` and ``(c*m + u) % c = u % c`` for integer ``m``.
    """
    inner = _fold_mod(inner)  # u - c*(u//c) is u % c: read it so before dividing
    folded_atoms = inner.coeffs
    if not floor:
        inner = _unwrap_mods(inner, c)
    whole, rest = _split_multiples(floor, inner, c)
    k0 = _const_value(Lin({}, inner.const), "an index")
    if not rest:
        # only a constant remainder: 0 <= k0 % c < c, so its floor quotient is 0
        return Lin(whole, k0 // c) if floor else Lin({}, k0 % c)
    inner_rest = Lin(rest, k0 % c)
    # (the fold rules look at the atoms only: refold only when they changed since the fold above)
    folded = inner_rest if rest == folded_atoms else _fold_mod(inner_rest)
    if folded is not inner_rest:
        # taking out the multiples of c can leave a foldable remainder: (4*(w//2) - 5*w) % 6 keeps
        # w - 2*(w//2) = w % 2, so divide the folded form (else the atom would hold a non-canonical inner)
        part = _divmod_form(floor, folded, c)
        return Lin(whole, k0 // c) + part if floor else part
    if floor and len(rest) == 1:
        ((atom, k),) = rest.items()
        if k == 1 and atom.op is _FLOORDIV:
            # decided on what is left once the multiples of c are out, so that nested divisions merge
            # whatever the whole part was: (u//a + r)//c = (u + a*r)//(a*c)  (while (u//a + r) % c stays)
            u, den = atom.args
            d = int(den.attr)
            return Lin(whole, k0 // c) + _divmod_form(True, linearize(u) + Lin({}, d * (k0 % c)), d * c)
    g = c
    for k in rest.values():
        g = gcd(g, int(k))
    if g > 1:
        # with r = k0 % c:  (g*u + r) // (g*m) = (u + r//g) // m  and
        #                   (g*u + r) % (g*m) = g*((u + r//g) % m) + r % g
        r = k0 % c
        reduced = Lin({a: int(k) // g for a, k in rest.items()}, r // g)
        part = _divmod_form(floor, reduced, c // g)
        return Lin(whole, k0 // c) + part if floor else part.scale(g) + Lin({}, r % g)
    q = _one_period(rest, k0, c)
    if q is not None:
        return Lin(whole, k0 // c + q) if floor else inner_rest - Lin({}, q * c)
    atom = Term(_FLOORDIV if floor else _MOD, (to_term(inner_rest), const(c)), None)
    if floor:
        return Lin(whole, k0 // c) + Lin.atom(atom)
    return Lin.atom(atom)


def _unwrap_mods(inner: Lin, c: int) -> Lin:
    """``inner`` with each remainder ``u % M`` (``c`` dividing ``M``) read as ``u``: the same modulo ``c``."""
    # (u % M) = u (mod c) when c divides M: ((u % 12) + 1) % 4 = (u + 1) % 4
    # repeated, since an unwrapped u may hold remainders itself: ((h % 6) % 4) % 2 = h % 2
    outer = [a for a in inner.coeffs if a.op is _MOD and int(a.args[1].attr) % c == 0]
    while outer:
        for a in outer:
            inner = inner.substitute(a, linearize(a.args[0]))
        outer = [a for a in inner.coeffs if a.op is _MOD and int(a.args[1].attr) % c == 0]
    return inner


def _split_multiples(floor: bool, inner: Lin, c: int) -> tuple[dict[Term, Number], dict[Term, Number]]:
    """The atoms of ``inner`` whose coefficient ``c`` divides (divided by ``c``), and the others."""
    whole: dict[Term, Number] = {}
    rest: dict[Term, Number] = {}
    for a, k in inner.coeffs.items():
        if k % c == 0:
            whole[a] = k // c
        elif not floor:
            # (k*x) % c = (r*x) % c for r = k mod c, taken in (-c/2, c/2]
            r = k % c
            rest[a] = r - c if 2 * r > c else r
        else:
            rest[a] = k
    return whole, rest


def _one_period(rest: dict[Term, Number], k0: int, c: int) -> int | Fraction | None:
    """``q`` when ``sum(k*atom) + k0 % c`` stays in ``[q*c, q*c + c)``, every atom a remainder; else None."""
    if not all(a.op is _MOD for a in rest):
        return None
    # every atom is a remainder in [0, m - 1]: the value may stay in one period of c
    lo: int | Fraction = k0 % c
    hi: int | Fraction = lo
    for a, k in rest.items():
        top = int(a.args[1].attr) - 1
        lo, hi = (lo, hi + k * top) if k > 0 else (lo + k * top, hi)
    return lo // c if lo // c == hi // c else None


def _sort_key(order: Mapping[Term, int]):
    def key(atom: Term) -> tuple:
        return (order.get(atom, len(order)), str(atom))

    return key


def _fold_mod(lin: Lin) -> Lin:
    """Canonical spelling of remainders inside ``lin`` (repeated until nothing changes):

    ``k*(u % c) + k*c*(u//c) -> k*u``, ``k*u - k*c*(u//c) -> k*(u % c)`` and
    ``k*(u//a) - k*c*(u//(a*c)) -> k*((u//a) % c)``; the last and the first also when the quotient
    is only equal to the canonical form of ``(u//a) // c`` or ``u // c`` (``(2*w//3)//2`` is ``w//3``).
    """
    for _ in range(64):
        new = _fold_step(lin)
        if new is lin:
            return lin
        lin = new
    return lin


def _fold_step(lin: Lin) -> Lin:
    """One rewrite of :func:`_fold_mod`, or ``lin`` itself when none applies."""
    for atom, k in lin.coeffs.items():
        if atom.op is not _MOD:
            continue
        c = int(atom.args[1].attr)
        v = None
        for q, kq in lin.coeffs.items():
            if q.op is not _FLOORDIV or int(q.args[1].attr) != c or kq != k * c:
                continue
            # v % c + c*(u // c) = u when u = v (mod c)
            v = linearize(atom.args[0]) if v is None else v
            u = linearize(q.args[0])
            diff = u - v
            if diff.const % c == 0 and all(b % c == 0 for b in diff.coeffs.values()):
                rest = {t: b for t, b in lin.coeffs.items() if t is not atom and t is not q}
                return Lin(rest, lin.const) + u.scale(k)
        if any(q.op is _FLOORDIV and kq % (k * c) == 0 for q, kq in lin.coeffs.items()):
            # v % c + c*D = v where D is the canonical form of v // c (e.g. (w//4) % 5 + 5*(w//20) = w//4)
            v = linearize(atom.args[0]) if v is None else v
            quot = _divmod_form(True, v, c)
            new = _cancel(lin, quot, k * c, atom, v - quot.scale(c))
            if new is not None:
                return new
    for atom, coef in lin.coeffs.items():
        if atom.op is not _FLOORDIV:
            continue
        inner, c = atom.args[0], int(atom.args[1].attr)
        k = -coef // c if coef % c == 0 else 0
        whole_inner = linearize(inner) if k else None
        if whole_inner is not None and all(lin.coeffs.get(a, 0) == k * b for a, b in whole_inner.coeffs.items()):
            rest = {a: b for a, b in lin.coeffs.items() if a is not atom and a not in whole_inner.coeffs}
            return Lin(rest, lin.const - k * whole_inner.const) + _divmod_form(False, whole_inner, c).scale(k)
        for small, ks in lin.coeffs.items():
            if small is atom or small.op is not _FLOORDIV or small.args[0] is not inner:
                continue
            a = int(small.args[1].attr)
            if c % a or c == a or coef != -(c // a) * ks:
                continue
            rest = {t: b for t, b in lin.coeffs.items() if t is not atom and t is not small}
            return Lin(rest, lin.const) + _divmod_form(False, Lin.atom(small), c // a).scale(ks)
    for small, ks in lin.coeffs.items():
        if small.op is not _FLOORDIV:
            continue
        for big, kb in lin.coeffs.items():
            if big is small or big.op is not _FLOORDIV or kb % ks or -kb // ks < 2:
                continue
            # x - m*D = x % m where D is the canonical form of x // m, for an atom x = u // a whose
            # quotient was merged or reduced: 2*w//3 - 2*(w//3) = (2*w//3) % 2 since (2*w//3)//2 = w//3
            m = -kb // ks
            x = Lin.atom(small)
            quot = _divmod_form(True, x, m)
            new = _cancel(lin, quot, -m * ks, small, _divmod_form(False, x, m) + quot.scale(m))
            if new is not None:
                return new
    return lin


def _cancel(lin: Lin, quot: Lin, k: Number, atom: Term, form: Lin) -> Lin | None:
    """``lin`` with ``atom`` replaced by ``form`` when that removes ``k*quot``'s atoms, else None."""
    if quot.is_const or any(lin.coeffs.get(a, 0) != k * d for a, d in quot.coeffs.items()):
        return None
    return lin.substitute(atom, form)


def _plus(acc: Term, piece: Term) -> Term:
    """``acc + piece``, one flat sum when ``acc`` is a sum: ``12*h + 4*w + u``, as it prints and parses."""
    return Term(_ADD, (*acc.args, piece) if acc.op is _ADD else (acc, piece))


def to_term(lin: Lin, order: Sequence[Term] = ()) -> Term:
    """The canonical term of an integer affine form; atoms follow ``order``, then their text."""
    lin = _fold_mod(lin)
    rank = {a: i for i, a in enumerate(order)}
    atoms = sorted(lin.coeffs, key=_sort_key(rank))
    parts: list[tuple[int, Term]] = []
    for a in atoms:
        c = lin.coeffs[a]
        if isinstance(c, Fraction):
            if c.denominator != 1:
                raise ValueError("to_term needs integer coefficients")
            c = int(c)
        parts.append((int(c), a))
    k = lin.const
    if isinstance(k, Fraction):
        if k.denominator != 1:
            raise ValueError("to_term needs an integer constant")
        k = int(k)
    k = int(k)
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


def reduce_atoms(term: Term, ranges: Mapping[Term, tuple[int, int]]) -> Term:
    """``term`` with floor divisions and modulos that stay in one period on ``ranges`` removed, canonical.

    If ``k*c <= u < (k+1)*c`` everywhere then ``u // c = k`` and ``u % c = u - k*c``.
    """
    return _reduce_fixpoint(term, ranges)


def _reduce_once(term: Term, ranges: Mapping[Term, tuple[int, int]]) -> Term:
    done: dict[Term, Term] = {}
    for node in postorder(term):
        if not node.args:
            done[node] = node
            continue
        args = tuple(done[a] for a in node.args)
        new = node if all(x is y for x, y in zip(args, node.args, strict=True)) else Term(node.op, args, node.attr)
        if node.op is _FLOORDIV or node.op is _MOD:
            u, div = args
            if div.is_const and div.attr.__class__ is int and div.attr > 0:
                b = bounds(u, ranges)
                c = div.attr
                if b is not None and b[0] // c == b[1] // c:
                    q = b[0] // c
                    new = const(q) if node.op is _FLOORDIV else to_term(linearize(u) - Lin({}, q * c))
        done[node] = new
    return to_term(linearize(done[term]), tuple(ranges))


def _reduce_fixpoint(term: Term, ranges: Mapping[Term, tuple[int, int]]) -> Term:
    """Canonicalise and fold constant-on-the-box divisions until nothing changes (a few rounds)."""
    order = tuple(ranges)
    cur = to_term(linearize(term), order)
    for _ in range(8):
        nxt = _reduce_once(cur, ranges)
        if nxt is cur:
            break
        cur = nxt
    return cur
