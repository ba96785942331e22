"""The facts an op's entry states about itself (read by evaluation, code generators and converters)
agree with what the op does: float results, bools counted as integers, logical operands, libmvec."""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools

import numpy as np
import pytest

import exprgraph.dims  # noqa: F401 - completes the op table (ceil_div...)
from exprgraph.core import Op, Symbol, Term, ops
from exprgraph.eval import evaluate

#: ops that are not elementwise, and leaves
SKIP = {"dot", "matmul", "sum", "transpose", "symbol", "const", "access"}
SKIP |= {"slice_axis", "take", "scatter_add", "concat", "reshape", "broadcast_to"}  # the index ops
SKIP |= {"einsum", "topk_indices", "take_along", "scatter_along", "arange"}  # tests/core/test_ops_einsum.py
ELEMENTWISE = [op for op in ops() if op.name not in SKIP and op.arity[0] > 0]


def _n(op: Op) -> int:
    return op.arity[0] if op.arity[1] is not None else 2


def _term(op: Op, dtype: str) -> Term:
    return Term(op, tuple(Symbol(f"a{i}", dtype) for i in range(_n(op))))


@pytest.mark.parametrize("op", ELEMENTWISE, ids=lambda op: op.name)
def test_float_result_means_a_float_from_integers(op: Op) -> None:
    # float_result: int64 operands give float64, float32 ones float32; every other op keeps ints
    assert op.float_result == (_term(op, "int64").dtype == "float64")
    if op.float_result:
        assert _term(op, "float32").dtype == "float32"


@pytest.mark.parametrize("op", [op for op in ELEMENTWISE if isinstance(op.ufunc, np.ufunc)], ids=lambda op: op.name)
def test_where_numpy_treats_bools_otherwise_the_op_says_how_it_counts_them(op: Op) -> None:
    # numpy's add of two bools is a logical or; ours counts them (True + True == 2): an op whose
    # ufunc differs between bools and the same values as integers must declare how it reads bools
    n = _n(op)
    if op.logical or op.mixed_operands or op.ufunc.nin != min(n, 2):
        pytest.skip("bools are its own operands")
    rows = list(itertools.product([False, True], repeat=min(n, 2)))
    as_bools = [np.array(col, dtype=bool) for col in zip(*rows, strict=True)]
    as_ints = [a.astype(np.int64) for a in as_bools]
    with np.errstate(all="ignore"):
        on_ints = op.ufunc(*as_ints)
        try:
            on_bools = op.ufunc(*as_bools)
        except TypeError:  # numpy refuses bools outright (``-`` of a bool)
            differs = True
        else:
            differs = on_bools.dtype.kind == "b" or not np.array_equal(on_bools, on_ints, equal_nan=True)
    if differs and _term(op, "bool").dtype != "bool":
        assert op.counts_bools or op.float_result, f"{op.name} on bools is not numpy's {op.ufunc.__name__} on bools"
    # and evaluation counts them: the value on bools is the value on the same integers
    t_bool, t_int = _term(op, "bool"), _term(op, "int64")
    for row in rows:
        row = row + (row[-1],) * (n - len(row))
        with np.errstate(all="ignore"):
            got = evaluate(t_bool, {f"a{i}": v for i, v in enumerate(row)})
            want = evaluate(t_int, {f"a{i}": int(v) for i, v in enumerate(row)})
        if t_bool.dtype != "bool":
            np.testing.assert_array_equal(np.asarray(got, dtype=float), np.asarray(want, dtype=float))


@pytest.mark.parametrize("op", [op for op in ELEMENTWISE if op.logical], ids=lambda op: op.name)
def test_logical_ops_read_their_operands_as_truth_values(op: Op) -> None:
    for row in itertools.product([0, 2, -3], repeat=_n(op)):
        got = evaluate(_term(op, "int64"), {f"a{i}": v for i, v in enumerate(row)})
        want = evaluate(_term(op, "bool"), {f"a{i}": bool(v) for i, v in enumerate(row)})
        assert bool(got) == bool(want)


@pytest.mark.parametrize("op", [op for op in ELEMENTWISE if op.libmvec], ids=lambda op: op.name)
def test_libmvec_names_are_functions_of_the_math_library(op: Op) -> None:
    name = ctypes.util.find_library("m")
    if name is None:
        pytest.skip("no libm to look in")
    libm = ctypes.CDLL(name)
    assert op.libmvec is not None
    for symbol in (op.libmvec, op.libmvec + "f"):  # the double and the float function
        assert hasattr(libm, symbol), symbol
