"""The operands of the fast text reader (:mod:`.polyparse`) and the algebra that combines them.

An operand is a tuple ``(kind, node id, payload)``: an integer literal, a name, a closed
polynomial, or an open region (a chain of one kind of node: a sum, a product, a max or a min,
see :mod:`.regions`) still collecting its parts. :class:`_Reader` applies an operator to two
operands the way the general walk would on the same nodes; :class:`_LightReader` does the same for
text without atoms, where every operand is its exact polynomial. Both raise :class:`_DeclineError`
to hand the text back to the general path.

Imports: the core's op table and the polynomial algebra of this package.
"""

from __future__ import annotations

from typing import Final

from ..core.op import Op
from .combine import combine_terms
from .context import Context
from .division import ceil_poly, floordiv_poly, mod_poly
from .factored import product_poly
from .maxmin import maxmin_poly
from .monomials import mono_mul, mono_of_powers
from .ring import Poly, p_add_into, p_const
from .terms import ADD, CEIL_DIV, FLOORDIV, MAX, MIN, MOD, MUL, NEG, SUB

_OPAQUE: Final = {FLOORDIV: floordiv_poly, MOD: mod_poly, CEIL_DIV: ceil_poly}

# Operands are tuples (kind, node id, payload). Kinds, and their payloads:
_CONST: Final = 0  # an integer literal: its value
_NAME: Final = 1  # a name: its polynomial (one atom)
_POLY: Final = 2  # a closed polynomial
_SUM: Final = 3  # an open sum region: its summands [(polynomial, coefficient)], left to right
_PRODUCT: Final = 4  # an open product region: [coefficient, {atom: power}, [(node id, sum)]] (see _Reader.product)
_MAXIMUM: Final = 5  # an open max region: its arguments [polynomial], left to right
_MINIMUM: Final = 6  # an open min region: likewise
_REGION: Final = _SUM  # kinds from here on are open regions

#: node ids of operator nodes start here: above every int64, so they never equal the id of a
#: literal (its value) and never the id of a name (its term)
_FIRST_NODE_ID: Final = 2**64


class _DeclineError(Exception):
    """The fast path does not take this text: the general path will."""


