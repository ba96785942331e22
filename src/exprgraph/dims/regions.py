"""The simplifier's walk: any integer term to its polynomial normal form, region by region.

The term's DAG is walked once, children first. Chains of one kind are flattened in one pass
(a *region*): sums and scalings (``add``, ``sub``, ``neg``, ``k*x``) collect coefficients, products
collect powers, nested max (or min) collect arguments. A node starts a new region when it is shared,
when its parent is of another kind, or when it is the root, so every node is handled once and a
chain of a million nodes costs linear time without recursion. Floor division, modulo, ceiling
division, max and min are rewritten by the rules in :mod:`.division` and :mod:`.maxmin`, sums by
:mod:`.combine`, products by :mod:`.factored`. Results are cached per term (terms are interned, so
this is always sound). The commonest terms (sums, products of names, floor divisions and max of
them, nested a few deep) are read without the walk, each region as the walk makes it (_quick);
the kinds of nodes are in :mod:`.nodes`.
"""

from __future__ import annotations

from typing import Final

from ..core.term import Term
from .combine import combine_terms
from .context import Context
from .division import ceil_poly, floordiv_poly, mod_poly
from .factored import product_poly
from .maxmin import broadcast_poly, maxmin_poly
from .monomials import ONE, Mono, _check_degree, mono_of_powers
from .nodes import (
    LIN,
    MAXK,
    MINK,
    NAME_MONOS,
    OPAQUE,
    PROD,
    foreign,
    name_mono,
    names_product,
    node_kind,
    scaling,
)
from .normal import inner_term
from .ranges import INF, UNBOUNDED
from .ring import Budget, Poly, p_add_into, p_atom, p_const, p_is_const
from .terms import ADD, BROADCAST, CEIL_DIV, CONST, FLOORDIV, MOD, MUL, NEG, POW, SUB, SYMBOL, TERM

__all__ = ["to_poly"]


def to_poly(root: Term, ctx: Context) -> Poly:
    """Polynomial normal form of an int64 scalar term (cached; do not mutate the result)."""
    vals = ctx.vals
    p = vals.get(root)
    if p is not None:
        return p
    ctx.budget = Budget()
    if not root.args or foreign(root):
        return _val(root, ctx)  # a name, a constant, or a foreign term (an atom of its own)
    p = _quick(root, ctx, 0)  # a sum, a product of names, a floor division of them... (the commonest)
    if p is not None:
        return p
    ctx.budget = Budget()
    order, kinds, edges, parent_kind = _walk(root, vals)
    for node in order:
        k = kinds[node]
        if k == OPAQUE:
            vals[node] = ctx.unwrap(_opaque(node, ctx))
        elif node is root or edges[node] != 1 or parent_kind[node] != k:
            if k == LIN:
                region, mixed = _linear(node, kinds, ctx)
                assert region is not None  # with kinds, always a sum
                vals[node] = combine_terms(region, ctx) if mixed else region
            elif k == PROD:
                p = names_product(node) if node.op is MUL else None  # a product of names, at once
                vals[node] = _product(node, kinds, ctx) if p is None else p
            else:
                vals[node] = ctx.unwrap(maxmin_poly(_collect(node, k, kinds, ctx), k == MAXK, ctx))
        # else: inside a region, handled by the region's root
    return vals[root]


#: how many sums and opaque ops (``a//b``, ``a%b``...) _quick takes nested in one another
_QUICK_DEPTH: Final = 16

#: the switch of the quick path (a twin of exprgraph.twins): False makes _quick decline every root,
#: so the walk reads every term
QUICK_PATH = True


