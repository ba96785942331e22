/* _csweep_forward.c: the forward sweep of exprgraph.diff.forward as a marked walk (see _csweep.h).

   Each live node's tangent is kept in its scratch. A scalar node of an elementwise op (its dtype
   rule is one of the broadcasting ones) is pushed here, with its gradient rule replayed from its
   template exactly as forward._elementwise calls it: fed the one moving tangent when the other
   operands are constants, else at adjoint 1 for the partials, each tangent scaled by its partial
   (forward._scale) and the products added (forward._total). Every other node goes to the Python
   pusher (where, sum, transpose, dot, matmul, tensors, ops without a template). */

#include "_csweep.h"

/* forward._scale(t, p): t * p, with p = -1.0 as -t for a float64 t */
static PyObject *
scale(PyObject *t, PyObject *p)
{
    if (TERM(p)->op == OpConst && PyFloat_CheckExact(TERM_ATTR(p)) && PyFloat_AS_DOUBLE(TERM_ATTR(p)) == -1.0 &&
        TERM_DTYPE_INDEX(t) == D_FLOAT64)
        return c_negate(t);
    return c_product(t, &p, 1);
}

/* the forward term of a scalar elementwise node from its moving operands' tangents (new reference,
   Py_None for no dependence), or NULL with no exception set when the Python pusher must decide */
static PyObject *
push_elementwise(TermObject *node, PyObject *const *moved, Py_ssize_t nmoved, Py_ssize_t first)
{
    PyObject *rule = OP_SLOT(node->op, OffGrad);
    if (rule == NULL || rule == Py_None)
        return NULL; /* the Python pusher says there is no rule */
    Py_ssize_t n = TERM_NARGS(node);
    int others_const = nmoved == 1;
    for (Py_ssize_t j = 0; others_const && j < n; j++)
        if (j != first && TERM(TERM_ARG(node, j))->op != OpConst)
            others_const = 0;
    PyObject *g = others_const ? moved[first] : (TERM_DTYPE_INDEX(node) == D_FLOAT32 ? One32 : One);
    PyObject *cs = replayed((PyObject *)node, g, rule);
    if (cs == NULL)
        return NULL;
    if (others_const) { /* the rule at the tangent gives (d node / d a) * t */
        PyObject *c = PyTuple_GET_ITEM(cs, first);
        Py_INCREF(c);
        Py_DECREF(cs);
        return c;
    }
    PyObject *parts = PyList_New(0);
    for (Py_ssize_t i = 0; parts != NULL && i < n; i++) {
        PyObject *p = PyTuple_GET_ITEM(cs, i);
        if (moved[i] == NULL || p == Py_None)
            continue;
        PyObject *part = scale(moved[i], p);
        if (part == NULL || PyList_Append(parts, part) < 0)
            Py_CLEAR(parts);
        Py_XDECREF(part);
    }
    Py_DECREF(cs);
    if (parts == NULL)
        return NULL;
    PyObject *res;
    Py_ssize_t k = PyList_GET_SIZE(parts);
    if (k == 0) {
        res = Py_None;
        Py_INCREF(res);
    } else if (k == 1) {
        res = PyList_GET_ITEM(parts, 0);
        Py_INCREF(res);
    } else {
        res = intern_items(TermClass, OpAdd, ((PyListObject *)parts)->ob_item, k, Py_None);
    }
    Py_DECREF(parts);
    return res;
}

/* is node's op elementwise (its dtype rule is one of the broadcasting ones), where excepted */
static int
elementwise(TermObject *node)
{
    PyObject *infer = OP_SLOT(node->op, OffInfer);
    for (int k = 0; k < 4; k++)
        if (infer == InferFns[k])
            return 1;
    return 0;
}

/* the forward term of one node, by C or by the Python pusher (new reference; Py_None: none) */
static PyObject *
push(TermObject *node, uint32_t epoch, PyObject *pusher)
{
    Py_ssize_t n = TERM_NARGS(node), nmoved = 0, first = -1;
    PyObject *small[MAX_RECORDED];
    PyObject **moved = n <= MAX_RECORDED ? small : (PyObject **)PyMem_Calloc(n, sizeof(PyObject *));
    if (moved == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        TermObject *a = TERM(TERM_ARG(node, i));
        moved[i] = (marks(a, epoch) & M_LIVE) ? a->scratch : NULL;
        if (moved[i] != NULL && nmoved++ == 0)
            first = i;
    }
    PyObject *res = NULL;
    if (nmoved == 0) {
        res = Py_None;
        Py_INCREF(res);
        goto out;
    }
    if (n <= MAX_RECORDED && elementwise(node)) {
        res = push_elementwise(node, moved, nmoved, first);
        if (res != NULL || PyErr_Occurred())
            goto out;
    }
    PyObject *list = PyList_New(0); /* [(i, tangent), ...] for the Python pusher */
    for (Py_ssize_t i = 0; list != NULL && i < n; i++) {
        if (moved[i] == NULL)
            continue;
        PyObject *pair = Py_BuildValue("(nO)", i, moved[i]);
        if (pair == NULL || PyList_Append(list, pair) < 0)
            Py_CLEAR(list);
        Py_XDECREF(pair);
    }
    if (list != NULL) {
        res = PyObject_CallFunctionObjArgs(pusher, (PyObject *)node, list, NULL);
        Py_DECREF(list);
    }
out:
    if (moved != small)
        PyMem_Free(moved);
    return res;
}

/* forward(outputs, seeds: {variable: tangent}, pusher): the tangent of each output (None where it
   does not depend on a seeded node), or NotImplemented while another walk runs */
PyObject *
marked_forward(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!GradConfigured || nargs != 3 || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "forward(outputs, seeds: dict, pusher), once configured");
        return NULL;
    }
    PyObject *seeds = args[1], *result = NULL;
    Walk w;
    int busy;
    PyObject *outs = walk_outputs(&w, args[0], seeds, &busy); /* the targets: the seeds' keys */
    if (outs == NULL)
        return busy ? Py_NewRef(Py_NotImplemented) : NULL;
    for (Py_ssize_t k = 0; k < w.n; k++) { /* the seeds of the live variables */
        TermObject *node = w.order[k];
        if (marks(node, w.epoch) & M_TARGET) {
            PyObject *t = PyDict_GetItemWithError(seeds, (PyObject *)node);
            if (t == NULL && PyErr_Occurred())
                goto out;
            Py_XINCREF(t);
            node->scratch = t;
        }
    }
    for (Py_ssize_t k = 0; k < w.n; k++) {
        TermObject *node = w.order[k];
        prefetch_walk(w.order, w.n, k, 1);
        if (TERM_NARGS(node) == 0 || (marks(node, w.epoch) & M_TARGET))
            continue;
        PyObject *t = push(node, w.epoch, args[2]);
        if (t == NULL)
            goto out;
        if (t == Py_None)
            Py_DECREF(t);
        else
            node->scratch = t;
    }
    result = PyList_New(PyTuple_GET_SIZE(outs));
    for (Py_ssize_t i = 0; result != NULL && i < PyTuple_GET_SIZE(outs); i++) {
        TermObject *o = TERM(PyTuple_GET_ITEM(outs, i));
        PyObject *t = (marks(o, w.epoch) & M_LIVE) && o->scratch != NULL ? o->scratch : Py_None;
        Py_INCREF(t);
        PyList_SET_ITEM(result, i, t);
    }
out:
    walk_end(&w);
    Py_DECREF(outs);
    return result;
}
