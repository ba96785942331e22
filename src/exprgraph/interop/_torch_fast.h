/* The shared declarations of the torch fast path (_torch_fast.c: the walk; _torch_fast_intervals.c: the
   intervals of its nodes, exprgraph.dims.intervals' twin in C). */
#ifndef EG_TORCH_FAST_H
#define EG_TORCH_FAST_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum {
    K_NONE = 0, K_INT, K_SYMBOL, K_TRUE, K_FALSE, K_ADD, K_MUL, K_POW, K_FLOORDIV, K_MOD, K_MODIDX, K_MAX, K_MIN,
    K_EQ, K_NE, K_LT, K_LE, K_GT, K_GE, K_AND, K_OR, K_NOT, K_LAST
};
enum { INC = 1, DEC = 2, DENSE = 4, CONSTANT = 7 };
/* a question's result: decided, the expression has no term ("unknown"), or not handled here */
enum { ST_OK = 0, ST_UNREADABLE = 1, ST_PASS = 2 };
/* a truth: false, true, unknown for certain (it depends on the values), or not decided here */
enum { T_FALSE = 0, T_TRUE = 1, T_SOMETIMES = 2, T_ASK = 3 };

#define MAX_NODES 40  /* calls walked at most: a larger expression is left to Python (which reads shared nodes once) */
#define MAX_DEPTH 96
#define MAX_NAMES 64
#define MAX_TYPES 96
#define MAX_POWER 64
#define MAX_FACTORS 8

/* an extended integer: a value, or an infinity (inf -1 / +1) */
typedef struct { int64_t v; int inf; } Ext;

typedef struct {
    int is_bool;          /* a boolean value (truth) or an integer one (interval) */
    int truth;            /* T_*: a boolean's */
    int has;              /* an interval is known (term_interval's NO_INTERVAL otherwise) */
    Ext lo, hi;
    int exact, flags;
    uint64_t names;
    int leaf;             /* 1: a name (leaf_id its bit), 2: a number (leaf_id its value) */
    int64_t leaf_id;
    int prod;             /* a product coef * name**exp * ... of names and numbers (intervals._factors) */
    int nf;
    int64_t coef;
    int fbit[MAX_FACTORS], fexp[MAX_FACTORS];
    int plo, phi;         /* the value is known at the low point (every name at its least value): vlo; at the */
    int64_t vlo, vhi;     /* high point (every name at its greatest): vhi (witnesses that an end is reached) */
    int p3;               /* the value is known at a third point (each name 37 above its least value, within its */
    int64_t v3;           /* range): v3 */
    int up, down;         /* it takes values past every bound above / below (an open end that is reached) */
} Val;

typedef struct {
    PyObject *given, *symbols;
    PyObject *names[MAX_NAMES];   /* borrowed: the names met (each is kept alive by its symbol) */
    Ext name_lo[MAX_NAMES], name_hi[MAX_NAMES];
    int n_names;
    int status;                   /* ST_* */
    int nodes;
} Ctx;

static inline int ext_cmp(Ext a, Ext b) {
    if (a.inf != b.inf) return a.inf < b.inf ? -1 : 1;
    if (a.inf) return 0;
    return a.v < b.v ? -1 : a.v > b.v;
}
static inline Ext fin(int64_t v) { Ext e = {v, 0}; return e; }
static inline Ext infinity(int sign) { Ext e = {0, sign}; return e; }

/* a class met: its kind, and the offsets of the slots its nodes are read from (0: by getattr) */
typedef struct {
    PyTypeObject *type;
    int kind;
    int raw;                                   /* its args is sympy's Basic.args: the slot _args is read */
    Py_ssize_t off_args, off_name, off_assumptions, off_p;
} Seen;

/* _torch_fast.c: the names of the slots read, a slot of a node, how the nodes of a class are read */
extern PyObject *s_args, *s_raw_args, *s_p, *s_name;
PyObject *slot(PyObject *x, Py_ssize_t off, PyObject *name);
const Seen *seen_of(Ctx *c, PyObject *x);
int name_bit(const Ctx *c, PyObject *name);
/* _torch_fast_points.c: a REL b (operands args) true at one point and false at another; side == k at some value
   of the side's one name and not at another */
int probed(Ctx *c, int kind, PyObject *args, const Val *a, const Val *b);
int meets_number(Ctx *c, PyObject *side, const Val *a, int64_t k);

int reached(const Val *v);
/* the interval of a number; of a + b, a * b, max, min; of a // q; of a % q; the truth of a REL b */
void integer_val(Val *out, int64_t v);
void combine_assoc(Ctx *c, int kind, Val *r, const Val *a, const Val *b);
void combine_floordiv(Val *r, const Val *a, const Val *q);
void combine_mod(Ctx *c, const Val *a, const Val *q, Val *r);
int relation(Ctx *c, int kind, const Val *a, const Val *b);
/* the value of a node of kind K_ADD .. K_MOD from its operands' values (0: it overflows or divides by 0) */
int at_point(int kind, int64_t a, int64_t b, int64_t *out);
/* whether x REL y holds (kind K_EQ .. K_GE) */
int holds(int kind, int64_t x, int64_t y);
/* the truths of a REL b at the walk's three points: *t when it holds at one, *f when it fails at one */
void seen_truths(int kind, const Val *a, const Val *b, int *t, int *f);
/* the values at the three points alone of a node without an interval (kind K_ADD .. K_MOD) */
void combine_points(Val *r, int kind, const Val *a, const Val *b);

#endif
