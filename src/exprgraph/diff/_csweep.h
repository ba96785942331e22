/* _csweep.h: what the files of exprgraph.diff._csweep share (see _csweep.c for the whole picture).

   _csweep.c          the module: the API of exprgraph.core._cterm, configuration, the functions Python calls
   _csweep_folds.c    the folds of core.grad_tools.product / negate and reverse._fan_in
   _csweep_rules.c    gradient rules recorded as templates (core.grad_template) and replayed
   _csweep_reverse.c  marked walks: the live order and the reverse sweep (diff/reverse.py)
   _csweep_groups.c   the reverse sweeps of several groups of outputs over one walk (diff/reverse.py)
   _csweep_forward.c  the forward sweep, a marked walk (diff/forward.py)
   _csweep_pattern.c  dependency sets of Jacobian rows, a marked walk (diff/pattern.py)
   _csweep_assemble.c the scatter-add of a block Hessian's numbers (diff/blocks.py)

   The term struct and the term base's facts come from ../core/_cterm_api.h and the capsule of
   exprgraph.core._cterm; this extension calls into core, never the other way round.
   Built with -fvisibility=hidden: only PyInit__csweep leaves the library. */

#ifndef EXPRGRAPH_CSWEEP_H
#define EXPRGRAPH_CSWEEP_H

#include "../core/_cterm_api.h"
#include <string.h>

/* ---- the term base's API (taken from its capsule at import, _csweep.c) ---- */
extern CTermAPI *CT;
#define Configured (*CT->configured)
#define TermClass (*CT->term_class)
#define DtypeNames (CT->dtype_names)
#define Promote (CT->promote)
#define Numeric (CT->numeric)
#define InferFns (CT->infer_fns)
#define OffInfer (*CT->off_infer)
#define OffGrad (*CT->off_grad)
#define OffName (*CT->off_name)
#define OffReadsConsts (*CT->off_reads_consts)
#define mix(h, v) (CT->mix((h), (v)))
#define intern_taking(cls, op, args, attr) (CT->intern_taking((cls), (op), (args), (attr)))
#define intern_items(cls, op, items, n, attr) (CT->intern_items((cls), (op), (items), (n), (attr)))

/* an op's name for messages: any object (printed with %R or %S), never NULL */
#define OP_NAME(op) (OP_SLOT(op, OffName) != NULL ? OP_SLOT(op, OffName) : Py_None)

/* ---- configuration of the sweeps, set by configure() (_csweep.c) ---- */
extern PyObject *OpConst, *OpAdd, *OpMul, *OpNeg, *OpTruediv;
extern PyObject *One, *OneInt, *One32;     /* the constants 1.0, 1 and float32 1 */
extern PyObject *ConstMarker[4];           /* ("const", dtype): a constant operand whose value a rule does not read */
extern PyObject *Recorder, *SumTo, *ConstFn, *DiffError, *Float32Type;
extern int GradConfigured;

/* ---- _csweep_folds.c ---- */
int is_float_index(int d);
PyObject *make_head(PyObject *op, PyObject *head, PyObject *const *items, Py_ssize_t n);
PyObject *make_n(PyObject *op, PyObject *const *items, Py_ssize_t n);
PyObject *make2(PyObject *op, PyObject *a, PyObject *b);
PyObject *make_const(PyObject *value);
PyObject *c_product(PyObject *g, PyObject *const *factors, Py_ssize_t n);
PyObject *c_negate(PyObject *g);
PyObject *c_fan_in(PyObject *parts);

/* ---- _csweep_rules.c ---- */
/* nodes with more operands are never recorded (their rule is called); core.grad_template records
   at most its MAX_OPERANDS, which must not exceed this */
#define MAX_RECORDED 16
/* the contributions of node's rule for adjoint g, where only those to operands i < 64 whose bit is
   set in want (and to any operand from 64 on) are asked for: a recorded rule builds no term that
   only the others need, and gives None for them (a called rule gives them all). Their number, and
   the contributions at out (new references; room for MAX_RECORDED) or, when *holder is set, at its
   items (a tuple: release it); -1 on error */
Py_ssize_t contributions_into(PyObject *node, PyObject *g, uint64_t want, PyObject **out, PyObject **holder);
/* the contributions of node's rule for adjoint g replayed from its template, as a tuple (every one
   asked for); NULL with no exception when there is none to replay */
PyObject *replayed(PyObject *node, PyObject *g, PyObject *rule);
int template_total(void);

