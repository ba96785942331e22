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

int vec_room(Vec *v, size_t more) {
    if (v->n + more <= v->cap) return 0;
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

int vec_push32(Vec *v, int32_t x) {
    if (vec_room(v, 1) < 0) return -1;
    AT(*v, int32_t, v->n++) = x;
    return 0;
}

void unstamp(Vec *saved) {
    for (size_t i = 0; i < saved->n; i++) {
        Saved *s = &AT(*saved, Saved, i);
        TERM(s->term)->mark = s->word;
    }
}

/* -- the walk ---------------------------------------------------------------------------------------- */

enum { F_SYM = 1, F_CONST = 2, F_SYMBOL = 4, F_LEAF = 8 };

typedef struct {
    Vec saved;      /* Saved: the words of the stamped nodes; the node numbered k is saved[k].term */
    Vec reads;      /* int64 by number: operand slots reading it (outputs: one more each) */
    Vec flag;       /* uint8 by number */
    Vec order;      /* int32: numbers, operands first (schedule's order) */
    int32_t *out_k; /* each output's number */
    PyObject *symbol, *constant;    /* the op names of symbols and constants */
    PyObject *symbol_op, *const_op; /* their ops, once met */
} Graph;

#define NODE(g, k) (AT((g)->saved, Saved, k).term)

/* the number of a node met before, or -1 */
static inline int32_t number(PyObject *t) {
    uint64_t m = TERM(t)->mark;
    return (m & M_MINE) ? (int32_t)(m & 0xffffffffu) : -1;
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

/* a node seen for the first time: numbered (one read), stamped, flagged if a leaf (and put in the
   order); its number, -1 on an error, -2 when lower_py must take the program */
static int32_t first_visit(Graph *g, PyObject *t) {
    if (!IS_TERM(t) || PyTuple_GET_SIZE(TERM(t)->shape) != 0) return -2;
    int32_t k = (int32_t)g->saved.n;
    if (g->saved.n >= 0x7fffffff) return -2;
    if (vec_room(&g->reads, 1) < 0 || vec_room(&g->flag, 1) < 0 || stamp(&g->saved, t, (uint64_t)k) < 0) return -1;
    AT(g->reads, int64_t, g->reads.n++) = 1;
    AT(g->flag, uint8_t, g->flag.n++) = 0;
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
        PyObject *args = TERM(NODE(g, fr->k))->args;
        int32_t push = -1;
        if (fr->next == 0) /* the operands' words are read next: ask for them all at once (memory bound) */
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++) {
                const char *a = (const char *)PyTuple_GET_ITEM(args, i);
                __builtin_prefetch(a);
                __builtin_prefetch(a + sizeof(TermObject) / 2);
            }
        while (fr->next < PyTuple_GET_SIZE(args)) {
            PyObject *child = PyTuple_GET_ITEM(args, fr->next++);
            if (!IS_TERM(child)) return 0; /* (core makes none such; a mark is read from terms only) */
            if (fr->next < PyTuple_GET_SIZE(args)) { /* the next operand's own operands, asked for early */
                PyObject *next = PyTuple_GET_ITEM(args, fr->next);
                if (IS_TERM(next)) __builtin_prefetch(TERM(next)->args);
            }
            int32_t j = number(child);
            if (j >= 0) {
                AT(g->reads, int64_t, j)++;
                tell(g, fr, j);
                continue;
            }
            if ((j = first_visit(g, child)) < 0) return j == -2 ? 0 : -1;
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

/* the whole walk; 1 done, 0 lower_py must take the program, -1 error (the stamps stay: unstamp them) */
static int walk_all(Graph *g, PyObject *outputs) {
    Vec stack = VEC(Frame);
    int result = 1;
    for (Py_ssize_t r = 0; r < PyTuple_GET_SIZE(outputs) && result > 0; r++) {
        PyObject *root = PyTuple_GET_ITEM(outputs, r);
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

/* (steps, nodes, reads, constants, symbols, fixed outputs) of a finished walk (the stamps are off) */
static PyObject *walk_result(Graph *g, PyObject *outputs) {
    PyObject *steps = PyList_New(0), *consts = PyList_New(0), *symbols = PyList_New(0), *fixed = PyList_New(0);
    PyObject *nodes = PyList_New((Py_ssize_t)g->saved.n), *result = NULL, *reads = NULL;
    if (!steps || !consts || !symbols || !fixed || !nodes) goto done;
    const uint8_t *flag = (const uint8_t *)g->flag.data;
    for (size_t o = 0; o < g->order.n; o++) {
        int32_t k = AT(g->order, int32_t, o);
        PyObject *into = !(flag[k] & F_LEAF) ? steps : (flag[k] & F_CONST) ? consts : symbols;
        if (PyList_Append(into, NODE(g, k)) < 0) goto done;
    }
    for (size_t k = 0; k < g->saved.n; k++) PyList_SET_ITEM(nodes, (Py_ssize_t)k, Py_NewRef(NODE(g, k)));
    for (Py_ssize_t r = 0; r < PyTuple_GET_SIZE(outputs); r++)
        if (!(flag[g->out_k[r]] & F_SYM) && PyList_Append(fixed, PyTuple_GET_ITEM(outputs, r)) < 0) goto done;
    reads = PyBytes_FromStringAndSize(g->reads.data ? g->reads.data : "", (Py_ssize_t)(g->reads.n * sizeof(int64_t)));
    if (reads != NULL) result = PyTuple_Pack(6, steps, nodes, reads, consts, symbols, fixed);
done:
    Py_XDECREF(steps);
    Py_XDECREF(nodes);
    Py_XDECREF(reads);
    Py_XDECREF(consts);
    Py_XDECREF(symbols);
    Py_XDECREF(fixed);
    return result;
}

/* walk(outputs: tuple, symbol_name, const_name) -> (steps, nodes, reads, constants, symbols, fixed) or None;
   nodes: every node in the order of discovery, reads: their reads (bytes of int64) */
PyObject *cvm_walk(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *outputs, *symbol, *constant;
    if (!PyArg_ParseTuple(args, "O!UU:walk", &PyTuple_Type, &outputs, &symbol, &constant)) return NULL;
    if (cvm_term_api() == NULL) Py_RETURN_NONE;
    Graph g = {VEC(Saved), VEC(int64_t), VEC(uint8_t), VEC(int32_t), NULL, symbol, constant, NULL, NULL};
    const Py_ssize_t n_out = PyTuple_GET_SIZE(outputs);
    g.out_k = malloc((size_t)(n_out ? n_out : 1) * sizeof(int32_t));
    int walked = g.out_k == NULL ? -1 : walk_all(&g, outputs);
    unstamp(&g.saved); /* before any Python object is made */
    PyObject *result = NULL;
    if (walked < 0 && !PyErr_Occurred()) PyErr_NoMemory();
    if (walked == 0) result = Py_NewRef(Py_None);
    if (walked > 0) result = walk_result(&g, outputs);
    free(g.saved.data);
    free(g.reads.data);
    free(g.flag.data);
    free(g.order.data);
    free(g.out_k);
    return result;
}
