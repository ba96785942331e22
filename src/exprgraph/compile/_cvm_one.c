/* The vm at one point: the main program transcoded once into dense scalar code, run by its own interpreter.
 *
 * A solver's callback evaluates the program at one point. The lane interpreter (_cvm_run.c) pays, per
 * instruction, a lane loop of one iteration and a pointer table per operand; here an instruction is
 * its opcode and destination in one word and then its operands, read straight from the dense
 * one-lane register file (`rd1`), with no bounds test per step (the code ends with O_END). Each
 * rewrite keeps the exact sequential semantics of what it replaces (the same operations on the
 * same values in the same order, so the same bits):
 *   - an arithmetic instruction followed by the STORE_D of its result: one instruction (`_S`) that
 *     also writes the packed output;
 *   - a product by a constant register: the constant's value inline in the code (KMUL: k*x, MULK: x*k);
 *   - sin and cos of one register, at most ONE_SINCOS_WINDOW instructions apart (the AC-OPF's angle
 *     differences): one sincos at the first, the other result kept for the second (O_KEPT); glibc's
 *     sincos is its sin and cos (the same kernels; the tests compare with math.sin and math.cos),
 *     elsewhere both functions are called;
 *   - pairs of frequent instructions under one dispatch (A's body, then a direct jump to B's).
 * Every other instruction is run by the lane interpreter on its one lane (O_SLOW), a class loop by
 * vm_run_loop_members (O_LOOP), so every program transcodes. Used by packed calls at one point; its
 * twin is the lane interpreter (exprgraph.compile.vm.ONE_POINT = False): the tests compare the bits.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_cvm.h"

/* the one-point opcodes: the lane instruction each stands for, then its fused-store variant */
#define ONE_OPCODE_LIST(X) X(O_END) ONE_OPCODE_LIST_BUT_END(X)
#define ONE_OPCODE_LIST_BUT_END(X)                                                                               \
    X(O_SLOW) X(O_LOOP) X(O_STORE) X(O_SINCOS) X(O_COSSIN) X(O_KEPT) X(O_KEPT_S)                                 \
    X(O_ADD) X(O_SUB) X(O_MUL) X(O_DIV) X(O_POWDI) X(O_POWDD) X(O_NEG) X(O_MOV) X(O_SIN) X(O_COS)                \
    X(O_EXP) X(O_LOG) X(O_SQRT) X(O_ABS)                                                                         \
    X(O_ADD_S) X(O_SUB_S) X(O_MUL_S) X(O_DIV_S) X(O_POWDI_S) X(O_POWDD_S) X(O_NEG_S) X(O_MOV_S)                  \
    X(O_SIN_S) X(O_COS_S) X(O_EXP_S) X(O_LOG_S) X(O_SQRT_S) X(O_ABS_S)                                           \
    X(O_KMUL) X(O_MULK) X(O_KMUL_S) X(O_MULK_S)

/* pairs "A, and the next instruction is B": A's body, then a direct jump to B's handler (one indirect jump
 * for two instructions); the frequent arithmetic of derivatives, each with the others */
#define ONE_PAIRS_OF(X, A)                                                                                       \
    X(A, O_MUL) X(A, O_MUL_S) X(A, O_ADD) X(A, O_ADD_S) X(A, O_SUB) X(A, O_SUB_S) X(A, O_NEG) X(A, O_NEG_S)      \
    X(A, O_STORE) X(A, O_KMUL) X(A, O_MULK) X(A, O_KMUL_S) X(A, O_MULK_S)
#define ONE_PAIR_LIST(X)                                                                                         \
    ONE_PAIRS_OF(X, O_MUL) ONE_PAIRS_OF(X, O_MUL_S) ONE_PAIRS_OF(X, O_ADD) ONE_PAIRS_OF(X, O_ADD_S)              \
    ONE_PAIRS_OF(X, O_SUB) ONE_PAIRS_OF(X, O_SUB_S) ONE_PAIRS_OF(X, O_NEG) ONE_PAIRS_OF(X, O_NEG_S)              \
    ONE_PAIRS_OF(X, O_STORE) ONE_PAIRS_OF(X, O_KMUL) ONE_PAIRS_OF(X, O_MULK) ONE_PAIRS_OF(X, O_KMUL_S)           \
    ONE_PAIRS_OF(X, O_MULK_S)

