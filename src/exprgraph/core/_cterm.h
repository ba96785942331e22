/* _cterm.h: what the files of exprgraph.core._cterm share (see _cterm.c for the whole picture).

   _cterm_api.h    the term struct and the API lent to other extensions through a capsule
   _cterm.c        the module: configuration from Python, the functions Python calls, the capsule
   _cterm_table.c  the intern table of live terms
   _cterm_hash.c   the intern hash of a term's key
   _cterm_term.c   TermBase: the dtype rules of scalar operands, construction
   _cterm_fields.c TermBase as a Python object: attributes, `args`, freeing, the type
   _cterm_ops.c    the Python operators of terms and the calls of ops, in C, and the ops' user bits
   _cterm_walk.c   the postorder walk of exprgraph.core.walk over C terms
   _cterm_alloc.c  the memory of terms: exact-size blocks in 2 MiB chunks, kept for the next build

   The sweeps of exprgraph.diff are another extension (exprgraph.diff._csweep) built on the API.
   Built with -fvisibility=hidden: only PyInit__cterm leaves the library. */

#ifndef EXPRGRAPH_CTERM_H
#define EXPRGRAPH_CTERM_H

#include "_cterm_api.h"
#include <structmember.h>
#include <string.h>

/* an op's name for messages: any object (printed with %R or %S), never NULL */
#define OP_NAME(op) (OP_SLOT(op, OffName) != NULL ? OP_SLOT(op, OffName) : Py_None)

/* TermObject.depth: the cached depth plus one in the low 24 bits; the top 8 bits say which ops the
   term's users in slots of the intern table have, one bit per op (given by op_user_bit): an op's
   bit is set once a term of that op with this operand takes its slot, and never cleared (see
   has_fresh_operand in _cterm_table.c) */
#define DEPTH_USERS ((uint32_t)0xFF << 24)
#define DEPTH_COUNT (((uint32_t)1 << 24) - 1)

/* TermObject.bits: the operand count in the low TERM_COUNT_BITS bits; above them the flags of the
   tail (see TermObject) and, in bits 28-30, the dtype's code (see TERM_DTYPE_CODE) */
#define BITS_COUNT (((uint32_t)1 << TERM_COUNT_BITS) - 1)

/* the intern key of term t (borrowed): NULL when its attr is None */
#define TERM_KEY(t) \
    (!(TERM(t)->bits & TERM_F_ATTR) ? NULL : TERM_TAIL(t)[(TERM(t)->bits & TERM_F_OWN_KEY) ? 1 : 0])

/* the dtype object of a term whose dtype code is TERM_DTYPE_OTHER (borrowed): the word after the
   attr and the own key */
#define TERM_OTHER_DTYPE(t) (TERM_TAIL(t)[((TERM(t)->bits >> 27) & 1) + (TERM(t)->bits >> 31)])

/* the words of a term's tail */
#define TERM_TAIL_WORDS(t) (TERM_TAIL_BEFORE_SHAPE(t) + TERM_HAS_SHAPE(t))

/* the dtype object of term t (borrowed) */
#define TERM_DTYPE(t) \
    (TERM_DTYPE_CODE(t) < TERM_DTYPE_OTHER ? DtypeNames[TERM_DTYPE_CODE(t)] : TERM_OTHER_DTYPE(t))

/* a term's stored hash while it is not in the intern table (no intern hash has these low 32 bits:
   see key_hash_items) */
#define HASH_UNLINKED ((uint32_t)0xFFFFFFFFu)
/* the part of an intern hash that a term stores (see TermObject.hash) */
#define STORED_HASH(h) ((uint32_t)(Py_uhash_t)(h))

/* the operands of an args tuple as an array */
#define ITEMS(tup) ((PyObject *const *)((PyTupleObject *)(tup))->ob_item)

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

/* ---- _cterm_table.c: the intern table ---- */
extern uint64_t TableVersion; /* changes whenever the table does */
Py_uhash_t mix(Py_uhash_t h, Py_uhash_t v);
Py_hash_t key_hash_items(PyObject *op, PyObject *const *items, Py_ssize_t n, PyObject *key);
Py_hash_t key_hash(PyObject *op, PyObject *args, PyObject *key);
void table_prefetch(Py_hash_t hash);
/* recent_only: only among the terms waiting for their slots (an operand has no user of op in a slot) */
TermObject *table_find(PyObject *op, PyObject *const *items, Py_ssize_t n, PyObject *key, Py_hash_t hash,
                       int recent_only);
/* term t (its stored hash set) into the table under its full intern hash (whose top bits tag its slot) */
int table_insert(TermObject *t, Py_hash_t hash);
int table_insert_later(TermObject *t, Py_hash_t hash); /* a term with an operand with no user of its op in a slot */
/* an operand has no user of op's bit in a slot (see DEPTH_USERS): no term (op, items) is in a slot */
int has_fresh_operand(PyObject *op, PyObject *const *items, Py_ssize_t n);
void table_unlink(TermObject *t);
size_t table_count(void);
size_t table_capacity(void);
void table_clear_marks(void); /* every live term's mark set to 0 (see CTermAPI.clear_marks) */
PyObject *project_error(const char *name); /* exprgraph.errors.<name>, a new reference (NULL: error set) */

/* ---- _cterm_term.c (construction) and _cterm_fields.c (TermBaseType, freeing, attributes) ---- */
extern PyTypeObject TermBaseType;
int dtype_index(PyObject *dtype);
PyObject *intern_term(PyTypeObject *cls, PyObject *op, PyObject *args, PyObject *attr);
/* intern_term for the n operands at items; `args` is their tuple, or NULL (made only for a new term) */
PyObject *intern_items(PyTypeObject *cls, PyObject *op, PyObject *const *items, Py_ssize_t n, PyObject *args,
                       PyObject *attr);
PyObject *term_vectorcall(PyObject *cls, PyObject *const *args, size_t nargsf, PyObject *kwnames);
PyObject *intern_taking(PyTypeObject *cls, PyObject *op, PyObject *args, PyObject *attr);
PyObject *intern_items_api(PyTypeObject *cls, PyObject *op, PyObject *const *items, Py_ssize_t n, PyObject *attr);
PyObject *term_new(PyTypeObject *cls, PyObject *args, PyObject *kwds);
/* untrack a tuple of objects that the collector does not follow (terms, numbers) */
void untrack_leaf_tuple(PyObject *tup);
PyObject *resolve_op(PyObject *op);

/* ---- _cterm_alloc.c: the blocks of terms ---- */
void *term_mem_alloc(size_t bytes); /* contents undefined; NULL with MemoryError set */
void term_mem_free(void *p);        /* the configured term class's tp_free */
void term_mem_stats(size_t *carved, size_t *empty);

/* ---- _cterm_walk.c ---- */
PyObject *term_postorder(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* ---- _cterm_ops.c ---- */
extern PyNumberMethods TermNumberMethods;
extern PyObject *OpConst; /* the registered const op, once is_const_op has found it */
int is_const_op(PyObject *op);
uint32_t op_user_bit(PyObject *op); /* the bit of DEPTH_USERS that stands for op */
PyObject *plain_const_key(PyObject *attr);
PyObject *set_operators(PyObject *module, PyObject *args);
void install_op_call(PyTypeObject *op_class);
PyObject *set_leaf_rules(PyObject *module, PyObject *args);
PyObject *plain_symbol(PyObject *module, PyObject *name);
int leaf_infer(PyObject *infer, PyObject *attr, PyObject **dtype, PyObject **shape);

#endif
