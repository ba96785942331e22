/* The virtual machine of exprgraph.compile's "vm" backend: opcodes shared by the C and Python sides.
 *
 * An instruction is VM_WORDS int32 words: opcode, destination register, then up to three operand
 * registers. Registers come in two files of lanes: doubles (float64 values) and int64 (int64 and
 * bool values, bools as 0/1). The numbers below are mirrored by compile/vm_ops.py (a test checks
 * that both sides agree, reading this header).
 */
#ifndef EXPRGRAPH_CVM_H
#define EXPRGRAPH_CVM_H

#define VM_WORDS 5

/* the opcodes, as an X-macro: the enum below, and the interpreter's table of handlers */
#define VM_OPCODE_LIST(X) \
    /* moves and conversions */ \
    X(VM_MOV_D) X(VM_MOV_I) X(VM_I2D) X(VM_D2I) X(VM_TRUTH_D) X(VM_TRUTH_I) \
    /* binary, doubles -> double */ \
    X(VM_ADD_D) X(VM_SUB_D) X(VM_MUL_D) X(VM_DIV_D) X(VM_FLOORDIV_D) X(VM_MOD_D) X(VM_TRUNCDIV_D) X(VM_FMOD_D) \
    X(VM_POW_DD) X(VM_MAX_D) X(VM_MIN_D) X(VM_ATAN2_D) X(VM_HYPOT_D) X(VM_LOGADDEXP_D) X(VM_CEILDIV_D) X(VM_BDIM_D) \
    /* double ** int64 -> double */ \
    X(VM_POW_DI) \
    /* binary, doubles -> bool (int file) */ \
    X(VM_LT_D) X(VM_LE_D) X(VM_GT_D) X(VM_GE_D) X(VM_EQ_D) X(VM_NE_D) \
    /* binary, int64 -> int64 (wrapping) */ \
    X(VM_ADD_I) X(VM_SUB_I) X(VM_MUL_I) X(VM_FLOORDIV_I) X(VM_MOD_I) X(VM_TRUNCDIV_I) X(VM_FMOD_I) X(VM_POW_I) \
    X(VM_MAX_I) X(VM_MIN_I) X(VM_CEILDIV_I) X(VM_BDIM_I) X(VM_AND_I) X(VM_OR_I) \
    /* binary, int64 -> bool */ \
    X(VM_LT_I) X(VM_LE_I) X(VM_GT_I) X(VM_GE_I) X(VM_EQ_I) X(VM_NE_I) \
    /* unary, double -> double */ \
    X(VM_NEG_D) X(VM_ABS_D) X(VM_EXP_D) X(VM_LOG_D) X(VM_LOG2_D) X(VM_LOG10_D) X(VM_ERF_D) X(VM_ERFC_D) X(VM_SQRT_D) \
    X(VM_SIN_D) X(VM_COS_D) X(VM_TAN_D) X(VM_TANH_D) X(VM_SIGMOID_D) X(VM_LOG1P_D) X(VM_EXPM1_D) X(VM_SOFTPLUS_D) \
    X(VM_LOGSIGMOID_D) X(VM_FLOOR_D) X(VM_CEIL_D) X(VM_TRUNC_D) X(VM_SIGN_D) X(VM_ASIN_D) X(VM_ACOS_D) X(VM_ATAN_D) \
    X(VM_SINH_D) X(VM_COSH_D) X(VM_ASINH_D) X(VM_ACOSH_D) X(VM_ATANH_D) \
    /* unary, double -> bool */ \
    X(VM_NOT_D) \
    /* unary, int64 -> int64 */ \
    X(VM_NEG_I) X(VM_ABS_I) X(VM_SIGN_I) X(VM_NOT_I) \
    /* where(cond in the int file, a, b) */ \
    X(VM_WHERE_D) X(VM_WHERE_I) \
    /* an output written: a = its run index (-1: none), b = register, c = its packed column, d = run store */ \
    X(VM_STORE_D) X(VM_STORE_I) \
    /* a outputs from the double file: the int table at b holds (run index or -1, register, packed column) each */ \
    X(VM_STORES_D) \
    /* a loop over the members of a class: operand a is its descriptor's offset in the int table */ \
    X(VM_LOOP)

enum vm_opcode {
#define VM_ENUM_ENTRY(name) name,
    VM_OPCODE_LIST(VM_ENUM_ENTRY)
#undef VM_ENUM_ENTRY
    VM_OPCODES
};

/* a class descriptor in the int table: these many int32 words, at the class's offset */
enum vm_class_field {
    VM_C_MEMBERS = 0, /* members */
    VM_C_SLOTS,       /* slots read per member (double registers) */
    VM_C_CONSTS,      /* constants per member */
    VM_C_BODY,        /* first instruction of the body */
    VM_C_BODYLEN,     /* instructions of the body */
    VM_C_RESULT,      /* the double register holding the body's result */
    VM_C_SLOTREGS,    /* offset in the int table: the body's slot registers (VM_C_SLOTS of them) */
    VM_C_CONSTREGS,   /* offset in the int table: the body's constant registers, each as kind*2^30 + register */
    VM_C_IX,          /* offset in the int table: per member, the registers its slots read */
    VM_C_OX,          /* offset in the int table: per member, the register it writes */
    VM_C_KC,          /* offset in the double table: per member, its constants */
    VM_C_FIELDS
};

