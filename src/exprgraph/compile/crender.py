"""The one C renderer: a term's node as a C expression, in the C types of a dialect.

Every C emitter of the project (``compile(..., backend="c")`` and the tensor kernels) renders
scalar nodes here, from the op table's ``c_render`` template: operands are cast the way numpy
promotes them, constants are exact literals, and the helper functions the text needs (floor
division and modulo with Python's signs, C's truncating division and remainder, nan-propagating
max/min, integer power and abs, the stable sigmoid) are emitted with it, only those used. A
:class:`Dialect` names the C type of each dtype: the host dialect uses ``double``/``float``/
``int64_t`` (numpy's float64, float32 and int64), the kernel dialects ``float``/``int`` (the
course's ``data_type``, numpy's float32 and int32). Wherever ``float`` values occur, math functions
resolve to their single precision versions by type (``<tgmath.h>``: ``sin`` of a ``float`` is
``sinf``) and float literals carry the ``f`` suffix, so float32 terms compute in single precision.

Helpers are type-generic (``_Generic``), so one template serves every C type. With glibc's vector
math library (``-DEG_MVEC -lmvec``), the libm functions it vectorises are declared with their
SIMD variants, so loops calling them vectorise.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core import Symbol, Term, ops
from ..core.dtypes import BOOL, DTYPES, FLOAT32, FLOAT64, INT64, is_float
from ..errors import CompileError

__all__ = [
    "Dialect",
    "HOST",
    "KERNEL",
    "render",
    "operand_dtypes",
    "literal",
    "prelude",
    "helpers_for",
    "LIBMVEC",
    "ERROR_DEFINITION",
]


@dataclass(frozen=True)
class Dialect:
    """The C types standing for each dtype, and how values are stored in memory."""

    name: str
    #: C type of values of each dtype while computing
    ctype: dict[str, str]
    #: C type of each dtype in memory (bools as bytes on the host)
    store: dict[str, str]
    #: suffix of floating literals (``f`` for float)
    float_suffix: str = ""
    #: floating literals in decimal (Python's shortest round-trip text, ``0.5f``) rather than hexadecimal:
    #: as exact, and readable in generated kernels
    decimal: bool = False

    @property
    def single(self) -> bool:
        """Whether floating values are single precision."""
        return self.ctype[FLOAT64] == "float"


#: numpy's float64/float32/int64/bool as double/float/int64_t/int (stored as uint8_t)
HOST = Dialect(
    "host",
    {FLOAT64: "double", FLOAT32: "float", INT64: "int64_t", BOOL: "int"},
    {FLOAT64: "double", FLOAT32: "float", INT64: "int64_t", BOOL: "uint8_t"},
)
#: tensor kernels: ``float`` values (single precision) and ``int`` values and indices (32-bit, wrapping)
KERNEL = Dialect(
    "kernel",
    {FLOAT64: "float", FLOAT32: "float", INT64: "int", BOOL: "int"},
    {FLOAT64: "float", FLOAT32: "float", INT64: "int", BOOL: "int"},
    "f",
    True,
)

#: libm functions glibc's libmvec has SIMD variants of (double and float): each op's ``libmvec``
LIBMVEC = tuple(op.libmvec for op in ops() if op.libmvec)
#: how many operands each of those takes (pow and atan2 take two)
_LIBMVEC_OPERANDS = {op.libmvec: op.arity[0] for op in ops() if op.libmvec}

_INT_LIMITS = {"int64_t": (-(2**63), 2**63 - 1), "int": (-(2**31), 2**31 - 1)}


def literal(value: Any, dtype: str, dialect: Dialect = HOST) -> str:
    """An exact C literal of a scalar constant of ``dtype`` in ``dialect``'s C type."""
    ctype = dialect.ctype[dtype]
    if is_float(dtype):
        v = float(value)
        if math.isnan(v) or math.isinf(v):
            # NAN and INFINITY are floats: typed as the value is, so type-generic code picks its version
            text = "NAN" if math.isnan(v) else "INFINITY"
            text = text if ctype == "float" else f"(double){text}"
            return f"(-{text})" if v < 0 else (text if ctype == "float" else f"({text})")
        if dialect.decimal:
            return _decimal(v, dialect)
        if ctype == "float":
            return f"({v.hex()}f)" if v == float(_to_single(v)) else f"((float){v.hex()})"
        return f"({v.hex()})"
    if dtype == INT64:
        v = int(value)
        lo, hi = _INT_LIMITS[ctype]
        if ctype == "int":
            v = (v - lo) % (hi - lo + 1) + lo  # wraps like the kernel's 32-bit arithmetic
            return str(v) if v >= 0 else ("(-2147483647 - 1)" if v == lo else f"(-{-v})")
        if v == lo:
            return "(-INT64_C(9223372036854775807) - 1)"
        return f"INT64_C({v})" if v >= 0 else f"(-INT64_C({-v}))"
    return "1" if bool(value) else "0"


