/* _cterm_term.c: TermBase, the interned term node (see _cterm.c and exprgraph.core.termbase).

   One hash table (_cterm_table.c) holds every live term as a borrowed pointer; a term unlinks
   itself when freed (_cterm_fields.c). The key is (op, the operand objects, the attr's key); a lookup that had to
   call Python (an attr's __eq__) starts again if the table changed meanwhile. A new term's dtype
   and shape come from the op's rule: for scalar operands of the elementwise rules this file
   applies the promotion table itself, anything else calls the rule. */

#include "_cterm.h"

/* ---- dtypes and shapes of the elementwise rules --------------------------------------------- */

int
dtype_index(PyObject *dtype)
{
    for (int i = 0; i < 4; i++)
        if (dtype == DtypeNames[i])
            return i;
    if (PyUnicode_CheckExact(dtype)) /* an equal name that is not the interned one */
        for (int i = 0; i < 4; i++)
            if (PyUnicode_Compare(dtype, DtypeNames[i]) == 0)
                return i;
    return -1;
}

/* dtype (its index in *dcode) and shape for scalar operands of an op whose rule is one of InferFns; 1
   when done, 0 when the Python rule must decide (a shape, an unknown dtype, another rule) */
static int
fast_infer(PyObject *infer, PyObject *const *items, Py_ssize_t n, PyObject **dtype, PyObject **shape, int *dcode)
{
    int kind = -1;
    for (int k = 0; k < 5; k++)
        if (infer == InferFns[k])
            kind = k;
    if (kind < 0)
        return 0;
    if (n == 0 || (kind == K_WHERE && n != 3))
        return 0;
    int d = D_BOOL;
    for (Py_ssize_t i = 0; i < n; i++) {
        TermObject *a = (TermObject *)items[i];
        if (TERM_HAS_SHAPE(a))
            return 0;
        int ad = TERM_DTYPE_INDEX(a);
        if (ad < 0)
            return 0;
        if (kind == K_WHERE && i == 0)
            continue; /* where(c, a, b): the promoted dtype of a and b */
        d = i == (kind == K_WHERE ? 1 : 0) ? ad : Promote[d][ad];
    }
    switch (kind) {
    case K_ARITH: d = Numeric[d]; break;
    case K_REAL: d = d == D_FLOAT32 ? D_FLOAT32 : D_FLOAT64; break;
    case K_SAME: case K_WHERE: break;
    default: d = D_BOOL;
    }
    *dtype = DtypeNames[d];
    *dcode = d;
    *shape = term_empty_tuple();
    return 1;
}

/* ---- construction ---------------------------------------------------------------------------- */

static int
arity_error(PyObject *op, Py_ssize_t n)
{
    PyObject *arity = OP_SLOT(op, OffArity);
    PyObject *name = OP_NAME(op);
    PyObject *lo = PyTuple_GET_ITEM(arity, 0), *hi = PyTuple_GET_ITEM(arity, 1);
    PyObject *want;
    if (hi != Py_None && PyObject_RichCompareBool(lo, hi, Py_EQ) == 1)
        want = PyObject_Str(lo);
    else if (hi == Py_None)
        want = PyUnicode_FromFormat("%S..", lo);
    else
        want = PyUnicode_FromFormat("%S..%S", lo, hi);
    if (want != NULL) {
        PyErr_Format(PyExc_TypeError, "%S takes %U operands, got %zd", name, want, n);
        Py_DECREF(want);
    }
    return -1;
}

