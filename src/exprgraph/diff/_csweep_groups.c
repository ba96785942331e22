/* _csweep_groups.c: the reverse sweeps of several groups of outputs over one walk
   (diff.reverse.backprop_groups: a sparse Hessian sweeps once per colour group).

   One marked walk finds the nodes live for the union of the groups' targets (children first); they
   are copied into a compact graph: per node the indices of its operands (-1: an operand no target
   is under). Each group's live nodes are then found on that graph by the same depth-first walk as
   live_nodes (_csweep_reverse.c) takes over the terms, so each group's order, and hence every term
   its sweep builds and the order of every sum, is the order of its own backprop; but the walk reads
   small arrays instead of every node and operand of the terms. A node outside the union's live
   set is live for no group and holds none below it, so leaving it out changes no group's order.

   While the compact graph is built, each walked node's scratch holds its index (tagged: bit 0 set,
   never an object); no Python code runs and no object is made or freed until every scratch is
   NULL again. */

#include "_csweep.h"

#define TAG(k) ((PyObject *)(((uintptr_t)(k) << 1) | 1))
#define UNTAG(p) ((int32_t)((uintptr_t)(p) >> 1))
#define IS_TARGET ((uint64_t)1 << LIVE_BITS)

typedef struct {
    Py_ssize_t n;              /* the live nodes of the union, children first (the walk's order) */
    TermObject **node;         /* borrowed: the walk's order */
    Py_ssize_t *start;         /* node k's operands are kid[start[k]] .. kid[start[k + 1] - 1], in order */
    int32_t *kid;              /* an operand's index, or -1 */
    uint32_t *seen, *live, *target; /* a group's stamps (its number + 1), per node */
    /* a group's live nodes, children first: their terms, their indices, and per node the bits of its
       live operands when it has at most LIVE_BITS operands, with bit IS_TARGET set for a target (the
       sweep reads these in order, not the per-node arrays at scattered indices) */
    TermObject **gnode;
    int32_t *gidx;
    uint64_t *gmask;
    struct Frame { const int32_t *items; Py_ssize_t count, next; int32_t node; } *stack;
    Py_ssize_t cap;
} Compact;

static void
compact_free(Compact *c)
{
    PyMem_Free(c->start);
    PyMem_Free(c->kid);
    PyMem_Free(c->seen);
    PyMem_Free(c->live);
    PyMem_Free(c->target);
    PyMem_Free(c->gnode);
    PyMem_Free(c->gidx);
    PyMem_Free(c->gmask);
    PyMem_Free(c->stack);
}

/* the index of term t in the compact graph while the scratch words hold them, else -1 */
static inline int32_t
index_of(PyObject *t, uint32_t epoch)
{
    if (Py_TYPE(t) != TermClass || !(marks(TERM(t), epoch) & M_LIVE))
        return -1;
    return UNTAG(TERM(t)->scratch);
}

/* The compact graph of the walk w, and the index of every item of the tuples in terms (flat, in
   order: -1 for one outside it) into at. 0, or -1 with MemoryError. */
static int
compact_build(Compact *c, Walk *w, PyObject *const *terms, Py_ssize_t nterms, int32_t *at)
{
    Py_ssize_t n = w->n, edges = 0;
    for (Py_ssize_t k = 0; k < n; k++)
        edges += TERM_NARGS(w->order[k]);
    c->n = n;
    c->node = w->order;
    c->start = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    c->kid = PyMem_Malloc((size_t)(edges ? edges : 1) * sizeof(int32_t));
    c->seen = PyMem_Calloc((size_t)(n ? n : 1), sizeof(uint32_t));
    c->live = PyMem_Calloc((size_t)(n ? n : 1), sizeof(uint32_t));
    c->target = PyMem_Calloc((size_t)(n ? n : 1), sizeof(uint32_t));
    c->gnode = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(TermObject *));
    c->gidx = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    c->gmask = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(uint64_t));
    c->cap = 256;
    c->stack = PyMem_Malloc((size_t)c->cap * sizeof(*c->stack));
    if (!c->start || !c->kid || !c->seen || !c->live || !c->target || !c->gnode || !c->gidx || !c->gmask || !c->stack) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) /* (the walk's nodes have no scratch now) */
        w->order[k]->scratch = TAG(k);
    Py_ssize_t e = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        TermObject *t = w->order[k];
        if (k + 8 < n)
            PREFETCH(&w->order[k + 8]->items[0]);
        c->start[k] = e;
        for (Py_ssize_t i = 0; i < TERM_NARGS(t); i++)
            c->kid[e++] = index_of(TERM_ARG(t, i), w->epoch);
    }
    c->start[n] = e;
    for (Py_ssize_t j = 0; j < nterms; j++)
        at[j] = index_of(terms[j], w->epoch);
    for (Py_ssize_t k = 0; k < n; k++)
        w->order[k]->scratch = NULL;
    return 0;
}

