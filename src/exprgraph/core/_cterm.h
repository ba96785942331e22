/* _cterm.h: what the files of exprgraph.core._cterm share (see _cterm.c for the whole picture).

   _cterm.c        the module: configuration from Python, the functions Python calls
   _cterm_term.c   TermBase: the intern table, the dtype rules of scalar operands, construction
   _cterm_folds.c  the folds of grad_tools.product / negate and reverse._fan_in
   _cterm_rules.c  gradient rules recorded as templates and replayed
   _cterm_sweep.c  marked walks: the live order and the reverse sweep
   _cterm_forward.c  the forward sweep (a marked walk)
   _cterm_pattern.c  dependency sets of Jacobian rows (a marked walk)

   Built with -fvisibility=hidden: only PyInit__cterm leaves the library. */

#ifndef EXPRGRAPH_CTERM_H
#define EXPRGRAPH_CTERM_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#ifdef Py_GIL_DISABLED
#error "exprgraph's C term needs the GIL; the build falls back to pure Python"
#endif

typedef struct TermObject {
    PyObject_HEAD
    PyObject *op;
    PyObject *args;  /* a tuple of terms */
    PyObject *attr;  /* None or a hashable payload */
    PyObject *dtype; /* one of the dtype names */
    PyObject *shape; /* a tuple */
    PyObject *free;  /* caches, NULL until computed (AttributeError when read before) */
    PyObject *depth;
    PyObject *size;
    PyObject *weakreflist;
    PyObject *key;   /* the attr's intern key, NULL when attr is None */
    Py_hash_t hash;  /* intern hash of (op, args, key) */
    int linked;
    /* scratch space of the C traversals (see "marked traversals" below): marks of the traversal
       whose epoch they carry, and one owned value (a pending adjoint, a dependency set) */
    uint64_t mark;
    PyObject *scratch;
} TermObject;

#define TERM(o) ((TermObject *)(o))
#define ARG(t, i) PyTuple_GET_ITEM(TERM(t)->args, (i))
#define OP_SLOT(op, off) (*(PyObject **)((char *)(op) + (off)))
/* an op's name for messages: any object (printed with %R or %S), never NULL */
#define OP_NAME(op) (OP_SLOT(op, OffName) != NULL ? OP_SLOT(op, OffName) : Py_None)

enum { K_ARITH = 0, K_REAL = 1, K_SAME = 2, K_BOOLEAN = 3, K_WHERE = 4 };
enum { D_BOOL = 0, D_INT64 = 1, D_FLOAT32 = 2, D_FLOAT64 = 3 };

/* ---- configuration, set by configure() (_cterm.c) ---- */
extern PyTypeObject *TermClass;    /* exprgraph.core.term.Term */
extern PyTypeObject *OpClass;      /* exprgraph.core.op.Op */
extern PyObject *Registry;         /* op name -> Op */
extern PyObject *DtypeNames[4];    /* bool, int64, float32, float64 (the order of DTYPES) */
extern int Promote[4][4];          /* index of promote(a, b) */
extern int Numeric[4];             /* arithmetic counts bools as int64 */
extern PyObject *InferFns[5];      /* arith, real, same, boolean, where_rule */
extern PyObject *LeafNotation;     /* "leaf" */
extern Py_ssize_t OffInfer, OffArity, OffAttrKey, OffAttrName, OffNotation, OffName, OffGrad, OffReadsConsts;
extern int Configured;

/* ---- configuration of the sweep, set by configure_grad() (_cterm.c) ---- */
extern PyObject *OpConst, *OpAdd, *OpMul, *OpNeg, *OpTruediv;
extern PyObject *One, *OneInt, *One32;     /* the constants 1.0, 1 and float32 1 */
extern PyObject *KeyF, *KeyI;              /* "f", "i": the tags of leaves.const_key */
extern PyObject *ConstMarker[4];           /* ("const", dtype): a constant operand whose value a rule does not read */
extern PyObject *Recorder, *SumTo, *ConstFn, *DiffError, *Float32Type;
extern int GradConfigured;

/* ---- _cterm_term.c ---- */
extern PyTypeObject TermBaseType;
Py_uhash_t mix(Py_uhash_t h, Py_uhash_t v);
int dtype_index(PyObject *dtype);
Py_hash_t key_hash(PyObject *op, PyObject *args, PyObject *key);
TermObject *table_find(PyObject *op, PyObject *args, PyObject *key, Py_hash_t hash);
size_t table_count(void);
PyObject *intern_term(PyTypeObject *cls, PyObject *op, PyObject *args, PyObject *attr);
PyObject *term_vectorcall(PyObject *cls, PyObject *const *args, size_t nargsf, PyObject *kwnames);
PyObject *intern_taking(PyTypeObject *cls, PyObject *op, PyObject *args, PyObject *attr);
PyObject *resolve_op(PyObject *op);

/* ---- _cterm_folds.c ---- */
int is_float_index(int d);
PyObject *make_head(PyObject *op, PyObject *head, PyObject *const *items, Py_ssize_t n);
PyObject *make_n(PyObject *op, PyObject *const *items, Py_ssize_t n);
PyObject *make2(PyObject *op, PyObject *a, PyObject *b);
PyObject *make_const(PyObject *value);
PyObject *c_product(PyObject *g, PyObject *const *factors, Py_ssize_t n);
PyObject *c_negate(PyObject *g);
PyObject *c_fan_in(PyObject *parts);

/* ---- _cterm_rules.c ---- */
/* nodes with more operands are never recorded (their rule is called) */
#define MAX_RECORDED 8
/* the contributions of node's rule for adjoint g as a tuple (None where there is none) */
PyObject *contributions(PyObject *node, PyObject *g);
/* the same replayed from the rule's template; NULL with no exception when there is none to replay */
PyObject *replayed(PyObject *node, PyObject *g, PyObject *rule);
int template_total(void);

/* ---- _cterm_sweep.c: marked walks ----
   A walk keeps its per-node state in the terms: mark bits stamped with the walk's epoch (seen,
   live, target) and one owned scratch value (a pending adjoint, a dependency set). One walk runs
   at a time: walk_begin answers 0 when one is running (a rule calling back into a sweep, another
   thread while a rule runs), and the caller answers NotImplemented so that Python's code runs. */
#define M_SEEN 1
#define M_LIVE 2
#define M_TARGET 4

typedef struct {
    uint64_t epoch;
    TermObject **order; /* the live nodes, children first (borrowed: the outputs hold them) */
    Py_ssize_t n;
} Walk;

static inline int
marks(TermObject *t, uint64_t epoch)
{
    return (t->mark >> 3) == epoch ? (int)(t->mark & 7) : 0;
}

static inline void
stamp(TermObject *t, uint64_t epoch, int bits)
{
    t->mark = (epoch << 3) | (uint64_t)(marks(t, epoch) | bits);
}

/* 1: the walk began (end it with walk_end); 0: another walk runs; -1: an error */
int walk_begin(Walk *w, PyObject *outs, PyObject *targets);
/* the outputs (any sequence) as a tuple, a walk begun from them to the targets (any iterable; its
   terms are marked): release the tuple after walk_end. NULL on an error, or with *busy set when
   another walk runs (then answer NotImplemented) */
PyObject *walk_outputs(Walk *w, PyObject *outputs, PyObject *targets, int *busy);
/* clear the scratch of the walked nodes and end the walk */
void walk_end(Walk *w);
PyObject *marked_live_order(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
PyObject *marked_backprop(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* ---- _cterm_forward.c ---- */
PyObject *marked_forward(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* ---- _cterm_pattern.c ---- */
PyObject *marked_dependency_sets(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif
