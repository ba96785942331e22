"""Vector terms of constant shape as arrays of scalar terms: the form scalar backends and sparse derivatives read.

``scalarise(terms, symbols)`` gives, for each term, a numpy object array (of the term's shape)
of scalar terms over scalar symbols: a vector symbol ``x`` of shape ``(n,)`` becomes the scalars
``x_0 ... x_{n-1}`` (:func:`entry_symbols`), and every op is read entry by entry:

- elementwise ops (those with a scalar C rendering): one scalar term per entry of the broadcast
  operands (``sin(x)[i] = sin(x[i])``);
- moving ops (``slice_axis``, ``take``, ``concat``, ``reshape``, ``broadcast_to``, ``transpose``):
  the op's own numpy evaluation run on the object arrays, so entries move and nothing is computed;
- reductions (``sum``, ``amax``, ``amin``, ``prod``, ``mean``): one variadic ``add`` / ``maximum``
  / ``minimum`` / ``mul`` per output entry (``sum(x) = x_0 + ... + x_{n-1}``);
- contractions (``dot``, ``matmul`` of at most two axes, ``einsum``): a sum of products per entry;
- ``scatter_add`` at constant positions: the sum of the updates that land on each entry, zero
  where none does.

Positions are constants, checked against the axis again here (:class:`IndexOutOfRangeError`
naming the index). Ops whose result depends on values in other ways (``topk_indices``,
``take_along``, ``access`` at computed positions) raise :class:`ScalariseError` naming the op.
Shapes must be ints. The traversal is iterative (one pass in dependency order).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import IndexOutOfRangeError, ScalariseError
from .dtypes import BOOL, is_float
from .leaves import ConstArray, Symbol, const
from .op import get_op
from .ops_einsum import parse_spec, spec_text
from .term import Term
from .traversal import toposort

__all__ = ["scalarise", "entry_symbols", "is_scalar_program", "contraction_subscripts"]

#: ops that move entries without computing: their numpy evaluation runs on object arrays as it is
_MOVING = frozenset({"slice_axis", "take", "concat", "reshape", "broadcast_to", "transpose"})
#: reductions: the variadic op that folds an output entry's operands
_FOLDS = {"sum": "add", "mean": "add", "prod": "mul", "amax": "maximum", "amin": "minimum"}
#: folds of more operands than this are taken in blocks of _BLOCK (see :func:`_fold`)
_BLOCKED = 64
_BLOCK = 8


def is_scalar_program(terms: Sequence[Term]) -> bool:
    """Whether every node under ``terms`` is scalar-shaped (nothing to scalarise)."""
    return all(not t.shape for t in toposort(terms))


def entry_symbols(symbols: Sequence[Term], taken: set[str] | None = None) -> dict[Term, np.ndarray]:
    """For each symbol, an object array of scalar symbols of its shape: ``x`` -> ``x_0, x_1, ...``.

    Names are ``{name}_{flat index}``, with more underscores where that name is in ``taken`` or
    already given; a scalar symbol stands for itself (a 0-d array).
    """
    used = set(taken or ()) | {s.name for s in symbols}
    out: dict[Term, np.ndarray] = {}
    for s in symbols:
        if not s.shape:
            out[s] = _box(s)
            continue
        shape = _int_shape(s)
        names = []
        for k in range(math.prod(shape)):
            name = f"{s.name}_{k}"
            while name in used:
                name += "_"
            used.add(name)
            names.append(Symbol(name, s.dtype))
        out[s] = _array(names, shape)
    return out


def scalarise(
    terms: Sequence[Term],
    symbols: Mapping[Term, np.ndarray],
    known: Mapping[Term, Any] | None = None,
) -> list[np.ndarray]:
    """Each term as an object array of scalar terms (its shape), symbols read from ``symbols``.

    ``symbols`` maps each symbol to its entries (see :func:`entry_symbols`); ``known`` gives
    values computed already (folded subterms), whose entries become constants.
    """
    known = known or {}
    entries: dict[Term, np.ndarray] = {}
    for node in toposort(terms):
        if node in symbols:
            entries[node] = symbols[node]
        elif node in known:
            entries[node] = _constants(np.asarray(known[node]), node)
        elif node.op.name == "const":
            attr = node.attr
            entries[node] = _constants(np.asarray(attr.array if attr.__class__ is ConstArray else attr), node)
        elif node.op.name == "symbol":
            raise ScalariseError(f"the symbol {node.name!r} is not among the inputs; list it", op="symbol")
        else:
            entries[node] = _check(node, _entries(node, [entries[a] for a in node.args]))
    return [entries[t] for t in terms]


def _entries(node: Term, args: list[np.ndarray]) -> np.ndarray:
    """The entries of ``node`` from the entries of its operands."""
    name = node.op.name
    if node.op.c_render is not None:
        return _elementwise(node, args)
    if name in _MOVING:
        return _moving(node, args)
    if name in _FOLDS or name == "logsumexp":
        return _reduce(node, args[0])
    if name in ("dot", "matmul", "einsum"):
        return _contract(node, args)
    if name == "scatter_add":
        return _scatter(node, args)
    raise ScalariseError(
        f"{name} cannot be computed entry by entry at compile time (where its result goes depends on the "
        f"values); compile it with backend='numpy', and take derivatives by scalar symbols or with grad",
        op=name,
    )


def _elementwise(node: Term, args: list[np.ndarray]) -> np.ndarray:
    # f(a, b)[i] = f(a[i], b[i]) over the broadcast operands
    op, attr = node.op, node.attr
    if not node.shape:
        return _box(Term(op, tuple(a[()] for a in args), attr))
    wide = np.broadcast_arrays(*args)
    out = np.empty(node.shape, dtype=object)
    flat = out.reshape(-1)
    columns = [w.reshape(-1).tolist() for w in wide]
    for k, operands in enumerate(zip(*columns, strict=True)):
        flat[k] = Term(op, operands, attr)
    return out


def _moving(node: Term, args: list[np.ndarray]) -> np.ndarray:
    """Entries moved by the op's own numpy evaluation (object arrays move as numbers do)."""
    name = node.op.name
    if name == "take":
        axis = 0 if node.attr is None else node.attr % node.args[0].ndim
        index = np.vectorize(_const_int, otypes=[np.int64])(args[1]) if args[1].size else args[1].astype(np.int64)
        n = args[0].shape[axis]
        bad = index[(index < -n) | (index >= n)]
        if bad.size:
            raise IndexOutOfRangeError(
                f"take: index {int(bad.reshape(-1)[0])} is out of range for axis {axis} of length {n}",
                index=int(bad.reshape(-1)[0]),
                axis=axis,
            )
        return _as_array(np.take(args[0], index, axis=axis))
    assert node.op.impl is not None  # every moving op evaluates with numpy
    if node.attr is None:
        return _as_array(node.op.impl(*args))
    return _as_array(node.op.impl(*args, attr=node.attr))