def _decimal(v: float, dialect: Dialect) -> str:
    # repr reads back as exactly v (a double); a value a float cannot hold is rounded by a cast, as numpy rounds it
    text = repr(v)
    if dialect.single and v != _to_single(v):
        return f"((float){text})"
    text += dialect.float_suffix
    return f"({text})" if text.startswith("-") else text


def _to_single(v: float) -> float:
    import numpy as np

    return float(np.float32(v))


def operand_dtypes(node: Term) -> tuple[str, ...]:
    """The dtype each operand of ``node`` is converted to before the op applies (numpy's promotion).

    Arithmetic converts to the result's dtype (bools count as integers, anything meets a float as a
    float); comparisons, max/min and where keep their operands' own dtypes; a float raised to an
    integer power keeps the exponent an integer (so an odd exponent keeps the base's sign, even
    above 2**53 where the exponent as a double would be even).
    """
    op = node.op
    if op.relational or op.mixed_operands:
        have = tuple(a.dtype for a in node.args)
        values = have[1:] if op.name == "where" else have  # where's condition is not a value
        if FLOAT32 in values and INT64 in values:
            # C would convert an int64 to float next to a float; numpy compares and selects in float64
            return have[: len(have) - len(values)] + tuple(FLOAT64 if d in (FLOAT32, INT64) else d for d in values)
        return have
    want = node.dtype
    out = tuple(want if (is_float(want) or (want == INT64 and a.dtype == BOOL)) else a.dtype for a in node.args)
    if op.name == "pow" and want == FLOAT64 and not is_float(node.args[1].dtype):
        return (out[0], INT64)
    return out


#: a scalar symbol of each dtype, to ask an op's dtype rule about one step of a fold
_SCALAR = {d: Symbol("s", d) for d in DTYPES}


def render(node: Term, operands: Sequence[str], dialect: Dialect = HOST) -> str:
    """C text computing ``node`` from the C texts of its operands (cast as numpy promotes them)."""
    op = node.op
    template = op.c_render
    if template is None:
        raise CompileError(f"op {op.name!r} has no C rendering (c_render in the op table); use backend='numpy'")
    args = node.args
    if len(args) > 2 and op.arity[1] is None and op.associative:
        # a variadic associative op: fold its binary template left to right, each step in its own
        # dtype as numpy's fold computes it (add(i, j, x) adds the ints in int64, wrapping, first)
        have = args[0].dtype
        text = operands[0]
        for a, t in zip(args[1:], operands[1:], strict=True):
            step = op.infer((_SCALAR[have], _SCALAR[a.dtype]), None)[0]
            pair = [_cast(text, have, step, dialect), _cast(t, a.dtype, step, dialect)]
            if op.relational or op.mixed_operands:
                pair = [text, t]
                if {have, a.dtype} == {FLOAT32, INT64}:  # numpy compares these in float64 (C would in float)
                    pair = [_cast(text, have, FLOAT64, dialect), _cast(t, a.dtype, FLOAT64, dialect)]
            text = _apply(template, pair)
            have = step
        return text
    texts = [_cast(t, a.dtype, want, dialect) for t, a, want in zip(operands, args, operand_dtypes(node), strict=True)]
    return _apply(template, texts)


def _cast(text: str, have: str, want: str, dialect: Dialect) -> str:
    return text if have == want else f"({dialect.ctype[want]}){text}"


def _apply(template: str | Callable[..., str], operands: list[str]) -> str:
    if callable(template):
        return template(*operands)
    return template.format(*operands)


# -- helpers ------------------------------------------------------------------------------------------

_PICK = "#define EG_PICK(x, fd, ff, fi) _Generic((x), double: fd, float: ff, default: fi)"

