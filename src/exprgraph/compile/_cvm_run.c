/* The interpreter of exprgraph.compile._cvm: instructions over lanes of registers, and class loops.
 *
 * See _cvm.c for the machine and _cvm.h for the instruction set. Semantics are those of the C
 * backend (compile/crender.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_cvm.h"

/* -- vector math ----------------------------------------------------------------------------------
 * With glibc's libmvec (EG_VM_MVEC, set by setup.py on x86-64 glibc), the libm functions it
 * vectorises are declared with their SIMD variants, so the lane loops below (`omp simd`) call them
 * on two lanes at a time, as the C backend's loops do (at most 4 ulp from the scalar function).
 */
#if defined(EG_VM_MVEC) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)
#define EG_SIMD __attribute__((__simd__("notinbranch")))
EG_SIMD extern double sin(double);
EG_SIMD extern double cos(double);
EG_SIMD extern double exp(double);
EG_SIMD extern double log(double);
#if __GLIBC_PREREQ(2, 35)
EG_SIMD extern double tan(double);
EG_SIMD extern double tanh(double);
EG_SIMD extern double log2(double);
EG_SIMD extern double log10(double);
EG_SIMD extern double log1p(double);
EG_SIMD extern double expm1(double);
EG_SIMD extern double erf(double);
EG_SIMD extern double erfc(double);
EG_SIMD extern double asin(double);
EG_SIMD extern double acos(double);
EG_SIMD extern double atan(double);
EG_SIMD extern double sinh(double);
EG_SIMD extern double cosh(double);
EG_SIMD extern double asinh(double);
EG_SIMD extern double acosh(double);
EG_SIMD extern double atanh(double);
EG_SIMD extern double atan2(double, double);
#endif
#endif
#define LANES _Pragma("omp simd")

/* -- scalar helpers: the C backend's semantics (crender.py) -------------------------------------- */

static inline double floordiv_d(double a, double b) {
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

static inline double mod_d(double a, double b) {
    if (b == 0.0) return fmod(a, b);
    double mod = fmod(a, b);
    if (mod != 0.0) {
        if ((b < 0.0) != (mod < 0.0)) mod += b;
    } else {
        mod = copysign(0.0, b);
    }
    return mod;
}

static inline int64_t wrap_neg(int64_t a) { return (int64_t)(0 - (uint64_t)a); }

static inline int64_t floordiv_i(int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (b == -1) return wrap_neg(a);
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) q -= 1;
    return q;
}