def _reduce(node: Term, x: np.ndarray) -> np.ndarray:
    # sum(x, axis)[o] = add of x[o, r] over the reduced positions r (mul, maximum, minimum alike)
    axes = _axes(node.attr, x.ndim)
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, (*kept, *axes)).reshape((*(x.shape[i] for i in kept), -1))
    count = moved.shape[-1]
    out = np.empty(moved.shape[:-1], dtype=object)
    flat, rows = out.reshape(-1), moved.reshape(-1, count)
    if node.op.name == "logsumexp":
        for k in range(flat.size):
            flat[k] = _logaddexp_fold(list(rows[k]), node)
        return out
    fold = get_op(_FOLDS[node.op.name])
    for k in range(flat.size):
        flat[k] = _fold(fold, list(rows[k]), node)
    if node.op.name == "mean":
        # mean(x) = sum(x) / count
        div = get_op("truediv")
        for k in range(flat.size):
            flat[k] = div(flat[k], const(float(count)))
    return out


def _fold(fold: Any, items: list[Term], node: Term) -> Term:
    """One variadic fold of ``items`` (its identity for none, the item itself for one)."""
    if not items:
        identity = fold.identity
        if identity is None:
            raise ScalariseError(f"{node.op.name} of an empty axis has no value", op=node.op.name)
        return const(identity, node.dtype)
    if fold.name in ("add", "mul"):
        items = [_as_dtype(t, node.dtype) for t in items]  # numpy sums bools as ints, means ints as floats
    if len(items) == 1:
        return items[0]
    block = _BLOCK
    while len(items) > _BLOCKED:
        # a long fold in blocks: (a1 + ... + a8) + (a9 + ... + a16) + ..., then blocks of 64 of those,
        # so each level's blocks have one shape (the loops over repeated structure find them)
        items = [
            items[k] if k + 1 == len(items) else Term(fold, tuple(items[k : k + block]), None)
            for k in range(0, len(items), block)
        ]
        block = _BLOCKED
    return Term(fold, tuple(items), None)


def _logaddexp_fold(items: list[Term], node: Term) -> Term:
    """logsumexp of ``items`` as the op evaluates it: logaddexp folded left to right, -inf for none."""
    # logsumexp(e0, e1, e2) = logaddexp(logaddexp(e0, e1), e2): the same steps, so the same rounding
    if not items:
        return const(float("-inf"), node.dtype)
    items = [_as_dtype(t, node.dtype) for t in items]  # (an int operand is read as a float)
    out, logaddexp = items[0], get_op("logaddexp")
    for t in items[1:]:
        out = logaddexp(out, t)
    return out


