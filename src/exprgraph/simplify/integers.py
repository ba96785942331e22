"""Integer subterms handed to ``exprgraph.dims``, the one integer algebra: its canonical form, where it is smaller.

An *integer region* is a largest subterm of int64 scalars built with ``+ - *``, unary minus, max,
min and the divisions ``// % ceil_div`` whose operands are int64 scalars. Its leaves are int64
names and constants; any other int64 subterm inside it (``abs(n)``, a sum over an array...) is an
atom, simplified on its own and shown to dims as a fresh name, so dims never sees, and never
assumes anything about, what it does not model. dims works under no assumption on names (every
int64 value, negatives included), with Python's (and numpy's) floor semantics.

Strength: by default a region holds only ``+ - *`` and unary minus: a polynomial, whose canonical
form has the same value for every int64 value, wrapping included (arithmetic modulo 2**64 is a
ring). Max, min and the divisions (``//``, ``%``, ``ceil_div``) join only with ``unsafe=True``: their
identities hold where no operand wraps (``(4*a)//4`` is not ``a`` at ``a = 2**61``, ``max(a + 1, a)``
not ``a + 1`` at ``a = 2**63 - 1``), and dims takes a symbolic divisor to be non-zero, where numpy
gives 0 (``(2*n)//n`` is 0 at ``n = 0``, not 2); by default each is an atom whose operands are
regions of their own. A region's canonical form replaces it only when it costs no more, and the
whole result only when it costs no more than the input.

>>> from exprgraph import Symbol
>>> a, b = Symbol("a", "int64"), Symbol("b", "int64")
>>> print(simplify_integers(a*b + a - a*(b + 1) + 2*a))
2*a
>>> print(simplify_integers((4*a + 2)//2), simplify_integers((4*a + 2)//2, unsafe=True))
(4*a + 2)//2 2*a + 1
>>> print(simplify_integers((a*b + a)//a))
(a + a*b)//a
>>> print(simplify_integers((a*b + a)//a, unsafe=True))
b + 1
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ..core import INT64, Symbol, Term, const, postorder, substitute
from ..core.walk import postorder_until
from ..dims import DimEnv
from ..errors import TermTooLargeError

__all__ = ["simplify_integers", "integer_regions"]

#: ops dims models, by how they join a region
_RING: Final = frozenset({"add", "sub", "mul", "neg"})  # exact modulo 2**64: every strength
_UNSAFE: Final = frozenset({"maximum", "minimum", "floordiv", "mod", "ceil_div"})  # exact where nothing wraps

#: dims' state with no range on names: every int64 value
_EVERY_VALUE: Final = DimEnv(default=(None, None))


def _int_scalar(t: Term) -> bool:
    return t.dtype == INT64 and t.shape == ()


def _joins(t: Term, unsafe: bool) -> bool:
    """Whether ``t`` is a node of an integer region (its op is dims', its operands int64 scalars)."""
    name = t.op.name
    if name not in _RING and not (unsafe and name in _UNSAFE):
        return False
    return _int_scalar(t) and all(_int_scalar(a) for a in t.args)


def _leaf(t: Term) -> bool:
    """An int64 name or integer constant: a leaf dims reads as it is."""
    return _int_scalar(t) and (t.is_symbol or (t.is_const and t.attr.__class__ is int))


def integer_regions(term: Term, unsafe: bool = False) -> tuple[list[Term], set[Term]]:
    """The roots of the integer regions of ``term`` (children first) and every node of a region."""
    order = postorder(term)
    inside = {t for t in order if t.dtype == INT64 and _joins(t, unsafe)}  # the dtype first: most nodes are floats
    if not inside:
        return [], inside  # no integer node (most float terms): no region
    roots = {term} & inside
    for t in order:
        if t not in inside:
            roots.update(a for a in t.args if a in inside)
    return [t for t in order if t in roots], inside


def simplify_integers(term: Term, *, unsafe: bool = False, cost: Callable[[Term], int] | None = None) -> Term:
    """``term`` with each integer region in dims' canonical form where that costs no more (``cost``: the
    simplifier's measure; distinct nodes by default); ``term`` itself if the whole would cost more."""
    measure = cost if cost is not None else _size
    roots, inside = integer_regions(term, unsafe)
    if not roots:
        return term
    names = _Placeholders(term)
    new: dict[Term, Term] = {}
    root_set = set(roots)
    for t in postorder(term):
        if t in root_set:
            new[t] = _region(t, inside, new, names, measure)
        elif t.args and t not in inside:
            args = tuple(new.get(a, a) for a in t.args)
            if any(x is not y for x, y in zip(args, t.args, strict=True)):
                new[t] = Term(t.op, args, t.attr)
    out = new.get(term, term)
    return out if out is not term and measure(out) <= measure(term) else term


def _size(t: Term) -> int:
    return t.size


class _Placeholders:
    """Fresh int64 names standing for the atoms of a region (none of them a name of the term)."""

    def __init__(self, term: Term) -> None:
        taken = {s.name for s in term.free_symbols}
        self.prefix = "_eg_int_atom_"
        while any(n.startswith(self.prefix) for n in taken):
            self.prefix = "_" + self.prefix
        self.count = 0

    def fresh(self) -> Term:
        """A new placeholder name."""
        self.count += 1
        return Symbol(f"{self.prefix}{self.count}", INT64)


def _region(root: Term, inside: set[Term], new: dict[Term, Term], names: _Placeholders, measure: Callable) -> Term:
    """The region under ``root`` in dims' canonical form if it costs no more, else with its atoms updated."""
    atoms: dict[Term, Term] = {}  # atom (its updated form) -> its placeholder
    built: dict[Term, Term] = {}
    for t in postorder_until([root], lambda n: n not in inside):
        args = []
        for a in t.args:
            if a in inside:
                args.append(built[a])
            elif _leaf(a):
                args.append(a)
            else:
                atom = new.get(a, a)
                if atom not in atoms:
                    atoms[atom] = names.fresh()
                args.append(atoms[atom])
        built[t] = Term(t.op, tuple(args), t.attr)
    back = {p: atom for atom, p in atoms.items()}
    before = substitute(built[root], back) if back else built[root]
    try:
        canonical = _EVERY_VALUE.simplify(built[root])
    except (OverflowError, TermTooLargeError):
        return before  # a constant past int64, or too costly: left as it is
    if isinstance(canonical, Term):
        after = substitute(canonical, back) if back else canonical
    else:
        after = const(int(canonical))
    return after if measure(after) <= measure(before) else before