/* the n operands at items as a new tuple (NULL: error set) */
static PyObject *
items_tuple(PyObject *const *items, Py_ssize_t n)
{
    PyObject *tup = PyTuple_New(n);
    if (tup == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(tup, i, Py_NewRef(items[i]));
    return tup;
}

/* validate the n operands at items and attr as Op.check does, and find the result's dtype and shape
   (new references in *dtype and *shape; the dtype's code in *dcode, see TERM_DTYPE_CODE); `args` is
   the operands' tuple or NULL (made when a Python dtype rule needs it) */
static int
check_and_infer(PyObject *op, PyObject *const *items, Py_ssize_t n, PyObject *args, PyObject *attr,
                PyObject **dtype, PyObject **shape, int *dcode)
{
    PyObject *arity = OP_SLOT(op, OffArity);
    if (arity == NULL || !PyTuple_Check(arity) || PyTuple_GET_SIZE(arity) != 2) {
        PyErr_SetString(PyExc_TypeError, "an Op's arity must be a (min, max) tuple");
        return -1;
    }
    Py_ssize_t lo = PyLong_AsSsize_t(PyTuple_GET_ITEM(arity, 0));
    if (lo == -1 && PyErr_Occurred())
        return -1;
    PyObject *hiobj = PyTuple_GET_ITEM(arity, 1);
    Py_ssize_t hi = -1;
    if (hiobj != Py_None) {
        hi = PyLong_AsSsize_t(hiobj);
        if (hi == -1 && PyErr_Occurred())
            return -1;
    }
    if (n < lo || (hi >= 0 && n > hi))
        return arity_error(op, n);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = items[i];
        if (Py_TYPE(a) != TermClass) {
            PyErr_Format(PyExc_TypeError, "operands of %S must be terms, got %s", OP_NAME(op),
                         Py_TYPE(a)->tp_name);
            return -1;
        }
    }
    if (attr != Py_None && OP_SLOT(op, OffAttrName) == Py_None) {
        PyObject *notation = OP_SLOT(op, OffNotation);
        int leaf = notation == LeafNotation || PyObject_RichCompareBool(notation, LeafNotation, Py_EQ) == 1;
        if (!leaf) {
            PyErr_Format(PyExc_TypeError, "%S takes no attribute, got %R", OP_NAME(op), attr);
            return -1;
        }
    }
    PyObject *infer = OP_SLOT(op, OffInfer);
    *dcode = -1;
    if (n == 0 ? leaf_infer(infer, attr, dtype, shape) : fast_infer(infer, items, n, dtype, shape, dcode)) {
        if (*dcode < 0)
            *dcode = dtype_index(*dtype);
        if (*dcode < 0)
            *dcode = TERM_DTYPE_OTHER;
        Py_INCREF(*dtype);
        Py_INCREF(*shape);
        return 0;
    }
    PyObject *made = args == NULL ? items_tuple(items, n) : NULL;
    if (args == NULL && made == NULL)
        return -1;
    PyObject *res = PyObject_CallFunctionObjArgs(infer, args != NULL ? args : made, attr, NULL);
    Py_XDECREF(made);
    if (res == NULL)
        return -1;
    if (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != 2) {
        PyErr_Format(PyExc_TypeError, "the dtype rule of %S must return (dtype, shape)", OP_NAME(op));
        Py_DECREF(res);
        return -1;
    }
    *dtype = PyTuple_GET_ITEM(res, 0);
    *shape = PyTuple_GET_ITEM(res, 1);
    *dcode = dtype_index(*dtype);
    if (*dcode < 0) {
        if (PyErr_Occurred()) { /* a str subclass whose comparison failed */
            Py_DECREF(res);
            return -1;
        }
        *dcode = TERM_DTYPE_OTHER; /* kept as given, after the operands */
    }
    Py_INCREF(*dtype);
    Py_INCREF(*shape);
    Py_DECREF(res);
    return 0;
}

/* Untrack a tuple that holds no object the collector follows (terms are untracked, ints are
   not containers): it can never be part of a cycle, and the collector would untrack it at its first
   pass anyway, after walking it once. Done here, the young generation stays smaller. */
void
untrack_leaf_tuple(PyObject *tup)
{
    if (!PyTuple_CheckExact(tup) || !PyObject_GC_IsTracked(tup))
        return;
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(tup, i);
        if (!PyType_IS_GC(Py_TYPE(x))) /* a term of the configured class: no collector header (inline test) */
            continue;
        if (PyObject_IS_GC(x) && PyObject_GC_IsTracked(x))
            return;
    }
    PyObject_GC_UnTrack(tup);
}

