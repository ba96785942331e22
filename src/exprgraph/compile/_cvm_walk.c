/* _cvm_walk.c: the walk of compile/lower.py's lower() in C (its twin: lower_py there), and what the vm's
 * walks share (_cvm_terms.h: the term base's API, growable arrays, marks).
 *
 * walk(outputs, symbol, const) visits the DAG of the outputs as core.traversal.schedule does (depth
 * first, operands left to right, the operand slots reading each node counted, an output one more) and
 * finds in the same pass the nodes that read a symbol. For a program of scalar nodes with nothing to
 * fold (no subterm without symbols under a node with symbols, no output without symbols but a leaf)
 * it gives (steps, nodes, reads, constants, symbols, fixed outputs), what lower_py gives in the same order
 * (the reads as the nodes in the order of discovery and their counts, made a dict when first asked);
 * for any other program None, and lower_py runs. Iterative: a chain of a million nodes is walked.
 */
#include "_cvm_terms.h"

#include "_cvm.h"

CTermAPI *CvmTerms = NULL;

CTermAPI *cvm_term_api(void) {
    if (CvmTerms != NULL) return CvmTerms;
    CTermAPI *api = (CTermAPI *)PyCapsule_Import(CTERM_CAPSULE, 0);
    if (api == NULL) {
        PyErr_Clear();
        return NULL;
    }
    if (api->version != CTERM_API_VERSION || api->term_size != sizeof(TermObject) || !*api->configured) return NULL;
    CvmTerms = api;
    return CvmTerms;
}

int vec_grow(Vec *v, size_t more) {
    size_t cap = v->cap ? v->cap : 256;
    while (cap < v->n + more) cap *= 2;
    char *grown = realloc(v->data, cap * v->item);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    v->data = grown;
    v->cap = cap;
    return 0;
}

void unstamp(Vec *saved) {
    for (size_t i = 0; i < saved->n; i++) {
        Saved *s = &AT(*saved, Saved, i);
        TERM(s->term)->mark = s->word;
    }
}

/* how many nodes ahead unstamp_taking_two asks for a node's words (the walk met them long ago) */
#define UNSTAMP_AHEAD 16

/* unstamp, and take two references to every node on the way (its word and its count share the node's
   first bytes): the lists of a walk's result are then filled without reading a node again */
static void unstamp_taking_two(Vec *saved) {
    for (size_t i = 0; i < saved->n; i++) {
        Saved *s = &AT(*saved, Saved, i);
        if (i + UNSTAMP_AHEAD < saved->n) PREFETCH(AT(*saved, Saved, i + UNSTAMP_AHEAD).term); /* a miss each */
        TERM(s->term)->mark = s->word;
        Py_INCREF(s->term);
        Py_INCREF(s->term);
    }
}

/* the two references taken by unstamp_taking_two given back (a result that could not be made) */
static void drop_two(Vec *saved) {
    for (size_t i = 0; i < saved->n; i++) {
        PyObject *t = AT(*saved, Saved, i).term;
        Py_DECREF(t);
        Py_DECREF(t);
    }
}

/* -- the walk ---------------------------------------------------------------------------------------- */


typedef struct {
    Vec saved;      /* Saved: the words of the stamped nodes; the node numbered k is saved[k].term */
    Vec reads;      /* int64 by number: operand slots reading it (outputs: one more each) */
    Vec flag;       /* uint8 by number */
    Vec order;      /* int32: numbers, operands first (schedule's order) */
    int arrays;     /* keep the DAG as arrays too (below), for encode_walked (_cvm_walked.c) */
    Vec start;      /* int32 by number: where its operands' numbers start in `edges` */
    Vec edges;      /* int32: the operands' numbers, node after node in the order of numbers */
    Vec dt;         /* int8 by number: its dtype index */
    Vec op;         /* PyObject * by number: its op (borrowed) */
    int32_t *out_k; /* each output's number */
    PyObject *symbol, *constant;    /* the op names of symbols and constants */
    PyObject *symbol_op, *const_op; /* their ops, once met */
} Graph;

