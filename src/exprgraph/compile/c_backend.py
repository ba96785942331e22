"""The C backend: every output in one fused loop over the elements, typed like the terms.

Each distinct node is one local variable of the loop body, of its dtype's C type (``double``,
``int64_t``, ``int`` for bool), computed once per element from the op's ``c_render`` template
in the op table. Helper functions for the ops whose numpy semantics C lacks (floor division
and modulo with Python's signs, nan-propagating max/min, integer power and abs, the stable
sigmoid) are defined in :data:`C_HELPERS`; ``eg_floordiv`` and friends are type-generic
(``_Generic``), so one template serves ints and floats. Integer arithmetic wraps like numpy's
(the library is built with ``-fwrapv``); no ``-ffast-math``, so nan and inf follow IEEE.

Inputs are broadcast like numpy: an input with one element is read with stride 0, a full
contiguous one with stride 1, anything else is first expanded to the broadcast shape. Names in
the C source are generated (``p0``, ``a0``, ``v0``, ``o0``); constants are written as exact
hexadecimal literals.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from ..core import Symbol, Term
from ..core.dtypes import BOOL, FLOAT64, INT64
from ..errors import CompileError, EvaluationError
from ..eval import evaluate
from ..eval.bind import NUMPY_DTYPES
from ..eval.evaluate import schedule
from ..eval.limits import check_elements, limit_in_force
from .cbuild import build_library
from .function import bind_inputs

__all__ = ["build_c", "C_HELPERS", "c_literal", "c_source"]

_NEGATIVE_POWER = (
    "integer ** negative integer is undefined in int64: make the base or the exponent a float (e.g. x**-1.0)"
)

_CTYPE = {FLOAT64: "double", INT64: "int64_t", BOOL: "int"}
#: a scalar symbol of each dtype, to ask an op's dtype rule about one step of a fold
_SCALAR = {d: Symbol("s", d) for d in (FLOAT64, INT64, BOOL)}
_STORE = {FLOAT64: "double", INT64: "int64_t", BOOL: "uint8_t"}

#: C definitions the op table's ``c_render`` templates rely on (numpy semantics for each)
C_HELPERS = r"""
#include <math.h>
#include <stdint.h>

static int eg_error; /* set when an int64 power has a negative exponent */

