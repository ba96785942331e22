"""The runtime helpers of the LLVM backend, in IR: defined once, emitted only when a program calls them.

The helpers (``@eg_floordiv_d``...) have the same semantics as the C helpers of
:mod:`.crender`; the single precision ones (``_f``) are the double ones with every ``double``
read as ``float``. libm functions and intrinsics are declared on use. Imports nothing of
exprgraph.
"""

from __future__ import annotations

import re

# The int64 division helpers share their start: the quotient by 0 is 0 and by -1 is -a (sdiv and
# srem would trap on INT64_MIN / -1), the remainder by either is 0; otherwise %q is the truncated
# quotient, or %r the remainder.
_INT_DIVISION = """  %bz = icmp eq i64 %b, 0
  br i1 %bz, label %zero, label %nz
zero:
  ret i64 0
nz:
  %bm1 = icmp eq i64 %b, -1
  br i1 %bm1, label %negate, label %div
negate:
  %n = sub i64 0, %a
  ret i64 %n
div:
  %q = sdiv i64 %a, %b
"""
_INT_REMAINDER = """  %bz = icmp eq i64 %b, 0
  %bm1 = icmp eq i64 %b, -1
  %trivial = or i1 %bz, %bm1
  br i1 %trivial, label %zero, label %go
zero:
  ret i64 0
go:
  %r = srem i64 %a, %b
"""

