/* _cvm_terms.h: what the vm's walks over terms share (_cvm_walk.c, _cvm_encode.c): the term base's API,
 * growable arrays, and marks.
 *
 * Terms come from exprgraph.core._cterm (the struct of ../core/_cterm_api.h, checked by version and size
 * through its capsule at the first call); with another term base the walks answer None and their Python
 * twins run.
 *
 * Marks. A walk keeps each node's number in the node itself (TermObject.mark, the scratch word core
 * lends to the traversals of other extensions), so finding a node again costs no table: a table keyed
 * by address missed the cache at every lookup (70% of the walk's time on AC-OPF case1354pegase). The
 * word belongs to whoever walks: the sweeps of exprgraph.diff stamp it with their epoch (bit 31 clear:
 * see EPOCH_MAX in ../diff/_csweep.h). A vm walk saves the word of every node it stamps (its stamps have
 * bit 31 set, so a node is saved once), and puts every word back before it creates any Python object or
 * returns: no Python code runs while its stamps are on (no call into Python, no allocation that could
 * start the collector), so neither a sweep in progress nor any other code ever sees them.
 * The mark is 32 bits: a stamp is M_STAMPED and the node's index in the list of saved words, where the
 * stamp's 64-bit payload lives (a node number, a value number and an output position); a walk that
 * stamps each node once, with its index as payload, reads the number from the mark alone.
 */
#ifndef EXPRGRAPH_CVM_TERMS_H
#define EXPRGRAPH_CVM_TERMS_H

#include "../core/_cterm_api.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* the term base's API, or NULL (no exception) when terms are not the C base these files were built for */
CTermAPI *cvm_term_api(void);
extern CTermAPI *CvmTerms;

#define IS_TERM(o) (Py_TYPE(o) == *CvmTerms->term_class)
#define NARGS(t) TERM_NARGS(t)

/* the index of the dtype of term t (D_BOOL ... D_FLOAT64), -1 for another */
static inline int dtype_of(PyObject *t) { return TERM_DTYPE_INDEX(t); }

/* -- growable arrays (malloc'd; -1 with MemoryError set when they cannot grow) -- */
typedef struct {
    char *data;
    size_t n, cap, item;
} Vec;

#define VEC(type) {NULL, 0, 0, sizeof(type)}
#define AT(v, type, i) (((type *)(v).data)[i])

/* the slow road of vec_room: the array grown to hold `more` items more */
int vec_grow(Vec *v, size_t more);

/* room for `more` items more; inline, as it runs for nearly every node the walks meet */
static inline int vec_room(Vec *v, size_t more) {
    return v->n + more <= v->cap ? 0 : vec_grow(v, more);
}

static inline int vec_push32(Vec *v, int32_t x) {
    if (vec_room(v, 1) < 0) return -1;
    AT(*v, int32_t, v->n++) = x;
    return 0;
}

/* -- the walk's flags of a node (_cvm_walk.c; encode_walked reads them) -- */
enum { F_SYM = 1, F_CONST = 2, F_SYMBOL = 4, F_LEAF = 8 };

/* the walk kept as arrays (walk(..., arrays=True), in a capsule of this name): by node number, where its
   operands' numbers start in `edges`, its op and dtype index, its flags; the numbers in the walk's order
   (operands first); each output's number. Nodes and ops are borrowed: encode_walked checks that the program
   it is given holds them all (its steps, values and symbols are these nodes) before it reads one. */
#define WALKED_CAPSULE "exprgraph.compile._cvm.walked"
typedef struct {
    Vec start, edges, node, op, dt, flag, order, out_k;
} Walked;

/* -- marks -- */
#define M_STAMPED ((uint32_t)1 << 31) /* a term's mark while a vm walk's stamp is on */
#define M_MINE ((uint64_t)1 << 63)     /* set in what stamped() answers for a stamped term */

typedef struct {
    PyObject *term;
    uint64_t payload; /* the stamp's */
    uint32_t word;    /* the mark before the stamp */
} Saved;

/* give term t the stamp `payload` (bit 63 clear), saving its word the first time; -1 on an error */
static inline int stamp(Vec *saved, PyObject *t, uint64_t payload) {
    TermObject *o = TERM(t);
    if (o->mark & M_STAMPED) {
        AT(*saved, Saved, o->mark & ~M_STAMPED).payload = payload;
        return 0;
    }
    if (saved->n >= (size_t)M_STAMPED) { /* (2^31 terms: never on a machine of today) */
        PyErr_NoMemory();
        return -1;
    }
    if (vec_room(saved, 1) < 0) return -1;
    AT(*saved, Saved, saved->n) = (Saved){t, payload, o->mark};
    o->mark = M_STAMPED | (uint32_t)saved->n++;
    return 0;
}

/* the payload of term t's stamp with M_MINE set, or 0 when it has none */
static inline uint64_t stamped(const Vec *saved, PyObject *t) {
    const uint32_t m = TERM(t)->mark;
    return (m & M_STAMPED) ? AT(*saved, Saved, m & ~M_STAMPED).payload | M_MINE : 0;
}

/* every saved word back in its term (the stamps are gone; the saved list stays, naming the nodes) */
void unstamp(Vec *saved);

#endif