def _quick(node: Term, ctx: Context, depth: int) -> Poly | None:
    """The polynomial of a node (an integer scalar, not a leaf) without the walk, stored, or None for the walk.

    It takes a sum (or scaling) over names, constants, normalised nodes and nodes it takes, a
    product of names, and an opaque op or a nest of max (min) whose operands it takes,
    ``_QUICK_DEPTH`` of them nested at most. Each is a region of its own, as in the walk; a node
    shared inside one sum or nest (the walk counts its edges), or another product, is left to the walk.
    """
    if not QUICK_PATH:
        return None
    vals = ctx.vals
    p = vals.get(node)
    if p is not None:
        return p
    kind = node_kind(node)
    if kind == LIN:
        flat, mixed = _linear(node, None, ctx, depth)
        if flat is None:
            return None
        p = combine_terms(flat, ctx) if mixed else flat
    elif kind == PROD and node.op is MUL:
        p = names_product(node)  # a product of names: its monomial, as the product region makes it
        if p is None:
            return None
    elif kind == OPAQUE and depth < _QUICK_DEPTH:
        for a in node.args:
            if a.args and not foreign(a) and _quick(a, ctx, depth + 1) is None:
                return None
        p = ctx.unwrap(_opaque(node, ctx))
    elif (kind == MAXK or kind == MINK) and depth < _QUICK_DEPTH:
        operands = _quick_operands(node, kind, ctx, depth)
        if operands is None:
            return None
        p = ctx.unwrap(maxmin_poly(operands, kind == MAXK, ctx))
    else:
        return None
    vals[node] = p
    return p


def _quick_operands(root: Term, k: int, ctx: Context, depth: int) -> list[Poly] | None:
    """The operands of a nest of max (min) nodes, left to right as _collect reads them, each taken by
    _quick; None when one is not, or when a node of the nest is shared inside it."""
    vals = ctx.vals
    out: list[Poly] = []
    seen: set[Term] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node is not root and (node in vals or node_kind(node) != k):
            if node.args and _quick(node, ctx, depth + 1) is None:
                return None
            out.append(_val(node, ctx))
            continue
        if node in seen:
            return None  # the walk counts its edges
        seen.add(node)
        stack.extend(reversed(node.args))
    return out


def _walk(root: Term, vals: dict) -> tuple[list[Term], dict[Term, int], dict[Term, int], dict[Term, int]]:
    """The nodes under ``root`` to normalise, children first, with their kinds, the number of
    edges into each node and the kind of (one of) its parents.

    Leaves are not listed (their values are made when first needed, see _val), nor are nodes
    already normalised or foreign; each node is listed once, without recursion.
    """
    order: list[Term] = []
    kinds: dict[Term, int] = {}
    edges: dict[Term, int] = {}
    parent_kind: dict[Term, int] = {}
    expanded: set[Term] = set()
    name_monos = NAME_MONOS
    # entries (node, None) to expand, (node, its operands) once its children are listed
    stack: list[tuple[Term, tuple | None]] = [(root, None)]
    while stack:
        node, args = stack.pop()
        if args is not None:  # its children are listed: list it
            order.append(node)
            k = kinds[node] = node_kind(node)
            for a in args:
                if a in kinds:  # a listed child (names, constants and normalised nodes are not listed)
                    edges[a] = edges.get(a, 0) + 1
                    parent_kind[a] = k
        elif node not in expanded:
            expanded.add(node)
            args = node.args
            stack.append((node, args))
            for child in reversed(args):  # the first child on top: listed first
                if child in name_monos or child in vals or child in expanded:
                    continue
                if child.args and not foreign(child):
                    stack.append((child, None))
    return order, kinds, edges, parent_kind


def _val(node: Term, ctx: Context) -> Poly:
    p = ctx.vals.get(node)
    if p is None:
        if node.args or foreign(node):
            # a foreign operand (a float or array term inside an opaque call): an atom of its own
            p = ctx.known_atom(node, (), UNBOUNDED)
        else:
            p = _leaf(node)
        ctx.vals[node] = p
    return p


def _leaf(node: Term) -> Poly:
    if node.op is CONST:
        return p_const(int(node.attr))
    return p_atom(node)


#: what _role says of a node met inside a sum region
_EXPAND: Final = 0
_VALUE: Final = 1
_FAIL: Final = 2