/* append node a of the group to its order (its operands are all visited: their stamps are final) */
static inline void
group_append(Compact *c, Py_ssize_t m, int32_t a, uint32_t stamp)
{
    Py_ssize_t lo = c->start[a], hi = c->start[a + 1];
    uint64_t mask = c->target[a] == stamp ? IS_TARGET : 0;
    if (hi - lo <= LIVE_BITS)
        for (Py_ssize_t e = lo; e < hi; e++)
            if (c->kid[e] >= 0 && c->live[c->kid[e]] == stamp)
                mask |= (uint64_t)1 << (e - lo);
    c->live[a] = stamp;
    c->gnode[m] = c->node[a];
    c->gidx[m] = a;
    c->gmask[m] = mask;
}

/* the live nodes of a group (outputs outs, targets stamped), children first, into c->gnode, gidx and
   gmask: the walk of live_nodes over the compact graph. The count, or -1 with MemoryError. */
static Py_ssize_t
group_order(Compact *c, const int32_t *outs, Py_ssize_t nouts, uint32_t stamp)
{
    Py_ssize_t depth = 1, m = 0;
    c->stack[0] = (struct Frame){outs, nouts, 0, -1};
    while (depth > 0) {
        struct Frame *fr = &c->stack[depth - 1];
        int32_t push = -1;
        while (fr->next < fr->count) {
            int32_t a = fr->items[fr->next++];
            if (a < 0 || c->seen[a] == stamp)
                continue;
            c->seen[a] = stamp;
            if (c->start[a + 1] > c->start[a]) { /* (a node with operands: a leaf has none) */
                push = a;
                break;
            }
            if (c->target[a] == stamp)
                group_append(c, m++, a, stamp);
        }
        if (push >= 0) {
            if (depth == c->cap) {
                void *grown = PyMem_Realloc(c->stack, (size_t)(c->cap * 2) * sizeof(*c->stack));
                if (grown == NULL) {
                    PyErr_NoMemory();
                    return -1;
                }
                c->stack = grown;
                c->cap *= 2;
            }
            c->stack[depth++] = (struct Frame){c->kid + c->start[push], c->start[push + 1] - c->start[push], 0, push};
            continue;
        }
        depth--;
        int32_t node = fr->node;
        if (node < 0)
            continue;
        int keep = c->target[node] == stamp;
        for (Py_ssize_t e = c->start[node]; !keep && e < c->start[node + 1]; e++)
            keep = c->kid[e] >= 0 && c->live[c->kid[e]] == stamp;
        if (keep)
            group_append(c, m++, node, stamp);
    }
    return m;
}

/* one group's sweep, as marked_backprop's loop: its adjoints by target (a new dict), or NULL */
static PyObject *
group_sweep(Compact *c, PyObject *outs, const int32_t *at, PyObject *seeds, PyObject *seed_for, uint32_t stamp,
            Py_ssize_t m)
{
    PyObject *result = PyDict_New();
    if (result == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(outs); i++)
        if (at[i] >= 0 && c->live[at[i]] == stamp
            && seed_output(TERM(PyTuple_GET_ITEM(outs, i)), PyTuple_GET_ITEM(seeds, i), seed_for) < 0)
            goto fail;
    for (Py_ssize_t k = m - 1; k >= 0; k--) {
        TermObject *node = c->gnode[k];
        prefetch_walk(c->gnode, m, k, -1);
        if (node->scratch == NULL)
            continue;
        uint64_t bits = c->gmask[k];
        Liveness live = {0, NULL, c->live, stamp, bits & ~IS_TARGET, TERM_NARGS(node) <= LIVE_BITS};
        if (!live.by_mask)
            live.kid = c->kid + c->start[c->gidx[k]];
        if (sweep_node(node, (bits & IS_TARGET) != 0, &live, result) < 0)
            goto fail;
    }
    return result; /* (every scratch of the group was taken on the way, as in marked_backprop) */
fail:
    for (Py_ssize_t k = 0; k < m; k++)
        Py_CLEAR(c->gnode[k]->scratch);
    Py_DECREF(result);
    return NULL;
}