/* A zeroed term of class cls for n operands and `extra` more words after them (its count: n). A class
   without the collector header (see configure) gets exactly its bytes from term_mem_alloc
   (_cterm_alloc.c): tp_alloc would add a word for a sentinel item that terms do not have. */
static TermObject *
term_alloc(PyTypeObject *cls, Py_ssize_t n, Py_ssize_t extra)
{
    if (PyType_IS_GC(cls)) {
        /* (the class's item size makes tp_alloc write its var-size count where `op` lies: op is set after) */
        TermObject *t = (TermObject *)cls->tp_alloc(cls, n + extra);
        if (t == NULL)
            return NULL;
        if (PyObject_IS_GC((PyObject *)t))
            PyObject_GC_UnTrack(t); /* a heap subclass is a GC type; its terms cannot form cycles (see the top) */
        t->op = NULL;
        t->bits = (uint32_t)n;
        return t;
    }
    size_t bytes = (size_t)cls->tp_basicsize + (size_t)(n + extra) * sizeof(PyObject *);
    /* the configured class frees with term_mem_free; any other plain class (a subclass without slots of
       its own) frees with CPython's allocator, so its terms come from there */
    TermObject *t = (TermObject *)(cls->tp_free == term_mem_free ? term_mem_alloc(bytes) : PyObject_Malloc(bytes));
    if (t == NULL)
        return (TermObject *)PyErr_NoMemory();
    memset(t, 0, bytes);
    PyObject_Init((PyObject *)t, cls); /* (takes a reference to a heap class) */
    t->bits = (uint32_t)n;
    return t;
}

/* the error for a term of n operands, more than its count field holds (see TERM_MAX_ARGS) */
static PyObject *
too_many_operands(Py_ssize_t n)
{
    PyObject *cls = project_error("TooManyOperandsError");
    if (cls == NULL)
        return NULL;
    PyErr_Format(cls, "a term has at most %zd operands, not %zd: build a sum or product of that many terms as a sum "
                 "of partial sums", TERM_MAX_ARGS, n);
    Py_DECREF(cls);
    return NULL;
}

/* The new term (op, the n operands at items, attr) that the table did not hold, with its attr key
   (taken over) and hash; `args` is their tuple or NULL; fresh: it waits for its slot (see
   table_insert_later). The term found instead when the dtype rule ran Python code that built an
   equal one. */
static PyObject *
make_term(PyTypeObject *cls, PyObject *op, PyObject *const *items, Py_ssize_t n, PyObject *args, PyObject *attr,
          PyObject *key, Py_hash_t hash, int fresh)
{
    PyObject *dtype, *shape;
    int dcode;
    uint64_t version = TableVersion;
    if (n > TERM_MAX_ARGS) {
        Py_XDECREF(key);
        return too_many_operands(n);
    }
    if (check_and_infer(op, items, n, args, attr, &dtype, &shape, &dcode) < 0) {
        Py_XDECREF(key);
        return NULL;
    }
    /* the dtype rule ran Python code: an equal term may exist now (a fresh operand may have a user) */
    if (version != TableVersion) {
        TermObject *found = table_find(op, items, n, key, hash, 0);
        if (found != NULL || PyErr_Occurred()) {
            Py_XDECREF(key);
            Py_DECREF(dtype);
            Py_DECREF(shape);
            Py_XINCREF(found);
            return (PyObject *)found;
        }
    }
    /* the tail (see TermObject): a word for each of these only when the term needs it */
    int has_attr = attr != Py_None;
    int own_key = key != NULL && key != attr; /* else the key is attr itself (or none): no word for it */
    int other = dcode == TERM_DTYPE_OTHER;   /* a dtype none of the names */
    int has_shape = !(PyTuple_CheckExact(shape) && PyTuple_GET_SIZE(shape) == 0); /* not a scalar */
    TermObject *t = term_alloc(cls, n, has_attr + own_key + other + has_shape);
    if (t == NULL) {
        Py_XDECREF(key);
        Py_DECREF(dtype);
        Py_DECREF(shape);
        return NULL;
    }
    t->op = Py_NewRef(op);
    for (Py_ssize_t i = 0; i < n; i++)
        t->items[i] = Py_NewRef(items[i]);
    PyObject **tail = t->items + n;
    t->bits |= (uint32_t)dcode << TERM_DTYPE_SHIFT;
    if (has_attr) {
        *tail++ = Py_NewRef(attr);
        t->bits |= TERM_F_ATTR;
    }
    if (own_key) {
        *tail++ = key; /* the reference taken over */
        t->bits |= TERM_F_OWN_KEY;
    } else {
        Py_XDECREF(key);
    }
    if (other)
        *tail++ = dtype; /* the reference taken over */
    else
        Py_DECREF(dtype); /* a name: DtypeNames holds it */
    if (has_shape) {
        *tail++ = shape; /* the reference taken over */
        t->bits |= TERM_F_SHAPE;
    } else {
        Py_DECREF(shape); /* the empty tuple, read back as the shared one */
    }
    t->hash = STORED_HASH(hash);
    if ((fresh ? table_insert_later(t, hash) : table_insert(t, hash)) < 0) {
        t->hash = HASH_UNLINKED;
        Py_DECREF(t);
        return NULL;
    }
    return (PyObject *)t;
}

