"""LLVM IR for the steps of a pointwise program: each step one instruction (or helper call), in parts.

The IR text is compiled in process by ``llvmlite`` (see :mod:`.llvm_backend`): no C compiler and
no files, so a small function is ready in milliseconds. Each op's instruction comes from the op
table's ``llvm`` entry: a template per compute dtype, such as ``"fadd double {0}, {1}"``, into
which the operand values (already cast the way numpy promotes them) are put. Helpers the
templates call (``@eg_floordiv_d``...) are defined here once, in IR, with the same semantics as
the C helpers, and emitted only when used; libm functions are declared on use.

Values: ``double`` for float64, ``float`` for float32, ``i64`` for int64, ``i1`` for bool (bytes in
memory). The single precision helpers (``@eg_floordiv_f``...) are the double ones with every
``double`` read as ``float``. Pointers are opaque (``ptr``). A part (:class:`_Layout`) computes a
bounded run of steps at point ``%i``: ``eg_run``'s parts read input arrays with strides 1 or 0 and
write output arrays, ``eg_packed``'s read rows of packed doubles and write rows of doubles; values
crossing parts go through rows of the work array ``%ws``. The whole module (entry points, loops
over classes) is assembled by :mod:`.llvm_loops`. Both entry points return nonzero when an integer
power had a negative exponent (helpers set ``%errp``).
"""

from __future__ import annotations

import struct
from typing import Any

from ..core import Symbol, Term
from ..core.dtypes import BOOL, DTYPES, FLOAT32, FLOAT64, INT64, is_float, promote
from ..errors import CompileError
from .lower import Program

__all__ = ["LLVM_TYPES", "ir_literal", "PART"]

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


#: steps per part (one noinline function each; see :func:`emit_llvm`)
PART = 200


def _store_value(body: _Body, value: str, dtype: str) -> str:
    return body.emit(f"zext i1 {value} to i8") if dtype == BOOL else value