/* the groups' outputs, seeds and targets as tuples of tuples (checked), their outputs and targets flat in all */
static int
group_tuples(PyObject **tuples, PyObject **all)
{
    Py_ssize_t groups = PyTuple_GET_SIZE(tuples[0]), total = 0;
    for (int a = 0; a < 3; a++)
        if (PyTuple_GET_SIZE(tuples[a]) != groups) {
            PyErr_SetString(PyExc_ValueError, "backprop_groups needs as many seeds and target sets as output lists");
            return -1;
        }
    for (Py_ssize_t g = 0; g < groups; g++) {
        for (int a = 0; a < 3; a++) {
            PyObject *t = PySequence_Tuple(PyTuple_GET_ITEM(tuples[a], g));
            if (t == NULL)
                return -1;
            Py_DECREF(PyTuple_GET_ITEM(tuples[a], g));
            PyTuple_SET_ITEM(tuples[a], g, t);
        }
        if (PyTuple_GET_SIZE(PyTuple_GET_ITEM(tuples[0], g)) != PyTuple_GET_SIZE(PyTuple_GET_ITEM(tuples[1], g))) {
            PyErr_SetString(PyExc_ValueError, "backprop needs one seed per output");
            return -1;
        }
        total += PyTuple_GET_SIZE(PyTuple_GET_ITEM(tuples[0], g));
        total += PyTuple_GET_SIZE(PyTuple_GET_ITEM(tuples[2], g));
    }
    *all = PyTuple_New(total);
    if (*all == NULL)
        return -1;
    Py_ssize_t j = 0;
    for (int a = 0; a < 3; a += 2)
        for (Py_ssize_t g = 0; g < groups; g++) {
            PyObject *t = PyTuple_GET_ITEM(tuples[a], g);
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++)
                PyTuple_SET_ITEM(*all, j++, Py_NewRef(PyTuple_GET_ITEM(t, i)));
        }
    return 0;
}

/* backprop_groups(outputs, seeds, targets, union, seed_for): per group g, what
   backprop(outputs[g], seeds[g], targets[g], seed_for) answers, as a list; union holds every target.
   NotImplemented while another walk runs. */
PyObject *
grouped_backprop(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!GradConfigured || nargs != 5 || !PyAnySet_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError,
                        "backprop_groups(outputs, seeds, targets, union: set, seed_for), once configured");
        return NULL;
    }
    PyObject *tuples[3] = {NULL, NULL, NULL}, *all = NULL, *outs = NULL, *result = NULL;
    int32_t *at = NULL;
    Compact c = {0};
    Walk w = {0, NULL, 0};
    int began = 0;
    for (int a = 0; a < 3; a++) { /* new tuples (group_tuples replaces their items; the caller's stay) */
        PyObject *list = PySequence_List(args[a]);
        if (list == NULL)
            goto out;
        tuples[a] = PyList_AsTuple(list);
        Py_DECREF(list);
        if (tuples[a] == NULL)
            goto out;
    }
    if (group_tuples(tuples, &all) < 0)
        goto out;
    Py_ssize_t groups = PyTuple_GET_SIZE(tuples[0]), nouts = 0;
    for (Py_ssize_t g = 0; g < groups; g++)
        nouts += PyTuple_GET_SIZE(PyTuple_GET_ITEM(tuples[0], g));
    if ((outs = PyTuple_GetSlice(all, 0, nouts)) == NULL)
        goto out;
    began = walk_begin(&w, outs, args[3]);
    if (began <= 0) {
        if (began == 0)
            result = Py_NewRef(Py_NotImplemented);
        goto out;
    }
    if (w.n >= INT32_MAX) {
        PyErr_SetString(PyExc_MemoryError, "backprop_groups: more than 2**31 live nodes");
        goto out;
    }
    at = PyMem_Malloc((size_t)(PyTuple_GET_SIZE(all) ? PyTuple_GET_SIZE(all) : 1) * sizeof(int32_t));
    if (at == NULL) {
        PyErr_NoMemory();
        goto out;
    }
    if (compact_build(&c, &w, ((PyTupleObject *)all)->ob_item, PyTuple_GET_SIZE(all), at) < 0
        || (result = PyList_New(groups)) == NULL)
        goto out;
    const int32_t *out_at = at, *target_at = at + nouts;
    for (Py_ssize_t g = 0; g < groups; g++) {
        PyObject *go = PyTuple_GET_ITEM(tuples[0], g), *gt = PyTuple_GET_ITEM(tuples[2], g);
        uint32_t stamp = (uint32_t)g + 1;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(gt); i++)
            if (target_at[i] >= 0)
                c.target[target_at[i]] = stamp;
        Py_ssize_t m = group_order(&c, out_at, PyTuple_GET_SIZE(go), stamp);
        PyObject *seeds = PyTuple_GET_ITEM(tuples[1], g);
        PyObject *found = m < 0 ? NULL : group_sweep(&c, go, out_at, seeds, args[4], stamp, m);
        if (found == NULL) {
            Py_CLEAR(result);
            goto out;
        }
        PyList_SET_ITEM(result, g, found);
        out_at += PyTuple_GET_SIZE(go);
        target_at += PyTuple_GET_SIZE(gt);
    }
    w.n = 0; /* every scratch was taken by the groups' sweeps (walk_end need not read each node again) */
out:
    if (began > 0)
        walk_end(&w);
    compact_free(&c);
    PyMem_Free(at);
    Py_XDECREF(outs); /* after the walk: it may hold the only references to the outputs */
    Py_XDECREF(all);
    for (int a = 0; a < 3; a++)
        Py_XDECREF(tuples[a]);
    return result;
}