/* The interned term (op, the n operands at items, attr) of class `cls`: a new reference, or NULL with an
   exception. `args` is the operands' tuple, or NULL: a term keeps its operands in itself and never
   needs one (a Python dtype rule gets one made). `op` must be an Op. */
PyObject *
intern_items(PyTypeObject *cls, PyObject *op, PyObject *const *items, Py_ssize_t n, PyObject *args, PyObject *attr)
{
    PyObject *key = NULL;
    if (attr != Py_None && is_const_op(op))
        key = plain_const_key(attr);
    if (key == NULL && attr != Py_None) {
        PyObject *keyf = OP_SLOT(op, OffAttrKey);
        if (keyf != NULL && keyf != Py_None) {
            key = PyObject_CallOneArg(keyf, attr);
            if (key == NULL)
                return NULL;
        } else {
            key = Py_NewRef(attr);
        }
    }
    Py_hash_t hash = key_hash_items(op, items, n, key);
    if (hash == -1 && PyErr_Occurred()) {
        Py_XDECREF(key);
        return NULL;
    }
    table_prefetch(hash); /* the home slot's line is on its way while the operands are read */
    int fresh = has_fresh_operand(op, items, n); /* then only the waiting terms are read, and it waits too */
    TermObject *found = table_find(op, items, n, key, hash, fresh);
    if (found != NULL || PyErr_Occurred())
        goto done;
    return make_term(cls, op, items, n, args, attr, key, hash, fresh);
done: /* found (borrowed), or NULL with an error set */
    Py_XDECREF(key);
    Py_XINCREF(found);
    return (PyObject *)found;
}

/* The interned term (op, args, attr) of class `cls`: a new reference, or NULL with an exception.
   `args` must be a tuple; `op` an Op. */
PyObject *
intern_term(PyTypeObject *cls, PyObject *op, PyObject *args, PyObject *attr)
{
    return intern_items(cls, op, ITEMS(args), PyTuple_GET_SIZE(args), args, attr);
}

/* intern_items for other extensions (see _cterm_api.h) */
PyObject *
intern_items_api(PyTypeObject *cls, PyObject *op, PyObject *const *items, Py_ssize_t n, PyObject *attr)
{
    return intern_items(cls, op, items, n, NULL, attr);
}

/* intern_term with an args tuple the caller gives up (NULL: an error already set) */
PyObject *
intern_taking(PyTypeObject *cls, PyObject *op, PyObject *args, PyObject *attr)
{
    if (args == NULL)
        return NULL;
    PyObject *res = intern_term(cls, op, args, attr);
    Py_DECREF(args);
    return res;
}

/* every slot of an Op that C reads is set (an Op's fields are read-only once built, but a slot can
   still be emptied from Python by `object.__delattr__`) */
static int
op_slots_set(PyObject *op)
{
    Py_ssize_t offs[7] = {OffInfer, OffArity, OffAttrKey, OffAttrName, OffNotation, OffName, OffGrad};
    for (int i = 0; i < 7; i++)
        if (OP_SLOT(op, offs[i]) == NULL)
            return 0;
    return OffReadsConsts <= 0 || OP_SLOT(op, OffReadsConsts) != NULL;
}

