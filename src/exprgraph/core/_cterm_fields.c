/* _cterm_fields.c: what a term is as a Python object (see _cterm.c): its attributes, the lazily made
   `args` tuple, its size in bytes, its freeing, and the type TermBase. Construction is _cterm_term.c. */

#include "_cterm.h"

/* ---- freeing ---------------------------------------------------------------------------------
   A term releases its operands itself (no tuple does it for it), so freeing the root of a chain would
   free the chain by recursion, one C frame per node. Past DEALLOC_NEST nested frees, an operand that
   would be freed now (its last reference) is set aside in Doomed instead, and the outermost free
   releases those one after another: the depth of C recursion stays bounded whatever the graph. */
#define DEALLOC_NEST 64

static PyObject **Doomed = NULL;
static size_t DoomedCount = 0, DoomedCap = 0;
static int DeallocNest = 0;

/* give up the reference to operand a: now, or later when it is the last one and the nest is deep */
static void
release_operand(PyObject *a)
{
    if (DeallocNest >= DEALLOC_NEST && Py_REFCNT(a) == 1) {
        if (DoomedCount == DoomedCap) {
            size_t cap = DoomedCap ? 2 * DoomedCap : 256;
            PyObject **grown = (PyObject **)PyMem_Realloc(Doomed, cap * sizeof(PyObject *));
            if (grown != NULL) {
                Doomed = grown;
                DoomedCap = cap;
            }
        }
        if (DoomedCount < DoomedCap) {
            Doomed[DoomedCount++] = a; /* the reference moves to the list */
            return;
        }
        /* out of memory for the list: free it here, with the recursion that costs */
    }
    Py_DECREF(a);
}