_HELPERS: dict[str, str] = {
    "eg_floordiv_d": """define internal double @eg_floordiv_d(double %a, double %b) {
  %bz = fcmp oeq double %b, 0.0
  br i1 %bz, label %zero, label %go
zero:
  %q0 = fdiv double %a, %b
  ret double %q0
go:
  %mod = frem double %a, %b
  %am = fsub double %a, %mod
  %div = fdiv double %am, %b
  %mnz = fcmp une double %mod, 0.0
  %bneg = fcmp olt double %b, 0.0
  %mneg = fcmp olt double %mod, 0.0
  %diff = xor i1 %bneg, %mneg
  %adj = and i1 %mnz, %diff
  %dm1 = fsub double %div, 1.0
  %div2 = select i1 %adj, double %dm1, double %div
  %dnz = fcmp une double %div2, 0.0
  br i1 %dnz, label %round, label %signed
round:
  %fl = call double @llvm.floor.f64(double %div2)
  %fr = fsub double %div2, %fl
  %up = fcmp ogt double %fr, 0.5
  %fl1 = fadd double %fl, 1.0
  %res = select i1 %up, double %fl1, double %fl
  ret double %res
signed:
  %q = fdiv double %a, %b
  %z = call double @llvm.copysign.f64(double 0.0, double %q)
  ret double %z
}""",
    "eg_mod_d": """define internal double @eg_mod_d(double %a, double %b) {
  %bz = fcmp oeq double %b, 0.0
  %mod = frem double %a, %b
  br i1 %bz, label %done0, label %go
done0:
  ret double %mod
go:
  %mnz = fcmp une double %mod, 0.0
  br i1 %mnz, label %fix, label %zero
fix:
  %bneg = fcmp olt double %b, 0.0
  %mneg = fcmp olt double %mod, 0.0
  %diff = xor i1 %bneg, %mneg
  %mb = fadd double %mod, %b
  %r = select i1 %diff, double %mb, double %mod
  ret double %r
zero:
  %z = call double @llvm.copysign.f64(double 0.0, double %b)
  ret double %z
}""",
    "eg_floordiv_i": """define internal i64 @eg_floordiv_i(i64 %a, i64 %b) {
"""
    + _INT_DIVISION
    + """  %r = srem i64 %a, %b
  %rnz = icmp ne i64 %r, 0
  %an = icmp slt i64 %a, 0
  %bn = icmp slt i64 %b, 0
  %d = xor i1 %an, %bn
  %adj = and i1 %rnz, %d
  %q1 = sub i64 %q, 1
  %res = select i1 %adj, i64 %q1, i64 %q
  ret i64 %res
}""",
    "eg_mod_i": """define internal i64 @eg_mod_i(i64 %a, i64 %b) {
"""
    + _INT_REMAINDER
    + """  %rnz = icmp ne i64 %r, 0
  %rn = icmp slt i64 %r, 0
  %bn = icmp slt i64 %b, 0
  %d = xor i1 %rn, %bn
  %adj = and i1 %rnz, %d
  %rb = add i64 %r, %b
  %res = select i1 %adj, i64 %rb, i64 %r
  ret i64 %res
}""",
    "eg_max_d": """define internal double @eg_max_d(double %a, double %b) {
  %ge = fcmp ogt double %a, %b
  %nan = fcmp uno double %a, %a
  %pick = or i1 %ge, %nan
  %r = select i1 %pick, double %a, double %b
  ret double %r
}""",
    "eg_min_d": """define internal double @eg_min_d(double %a, double %b) {
  %le = fcmp olt double %a, %b
  %nan = fcmp uno double %a, %a
  %pick = or i1 %le, %nan
  %r = select i1 %pick, double %a, double %b
  ret double %r
}""",
    "eg_pow_i": """define internal i64 @eg_pow_i(i64 %a, i64 %b, ptr %err) {
entry:
  %neg = icmp slt i64 %b, 0
  br i1 %neg, label %bad, label %loop
bad:
  store i32 1, ptr %err
  ret i64 0
loop:
  %r = phi i64 [1, %entry], [%r2, %step]
  %base = phi i64 [%a, %entry], [%base2, %step]
  %e = phi i64 [%b, %entry], [%e2, %step]
  %done = icmp eq i64 %e, 0
  br i1 %done, label %exit, label %step
step:
  %odd = and i64 %e, 1
  %isodd = icmp ne i64 %odd, 0
  %rm = mul i64 %r, %base
  %r2 = select i1 %isodd, i64 %rm, i64 %r
  %e2 = lshr i64 %e, 1
  %base2 = mul i64 %base, %base
  br label %loop
exit:
  ret i64 %r
}""",
    "eg_truncdiv_d": """define internal double @eg_truncdiv_d(double %a, double %b) {
  %q = fdiv double %a, %b
  %t = call double @llvm.trunc.f64(double %q)
  ret double %t
}""",
    "eg_truncdiv_i": """define internal i64 @eg_truncdiv_i(i64 %a, i64 %b) {
"""
    + _INT_DIVISION
    + """  ret i64 %q
}""",
    "eg_fmod_i": """define internal i64 @eg_fmod_i(i64 %a, i64 %b) {
"""
    + _INT_REMAINDER
    + """  ret i64 %r
}""",
    "eg_pow_dd": """define internal double @eg_pow_dd(double %a, double %b) {
  %half = fcmp oeq double %b, 0.5
  br i1 %half, label %root, label %general
root:
  %s = call double @llvm.sqrt.f64(double %a)
  ret double %s
general:
  %p = call double @llvm.pow.f64(double %a, double %b)
  ret double %p
}""",
    "eg_pow_di": """define internal double @eg_pow_di(double %a, i64 %b) {
  %bf = sitofp i64 %b to double
  %p = call double @llvm.pow.f64(double %a, double %bf)
  %odd = and i64 %b, 1
  %isodd = icmp ne i64 %odd, 0
  %signed = call double @llvm.copysign.f64(double %p, double %a)
  %r = select i1 %isodd, double %signed, double %p
  ret double %r
}""",
    "eg_ceil_div_i": """define internal i64 @eg_ceil_div_i(i64 %a, i64 %b) {
  %q = call i64 @eg_floordiv_i(i64 %a, i64 %b)
  %qb = mul i64 %q, %b
  %inexact = icmp ne i64 %qb, %a
  %nonzero = icmp ne i64 %b, 0
  %up = and i1 %inexact, %nonzero
  %one = zext i1 %up to i64
  %r = add i64 %q, %one
  ret i64 %r
}""",
    "eg_ceil_div_d": """define internal double @eg_ceil_div_d(double %a, double %b) {
  %na = fneg double %a
  %q = call double @eg_floordiv_d(double %na, double %b)
  %r = fneg double %q
  ret double %r
}""",
    "eg_broadcast_i": """define internal i64 @eg_broadcast_i(i64 %a, i64 %b) {
  %one = icmp eq i64 %b, 1
  %r = select i1 %one, i64 %a, i64 %b
  ret i64 %r
}""",
    "eg_broadcast_d": """define internal double @eg_broadcast_d(double %a, double %b) {
  %one = fcmp oeq double %b, 1.0
  %r = select i1 %one, double %a, double %b
  ret double %r
}""",
    "eg_sign_d": """define internal double @eg_sign_d(double %x) {
  %pos = fcmp ogt double %x, 0.0
  %neg = fcmp olt double %x, 0.0
  %nan = fcmp uno double %x, 0.0
  %z = select i1 %nan, double %x, double 0.0
  %n = select i1 %neg, double -1.0, double %z
  %r = select i1 %pos, double 1.0, double %n
  ret double %r
}""",
    "eg_sign_i": """define internal i64 @eg_sign_i(i64 %x) {
  %pos = icmp sgt i64 %x, 0
  %neg = icmp slt i64 %x, 0
  %p = zext i1 %pos to i64
  %n = zext i1 %neg to i64
  %r = sub i64 %p, %n
  ret i64 %r
}""",
    "eg_sigmoid_d": """define internal double @eg_sigmoid_d(double %x) {
  %ax = call double @llvm.fabs.f64(double %x)
  %nax = fneg double %ax
  %e = call double @llvm.exp.f64(double %nax)
  %d = fadd double 1.0, %e
  %pos = fdiv double 1.0, %d
  %neg = fdiv double %e, %d
  %ge = fcmp oge double %x, 0.0
  %r = select i1 %ge, double %pos, double %neg
  ret double %r
}""",
    "eg_logaddexp_d": """define internal double @eg_logaddexp_d(double %a, double %b) {
entry:
  %same = fcmp oeq double %a, %b
  br i1 %same, label %equal, label %apart
equal:
  %r0 = fadd double %a, 0x3FE62E42FEFA39EF
  ret double %r0
apart:
  %d = fsub double %a, %b
  %pos = fcmp ogt double %d, 0.0
  br i1 %pos, label %abig, label %notpos
abig:
  %nd = fneg double %d
  %e = call double @llvm.exp.f64(double %nd)
  %l = call double @log1p(double %e)
  %r1 = fadd double %a, %l
  ret double %r1
notpos:
  %le = fcmp ole double %d, 0.0
  br i1 %le, label %bbig, label %nan
bbig:
  %e2 = call double @llvm.exp.f64(double %d)
  %l2 = call double @log1p(double %e2)
  %r2 = fadd double %b, %l2
  ret double %r2
nan:
  ret double %d
}""",
    "eg_softplus_d": """define internal double @eg_softplus_d(double %x) {
  %r = call double @eg_logaddexp_d(double 0.0, double %x)
  ret double %r
}""",
    "eg_log_sigmoid_d": """define internal double @eg_log_sigmoid_d(double %x) {
  %nx = fneg double %x
  %s = call double @eg_logaddexp_d(double 0.0, double %nx)
  %r = fneg double %s
  ret double %r
}""",
}
#: helpers with a single precision twin: the same IR with ``float`` for ``double`` (names ``_d`` -> ``_f``)
_SINGLE_TWINS = {
    "eg_floordiv_d": "eg_floordiv_f",
    "eg_mod_d": "eg_mod_f",
    "eg_max_d": "eg_max_f",
    "eg_min_d": "eg_min_f",
    "eg_truncdiv_d": "eg_truncdiv_f",
    "eg_pow_dd": "eg_pow_ff",
    "eg_sigmoid_d": "eg_sigmoid_f",
    "eg_sign_d": "eg_sign_f",
    "eg_ceil_div_d": "eg_ceil_div_f",
    "eg_broadcast_d": "eg_broadcast_f",
    "eg_logaddexp_d": "eg_logaddexp_f",
    "eg_softplus_d": "eg_softplus_f",
    "eg_log_sigmoid_d": "eg_log_sigmoid_f",
}
#: double constants of the helpers that a float cannot hold exactly, and their float roundings (log 2)
_SINGLE_CONSTANTS = {"0x3FE62E42FEFA39EF": "0x3FE62E4300000000"}