/* The Op that `op` names (borrowed): an Op, or the name of a registered one; NULL with TypeError
   (or KeyError for an unknown name) for anything else, so no slot is ever read from a non-Op. */
PyObject *
resolve_op(PyObject *op)
{
    if (PyUnicode_CheckExact(op)) {
        PyObject *found = PyDict_GetItemWithError(Registry, op);
        if (found == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetObject(PyExc_KeyError, op);
            return NULL;
        }
        op = found;
    }
    if (Py_TYPE(op) != OpClass && !PyObject_TypeCheck(op, OpClass)) {
        PyErr_Format(PyExc_TypeError, "a term's op must be an Op or the name of a registered op, not %.100s",
                     Py_TYPE(op)->tp_name);
        return NULL;
    }
    if (!op_slots_set(op)) {
        PyErr_SetString(PyExc_TypeError, "this Op has a field that is not set (was it deleted?)");
        return NULL;
    }
    return op;
}

/* only the configured Term class is built and interned: a TermBase or a subclass of Term in the
   table would be what every later equal construction returns */
static int
check_class(PyTypeObject *cls)
{
    if (cls == TermClass)
        return 0;
    PyErr_Format(PyExc_TypeError, "only %s terms are built and interned, not %.100s (subclasses are not supported)",
                 TermClass != NULL ? TermClass->tp_name : "Term", cls->tp_name);
    return -1;
}

PyObject *
term_new(PyTypeObject *cls, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"op", "args", "attr", NULL};
    PyObject *op, *targs = NULL, *attr = Py_None;
    if (!Configured) {
        PyErr_SetString(PyExc_RuntimeError, "exprgraph.core._cterm is not configured");
        return NULL;
    }
    if (check_class(cls) < 0)
        return NULL;
    if (kwds == NULL && PyTuple_GET_SIZE(args) >= 1 && PyTuple_GET_SIZE(args) <= 3) {
        op = PyTuple_GET_ITEM(args, 0);
        if (PyTuple_GET_SIZE(args) > 1)
            targs = PyTuple_GET_ITEM(args, 1);
        if (PyTuple_GET_SIZE(args) > 2)
            attr = PyTuple_GET_ITEM(args, 2);
    } else if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OO:Term", names, &op, &targs, &attr)) {
        return NULL;
    }
    op = resolve_op(op);
    if (op == NULL)
        return NULL;
    if (targs != NULL && PyTuple_CheckExact(targs))
        return intern_term(cls, op, targs, attr);
    return intern_taking(cls, op, targs == NULL ? PyTuple_New(0) : PySequence_Tuple(targs), attr);
}

/* Term(op, args[, attr]) called through the vectorcall protocol (set on the configured term class,
   see configure): the same as term_new without packing the arguments into a tuple first. The class
   has no __init__ of its own, so nothing else runs when a type is called. */
PyObject *
term_vectorcall(PyObject *cls, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && n >= 2 && n <= 3 && Configured && (PyTypeObject *)cls == TermClass &&
        PyTuple_CheckExact(args[1])) {
        PyObject *op = resolve_op(args[0]);
        if (op == NULL)
            return NULL;
        return intern_term((PyTypeObject *)cls, op, args[1], n == 3 ? args[2] : Py_None);
    }
    /* anything else (keywords, a list of operands, no operands): the tuple way */
    PyObject *tuple = PyTuple_New(n);
    if (tuple == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(tuple, i, args[i]);
    }
    PyObject *kwds = NULL;
    if (kwnames != NULL) {
        kwds = PyDict_New();
        if (kwds == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++)
            if (PyDict_SetItem(kwds, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0) {
                Py_DECREF(tuple);
                Py_DECREF(kwds);
                return NULL;
            }
    }
    PyObject *result = term_new((PyTypeObject *)cls, tuple, kwds);
    Py_DECREF(tuple);
    Py_XDECREF(kwds);
    return result;
}
