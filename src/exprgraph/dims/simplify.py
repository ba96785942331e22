"""The simplifier: any integer term to its polynomial normal form, then to a canonical term.

The term's DAG is walked once, children first. Chains of one kind are flattened in one pass
(a *region*): sums and scalings (``add``, ``sub``, ``neg``, ``k*x``) collect coefficients, products
collect powers, nested max (or min) collect arguments. A node starts a new region when it is shared,
when its parent is of another kind, or when it is the root, so every node is handled once and a
chain of a million nodes costs linear time without recursion. Floor division, modulo, ceiling
division, max and min are rewritten by the rules in :mod:`.division` and :mod:`.maxmin`, sums by
:mod:`.combine`. Results are cached per term (terms are interned, so this is always sound).
"""

from __future__ import annotations

from typing import Any

from ..core.dtypes import INT64
from ..core.term import REGISTRY, Term
from ..core.walk import postorder_until
from ..errors import DimExpressionError
from .combine import combine_terms
from .context import Context, context
from .division import ceil_poly, floordiv_poly, mod_poly
from .maxmin import maxmin_poly
from .normal import (
    Budget,
    Poly,
    atom_key,
    inner_term,
    mono_key,
    p_add,
    p_add_into,
    p_atom,
    p_const,
    p_product,
    p_scale,
    top_term,
)
from .parse import parse_expression
from .polyparse import read_value
from .ranges import INF, UNBOUNDED
from .terms import CEIL_DIV, is_dim_term
from .unparse import unparse

__all__ = [
    "clear_caches",
    "to_poly",
    "simplify_term",
    "simplify_dim",
    "simplify_expression",
    "simplify_two_expressions",
]

_ADD, _SUB, _MUL, _NEG = REGISTRY["add"], REGISTRY["sub"], REGISTRY["mul"], REGISTRY["neg"]
_FLOORDIV, _MOD, _POW = REGISTRY["floordiv"], REGISTRY["mod"], REGISTRY["pow"]
_MAX, _MIN = REGISTRY["maximum"], REGISTRY["minimum"]
_CONST, _SYMBOL = REGISTRY["const"], REGISTRY["symbol"]

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

    def stop(n: Term) -> bool:
        return n in vals or _foreign(n)

    order = postorder_until((root,), stop)
    if not order:
        return _val(root, ctx)  # a foreign root: an atom of its own
    kinds: dict[Term, int] = {}
    edges: dict[Term, int] = {}
    parent_kind: dict[Term, int] = {}
    for node in order:
        k = _kind(node)
        kinds[node] = k
        for a in node.args:
            edges[a] = edges.get(a, 0) + 1
            parent_kind[a] = k
    for node in order:
        k = kinds[node]
        if k == _LEAF:
            vals[node] = _leaf(node)
        elif k == _OPAQUE:
            vals[node] = _opaque(node, ctx)
        elif node is root or edges[node] != 1 or parent_kind[node] != k:
            if k == _LIN:
                vals[node] = combine_terms(_linear(node, kinds, ctx), ctx)
            elif k == _PROD:
                vals[node] = _product(node, kinds, ctx)
            else:
                vals[node] = maxmin_poly(_collect(node, k, kinds, ctx), k == _MAXK, ctx)
        # else: inside a region, handled by the region's root
    return vals[root]


def _val(node: Term, ctx: Context) -> Poly:
    p = ctx.vals.get(node)
    if p is None:
        # a foreign operand (a float or array term inside an opaque call): an atom of its own
        p = ctx.known_atom(node, (), UNBOUNDED)
        ctx.vals[node] = p
    return p


def _leaf(node: Term) -> Poly:
    if node.op is _CONST:
        return p_const(int(node.attr))
    return p_atom(node)