#: name -> (C definition, helpers it uses); emitted in this order, only when used
_HELPERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "eg_error": (
        "/* set when an integer power has a negative exponent (defined once per library: ERROR_DEFINITION) */\n"
        '__attribute__((visibility("hidden"))) extern _Thread_local int eg_error;',
        (),
    ),
    "eg_floordiv": (
        r"""/* floor division with Python's signs, computed as numpy computes it */
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
static inline float eg_floordiv_f(float a, float b) {
    if (b == 0.0f) return a / b;
    float mod = fmodf(a, b);
    float div = (a - mod) / b;
    if (mod != 0.0f && ((b < 0.0f) != (mod < 0.0f))) div -= 1.0f;
    if (div != 0.0f) {
        float fl = floorf(div);
        if (div - fl > 0.5f) fl += 1.0f;
        return fl;
    }
    return copysignf(0.0f, a / b);
}
/* integers: a zero divisor gives 0 (as numpy); -1 is special-cased (no overflow trap) */
static inline int64_t eg_floordiv_i(int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) q -= 1;
    return q;
}
#define eg_floordiv(a, b) EG_PICK((a) + (b), eg_floordiv_d, eg_floordiv_f, eg_floordiv_i)((a), (b))""",
        ("EG_PICK",),
    ),
    "eg_ceil_div": (
        r"""/* ceiling division: -floor(-a/b) for floats; for integers floor(a/b), plus 1 when b does not
   divide a (-a wraps at INT64_MIN: -((-a)//b) had the wrong sign there) */
static inline double eg_ceil_div_d(double a, double b) { return -eg_floordiv_d(-a, b); }
static inline float eg_ceil_div_f(float a, float b) { return -eg_floordiv_f(-a, b); }
static inline int64_t eg_ceil_div_i(int64_t a, int64_t b) {
    int64_t q = eg_floordiv_i(a, b);
    return (b != 0 && q * b != a) ? q + 1 : q; /* q*b is within |b| of a: it wraps to a only when equal */
}
#define eg_ceil_div(a, b) EG_PICK((a) + (b), eg_ceil_div_d, eg_ceil_div_f, eg_ceil_div_i)((a), (b))""",
        ("EG_PICK", "eg_floordiv"),
    ),
    "eg_mod": (
        r"""/* modulo with the divisor's sign (Python's), as numpy computes it */
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
static inline float eg_mod_f(float a, float b) {
    if (b == 0.0f) return fmodf(a, b);
    float mod = fmodf(a, b);
    if (mod != 0.0f) {
        if ((b < 0.0f) != (mod < 0.0f)) mod += b;
    } else {
        mod = copysignf(0.0f, b);
    }
    return mod;
}
static inline int64_t eg_mod_i(int64_t a, int64_t b) {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
#define eg_mod(a, b) EG_PICK((a) + (b), eg_mod_d, eg_mod_f, eg_mod_i)((a), (b))""",
        ("EG_PICK",),
    ),
    "eg_truncdiv": (
        r"""/* quotient rounded toward zero (C's integer /): 0 for a zero integer divisor, no trap at -1 */
static inline double eg_truncdiv_d(double a, double b) { return trunc(a / b); }
static inline float eg_truncdiv_f(float a, float b) { return truncf(a / b); }
static inline int64_t eg_truncdiv_i(int64_t a, int64_t b) {
    return b == 0 ? 0 : b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}
#define eg_truncdiv(a, b) EG_PICK((a) + (b), eg_truncdiv_d, eg_truncdiv_f, eg_truncdiv_i)((a), (b))""",
        ("EG_PICK",),
    ),
    "eg_fmod": (
        r"""/* remainder with the dividend's sign (C's % and fmod): 0 for a zero integer divisor and for -1 */
static inline int64_t eg_fmod_i(int64_t a, int64_t b) { return (b == 0 || b == -1) ? 0 : a % b; }
#define eg_fmod(a, b) EG_PICK((a) + (b), fmod, fmodf, eg_fmod_i)((a), (b))""",
        ("EG_PICK",),
    ),
    "eg_max": (
        r"""/* numpy's maximum propagates nan (C's fmax does not) and gives the second operand on a tie,
   so max(-0.0, 0.0) is 0.0 and max(0.0, -0.0) is -0.0 as in numpy */
static inline double eg_max_d(double a, double b) { return (a > b || a != a) ? a : b; }
static inline float eg_max_f(float a, float b) { return (a > b || a != a) ? a : b; }
static inline int64_t eg_max_i(int64_t a, int64_t b) { return a >= b ? a : b; }
#define eg_max(a, b) EG_PICK((a) + (b), eg_max_d, eg_max_f, eg_max_i)((a), (b))""",
        ("EG_PICK",),
    ),
    "eg_min": (
        r"""/* numpy's minimum propagates nan (C's fmin does not) and gives the second operand on a tie */
static inline double eg_min_d(double a, double b) { return (a < b || a != a) ? a : b; }
static inline float eg_min_f(float a, float b) { return (a < b || a != a) ? a : b; }
static inline int64_t eg_min_i(int64_t a, int64_t b) { return a <= b ? a : b; }
#define eg_min(a, b) EG_PICK((a) + (b), eg_min_d, eg_min_f, eg_min_i)((a), (b))""",
        ("EG_PICK",),
    ),
    "eg_ident": (
        "/* an integer is its own floor, ceiling and truncation */\n"
        "static inline int64_t eg_ident_i(int64_t a) { return a; }",
        (),
    ),
    "eg_floor": ("#define eg_floor(a) EG_PICK((a), floor, floorf, eg_ident_i)(a)", ("EG_PICK", "eg_ident")),
    "eg_ceil": ("#define eg_ceil(a) EG_PICK((a), ceil, ceilf, eg_ident_i)(a)", ("EG_PICK", "eg_ident")),
    "eg_trunc": ("#define eg_trunc(a) EG_PICK((a), trunc, truncf, eg_ident_i)(a)", ("EG_PICK", "eg_ident")),
    "eg_sign": (
        r"""/* numpy's sign: +0.0 for both zeros, nan for nan */
static inline double eg_sign_d(double a) { return a > 0.0 ? 1.0 : a < 0.0 ? -1.0 : a == a ? 0.0 : a; }
static inline float eg_sign_f(float a) { return a > 0.0f ? 1.0f : a < 0.0f ? -1.0f : a == a ? 0.0f : a; }
static inline int64_t eg_sign_i(int64_t a) { return (a > 0) - (a < 0); }
#define eg_sign(a) EG_PICK((a), eg_sign_d, eg_sign_f, eg_sign_i)(a)""",
        ("EG_PICK",),
    ),
    "eg_abs": (
        r"""static inline int64_t eg_abs_i(int64_t a) { return a < 0 ? (int64_t)(0 - (uint64_t)a) : a; }
#define eg_abs(a) EG_PICK((a), fabs, fabsf, eg_abs_i)(a)""",
        ("EG_PICK",),
    ),
    "eg_pow": (
        r"""/* integer power by squaring, wrapping like numpy; a negative exponent sets eg_error */
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
/* a**0.5 is sqrt(a), as numpy computes it: nan for -inf, -0.0 for -0.0 (C's pow gives inf and 0.0);
   a**2 is a*a: the exact square rounded once, as a correctly rounded pow gives it (and a constant
   exponent of 2 costs one multiplication instead of a call, vector pow's included) */
static inline double eg_pow_dd(double a, double b) { return b == 2.0 ? a * a : b == 0.5 ? sqrt(a) : pow(a, b); }
static inline float eg_pow_ff(float a, float b) { return b == 2.0f ? a * a : b == 0.5f ? sqrtf(a) : powf(a, b); }
/* a float to an int64 power: an odd exponent keeps the base's sign even above 2**53, where the
   exponent read as a double is even */
static inline double eg_pow_di(double a, int64_t b) {
    if (b == 2) return a * a;
    double r = pow(a, (double)b);
    return (b & 1) ? copysign(r, a) : r;
}
static inline float eg_pow_fi(float a, int64_t b) {
    if (b == 2) return a * a;
    float r = powf(a, (float)b);
    return (b & 1) ? copysignf(r, a) : r;
}
#define eg_pow(a, b) _Generic((b), double: eg_pow_dd, float: eg_pow_ff, \
    default: EG_PICK((a), eg_pow_di, eg_pow_fi, eg_pow_i))((a), (b))""",
        ("EG_PICK", "eg_error"),
    ),
    "eg_sigmoid": (
        r"""/* 1/(1+exp(-x)) without overflow */
static inline double eg_sigmoid_d(double x) {
    double e = exp(-fabs(x));
    return x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}
static inline float eg_sigmoid_f(float x) {
    float e = expf(-fabsf(x));
    return x >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
}
#define eg_sigmoid(x) EG_PICK((x), eg_sigmoid_d, eg_sigmoid_f, eg_sigmoid_d)(x)""",
        ("EG_PICK",),
    ),
    "eg_logaddexp": (
        r"""/* log(exp(a) + exp(b)) without overflow, as numpy's logaddexp computes it */
static inline double eg_logaddexp_d(double a, double b) {
    if (a == b) return a + 0x1.62e42fefa39efp-1;  /* + log(2); infinities of one sign stay */
    double d = a - b;
    if (d > 0) return a + log1p(exp(-d));
    if (d <= 0) return b + log1p(exp(d));
    return d;  /* nan */
}
static inline float eg_logaddexp_f(float a, float b) {
    if (a == b) return a + 0x1.62e430p-1f;
    float d = a - b;
    if (d > 0) return a + log1pf(expf(-d));
    if (d <= 0) return b + log1pf(expf(d));
    return d;
}
#define eg_logaddexp(a, b) EG_PICK((a) + (b), eg_logaddexp_d, eg_logaddexp_f, eg_logaddexp_d)((a), (b))""",
        ("EG_PICK",),
    ),
    "eg_softplus": (
        r"""/* log(1 + exp(x)) = logaddexp(0, x): no overflow */
#define eg_softplus(x) EG_PICK((x), eg_logaddexp_d, eg_logaddexp_f, eg_logaddexp_d)(0, (x))""",
        ("EG_PICK", "eg_logaddexp"),
    ),
    "eg_log_sigmoid": (
        r"""/* log(sigmoid(x)) = -logaddexp(0, -x): no overflow, no log(0) */
#define eg_log_sigmoid(x) (-EG_PICK((x), eg_logaddexp_d, eg_logaddexp_f, eg_logaddexp_d)(0, -(x)))""",
        ("EG_PICK", "eg_logaddexp"),
    ),
    "EG_PICK": (_PICK, ()),
}

