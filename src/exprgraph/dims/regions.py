"""The simplifier's walk: any integer term to its polynomial normal form, region by region.

The term's DAG is walked once, children first. Chains of one kind are flattened in one pass
(a *region*): sums and scalings (``add``, ``sub``, ``neg``, ``k*x``) collect coefficients, products
collect powers, nested max (or min) collect arguments. A node starts a new region when it is shared,
when its parent is of another kind, or when it is the root, so every node is handled once and a
chain of a million nodes costs linear time without recursion. Floor division, modulo, ceiling
division, max and min are rewritten by the rules in :mod:`.division` and :mod:`.maxmin`, sums by
:mod:`.combine`, products by :mod:`.factored`. Results are cached per term (terms are interned, so
this is always sound).
"""

from __future__ import annotations

from ..core.dtypes import INT64
from ..core.op import get_op
from ..core.term import Term
from .combine import combine_terms
from .context import Context
from .division import ceil_poly, floordiv_poly, mod_poly
from .factored import product_poly
from .maxmin import broadcast_poly, maxmin_poly
from .monomials import _check_degree, mono_of_powers
from .normal import Budget, Poly, inner_term, p_add_into, p_atom, p_const
from .ranges import INF, UNBOUNDED
from .terms import BROADCAST, CEIL_DIV

__all__ = ["to_poly"]

_ADD, _SUB, _MUL, _NEG = get_op("add"), get_op("sub"), get_op("mul"), get_op("neg")
_FLOORDIV, _MOD, _POW = get_op("floordiv"), get_op("mod"), get_op("pow")
_MAX, _MIN = get_op("maximum"), get_op("minimum")
_CONST, _SYMBOL = get_op("const"), get_op("symbol")

# kinds of nodes
_LEAF, _OPAQUE, _LIN, _PROD, _MAXK, _MINK = range(6)
_LINEAR_OPS = (_ADD, _SUB, _NEG)


def _is_int_const(t: Term) -> bool:
    return t.op is _CONST and t.attr.__class__ in (int, bool)


def _kind(node: Term) -> int:
    op = node.op
    if op in _LINEAR_OPS:
        return _LIN
    if op is _MUL:
        nonconst = 0
        for a in node.args:
            if not _is_int_const(a):
                nonconst += 1
        return _LIN if nonconst <= 1 else _PROD
    if op is _MAX:
        return _MAXK
    if op is _MIN:
        return _MINK
    if op is _SYMBOL or op is _CONST:
        return _LEAF
    if op is _POW:
        e = node.args[1]
        if _is_int_const(e) and e.attr >= 0:
            return _PROD
    return _OPAQUE


def _foreign(node: Term) -> bool:
    """Not an integer scalar: left untouched inside an opaque atom."""
    if node.shape != ():
        return True
    if node.dtype == INT64:
        return False
    return not _is_int_const(node)


