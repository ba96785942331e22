/* exprgraph.core._cterm: the interned term node and the reverse sweep in C (the fast path of
   exprgraph.core.termbase and exprgraph.diff.reverse; the files are listed in _cterm.h).

   TermBase holds the fields of a term (op, args, attr, dtype, shape) and its lazily filled caches
   (_free, _depth, _size) in a C struct; exprgraph.core.term.Term subclasses it and adds every
   method. Construction interns: a term equal to a live one (same op object, the same operand
   objects, an equal attr key) is that one. Live terms sit in one hash table of borrowed pointers;
   a term unlinks itself when it is freed, so the table needs no weak references. Terms are not
   tracked by the cyclic collector: a term refers only to older terms (through its args tuple), its
   op and its attr, so it cannot be part of a cycle unless an attr object is later mutated to refer
   back to it.

   Every fact about dtypes and ops comes from Python through configure(): the Term class, the op
   registry, the dtype names with numpy's promotion table, the slot offsets of Op, and the four
   elementwise dtype rules (exprgraph.core.inference) that this file applies itself to scalar
   operands. Any other rule, and any operand with a shape, goes to the op's own Python `infer`.
   The pure Python twin (termbase.py) gives the same results; tests run both.

   Needs the GIL: the table is mutated only while it is held, and a lookup that called back into
   Python (an attr's __eq__, an op's infer) starts again if the table changed meanwhile. */

#include "_cterm.h"

/* ---- configuration (see _cterm.h) ------------------------------------------------------------ */

PyTypeObject *TermClass = NULL;
PyTypeObject *OpClass = NULL;
PyObject *Registry = NULL;
PyObject *DtypeNames[4];
int Promote[4][4];
int Numeric[4];
PyObject *InferFns[5];
PyObject *LeafNotation = NULL;
Py_ssize_t OffInfer, OffArity, OffAttrKey, OffAttrName, OffNotation, OffName, OffGrad, OffReadsConsts;
int Configured = 0;
PyObject *OpConst = NULL, *OpAdd = NULL, *OpMul = NULL, *OpNeg = NULL, *OpTruediv = NULL;
PyObject *One = NULL, *OneInt = NULL, *One32 = NULL;
PyObject *KeyF = NULL, *KeyI = NULL;
PyObject *ConstMarker[4];
PyObject *Recorder = NULL, *SumTo = NULL, *ConstFn = NULL, *DiffError = NULL, *Float32Type = NULL;
int GradConfigured = 0;

static Py_ssize_t slot_offset(PyObject *cls, const char *name);