enum one_opcode {
#define ONE_ENUM(name) name,
    ONE_OPCODE_LIST(ONE_ENUM)
#undef ONE_ENUM
    O_BASE,
    O_PAIR_BEFORE_FIRST = O_BASE - 1,
#define ONE_PAIR_ENUM(A, B) P_##A##_##B,
    ONE_PAIR_LIST(ONE_PAIR_ENUM)
#undef ONE_PAIR_ENUM
    O_COUNT
};

_Static_assert(O_COUNT <= 256, "one-point opcodes fit in a byte");
_Static_assert(O_ABS_S - O_ABS == O_ADD_S - O_ADD, "each _S opcode is its plain one's at one offset");

/* the pair opcode of each (A, B), 0 where none */
static const unsigned char pair_of[O_BASE][O_BASE] = {
#define ONE_PAIR_INIT(A, B) [A][B] = P_##A##_##B,
    ONE_PAIR_LIST(ONE_PAIR_INIT)
#undef ONE_PAIR_INIT
};

/* the registers a word can name (the opcode takes the low byte) */
#define ONE_MAX_REG (1 << 23)
/* the offset of a _S opcode from its plain one */
#define ONE_S (O_ADD_S - O_ADD)
/* instructions looked ahead for the sin (cos) of the register a cos (sin) reads */
#define ONE_SINCOS_WINDOW 32

/* words of an instruction of base opcode `op` */
static int one_words(int op) {
    switch (op) {
        case O_END: case O_KEPT: return 1;
        case O_ADD: case O_SUB: case O_MUL: case O_DIV: case O_POWDI: case O_POWDD:
        case O_NEG_S: case O_MOV_S: case O_SIN_S: case O_COS_S: case O_EXP_S: case O_LOG_S: case O_SQRT_S:
        case O_ABS_S:
            return 3;
        case O_ADD_S: case O_SUB_S: case O_MUL_S: case O_DIV_S: case O_POWDI_S: case O_POWDD_S: case O_KMUL:
        case O_MULK:
            return 4;
        case O_KMUL_S: case O_MULK_S: return 5;
        default: return 2; /* SLOW, LOOP, STORE and the plain unary ops */
    }
}

/* one-point opcode of a lane opcode of the fast set, operand counts (1: unary, 2: binary), -1: not in it */
static int fast_op(int32_t op, int *arity) {
    *arity = 2;
    switch (op) {
        case VM_ADD_D: return O_ADD;
        case VM_SUB_D: return O_SUB;
        case VM_MUL_D: return O_MUL;
        case VM_DIV_D: return O_DIV;
        case VM_POW_DI: return O_POWDI;
        case VM_POW_DD: return O_POWDD;
        default: break;
    }
    *arity = 1;
    switch (op) {
        case VM_NEG_D: return O_NEG;
        case VM_MOV_D: return O_MOV;
        case VM_SIN_D: return O_SIN;
        case VM_COS_D: return O_COS;
        case VM_EXP_D: return O_EXP;
        case VM_LOG_D: return O_LOG;
        case VM_SQRT_D: return O_SQRT;
        case VM_ABS_D: return O_ABS;
        default: return -1;
    }
}

/* a growing array of code words */
typedef struct {
    uint32_t *w;
    int64_t len, cap;
} Words;

static int put(Words *c, uint32_t word) {
    if (c->len == c->cap) {
        int64_t cap = c->cap ? 2 * c->cap : 1024;
        uint32_t *w = realloc(c->w, (size_t)cap * sizeof(uint32_t));
        if (w == NULL) return -1;
        c->w = w;
        c->cap = cap;
    }
    c->w[c->len++] = word;
    return 0;
}

static int in_file(int32_t reg, int64_t size) { return reg >= 0 && reg < size && reg < ONE_MAX_REG; }

/* a double in two words (the code's words are 4-byte aligned: copied, never cast) */
static int put_double(Words *c, double v) {
    uint32_t half[2];
    memcpy(half, &v, sizeof(v));
    return put(c, half[0]) || put(c, half[1]);
}

/* a product by a constant (one operand a constant register: `konst` gives its value, or NULL): its value inline */
static int put_kmul(Words *c, const int32_t *w, const double *const *konst, int fused, int32_t col) {
    const int first = konst[w[2]] != NULL;
    const int o = (first ? O_KMUL : O_MULK) + (fused ? O_KMUL_S - O_KMUL : 0);
    int bad = put(c, (uint32_t)o | (uint32_t)w[1] << 8) || put(c, (uint32_t)w[first ? 3 : 2]);
    bad |= put_double(c, *konst[w[first ? 2 : 3]]);
    if (fused) bad |= put(c, (uint32_t)col);
    return bad;
}