class _Reader:
    """One reading: the node ids given so far, their edges, and the nodes merged into regions."""

    __slots__ = ("ctx", "ids", "edges", "merged", "atoms")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        #: whether an opaque atom (floor division, max...) may be in a polynomial: only then can the
        #: rules across the terms of a sum (combine_terms) apply
        self.atoms = False
        #: (op, operand ids) -> node id: equal nodes get equal ids, as equal terms are one term
        self.ids: dict[tuple, int] = {}
        #: region node id -> number of (distinct parent node, operand) references to it
        self.edges: dict[int, int] = {}
        #: ids of region nodes merged into the region of their parent
        self.merged: list[int] = []

    def node_id(self, key: tuple, operands: tuple) -> int:
        """Id of the node ``key`` = ``(op, operand ids...)``; a new node counts its edges to regions."""
        ids = self.ids
        nid = ids.get(key)
        if nid is None:
            nid = ids[key] = _FIRST_NODE_ID + len(ids)
            edges = self.edges
            for kind, oid, _ in operands:
                if kind >= _REGION:
                    edges[oid] = edges.get(oid, 0) + 1
        return nid

    def negate(self, a: tuple) -> tuple:
        """``-a``: a sum node."""
        nid = self.node_id((NEG, a[1]), (a,))
        if a[0] == _SUM:
            self.merged.append(a[1])
            return (_SUM, nid, [(p, -k) for p, k in a[2]])
        return (_SUM, nid, [(self.close(a), -1)])

    def binary(self, op: Op, a: tuple, b: tuple) -> tuple:
        """The operand for ``op(a, b)``: an open region (merging ``a`` or ``b`` if of its kind) or a polynomial."""
        akind, aid, apay = a
        bkind, bid, bpay = b
        # the node id (node_id, inlined: this runs for every operator)
        ids = self.ids
        key = (op, aid, bid)
        nid = ids.get(key)
        if nid is None:
            nid = ids[key] = _FIRST_NODE_ID + len(ids)
            if akind >= _REGION or bkind >= _REGION:
                edges = self.edges
                if akind >= _REGION:
                    edges[aid] = edges.get(aid, 0) + 1
                if bkind >= _REGION:
                    edges[bid] = edges.get(bid, 0) + 1
        if op is ADD or op is SUB:
            return (_SUM, nid, self.summands(a, b, op is ADD))
        if op is MUL:
            if akind == _CONST or bkind == _CONST:
                return self.scaling(nid, a, b)
            return (_PRODUCT, nid, self.product(a, b))
        if op is MAX or op is MIN:
            kind = _MAXIMUM if op is MAX else _MINIMUM
            return (kind, nid, self.arguments(kind, a, b))
        # floor division, modulo, ceiling division: opaque, on closed operands
        p = self.ctx.unwrap(
            _OPAQUE[op](
                apay if _NAME <= akind <= _POLY else self.close(a),
                bpay if _NAME <= bkind <= _POLY else self.close(b),
                self.ctx,
            )
        )
        self.atoms = True  # from here on, polynomials may hold atoms
        return (_POLY, nid, p)

    def summands(self, a: tuple, b: tuple, plus: bool) -> list:
        """The summands of the sum region ``a + b`` (``a - b`` unless ``plus``), merging sums into it."""
        akind, aid, apay = a
        bkind, bid, bpay = b
        if akind == _SUM:
            self.merged.append(aid)
            summands = apay  # a is used up: its list is reused
        else:
            summands = [(apay if _NAME <= akind <= _POLY else self.close(a), 1)]
        if bkind == _SUM:
            self.merged.append(bid)
            summands += bpay if plus else [(p, -c) for p, c in bpay]
        else:
            summands.append((bpay if _NAME <= bkind <= _POLY else self.close(b), 1 if plus else -1))
        return summands

    def scaling(self, nid: int, a: tuple, b: tuple) -> tuple:
        """``a*b`` with an integer literal: a sum node (k*x), or a constant when both are literals."""
        if a[0] == _CONST and b[0] == _CONST:
            return (_SUM, nid, [(p_const(a[2] * b[2]), 1)])
        k, x = (a[2], b) if a[0] == _CONST else (b[2], a)
        if x[0] == _SUM:
            self.merged.append(x[1])
            return (_SUM, nid, [(p, c * k) for p, c in x[2]])
        return (_SUM, nid, [(self.close(x), k)])

    def arguments(self, kind: int, a: tuple, b: tuple) -> list:
        """The arguments of the max (min) region of ``kind`` over ``a`` and ``b``, merging regions of that kind."""
        akind, aid, apay = a
        bkind, bid, bpay = b
        if akind == kind:
            self.merged.append(aid)
            arguments = apay
        else:
            arguments = [apay if _NAME <= akind <= _POLY else self.close(a)]
        if bkind == kind:
            self.merged.append(bid)
            arguments += bpay
        else:
            arguments.append(bpay if _NAME <= bkind <= _POLY else self.close(b))
        return arguments

    def product(self, a: tuple, b: tuple) -> list:
        """The product region of ``a*b`` (neither a literal): ``[coefficient, {atom: power}, sums]``.

        The single-term factors are multiplied at once (monomials commute, so the order does not
        matter, and MAX_TOKENS keeps the degree and constant-power limits of p_product out of
        reach: a factor repeated e times needs 5 tokens a copy, so e*64 < 4096). The sums are kept
        as ``(node id, polynomial)`` in text order, to be multiplied in when the region closes.
        """
        if a[0] == _PRODUCT:
            acc = a[2]  # a is used up: its region is extended
            if acc[2]:
                self.merged.append(a[1])  # see below
        else:
            acc = [1, {}, []]
            self.factor(acc, a)
        if b[0] == _PRODUCT:
            coef, powers, sums = b[2]
            acc[0] *= coef
            acc_powers = acc[1]
            for atom, q in powers.items():
                acc_powers[atom] = acc_powers.get(atom, 0) + q
            if sums:
                # merging a shared product node is harmless when its factors are single terms: the
                # general walk then multiplies the same monomials, with no work charged and no sums
                # moved (see the module docstring); otherwise the check at the end declines
                self.merged.append(b[1])
                acc[2] += sums
        else:
            self.factor(acc, b)
        return acc

    def factor(self, acc: list, a: tuple) -> None:
        """Multiply the product region ``acc`` by the operand ``a`` (not a product)."""
        kind, nid, payload = a
        p = payload if _NAME <= kind <= _POLY else self.close(a)
        if len(p) == 1:
            ((m, c),) = p.items()
            acc[0] *= c
            powers = acc[1]
            for atom, q in m:
                powers[atom] = powers.get(atom, 0) + q
        elif p:
            acc[2].append((nid, p))
        else:
            acc[0] = 0  # a zero factor

    def close(self, a: tuple) -> Poly:
        """The polynomial of an operand (closing its region)."""
        kind, _, payload = a
        if kind <= _POLY:
            return p_const(payload) if kind == _CONST else payload
        if kind == _SUM:
            return self.close_sum(payload)
        if kind == _PRODUCT:
            return self.close_product(payload)
        p = self.ctx.unwrap(maxmin_poly(payload, kind == _MAXIMUM, self.ctx))
        self.atoms = True  # from here on, polynomials may hold atoms
        return p

    def close_sum(self, summands: list) -> Poly:
        """``sum(k*p)``, added right to left as the general walk does, then the cross-term rules."""
        acc: Poly = {}
        work = 0
        for p, k in summands[::-1]:
            if not k:
                continue  # a summand times 0 is left out, unvisited
            work += len(p)
            p_add_into(acc, p, k)  # acc += k*p
        self.ctx.budget.spend(work)
        if len(acc) < 2 or not self.atoms:
            return acc  # no rule across terms applies: they need two terms, one with an opaque atom
        return combine_terms(acc, self.ctx)

    def close_product(self, region: list) -> Poly:
        """The product: the monomial, then the sums as the general walk meets them (see factored.product_poly).

        The walk meets the factors right to left, and an equal node once, with its power (p_product).
        """
        coef, powers, sums = region
        if not coef:
            return {}  # a zero factor
        monomial: Poly = {mono_of_powers(powers): coef}
        if not sums:
            return monomial
        counts: dict[int, list] = {}
        for nid, p in sums[::-1]:
            entry = counts.get(nid)
            if entry is None:
                counts[nid] = [p, 1]
            else:
                entry[1] += 1
        self.atoms = True  # sum atoms may be made: the rules across terms apply from here on
        factors: list[tuple[Poly, int]] = [(monomial, 1)]
        for p, e in counts.values():
            factors.append((p, e))
        return product_poly(factors, self.ctx)

    def check_sharing(self) -> None:
        """Decline if a node used twice was merged into a region: the general walk keeps it apart."""
        edges = self.edges
        for nid in self.merged:
            if edges.get(nid, 0) != 1:
                raise _DeclineError


