"""LLVM IR for a pointwise program: one loop over the points, each step one instruction (or helper call).

The IR text is compiled in process by ``llvmlite`` (see :mod:`.llvm_backend`): no C compiler and
no files, so a small function is ready in milliseconds. Each op's instruction comes from the op
table's ``llvm`` entry: a template per compute dtype, such as ``"fadd double {0}, {1}"``, into
which the operand values (already cast the way numpy promotes them) are put. Helpers the
templates call (``@eg_floordiv_d``...) are defined here once, in IR, with the same semantics as
the C helpers, and emitted only when used; libm functions are declared on use.

Values: ``double`` for float64, ``float`` for float32, ``i64`` for int64, ``i1`` for bool (bytes in
memory). The single precision helpers (``@eg_floordiv_f``...) are the double ones with every
``double`` read as ``float``. Pointers are opaque (``ptr``). ``@eg_run(n, in, step, out)`` reads
input arrays with strides 1 or 0 and writes output arrays; ``@eg_packed(npts, x, o)`` reads rows of
packed doubles and writes rows of doubles. Both return nonzero when an integer power had a negative
exponent (helpers set ``%errp``).
"""

from __future__ import annotations

import struct
from typing import Any

from ..core import Symbol, Term
from ..core.dtypes import BOOL, DTYPES, FLOAT32, FLOAT64, INT64, is_float, promote
from ..errors import CompileError
from .llvm_helpers import _DECLARE, _HELPERS, _needs
from .lower import Program

__all__ = ["emit_llvm", "LLVM_TYPES", "ir_literal"]

#: LLVM types of values of each dtype, and in memory
LLVM_TYPES = {FLOAT64: "double", FLOAT32: "float", INT64: "i64", BOOL: "i1"}
_MEMORY = {FLOAT64: "double", FLOAT32: "float", INT64: "i64", BOOL: "i8"}


def ir_literal(value: Any, dtype: str) -> str:
    """An exact LLVM constant of ``dtype``."""
    if is_float(dtype):
        # a float constant is written as the double of the same value (LLVM's spelling for both types)
        bits = struct.unpack("<Q", struct.pack("<d", float(value)))[0]
        return f"0x{bits:016X}"
    if dtype == INT64:
        return str(int(value))
    return "true" if bool(value) else "false"


# -- helpers (IR), with the semantics of the C helpers in crender ----------------------------------------


class _Body:
    """Instructions of one function body, with fresh value names and numpy's casts."""

    def __init__(self, prefix: str = "t") -> None:
        self.lines: list[str] = []
        self.count = 0
        self.prefix = prefix

    def fresh(self) -> str:
        self.count += 1
        return f"%{self.prefix}{self.count}"

    def emit(self, text: str) -> str:
        name = self.fresh()
        self.lines.append(f"  {name} = {text}")
        return name

    def cast(self, value: str, have: str, want: str) -> str:
        """``value`` of dtype ``have`` converted as numpy's astype converts it."""
        if have == want:
            return value
        to = LLVM_TYPES[want]
        if is_float(want):
            if is_float(have):  # float32 <-> float64: exact widening, or rounding to nearest
                op = "fpext float" if want == FLOAT64 else "fptrunc double"
            else:
                op = "uitofp i1" if have == BOOL else "sitofp i64"
            return self.emit(f"{op} {value} to {to}")
        if want == INT64:
            if have == BOOL:
                return self.emit(f"zext i1 {value} to i64")
            return self.emit(f"fptosi {LLVM_TYPES[have]} {value} to i64")
        if have == INT64:
            return self.emit(f"icmp ne i64 {value}, 0")
        return self.emit(f"fcmp une {LLVM_TYPES[have]} {value}, 0.0")


def _operand_dtypes(node: Term) -> tuple[str, ...]:
    """The dtype each operand is converted to before the op applies (numpy's promotion, made explicit).

    Comparisons compare in their operands' common dtype, logic works on bools, ``where`` takes a
    bool condition, a float raised to an integer power keeps the exponent an integer; everything
    else converts to the result's dtype.
    """
    op = node.op
    args = node.args
    if op.relational:
        return (promote(*(a.dtype for a in args)),) * len(args)
    if op.logical:
        return (BOOL,) * len(args)
    if op.name == "where":
        return (BOOL, node.dtype, node.dtype)
    if op.name == "pow" and node.dtype == FLOAT64 and not is_float(args[1].dtype):
        return (FLOAT64, INT64)
    return (node.dtype,) * len(args)


#: a scalar symbol of each dtype, to ask an op's dtype rule about one step of a fold
_SCALAR = {d: Symbol("s", d) for d in DTYPES}


def _template(node: Term, dtypes: tuple[str, ...]) -> str:
    op = node.op
    templates = op.llvm
    if templates is None:
        raise CompileError(f"op {op.name!r} has no LLVM rendering (llvm in the op table); use backend='c'")
    template = templates.get(",".join(dtypes)) or templates.get(dtypes[0] if op.name != "where" else dtypes[1])
    if template is None:
        raise CompileError(f"op {op.name!r} has no LLVM rendering for {', '.join(dtypes)}; use backend='c'")
    return template