#define NODE(g, k) (AT((g)->saved, Saved, k).term)

/* the number of a node met before, or -1: its index among the saved words (the walk stamps node k once, the
   k-th, with payload k: see first_seen), read from the mark alone */
static inline int32_t number(PyObject *t) {
    uint32_t m = TERM(t)->mark;
    return (m & M_STAMPED) ? (int32_t)(m & ~M_STAMPED) : -1;
}

/* the leaf t's flags (a symbol, a constant); 0 for a leaf of another op (lower_py takes those) */
static int leaf_flags(Graph *g, PyObject *t) {
    PyObject *op = TERM(t)->op;
    if (op == g->symbol_op) return F_SYMBOL | F_SYM | F_LEAF;
    if (op == g->const_op) return F_CONST | F_LEAF;
    PyObject *own = OP_SLOT(op, *CvmTerms->off_name);
    if (own == NULL || !PyUnicode_Check(own)) return 0;
    if (PyUnicode_Compare(own, g->symbol) == 0) {
        g->symbol_op = op;
        return F_SYMBOL | F_SYM | F_LEAF;
    }
    if (PyUnicode_Compare(own, g->constant) == 0) {
        g->const_op = op;
        return F_CONST | F_LEAF;
    }
    return 0;
}

/* node t (numbered next) in the arrays: its operands' slots (filled as the walk meets them), its dtype;
   -1 error, -2 too many operand slots (lower_py takes the program) */
static int keep(Graph *g, PyObject *t) {
    const size_t n = (size_t)NARGS(t);
    if (g->edges.n + n >= 0x7fffffff) return -2;
    if (vec_room(&g->start, 1) < 0 || vec_room(&g->edges, n) < 0 || vec_room(&g->dt, 1) < 0 ||
        vec_room(&g->op, 1) < 0)
        return -1;
    AT(g->op, PyObject *, g->op.n++) = TERM(t)->op;
    AT(g->start, int32_t, g->start.n++) = (int32_t)g->edges.n;
    g->edges.n += n;
    AT(g->dt, int8_t, g->dt.n++) = (int8_t)dtype_of(t);
    return 0;
}

/* a node seen for the first time: numbered (one read), stamped, flagged if a leaf (and put in the
   order); its number, -1 on an error, -2 when lower_py must take the program */
static int32_t first_visit(Graph *g, PyObject *t) {
    if (!IS_TERM(t) || TERM_HAS_SHAPE(t)) return -2;
    int32_t k = (int32_t)g->saved.n;
    if (g->saved.n >= 0x7fffffff) return -2;
    if (vec_room(&g->reads, 1) < 0 || vec_room(&g->flag, 1) < 0 || stamp(&g->saved, t, (uint64_t)k) < 0) return -1;
    AT(g->reads, int64_t, g->reads.n++) = 1;
    AT(g->flag, uint8_t, g->flag.n++) = 0;
    int kept = g->arrays ? keep(g, t) : 0;
    if (kept < 0) return kept;
    if (NARGS(t) > 0) return k;
    int f = leaf_flags(g, t);
    if (f == 0) return -2;
    AT(g->flag, uint8_t, k) = (uint8_t)f;
    return vec_push32(&g->order, k) < 0 ? -1 : k;
}

typedef struct {
    int32_t k;
    Py_ssize_t next;
    int sym;  /* an operand reads a symbol */
    int fold; /* an operand is a subterm without symbols (lower_py folds it) */
} Frame;

/* what a finished operand (number j) tells the node reading it */
static inline void tell(const Graph *g, Frame *fr, int32_t j) {
    uint8_t f = AT(g->flag, uint8_t, j);
    if (f & F_SYM)
        fr->sym = 1;
    else if (!(f & F_LEAF))
        fr->fold = 1;
}

