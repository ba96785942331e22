"""The vm backend's instruction set: opcode numbers (mirroring ``_cvm.h``), each op's instructions, and
the encoded program (:class:`Encoded`) with the check of what the machine can run (:func:`check_supported`).

An instruction is :data:`WORDS` int32 words: opcode, destination register, then up to three
operand registers. Two register files: doubles (float64 values, kind :data:`KD`) and int64 (int64
and bool values, bools as 0/1, kind :data:`KI`). The order of :data:`OPCODES` is the order of the
enum in ``_cvm.h`` (a test reads the header and compares).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import Symbol, Term
from ..core.dtypes import BOOL, FLOAT64, INT64
from ..core.op import ops
from ..errors import CompileError, VMUnsupportedError
from .lower import Program

__all__ = ["OPCODES", "OPCODE", "WORDS", "CLASS_FIELDS", "KD", "KI", "BINARY", "UNARY", "RELATIONAL", "KIND_SHIFT"]
__all__ += ["DTYPE_KIND", "DTYPE_STORE", "Encoded", "check_supported", "ON_DOUBLES", "flat_tables"]

#: words per instruction
WORDS = 5
#: words per class descriptor (see ``enum vm_class_field`` in ``_cvm.h``)
CLASS_FIELDS = 11
#: a constant register of a class body is encoded as ``kind << KIND_SHIFT | register``
KIND_SHIFT = 30
#: the register files: doubles, and int64 (int64 and bool values)
KD, KI = 0, 1
#: the register file of each dtype the machine holds
DTYPE_KIND = {FLOAT64: KD, INT64: KI, BOOL: KI}
#: how each dtype is stored in memory by the run entry point: double, int64, bool byte
DTYPE_STORE = {FLOAT64: 0, INT64: 1, BOOL: 2}

#: the opcodes, in the order of ``enum vm_opcode``
OPCODES: tuple[str, ...] = (
    *("MOV_D", "MOV_I", "I2D", "D2I", "TRUTH_D", "TRUTH_I"),
    *("ADD_D", "SUB_D", "MUL_D", "DIV_D", "FLOORDIV_D", "MOD_D", "TRUNCDIV_D", "FMOD_D"),
    *("POW_DD", "MAX_D", "MIN_D", "ATAN2_D", "HYPOT_D", "LOGADDEXP_D", "CEILDIV_D", "BDIM_D"),
    "POW_DI",
    *("LT_D", "LE_D", "GT_D", "GE_D", "EQ_D", "NE_D"),
    *("ADD_I", "SUB_I", "MUL_I", "FLOORDIV_I", "MOD_I", "TRUNCDIV_I", "FMOD_I", "POW_I"),
    *("MAX_I", "MIN_I", "CEILDIV_I", "BDIM_I", "AND_I", "OR_I"),
    *("LT_I", "LE_I", "GT_I", "GE_I", "EQ_I", "NE_I"),
    *("NEG_D", "ABS_D", "EXP_D", "LOG_D", "LOG2_D", "LOG10_D", "ERF_D", "ERFC_D", "SQRT_D"),
    *("SIN_D", "COS_D", "TAN_D", "TANH_D", "SIGMOID_D", "LOG1P_D", "EXPM1_D", "SOFTPLUS_D"),
    *("LOGSIGMOID_D", "FLOOR_D", "CEIL_D", "TRUNC_D", "SIGN_D", "ASIN_D", "ACOS_D", "ATAN_D"),
    *("SINH_D", "COSH_D", "ASINH_D", "ACOSH_D", "ATANH_D"),
    "NOT_D",
    *("NEG_I", "ABS_I", "SIGN_I", "NOT_I"),
    *("WHERE_D", "WHERE_I"),
    *("STORE_D", "STORE_I"),
    "STORES_D",
    "LOOP",
)
#: opcode number of each name
OPCODE: dict[str, int] = {name: k for k, name in enumerate(OPCODES)}

#: binary ops: op name -> (opcode on doubles, opcode on int64s), None where the op has no such form
BINARY: dict[str, tuple[str | None, str | None]] = {
    "add": ("ADD_D", "ADD_I"),
    "sub": ("SUB_D", "SUB_I"),
    "mul": ("MUL_D", "MUL_I"),
    "truediv": ("DIV_D", None),
    "floordiv": ("FLOORDIV_D", "FLOORDIV_I"),
    "mod": ("MOD_D", "MOD_I"),
    "truncdiv": ("TRUNCDIV_D", "TRUNCDIV_I"),
    "fmod": ("FMOD_D", "FMOD_I"),
    "maximum": ("MAX_D", "MAX_I"),
    "minimum": ("MIN_D", "MIN_I"),
    "ceil_div": ("CEILDIV_D", "CEILDIV_I"),
    "broadcast_dim": ("BDIM_D", "BDIM_I"),
    "atan2": ("ATAN2_D", None),
    "hypot": ("HYPOT_D", None),
    "logaddexp": ("LOGADDEXP_D", None),
    "logical_and": (None, "AND_I"),
    "logical_or": (None, "OR_I"),
}

#: comparisons: op name -> (opcode on doubles, opcode on int64s); the result is a bool
RELATIONAL: dict[str, tuple[str, str]] = {
    "lt": ("LT_D", "LT_I"),
    "le": ("LE_D", "LE_I"),
    "gt": ("GT_D", "GT_I"),
    "ge": ("GE_D", "GE_I"),
    "eq": ("EQ_D", "EQ_I"),
    "ne": ("NE_D", "NE_I"),
}

_FLOAT_UNARY = (
    "exp log log2 log10 erf erfc sqrt sin cos tan tanh sigmoid log1p expm1 softplus floor ceil trunc "
    "asin acos atan sinh cosh asinh acosh atanh"
).split()

#: unary ops: op name -> (opcode on doubles, opcode on int64s); an integer is its own floor, ceil, trunc
UNARY: dict[str, tuple[str | None, str | None]] = {
    **{name: (f"{name.upper()}_D", None) for name in _FLOAT_UNARY},
    "log_sigmoid": ("LOGSIGMOID_D", None),
    "floor": ("FLOOR_D", "MOV_I"),
    "ceil": ("CEIL_D", "MOV_I"),
    "trunc": ("TRUNC_D", "MOV_I"),
    "identity": ("MOV_D", "MOV_I"),
    "neg": ("NEG_D", "NEG_I"),
    "abs": ("ABS_D", "ABS_I"),
    "sign": ("SIGN_D", "SIGN_I"),
    "logical_not": ("NOT_D", "NOT_I"),
}


#: the opcode of each op on float64 operands giving a float64, by (op name, operand count)
ON_DOUBLES: dict[tuple[str, int], int] = {
    **{(name, 2): OPCODE[code] for name, (code, _) in BINARY.items() if code is not None},
    **{(name, 1): OPCODE[code] for name, (code, _) in UNARY.items() if code is not None and name != "logical_not"},
    ("pow", 2): OPCODE["POW_DD"],
}


def flat_tables() -> tuple[dict[str, int], dict[str, int], dict[str, int], dict[str, int], type]:
    """What ``_cvm.encode_flat`` reads: opcodes by op name of unary and binary steps, folds and int powers.

    A fold is an associative op whose step on two float64 values is one float64 instruction (the
    op table's dtype rule says so); the int power is ``pow`` of a float64 to an int64 (``POW_DI``).
    """
    f64 = Symbol("s", FLOAT64)
    folds = {
        op.name: OPCODE[code]
        for op in ops()
        if op.associative and op.name != "where" and (code := BINARY.get(op.name, (None, None))[0]) is not None
        if op.infer((f64, f64), None)[0] == FLOAT64
    }
    unary = {name: code for (name, n), code in ON_DOUBLES.items() if n == 1}
    binary = {name: code for (name, n), code in ON_DOUBLES.items() if n == 2}
    return unary, binary, folds, {"pow": OPCODE["POW_DI"]}, np.generic


@dataclass
class Encoded:
    """A program as the machine's arrays (see :class:`exprgraph.compile._cvm.Machine`)."""

    code: np.ndarray
    main_len: int
    ints: np.ndarray
    doubles: np.ndarray
    nd: int
    ni: int
    const_d_reg: np.ndarray
    const_d_val: np.ndarray
    const_i_reg: np.ndarray
    const_i_val: np.ndarray
    in_store: np.ndarray
    in_reg: np.ndarray
    in_col: np.ndarray
    n_cols: int
    n_out: int
    n_pk: int
    #: the outputs the run entry point writes (distinct, with symbols), in order
    loop_outputs: list[Term] = field(default_factory=list)
    #: the classes encoded as loops
    loops: int = 0

    def machine_args(self, block: int) -> dict[str, Any]:
        """The keyword arguments of ``_cvm.Machine`` for registers of ``block`` lanes."""
        names: tuple[str, ...] = ("code", "main_len", "ints", "doubles", "nd", "ni", "const_d_reg", "const_d_val")
        names += (
            "const_i_reg",
            "const_i_val",
            "in_store",
            "in_reg",
            "in_col",
            "n_cols",
            "n_out",
            "n_pk",
        )
        args = {"block": block, **{n: getattr(self, n) for n in names}}
        base: object = self.code.base  # code read from bytes (the straight-line road): the machine holds them, no copy
        if isinstance(base, bytes) and self.code.dtype == np.int32 and self.code.nbytes == len(base):
            args["code"] = base
        return args

    @property
    def instructions(self) -> int:
        """Instructions, the class bodies included."""
        return len(self.code) // WORDS


def check_supported(program: Program) -> None:
    """Refuse, naming the op, a program the machine cannot run (tensors, float32, ops it lacks)."""
    if not program.pointwise:
        raise CompileError("the vm backend runs elementwise terms of scalar shape (use backend='numpy' for tensors)")
    for t in program.inputs:
        if t.dtype not in DTYPE_KIND:
            raise VMUnsupportedError(f"the vm backend has no {t.dtype} registers (input {t.name!r})", op="symbol")
    for node in program.steps:  # (their operands are steps, inputs or constants: each checked here)
        name = node.op.name
        if node.dtype not in DTYPE_KIND:
            raise VMUnsupportedError(
                f"op {name!r} on {node.dtype} values: the vm backend computes float64, int64 and bool only; "
                "use backend='c' or cast to float64",
                op=name,
            )
        if name == "pow" or name == "where" or name in BINARY or name in RELATIONAL or name in UNARY:
            continue
        raise VMUnsupportedError(f"op {name!r} has no vm instruction; use backend='c' or 'numpy'", op=name)
    for t, value in program.values.items():
        if t.dtype not in DTYPE_KIND or np.ndim(value):
            raise VMUnsupportedError(f"a constant of dtype {t.dtype} cannot sit in a vm register", op="const")