def _single_twin(text: str) -> str:
    """The float version of a double helper's IR (decimal constants such as 0.5 read as floats too)."""
    for double, single in _SINGLE_TWINS.items():
        text = re.sub(rf"@{double}\b", f"@{single}", text)
    for double, single in _SINGLE_CONSTANTS.items():
        text = text.replace(double, single)
    text = re.sub(r"@(log1p|expm1|tanh|tan|fmod)\(", r"@\1f(", text)  # libm's float functions
    return text.replace("double", "float").replace(".f64", ".f32")


_HELPERS.update({single: _single_twin(_HELPERS[double]) for double, single in _SINGLE_TWINS.items()})

#: libm functions of one and of two doubles the templates call (each with its float twin, named ...f)
_LIBM_1: tuple[str, ...] = ("tan", "tanh", "expm1", "log1p", "erf", "erfc", "log2", "log10")
_LIBM_1 += ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")
_LIBM_2 = ("fmod", "atan2", "hypot")

#: libm functions and intrinsics the templates may call, by name: their declarations
_DECLARE = {
    **{
        f"llvm.{f}.{w}": f"declare {t} @llvm.{f}.{w}({t})"
        for f in ("floor", "ceil", "trunc", "fabs", "sqrt", "exp", "log", "sin", "cos")
        for w, t in (("f64", "double"), ("f32", "float"))
    },
    "llvm.copysign.f64": "declare double @llvm.copysign.f64(double, double)",
    "llvm.copysign.f32": "declare float @llvm.copysign.f32(float, float)",
    "llvm.pow.f64": "declare double @llvm.pow.f64(double, double)",
    "llvm.pow.f32": "declare float @llvm.pow.f32(float, float)",
    **{f: f"declare double @{f}(double)" for f in _LIBM_1},
    **{f"{f}f": f"declare float @{f}f(float)" for f in _LIBM_1},
    **{f: f"declare double @{f}(double, double)" for f in _LIBM_2},
    **{f"{f}f": f"declare float @{f}f(float, float)" for f in _LIBM_2},
    "llvm.abs.i64": "declare i64 @llvm.abs.i64(i64, i1)",
    "llvm.smax.i64": "declare i64 @llvm.smax.i64(i64, i64)",
    "llvm.smin.i64": "declare i64 @llvm.smin.i64(i64, i64)",
}
_CALLED = re.compile(r"@([A-Za-z_][\w.]*)")


def _needs(text: str) -> tuple[list[str], list[str]]:
    """The helpers (with their dependencies) and declarations that ``text`` calls."""
    helpers: list[str] = []
    stack = [n for n in _CALLED.findall(text) if n in _HELPERS]
    while stack:
        name = stack.pop()
        if name in helpers:
            continue
        helpers.append(name)
        stack.extend(n for n in _CALLED.findall(_HELPERS[name]) if n in _HELPERS)
    body = text + "\n".join(_HELPERS[h] for h in helpers)
    declared = sorted({n for n in _CALLED.findall(body) if n in _DECLARE})
    return [h for h in _HELPERS if h in helpers], declared