def _role(node: Term, op: object, kinds: dict | None, ctx: Context, seen: set[Term], depth: int) -> int:
    """Whether a node (not the region's root, not a name) is expanded into the sum, added as a
    value of its own (normalised, a constant, an opaque or a foreign term), or stops the region."""
    # (an add, sub, neg or mul below an int64 scalar is one too: dtype and shape rules give it so,
    # so a linear node met here is never foreign)
    linear = op is ADD or op is SUB or op is NEG or (op is MUL and node_kind(node) == LIN)
    vals = ctx.vals
    if kinds is not None:
        return _EXPAND if linear and node not in vals and kinds.get(node) == LIN else _VALUE
    if linear and node not in vals:
        if node in seen:
            return _FAIL  # shared inside the region: the walk counts its edges
        seen.add(node)
        return _EXPAND
    if node.args and node not in vals and _quick(node, ctx, depth + 1) is None:
        return _FAIL  # a node to normalise first: the walk orders them
    return _VALUE


def _add_key(acc: dict, key: object, k: int) -> None:
    # acc[key] += k, with no zero left
    v = acc.get(key, 0) + k
    if v:
        acc[key] = v
    else:
        del acc[key]


def _add_value(acc: Poly, node: Term, k: int, ctx: Context) -> bool:
    """``acc += k*value(node)``; True when the value is not a constant."""
    p = _val(node, ctx)
    ctx.budget.spend(len(p))
    p_add_into(acc, p, k)
    return not p_is_const(p)


class _Sum:
    """The sum a region collects. Names (and the constant 1, ONE) are keyed by their terms, which
    hash by identity, rather than by their monomials, until the first other value turns the sum
    into its polynomial, in the same order (so the result is the polynomial added up all along)."""

    __slots__ = ("named", "acc", "names", "mixed")

    def __init__(self) -> None:
        self.named: dict = {}
        self.acc: Poly | None = None
        #: names added (the work charged to the budget)
        self.names = 0
        #: whether a value other than a name or a constant was added
        self.mixed = False

    def name(self, a: Term, m: Mono, k: int) -> None:
        """``+= k*a`` for the name ``a`` (``m`` its monomial)."""
        self.names += 1
        if self.acc is None:
            _add_key(self.named, a, k)
        else:
            _add_key(self.acc, m, k)

    def const(self, k: int) -> None:
        """``+= k``."""
        if self.acc is None:
            if k:
                _add_key(self.named, ONE, k)
        else:
            p_add_into(self.acc, p_const(k))

    def value(self, node: Term, k: int, ctx: Context) -> None:
        """``+= k*value(node)`` for a normalised, constant, opaque or foreign node."""
        if self.acc is None:
            self.acc = _monomials(self.named)
        self.mixed = _add_value(self.acc, node, k, ctx) or self.mixed

    def poly(self) -> Poly:
        """The polynomial of the sum."""
        return _monomials(self.named) if self.acc is None else self.acc


def _monomials(named: dict) -> Poly:
    """The polynomial of a sum kept over names (keyed by their terms) and ONE, in the same order."""
    out: Poly = {}
    for key, c in named.items():
        if key is ONE:
            out[ONE] = c
        else:
            m = NAME_MONOS.get(key)
            out[((key, 1),) if m is None else m] = c  # (the cache may have been cleared since)
    return out


def _linear(root: Term, kinds: dict | None, ctx: Context, depth: int = 0) -> tuple[Poly | None, bool]:
    """Sum region: propagate coefficients down the tree of add/sub/neg/k*x nodes (see _role).

    Without ``kinds`` (no walk before it), None when the region is not a tree of them over names,
    constants, normalised terms and terms _quick takes (``depth``: how many it is nested in). The
    flag says whether an operand other than a name or a constant was added (without one, no rule
    across the terms of the sum can apply).
    """
    total = _Sum()
    seen: set[Term] = set()
    stack: list[tuple[Term, int]] = []
    name_monos = NAME_MONOS
    node: Term | None = root
    k = 1
    while True:
        assert node is not None
        m = name_monos.get(node) if node is not root else None
        if m is not None:
            total.name(node, m, k)  # a name read before: straight into the sum
            node = None
        else:
            op = node.op
            role = _EXPAND
            if node is not root:
                m = name_mono(node) if op is SYMBOL else None
                if m is not None:
                    total.name(node, m, k)  # a name (not a foreign one): straight into the sum
                    role = _VALUE
                else:
                    role = _role(node, op, kinds, ctx, seen, depth)
                    if role == _FAIL:
                        return None, False
                    if role == _VALUE:
                        total.value(node, k, ctx)
            node = _expand(node, op, k, stack, total) if role == _EXPAND else None
        if node is None:
            if not stack:
                break
            node, k = stack.pop()
    ctx.budget.spend(total.names)
    return total.poly(), total.mixed