/* the walk under a new non-leaf root (number k); 1 done, 0 lower_py must take the program, -1 error */
static int walk_root(Graph *g, Vec *stack, int32_t k) {
    stack->n = 0;
    if (vec_room(stack, 1) < 0) return -1;
    AT(*stack, Frame, stack->n++) = (Frame){k, 0, 0, 0};
    while (stack->n > 0) {
        Frame *fr = &AT(*stack, Frame, stack->n - 1);
        PyObject *nd = NODE(g, fr->k);
        const Py_ssize_t nargs = TERM_NARGS(nd);
        int32_t push = -1;
        if (fr->next == 0) /* the operands' words are read next: ask for them all at once (memory bound) */
            for (Py_ssize_t i = 0; i < nargs; i++) {
                const char *a = (const char *)TERM_ARG(nd, i);
                __builtin_prefetch(a);
                __builtin_prefetch(a + sizeof(TermObject) / 2);
            }
        while (fr->next < nargs) {
            const Py_ssize_t slot = fr->next++;
            PyObject *child = TERM_ARG(nd, slot);
            if (!IS_TERM(child)) return 0; /* (core makes none such; a mark is read from terms only) */
            if (fr->next < nargs) { /* the next operand's own operands, asked for early */
                PyObject *next = TERM_ARG(nd, fr->next);
                if (IS_TERM(next)) __builtin_prefetch(TERM(next)->items);
            }
            int32_t j = number(child);
            const int seen = j >= 0;
            if (!seen && (j = first_visit(g, child)) < 0) return j == -2 ? 0 : -1;
            if (g->arrays) AT(g->edges, int32_t, AT(g->start, int32_t, fr->k) + slot) = j;
            if (seen) {
                AT(g->reads, int64_t, j)++;
                tell(g, fr, j);
                continue;
            }
            if (NARGS(child) > 0) {
                push = j;
                break;
            }
            tell(g, fr, j);
        }
        if (push >= 0) {
            if (vec_room(stack, 1) < 0) return -1;
            AT(*stack, Frame, stack->n++) = (Frame){push, 0, 0, 0};
            continue;
        }
        /* every operand done: the node reads a symbol when one of them does */
        const Frame done = *fr;
        stack->n--;
        if (done.sym) {
            if (done.fold) return 0; /* x + (2*3): a subterm without symbols, folded by lower_py */
            AT(g->flag, uint8_t, done.k) |= F_SYM;
        }
        if (vec_push32(&g->order, done.k) < 0) return -1;
        if (stack->n > 0) tell(g, &AT(*stack, Frame, stack->n - 1), done.k);
    }
    return 1;
}

/* how far ahead the walk starts reading the outputs, each a miss of its own (a Hessian's blocks are made
   last and apart): an output's words OUTPUT_AHEAD outputs ahead, its operands' tuple half as far ahead, their
   words a quarter as far (with the constants, below: a quarter of the walk's time on AC-OPF case1354pegase) */
#define OUTPUT_AHEAD 16

static inline void ask_ahead(PyObject *outputs, Py_ssize_t r) {
    const Py_ssize_t n = PyTuple_GET_SIZE(outputs);
    if (r + OUTPUT_AHEAD < n) PREFETCH(PyTuple_GET_ITEM(outputs, r + OUTPUT_AHEAD));
    if (r + OUTPUT_AHEAD / 2 < n) {
        PyObject *soon = PyTuple_GET_ITEM(outputs, r + OUTPUT_AHEAD / 2);
        if (IS_TERM(soon)) PREFETCH(TERM(soon)->items);
    }
    if (r + OUTPUT_AHEAD / 4 < n) {
        PyObject *soon = PyTuple_GET_ITEM(outputs, r + OUTPUT_AHEAD / 4);
        if (IS_TERM(soon))
            for (Py_ssize_t i = 0; i < NARGS(soon) && i < 4; i++) PREFETCH(ARG(soon, i));
    }
}