/* One fast instruction (and the store of its result after it, fused): the lane instructions used, 0 if not fast. */
static int64_t put_fast(Words *c, const Machine *vm, const int32_t *w, const int32_t *next,
                        const double *const *konst) {
    int arity;
    const int o = fast_op(w[0], &arity);
    if (o < 0 || !in_file(w[1], vm->nd) || !in_file(w[2], vm->nd)) return 0;
    if (arity == 2 && !(o == O_POWDI ? in_file(w[3], vm->ni) : in_file(w[3], vm->nd))) return 0;
    const int fused = next != NULL && next[0] == VM_STORE_D && next[2] == w[1] && next[3] >= 0 && next[3] < vm->n_pk;
    if (o == O_MUL && (konst[w[2]] == NULL) != (konst[w[3]] == NULL))
        return put_kmul(c, w, konst, fused, fused ? next[3] : 0) ? -1 : 1 + fused;
    int bad = put(c, (uint32_t)(o + (fused ? ONE_S : 0)) | (uint32_t)w[1] << 8) || put(c, (uint32_t)w[2]);
    if (arity == 2) bad |= put(c, (uint32_t)w[3]);
    if (fused) bad |= put(c, (uint32_t)next[3]);
    return bad ? -1 : 1 + fused;
}

/* sin and cos of one register: instruction k and the other function of the same register at most
 * ONE_SINCOS_WINDOW later, nothing between writing the register (so both read one value). The first becomes
 * a sincos that keeps the other result aside, the second a move of the kept value (O_KEPT). Returns the
 * lane index of the second, 0 if none, -1 out of memory. */
static int64_t put_sincos(Words *c, const Machine *vm, int64_t k) {
    const int32_t *w = vm->code + k * VM_WORDS;
    const int32_t other = w[0] == VM_SIN_D ? VM_COS_D : w[0] == VM_COS_D ? VM_SIN_D : -1;
    if (other < 0 || w[1] == w[2] || !in_file(w[1], vm->nd) || !in_file(w[2], vm->nd)) return 0;
    for (int64_t j = k + 1; j < vm->main_len && j <= k + ONE_SINCOS_WINDOW; j++) {
        const int32_t *v = vm->code + j * VM_WORDS;
        if (v[0] != other || v[2] != w[2]) {
            if (v[0] == VM_LOOP || (v[0] != VM_STORE_D && v[0] != VM_STORE_I && v[1] == w[2]))
                return 0; /* the register is written before the other function reads it (or a loop may write it) */
            continue;
        }
        if (!in_file(v[1], vm->nd)) return 0;
        const int o = w[0] == VM_SIN_D ? O_SINCOS : O_COSSIN;
        return put(c, (uint32_t)o | (uint32_t)w[1] << 8) || put(c, (uint32_t)w[2]) ? -1 : j;
    }
    return 0;
}

/* the pairs: an instruction followed by one it pairs with takes the pair's opcode (the follower stays as it is) */
static void pair_up(uint32_t *code) {
    int64_t p = 0;
    while ((code[p] & 0xff) != O_END) {
        const int a = (int)(code[p] & 0xff);
        const int64_t next = p + one_words(a);
        const int b = (int)(code[next] & 0xff);
        if (b != O_END && pair_of[a][b]) {
            code[p] = (code[p] & ~(uint32_t)0xff) | pair_of[a][b];
            p = next + one_words(b);
        } else {
            p = next;
        }
    }
}

/* the second of a sin and cos pair: the kept value to its register (and the store of it after, fused) */
static int64_t put_kept(Words *c, const Machine *vm, const int32_t *w, const int32_t *next) {
    const int fused = next != NULL && next[0] == VM_STORE_D && next[2] == w[1] && next[3] >= 0 && next[3] < vm->n_pk;
    if (put(c, (uint32_t)(fused ? O_KEPT_S : O_KEPT) | (uint32_t)w[1] << 8)) return -1;
    return fused ? (put(c, (uint32_t)next[3]) ? -1 : 2) : 1;
}

