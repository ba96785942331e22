/* _csweep_reverse.c: marked walks (see _csweep.h), the live order and the reverse sweep of
   exprgraph.diff.reverse, with the pending adjoints kept in the terms' scratch. */

#include "_csweep.h"


static uint32_t Epoch = 0; /* the last walk's (see EPOCH_MAX) */
static int Marking = 0;

/* make room for one more element in a PyMem array of *cap elements of size elem holding n */
static int
room(void **array, Py_ssize_t *cap, Py_ssize_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    void *grown = PyMem_Realloc(*array, (size_t)(*cap * 2) * elem);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *array = grown;
    *cap *= 2;
    return 0;
}

/* start reading a node's operands (their first line: op, hash, mark, scratch) */
static inline void
prefetch_items(TermObject *t)
{
    for (Py_ssize_t i = 0; i < TERM_NARGS(t); i++)
        PREFETCH(TERM_ARG(t, i));
}

/* the live nodes under outs, children first (as live_order), in a PyMem array of borrowed terms */
static TermObject **
live_nodes(PyObject *outs, uint32_t epoch, Py_ssize_t *count)
{
    Py_ssize_t cap = 256, depth = 0, n = 0, ocap = 1024;
    struct Frame { TermObject *node; PyObject *const *items; Py_ssize_t count, next; } *stack = PyMem_Malloc(cap * sizeof(*stack));
    TermObject **order = PyMem_Malloc(ocap * sizeof(TermObject *));
    if (stack == NULL || order == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    stack[0].node = NULL;
    stack[0].items = ((PyTupleObject *)outs)->ob_item;
    stack[0].count = PyTuple_GET_SIZE(outs);
    stack[0].next = 0;
    depth = 1;
    while (depth > 0) {
        struct Frame *fr = &stack[depth - 1];
        TermObject *push = NULL;
        while (fr->next < fr->count) {
            PyObject *item = fr->items[fr->next++];
            if (Py_TYPE(item) != TermClass) {
                PyErr_Format(PyExc_TypeError, "expected a term, got %s", Py_TYPE(item)->tp_name);
                goto fail;
            }
            TermObject *a = TERM(item);
            if (fr->next < fr->count) { /* the next sibling's operands, read after a's subtree */
                PyObject *sibling = fr->items[fr->next];
                if (Py_TYPE(sibling) == TermClass && TERM_NARGS(sibling) > 0)
                    PREFETCH(&TERM(sibling)->items[0]);
            }
            int m = marks(a, epoch);
            if (m & M_SEEN)
                continue;
            stamp(a, epoch, M_SEEN);
            if (TERM_NARGS(a) > 0) {
                push = a;
                break;
            }
            if (m & M_TARGET) {
                stamp(a, epoch, M_LIVE);
                if (room((void **)&order, &ocap, n, sizeof(TermObject *)) < 0)
                    goto fail;
                order[n++] = a;
            }
        }
        if (push != NULL) {
            if (room((void **)&stack, &cap, depth, sizeof(*stack)) < 0)
                goto fail;
            stack[depth].node = push;
            stack[depth].items = TERM_ITEMS(push);
            stack[depth].count = TERM_NARGS(push);
            stack[depth].next = 0;
            depth++;
            prefetch_items(push); /* their marks and operands are read next, one after another */
            continue;
        }
        depth--;
        TermObject *node = fr->node;
        if (node == NULL)
            continue;
        int keep = marks(node, epoch) & M_TARGET;
        for (Py_ssize_t i = 0; !keep && i < TERM_NARGS(node); i++)
            keep = marks(TERM(TERM_ARG(node, i)), epoch) & M_LIVE;
        if (keep) {
            stamp(node, epoch, M_LIVE);
            if (room((void **)&order, &ocap, n, sizeof(TermObject *)) < 0)
                goto fail;
            order[n++] = node;
        }
    }
    PyMem_Free(stack);
    *count = n;
    return order;
fail:
    PyMem_Free(stack);
    PyMem_Free(order);
    return NULL;
}

/* stamp the members of a set of terms as targets of this traversal */
static int
stamp_targets(PyObject *targets, uint32_t epoch)
{
    PyObject *it = PyObject_GetIter(targets), *item;
    if (it == NULL)
        return -1;
    while ((item = PyIter_Next(it)) != NULL) {
        if (Py_TYPE(item) == TermClass)
            stamp(TERM(item), epoch, M_TARGET);
        Py_DECREF(item);
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

int
walk_begin(Walk *w, PyObject *outs, PyObject *targets)
{
    w->order = NULL;
    w->n = 0;
    if (Marking)
        return 0;
    Marking = 1;
    if (Epoch >= EPOCH_MAX) { /* the counter wraps: no mark of an earlier walk may read as a later one's */
        CT->clear_marks();
        Epoch = 0;
    }
    w->epoch = ++Epoch;
    if (stamp_targets(targets, w->epoch) < 0 || (w->order = live_nodes(outs, w->epoch, &w->n)) == NULL) {
        Marking = 0;
        return -1;
    }
    return 1;
}

PyObject *
walk_outputs(Walk *w, PyObject *outputs, PyObject *targets, int *busy)
{
    *busy = 0;
    PyObject *outs = PySequence_Tuple(outputs);
    if (outs == NULL)
        return NULL;
    int began = walk_begin(w, outs, targets);
    if (began <= 0) {
        *busy = began == 0;
        Py_DECREF(outs);
        return NULL;
    }
    return outs;
}

void
walk_end(Walk *w)
{
    for (Py_ssize_t k = 0; k < w->n; k++)
        Py_CLEAR(w->order[k]->scratch);
    PyMem_Free(w->order);
    w->order = NULL;
    w->n = 0;
    Marking = 0;
}

int
send_scratch(TermObject *a, PyObject *c)
{
    PyObject *prev = a->scratch;
    if (prev == NULL) {
        a->scratch = c;
        return 0;
    }
    if (PyList_CheckExact(prev)) {
        int r = PyList_Append(prev, c);
        Py_DECREF(c);
        return r;
    }
    PyObject *parts = PyList_New(2);
    if (parts == NULL) {
        Py_DECREF(c);
        return -1;
    }
    PyList_SET_ITEM(parts, 0, prev); /* takes over a's reference */
    PyList_SET_ITEM(parts, 1, c);
    a->scratch = parts;
    return 0;
}

int
sweep_step(TermObject *node, PyObject *g, const Liveness *L)
{
    Py_ssize_t n = TERM_NARGS(node);
    uint64_t want = n > 64 ? ~(uint64_t)0 : 0;
    for (Py_ssize_t i = 0; i < n && i < 64; i++)
        if (operand_live(L, node, i))
            want |= (uint64_t)1 << i;
    PyObject *owned[MAX_RECORDED], *holder;
    Py_ssize_t got = contributions_into((PyObject *)node, g, want, owned, &holder);
    if (got < 0)
        return -1;
    PyObject **cs = holder != NULL ? ((PyTupleObject *)holder)->ob_item : owned;
    int done = -1;
    if (got != n) {
        PyErr_Format(PyExc_ValueError, "the gradient rule of %R gave %zd contributions for %zd operands",
                     OP_NAME(node->op), got, n);
        goto out;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *c = cs[i];
        TermObject *a = TERM(TERM_ARG(node, i));
        if (c == Py_None || !operand_live(L, node, i))
            continue;
        if (Py_TYPE(c) != TermClass) {
            PyErr_Format(PyExc_TypeError, "the gradient rule of %R gave a %s, not a term", OP_NAME(node->op),
                         Py_TYPE(c)->tp_name);
            goto out;
        }
        Py_INCREF(c);
        if (TERM_SHAPE(c) != TERM_SHAPE(a)) {
            int eq = PyObject_RichCompareBool(TERM_SHAPE(c), TERM_SHAPE(a), Py_EQ);
            if (eq <= 0) { /* undo the broadcast of a in node */
                if (eq == 0)
                    Py_SETREF(c, PyObject_CallFunctionObjArgs(SumTo, c, (PyObject *)a, NULL));
                else
                    Py_CLEAR(c);
                if (c == NULL)
                    goto out;
            }
        }
        if (send_scratch(a, c) < 0)
            goto out;
    }
    done = 0;
out:
    if (holder != NULL)
        Py_DECREF(holder);
    else
        for (Py_ssize_t i = 0; i < got; i++)
            Py_DECREF(owned[i]);
    return done;
}

int
seed_output(TermObject *o, PyObject *seed, PyObject *seed_for)
{
    /* a term of the output's shape is its own seed (what seed_for answers for it); else seed_for */
    if (Py_TYPE(seed) == TermClass
        && (TERM_SHAPE(seed) == TERM_SHAPE(o) || (!TERM_HAS_SHAPE(seed) && !TERM_HAS_SHAPE(o))))
        Py_INCREF(seed);
    else
        seed = PyObject_CallFunctionObjArgs(seed_for, (PyObject *)o, seed, NULL);
    return seed == NULL ? -1 : send_scratch(o, seed);
}

int
sweep_node(TermObject *node, int target, const Liveness *L, PyObject *result)
{
    PyObject *g = node->scratch;
    if (g == NULL)
        return 0;
    node->scratch = NULL;
    if (PyList_CheckExact(g)) {
        Py_SETREF(g, c_fan_in(g));
        if (g == NULL)
            return -1;
    }
    Py_ssize_t na = TERM_NARGS(node);
    int any = na > 0;
    if (target) {
        if (PyDict_SetItem(result, (PyObject *)node, g) < 0) {
            Py_DECREF(g);
            return -1;
        }
        any = 0; /* (a target with nothing live below it, a leaf say, hands nothing down) */
        for (Py_ssize_t i = 0; i < na && !any; i++)
            any = operand_live(L, node, i);
    }
    int done = any ? sweep_step(node, g, L) : 0;
    Py_DECREF(g);
    return done;
}

/* live_order(outputs, targets): diff.reverse.live_order in C (NotImplemented while another runs) */
PyObject *
marked_live_order(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!Configured || nargs != 2 || !PyAnySet_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "live_order(outputs, targets: set)");
        return NULL;
    }
    Walk w;
    int busy;
    PyObject *outs = walk_outputs(&w, args[0], args[1], &busy);
    if (outs == NULL)
        return busy ? Py_NewRef(Py_NotImplemented) : NULL;
    PyObject *order = PyList_New(w.n), *live = PySet_New(NULL), *result = NULL;
    if (order == NULL || live == NULL)
        goto out;
    for (Py_ssize_t k = 0; k < w.n; k++) {
        Py_INCREF(w.order[k]);
        PyList_SET_ITEM(order, k, (PyObject *)w.order[k]);
        if (PySet_Add(live, (PyObject *)w.order[k]) < 0)
            goto out;
    }
    result = PyTuple_Pack(2, order, live);
out:
    walk_end(&w);
    Py_DECREF(outs); /* after the walk: it may hold the only references to the outputs */
    Py_XDECREF(order);
    Py_XDECREF(live);
    return result;
}

/* backprop(outputs, seeds, targets, seed_for): reverse.backprop with marks instead of sets */
PyObject *
marked_backprop(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!GradConfigured || nargs != 4 || !PyAnySet_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "backprop(outputs, seeds, targets: set, seed_for), once configured");
        return NULL;
    }
    PyObject *outs = PySequence_Tuple(args[0]), *seeds = PySequence_Tuple(args[1]);
    PyObject *result = NULL;
    Walk w = {0, NULL, 0};
    int began = 0;
    if (outs == NULL || seeds == NULL)
        goto out;
    if (PyTuple_GET_SIZE(outs) != PyTuple_GET_SIZE(seeds)) {
        PyErr_SetString(PyExc_ValueError, "backprop needs one seed per output");
        goto out;
    }
    began = walk_begin(&w, outs, args[2]);
    if (began <= 0) {
        if (began == 0) {
            Py_INCREF(Py_NotImplemented);
            result = Py_NotImplemented;
        }
        goto out;
    }
    uint32_t epoch = w.epoch;
    Liveness live = {epoch, NULL, NULL, 0, 0, 0};
    result = PyDict_New();
    if (result == NULL)
        goto out;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(outs); i++) {
        TermObject *o = TERM(PyTuple_GET_ITEM(outs, i));
        if ((marks(o, epoch) & M_LIVE) && seed_output(o, PyTuple_GET_ITEM(seeds, i), args[3]) < 0)
            goto fail;
    }
    for (Py_ssize_t k = w.n - 1; k >= 0; k--) {
        TermObject *node = w.order[k];
        prefetch_walk(w.order, w.n, k, -1);
        if (node->scratch != NULL && sweep_node(node, marks(node, epoch) & M_TARGET, &live, result) < 0)
            goto fail;
    }
    /* every scratch of the walk was taken on the way (a live operand comes after its user in this
       loop), so walk_end need not read each node once more to clear it */
    w.n = 0;
    goto out;
fail:
    Py_CLEAR(result);
out:
    if (began > 0)
        walk_end(&w);
    Py_XDECREF(outs);
    Py_XDECREF(seeds);
    return result;
}

PyObject *
walk_epoch(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs == 1) {
        unsigned long n = PyLong_AsUnsignedLong(args[0]);
        if (n == (unsigned long)-1 && PyErr_Occurred())
            return NULL;
        if (n > EPOCH_MAX || Marking) {
            PyErr_SetString(PyExc_ValueError, "an epoch is at most 2**28 - 1, set while no walk runs");
            return NULL;
        }
        if (n < Epoch) /* back: marks of the epochs skipped over are on terms (a forward jump is safe) */
            CT->clear_marks();
        Epoch = (uint32_t)n;
    } else if (nargs != 0) {
        PyErr_SetString(PyExc_TypeError, "_epoch(n=None)");
        return NULL;
    }
    return PyLong_FromUnsignedLong(Epoch);
}
