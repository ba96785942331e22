"""The nodes the simplifier's walk meets (see :mod:`.regions`): their kinds, plain names, products of names.

A node's kind says which region it belongs to: sums and scalings (``add``, ``sub``, ``neg``,
``k*x``) are linear, products of two factors or more (and powers by a constant) are products,
nested max (min) are a max (min) region, names and constants are leaves, and anything else
(floor division, modulo, calls) is opaque: an atom whose operands are normalised first.
"""

from __future__ import annotations

from typing import Final

from ..core.term import Term
from .monomials import ONE, Mono, _check_degree, mono_mul, mono_of_powers
from .ring import Poly
from .terms import ADD, CONST, INT64, MAX, MIN, MUL, NEG, POW, SUB, SYMBOL, memo_table, remember

__all__ = [
    "LEAF",
    "OPAQUE",
    "LIN",
    "PROD",
    "MAXK",
    "MINK",
    "is_int_const",
    "node_kind",
    "name_mono",
    "foreign",
    "scaling",
    "names_product",
    "NAME_MONOS",
]


#: kinds of nodes: a name or a constant
LEAF: Final = 0
#: an atom of its own (floor division, modulo, a call...), its operands normalised first
OPAQUE: Final = 1
#: a sum, difference, negation or scaling ``k*x``
LIN: Final = 2
#: a product of two non-constant factors or more, or a power by a constant
PROD: Final = 3
#: a max
MAXK: Final = 4
#: a min
MINK: Final = 5


def is_int_const(t: Term) -> bool:
    """Whether ``t`` is an integer (or bool) constant."""
    return t.op is CONST and type(t.attr) in (int, bool)


def node_kind(node: Term) -> int:
    """The kind of a node (LEAF, OPAQUE, LIN, PROD, MAXK or MINK): the region it belongs to."""
    op = node.op
    if op is ADD or op is SUB or op is NEG:
        return LIN
    if op is MUL:
        nonconst = 0
        for a in node.args:
            if not is_int_const(a):
                nonconst += 1
        return LIN if nonconst <= 1 else PROD
    if op is MAX:
        return MAXK
    if op is MIN:
        return MINK
    if op is SYMBOL or op is CONST:
        return LEAF
    if op is POW:
        e = node.args[1]
        if is_int_const(e) and e.attr >= 0:
            return PROD
    return OPAQUE


#: plain names (int64 scalar symbols) -> their monomial ``((name, 1),)`` (see name_mono)
NAME_MONOS: Final[dict[Term, Mono]] = memo_table()


def name_mono(node: Term) -> Mono | None:
    """The monomial ``((node, 1),)`` of a plain name (an int64 scalar symbol), or None for any other term."""
    m = NAME_MONOS.get(node)
    if m is None:
        if node.op is not SYMBOL or node.dtype != INT64 or node.shape != ():
            return None
        m = remember(NAME_MONOS, node, ((node, 1),))
    return m


def foreign(node: Term) -> bool:
    """Not an integer scalar: left untouched inside an opaque atom."""
    if node.shape != ():
        return True
    if node.dtype == INT64:
        return False
    return not is_int_const(node)


def scaling(node: Term, k: int) -> tuple[Term | None, int]:
    """``k * node`` for a product with at most one non-constant operand: that operand and its coefficient."""
    child = None
    for a in node.args:
        if is_int_const(a):
            k *= int(a.attr)
        else:
            child = a
    return child, k


#: most nodes names_product reads before it leaves a product to the walk
_NEST_LIMIT: Final = 256


def names_product(root: Term) -> Poly | None:
    """The polynomial of a nest of products of names and integer constants (``2*s0*s1``), or None.

    It is the one monomial the walk's product region gives (see regions._product: its single-term factors
    multiply at once, whatever the nesting), made without the walk. The nest is read as a tree, so
    past ``_NEST_LIMIT`` nodes (a DAG of shared products, say) it declines: the walk counts sharing.
    """
    coef = 1
    factors: list[Mono] = []
    stack = [root]
    left = _NEST_LIMIT
    while stack:
        left -= 1
        if left < 0:
            return None
        node = stack.pop()
        m = NAME_MONOS.get(node)
        if m is None:
            op = node.op
            if op is MUL:
                stack.extend(node.args)
                continue
            if is_int_const(node):
                coef *= int(node.attr)
                continue
            m = name_mono(node) if op is SYMBOL else None
            if m is None:
                return None
        factors.append(m)
    if not coef:
        return {}
    if len(factors) <= 2:
        mono: Mono = ONE
        for m in factors:
            mono = mono_mul(mono, m)  # a name times a name: the monomial in id order (a**2 for a*a)
        return {mono: coef}
    powers: dict[Term, int] = {}
    for m in factors:
        a = m[0][0]
        powers[a] = powers.get(a, 0) + 1
    for e in powers.values():
        _check_degree(e)
    return {mono_of_powers(powers): coef}
