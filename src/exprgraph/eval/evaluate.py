"""Numpy evaluation of terms: vectorised, each shared node once, intermediates freed early.

The DAG of the outputs is walked once in dependency order. Every node keeps a count of the
operand slots still waiting for it; when the count reaches zero its value is dropped, so a long
chain holds only a few arrays at a time. A ufunc whose operand is an intermediate we computed,
that nobody else will read and that has the result's shape and dtype, writes its result into
that operand's buffer (``out=``) instead of allocating a new one. User inputs and constants are
never written to.

Semantics are IEEE: ``log(-1)`` is nan and ``1/0`` is inf, with no warnings. Integer ``//``
and ``%`` follow Python's floor semantics, except that an integer division by zero gives 0
(numpy's behaviour) instead of raising. Integer ``**`` a negative integer raises
:class:`~exprgraph.errors.EvaluationError`, since int64 cannot hold the result; ``a**0.5`` is
``sqrt(a)`` and a float to an odd integer power keeps its sign for every exponent (see the op
table's ``pow``).

No array larger than ``max_elements`` (see :mod:`.limits`) is created: a broadcast or a matrix
product that would exceed it raises :class:`~exprgraph.errors.SizeLimitError` before allocating.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, overload

import numpy as np

from ..core.dtypes import BOOL
from ..core.stdops import bool_casts
from ..core.term import Term
from ..core.traversal import schedule
from ..errors import EvaluationError, SizeLimitError
from .bind import NUMPY_DTYPES, bind_symbols, const_value
from .inputs import OnUnusedInput, check_env, check_unused, given_value
from .limits import check_elements, limit_in_force

__all__ = ["evaluate", "evaluate_nodes"]

_ndarray = np.ndarray
_ufunc = np.ufunc
_INT64 = NUMPY_DTYPES["int64"]
_broadcast_shapes = np.broadcast_shapes


@overload
def evaluate(
    term_or_terms: Term,
    env: Mapping[Any, Any] | None = None,
    *,
    max_elements: int | None = None,
    on_unused_input: OnUnusedInput = "ignore",
) -> Any: ...
@overload
def evaluate(
    term_or_terms: Sequence[Term],
    env: Mapping[Any, Any] | None = None,
    *,
    max_elements: int | None = None,
    on_unused_input: OnUnusedInput = "ignore",
) -> list[Any]: ...


def evaluate(
    term_or_terms: Term | Sequence[Term],
    env: Mapping[Any, Any] | None = None,
    *,
    max_elements: int | None = None,
    on_unused_input: OnUnusedInput = "ignore",
) -> Any:
    """Value of a term (or list of values of several terms) for the symbol values in ``env``.

    ``env`` maps symbols, or their names, to numbers or numpy arrays. Array values evaluate
    many parameter sets at once, broadcasting like numpy. Results are numpy scalars or arrays
    of each term's dtype (and may share memory with the inputs). No array of more than
    ``max_elements`` elements is created (default ``$EXPRGRAPH_MAX_ELEMENTS``, else 2**28): a
    larger broadcast raises :class:`~exprgraph.errors.SizeLimitError` before allocating.

    ``env`` may also give the value of an intermediate term (or a constant): it replaces that
    term's computation, as PyTensor's ``w.eval({z: 3})`` (see :mod:`.inputs`). A symbol with no
    value raises :class:`~exprgraph.errors.MissingValueError` (an EvaluationError and a KeyError).
    An entry the outputs do not need (a name no symbol has, say) follows ``on_unused_input``:
    ``"raise"`` (PyTensor's default: :class:`~exprgraph.errors.UnusedInputError`), ``"warn"`` or
    ``"ignore"`` (ours, so one env serves many expressions).

    >>> from exprgraph import symbols, log
    >>> x, y = symbols("x y")
    >>> float(evaluate(x * y + 1, {"x": 2, y: 3}))
    7.0
    >>> evaluate([x / 0, log(-x)], {"x": [1.0, 2.0]})
    [array([inf, inf]), array([nan, nan])]
    >>> float(evaluate((x + 1) * 2, {x + 1: 5.0}))
    10.0
    """
    limit = limit_in_force(max_elements)
    if term_or_terms.__class__ is Term:
        return _run((term_or_terms,), {} if env is None else env, limit, on_unused_input)[0]
    return _run(_outputs(term_or_terms, "evaluate"), {} if env is None else env, limit, on_unused_input)


def evaluate_nodes(
    term_or_terms: Term | Sequence[Term],
    env: Mapping[Any, Any] | None = None,
    *,
    max_elements: int | None = None,
    on_unused_input: OnUnusedInput = "ignore",
) -> dict[Term, Any]:
    """The value of every node the evaluation of ``term_or_terms`` computes, children first: ``{node: value}``.

    CGraph's ``values(f, fargs)``: the symbols, constants and intermediates with the outputs, in
    one pass (values are kept, none is overwritten). Nodes below a term whose value ``env`` gives
    are not computed, so they are not in the result. Arguments as for :func:`evaluate`.

    >>> from exprgraph import symbols
    >>> x, y = symbols("x y")
    >>> {str(node): int(v) for node, v in evaluate_nodes((x + y) * x, {x: 2, y: 3}).items()}
    {'x': 2, 'y': 3, 'x + y': 5, '(x + y)*x': 10}
    """
    outputs = (term_or_terms,) if term_or_terms.__class__ is Term else _outputs(term_or_terms, "evaluate_nodes")
    env = {} if env is None else env
    given = check_env(env)
    order = schedule(outputs, given)[0]
    # every node an output: each keeps one read that is never released, so no value is dropped or reused
    values = _run(tuple(order), env, limit_in_force(max_elements), on_unused_input)
    return dict(zip(order, values, strict=True))


def _outputs(terms: Any, caller: str) -> tuple[Term, ...]:
    """``terms`` (a list or tuple of terms) as a tuple, checked."""
    if not isinstance(terms, (list, tuple)):
        raise TypeError(f"{caller}() takes a term or a list/tuple of terms, not {type(terms).__name__}")
    outputs = tuple(terms)
    for t in outputs:
        if t.__class__ is not Term:
            raise TypeError(f"{caller}() takes terms, got a {type(t).__name__} in the list")
    return outputs


# how a node is computed: a kind per op, found once per call
_UNARY, _BINARY, _UNARY_CAST, _BINARY_CAST, _IMPL, _CONST, _SYMBOL = range(7)


def _kind(op: Any, n: int) -> int:
    if op.name == "const":
        return _CONST
    if op.name == "symbol":
        return _SYMBOL
    ufunc = op.ufunc
    if ufunc.__class__ is _ufunc and ufunc.nout == 1 and ufunc.signature is None and op.name != "pow":
        casts = op.counts_bools or op.float_result  # bool operands are cast (see bool_casts)
        if ufunc.nin == n == 1:
            return _UNARY_CAST if casts else _UNARY
        if ufunc.nin == 2 == n:
            return _BINARY_CAST if casts else _BINARY
    return _IMPL


def _run(outputs: tuple[Term, ...], env: Mapping[Any, Any], limit: int, policy: OnUnusedInput) -> list[Any]:
    """Evaluate ``outputs`` (already validated) in one walk of their DAG, no array above ``limit`` elements."""
    given = check_env(env)
    order, pending = schedule(outputs, given)
    symbols = [t for t in order if not t.args and t.op.name == "symbol"]
    check_unused(env, order, symbols, policy)
    kinds = _kinds_of(order)
    with np.errstate(all="ignore"):
        # casting inputs is silent too (nan to int64, say)
        values, owned = bind_symbols(symbols, env, evaluate)
        if given:
            for i, node in enumerate(order):
                if node in given:  # a given value replaces the node's computation
                    values[node] = given_value(given[node], node)
                    kinds[i] = _SYMBOL
        _walk(order, kinds, values, owned, pending, limit)
        return [values[t] for t in outputs]


def _kinds_of(order: list[Term]) -> list[int]:
    """How each node of ``order`` is computed (:func:`_kind`, found once per op and operand count)."""
    kinds: dict[Any, tuple[int, ...]] = {}
    out = []
    for node in order:
        n = len(node.args)
        if n < 3:
            op = node.op
            by_arity = kinds.get(op)
            if by_arity is None:
                by_arity = kinds[op] = (_kind(op, 0), _kind(op, 1), _kind(op, 2))
            out.append(by_arity[n])
        else:
            out.append(_IMPL)
    return out


def _walk(order: list[Term], kinds: list[int], values: dict, owned: set, pending: dict, limit: int) -> None:
    """Compute every node of ``order`` into ``values``, dropping each value after its last reader."""
    dtypes = NUMPY_DTYPES
    node: Term | None = None
    fresh = True  # whether the value just computed is a buffer made by a ufunc (ours to reuse)
    try:
        for node, kind in zip(order, kinds, strict=True):
            args = node.args
            op = node.op
            # the hot paths, inline: elementwise ufuncs of one or two operands without bools
            if (kind == _BINARY_CAST and args[0].dtype != BOOL and args[1].dtype != BOOL) or kind == _BINARY:
                a, b = args
                va, vb = values[a], values[b]
                if va.size * vb.size > limit:  # the broadcast may be larger than either operand
                    check_elements(_broadcast_shapes(va.shape, vb.shape), limit, f"evaluating {op.name}")
                want = dtypes[node.dtype]
                out = None
                if a in owned and va.dtype == want and pending[a] == (2 if a is b else 1):
                    if va.shape == vb.shape or not vb.ndim or _broadcast_shapes(va.shape, vb.shape) == va.shape:
                        out = va
                if out is None and b in owned and vb.dtype == want and pending[b] == 1:
                    if vb.shape == va.shape or not va.ndim or _broadcast_shapes(va.shape, vb.shape) == vb.shape:
                        out = vb
                result = op.ufunc(va, vb) if out is None else op.ufunc(va, vb, out=out)
            elif (kind == _UNARY_CAST and args[0].dtype != BOOL) or kind == _UNARY:
                (a,) = args
                va = values[a]
                want = dtypes[node.dtype]
                result = op.ufunc(va, out=va) if a in owned and va.dtype == want and pending[a] == 1 else op.ufunc(va)
            elif kind == _SYMBOL:
                continue
            elif kind == _CONST:
                values[node] = const_value(node)
                continue
            else:
                result, fresh = _apply(node, args, values, owned, pending, limit)
                want = dtypes[node.dtype]
            if not fresh:
                # an impl's result may be a view of an input, or kept by the impl: never ours
                result = _finish(result, node)
                fresh = True
            elif result.__class__ is _ndarray and result.dtype == want:
                owned.add(node)  # a ufunc's result: a new buffer, or a dead operand's we had
            else:
                result = _finish(result, node)
                if result.__class__ is _ndarray:
                    owned.add(node)  # a cast copy of a ufunc's result
            values[node] = result
            for a in args:
                left = pending[a] - 1
                pending[a] = left
                if not left:
                    del values[a]
                    owned.discard(a)
    except (EvaluationError, SizeLimitError):
        raise
    except (ArithmeticError, ValueError, TypeError) as exc:
        if node is None:  # pragma: no cover - no node has run yet
            raise
        raise _op_error(node, [values.get(a) for a in node.args], exc) from None


def _apply(node: Term, args: tuple[Term, ...], values: dict, owned: set, pending: dict, limit: int) -> tuple[Any, bool]:
    """Compute ``node`` the general way (bool casts, folds, impls): ``(value, made by a ufunc)``."""
    op = node.op
    vs = [values[a] for a in args]
    name = op.name
    if len(vs) > 1:
        size = 1
        for v in vs:
            size *= v.size
        if size > limit:  # a bound on the result's size: look closer only when it is large
            _check_result_size(node, vs, limit)
    want = NUMPY_DTYPES[node.dtype]
    if op.counts_bools or op.float_result:
        # arithmetic counts bools as integers (True + True == 2), float functions as floats (see bool_casts)
        casts = bool_casts(node)
        vs = [
            v.astype(NUMPY_DTYPES[c]) if c is not None and v.dtype.kind == "b" else v
            for v, c in zip(vs, casts, strict=True)
        ]
    ufunc = op.ufunc
    n = len(vs)
    if ufunc.__class__ is _ufunc and ufunc.nout == 1 and (ufunc.nin == n or (ufunc.nin == 2 and n > 2)):
        if name == "pow":
            if _square_of(vs, want):
                # x**2 as a square: exact, and far faster than the generic power loop
                ufunc, vs, args, n = np.square, vs[:1], args[:1], 1
            elif op.impl is not None and _power_needs_impl(vs):
                for a in args:
                    owned.discard(a)
                return _call_impl(node, vs), False
        # only elementwise ufuncs may write over an operand (not gufuncs such as matmul)
        out = _dead_buffer(args, vs, want, owned, pending) if ufunc.signature is None else None
        if n <= 2:
            return (ufunc(*vs) if out is None else ufunc(*vs, out=out)), True
        return _fold(ufunc, vs, want, out), True
    for a in args:
        # an impl may keep or return a view of its operand, so we never write into it again
        owned.discard(a)
    return _call_impl(node, vs), False


def _dead_buffer(args: tuple[Term, ...], vs: list, want: np.dtype, owned: set, pending: dict) -> Any:
    """An operand buffer this node may overwrite: ours, read by no one after it, of the result's type."""
    n = len(args)
    # a fold over n > 2 operands writes its first step into the buffer: it must be one of the first
    # two operands and not be read again by a later step
    for i, a in enumerate(args if n <= 2 else args[:2]):
        if a not in owned or (n > 2 and a in args[2:]):
            continue
        v = vs[i]
        if v.__class__ is not _ndarray or v.dtype != want:
            continue
        # dead after this node: every pending read of it is one of this node's operand slots
        if pending[a] != (1 if n == 1 else args.count(a)):
            continue
        shape = v.shape
        for j, w in enumerate(vs):
            if j != i and w.shape != shape and w.ndim and _broadcast_shapes(shape, w.shape) != shape:
                break
        else:
            return v
    return None


def _fold(ufunc: Any, vs: list, want: np.dtype, out: Any) -> Any:
    """A binary ufunc folded over three or more operands, left to right, reusing one buffer."""
    acc = ufunc(vs[0], vs[1]) if out is None else ufunc(vs[0], vs[1], out=out)
    for v in vs[2:]:
        if acc.__class__ is _ndarray and acc.dtype == want and (not v.ndim or v.shape == acc.shape):
            acc = ufunc(acc, v, out=acc)
        else:
            acc = ufunc(acc, v)
    return acc


def _square_of(vs: list, want: np.dtype) -> bool:
    """Whether ``base ** exponent`` is ``base`` squared in the result dtype (and check int powers)."""
    base, exponent = vs
    if exponent.ndim == 0 and base.dtype == want and exponent == 2:
        return True
    if base.dtype.kind == "i" and exponent.dtype.kind == "i" and (exponent < 0).any():
        raise EvaluationError(
            "integer ** negative integer is undefined in int64: make the base or the exponent a float (e.g. x**-1.0)"
        )
    return False


def _power_needs_impl(vs: list) -> bool:
    """Whether numpy's power alone would give another value than the op table's (see stdops._power)."""
    base, exponent = vs
    kind = exponent.dtype.kind
    if base.dtype.kind != "f" and not (kind == "f" and exponent.ndim):
        return False
    if exponent.ndim and kind in "fiu" and bool((exponent == 2).any()):
        return True  # an array of exponents holding 2: numpy uses C's pow there, not the rounded square
    if kind == "f":
        # an array of exponents holding 0.5: numpy uses C's pow there, not sqrt
        return bool(exponent.ndim) and base.dtype.kind == "f" and bool((exponent == 0.5).any())
    if kind in "iu":
        # an int exponent beyond 2**53 is even as a float: the sign of an odd power would be lost
        return bool(((exponent > 2**53) | (exponent < -(2**53))).any())
    return False


def _check_result_size(node: Term, vs: list, limit: int) -> None:
    """Raise SizeLimitError when ``node``'s result over these operand values would exceed ``limit`` elements."""
    shapes = [np.shape(v) for v in vs]
    name = node.op.name
    try:
        if name in ("matmul", "dot") and len(shapes[0]) >= 2 and len(shapes[1]) >= 2:
            a, b = shapes
            if name == "matmul":
                shape = (*_broadcast_shapes(a[:-2], b[:-2]), a[-2], b[-1])
            else:
                shape = (*a[:-1], *b[:-2], b[-1])
        elif name in ("matmul", "dot", "sum", "transpose"):
            return  # no larger than an operand
        else:
            shape = _broadcast_shapes(*shapes)
    except ValueError:
        return  # shapes that do not broadcast: the op reports that itself
    check_elements(shape, limit, f"evaluating {name}")


def _call_impl(node: Term, vs: Any) -> Any:
    op = node.op
    impl = op.impl
    if impl is None:
        raise EvaluationError(f"op {op.name!r} has no numpy implementation (neither impl nor ufunc)")
    if op.attr_name is not None:
        attr = node.attr
        if op.batch_attr is not None:
            ndim = node.args[0].ndim
            value_ndim = np.ndim(vs[0])
            if value_ndim != ndim:
                # leading batch axes (many parameter sets): the attr reads on the trailing axes
                attr = op.batch_attr(attr, ndim, value_ndim)
        return impl(*vs, attr=attr)
    return impl(*vs)


def _finish(value: Any, node: Term) -> Any:
    """``value`` as a numpy scalar or array of ``node``'s dtype (0-d arrays become scalars)."""
    want = NUMPY_DTYPES[node.dtype]
    if not isinstance(value, (np.ndarray, np.generic)):
        try:
            value = np.asarray(value, dtype=want)
        except (TypeError, ValueError) as exc:
            raise EvaluationError(f"op {node.op.name!r} returned a {type(value).__name__}: {exc}") from None
    elif value.dtype != want:
        value = value.astype(want)
    if value.__class__ is _ndarray and not value.ndim:
        value = value[()]
    return value


def _op_error(node: Term, vs: list, exc: Exception) -> EvaluationError:
    shapes = ", ".join(f"{v.dtype}{list(v.shape)}" if hasattr(v, "dtype") else type(v).__name__ for v in vs)
    return EvaluationError(f"evaluating {node.op.name}({shapes}) failed: {exc}")