/* the whole walk; 1 done, 0 lower_py must take the program, -1 error (the stamps stay: unstamp them) */
static int walk_all(Graph *g, PyObject *outputs) {
    Vec stack = VEC(Frame);
    int result = 1;
    for (Py_ssize_t r = 0; r < PyTuple_GET_SIZE(outputs) && result > 0; r++) {
        PyObject *root = PyTuple_GET_ITEM(outputs, r);
        ask_ahead(outputs, r);
        int32_t k = IS_TERM(root) ? number(root) : -1;
        if (k >= 0) {
            AT(g->reads, int64_t, k)++;
        } else if ((k = first_visit(g, root)) < 0) {
            result = k == -2 ? 0 : -1;
            break;
        } else if (NARGS(root) > 0) {
            result = walk_root(g, &stack, k);
        }
        g->out_k[r] = k;
        if (result > 0 && !(AT(g->flag, uint8_t, k) & (F_SYM | F_LEAF)))
            result = 0; /* an output without symbols, not a leaf: folded by lower_py */
    }
    free(stack.data);
    return result;
}

static void walked_free(PyObject *capsule) {
    Py_XDECREF((PyObject *)PyCapsule_GetContext(capsule)); /* the list of the nodes, kept alive with the arrays */
    Walked *w = PyCapsule_GetPointer(capsule, WALKED_CAPSULE);
    if (w == NULL) return;
    Vec *vecs[] = {&w->start, &w->edges, &w->node, &w->op, &w->dt, &w->flag, &w->order, &w->out_k};
    for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++) free(vecs[i]->data);
    free(w);
}

/* the walk's arrays in a capsule (see Walked in _cvm_terms.h), taken from g (its vectors left empty); the
   capsule holds `nodes` (every node, so every address and op it keeps stays valid while it lives) */
static PyObject *arrays_of(Graph *g, PyObject *outputs, PyObject *nodes) {
    const size_t n_out = (size_t)PyTuple_GET_SIZE(outputs);
    Walked *w = calloc(1, sizeof(Walked));
    if (w == NULL) return PyErr_NoMemory();
    w->node = (Vec)VEC(PyObject *);
    w->out_k = (Vec)VEC(int32_t);
    if (vec_room(&w->node, g->saved.n + 1) < 0 || vec_room(&w->out_k, n_out + 1) < 0) {
        free(w->node.data);
        free(w);
        return NULL;
    }
    for (size_t k = 0; k < g->saved.n; k++) AT(w->node, PyObject *, k) = NODE(g, k);
    w->node.n = g->saved.n;
    memcpy(w->out_k.data, g->out_k, n_out * sizeof(int32_t));
    w->out_k.n = n_out;
    w->start = g->start, w->edges = g->edges, w->op = g->op, w->dt = g->dt, w->flag = g->flag, w->order = g->order;
    g->start = g->edges = g->op = g->dt = g->flag = g->order = (Vec)VEC(char);
    PyObject *capsule = PyCapsule_New(w, WALKED_CAPSULE, walked_free);
    if (capsule != NULL && PyCapsule_SetContext(capsule, Py_NewRef(nodes)) < 0) {
        Py_DECREF(nodes);
        Py_CLEAR(capsule); /* (its destructor frees the arrays) */
        return NULL;
    }
    if (capsule == NULL) {
        Vec *vecs[] = {&w->start, &w->edges, &w->node, &w->op, &w->dt, &w->flag, &w->order, &w->out_k};
        for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++) free(vecs[i]->data);
        free(w);
    }
    return capsule;
}

/* (steps, nodes, reads, constants, symbols, fixed outputs[, arrays]) of a finished walk (the stamps are off,
   two references to each node taken: one goes to `nodes`, one to steps, constants or symbols) */