static void
term_dealloc(TermObject *self)
{
    if (self->hash != HASH_UNLINKED)
        table_unlink(self);
    if (self->weakreflist != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    Py_CLEAR(self->op);
    Py_ssize_t n = TERM_NARGS(self), tail = (Py_ssize_t)TERM_TAIL_WORDS(self);
    self->bits &= BITS_COUNT; /* the tail is gone (and the dtype's code with it) */
    for (Py_ssize_t i = n; i < n + tail; i++)
        Py_CLEAR(self->items[i]);
    Py_CLEAR(self->scratch);
    TermExtras *extras = TERM_EXTRAS(self);
    if (extras != NULL) {
        self->extras = NULL;
        Py_CLEAR(extras->free);
        Py_CLEAR(extras->args); /* a cached tuple: the operands are still held below */
        PyMem_Free(extras);
    }
    DeallocNest++;
    for (Py_ssize_t i = 0; i < n; i++) /* last: freeing them may free a long chain of operands */
        release_operand(self->items[i]);
    self->bits = 0;
    Py_TYPE(self)->tp_free((PyObject *)self);
    if (DeallocNest == 1) /* the outermost free: the operands set aside, freed at this depth */
        while (DoomedCount > 0) {
            PyObject *a = Doomed[--DoomedCount];
            Py_DECREF(a);
        }
    DeallocNest--;
}

static PyMemberDef term_members[] = {
    {"op", T_OBJECT_EX, offsetof(TermObject, op), READONLY, "The op of the term."},
    {"__weakref__", T_OBJECT, offsetof(TermObject, weakreflist), READONLY, NULL},
    {NULL},
};

/* the term's block of lazy caches, made (zeroed) on the first need and kept, grown by the size's word
   when `sized` asks for it; NULL: MemoryError set */
static TermExtras *
extras_of(TermObject *self, int sized)
{
    TermExtras *block = TERM_EXTRAS(self);
    if (block != NULL && (!sized || TERM_EXTRAS_HAS_SIZE(self)))
        return block;
    if (block == NULL) {
        block = (TermExtras *)PyMem_Calloc(1, sized ? sizeof(TermExtrasSized) : sizeof(TermExtras));
    } else {
        block = (TermExtras *)PyMem_Realloc(block, sizeof(TermExtrasSized));
        if (block != NULL)
            ((TermExtrasSized *)block)->size = 0;
    }
    if (block == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    self->extras = (TermExtras *)((uintptr_t)block | (sized ? TERM_EXTRAS_SIZED : 0));
    return block;
}

/* the cached size plus one, 0 when none is */
static Py_ssize_t
cached_size(TermObject *self)
{
    return TERM_EXTRAS_HAS_SIZE(self) ? ((TermExtrasSized *)TERM_EXTRAS(self))->size : 0;
}

/* `args`: the operands as a tuple, made at the first read and kept (the term holds its operands
   itself; most terms are never asked) */
static PyObject *
get_args(TermObject *self, void *unused)
{
    TermExtras *extras = extras_of(self, 0);
    if (extras == NULL)
        return NULL;
    if (extras->args == NULL) {
        Py_ssize_t n = TERM_NARGS(self);
        PyObject *tup = PyTuple_New(n);
        if (tup == NULL)
            return NULL;
        for (Py_ssize_t i = 0; i < n; i++)
            PyTuple_SET_ITEM(tup, i, Py_NewRef(self->items[i]));
        untrack_leaf_tuple(tup);
        extras->args = tup;
    }
    return Py_NewRef(extras->args);
}

/* `_free`: the cached free symbols, an AttributeError until set (as an empty slot reads) */
static PyObject *
get_free(TermObject *self, void *unused)
{
    TermExtras *extras = TERM_EXTRAS(self);
    if (extras == NULL || extras->free == NULL) {
        PyErr_Format(PyExc_AttributeError, "'%.100s' object has no attribute '_free'", Py_TYPE(self)->tp_name);
        return NULL;
    }
    return Py_NewRef(extras->free);
}

static int
set_free(TermObject *self, PyObject *value, void *unused)
{
    if (value == NULL) { /* del: as an empty slot, an AttributeError when there is nothing to delete */
        TermExtras *extras = TERM_EXTRAS(self);
        if (extras == NULL || extras->free == NULL) {
            PyErr_SetString(PyExc_AttributeError, "_free");
            return -1;
        }
        Py_CLEAR(extras->free);
        return 0;
    }
    TermExtras *extras = extras_of(self, 0);
    if (extras == NULL)
        return -1;
    Py_XSETREF(extras->free, Py_NewRef(value));
    return 0;
}

/* `attr`: the payload kept in the tail, or None */
static PyObject *
get_attr(TermObject *self, void *unused)
{
    return Py_NewRef(TERM_ATTR(self));
}

/* `shape`: the tuple kept in the tail, or the empty one */
static PyObject *
get_shape(TermObject *self, void *unused)
{
    return Py_NewRef(TERM_SHAPE(self));
}

/* `dtype`: one of the configured names, read from the term's code, or the object kept for another */
static PyObject *
get_dtype(TermObject *self, void *unused)
{
    return Py_NewRef(TERM_DTYPE(self));
}

/* the bytes of the term's own blocks: the fixed part, its operands, its tail, and the
   block of lazy caches when made (the objects cached there are their own) */
static PyObject *
term_sizeof(TermObject *self, PyObject *unused)
{
    Py_ssize_t words = TERM_NARGS(self) + (Py_ssize_t)TERM_TAIL_WORDS(self);
    Py_ssize_t extras = 0;
    if (self->extras != NULL)
        extras = TERM_EXTRAS_HAS_SIZE(self) ? (Py_ssize_t)sizeof(TermExtrasSized) : (Py_ssize_t)sizeof(TermExtras);
    return PyLong_FromSsize_t(Py_TYPE(self)->tp_basicsize + words * (Py_ssize_t)sizeof(PyObject *) + extras);
}

static PyMethodDef term_methods[] = {
    {"__sizeof__", (PyCFunction)term_sizeof, METH_NOARGS, "The bytes of the term's own block."},
    {NULL, NULL, 0, NULL},
};

/* _depth: a count cached in 24 bits of the term, _size: one cached in the block of lazy caches (made
   when set); both stored plus one (0: not computed yet, read as an AttributeError like an empty slot); a
   depth that does not fit is simply not cached */
static PyObject *
get_count(TermObject *self, void *which)
{
    Py_ssize_t v = which == NULL ? (Py_ssize_t)(self->depth & DEPTH_COUNT) : cached_size(self);
    if (v == 0) {
        PyErr_Format(PyExc_AttributeError, "'%.100s' object has no attribute '%s'", Py_TYPE(self)->tp_name,
                     which == NULL ? "_depth" : "_size");
        return NULL;
    }
    return PyLong_FromSsize_t(v - 1);
}

static int
set_count(TermObject *self, PyObject *value, void *which)
{
    if (value == NULL) {
        if (which == NULL)
            self->depth &= DEPTH_USERS; /* the depth's word keeps its user bits */
        else if (TERM_EXTRAS_HAS_SIZE(self))
            ((TermExtrasSized *)TERM_EXTRAS(self))->size = 0;
        return 0;
    }
    if (!PyLong_Check(value)) {
        PyErr_Format(PyExc_TypeError, "a term's cached %s must be an int", which == NULL ? "depth" : "size");
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    long long limit = which == NULL ? (long long)DEPTH_COUNT : (long long)PY_SSIZE_T_MAX;
    Py_ssize_t stored = overflow == 0 && v >= 0 && v < limit ? (Py_ssize_t)(v + 1) : 0;
    if (which == NULL) {
        self->depth = (self->depth & DEPTH_USERS) | (uint32_t)stored;
        return 0;
    }
    if (stored == 0 && cached_size(self) == 0)
        return 0; /* nothing cached: no block grown for it */
    TermExtras *extras = extras_of(self, 1);
    if (extras == NULL)
        return -1;
    ((TermExtrasSized *)extras)->size = stored;
    return 0;
}

static PyGetSetDef term_getset[] = {
    {"args", (getter)get_args, NULL, "The operands, a tuple of terms.", NULL},
    {"attr", (getter)get_attr, NULL, "The attribute payload (None for most ops).", NULL},
    {"dtype", (getter)get_dtype, NULL, "The element dtype.", NULL},
    {"shape", (getter)get_shape, NULL, "The shape, a tuple of ints and int64 terms.", NULL},
    {"_free", (getter)get_free, (setter)set_free, NULL, NULL},
    {"_depth", (getter)get_count, (setter)set_count, NULL, NULL},
    {"_size", (getter)get_count, (setter)set_count, NULL, (void *)1},
    {NULL},
};

PyTypeObject TermBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "exprgraph.core._cterm.TermBase",
    .tp_basicsize = offsetof(TermObject, items),
    .tp_itemsize = sizeof(PyObject *),
    .tp_dealloc = (destructor)term_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The fields of an interned term, in C (subclassed by exprgraph.Term).",
    .tp_weaklistoffset = offsetof(TermObject, weakreflist),
    .tp_as_number = &TermNumberMethods,
    .tp_members = term_members,
    .tp_methods = term_methods,
    .tp_getset = term_getset,
    .tp_new = term_new,
};