def to_poly(root: Term, ctx: Context) -> Poly:
    """Polynomial normal form of an int64 scalar term (cached; do not mutate the result)."""
    vals = ctx.vals
    p = vals.get(root)
    if p is not None:
        return p
    ctx.budget = Budget()
    if not root.args:
        return _val(root, ctx)  # a name, a constant, or a foreign leaf
    if _foreign(root):
        return _val(root, ctx)  # a foreign root: an atom of its own
    if _kind(root) == _LIN:
        # a sum over names, constants and normalised terms (the commonest): no walk needed
        flat = _linear(root, None, ctx)
        if flat is not None:
            p = vals[root] = combine_terms(flat, ctx)
            return p
        ctx.budget = Budget()
    order, kinds, edges, parent_kind = _walk(root, vals)
    for node in order:
        k = kinds[node]
        if k == _OPAQUE:
            vals[node] = ctx.unwrap(_opaque(node, ctx))
        elif node is root or edges[node] != 1 or parent_kind[node] != k:
            if k == _LIN:
                region = _linear(node, kinds, ctx)
                assert region is not None  # with kinds, always a sum
                vals[node] = combine_terms(region, ctx)
            elif k == _PROD:
                vals[node] = _product(node, kinds, ctx)
            else:
                vals[node] = ctx.unwrap(maxmin_poly(_collect(node, k, kinds, ctx), k == _MAXK, ctx))
        # else: inside a region, handled by the region's root
    return vals[root]


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
    stack: list[tuple[Term, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:  # its children are listed: list it
            order.append(node)
            k = kinds[node] = _kind(node)
            for a in node.args:
                edges[a] = edges.get(a, 0) + 1
                parent_kind[a] = k
        elif node not in expanded:
            expanded.add(node)
            stack.append((node, True))
            for child in reversed(node.args):  # the first child on top: listed first
                if child not in expanded and child not in vals and child.args and not _foreign(child):
                    stack.append((child, False))
    return order, kinds, edges, parent_kind


def _val(node: Term, ctx: Context) -> Poly:
    p = ctx.vals.get(node)
    if p is None:
        if node.args or _foreign(node):
            # a foreign operand (a float or array term inside an opaque call): an atom of its own
            p = ctx.known_atom(node, (), UNBOUNDED)
        else:
            p = _leaf(node)
        ctx.vals[node] = p
    return p


def _leaf(node: Term) -> Poly:
    if node.op is _CONST:
        return p_const(int(node.attr))
    return p_atom(node)


def _linear(root: Term, kinds: dict | None, ctx: Context) -> Poly | None:
    """Sum region: propagate coefficients down the tree of add/sub/neg/k*x nodes.

    Without ``kinds`` (no walk before it), the region is every add/sub/neg/k*x node below the
    root not normalised yet, and None is returned when that is not a tree of them over names,
    constants and normalised terms (a node met twice, or one to normalise first).
    """
    vals = ctx.vals
    spend = ctx.budget.spend
    acc: Poly = {}
    names = 0
    seen: set[Term] = set()
    stack: list[tuple[Term, int]] = [(root, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, k = pop()
        if kinds is None and node is not root and node not in vals and _kind(node) == _LIN and not _foreign(node):
            if node in seen:
                return None  # shared inside the region: the walk counts its edges
            seen.add(node)
        elif node is not root and (node in vals or kinds is None or kinds.get(node) != _LIN):
            if kinds is None and node.args and node not in vals:
                return None  # a node to normalise first: the walk orders them
            if node.op is _SYMBOL and node.dtype == INT64 and node.shape == ():
                m = ((node, 1),)  # a name (not a foreign one): its monomial, straight into the sum
                v = acc.get(m, 0) + k
                if v:
                    acc[m] = v
                else:
                    del acc[m]
                names += 1
                continue
            p = _val(node, ctx)
            spend(len(p))
            p_add_into(acc, p, k)
            continue
        op = node.op
        if op is _ADD:
            for a in node.args:
                push((a, k))
        elif op is _SUB:
            a, b = node.args
            push((a, k))
            push((b, -k))
        elif op is _NEG:
            push((node.args[0], -k))
        else:  # k * x: a product with at most one non-constant operand
            child = None
            for a in node.args:
                if _is_int_const(a):
                    k *= int(a.attr)
                else:
                    child = a
            if child is None:
                p_add_into(acc, p_const(k))
            elif k:
                push((child, k))
    spend(names)
    return acc


def _product(root: Term, kinds: dict, ctx: Context) -> Poly:
    """Product region: collect the powers of the factors, then multiply out."""
    vals = ctx.vals
    powers: dict[Term, int] = {}
    stack: list[tuple[Term, int]] = [(root, 1)]
    while stack:
        node, e = stack.pop()
        if node is not root and (node in vals or kinds.get(node) != _PROD):
            powers[node] = powers.get(node, 0) + e
            continue
        if node.op is _POW:
            base, exponent = node.args
            stack.append((base, e * int(exponent.attr)))
        else:
            for a in node.args:
                stack.append((a, e))
    for node in powers:
        if node.op is not _SYMBOL or node.dtype != INT64 or node.shape != ():
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
    if op is _FLOORDIV:
        return floordiv_poly(_val(args[0], ctx), _val(args[1], ctx), ctx)
    if op is _MOD:
        return mod_poly(_val(args[0], ctx), _val(args[1], ctx), ctx)
    if op is CEIL_DIV:
        return ceil_poly(_val(args[0], ctx), _val(args[1], ctx), ctx)
    if op is BROADCAST:
        return broadcast_poly(_val(args[0], ctx), _val(args[1], ctx), ctx)
    # any other op (abs, x**y with a symbolic exponent...): an atom whose integer operands are normalised
    new_args = tuple(a if _foreign(a) else inner_term(_val(a, ctx)) for a in args)
    term = Term(op, new_args, node.attr)
    rng = (0, INF) if op.name == "abs" else UNBOUNDED
    return ctx.known_atom(term, (), rng)