class _LightReader:
    """Reads text without atoms: every operand is its exact polynomial, a dict of its own."""

    __slots__ = ()
    merged = ()  # no region is merged: no sharing to check

    @staticmethod
    def poly(a: tuple) -> Poly:
        """The polynomial of an operand (read only)."""
        kind, _, payload = a
        return p_const(payload) if kind == _CONST else payload

    @staticmethod
    def owned(a: tuple) -> Poly:
        """The polynomial of an operand, as a dict that may be changed (names share theirs)."""
        kind, _, payload = a
        if kind == _POLY:
            return payload
        return dict(payload) if kind == _NAME else p_const(payload)

    def negate(self, a: tuple) -> tuple:
        """``-a``."""
        p = self.owned(a)
        for m, c in p.items():
            p[m] = -c
        return (_POLY, None, p)

    def binary(self, op: Op, a: tuple, b: tuple) -> tuple:
        """``a + b``, ``a - b`` or ``a * b``."""
        if op is MUL:
            p, q = self.poly(a), self.poly(b)
            if len(p) < len(q):
                p, q = q, p
            if len(q) != 1:
                if q:
                    raise _DeclineError  # a product of two sums: the general path charges its work
                return (_POLY, None, {})  # a zero factor
            ((mq, cq),) = q.items()
            if mq and len(p) > 1:
                raise _DeclineError  # a sum times a non-constant stays a product (a sum atom): the general way
            # p*(cq*mq): multiplying by a monomial keeps distinct monomials distinct
            return (_POLY, None, {mono_mul(m, mq): c * cq for m, c in p.items()})
        p = self.owned(a)
        k = 1 if op is ADD else -1
        for m, c in self.poly(b).items():  # p += k*q
            v = p.get(m, 0) + k * c
            if v:
                p[m] = v
            else:
                del p[m]
        return (_POLY, None, p)

    def close(self, a: tuple) -> Poly:
        """The polynomial of the whole text."""
        return self.poly(a)