int vm_one_transcode(Machine *vm, const int32_t *const_reg, const double *const_val, int64_t n_const) {
    Words c = {NULL, 0, 0};
    const int64_t n = vm->main_len;
    int64_t second = -1; /* the second of a sin and cos pair whose first is encoded */
    if (vm->nd >= ONE_MAX_REG || vm->ni >= ONE_MAX_REG) return 0; /* the lane interpreter runs every call */
    /* the value of each double register that holds a constant (nothing writes those registers) */
    const double **konst = calloc((size_t)(vm->nd ? vm->nd : 1), sizeof(double *));
    if (konst == NULL) return -1;
    for (int64_t k = 0; k < n_const; k++)
        if (const_reg[k] >= 0 && const_reg[k] < vm->nd) konst[const_reg[k]] = const_val + k;
    for (int64_t k = 0; k < n; k++) { /* (the encoder never writes them: a register written is not inlined) */
        const int32_t *w = vm->code + k * VM_WORDS;
        if (w[0] != VM_STORE_D && w[0] != VM_STORE_I && w[0] != VM_STORES_D && w[1] >= 0 && w[1] < vm->nd)
            konst[w[1]] = NULL;
    }
    for (int64_t k = 0; k < n;) {
        const int32_t *w = vm->code + k * VM_WORDS;
        const int32_t *next = k + 1 < n ? w + VM_WORDS : NULL;
        int64_t used = 0;
        if (k == second) {
            used = put_kept(&c, vm, w, next);
        } else if (second < k) {
            const int64_t found = put_sincos(&c, vm, k);
            if (found != 0) second = found;
            used = found < 0 ? -1 : found > 0;
        }
        if (used == 0) used = put_fast(&c, vm, w, next, konst);
        if (used == 0 && w[0] == VM_STORE_D && in_file(w[2], vm->nd) && w[3] >= 0 && w[3] < vm->n_pk)
            used = put(&c, (uint32_t)O_STORE | (uint32_t)w[2] << 8) || put(&c, (uint32_t)w[3]) ? -1 : 1;
        if (used == 0 && w[0] == VM_LOOP)
            used = put(&c, O_LOOP) || put(&c, (uint32_t)w[2]) ? -1 : 1;
        if (used == 0) used = put(&c, O_SLOW) || put(&c, (uint32_t)k) ? -1 : 1;
        if (used < 0) goto fail;
        k += used;
    }
    if (put(&c, O_END)) goto fail;
    pair_up(c.w);
    free(konst);
    vm->one = c.w;
    vm->one_len = c.len;
    return 0;
fail:
    free(konst);
    free(c.w);
    return -1;
}

/* -- the interpreter: each body does its instruction and steps `p` past it ------------------------------- */

#define ONE_DISPATCH goto *table[p[0] & 0xff]
#define ONE_DST (p[0] >> 8)

#define B_BIN(EXPR) { const double x = r[p[1]], y = r[p[2]]; r[ONE_DST] = (EXPR); p += 3; }
#define B_BIN_S(EXPR) \
    { const double x = r[p[1]], y = r[p[2]]; const double v = (EXPR); r[ONE_DST] = v; o[p[3]] = v; p += 4; }
#define B_UN(EXPR) { const double x = r[p[1]]; r[ONE_DST] = (EXPR); p += 2; }
#define B_UN_S(EXPR) { const double x = r[p[1]]; const double v = (EXPR); r[ONE_DST] = v; o[p[2]] = v; p += 3; }