/* ---- _csweep_reverse.c: marked walks ----
   A walk keeps its per-node state in the terms: mark bits stamped with the walk's epoch (seen,
   live, target) and one owned scratch value (a pending adjoint, a dependency set). One walk runs
   at a time: walk_begin answers 0 when one is running (a rule calling back into a sweep, another
   thread while a rule runs), and the caller answers NotImplemented so that Python's code runs.
   A mark is 32 bits: the epoch in bits 3-30, the bits below; bit 31 stays clear (the vm of
   exprgraph.compile stamps it, see compile/_cvm_terms.h). When the epoch counter reaches EPOCH_MAX the
   next walk clears every live term's mark (core's clear_marks, through the intern table: every live
   term is there) and numbering starts again at 1, so a mark of an old walk never reads as current. */
#define M_SEEN 1
#define M_LIVE 2
#define M_TARGET 4
#define EPOCH_MAX ((((uint32_t)1) << 28) - 1)

typedef struct {
    uint32_t epoch;
    TermObject **order; /* the live nodes, children first (borrowed: the outputs hold them) */
    Py_ssize_t n;
} Walk;

static inline int
marks(TermObject *t, uint32_t epoch)
{
    return (t->mark >> 3) == epoch ? (int)(t->mark & 7) : 0;
}

static inline void
stamp(TermObject *t, uint32_t epoch, int bits)
{
    t->mark = (epoch << 3) | (uint32_t)(marks(t, epoch) | bits);
}

/* The nodes a loop over a walk's order visits next (dir -1: backwards): the node PREFETCH_FAR ahead,
   the operands held in the one PREFETCH_MID ahead, and the operands of the one PREFETCH_NEAR ahead (a
   rule reads their op, dtype and shape), so that their cache misses overlap. */
#define PREFETCH_FAR 16
#define PREFETCH_MID 10
#define PREFETCH_NEAR 5

static inline void
prefetch_walk(TermObject **order, Py_ssize_t n, Py_ssize_t k, int dir)
{
    Py_ssize_t far = k + dir * PREFETCH_FAR, mid = k + dir * PREFETCH_MID, near = k + dir * PREFETCH_NEAR;
    if (far >= 0 && far < n) {
        PREFETCH(order[far]);
        PREFETCH((char *)order[far] + 64);
    }
    if (mid >= 0 && mid < n && TERM_NARGS(order[mid]) > 0)
        PREFETCH(&order[mid]->items[0]); /* (the operands are in the node: its line after the fixed part) */
    if (near >= 0 && near < n) {
        TermObject *t = order[near];
        for (Py_ssize_t i = 0; i < TERM_NARGS(t) && i < 8; i++) {
            PREFETCH(TERM_ARG(t, i));
            PREFETCH((char *)TERM_ARG(t, i) + 64);
        }
    }
}

/* Which operands of a node a sweep sends contributions to: the bits of mask when by_mask is set (a
   node of at most LIVE_BITS operands in a compact graph, _csweep_groups.c); else, in a compact graph,
   those whose index kid[i] (-1: not in it) has the stamp in live; else those marked live with the
   walk's epoch */
typedef struct {
    uint32_t epoch;
    const int32_t *kid;
    const uint32_t *live;
    uint32_t stamp;
    uint64_t mask;
    int by_mask;
} Liveness;

#define LIVE_BITS 63

static inline int
operand_live(const Liveness *L, TermObject *node, Py_ssize_t i)
{
    if (L->by_mask)
        return (int)((L->mask >> i) & 1);
    if (L->kid == NULL)
        return marks(TERM(TERM_ARG(node, i)), L->epoch) & M_LIVE;
    return L->kid[i] >= 0 && L->live[L->kid[i]] == L->stamp;
}

/* add c to the pending adjoint parts kept in a's scratch (steals c) */
int send_scratch(TermObject *a, PyObject *c);
/* one node of a reverse sweep: hand node's adjoint g to its live operands (0, or -1 on error) */
int sweep_step(TermObject *node, PyObject *g, const Liveness *L);
/* the seed of output o (seed_for(o, seed) unless seed is a term of o's shape) into its scratch (0, or -1) */
int seed_output(TermObject *o, PyObject *seed, PyObject *seed_for);
/* one node of a reverse sweep: its adjoint summed from the parts in its scratch (taken), put in result
   when it is a target, and handed to its live operands (0, or -1 on error) */
int sweep_node(TermObject *node, int target, const Liveness *L, PyObject *result);

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
/* _epoch(): the last walk's epoch; _epoch(n): set it (tests force the wrap of the counter; every mark is
   cleared when n is below it) */
PyObject *walk_epoch(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* ---- _csweep_groups.c: the sweeps of several groups of outputs over one walk ---- */
PyObject *grouped_backprop(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* ---- _csweep_forward.c ---- */
PyObject *marked_forward(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* ---- _csweep_pattern.c ---- */
PyObject *marked_dependency_sets(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* ---- _csweep_assemble.c ---- */
PyObject *py_assemble(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif
