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
   need it): the operands' tuple (`args`) and the free symbols (`_free`); NULL until made. The DAG size
   (`_size`: read by a few cost functions and messages, cached on the term asked only) takes a third
   word, in a block grown for it: TermObject.extras has bit 0 set when its block is a TermExtrasSized
   (read the block through TERM_EXTRAS) */
typedef struct TermExtras {
    PyObject *args;
    PyObject *free;
} TermExtras;

typedef struct TermExtrasSized {
    TermExtras caches;
    Py_ssize_t size; /* the cached size plus one: 0 until computed */
} TermExtrasSized;

#define TERM_EXTRAS_SIZED ((uintptr_t)1)
/* the block of lazy caches of term t, or NULL */
#define TERM_EXTRAS(t) ((TermExtras *)((uintptr_t)TERM(t)->extras & ~TERM_EXTRAS_SIZED))
/* whether term t's block of lazy caches has the size's word (a TermExtrasSized) */
#define TERM_EXTRAS_HAS_SIZE(t) (((uintptr_t)TERM(t)->extras & TERM_EXTRAS_SIZED) != 0)

typedef struct TermObject {
    /* what a lookup and a sweep read of every node come first, next to each other; the operands
       come last, in the struct itself (their number: the low TERM_COUNT_BITS of `bits`) */
    PyObject_HEAD
    PyObject *op;
    uint32_t hash; /* the low 32 bits of the intern hash of (op, operands, key) (the table's index and
                      first compare); HASH_UNLINKED while not in the table */
    /* scratch space of the traversals of other extensions (core only frees it, and clears the marks
       when a sweep's epoch counter wraps: see clear_marks): marks stamped with the traversal's
       epoch, and one owned value (a pending adjoint, a dependency set) */
    uint32_t mark;
    PyObject *scratch;
    TermExtras *extras; /* the lazy caches (args tuple, free symbols, size): NULL until one is made;
                           bit 0 tags a block with the size (see TERM_EXTRAS) */
    PyObject *weakreflist;
    uint32_t depth; /* the cached depth plus one: 0 until computed; the top 8 bits are flags of core's
                       intern table: read depth & 0xffffff */
    uint32_t bits;  /* the operand count in the low TERM_COUNT_BITS (at most TERM_MAX_ARGS), above it
                       what the tail holds and the dtype (see below) */
    /* the operands, then the tail: the words that most terms do not need, each there only when its
       flag in `bits` is set, in this order: the attr (TERM_F_ATTR: not None), the attr's intern key
       when it is another object than attr (TERM_F_OWN_KEY, core's), the dtype when it is none of the
       four names (TERM_DTYPE_OTHER, core's), the shape (TERM_F_SHAPE: not the empty tuple) */
    PyObject *items[];
} TermObject;

/* The fixed part is 64 bytes (16 of object header, five pointers, four 32-bit words) and the
   configured term class carries no collector header (see configure in _cterm.c): a scalar node of one
   or two operands without an attr, and a leaf with an attr, cost 80 bytes (a size class of CPython's
   allocator) and their share of the intern table; no tuple, no second allocation. Before (80 bytes of
   fixed part: a var-size header, a 64-bit hash and mark, the size cache in the term) they cost 96. */

/* the flags of TermObject.bits (the operand count is the low TERM_COUNT_BITS) */
#define TERM_F_OWN_KEY ((uint32_t)1 << 31)
#define TERM_F_ATTR ((uint32_t)1 << 27)
#define TERM_F_SHAPE ((uint32_t)1 << 26)
#define TERM_COUNT_BITS 26
/* the most operands a term has: 67,108,863 (half a gigabyte of operand words in one block; a larger
   sum is built as a sum of sums); construction past it raises exprgraph.errors.TooManyOperandsError */
#define TERM_MAX_ARGS (((Py_ssize_t)1 << TERM_COUNT_BITS) - 1)

/* the shared empty tuple (borrowed; taken once per file that reads shapes) */
static inline PyObject *
term_empty_tuple(void)
{
    static PyObject *empty = NULL;
    if (empty == NULL)
        empty = PyTuple_New(0); /* the interpreter's preallocated singleton: never NULL */
    return empty;
}

/* the dtype of a term: bits 28-30 of `bits` hold its index in dtype_names (D_BOOL ... D_FLOAT64), or
   TERM_DTYPE_OTHER for a dtype that is none of them (kept by core after the operands) */
#define TERM_DTYPE_SHIFT 28
#define TERM_DTYPE_OTHER 4
#define TERM_DTYPE_CODE(t) ((int)((TERM(t)->bits >> TERM_DTYPE_SHIFT) & 7))
/* the index of term t's dtype in dtype_names, -1 for another dtype */
#define TERM_DTYPE_INDEX(t) (TERM_DTYPE_CODE(t) < TERM_DTYPE_OTHER ? TERM_DTYPE_CODE(t) : -1)

/* the tail of term t (see TermObject), and how many of its words come before the shape */
#define TERM_TAIL(t) (TERM(t)->items + TERM_NARGS(t))
#define TERM_TAIL_BEFORE_SHAPE(t)                                                                              \
    (((TERM(t)->bits >> 27) & 1) + (TERM(t)->bits >> 31) + (TERM_DTYPE_CODE(t) == TERM_DTYPE_OTHER))
/* the attr of term t (borrowed): None or its payload */
#define TERM_ATTR(t) ((TERM(t)->bits & TERM_F_ATTR) ? TERM_TAIL(t)[0] : Py_None)
/* whether term t has a shape of its own (not a scalar: its shape is not the empty tuple) */
#define TERM_HAS_SHAPE(t) ((TERM(t)->bits & TERM_F_SHAPE) != 0)
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
#define TERM_NARGS(t) ((Py_ssize_t)(TERM(t)->bits & (((uint32_t)1 << TERM_COUNT_BITS) - 1)))
#define TERM_ARG(t, i) (TERM(t)->items[(i)])
#define TERM_ITEMS(t) ((PyObject *const *)TERM(t)->items)
#define ARG(t, i) TERM_ARG(t, i)
#define OP_SLOT(op, off) (*(PyObject **)((char *)(op) + (off)))

enum { K_ARITH = 0, K_REAL = 1, K_SAME = 2, K_BOOLEAN = 3, K_WHERE = 4 };
enum { D_BOOL = 0, D_INT64 = 1, D_FLOAT32 = 2, D_FLOAT64 = 3 };

#define CTERM_API_VERSION 4
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
    /* every live term's mark set to 0: a traversal whose epoch counter wraps calls it before it reuses
       an epoch (no traversal may be running: none of its stamps may be on) */
    void (*clear_marks)(void);
} CTermAPI;

#endif