def _contract(node: Term, args: list[np.ndarray]) -> np.ndarray:
    # out[o] = sum over the summed indices s of prod_j A_j[o, s] (dot and matmul as their einsum)
    subs, out_sub = contraction_subscripts(node)
    sizes: dict[str, int] = {}
    for sub, a in zip(subs, args, strict=True):
        sizes.update(zip(sub, a.shape, strict=True))
    summed = [ch for ch in sizes if ch not in out_sub]
    mul, add = get_op("mul"), get_op("add")
    out = np.empty(tuple(sizes[ch] for ch in out_sub), dtype=object)
    for where in np.ndindex(*out.shape):
        at = dict(zip(out_sub, where, strict=True))
        terms: list[Term] = []
        for rest in itertools.product(*(range(sizes[ch]) for ch in summed)):
            at.update(zip(summed, rest, strict=True))
            factors = [a[tuple(at[ch] for ch in sub)] for sub, a in zip(subs, args, strict=True)]
            terms.append(factors[0] if len(factors) == 1 else Term(mul, tuple(factors), None))
        out[where] = _fold(add, terms, node)
    return out


def _as_dtype(t: Term, dtype: str) -> Term:
    """``t`` as a ``dtype`` term where numpy's reduction converts it (else ``t``: the final check decides)."""
    if t.dtype == dtype:
        return t
    if t.dtype == BOOL:
        # b -> where(b, 1, 0): a count
        return get_op("where")(t, const(1, dtype), const(0, dtype))
    if is_float(dtype):
        # n -> n * 1.0: the float numpy converts each entry to before it sums
        return get_op("mul")(t, const(1.0, dtype))
    return t


def contraction_subscripts(node: Term) -> tuple[tuple[str, ...], str]:
    """The einsum subscripts of a contraction (``dot``/``matmul`` of at most two axes included)."""
    name = node.op.name
    if name == "einsum":
        return parse_spec(spec_text(tuple(node.attr)))
    a, b = (t.ndim for t in node.args)
    if a > 2 or b > 2:
        raise ScalariseError(f"{name} of operands with more than two axes: write it as an einsum", op=name)
    if a == 0 or b == 0:
        return ("ij"[:a], "ij"[:b]), "ij"[: max(a, b)]  # a product with a scalar
    left = "i" + "j" if a == 2 else "j"
    right = "jk" if b == 2 else "j"
    return (left, right), left[:-1] + right[1:]


def _scatter(node: Term, args: list[np.ndarray]) -> np.ndarray:
    # scatter_add(u, idx)[p] = sum of u at the positions where idx == p (0 where none)
    u, index = args
    axis, n = node.attr
    index = np.vectorize(_const_int, otypes=[np.int64])(index) if index.size else index.astype(np.int64)
    k = index.ndim
    buckets: dict[tuple, list[Any]] = {}
    for where in np.ndindex(*u.shape):
        pos = int(index[where[axis : axis + k]]) % n if k else int(index[()]) % n
        buckets.setdefault((*where[:axis], pos, *where[axis + k :]), []).append(u[where])
    add = get_op("add")
    out = np.empty(node.shape, dtype=object)
    zero = const(0, node.dtype)
    for where in np.ndindex(*out.shape):
        found = buckets.get(where)
        out[where] = zero if not found else _fold(add, found, node)
    return out


def _axes(attr: Any, ndim: int) -> tuple[int, ...]:
    if attr is None:
        return tuple(range(ndim))
    axes = (attr,) if isinstance(attr, int) else tuple(attr)
    return tuple(sorted(a % ndim for a in axes))


def _check(node: Term, out: np.ndarray) -> np.ndarray:
    """``out`` after checking it has ``node``'s shape and dtype (else the op is not entrywise as read)."""
    if out.shape != tuple(node.shape):
        raise ScalariseError(f"{node.op.name}: entries of shape {out.shape}, not {node.shape}", op=node.op.name)
    for t in out.reshape(-1):
        if t.__class__ is not Term or t.shape or t.dtype != node.dtype:
            found = getattr(t, "dtype", type(t).__name__)
            raise ScalariseError(
                f"{node.op.name}: an entry of dtype {found} where the term has {node.dtype}; "
                "use backend='numpy' for this term",
                op=node.op.name,
            )
    return out


def _constants(value: np.ndarray, node: Term) -> np.ndarray:
    """The entries of a known value, as scalar constants of ``node``'s dtype."""
    out = np.empty(value.shape, dtype=object)
    flat, numbers = out.reshape(-1), value.reshape(-1)
    for k in range(flat.size):
        flat[k] = const(numbers[k].item(), node.dtype)
    return out


def _const_int(t: Term) -> int:
    if t.op.name != "const":
        raise ScalariseError("an index computed at run time cannot be read entry by entry", op="take")
    return int(t.attr)


def _int_shape(t: Term) -> tuple[int, ...]:
    if not all(d.__class__ is int for d in t.shape):
        raise ScalariseError(
            f"{t.name if t.op.name == 'symbol' else t.op.name} has shape ({', '.join(str(d) for d in t.shape)}): "
            "its entries cannot be read as scalars; give every axis a constant length",
            op=t.op.name,
        )
    return tuple(t.shape)


def _box(t: Term) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = t
    return out


def _array(items: list[Term], shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def _as_array(value: Any) -> np.ndarray:
    """An object array from what a numpy evaluation gave (a lone term becomes a 0-d array)."""
    if isinstance(value, np.ndarray):
        return value
    return _box(value)