static PyObject *
configure_grad(PyObject *module, PyObject *args)
{
    PyObject *recorder, *sum_to, *const_fn, *error, *ops, *ones, *float32;
    if (!PyArg_ParseTuple(args, "OOOOO!O!O:configure_grad", &recorder, &sum_to, &const_fn, &error, &PyTuple_Type,
                          &ops, &PyTuple_Type, &ones, &float32))
        return NULL;
    if (!Configured) {
        PyErr_SetString(PyExc_RuntimeError, "configure() comes first");
        return NULL;
    }
    if (PyTuple_GET_SIZE(ops) != 5 || PyTuple_GET_SIZE(ones) != 3) {
        PyErr_SetString(PyExc_ValueError, "configure_grad: ops (const, add, mul, neg, truediv) and ones (1.0, 1, f32 1)");
        return NULL;
    }
    PyObject **slots[] = {&OpConst, &OpAdd, &OpMul, &OpNeg, &OpTruediv};
    for (int i = 0; i < 5; i++) {
        Py_INCREF(PyTuple_GET_ITEM(ops, i));
        Py_XSETREF(*slots[i], PyTuple_GET_ITEM(ops, i));
    }
    PyObject **oneslots[] = {&One, &OneInt, &One32};
    for (int i = 0; i < 3; i++) {
        PyObject *o = PyTuple_GET_ITEM(ones, i);
        if (Py_TYPE(o) != TermClass) {
            PyErr_SetString(PyExc_TypeError, "the ones must be terms");
            return NULL;
        }
        Py_INCREF(o);
        Py_XSETREF(*oneslots[i], o);
    }
    Py_XSETREF(KeyF, PyUnicode_InternFromString("f"));
    Py_XSETREF(KeyI, PyUnicode_InternFromString("i"));
    if (KeyF == NULL || KeyI == NULL)
        return NULL;
    for (int i = 0; i < 4; i++) {
        PyObject *marker = Py_BuildValue("(sO)", "const", DtypeNames[i]);
        if (marker == NULL)
            return NULL;
        Py_XSETREF(ConstMarker[i], marker);
    }
    PyObject *op_class = (PyObject *)Py_TYPE(OpConst);
    OffReadsConsts = slot_offset(op_class, "grad_reads_constants");
    if (OffReadsConsts < 0)
        return NULL;
    Py_INCREF(recorder);
    Py_XSETREF(Recorder, recorder);
    Py_INCREF(sum_to);
    Py_XSETREF(SumTo, sum_to);
    Py_INCREF(const_fn);
    Py_XSETREF(ConstFn, const_fn);
    Py_INCREF(error);
    Py_XSETREF(DiffError, error);
    Py_INCREF(float32);
    Py_XSETREF(Float32Type, float32);
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

/* ---- module functions ------------------------------------------------------------------------ */

static Py_ssize_t
slot_offset(PyObject *cls, const char *name)
{
    PyObject *descr = PyObject_GetAttrString(cls, name);
    if (descr == NULL)
        return -1;
    if (!PyObject_TypeCheck(descr, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "Op.%s must be a slot", name);
        Py_DECREF(descr);
        return -1;
    }
    Py_ssize_t off = ((PyMemberDescrObject *)descr)->d_member->offset;
    Py_DECREF(descr);
    return off;
}

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *term_class, *registry, *op_class, *dtypes, *promote, *numeric, *infers, *leaf;
    if (!PyArg_ParseTuple(args, "O!O!OO!O!O!O!U:configure", &PyType_Type, &term_class, &PyDict_Type, &registry,
                          &op_class, &PyTuple_Type, &dtypes, &PyTuple_Type, &promote, &PyTuple_Type, &numeric,
                          &PyTuple_Type, &infers, &leaf))
        return NULL;
    if (!PyType_Check(op_class)) {
        PyErr_SetString(PyExc_TypeError, "the op class must be a class");
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)term_class, &TermBaseType)) {
        PyErr_SetString(PyExc_TypeError, "the term class must subclass TermBase");
        return NULL;
    }
    if (PyTuple_GET_SIZE(dtypes) != 4 || PyTuple_GET_SIZE(promote) != 16 || PyTuple_GET_SIZE(numeric) != 4 ||
        PyTuple_GET_SIZE(infers) != 5) {
        PyErr_SetString(PyExc_ValueError, "configure: 4 dtypes, a 4x4 promotion table, 4 numeric dtypes, 5 rules");
        return NULL;
    }
    Py_ssize_t offs[7];
    const char *names[7] = {"infer", "arity", "attr_key", "attr_name", "notation", "name", "grad"};
    for (int i = 0; i < 7; i++) {
        offs[i] = slot_offset(op_class, names[i]);
        if (offs[i] < 0)
            return NULL;
    }
    for (int i = 0; i < 4; i++) {
        PyObject *d = PyTuple_GET_ITEM(dtypes, i);
        if (!PyUnicode_CheckExact(d)) {
            PyErr_SetString(PyExc_TypeError, "dtype names must be str");
            return NULL;
        }
        Py_INCREF(d);
        PyUnicode_InternInPlace(&d);
        Py_XSETREF(DtypeNames[i], d);
        Numeric[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(numeric, i));
        for (int j = 0; j < 4; j++)
            Promote[i][j] = (int)PyLong_AsLong(PyTuple_GET_ITEM(promote, 4 * i + j));
    }
    for (int i = 0; i < 5; i++) {
        Py_INCREF(PyTuple_GET_ITEM(infers, i));
        Py_XSETREF(InferFns[i], PyTuple_GET_ITEM(infers, i));
    }
    if (PyErr_Occurred())
        return NULL;
    Py_INCREF(term_class);
    Py_XSETREF(TermClass, (PyTypeObject *)term_class);
    /* calls of the class go straight to the interning (a class without __new__ or __init__ of its own) */
    if (TermClass->tp_new == TermBaseType.tp_new && TermClass->tp_init == PyBaseObject_Type.tp_init)
        TermClass->tp_vectorcall = term_vectorcall;
    Py_INCREF(registry);
    Py_XSETREF(Registry, registry);
    Py_INCREF(op_class);
    Py_XSETREF(OpClass, (PyTypeObject *)op_class);
    Py_INCREF(leaf);
    PyUnicode_InternInPlace(&leaf);
    Py_XSETREF(LeafNotation, leaf);
    OffInfer = offs[0];
    OffArity = offs[1];
    OffAttrKey = offs[2];
    OffAttrName = offs[3];
    OffNotation = offs[4];
    OffName = offs[5];
    OffGrad = offs[6];
    Configured = 1;
    Py_RETURN_NONE;
}