#define BODY_O_STORE { o[p[1]] = r[ONE_DST]; p += 2; }
#define BODY_O_ADD B_BIN(x + y)
#define BODY_O_SUB B_BIN(x - y)
#define BODY_O_MUL B_BIN(x * y)
#define BODY_O_DIV B_BIN(x / y)
#define BODY_O_POWDD B_BIN(vm_pow_dd(x, y))
#define BODY_O_NEG B_UN(-x)
#define BODY_O_MOV B_UN(x)
#define BODY_O_SIN B_UN(sin(x))
#define BODY_O_COS B_UN(cos(x))
#define BODY_O_EXP B_UN(exp(x))
#define BODY_O_LOG B_UN(log(x))
#define BODY_O_SQRT B_UN(sqrt(x))
#define BODY_O_ABS B_UN(fabs(x))
#define BODY_O_ADD_S B_BIN_S(x + y)
#define BODY_O_SUB_S B_BIN_S(x - y)
#define BODY_O_MUL_S B_BIN_S(x * y)
#define BODY_O_DIV_S B_BIN_S(x / y)
#define BODY_O_POWDD_S B_BIN_S(vm_pow_dd(x, y))
#define BODY_O_NEG_S B_UN_S(-x)
#define BODY_O_MOV_S B_UN_S(x)
#define BODY_O_SIN_S B_UN_S(sin(x))
#define BODY_O_COS_S B_UN_S(cos(x))
#define BODY_O_EXP_S B_UN_S(exp(x))
#define BODY_O_LOG_S B_UN_S(log(x))
#define BODY_O_SQRT_S B_UN_S(sqrt(x))
#define BODY_O_ABS_S B_UN_S(fabs(x))
/* a product by the constant inline in words 2-3: k*x (KMUL) or x*k (MULK), the operands in the program's order */
#define ONE_K(v) double v; memcpy(&v, p + 2, sizeof(v))
#define BODY_O_KMUL { ONE_K(k_); r[ONE_DST] = k_ * r[p[1]]; p += 4; }
#define BODY_O_MULK { ONE_K(k_); r[ONE_DST] = r[p[1]] * k_; p += 4; }
#define BODY_O_KMUL_S { ONE_K(k_); const double v = k_ * r[p[1]]; r[ONE_DST] = v; o[p[4]] = v; p += 5; }
#define BODY_O_MULK_S { ONE_K(k_); const double v = r[p[1]] * k_; r[ONE_DST] = v; o[p[4]] = v; p += 5; }
#define BODY_O_POWDI { r[ONE_DST] = vm_pow_di(r[p[1]], ri[p[2]]); p += 3; }
#define BODY_O_POWDI_S { const double v = vm_pow_di(r[p[1]], ri[p[2]]); r[ONE_DST] = v; o[p[3]] = v; p += 4; }

#if defined(__GLIBC__)
#define ONE_SINCOS(x, s, c) sincos((x), (s), (c))
#else
#define ONE_SINCOS(x, s, c) (*(s) = sin(x), *(c) = cos(x))
#endif
/* sin to the destination and cos kept for the O_KEPT after, or the other way round */
#define BODY_O_SINCOS { double s_; ONE_SINCOS(r[p[1]], &s_, &kept); r[ONE_DST] = s_; p += 2; }
#define BODY_O_COSSIN { double c_; ONE_SINCOS(r[p[1]], &kept, &c_); r[ONE_DST] = c_; p += 2; }
#define BODY_O_KEPT { r[ONE_DST] = kept; p += 1; }
#define BODY_O_KEPT_S { r[ONE_DST] = kept; o[p[1]] = kept; p += 2; }
/* a lane instruction the dense code has no form for, run on its one lane; a class at one point */
#define BODY_O_SLOW { vm_run_straight(vm, vm->code, p[1], p[1] + 1, 1); p += 2; }
#define BODY_O_LOOP { vm_run_loop_members(vm, vm->ints + p[1]); p += 2; }

void vm_one_run(Machine *vm, double *o) {
#if defined(__GNUC__)
#define ONE_LABEL(name) [name] = &&L_##name,
#define ONE_PAIR_LABEL(A, B) [P_##A##_##B] = &&L_P_##A##_##B,
    static void *const table[256] = {ONE_OPCODE_LIST(ONE_LABEL) ONE_PAIR_LIST(ONE_PAIR_LABEL)};
#undef ONE_LABEL
#undef ONE_PAIR_LABEL
    const uint32_t *p = vm->one;
    double *const r = vm->rd1;
    const int64_t *const ri = vm->ri1;
    double kept = 0.0; /* the other result of the last sincos */
    ONE_DISPATCH;
L_O_END:
    return;
#define ONE_HANDLER(name) L_##name : BODY_##name ONE_DISPATCH;
    ONE_OPCODE_LIST_BUT_END(ONE_HANDLER)
#undef ONE_HANDLER
#define ONE_PAIR_HANDLER(A, B) L_P_##A##_##B : BODY_##A goto L_##B;
    ONE_PAIR_LIST(ONE_PAIR_HANDLER)
#undef ONE_PAIR_HANDLER
#else
    (void)o;
    vm_run_main(vm, 1); /* without computed goto: the lane interpreter */
#endif
}