def _linear(root: Term, kinds: dict, ctx: Context) -> Poly:
    """Sum region: propagate coefficients down the tree of add/sub/neg/k*x nodes."""
    vals = ctx.vals
    spend = ctx.budget.spend
    acc: Poly = {}
    stack: list[tuple[Term, int]] = [(root, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, k = pop()
        if node is not root and (node in vals or kinds.get(node) != _LIN):
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
    # the factors in the order the walk met them (right to left), each with its total power
    return p_product([(_val(node, ctx), e) for node, e in powers.items()], ctx.budget)


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
    # any other op (abs, x**y with a symbolic exponent...): an atom whose integer operands are normalised
    new_args = tuple(a if _foreign(a) else inner_term(_val(a, ctx)) for a in args)
    term = Term(op, new_args, node.attr)
    rng = (0, INF) if op.name == "abs" else UNBOUNDED
    return ctx.known_atom(term, (), rng)


def clear_caches() -> None:
    """Forget every cached parse, simplification, range and printed text (the results do not change)."""
    from .normal import clear_keys
    from .parse import clear_parse_cache
    from .polyparse import clear_name_cache
    from .polyprint import clear_print_cache
    from .terms import clear_const_cache
    from .unparse import clear_unparse_cache

    for positive in (False, True):
        context(positive).clear()
    clear_parse_cache()
    clear_unparse_cache()
    clear_keys()
    clear_name_cache()
    clear_print_cache()
    clear_const_cache()


# -- public API --------------------------------------------------------------------------------------------


def _check_term(term: Any) -> Term:
    if not is_dim_term(term):
        raise TypeError(f"a dimension expression must be an int64 scalar term, not {term!r}")
    return term


def simplify_term(term: Term, *, positive: bool = False) -> Term:
    """Canonical form of an int64 scalar term (names are >= 0, or >= 1 when ``positive``)."""
    ctx = context(positive)
    top = ctx.tops.get(term)
    if top is None:
        _check_term(term)
        ctx.maybe_trim()
        top = top_term(to_poly(term, ctx))
        ctx.tops[term] = top
    return top


def simplify_dim(dim: int | Term, *, positive: bool = False) -> int | Term:
    """A shape entry simplified: ints pass through, a term whose value is constant becomes an int.

    This is the hook for the core's shape rules (broadcasting, concatenation, dot).
    """
    if dim.__class__ is int:
        return dim
    top = simplify_term(dim, positive=positive)
    if top.op is _CONST:
        return int(top.attr)
    return top


def simplify_expression(expr: int | str | Term, *, positive: bool = False) -> int | str | Term:
    """Simplify a dimension expression.

    An int comes back as is; a string gives an int when its value is constant, else the
    canonical text (an unparsable string comes back unchanged, as the reference does); a term
    gives an int or its canonical term.

    >>> simplify_expression("2*batch//batch")
    2
    >>> simplify_expression("(seq+7)//8*8")
    '8*((7+seq)//8)'
    """
    cls = expr.__class__
    if cls is int:
        return expr
    if cls is str:
        ctx = context(positive)
        result = ctx.texts.get(expr)
        if result is None:
            ctx.maybe_trim()
            result = _simplify_text(expr, ctx)
            ctx.texts[expr] = result
        return result
    if cls is Term:
        return simplify_dim(expr, positive=positive)
    if isinstance(expr, int) and not isinstance(expr, bool):
        return int(expr)
    raise TypeError(f"simplify_expression() takes an int, a string or a term, not {type(expr).__name__}")


def _simplify_text(text: str, ctx: Context) -> int | str:
    """``simplify_expression`` on a text: the fast path of :mod:`.polyparse`, else parse and simplify the term."""
    result = read_value(text, ctx)  # None: declined (or a coefficient outside int64, which the general path reports)
    if result is not None:
        return result
    try:
        term = parse_expression(text)
    except DimExpressionError:
        return text
    top = simplify_term(term, positive=ctx.positive)
    if top.op is _CONST:
        return int(top.attr)
    return unparse(top)


def _as_term(expr: int | str | Term) -> Term:
    if expr.__class__ is Term:
        return _check_term(expr)
    if isinstance(expr, str):
        return parse_expression(expr)
    if isinstance(expr, int) and not isinstance(expr, bool):
        return parse_expression(str(int(expr)))
    raise TypeError(f"expected an int, a string or a term, not {type(expr).__name__}")


def simplify_two_expressions(expr1: int | str | Term, expr2: int | str | Term, *, positive: bool = False) -> dict:
    """The terms of ``expr1 - expr2`` as ``{monomial text: coefficient}``: empty when they are equal.

    The constant difference, when not zero, is listed under ``"1"``.

    >>> simplify_two_expressions("s52+seq_length", "s52+s70")
    {'s70': -1, 'seq_length': 1}
    """
    ctx = context(positive)
    ctx.maybe_trim()
    p1 = to_poly(_as_term(expr1), ctx)
    p2 = to_poly(_as_term(expr2), ctx)
    diff = p_add(p1, p_scale(p2, -1))
    out: dict[str, int] = {}
    for m, c in sorted(diff.items(), key=lambda mc: (not mc[0], mono_key(mc[0]))):
        out["*".join(atom_key(a) for a, e in sorted(m, key=lambda ae: atom_key(ae[0])) for _ in range(e)) or "1"] = c
    return out
