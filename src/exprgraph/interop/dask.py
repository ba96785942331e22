"""Lazy, blockwise evaluation of terms on dask arrays (needs ``exprgraph[dask]``).

``evaluate(outputs, {name: dask_array})`` returns dask arrays at once and computes nothing. The
values of scalar symbols are broadcast against each other and cut into blocks; each block is one
task that runs :func:`exprgraph.eval.evaluate` on that block for *all* the outputs together, so
shared subterms are computed once per block and every block's inputs are read once. Each output
is then a dask array picking its part of those results. The tasks carry the terms themselves
(terms pickle as flat node lists and are interned again on arrival), so the graph runs on any
dask scheduler: threads, processes, or a ``distributed`` cluster of many machines.

Tensor symbols (declared with a shape) take their whole value in every block: they are the
parameters of the computation, the scalar symbols are its batch.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core import Term
from ..core.walk import postorder
from ..errors import EvaluationError, MissingValueError
from ..eval import evaluate as evaluate_numpy
from ..eval.bind import NUMPY_DTYPES
from ._optional import require

__all__ = ["evaluate", "evaluate_block"]

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def evaluate_block(
    outputs: tuple[Term, ...], names: tuple[str, ...], fixed: dict[str, Any], n_batch: int, *blocks: Any
) -> tuple:
    """The values of all ``outputs`` on one block: ``blocks`` are the values of ``names``, in order.

    The first ``n_batch`` blocks are pieces of the batch (all of one shape), the rest whole
    parameters. This is the one task each block runs; every output comes back with the block's shape.
    """
    env = dict(fixed)
    env.update(zip(names, blocks, strict=True))
    values = evaluate_numpy(list(outputs), env)
    shape = np.shape(blocks[0])
    return tuple(v if np.shape(v) == shape else np.broadcast_to(v, shape) for v in values)


def _lookup(env: Mapping[Any, Any], symbol: Term) -> Any:
    if symbol in env:
        return env[symbol]
    if symbol.name in env:
        return env[symbol.name]
    raise MissingValueError(f"no value for the symbol {symbol.name!r}")


def evaluate(outputs: Term | Sequence[Term], env: Mapping[Any, Any]) -> Any:
    """Dask arrays for the values of ``outputs`` (one for a term, a list for a list), computed lazily.

    ``env`` maps symbols or names to dask arrays, numpy arrays or numbers. The outputs must be
    scalar terms (their values take the broadcast shape of the scalar symbols' values).
    """
    require("dask.array", "dask")
    import dask.array as da
    from dask.base import tokenize

    single = outputs.__class__ is Term
    outs = tuple([outputs] if single else outputs)
    for t in outs:
        if t.__class__ is not Term:
            raise TypeError(f"evaluate() takes terms, got a {type(t).__name__}")
        if t.shape:
            raise EvaluationError(f"dask evaluation takes scalar terms; {t.op.name} has shape {t.shape}")
    fixed, batch_names, batch, params = _sort_symbols(outs, env)
    token = tokenize(outs, batch_names, fixed, *batch, *(v for _, v in params))
    dtypes = [NUMPY_DTYPES[t.dtype] for t in outs]
    if not batch:
        return _unbatched(outs, fixed, params, dtypes, single)
    batch = list(da.broadcast_arrays(*batch))
    ndim = batch[0].ndim
    index = _LETTERS[:ndim]
    args: list[Any] = []
    for value in batch:
        args += [value, index]
    names = list(batch_names)
    _add_parameters(params, args, names)
    combined = da.blockwise(
        evaluate_block,
        index,
        outs,
        None,
        tuple(names),
        None,
        fixed,
        None,
        len(batch),
        None,
        *args,
        dtype=object,
        meta=np.empty((0,) * ndim, dtype=object),
        concatenate=True,
        name=f"exprgraph-evaluate-{token}",
    )
    results = [
        combined.map_blocks(operator.getitem, k, dtype=dtype, meta=np.empty((0,) * ndim, dtype=dtype))
        for k, dtype in enumerate(dtypes)
    ]
    return results[0] if single else results


def _sort_symbols(outs: tuple, env: Mapping[Any, Any]) -> tuple[dict[str, Any], list[str], list[Any], list]:
    """The symbols' values: plain numbers by name, the batched arrays (names, values), and tensor parameters."""
    import dask.array as da

    fixed: dict[str, Any] = {}
    batch_names: list[str] = []
    batch: list[Any] = []
    params: list[tuple[str, Any]] = []
    for s in (n for n in postorder(outs) if n.op.name == "symbol"):
        value = _lookup(env, s)
        if s.shape:
            params.append((s.name, value))  # a parameter: the whole value in every block
        elif isinstance(value, da.Array) or np.ndim(value) > 0:
            batch_names.append(s.name)
            batch.append(da.asarray(value))
        else:
            fixed[s.name] = value
    return fixed, batch_names, batch, params


def _add_parameters(params: list, args: list[Any], names: list[str]) -> None:
    """Append each tensor parameter to the blockwise ``args`` (one chunk, on axes of its own) and ``names``."""
    import dask.array as da

    letters = iter(_LETTERS.upper())
    for name, value in params:
        value = da.asarray(value)
        value = value.rechunk(value.shape)  # one chunk: every block gets the whole parameter
        try:
            axes = "".join(next(letters) for _ in range(value.ndim))  # indices of no output axis
        except StopIteration:
            raise EvaluationError("dask evaluation takes tensor parameters of at most 26 axes in all") from None
        args += [value, axes]
        names.append(name)


def _unbatched(outs: tuple, fixed: dict, params: list, dtypes: list, single: bool) -> Any:
    """Outputs whose symbols are all plain numbers or parameters: one delayed task for all of them."""
    import dask
    import dask.array as da

    names = tuple(fixed) + tuple(name for name, _ in params)
    values = [fixed[n] for n in fixed] + [v for _, v in params]
    task = dask.delayed(_evaluate_all, pure=True)(outs, names, *values)
    results = [da.from_delayed(task[k], shape=(), dtype=dtype) for k, dtype in enumerate(dtypes)]
    return results[0] if single else results


def _evaluate_all(outs: tuple, names: tuple, *values: Any) -> tuple:
    return tuple(evaluate_numpy(list(outs), dict(zip(names, values, strict=True))))
