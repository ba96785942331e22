"""The standard table, rounding and sign: floor, ceil, trunc and sign.

Each keeps its operand's dtype (a bool counts as an int64), as numpy 2 does: rounding an integer
gives it back unchanged, exactly. Piecewise constant, so their gradient is zero wherever it exists.
Importing this module registers them. Imports the lower core modules and the op-building helpers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .declare import _call
from .dtypes import FLOAT32, FLOAT64, INT64
from .grad_tools import _no_grad
from .inference import arith


def _rounding(ufunc: Any) -> Any:
    """A rounding function that returns integers as they are (numpy before 2.1 made them floats)."""

    def apply(x: Any) -> Any:
        x = np.asarray(x)
        if x.dtype.kind in "biu":
            return x.astype(np.int64)
        return ufunc(x)

    return apply


def _sign(x: Any) -> Any:
    # numpy's sign: -1, 0 or 1 in the operand's dtype (+0.0 for both zeros, nan for nan)
    x = np.asarray(x)
    return np.sign(x.astype(np.int64) if x.dtype.kind == "b" else x)


def _llvm_rounding(intrinsic: str) -> dict[str, str]:
    # an integer is its own floor: the operand, unchanged
    return {
        FLOAT64: f"call double @llvm.{intrinsic}.f64(double {{0}})",
        FLOAT32: f"call float @llvm.{intrinsic}.f32(float {{0}})",
        INT64: "add i64 {0}, 0",
    }


for _name, _ufunc, _doc in (
    ("floor", np.floor, "The largest integer not above x (integers are their own floor)."),
    ("ceil", np.ceil, "The smallest integer not below x (integers are their own ceiling)."),
    ("trunc", np.trunc, "x rounded toward zero (integers are unchanged)."),
):
    _call(
        _name,
        1,
        arith,
        f"eg_{_name}({{0}})",
        impl=_rounding(_ufunc),
        grad=_no_grad,
        llvm=_llvm_rounding(_name),
        counts_bools=True,
        doc=_doc,
    )


_call(
    "sign",
    1,
    arith,
    "eg_sign({0})",
    impl=_sign,
    grad=_no_grad,
    llvm={
        FLOAT64: "call double @eg_sign_d(double {0})",
        FLOAT32: "call float @eg_sign_f(float {0})",
        INT64: "call i64 @eg_sign_i(i64 {0})",
    },
    counts_bools=True,
    doc="-1, 0 or 1 by the sign of x, in x's dtype (0 for both zeros, nan for nan).",
)
