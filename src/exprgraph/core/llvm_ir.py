"""LLVM IR templates of the standard ops (exprgraph.compile.llvm_emit puts the operands, cast to the
compute dtype, in). Imports dtypes only.
"""

from __future__ import annotations

import re

from .dtypes import BOOL, FLOAT32, FLOAT64, INT64


def _ir_single(fn: str) -> str:
    """The single precision name of a double function: ``llvm.exp.f32``, ``eg_mod_f``, ``eg_pow_ff``, ``tanf``."""
    if fn.endswith(".f64"):
        return fn[:-4] + ".f32"
    if fn.startswith("eg_"):
        return re.sub(r"_d(d?)$", lambda m: "_f" + ("f" if m.group(1) else ""), fn)
    return fn + "f"


def _ir_arith(float_op: str, int_op: str) -> dict[str, str]:
    """``a OP b`` on doubles, floats and int64 (bools are counted as integers, as ``arith`` types them)."""
    return {
        FLOAT64: f"{float_op} double {{0}}, {{1}}",
        FLOAT32: f"{float_op} float {{0}}, {{1}}",
        INT64: f"{int_op} i64 {{0}}, {{1}}",
    }


def _ir_compare(ordered: str, signed: str, unsigned: str) -> dict[str, str]:
    """A comparison of doubles or floats (ordered: false with nan, but ``ne``), int64s and bools."""
    return {
        FLOAT64: f"fcmp {ordered} double {{0}}, {{1}}",
        FLOAT32: f"fcmp {ordered} float {{0}}, {{1}}",
        INT64: f"icmp {signed} i64 {{0}}, {{1}}",
        BOOL: f"icmp {unsigned} i1 {{0}}, {{1}}",
    }


def _ir_call2(float_fn: str, int_fn: str) -> dict[str, str]:
    """A call of a two-operand helper or libm function, for doubles, floats and int64s."""
    return {
        FLOAT64: f"call double @{float_fn}(double {{0}}, double {{1}})",
        FLOAT32: f"call float @{_ir_single(float_fn)}(float {{0}}, float {{1}})",
        INT64: f"call i64 @{int_fn}(i64 {{0}}, i64 {{1}})",
    }


def _ir_math(fn: str) -> dict[str, str]:
    """A call of a one-operand function of a double, and of its single precision twin for a float."""
    return {FLOAT64: f"call double @{fn}(double {{0}})", FLOAT32: f"call float @{_ir_single(fn)}(float {{0}})"}


def _ir_math2(fn: str) -> dict[str, str]:
    """A call of a two-operand function of doubles, and of its single precision twin for floats."""
    return {
        FLOAT64: f"call double @{fn}(double {{0}}, double {{1}})",
        FLOAT32: f"call float @{_ir_single(fn)}(float {{0}}, float {{1}})",
    }


def _ir_each(template: str) -> dict[str, str]:
    """One template for every dtype, ``{t}`` standing for the LLVM type."""
    types = ((FLOAT64, "double"), (FLOAT32, "float"), (INT64, "i64"), (BOOL, "i1"))
    return {d: template.replace("{t}", t) for d, t in types}