class _Layout:
    """How one entry point reads inputs and writes outputs at point ``%i``; parts of it compute steps.

    ``load(body, s)`` loads input ``s``, ``store(body, t, value)`` stores output ``t`` (nothing when
    ``t`` is not an output); values read by a later part or a loop cross through ``%ws``, one 8-byte
    row each (``row``).
    """

    def __init__(self, program: Program, row: dict[Term, int], kind: str, n_pieces: int) -> None:
        self.program = program
        self.row = row
        self.kind = kind
        self.n_pieces = n_pieces
        n_in, n_out = len(program.inputs), len(program.outputs)
        if kind == "run":
            self.params = "i64 %i, ptr %in, ptr %step, ptr %out, ptr %ws, ptr %errp"
            self.column = {program.inputs[pos]: k for k, pos in enumerate(program.used_inputs)}
            self.out_at = {t: [j] for j, t in enumerate(program.symbolic_outputs())}
        else:
            self.params = "i64 %i, ptr %x, ptr %o, ptr %ws, ptr %errp"
            self.column = {s: k for k, s in enumerate(program.inputs)}
            self.out_at = {}
            for j, t in enumerate(program.outputs):
                self.out_at.setdefault(t, []).append(j)
        self.n_in, self.n_out = n_in, n_out

    def load(self, body: _Body, s: Term) -> str:
        """Input ``s`` at point ``%i``."""
        k = self.column[s]
        if self.kind == "packed":
            at = body.emit(f"add i64 {body.emit(f'mul i64 %i, {self.n_in}')}, {k}")
            raw = body.emit(f"load double, ptr {body.emit(f'getelementptr double, ptr %x, i64 {at}')}")
            if s.dtype == INT64:  # cut toward 0 where it fits, INT64_MIN elsewhere (fptosi gives poison there)
                above = body.emit(f"fcmp oge double {raw}, 0xC3E0000000000000")  # -2**63 <= raw (not nan)
                below = body.emit(f"fcmp olt double {raw}, 0x43E0000000000000")  # raw < 2**63
                fits = body.emit(f"and i1 {above}, {below}")
                cut = body.emit(f"fptosi double {body.emit(f'select i1 {fits}, double {raw}, double 0.0')} to i64")
                return body.emit(f"select i1 {fits}, i64 {cut}, i64 -9223372036854775808")
            return body.cast(raw, FLOAT64, s.dtype)
        base = body.emit(f"load ptr, ptr {body.emit(f'getelementptr ptr, ptr %in, i64 {k}')}")
        stride = body.emit(f"load i64, ptr {body.emit(f'getelementptr i64, ptr %step, i64 {k}')}")
        idx = body.emit(f"mul i64 %i, {stride}")
        ptr = body.emit(f"getelementptr {_MEMORY[s.dtype]}, ptr {base}, i64 {idx}")
        raw = body.emit(f"load {_MEMORY[s.dtype]}, ptr {ptr}")
        return body.emit(f"icmp ne i8 {raw}, 0") if s.dtype == BOOL else raw

    def store(self, body: _Body, t: Term, value: str) -> None:
        """Output ``t`` (at each of its positions) at point ``%i``."""
        for j in self.out_at.get(t, ()):
            if self.kind == "packed":
                at = body.emit(f"add i64 {body.emit(f'mul i64 %i, {self.n_out}')}, {j}")
                ptr = body.emit(f"getelementptr double, ptr %o, i64 {at}")
                body.lines.append(f"  store double {body.cast(value, t.dtype, FLOAT64)}, ptr {ptr}")
                continue
            base = body.emit(f"load ptr, ptr {body.emit(f'getelementptr ptr, ptr %out, i64 {j}')}")
            ptr = body.emit(f"getelementptr {_MEMORY[t.dtype]}, ptr {base}, i64 %i")
            body.lines.append(f"  store {_MEMORY[t.dtype]} {_store_value(body, value, t.dtype)}, ptr {ptr}")

    def value(self, body: _Body, names: dict[Term, str], a: Term) -> str:
        """The name of operand ``a`` in a part: computed there, a literal, an input, or a row of ``%ws``."""
        found = names.get(a)
        if found is None:
            if a in self.program.values:
                found = ir_literal(self.program.values[a], a.dtype)
            elif a.op.name == "symbol" and a in self.column:
                found = self.load(body, a)
            else:
                ptr = body.emit(f"getelementptr i64, ptr %ws, i64 {self.row[a]}")
                raw = body.emit(f"load {_MEMORY[a.dtype]}, ptr {ptr}")
                found = body.emit(f"icmp ne i8 {raw}, 0") if a.dtype == BOOL else raw
            names[a] = found
        return found

    def part(self, name: str, chunk: list[Term], extra: list[Term]) -> str:
        """A part computing ``chunk`` (and storing ``extra``: outputs that are inputs or constants)."""
        body = _Body()
        names: dict[Term, str] = {}
        for node in chunk:
            args = self.program.args_of(node)
            operands = [self.value(body, names, a) for a in args]
            term = node if args is node.args else Term(node.op, args, node.attr)
            names[node] = _step(body, term, operands)
            if node in self.row:
                ptr = body.emit(f"getelementptr i64, ptr %ws, i64 {self.row[node]}")
                value = _store_value(body, names[node], node.dtype)
                body.lines.append(f"  store {_MEMORY[node.dtype]} {value}, ptr {ptr}")
            self.store(body, node, names[node])
        for t in extra:
            self.store(body, t, self.value(body, names, t))
        # one part is inlined into the loop (as small programs always were); several stay calls
        attrs = " noinline" if self.n_pieces > 1 else " alwaysinline"
        lines = [f"define internal void @{name}({self.params}){attrs} {{", "entry:", *body.lines]
        return "\n".join([*lines, "  ret void", "}"])


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
