/* exprgraph.diff._csweep: the sweeps of exprgraph.diff in C (the files are listed in _csweep.h).

   The reverse sweep (diff.reverse.backprop, live_order), the forward sweep (diff.forward) and the
   dependency sets (diff.pattern) as marked walks over the terms, the folds of the adjoints they
   build, and the gradient rules of the op table replayed from templates that
   exprgraph.core.grad_template records. Each has a Python twin that gives the same results (the
   tests compare them on random inputs); diff/sweep.py loads this module and chooses.

   Terms come from exprgraph.core._cterm: its capsule lends the term struct's layout (checked by
   version and size at import), the facts it was configured with and its interning. The facts of
   the sweeps (the ops and constants of the folds, the recorder, sum_to) come from Python through
   configure(), so no fact about an op lives only in C. Needs the GIL, as the term base does. */

#include "_csweep.h"

CTermAPI *CT = NULL;

PyObject *OpConst = NULL, *OpAdd = NULL, *OpMul = NULL, *OpNeg = NULL, *OpTruediv = NULL;
PyObject *One = NULL, *OneInt = NULL, *One32 = NULL;
PyObject *ConstMarker[4];
PyObject *Recorder = NULL, *SumTo = NULL, *ConstFn = NULL, *DiffError = NULL, *Float32Type = NULL;
int GradConfigured = 0;

/* keep a new reference to o in *slot */
static void
keep(PyObject **slot, PyObject *o)
{
    Py_INCREF(o);
    Py_XSETREF(*slot, o);
}

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *recorder, *sum_to, *const_fn, *error, *ops, *ones, *float32;
    if (!PyArg_ParseTuple(args, "OOOOO!O!O:configure", &recorder, &sum_to, &const_fn, &error, &PyTuple_Type, &ops,
                          &PyTuple_Type, &ones, &float32))
        return NULL;
    if (!Configured) {
        PyErr_SetString(PyExc_RuntimeError, "the term base (exprgraph.core._cterm) is not configured yet");
        return NULL;
    }
    if (PyTuple_GET_SIZE(ops) != 5 || PyTuple_GET_SIZE(ones) != 3) {
        PyErr_SetString(PyExc_ValueError, "configure: ops (const, add, mul, neg, truediv) and ones (1.0, 1, f32 1)");
        return NULL;
    }
    for (int i = 0; i < 3; i++)
        if (Py_TYPE(PyTuple_GET_ITEM(ones, i)) != TermClass) {
            PyErr_SetString(PyExc_TypeError, "the ones must be terms");
            return NULL;
        }
    PyObject *markers[4];
    for (int i = 0; i < 4; i++) {
        markers[i] = Py_BuildValue("(sO)", "const", DtypeNames[i]);
        if (markers[i] == NULL) {
            while (--i >= 0)
                Py_DECREF(markers[i]);
            return NULL;
        }
    }
    for (int i = 0; i < 4; i++)
        Py_XSETREF(ConstMarker[i], markers[i]);
    PyObject **opslots[] = {&OpConst, &OpAdd, &OpMul, &OpNeg, &OpTruediv};
    for (int i = 0; i < 5; i++)
        keep(opslots[i], PyTuple_GET_ITEM(ops, i));
    PyObject **oneslots[] = {&One, &OneInt, &One32};
    for (int i = 0; i < 3; i++)
        keep(oneslots[i], PyTuple_GET_ITEM(ones, i));
    keep(&Recorder, recorder);
    keep(&SumTo, sum_to);
    keep(&ConstFn, const_fn);
    keep(&DiffError, error);
    keep(&Float32Type, float32);
    GradConfigured = 1;
    Py_RETURN_NONE;
}

/* for tests: the C folds against grad_tools.product / negate */
static PyObject *
py_product(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!GradConfigured || nargs != 2 || Py_TYPE(args[0]) != TermClass || !PyTuple_CheckExact(args[1]) ||
        PyTuple_GET_SIZE(args[1]) == 0) {
        PyErr_SetString(PyExc_TypeError, "product(g: Term, factors: non-empty tuple of terms), once configured");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[1]); i++)
        if (Py_TYPE(PyTuple_GET_ITEM(args[1], i)) != TermClass) {
            PyErr_SetString(PyExc_TypeError, "factors must be terms");
            return NULL;
        }
    return c_product(args[0], &PyTuple_GET_ITEM(args[1], 0), PyTuple_GET_SIZE(args[1]));
}