static PyObject *walk_result(Graph *g, PyObject *outputs) {
    const uint8_t *flag = (const uint8_t *)g->flag.data;
    Py_ssize_t count[3] = {0, 0, 0}; /* steps, constants, symbols */
    for (size_t k = 0; k < g->saved.n; k++) count[!(flag[k] & F_LEAF) ? 0 : (flag[k] & F_CONST) ? 1 : 2]++;
    PyObject *lists[3] = {PyList_New(count[0]), PyList_New(count[1]), PyList_New(count[2])};
    PyObject *fixed = PyList_New(0), *nodes = PyList_New((Py_ssize_t)g->saved.n), *result = NULL, *reads = NULL;
    if (!lists[0] || !lists[1] || !lists[2] || !fixed || !nodes) {
        drop_two(&g->saved);
        goto done;
    }
    Py_ssize_t at[3] = {0, 0, 0};
    for (size_t o = 0; o < g->order.n; o++) {
        const int32_t k = AT(g->order, int32_t, o);
        const int which = !(flag[k] & F_LEAF) ? 0 : (flag[k] & F_CONST) ? 1 : 2;
        PyList_SET_ITEM(lists[which], at[which]++, NODE(g, k));
    }
    for (size_t k = 0; k < g->saved.n; k++) PyList_SET_ITEM(nodes, (Py_ssize_t)k, NODE(g, k));
    for (Py_ssize_t r = 0; r < PyTuple_GET_SIZE(outputs); r++)
        if (!(flag[g->out_k[r]] & F_SYM) && PyList_Append(fixed, PyTuple_GET_ITEM(outputs, r)) < 0) goto done;
    reads = PyBytes_FromStringAndSize(g->reads.data ? g->reads.data : "", (Py_ssize_t)(g->reads.n * sizeof(int64_t)));
    if (reads == NULL) goto done;
    PyObject *kept = g->arrays ? arrays_of(g, outputs, nodes) : NULL; /* (takes the flags and order: read above) */
    if (g->arrays && kept == NULL) goto done;
    result = kept ? Py_BuildValue("(OOOOOON)", lists[0], nodes, reads, lists[1], lists[2], fixed, kept)
                  : PyTuple_Pack(6, lists[0], nodes, reads, lists[1], lists[2], fixed);
done:
    for (int i = 0; i < 3; i++) Py_XDECREF(lists[i]);
    Py_XDECREF(nodes);
    Py_XDECREF(reads);
    Py_XDECREF(fixed);
    return result;
}

/* the positions in `inputs` of the symbols the walk met (the stamps are on: no Python object is made) */
static int used_positions(Graph *g, PyObject *inputs, Vec *used) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); i++) {
        PyObject *s = PyTuple_GET_ITEM(inputs, i);
        const int32_t k = IS_TERM(s) ? number(s) : -1;
        if (k >= 0 && (AT(g->flag, uint8_t, k) & F_SYMBOL) && vec_push32(used, (int32_t)i) < 0) return -1;
    }
    return 0;
}

/* the value of each constant: scalars[type(attr)](attr), or value_of(constant) (eval.bind.const_value's road) */
static PyObject *values_of(PyObject *constants, PyObject *scalars, PyObject *value_of) {
    PyObject *values = PyDict_New();
    const Py_ssize_t n = PyList_GET_SIZE(constants);
    for (Py_ssize_t i = 0; values != NULL && i < n; i++) {
        /* two misses per constant (its term, then its value's object): asked for ahead, as the outputs */
        if (i + OUTPUT_AHEAD < n) PREFETCH(PyList_GET_ITEM(constants, i + OUTPUT_AHEAD));
        if (i + OUTPUT_AHEAD / 2 < n) PREFETCH(TERM_ATTR(PyList_GET_ITEM(constants, i + OUTPUT_AHEAD / 2)));
        PyObject *c = PyList_GET_ITEM(constants, i), *attr = TERM_ATTR(c);
        PyObject *make = PyDict_GetItemWithError(scalars, (PyObject *)Py_TYPE(attr));
        PyObject *v = make != NULL    ? PyObject_CallOneArg(make, attr)
                      : PyErr_Occurred() ? NULL
                                         : PyObject_CallOneArg(value_of, c);
        if (v == NULL || PyDict_SetItem(values, c, v) < 0) Py_CLEAR(values);
        Py_XDECREF(v);
    }
    return values;
}

/* the result with what lower() makes of it too: (steps, nodes, reads, constants, symbols, fixed, arrays or None,
   used input positions (a tuple), the constants' values (a dict)) */