static inline int64_t mod_i(int64_t a, int64_t b) {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

static inline int64_t ceildiv_i(int64_t a, int64_t b) {
    int64_t q = floordiv_i(a, b);
    /* q*b is within |b| of a: it wraps to a only when equal */
    return (b != 0 && (int64_t)((uint64_t)q * (uint64_t)b) != a) ? q + 1 : q;
}

static inline int64_t truncdiv_i(int64_t a, int64_t b) { return b == 0 ? 0 : b == -1 ? wrap_neg(a) : a / b; }

static inline int64_t fmod_i(int64_t a, int64_t b) { return (b == 0 || b == -1) ? 0 : a % b; }

static inline int64_t pow_i(int64_t a, int64_t b, int *error) {
    if (b < 0) {
        *error = 1;
        return 0;
    }
    uint64_t r = 1, base = (uint64_t)a;
    while (b) {
        if (b & 1) r *= base;
        b >>= 1;
        if (b) base *= base;
    }
    return (int64_t)r;
}

static inline double logaddexp_d(double a, double b) {
    if (a == b) return a + 0x1.62e42fefa39efp-1; /* + log(2); infinities of one sign stay */
    double d = a - b;
    if (d > 0) return a + log1p(exp(-d));
    if (d <= 0) return b + log1p(exp(d));
    return d; /* nan */
}

static inline double sigmoid_d(double x) {
    double e = exp(-fabs(x));
    return x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

static inline double sign_d(double a) { return a > 0.0 ? 1.0 : a < 0.0 ? -1.0 : a == a ? 0.0 : a; }


/* -- the interpreter ------------------------------------------------------------------------------ */


#define UN(OPC, DT, AT, DF, AF, EXPR)                                                                  \
    CASE(OPC) {                                                                                    \
        DT *d_ = DF(w[1]);                                                                         \
        const AT *a_ = AF(w[2]);                                                                   \
        LANES for (int i = 0; i < n; i++) {                                                        \
            const AT x = a_[i];                                                                    \
            d_[i] = (EXPR);                                                                        \
        }                                                                                          \
        NEXT;                                                                                      \
    }

#define BIN(OPC, DT, AT, BT, DF, AF, BF, EXPR)                                                         \
    CASE(OPC) {                                                                                    \
        DT *d_ = DF(w[1]);                                                                         \
        const AT *a_ = AF(w[2]);                                                                   \
        const BT *b_ = BF(w[3]);                                                                   \
        LANES for (int i = 0; i < n; i++) {                                                              \
            const AT x = a_[i];                                                                    \
            const BT y = b_[i];                                                                    \
            d_[i] = (EXPR);                                                                        \
        }                                                                                          \
        NEXT;                                                                                      \
    }

#define UD(OPC, EXPR) UN(OPC, double, double, RD, RD, EXPR)
#define BD(OPC, EXPR) BIN(OPC, double, double, double, RD, RD, RD, EXPR)
#define CD(OPC, EXPR) BIN(OPC, int64_t, double, double, RI, RD, RD, EXPR)
#define BI(OPC, EXPR) BIN(OPC, int64_t, int64_t, int64_t, RI, RI, RI, EXPR)
#define WU(E) ((uint64_t)(E))

/* Dispatch: GCC's computed goto (one indirect jump per handler, predicted per handler), else a switch. */
#if defined(__GNUC__)
#define CASE(OPC) L_##OPC:
#define NEXT                                                                                               \
    do {                                                                                                   \
        if (++k >= end) return end;                                                                        \
        w = code + k * VM_WORDS;                                                                           \
        goto *handlers[w[0]];                                                                              \
    } while (0)
#define HANDLER(name) [name] = &&L_##name,
#else
#define CASE(OPC) case OPC:
#define NEXT break
#endif

/* Runs instructions from `k` until the end or a VM_LOOP; returns where it stopped. */
int64_t vm_run_straight(Machine *vm, const int32_t *code, int64_t k, int64_t end, int n) {
    if (k >= end) return end;
    const int32_t *w = code + k * VM_WORDS;
#if defined(__GNUC__)
    static void *const handlers[VM_OPCODES] = {VM_OPCODE_LIST(HANDLER)};
    goto *handlers[w[0]];
    {
        {
#else
    for (; k < end; k++) {
        w = code + k * VM_WORDS;
        switch (w[0]) {
#endif
            UN(VM_MOV_D, double, double, RD, RD, x)
            UN(VM_MOV_I, int64_t, int64_t, RI, RI, x)
            UN(VM_I2D, double, int64_t, RD, RI, (double)x)
            UN(VM_D2I, int64_t, double, RI, RD, d2i(x))
            UN(VM_TRUTH_D, int64_t, double, RI, RD, x != 0.0)
            UN(VM_TRUTH_I, int64_t, int64_t, RI, RI, x != 0)
            BD(VM_ADD_D, x + y)
            BD(VM_SUB_D, x - y)
            BD(VM_MUL_D, x * y)
            BD(VM_DIV_D, x / y)
            BD(VM_FLOORDIV_D, floordiv_d(x, y))
            BD(VM_MOD_D, mod_d(x, y))
            BD(VM_TRUNCDIV_D, trunc(x / y))
            BD(VM_FMOD_D, fmod(x, y))
            BD(VM_POW_DD, vm_pow_dd(x, y))
            BD(VM_MAX_D, (x > y || x != x) ? x : y)
            BD(VM_MIN_D, (x < y || x != x) ? x : y)
            BD(VM_ATAN2_D, atan2(x, y))
            BD(VM_HYPOT_D, hypot(x, y))
            BD(VM_LOGADDEXP_D, logaddexp_d(x, y))
            BD(VM_CEILDIV_D, -floordiv_d(-x, y))
            BD(VM_BDIM_D, y == 1.0 ? x : y)
            BIN(VM_POW_DI, double, double, int64_t, RD, RD, RI, vm_pow_di(x, y))
            CD(VM_LT_D, x < y)
            CD(VM_LE_D, x <= y)
            CD(VM_GT_D, x > y)
            CD(VM_GE_D, x >= y)
            CD(VM_EQ_D, x == y)
            CD(VM_NE_D, x != y)
            BI(VM_ADD_I, (int64_t)(WU(x) + WU(y)))
            BI(VM_SUB_I, (int64_t)(WU(x) - WU(y)))
            BI(VM_MUL_I, (int64_t)(WU(x) * WU(y)))
            BI(VM_FLOORDIV_I, floordiv_i(x, y))
            BI(VM_MOD_I, mod_i(x, y))
            BI(VM_TRUNCDIV_I, truncdiv_i(x, y))
            BI(VM_FMOD_I, fmod_i(x, y))
            BI(VM_POW_I, pow_i(x, y, &vm->error))
            BI(VM_MAX_I, x >= y ? x : y)
            BI(VM_MIN_I, x <= y ? x : y)
            BI(VM_CEILDIV_I, ceildiv_i(x, y))
            BI(VM_BDIM_I, y == 1 ? x : y)
            BI(VM_AND_I, (x != 0) && (y != 0))
            BI(VM_OR_I, (x != 0) || (y != 0))
            BI(VM_LT_I, x < y)
            BI(VM_LE_I, x <= y)
            BI(VM_GT_I, x > y)
            BI(VM_GE_I, x >= y)
            BI(VM_EQ_I, x == y)
            BI(VM_NE_I, x != y)
            UD(VM_NEG_D, -x)
            UD(VM_ABS_D, fabs(x))
            UD(VM_EXP_D, exp(x))
            UD(VM_LOG_D, log(x))
            UD(VM_LOG2_D, log2(x))
            UD(VM_LOG10_D, log10(x))
            UD(VM_ERF_D, erf(x))
            UD(VM_ERFC_D, erfc(x))
            UD(VM_SQRT_D, sqrt(x))
            UD(VM_SIN_D, sin(x))
            UD(VM_COS_D, cos(x))
            UD(VM_TAN_D, tan(x))
            UD(VM_TANH_D, tanh(x))
            UD(VM_SIGMOID_D, sigmoid_d(x))
            UD(VM_LOG1P_D, log1p(x))
            UD(VM_EXPM1_D, expm1(x))
            UD(VM_SOFTPLUS_D, logaddexp_d(0.0, x))
            UD(VM_LOGSIGMOID_D, -logaddexp_d(0.0, -x))
            UD(VM_FLOOR_D, floor(x))
            UD(VM_CEIL_D, ceil(x))
            UD(VM_TRUNC_D, trunc(x))
            UD(VM_SIGN_D, sign_d(x))
            UD(VM_ASIN_D, asin(x))
            UD(VM_ACOS_D, acos(x))
            UD(VM_ATAN_D, atan(x))
            UD(VM_SINH_D, sinh(x))
            UD(VM_COSH_D, cosh(x))
            UD(VM_ASINH_D, asinh(x))
            UD(VM_ACOSH_D, acosh(x))
            UD(VM_ATANH_D, atanh(x))
            UN(VM_NOT_D, int64_t, double, RI, RD, x == 0.0)
            UN(VM_NEG_I, int64_t, int64_t, RI, RI, wrap_neg(x))
            UN(VM_ABS_I, int64_t, int64_t, RI, RI, x < 0 ? wrap_neg(x) : x)
            UN(VM_SIGN_I, int64_t, int64_t, RI, RI, (x > 0) - (x < 0))
            UN(VM_NOT_I, int64_t, int64_t, RI, RI, x == 0)
            CASE(VM_WHERE_D) {
                double *d_ = RD(w[1]);
                const int64_t *c_ = RI(w[2]);
                const double *a_ = RD(w[3]), *b_ = RD(w[4]);
                for (int i = 0; i < n; i++) d_[i] = c_[i] ? a_[i] : b_[i];
                NEXT;
            }
            CASE(VM_WHERE_I) {
                int64_t *d_ = RI(w[1]);
                const int64_t *c_ = RI(w[2]), *a_ = RI(w[3]), *b_ = RI(w[4]);
                for (int i = 0; i < n; i++) d_[i] = c_[i] ? a_[i] : b_[i];
                NEXT;
            }
            CASE(VM_STORE_D) { /* output a (run; -1: none) and c (packed) from register b */
                const double *v = RD(w[2]);
                if (vm->packed) {
                    double *o = vm->os + w[3];
                    const int64_t step = vm->n_pk;
                    for (int i = 0; i < n; i++) o[i * step] = v[i];
                } else if (w[1] >= 0) {
                    memcpy((double *)vm->out[w[1]] + vm->s, v, (size_t)n * sizeof(double));
                }
                NEXT;
            }
            CASE(VM_STORE_I) { /* the same from the int file; d: 1 stores int64, 2 a bool byte */
                const int64_t *v = RI(w[2]);
                if (vm->packed) {
                    double *o = vm->os + w[3];
                    const int64_t step = vm->n_pk;
                    for (int i = 0; i < n; i++) o[i * step] = (double)v[i];
                } else if (w[1] >= 0 && w[4] == 1) {
                    memcpy((int64_t *)vm->out[w[1]] + vm->s, v, (size_t)n * sizeof(int64_t));
                } else if (w[1] >= 0) {
                    uint8_t *p = (uint8_t *)vm->out[w[1]] + vm->s;
                    for (int i = 0; i < n; i++) p[i] = v[i] != 0;
                }
                NEXT;
            }
            CASE(VM_STORES_D) { /* a class's outputs, one tight loop (see _cvm.h) */
                const int32_t *t = vm->ints + w[2];
                const int64_t count = w[1];
                if (vm->packed && n == 1) {
                    double *o = vm->os;
                    for (int64_t q = 0; q < count; q++) o[t[3 * q + 2]] = RD(t[3 * q + 1])[0];
                } else if (vm->packed) {
                    const int64_t step = vm->n_pk;
                    for (int64_t q = 0; q < count; q++) {
                        const double *v = RD(t[3 * q + 1]);
                        double *o = vm->os + t[3 * q + 2];
                        for (int i = 0; i < n; i++) o[i * step] = v[i];
                    }
                } else {
                    for (int64_t q = 0; q < count; q++)
                        if (t[3 * q] >= 0)
                            memcpy((double *)vm->out[t[3 * q]] + vm->s, RD(t[3 * q + 1]), (size_t)n * sizeof(double));
                }
                NEXT;
            }
            CASE(VM_LOOP) /* the caller runs it */
                return k;
#if !defined(__GNUC__)
            default:
                return k;
#endif
        }
    }
    return end;
}

/* One class: for each member, the body's slot registers point at the member's slots and its result
 * register at the member's register; its constants are written into the body's constant registers. */
static void run_loop(Machine *vm, const int32_t *cls, int n) {
    const int32_t members = cls[VM_C_MEMBERS], slots = cls[VM_C_SLOTS], consts = cls[VM_C_CONSTS];
    const int32_t *body = vm->code + (int64_t)cls[VM_C_BODY] * VM_WORDS;
    const int64_t body_len = cls[VM_C_BODYLEN];
    const int32_t result = cls[VM_C_RESULT];
    const int32_t *slot_regs = vm->ints + cls[VM_C_SLOTREGS];
    const int32_t *const_regs = vm->ints + cls[VM_C_CONSTREGS];
    const int32_t *ix = vm->ints + cls[VM_C_IX];
    const int32_t *ox = vm->ints + cls[VM_C_OX];
    const double *kc = vm->doubles + cls[VM_C_KC];
    double *own_result = vm->pd[result];
    for (int64_t m = 0; m < members; m++) {
        const int32_t *r = ix + m * slots;
        for (int j = 0; j < slots; j++) vm->pd[slot_regs[j]] = vm->pd[r[j]];
        const double *c = kc + m * consts;
        for (int j = 0; j < consts; j++) {
            const int32_t reg = const_regs[j] & ((1 << KIND_SHIFT) - 1);
            if (const_regs[j] >> KIND_SHIFT) {
                int64_t *d = RI(reg);
                const int64_t v = (int64_t)c[j];
                for (int i = 0; i < n; i++) d[i] = v;
            } else {
                double *d = RD(reg);
                const double v = c[j];
                for (int i = 0; i < n; i++) d[i] = v;
            }
        }
        vm->pd[result] = vm->pd[ox[m]];
        vm_run_straight(vm, body, 0, body_len, n);
    }
    /* the body's registers are ordinary registers again (later code reuses them) */
    const double *base = vm->stride == 1 ? vm->rd1 : vm->rd;
    for (int j = 0; j < slots; j++) vm->pd[slot_regs[j]] = (double *)base + (int64_t)slot_regs[j] * vm->stride;
    vm->pd[result] = own_result;
}

/* One class at one point (the dense one-lane layout): the members are the lanes. Up to `block` members at a
 * time, each member's slots and constants are gathered into lane i of the body's registers in the block
 * layout (which a one-point call leaves unused: nothing else lives there), the body runs once over those
 * lanes, and lane i of its result goes to member i's register. Dispatch is paid once per instruction per
 * `block` members, as a call at many points pays it once per `block` points. */
void vm_run_loop_members(Machine *vm, const int32_t *cls) {
    const int64_t members = cls[VM_C_MEMBERS], slots = cls[VM_C_SLOTS], consts = cls[VM_C_CONSTS];
    const int32_t *body = vm->code + (int64_t)cls[VM_C_BODY] * VM_WORDS;
    const int64_t body_len = cls[VM_C_BODYLEN];
    const int32_t *slot_regs = vm->ints + cls[VM_C_SLOTREGS];
    const int32_t *const_regs = vm->ints + cls[VM_C_CONSTREGS];
    const int32_t *ix = vm->ints + cls[VM_C_IX];
    const int32_t *ox = vm->ints + cls[VM_C_OX];
    const double *kc = vm->doubles + cls[VM_C_KC];
    const int64_t B = vm->block;
    double *one = vm->rd1;
    const double *result = vm->pd_block[cls[VM_C_RESULT]];
    for (int64_t m0 = 0; m0 < members; m0 += B) {
        const int n = (int)(members - m0 < B ? members - m0 : B);
        for (int64_t j = 0; j < slots; j++) {
            double *d = vm->pd_block[slot_regs[j]];
            const int32_t *r = ix + m0 * slots + j;
            for (int i = 0; i < n; i++) d[i] = one[r[(int64_t)i * slots]];
        }
        for (int64_t j = 0; j < consts; j++) {
            const int32_t reg = const_regs[j] & ((1 << KIND_SHIFT) - 1);
            const double *c = kc + m0 * consts + j;
            if (const_regs[j] >> KIND_SHIFT) {
                int64_t *d = vm->pi_block[reg];
                for (int i = 0; i < n; i++) d[i] = (int64_t)c[(int64_t)i * consts];
            } else {
                double *d = vm->pd_block[reg];
                for (int i = 0; i < n; i++) d[i] = c[(int64_t)i * consts];
            }
        }
        vm->pd = vm->pd_block;
        vm->pi = vm->pi_block;
        vm_run_straight(vm, body, 0, body_len, n);
        vm->pd = vm->pd_one;
        vm->pi = vm->pi_one;
        for (int i = 0; i < n; i++) one[ox[m0 + i]] = result[i];
    }
}

/* The main program on `n` lanes (inputs loaded). */
void vm_run_main(Machine *vm, int n) {
    int64_t k = 0;
    while (k < vm->main_len) {
        k = vm_run_straight(vm, vm->code, k, vm->main_len, n);
        if (k < vm->main_len) {
            const int32_t *cls = vm->ints + vm->code[k * VM_WORDS + 2];
            if (vm->stride == 1)
                vm_run_loop_members(vm, cls);
            else
                run_loop(vm, cls, n);
            k++;
        }
    }
}