static PyObject *
py_negate(PyObject *module, PyObject *g)
{
    if (!GradConfigured || Py_TYPE(g) != TermClass) {
        PyErr_SetString(PyExc_TypeError, "negate(g: Term), once configured");
        return NULL;
    }
    return c_negate(g);
}

static PyObject *
py_fan_in(PyObject *module, PyObject *parts)
{
    if (!GradConfigured || !PyList_CheckExact(parts) || PyList_GET_SIZE(parts) < 2) {
        PyErr_SetString(PyExc_TypeError, "fan_in(parts: list of 2 or more terms), once configured");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(parts); i++)
        if (Py_TYPE(PyList_GET_ITEM(parts, i)) != TermClass) {
            PyErr_SetString(PyExc_TypeError, "parts must be terms");
            return NULL;
        }
    return c_fan_in(parts);
}

static PyObject *
template_count(PyObject *module, PyObject *unused)
{
    return PyLong_FromLong(template_total());
}

static PyMethodDef module_methods[] = {
    {"configure", (PyCFunction)configure, METH_VARARGS,
     "configure(recorder, sum_to, const, error, ops, ones, float32): what the sweeps call and compare with."},
    {"live_order", (PyCFunction)(void (*)(void))marked_live_order, METH_FASTCALL,
     "live_order(outputs, targets): the nodes with a target at or below them, children first, and that set."},
    {"product", (PyCFunction)(void (*)(void))py_product, METH_FASTCALL, "product(g, factors): grad_tools.product in C."},
    {"negate", py_negate, METH_O, "negate(g): grad_tools.negate in C."},
    {"fan_in", py_fan_in, METH_O, "fan_in(parts): the sum of adjoint parts, as reverse._fan_in."},
    {"assemble", (PyCFunction)(void (*)(void))py_assemble, METH_FASTCALL,
     "assemble(position, term, weights, numbers, out, signed=False): diff.blocks.BlockHessian.assemble's "
     "scatter-add (signed: a term index past the weights reads -weights[k - len(weights)])."},
    {"template_count", template_count, METH_NOARGS, "template_count(): recorded gradient templates."},
    {"_epoch", (PyCFunction)(void (*)(void))walk_epoch, METH_FASTCALL,
     "_epoch(n=None): the last marked walk's epoch; with n, set it (tests: the counter's wrap)."},
    {"backprop", (PyCFunction)(void (*)(void))marked_backprop, METH_FASTCALL,
     "backprop(outputs, seeds, targets, seed_for): reverse.backprop in C (NotImplemented while another runs)."},
    {"backprop_groups", (PyCFunction)(void (*)(void))grouped_backprop, METH_FASTCALL,
     "backprop_groups(outputs, seeds, targets, union, seed_for): reverse.backprop_groups in C, one walk for all "
     "groups (NotImplemented while another runs)."},
    {"forward", (PyCFunction)(void (*)(void))marked_forward, METH_FASTCALL,
     "forward(outputs, seeds, pusher): diff.forward's sweep in C (NotImplemented while another walk runs)."},
    {"dependency_sets", (PyCFunction)(void (*)(void))marked_dependency_sets, METH_FASTCALL,
     "dependency_sets(outputs, columns, max_pattern, no_grad, too_dense): diff.pattern's, in C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_csweep", "The sweeps of exprgraph.diff in C (see exprgraph.diff.sweep).", -1,
    module_methods,
};

PyMODINIT_FUNC
PyInit__csweep(void)
{
    CTermAPI *api = (CTermAPI *)PyCapsule_Import(CTERM_CAPSULE, 0);
    if (api == NULL)
        return NULL;
    if (api->version != CTERM_API_VERSION || api->term_size != sizeof(TermObject)) {
        PyErr_SetString(PyExc_ImportError, "exprgraph.diff._csweep was built against another exprgraph.core._cterm");
        return NULL;
    }
    CT = api;
    return PyModule_Create(&module_def);
}
