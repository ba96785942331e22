/* _cterm_api.h: the term struct and what exprgraph.core._cterm lends other extensions.

   Another extension (exprgraph.diff._csweep) includes this header and, at import, takes the
   CTermAPI from the capsule exprgraph.core._cterm._C_API (cterm_import below): the term class,
   the facts configure() set and the interning entry points. The capsule carries the API version
   and sizeof(TermObject), so an extension built against another layout refuses to load (and its
   Python twin runs instead). Core never calls back into such an extension. */

#ifndef EXPRGRAPH_CTERM_API_H
#define EXPRGRAPH_CTERM_API_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#ifdef Py_GIL_DISABLED
#error "exprgraph's C term needs the GIL; the build falls back to pure Python"
#endif

/* the lazy caches that Python alone reads, in one block made on their first use (most terms never
   need it): the operands' tuple (`args`) and the free symbols (`_free`); NULL until made */
typedef struct TermExtras {
    PyObject *args;
    PyObject *free;
} TermExtras;

typedef struct TermObject {
    /* what a lookup and a sweep read of every node come first, next to each other; the operands
       come last, in the struct itself (ob_size of the var-size header: their number) */
    PyObject_VAR_HEAD
    PyObject *op;
    Py_hash_t hash;  /* intern hash of (op, operands, key); HASH_UNLINKED while not in the table */
    /* scratch space of the traversals of other extensions (core only frees it): marks stamped with
       the traversal's epoch, and one owned value (a pending adjoint, a dependency set) */
    uint64_t mark;
    PyObject *scratch;
    TermExtras *extras; /* the lazy caches (args tuple, free symbols): NULL until one is made */
    PyObject *weakreflist;
    uint32_t depth;  /* caches of depth and size, stored plus one: 0 until computed (depth's top */
    uint32_t size;   /* 8 bits are flags of core's intern table: read depth & 0xffffff; size's top 6
                        bits say what the tail holds and the dtype (see below): read size & 0x3ffffff) */
    /* the operands, then the tail: the words that most terms do not need, each there only when its
       flag in `size` is set, in this order: the attr (TERM_F_ATTR: not None), the attr's intern key
       when it is another object than attr (TERM_F_OWN_KEY, core's), the dtype when it is none of the
       four names (TERM_DTYPE_OTHER, core's), the shape (TERM_F_SHAPE: not the empty tuple) */
    PyObject *items[];
} TermObject;

/* The fixed part is 80 bytes and the configured term class carries no collector header (see
   configure in _cterm.c): a scalar node of two operands without an attr costs 96 bytes (a size class
   of CPython's allocator) and its share of the intern table; no tuple, no second allocation. */

/* the flags of TermObject.size (the count is the low TERM_COUNT_BITS) */
#define TERM_F_OWN_KEY ((uint32_t)1 << 31)
#define TERM_F_ATTR ((uint32_t)1 << 27)
#define TERM_F_SHAPE ((uint32_t)1 << 26)
#define TERM_COUNT_BITS 26

/* the shared empty tuple (borrowed; taken once per file that reads shapes) */
static inline PyObject *
term_empty_tuple(void)
{
    static PyObject *empty = NULL;
    if (empty == NULL)
        empty = PyTuple_New(0); /* the interpreter's preallocated singleton: never NULL */
    return empty;
}

/* the dtype of a term: bits 28-30 of `size` hold its index in dtype_names (D_BOOL ... D_FLOAT64), or
   TERM_DTYPE_OTHER for a dtype that is none of them (kept by core after the operands) */
#define TERM_DTYPE_SHIFT 28
#define TERM_DTYPE_OTHER 4
#define TERM_DTYPE_CODE(t) ((int)((TERM(t)->size >> TERM_DTYPE_SHIFT) & 7))
/* the index of term t's dtype in dtype_names, -1 for another dtype */
#define TERM_DTYPE_INDEX(t) (TERM_DTYPE_CODE(t) < TERM_DTYPE_OTHER ? TERM_DTYPE_CODE(t) : -1)

/* the tail of term t (see TermObject), and how many of its words come before the shape */
#define TERM_TAIL(t) (TERM(t)->items + Py_SIZE(t))
#define TERM_TAIL_BEFORE_SHAPE(t)                                                                              \
    (((TERM(t)->size >> 27) & 1) + (TERM(t)->size >> 31) + (TERM_DTYPE_CODE(t) == TERM_DTYPE_OTHER))
/* the attr of term t (borrowed): None or its payload */
#define TERM_ATTR(t) ((TERM(t)->size & TERM_F_ATTR) ? TERM_TAIL(t)[0] : Py_None)
/* whether term t has a shape of its own (not a scalar: its shape is not the empty tuple) */
#define TERM_HAS_SHAPE(t) ((TERM(t)->size & TERM_F_SHAPE) != 0)
/* the shape of term t (borrowed): a tuple; the empty one for a scalar */
#define TERM_SHAPE(t) (TERM_HAS_SHAPE(t) ? TERM_TAIL(t)[TERM_TAIL_BEFORE_SHAPE(t)] : term_empty_tuple())

/* Start reading the cache line at p (a hint; p need not be valid). An asm statement on x86-64: GCC at
   -O2 deletes a loop whose body is only __builtin_prefetch calls. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PREFETCH(p) __asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)(p)))
#elif defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

#define TERM(o) ((TermObject *)(o))
/* the operands of a term: their number, the i-th, and their array */
#define TERM_NARGS(t) Py_SIZE(t)
#define TERM_ARG(t, i) (TERM(t)->items[(i)])
#define TERM_ITEMS(t) ((PyObject *const *)TERM(t)->items)
#define ARG(t, i) TERM_ARG(t, i)
#define OP_SLOT(op, off) (*(PyObject **)((char *)(op) + (off)))

enum { K_ARITH = 0, K_REAL = 1, K_SAME = 2, K_BOOLEAN = 3, K_WHERE = 4 };
enum { D_BOOL = 0, D_INT64 = 1, D_FLOAT32 = 2, D_FLOAT64 = 3 };

#define CTERM_API_VERSION 3
#define CTERM_CAPSULE "exprgraph.core._cterm._C_API"

typedef struct {
    int version;                 /* CTERM_API_VERSION */
    size_t term_size;            /* sizeof(TermObject) */
    /* facts set by configure(); read through the pointers (they change when configured again) */
    int *configured;
    PyTypeObject **term_class;    /* exprgraph.core.term.Term */
    PyObject **dtype_names;          /* [4]: bool, int64, float32, float64 */
    int (*promote)[4];               /* [4][4]: index of promote(a, b) */
    int *numeric;                    /* [4]: arithmetic counts bools as int64 */
    PyObject **infer_fns;            /* [5]: arith, real, same, boolean, where_rule */
    Py_ssize_t *off_infer, *off_grad, *off_name, *off_reads_consts; /* slot offsets of Op */
    /* entry points */
    int (*dtype_index)(PyObject *dtype);
    Py_uhash_t (*mix)(Py_uhash_t h, Py_uhash_t v);
    /* the interned Term(op, args, attr) for an args tuple the caller gives up (NULL: error set) */
    PyObject *(*intern_taking)(PyTypeObject *cls, PyObject *op, PyObject *args, PyObject *attr);
    /* the interned Term(op, the n operands at items, attr): a new reference (NULL: error set); no tuple */
    PyObject *(*intern_items)(PyTypeObject *cls, PyObject *op, PyObject *const *items, Py_ssize_t n, PyObject *attr);
} CTermAPI;

#endif
