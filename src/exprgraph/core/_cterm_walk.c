/* _cterm_walk.c: the postorder walk of exprgraph.core.walk over C terms (its twin: postorder_until in
   walk.py, which gives the same list; tests compare them).

   The walk reads each node's operands in the node itself, so it makes no `args` tuple (a Python walk
   would make and keep one per node, see get_args in _cterm_term.c), and remembers the nodes it has
   finished in a set of addresses of its own: the marks of the terms belong to other extensions'
   traversals, and a `stop` predicate may run one. Every node it meets is held by a root it holds
   (operands never change), so the walk keeps borrowed pointers; only the result holds references. */

#include "_cterm.h"

/* ---- a set of addresses: open addressing, at most half full ---------------------------------- */
typedef struct {
    uintptr_t *slots; /* 0: empty */
    size_t cap, count; /* cap a power of two */
} PtrSet;

static inline size_t
ptr_home(uintptr_t p, size_t cap)
{
    return (size_t)(((uint64_t)(p >> 4) * 0x9e3779b97f4a7c15ULL) >> 20) & (cap - 1);
}

static int
ptrset_has(const PtrSet *s, uintptr_t p)
{
    for (size_t i = ptr_home(p, s->cap); s->slots[i] != 0; i = (i + 1) & (s->cap - 1))
        if (s->slots[i] == p)
            return 1;
    return 0;
}

static int
ptrset_grow(PtrSet *s)
{
    size_t cap = s->cap * 2;
    uintptr_t *fresh = (uintptr_t *)PyMem_Calloc(cap, sizeof(uintptr_t));
    if (fresh == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t k = 0; k < s->cap; k++) {
        if (s->slots[k] == 0)
            continue;
        size_t i = ptr_home(s->slots[k], cap);
        while (fresh[i] != 0)
            i = (i + 1) & (cap - 1);
        fresh[i] = s->slots[k];
    }
    PyMem_Free(s->slots);
    s->slots = fresh;
    s->cap = cap;
    return 0;
}

/* add p, not in the set (-1 with MemoryError) */
static int
ptrset_add(PtrSet *s, uintptr_t p)
{
    if (2 * (s->count + 1) > s->cap && ptrset_grow(s) < 0)
        return -1;
    size_t i = ptr_home(p, s->cap);
    while (s->slots[i] != 0)
        i = (i + 1) & (s->cap - 1);
    s->slots[i] = p;
    s->count++;
    return 0;
}

/* ---- the walk ---------------------------------------------------------------------------------- */
typedef struct {
    PyObject *node;
    Py_ssize_t next;
} WalkFrame;

/* whether node is seen or stopped at (stop(node) true): 1 skip, 0 enter, -1 error */
static int
skip(const PtrSet *seen, PyObject *node, PyObject *stop)
{
    if (ptrset_has(seen, (uintptr_t)node))
        return 1;
    if (stop == Py_None)
        return 0;
    PyObject *r = PyObject_CallOneArg(stop, node);
    if (r == NULL)
        return -1;
    int truth = PyObject_IsTrue(r);
    Py_DECREF(r);
    return truth;
}

/* postorder(roots: list | tuple, stop): walk.postorder_until's list, or None when a root is not a C term
   of the configured class (walk.py then walks in Python) */
PyObject *
term_postorder(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !(PyList_CheckExact(args[0]) || PyTuple_CheckExact(args[0]))) {
        PyErr_SetString(PyExc_TypeError, "postorder(roots: list | tuple, stop)");
        return NULL;
    }
    PyObject *roots = PySequence_Tuple(args[0]), *stop = args[1]; /* a tuple: stop cannot change the roots */
    if (roots == NULL)
        return NULL;
    Py_ssize_t nroots = PyTuple_GET_SIZE(roots);
    for (Py_ssize_t r = 0; r < nroots; r++)
        if (!Configured || Py_TYPE(PyTuple_GET_ITEM(roots, r)) != TermClass) {
            Py_DECREF(roots);
            Py_RETURN_NONE;
        }
    PyObject *order = PyList_New(0);
    PtrSet seen = {(uintptr_t *)PyMem_Calloc(1024, sizeof(uintptr_t)), 1024, 0};
    size_t cap = 256, depth = 0;
    WalkFrame *stack = (WalkFrame *)PyMem_Malloc(cap * sizeof(WalkFrame));
    if (order == NULL || seen.slots == NULL || stack == NULL) {
        if (order != NULL)
            PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t r = 0; r < nroots; r++) {
        PyObject *root = PyTuple_GET_ITEM(roots, r);
        int s = skip(&seen, root, stop);
        if (s < 0)
            goto fail;
        if (s)
            continue;
        stack[0] = (WalkFrame){root, 0};
        depth = 1;
        while (depth > 0) {
            WalkFrame *fr = &stack[depth - 1];
            PyObject *node = fr->node;
            Py_ssize_t n = TERM_NARGS(node), i = fr->next;
            while (i < n) {
                s = skip(&seen, TERM_ARG(node, i), stop);
                if (s < 0)
                    goto fail;
                if (!s)
                    break;
                i++;
            }
            if (i < n) {
                fr->next = i + 1;
                if (depth == cap) {
                    WalkFrame *grown = (WalkFrame *)PyMem_Realloc(stack, 2 * cap * sizeof(WalkFrame));
                    if (grown == NULL) {
                        PyErr_NoMemory();
                        goto fail;
                    }
                    stack = grown;
                    cap *= 2;
                }
                stack[depth++] = (WalkFrame){TERM_ARG(node, i), 0};
            } else {
                depth--;
                if (ptrset_add(&seen, (uintptr_t)node) < 0 || PyList_Append(order, node) < 0)
                    goto fail;
            }
        }
    }
    PyMem_Free(stack);
    PyMem_Free(seen.slots);
    Py_DECREF(roots);
    return order;
fail:
    PyMem_Free(stack);
    PyMem_Free(seen.slots);
    Py_DECREF(roots);
    Py_XDECREF(order);
    return NULL;
}