def _expand(node: Term, op: object, k: int, stack: list[tuple[Term, int]], total: _Sum) -> Term | None:
    """Push the operands of the linear node ``node`` (times ``k``) on ``stack``; a name on the right of
    a sum goes straight into ``total``, and its left operand is returned to go on with (else None)."""
    if op is ADD or op is SUB:
        args = node.args
        if len(args) == 2:
            a, b = args
            kb = k if op is ADD else -k
            m = NAME_MONOS.get(b)
            if m is None and b.op is SYMBOL:
                m = name_mono(b)
            if m is not None:
                # a name on the right (a chain of them, the commonest): in at once, as the stack
                # would take it first, then on down the left operand
                total.name(b, m, kb)
                return a
            stack.append((a, k))
            stack.append((b, kb))
        else:
            for a in args:
                stack.append((a, k))
    elif op is NEG:
        stack.append((node.args[0], -k))
    else:  # k * x: a product with at most one non-constant operand
        child, k = scaling(node, k)
        if child is None:
            total.const(k)
        elif k:
            stack.append((child, k))
    return None


def _product(root: Term, kinds: dict, ctx: Context) -> Poly:
    """Product region: collect the powers of the factors, then multiply out."""
    vals = ctx.vals
    powers: dict[Term, int] = {}
    stack: list[tuple[Term, int]] = [(root, 1)]
    while stack:
        node, e = stack.pop()
        if node is not root and (node in vals or kinds.get(node) != PROD):
            powers[node] = powers.get(node, 0) + e
            continue
        if node.op is POW:
            base, exponent = node.args
            stack.append((base, e * int(exponent.attr)))
        else:
            for a in node.args:
                stack.append((a, e))
    for node in powers:
        if name_mono(node) is None:
            break
    else:  # a product of names (the commonest): its monomial at once, as product_poly makes it
        named = {a: _check_degree(e) for a, e in powers.items() if e}
        return {mono_of_powers(named): 1} if named else p_const(1)
    # the factors in the order the walk met them (right to left), each with its total power;
    # sums stay factors (sum atoms, see .factored)
    return product_poly([(_val(node, ctx), e) for node, e in powers.items()], ctx)


def _collect(root: Term, k: int, kinds: dict, ctx: Context) -> list[Poly]:
    """Max (or min) region: the operands of a nest of max (min) nodes, left to right."""
    vals = ctx.vals
    out: list[Poly] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node is not root and (node in vals or kinds.get(node) != k):
            out.append(_val(node, ctx))
            continue
        stack.extend(reversed(node.args))
    return out


def _opaque(node: Term, ctx: Context) -> Poly:
    op = node.op
    args = node.args
    if op is FLOORDIV:
        return floordiv_poly(_val(args[0], ctx), _val(args[1], ctx), ctx)
    if op is MOD:
        return mod_poly(_val(args[0], ctx), _val(args[1], ctx), ctx)
    if op is CEIL_DIV:
        return ceil_poly(_val(args[0], ctx), _val(args[1], ctx), ctx)
    if op is BROADCAST:
        return broadcast_poly(_val(args[0], ctx), _val(args[1], ctx), ctx)
    # any other op (abs, x**y with a symbolic exponent...): an atom whose integer operands are normalised
    new_args = tuple(a if foreign(a) else inner_term(_val(a, ctx)) for a in args)
    term = TERM(op, new_args, node.attr)
    rng = (0, INF) if op.name == "abs" else UNBOUNDED
    return ctx.known_atom(term, (), rng)