static PyObject *
find(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 2 || nargs > 3 || !PyTuple_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "find(op, args: tuple, attr=None)");
        return NULL;
    }
    PyObject *op = resolve_op(args[0]);
    if (op == NULL)
        return NULL;
    PyObject *attr = nargs == 3 ? args[2] : Py_None;
    PyObject *key = NULL;
    if (attr != Py_None) {
        PyObject *keyf = OP_SLOT(op, OffAttrKey);
        key = keyf != NULL && keyf != Py_None ? PyObject_CallOneArg(keyf, attr) : (Py_INCREF(attr), attr);
        if (key == NULL)
            return NULL;
    }
    Py_hash_t hash = key_hash(op, args[1], key);
    TermObject *t = NULL;
    if (!(hash == -1 && PyErr_Occurred()))
        t = table_find(op, args[1], key, hash);
    Py_XDECREF(key);
    if (t == NULL) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;
    }
    Py_INCREF(t);
    return (PyObject *)t;
}

static PyObject *
table_size(PyObject *module, PyObject *unused)
{
    return PyLong_FromSize_t(table_count());
}

static PyMethodDef module_methods[] = {
    {"configure", (PyCFunction)configure, METH_VARARGS,
     "configure(term_class, registry, op_class, dtypes, promote, numeric, infers, leaf): set the facts from Python."},
    {"find", (PyCFunction)(void (*)(void))find, METH_FASTCALL, "find(op, args, attr=None): the live term, or None."},
    {"table_size", table_size, METH_NOARGS, "table_size(): the number of live interned terms."},
    {"configure_grad", (PyCFunction)configure_grad, METH_VARARGS,
     "configure_grad(recorder, sum_to, const, error, ops, ones, float32): what the reverse sweep calls."},
    {"live_order", (PyCFunction)(void (*)(void))marked_live_order, METH_FASTCALL,
     "live_order(outputs, targets): the nodes with a target at or below them, children first, and that set."},
    {"product", (PyCFunction)(void (*)(void))py_product, METH_FASTCALL, "product(g, factors): grad_tools.product in C."},
    {"negate", py_negate, METH_O, "negate(g): grad_tools.negate in C."},
    {"fan_in", py_fan_in, METH_O, "fan_in(parts): the sum of adjoint parts, as reverse._fan_in."},
    {"template_count", template_count, METH_NOARGS, "template_count(): recorded gradient templates."},
    {"backprop", (PyCFunction)(void (*)(void))marked_backprop, METH_FASTCALL,
     "backprop(outputs, seeds, targets, seed_for): reverse.backprop in C (NotImplemented while another runs)."},
    {"forward", (PyCFunction)(void (*)(void))marked_forward, METH_FASTCALL,
     "forward(outputs, seeds, pusher): diff.forward's sweep in C (NotImplemented while another walk runs)."},
    {"dependency_sets", (PyCFunction)(void (*)(void))marked_dependency_sets, METH_FASTCALL,
     "dependency_sets(outputs, columns, max_pattern, no_grad, too_dense): diff.pattern's, in C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_cterm", "The interned term node in C (see exprgraph.core.termbase).", -1,
    module_methods,
};

PyMODINIT_FUNC
PyInit__cterm(void)
{
    if (PyType_Ready(&TermBaseType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    Py_INCREF(&TermBaseType);
    if (PyModule_AddObject(m, "TermBase", (PyObject *)&TermBaseType) < 0) {
        Py_DECREF(&TermBaseType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