#ifdef Py_PYTHON_H
#include <math.h>
#include <stdint.h>

/* the machine: an encoded program and its registers (the Python type exprgraph.compile._cvm.Machine) */
typedef struct {
    PyObject_HEAD
    int32_t *code;      /* instructions: the main program, then the class bodies */
    Py_buffer code_view; /* the bytes `code` points into (held, not copied: see keep_code), or obj NULL: ours */
    int64_t main_len;   /* instructions of the main program */
    int32_t *ints;      /* class descriptors and tables */
    double *doubles;    /* class constants */
    int64_t nd, ni;     /* registers per file */
    int block;          /* lanes per register */
    double *rd;         /* double registers: nd * block */
    int64_t *ri;        /* int64 registers: ni * block */
    double *rd1;        /* the same registers with one lane each, dense: calls at one point */
    int64_t *ri1;
    double **pd;        /* where each double register's lanes are (a class member's slots point elsewhere) */
    int64_t **pi;       /* where each int64 register's lanes are */
    double **pd_block, **pd_one; /* the two layouts of pd: `block` lanes, or one dense lane */
    int64_t **pi_block, **pi_one;
    int stride;         /* lanes per register in the layout in use */
    int64_t n_in;       /* inputs read (run) */
    int32_t *in_store;  /* per input read: 0 double, 1 int64, 2 bool byte */
    int32_t *in_reg;
    int32_t *in_col;    /* per input read: its column in a packed row */
    int64_t n_cols;     /* columns of a packed row */
    int64_t n_out;      /* outputs written by run (the STORE instructions name them) */
    int64_t n_pk;       /* outputs of a packed row */
    /* the call in progress, read by the STORE instructions */
    int packed;         /* a packed call (else run) */
    void *const *out;   /* run: the outputs' addresses */
    int64_t s;          /* run: the first point of the block */
    double *os;         /* packed: the block's first output row */
    int error;          /* an integer power had a negative exponent */
    uint32_t *one;      /* the main program transcoded for calls at one point (_cvm_one.c), or NULL */
    int64_t one_len;
} Machine;

#define KIND_SHIFT 30

/* the lanes of a register of each file (in a function with `Machine *vm`) */
#define RD(r) (vm->pd[r])
#define RI(r) (vm->pi[r])

/* numpy's cast of nan and out-of-range values gives INT64_MIN; C's cast is undefined there */
static inline int64_t d2i(double x) {
    return (x != x || x >= 9223372036854775808.0 || x < -9223372036854775808.0) ? INT64_MIN : (int64_t)x;
}

/* a double to an int64 power, and to a double power: the C backend's (crender.py) */
static inline double vm_pow_dd(double a, double b) { return b == 2.0 ? a * a : b == 0.5 ? sqrt(a) : pow(a, b); }

static inline double vm_pow_di(double a, int64_t b) {
    if (b == 2) return a * a;
    double r = pow(a, (double)b);
    return (b & 1) ? copysign(r, a) : r;
}

/* the main program on `n` lanes, inputs loaded; instructions from `k` to a VM_LOOP or `end`; a class at one
 * point, its members as the lanes (_cvm_run.c) */
void vm_run_main(Machine *vm, int n);
int64_t vm_run_straight(Machine *vm, const int32_t *code, int64_t k, int64_t end, int n);
void vm_run_loop_members(Machine *vm, const int32_t *cls);

/* the main program transcoded for calls at one point (0; -1: out of memory; the constants' registers and
 * values given), and run with the packed outputs at `o`, inputs loaded in the one-lane registers (_cvm_one.c) */
int vm_one_transcode(Machine *vm, const int32_t *const_reg, const double *const_val, int64_t n_const);
void vm_one_run(Machine *vm, double *o);

/* `total` rows of n_cols doubles in at x, rows of every output as doubles out at o: the error flag (_cvm.c) */
int vm_run_packed(Machine *vm, int64_t total, const double *x, double *o);
/* the Python types: the machine (_cvm.c), a nonlinear program's callbacks in C over machines (_cvm_nlp.c) */
extern PyTypeObject MachineType;
extern PyTypeObject NLPCallbacksType;

/* the lowering's walk (_cvm_walk.c) and the straight-line encoding (_cvm_encode.c); twins: lower.py, vm_encode.py */
PyObject *cvm_walk(PyObject *self, PyObject *args);
/* register allocation of straight-line code (_cvm_alloc.c; twin: vm_alloc.py's allocate_py) */
PyObject *cvm_allocate(PyObject *self, PyObject *args);
PyObject *cvm_encode_flat(PyObject *self, PyObject *args);
/* the same encoding from the walk kept as arrays (_cvm_walked.c) */
PyObject *cvm_encode_walked(PyObject *self, PyObject *args);
#endif

#endif