static PyObject *program_result(PyObject *walked, int arrays, const Vec *used, PyObject *scalars, PyObject *value_of) {
    if (walked == NULL || walked == Py_None) return walked;
    PyObject *positions = PyTuple_New((Py_ssize_t)used->n);
    PyObject *values = values_of(PyTuple_GET_ITEM(walked, 3), scalars, value_of), *result = NULL;
    for (size_t i = 0; positions != NULL && i < used->n; i++) {
        PyObject *p = PyLong_FromLong(AT(*used, int32_t, i));
        if (p == NULL) Py_CLEAR(positions);
        else PyTuple_SET_ITEM(positions, (Py_ssize_t)i, p);
    }
    if (positions != NULL && values != NULL) {
        PyObject *kept = arrays ? PyTuple_GET_ITEM(walked, 6) : Py_None;
        PyObject **item = &PyTuple_GET_ITEM(walked, 0);
        result = PyTuple_Pack(9, item[0], item[1], item[2], item[3], item[4], item[5], kept, positions, values);
    }
    Py_XDECREF(positions);
    Py_XDECREF(values);
    Py_DECREF(walked);
    return result;
}

/* walk(outputs: tuple, symbol_name, const_name, arrays=False[, inputs, scalars, value_of]) -> (steps, nodes, reads,
   constants, symbols, fixed) or None; nodes: every node in the order of discovery, reads: their reads (bytes of
   int64); with `arrays`, a seventh item: the DAG as arrays in a capsule (see arrays_of) for encode_walked; with
   `inputs` (a tuple), `scalars` (a dict: type -> callable) and `value_of` (a callable), what program_result gives */
PyObject *cvm_walk(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *outputs, *symbol, *constant;
    PyObject *inputs = NULL, *scalars = NULL, *value_of = NULL;
    int arrays = 0;
    if (!PyArg_ParseTuple(args, "O!UU|pO!O!O:walk", &PyTuple_Type, &outputs, &symbol, &constant, &arrays, &PyTuple_Type,
                          &inputs, &PyDict_Type, &scalars, &value_of))
        return NULL;
    if (inputs != NULL && (scalars == NULL || value_of == NULL || !PyCallable_Check(value_of))) {
        PyErr_SetString(PyExc_TypeError, "walk: inputs come with scalars and value_of");
        return NULL;
    }
    if (cvm_term_api() == NULL) Py_RETURN_NONE;
    Graph g = {.saved = VEC(Saved), .reads = VEC(int64_t), .flag = VEC(uint8_t), .order = VEC(int32_t),
               .arrays = arrays, .start = VEC(int32_t), .edges = VEC(int32_t), .dt = VEC(int8_t), .op = VEC(PyObject *),
               .symbol = symbol, .constant = constant};
    const Py_ssize_t n_out = PyTuple_GET_SIZE(outputs);
    g.out_k = malloc((size_t)(n_out ? n_out : 1) * sizeof(int32_t));
    int walked = g.out_k == NULL ? -1 : walk_all(&g, outputs);
    Vec used = VEC(int32_t);
    if (walked > 0 && inputs != NULL && used_positions(&g, inputs, &used) < 0) walked = -1;
    if (walked > 0) /* before any Python object is made */
        unstamp_taking_two(&g.saved);
    else
        unstamp(&g.saved);
    PyObject *result = NULL;
    if (walked < 0 && !PyErr_Occurred()) PyErr_NoMemory();
    if (walked == 0) result = Py_NewRef(Py_None);
    if (walked > 0) result = walk_result(&g, outputs);
    if (walked > 0 && inputs != NULL) result = program_result(result, arrays, &used, scalars, value_of);
    free(used.data);
    free(g.saved.data);
    free(g.reads.data);
    free(g.flag.data);
    free(g.order.data);
    free(g.start.data);
    free(g.edges.data);
    free(g.dt.data);
    free(g.op.data);
    free(g.out_k);
    return result;
}