#: the definition of ``eg_error``, written once in one translation unit of a library that uses it
ERROR_DEFINITION = '__attribute__((visibility("hidden"))) _Thread_local int eg_error;'

_NAME = re.compile(r"\b(eg_[a-z_]+|EG_PICK)\b")


def helpers_for(text: str) -> list[str]:
    """The helpers ``text`` uses, with the helpers they use, in definition order."""
    wanted: set[str] = set()
    stack = [m for m in set(_NAME.findall(text)) if m in _HELPERS]
    while stack:
        name = stack.pop()
        if name in wanted:
            continue
        wanted.add(name)
        stack.extend(_HELPERS[name][1])
    order = ["EG_PICK", "eg_error", *(n for n in _HELPERS if n not in ("EG_PICK", "eg_error"))]
    return [n for n in order if n in wanted]


def _vector_declarations(dialect: Dialect) -> str:
    lines = [
        "#if defined(EG_MVEC) && defined(__GNUC__) && !defined(__clang__)",
        "/* vector variants from glibc's libmvec (at most 4 ulp): lets loops calling them vectorise */",
    ]
    for name in LIBMVEC:
        n = _LIBMVEC_OPERANDS[name]
        args = ", ".join(["double"] * n)
        lines.append(f'__attribute__((__simd__("notinbranch"))) extern double {name}({args});')
        fargs = ", ".join(["float"] * n)
        lines.append(f'__attribute__((__simd__("notinbranch"))) extern float {name}f({fargs});')
    lines.append("#endif")
    return "\n".join(lines)


def prelude(text: str, dialect: Dialect = HOST, *, single: bool = False) -> str:
    """Includes, vector math declarations and the helpers that the C ``text`` uses.

    ``single``: the text computes with ``float`` values (float32 terms), so math functions resolve
    by type (``<tgmath.h>``), as they always do in a single precision dialect.
    """
    parts = ["#include <math.h>", "#include <stdint.h>", _vector_declarations(dialect)]
    if dialect.single or single:
        parts.append("#include <tgmath.h>  /* sin(float) is sinf(float), and so on */")
    parts.extend(_HELPERS[name][0] for name in helpers_for(text))
    return "\n".join(parts) + "\n"
