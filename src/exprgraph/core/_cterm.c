/* exprgraph.core._cterm: the interned term node in C (the fast path of exprgraph.core.termbase;
   the files are listed in _cterm.h). Other extensions reach it through the capsule _C_API
   (_cterm_api.h); it calls none of them.

   TermBase holds the fields of a term (op, args, attr, dtype, shape) and its lazily filled caches
   (_free, _depth, _size) in a C struct; exprgraph.core.term.Term subclasses it and adds every
   method. Construction interns: a term equal to a live one (same op object, the same operand
   objects, an equal attr key) is that one. Live terms sit in one hash table of borrowed pointers;
   a term unlinks itself when it is freed, so the table needs no weak references. Terms are not
   tracked by the cyclic collector: a term refers only to older terms (its operands, held in itself), its
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

/* Terms are never tracked by the cyclic collector (see the top), yet Python gives every class
   declared in Python (the Term subclass) the collector's 16-byte header per instance. Before the
   first term exists (construction needs configure), the class is made a plain one: instances are
   allocated without the header by term_mem_alloc and freed with term_mem_free (_cterm_alloc.c), whose
   blocks are the terms' exact sizes; the class's own deallocator then
   takes CPython's path for such classes (the base's dealloc, then the class's reference). Only a
   class whose instances add nothing to the base (no __dict__, no slots) is changed. */
static void
drop_collector_header(PyTypeObject *cls)
{
    if (!PyType_IS_GC(cls) || cls->tp_basicsize != TermBaseType.tp_basicsize || cls->tp_dictoffset != 0 ||
        (cls->tp_flags & Py_TPFLAGS_MANAGED_DICT) || cls->tp_free != PyObject_GC_Del || table_count() != 0)
        return;
    cls->tp_flags &= ~Py_TPFLAGS_HAVE_GC;
    cls->tp_free = term_mem_free;
    cls->tp_traverse = NULL;
    cls->tp_clear = NULL;
    PyType_Modified(cls);
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
    Py_ssize_t offs[8];
    const char *names[8] = {"infer", "arity", "attr_key", "attr_name", "notation", "name", "grad",
                            "grad_reads_constants"};
    for (int i = 0; i < 8; i++) {
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
    drop_collector_header(TermClass);
    /* calls of the class go straight to the interning (a class without __new__ or __init__ of its own) */
    if (TermClass->tp_new == TermBaseType.tp_new && TermClass->tp_init == PyBaseObject_Type.tp_init)
        TermClass->tp_vectorcall = term_vectorcall;
    Py_INCREF(registry);
    Py_XSETREF(Registry, registry);
    Py_INCREF(op_class);
    Py_XSETREF(OpClass, (PyTypeObject *)op_class);
    install_op_call(OpClass); /* an Op called with terms interns at once (_cterm_ops.c) */
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
    OffReadsConsts = offs[7];
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
    PyObject *key = attr != Py_None && is_const_op(op) ? plain_const_key(attr) : NULL;
    if (key == NULL && attr != Py_None) {
        PyObject *keyf = OP_SLOT(op, OffAttrKey);
        key = keyf != NULL && keyf != Py_None ? PyObject_CallOneArg(keyf, attr) : (Py_INCREF(attr), attr);
        if (key == NULL)
            return NULL;
    }
    Py_hash_t hash = key_hash(op, args[1], key);
    TermObject *t = NULL;
    if (!(hash == -1 && PyErr_Occurred()))
        t = table_find(op, ITEMS(args[1]), PyTuple_GET_SIZE(args[1]), key, hash, 0);
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

static PyObject *
capacity(PyObject *module, PyObject *unused)
{
    return PyLong_FromSize_t(table_capacity());
}

static PyObject *
memory_chunks(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    size_t carved, empty;
    term_mem_stats(&carved, &empty);
    return Py_BuildValue("nn", (Py_ssize_t)carved, (Py_ssize_t)empty);
}

static PyMethodDef module_methods[] = {
    {"configure", (PyCFunction)configure, METH_VARARGS,
     "configure(term_class, registry, op_class, dtypes, promote, numeric, infers, leaf): set the facts from Python."},
    {"operators", set_operators, METH_VARARGS,
     "operators(methods, op_names, forwards, reflecteds): the number slots' ops and Python fallbacks."},
    {"leaves", set_leaf_rules, METH_VARARGS,
     "leaves(symbol_infer, const_infer, reserved, max_token): the leaf rules C may answer for, the plain names."},
    {"plain_symbol", plain_symbol, METH_O, "plain_symbol(name): Symbol(name) for a plain name, else None."},
    {"find", (PyCFunction)(void (*)(void))find, METH_FASTCALL, "find(op, args, attr=None): the live term, or None."},
    {"postorder", (PyCFunction)(void (*)(void))term_postorder, METH_FASTCALL,
     "postorder(roots, stop): walk.postorder_until's list over C terms, or None for other roots."},
    {"table_size", table_size, METH_NOARGS, "table_size(): the number of live interned terms."},
    {"table_capacity", capacity, METH_NOARGS, "table_capacity(): the number of slots of the intern table."},
    {"memory_chunks", memory_chunks, METH_NOARGS,
     "memory_chunks(): (chunks of terms' memory used so far, those empty now); (0, 0) without chunks."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_cterm", "The interned term node in C (see exprgraph.core.termbase).", -1,
    module_methods,
};

/* what other extensions use (see _cterm_api.h); static: it lives as long as the module's library */
static CTermAPI Api = {
    CTERM_API_VERSION, sizeof(TermObject), &Configured, &TermClass, DtypeNames, Promote, Numeric, InferFns,
    &OffInfer, &OffGrad, &OffName, &OffReadsConsts, dtype_index, mix, intern_taking, intern_items_api,
    table_clear_marks,
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
    PyObject *capsule = PyCapsule_New(&Api, CTERM_CAPSULE, NULL);
    if (capsule == NULL || PyModule_AddObject(m, "_C_API", capsule) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