def _step(body: _Body, node: Term, operands: list[str]) -> str:
    """The instructions computing ``node``; returns its value's name."""
    op = node.op
    args = node.args
    if len(args) > 2 and op.arity[1] is None and op.associative:
        # a fold, each step in its own dtype as numpy's fold computes it (add(i, j, x) adds the ints first)
        have, acc = args[0].dtype, operands[0]
        for a, v in zip(args[1:], operands[1:], strict=True):
            pair = _operand_dtypes(op(_SCALAR[have], _SCALAR[a.dtype]))
            step = op.infer((_SCALAR[have], _SCALAR[a.dtype]), None)[0]
            values = [body.cast(acc, have, pair[0]), body.cast(v, a.dtype, pair[1])]
            acc = body.emit(_template(op(_SCALAR[have], _SCALAR[a.dtype]), pair).format(*values))
            have = step
        return body.cast(acc, have, node.dtype)  # add(b, b, x32): the int64 + float32 step is a float64
    dtypes = _operand_dtypes(node)
    values = [body.cast(v, a.dtype, d) for v, a, d in zip(operands, args, dtypes, strict=True)]
    return body.emit(_template(node, dtypes).format(*values))


def _compute(body: _Body, program: Program, load: dict[Term, str]) -> dict[Term, str]:
    """Names of every value: inputs loaded, constants as literals, steps computed."""
    names = dict(load)
    for t, v in program.values.items():
        if not getattr(v, "shape", ()):  # scalars only in a pointwise program
            names[t] = ir_literal(v, t.dtype)
    for node in program.steps:
        names[node] = _step(body, node, [names[a] for a in node.args])
    return names


def _store_value(body: _Body, value: str, dtype: str) -> str:
    return body.emit(f"zext i1 {value} to i8") if dtype == BOOL else value


def emit_llvm(program: Program) -> tuple[str, list[Term], list[int]]:
    """``(IR text, run-time outputs in eg_run's order, input positions eg_run reads)``."""
    inputs = program.inputs
    input_index = list(program.used_inputs)
    loop_outputs = list(dict.fromkeys(t for t in program.outputs if t.free_symbols))
    # eg_run: arrays in, arrays out
    run = _Body()
    setup = _Body("s")
    load: dict[Term, str] = {}
    for k, pos in enumerate(input_index):
        s = inputs[pos]
        slot = setup.emit(f"getelementptr ptr, ptr %in, i64 {k}")
        base = setup.emit(f"load ptr, ptr {slot}")
        sk = setup.emit(f"getelementptr i64, ptr %step, i64 {k}")
        stride = setup.emit(f"load i64, ptr {sk}")
        idx = run.emit(f"mul i64 %i, {stride}")
        ptr = run.emit(f"getelementptr {_MEMORY[s.dtype]}, ptr {base}, i64 {idx}")
        raw = run.emit(f"load {_MEMORY[s.dtype]}, ptr {ptr}")
        load[s] = run.emit(f"icmp ne i8 {raw}, 0") if s.dtype == BOOL else raw
    names = _compute(run, program, load)
    for j, t in enumerate(loop_outputs):
        pj = setup.emit(f"getelementptr ptr, ptr %out, i64 {j}")
        base = setup.emit(f"load ptr, ptr {pj}")
        ptr = run.emit(f"getelementptr {_MEMORY[t.dtype]}, ptr {base}, i64 %i")
        run.lines.append(f"  store {_MEMORY[t.dtype]} {_store_value(run, names[t], t.dtype)}, ptr {ptr}")
    run_text = _function("eg_run", "i64 %n, ptr %in, ptr %step, ptr %out", "%n", setup, run)
    # eg_packed: rows of doubles
    n_in, n_out = len(inputs), len(program.outputs)
    pk = _Body()
    row_in = pk.emit(f"mul i64 %i, {n_in}")
    row_out = pk.emit(f"mul i64 %i, {n_out}")
    load = {}
    for pos in input_index:
        s = inputs[pos]
        at = pk.emit(f"add i64 {row_in}, {pos}")
        ptr = pk.emit(f"getelementptr double, ptr %x, i64 {at}")
        load[s] = pk.cast(pk.emit(f"load double, ptr {ptr}"), FLOAT64, s.dtype)
    names = _compute(pk, program, load)
    for pos, s in enumerate(inputs):  # outputs that are inputs read back
        if s not in names:
            at = pk.emit(f"add i64 {row_in}, {pos}")
            ptr = pk.emit(f"getelementptr double, ptr %x, i64 {at}")
            names[s] = pk.cast(pk.emit(f"load double, ptr {ptr}"), FLOAT64, s.dtype)
    for j, t in enumerate(program.outputs):
        value = pk.cast(names[t], t.dtype, FLOAT64)
        at = pk.emit(f"add i64 {row_out}, {j}")
        ptr = pk.emit(f"getelementptr double, ptr %o, i64 {at}")
        pk.lines.append(f"  store double {value}, ptr {ptr}")
    packed_text = _function("eg_packed", "i64 %n, ptr %x, ptr %o", "%n", _Body("s"), pk)
    text = run_text + "\n" + packed_text
    helpers, declared = _needs(text)
    module = [*(_HELPERS[h] for h in helpers), *(_DECLARE[d] for d in declared), text]
    return "\n".join(module), loop_outputs, input_index


def _function(name: str, params: str, count: str, setup: _Body, body: _Body) -> str:
    """``define i32 @name(params)``: the setup once, then ``body`` for i in [0, count).

    ``%errp`` (an i32 the helpers may set) is the function's result.
    """
    lines = [
        f"define i32 @{name}({params}) {{",
        "entry:",
        "  %errp = alloca i32",
        "  store i32 0, ptr %errp",
        *setup.lines,
    ]
    lines += ["  br label %loop", "loop:", "  %i = phi i64 [0, %entry], [%inext, %body]"]
    lines += [f"  %more = icmp slt i64 %i, {count}", "  br i1 %more, label %body, label %exit", "body:"]
    lines += [*body.lines, "  %inext = add i64 %i, 1", "  br label %loop", "exit:"]
    lines += ["  %err = load i32, ptr %errp", "  ret i32 %err", "}"]
    return "\n".join(lines)