/* Python's floor division and modulo for floats, computed as numpy computes them */
static inline double eg_floordiv_d(double a, double b) {
    if (b == 0.0) return a / b;
    double mod = fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0.0 && ((b < 0.0) != (mod < 0.0))) div -= 1.0;
    if (div != 0.0) {
        double fl = floor(div);
        if (div - fl > 0.5) fl += 1.0;
        return fl;
    }
    return copysign(0.0, a / b);
}
static inline double eg_mod_d(double a, double b) {
    if (b == 0.0) return fmod(a, b);
    double mod = fmod(a, b);
    if (mod != 0.0) {
        if ((b < 0.0) != (mod < 0.0)) mod += b;
    } else {
        mod = copysign(0.0, b);
    }
    return mod;
}
/* the same for int64: a zero divisor gives 0, as in numpy; -1 is special-cased (no overflow trap) */
static inline int64_t eg_floordiv_i(int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) q -= 1;
    return q;
}
static inline int64_t eg_mod_i(int64_t a, int64_t b) {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
/* numpy's maximum/minimum propagate nan (C's fmax/fmin do not) and give the second operand on a
   tie, so max(-0.0, 0.0) is 0.0 and max(0.0, -0.0) is -0.0 as in numpy */
static inline double eg_max_d(double a, double b) { return (a > b || a != a) ? a : b; }
static inline double eg_min_d(double a, double b) { return (a < b || a != a) ? a : b; }
static inline int64_t eg_max_i(int64_t a, int64_t b) { return a >= b ? a : b; }
static inline int64_t eg_min_i(int64_t a, int64_t b) { return a <= b ? a : b; }
static inline int64_t eg_abs_i(int64_t a) { return a < 0 ? (int64_t)(0 - (uint64_t)a) : a; }
static inline int64_t eg_pow_i(int64_t a, int64_t b) {
    if (b < 0) { eg_error = 1; return 0; }
    uint64_t r = 1, base = (uint64_t)a;
    while (b) {
        if (b & 1) r *= base;
        b >>= 1;
        if (b) base *= base;
    }
    return (int64_t)r;
}
/* a**0.5 is sqrt(a), as numpy computes it: nan for -inf, -0.0 for -0.0 (C's pow gives inf and 0.0) */
static inline double eg_pow_dd(double a, double b) { return b == 0.5 ? sqrt(a) : pow(a, b); }
/* a float to an int64 power: an odd exponent keeps the base's sign even above 2**53, where the
   exponent read as a double is even */
static inline double eg_pow_di(double a, int64_t b) {
    double r = pow(a, (double)b);
    return (b & 1) ? copysign(r, a) : r;
}
/* 1/(1+exp(-x)) without overflow */
static inline double eg_sigmoid(double x) {
    double e = exp(-fabs(x));
    return x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}
#if defined(EG_MVEC) && defined(__GNUC__) && !defined(__clang__)
/* vector variants from glibc's libmvec (at most 4 ulp): lets the loop be vectorised */
__attribute__((__simd__("notinbranch"))) extern double sin(double);
__attribute__((__simd__("notinbranch"))) extern double cos(double);
__attribute__((__simd__("notinbranch"))) extern double tan(double);
__attribute__((__simd__("notinbranch"))) extern double tanh(double);
__attribute__((__simd__("notinbranch"))) extern double exp(double);
__attribute__((__simd__("notinbranch"))) extern double log(double);
__attribute__((__simd__("notinbranch"))) extern double pow(double, double);
#endif
#define EG_PICK(x, fd, fi) _Generic((x), double: fd, float: fd, default: fi)
#define eg_floordiv(a, b) EG_PICK((a) + (b), eg_floordiv_d, eg_floordiv_i)((a), (b))
#define eg_mod(a, b) EG_PICK((a) + (b), eg_mod_d, eg_mod_i)((a), (b))
#define eg_max(a, b) EG_PICK((a) + (b), eg_max_d, eg_max_i)((a), (b))
#define eg_min(a, b) EG_PICK((a) + (b), eg_min_d, eg_min_i)((a), (b))
#define eg_pow(a, b) _Generic((b), double: eg_pow_dd, default: EG_PICK((a), eg_pow_di, eg_pow_i))((a), (b))
#define eg_abs(a) EG_PICK((a), fabs, eg_abs_i)(a)
"""


def c_literal(value: Any, dtype: str) -> str:
    """An exact C literal for a scalar constant of ``dtype``."""
    if dtype == FLOAT64:
        v = float(value)
        if math.isnan(v):
            return "NAN"
        if math.isinf(v):
            return "INFINITY" if v > 0 else "(-INFINITY)"
        return f"({v.hex()})"
    if dtype == INT64:
        v = int(value)
        if v == -(2**63):
            return "(-INT64_C(9223372036854775807) - 1)"
        return f"INT64_C({v})" if v >= 0 else f"(-INT64_C({-v}))"
    return "1" if bool(value) else "0"


def _render(node: Term, operands: list[str], dtypes: list[str] | None = None) -> str:
    op = node.op
    template = op.c_render
    if template is None:
        raise CompileError(f"op {op.name!r} has no C rendering (c_render in the op table); use backend='numpy'")
    if len(operands) > 2 and op.arity[1] is None and op.associative:
        # a variadic associative op: fold its binary template left to right; with ``dtypes`` (the
        # operands' uncast dtypes) each step computes in its own dtype, as numpy's fold does
        # (add(i, j, x) adds the ints i + j in int64, wrapping, before adding the float x)
        text = operands[0]
        have = dtypes[0] if dtypes is not None else None
        for k, o in enumerate(operands[1:], 1):
            if have is not None and dtypes is not None:
                step = op.infer((_SCALAR[have], _SCALAR[dtypes[k]]), None)[0]
                text = _apply(template, [_cast(text, have, step), _cast(o, dtypes[k], step)])
                have = step
            else:
                text = _apply(template, [text, o])
        return text
    return _apply(template, operands)


def _apply(template: Any, operands: list[str]) -> str:
    if callable(template):
        return template(*operands)
    return template.format(*operands)


def _cast(text: str, have: str, want: str) -> str:
    """Operand text converted the way numpy promotes it for a result of dtype ``want``."""
    if want == FLOAT64 and have != FLOAT64:
        return f"(double){text}"
    if want == INT64 and have == BOOL:
        return f"(int64_t){text}"
    return text


class _Kernel:
    """The C source of one fused loop, and what the runner needs to call it."""

    def __init__(self, outputs: tuple[Term, ...], inputs: tuple[Term, ...]) -> None:
        order, _ = schedule(outputs)
        for t in order:
            if t.shape:
                what = f"symbol {t.name!r}" if t.op.name == "symbol" else f"a {t.op.name} term"
                raise CompileError(
                    f"the C backend compiles elementwise terms of scalar shape; {what} has shape "
                    f"({', '.join(str(d) for d in t.shape)}) (use backend='numpy' for tensors)"
                )
        used = set().union(*(t.free_symbols for t in outputs)) if outputs else set()
        #: positions (in ``inputs``) of the inputs the loop reads, in kernel order
        self.input_index = [i for i, s in enumerate(inputs) if s in used]
        #: outputs computed by the loop (distinct, with symbols); the others are folded constants
        self.loop_outputs = list(dict.fromkeys(t for t in outputs if t.free_symbols))
        self.constants = {t: evaluate(t, {}) for t in outputs if not t.free_symbols}
        self.source = self._generate(order, inputs)

    def _generate(self, order: list[Term], inputs: tuple[Term, ...]) -> str:
        names: dict[Term, str] = {}
        body: list[str] = []
        loads = []
        for k, i in enumerate(self.input_index):
            s = inputs[i]
            names[s] = f"a{k}"
            loads.append((k, _CTYPE[s.dtype], _STORE[s.dtype]))
        needed = set()
        for t in self.loop_outputs:
            needed.add(t)
        for node in reversed(order):
            if node in needed:
                needed.update(node.args)
        n = 0
        for node in order:
            if node not in needed or node in names:
                continue
            if node.op.name == "const":
                names[node] = c_literal(node.attr, node.dtype)
                continue
            want = node.dtype
            args = node.args
            operands = [_cast(names[a], a.dtype, want) for a in args]
            dtypes = None
            if node.op.relational or node.op.name in ("maximum", "minimum", "where"):
                operands = [names[a] for a in args]  # C compares and selects across types like numpy
            elif len(args) > 2 and node.op.arity[1] is None and node.op.associative:
                operands = [names[a] for a in args]  # a fold casts at each step
                dtypes = [a.dtype for a in args]
            elif node.op.name == "pow" and want == FLOAT64 and args[1].dtype != FLOAT64:
                # a float to an integer power keeps the exponent's parity (see eg_pow_di)
                operands[1] = _cast(names[args[1]], args[1].dtype, INT64)
            text = _render(node, operands, dtypes)
            names[node] = f"v{n}"
            body.append(f"const {_CTYPE[want]} v{n} = {text};")
            n += 1
        stores = []
        for j, t in enumerate(self.loop_outputs):
            value = names[t]
            if t.dtype == BOOL:
                value = f"({value} != 0)"
            stores.append(f"o{j}[i] = ({_STORE[t.dtype]}){value};")
        lines = [C_HELPERS, "int eg_kernel(int64_t n, void *const *in, const int64_t *step, void *const *out)", "{"]
        for k, _, store in loads:
            lines.append(f"    const {store} *restrict p{k} = (const {store} *)in[{k}];")
            lines.append(f"    const int64_t s{k} = step[{k}];")
        for j, t in enumerate(self.loop_outputs):
            lines.append(f"    {_STORE[t.dtype]} *restrict o{j} = ({_STORE[t.dtype]} *)out[{j}];")
        lines.append("    eg_error = 0;")
        contiguous = " && ".join(f"s{k} == 1" for k, _, _ in loads) or "1"

        def loop(strided: bool) -> list[str]:
            out = ["        for (int64_t i = 0; i < n; i++) {"]
            for k, ctype, _ in loads:
                index = f"i * s{k}" if strided else "i"
                out.append(f"            const {ctype} a{k} = ({ctype})p{k}[{index}];")
            out.extend(f"            {line}" for line in body)
            out.extend(f"            {line}" for line in stores)
            out.append("        }")
            return out

        lines.append(f"    if ({contiguous}) {{")
        lines.extend(loop(False))
        lines.append("    } else {")
        lines.extend(loop(True))
        lines.append("    }")
        lines.append("    return eg_error;")
        lines.append("}")
        return "\n".join(lines) + "\n"


def c_source(outputs: tuple[Term, ...], inputs: tuple[Term, ...]) -> str:
    """The C source the backend would compile for ``outputs`` over ``inputs`` (without compiling it)."""
    return _Kernel(outputs, inputs).source


def _narrow(full: np.ndarray, shape: tuple[int, ...]) -> Any:
    """The entries of ``full`` (computed over the broadcast shape) for an output of ``shape``."""
    if full.shape == shape:
        return full[()] if not full.ndim else full
    lead = full.ndim - len(shape)
    index = (0,) * lead + tuple(
        slice(None) if s == f else slice(0, 1) for s, f in zip(shape, full.shape[lead:], strict=True)
    )
    part = full[index]
    return part[()] if not part.ndim else part.copy()


def build_c(outputs: tuple[Term, ...], inputs: tuple[Term, ...]) -> tuple[Any, str]:
    """``(run, source)``: ``run(*args)`` returns the tuple of output values."""
    kernel = _Kernel(outputs, inputs)
    lib, _ = build_library(kernel.source)
    fn = lib.function("eg_kernel", ctypes.c_int, [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p])
    n_in = len(kernel.input_index)
    n_out = len(kernel.loop_outputs)
    ptr_in_t = ctypes.c_void_p * max(n_in, 1)
    step_t = ctypes.c_int64 * max(n_in, 1)
    ptr_out_t = ctypes.c_void_p * max(n_out, 1)
    out_dtypes = [NUMPY_DTYPES[t.dtype] for t in kernel.loop_outputs]
    constants = kernel.constants
    input_index = kernel.input_index
    loop_outputs = kernel.loop_outputs
    free_index = [[input_index.index(inputs.index(s)) for s in t.free_symbols] for t in loop_outputs]

    def run(*args: Any) -> Any:
        with np.errstate(all="ignore"):  # casts and the fallback evaluation follow IEEE silently
            return call(args)

    run.library = lib  # type: ignore[attr-defined]  # the handle stays open while run is alive

    def call(args: tuple) -> Any:
        values = bind_inputs(inputs, args)
        arrays = [np.asarray(values[i]) for i in input_index]
        shapes = [a.shape for a in arrays]
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError as exc:
            raise EvaluationError(f"the input values do not broadcast together: {exc}") from None
        check_elements(shape, limit_in_force(), "the compiled C function")  # before allocating the outputs
        size = math.prod(shape)
        if size == 0:
            return tuple(evaluate(list(outputs), dict(zip(inputs, values, strict=True))))
        keep = []
        ptrs = ptr_in_t()
        steps = step_t()
        for k, a in enumerate(arrays):
            if a.size == 1:
                a = np.ascontiguousarray(a.reshape(1))
                steps[k] = 0
            else:
                if a.shape != shape or not a.flags.c_contiguous:
                    a = np.ascontiguousarray(np.broadcast_to(a, shape))
                steps[k] = 1
            keep.append(a)
            ptrs[k] = a.ctypes.data
        results = [np.empty(shape, dtype=d) for d in out_dtypes]
        outs = ptr_out_t()
        for j, r in enumerate(results):
            outs[j] = r.ctypes.data
        if fn(size, ptrs, steps, outs):
            raise EvaluationError(_NEGATIVE_POWER)
        by_term = {}
        for t, r, idx in zip(loop_outputs, results, free_index, strict=True):
            own = np.broadcast_shapes(*(shapes[k] for k in idx))
            by_term[t] = _narrow(r, own)
        return tuple(by_term[t] if t in by_term else constants[t] for t in outputs)

    return run, kernel.source
