/* _csweep_pattern.c: dependency sets of a Jacobian's rows (exprgraph.diff.pattern), as a marked
   walk: each node's set of columns is kept in its scratch while the walk runs.

   A set is kept as a bytes object holding its column numbers as ascending uint32 (a third of a
   small frozenset's memory, and unions and subset tests are merges); only the outputs' sets become
   frozensets, of the columns dict's own int objects. Sets are shared exactly as the Python twin
   shares its frozensets, so the sizes it counts against max_pattern are the same. */

#include "_csweep.h"

#define CSET_N(s) ((Py_ssize_t)(PyBytes_GET_SIZE(s) / sizeof(uint32_t)))
#define CSET_AT(s) ((const uint32_t *)PyBytes_AS_STRING(s))

/* a new set of the n ascending columns at cols */
static PyObject *
cset_new(const uint32_t *cols, Py_ssize_t n)
{
    return PyBytes_FromStringAndSize((const char *)cols, n * (Py_ssize_t)sizeof(uint32_t));
}

/* whether every column of a is in b (both ascending) */
static int
cset_within(PyObject *a, PyObject *b)
{
    Py_ssize_t na = CSET_N(a), nb = CSET_N(b), j = 0;
    if (na > nb)
        return 0;
    const uint32_t *x = CSET_AT(a), *y = CSET_AT(b);
    for (Py_ssize_t i = 0; i < na; i++) {
        while (j < nb && y[j] < x[i])
            j++;
        if (j == nb || y[j] != x[i])
            return 0;
        j++;
    }
    return 1;
}

/* a growable buffer of columns for the unions */
typedef struct { uint32_t *at; Py_ssize_t cap; } Buf;

static int
buf_fit(Buf *b, Py_ssize_t n)
{
    if (n <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 64;
    while (cap < n)
        cap *= 2;
    uint32_t *grown = PyMem_Realloc(b->at, (size_t)cap * sizeof(uint32_t));
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->at = grown;
    b->cap = cap;
    return 0;
}

/* the union of the sets sets[0..n) as a new set; tmp: a second buffer for the merges */
static PyObject *
cset_union(PyObject *const *sets, Py_ssize_t n, Buf *acc, Buf *tmp)
{
    Py_ssize_t m = CSET_N(sets[0]);
    if (buf_fit(acc, m) < 0)
        return NULL;
    if (m)
        memcpy(acc->at, CSET_AT(sets[0]), (size_t)m * sizeof(uint32_t));
    for (Py_ssize_t k = 1; k < n; k++) {
        Py_ssize_t nb = CSET_N(sets[k]), i = 0, j = 0, o = 0;
        if (buf_fit(tmp, m + nb) < 0)
            return NULL;
        const uint32_t *x = acc->at, *y = CSET_AT(sets[k]);
        uint32_t *out = tmp->at;
        while (i < m && j < nb) {
            uint32_t a = x[i], b = y[j];
            out[o++] = a < b ? a : b;
            i += a <= b;
            j += b <= a;
        }
        while (i < m)
            out[o++] = x[i++];
        while (j < nb)
            out[o++] = y[j++];
        Buf swap = *acc;
        *acc = *tmp;
        *tmp = swap;
        m = o;
    }
    return cset_new(acc->at, m);
}

/* the set with one more column c (c not in s) */
static PyObject *
cset_with(PyObject *s, uint32_t c, Buf *acc)
{
    Py_ssize_t n = CSET_N(s), i = 0;
    if (buf_fit(acc, n + 1) < 0)
        return NULL;
    const uint32_t *x = CSET_AT(s);
    while (i < n && x[i] < c)
        i++;
    if (i < n && x[i] == c)
        return Py_NewRef(s);
    memcpy(acc->at, x, (size_t)i * sizeof(uint32_t));
    acc->at[i] = c;
    memcpy(acc->at + i + 1, x + i, (size_t)(n - i) * sizeof(uint32_t));
    return cset_new(acc->at, n + 1);
}

/* each column number's int object (borrowed from the columns dict), when every value is an int in
   [0, 2**32) not far above the number of columns; NULL with no exception otherwise */
static PyObject **
column_objects(PyObject *columns)
{
    Py_ssize_t pos = 0, top = -1;
    PyObject *key, *value;
    while (PyDict_Next(columns, &pos, &key, &value)) {
        if (!PyLong_CheckExact(value))
            return NULL;
        long long c = PyLong_AsLongLong(value);
        if (c == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
        if (c < 0 || c > (long long)UINT32_MAX || c > 4 * (long long)PyDict_GET_SIZE(columns) + 1024)
            return NULL;
        if (c > top)
            top = (Py_ssize_t)c;
    }
    PyObject **objs = PyMem_Calloc((size_t)(top + 2), sizeof(PyObject *));
    if (objs == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    pos = 0;
    while (PyDict_Next(columns, &pos, &key, &value))
        objs[PyLong_AsSsize_t(value)] = value;
    return objs;
}

/* the frozenset of a set's columns */
static PyObject *
cset_frozen(PyObject *s, PyObject **objs)
{
    PyObject *fs = PyFrozenSet_New(NULL);
    const uint32_t *x = CSET_AT(s);
    for (Py_ssize_t i = 0; fs != NULL && i < CSET_N(s); i++)
        if (PySet_Add(fs, objs[x[i]]) < 0)
            Py_CLEAR(fs);
    return fs;
}

/* call too_dense(size, limit), which raises */
static void
raise_too_dense(PyObject *too_dense, Py_ssize_t size, Py_ssize_t limit)
{
    PyObject *r = PyObject_CallFunction(too_dense, "nn", size, limit);
    Py_XDECREF(r);
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "too_dense() must raise");
}

/* the set of one node with operands from its operands' sets (a new reference; NULL: none, or an
   error when one is set); adds the size of any set it makes to *built, as the Python twin counts */
static PyObject *
node_set(TermObject *node, uint32_t epoch, Buf *acc, Buf *tmp, Py_ssize_t *built)
{
    Py_ssize_t na = TERM_NARGS(node), nmore = 0;
    PyObject *small[8];
    PyObject **found = na <= 8 ? small : PyMem_Malloc((size_t)na * sizeof(PyObject *));
    if (found == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < na; i++) {
        TermObject *a = TERM(TERM_ARG(node, i));
        PyObject *s = (marks(a, epoch) & M_SEEN) ? a->scratch : NULL;
        if (s == NULL || (nmore > 0 && s == found[0]))
            continue;
        found[nmore++] = s;
    }
    PyObject *best = NULL;
    if (nmore == 1)
        best = Py_NewRef(found[0]);
    else if (nmore == 2) { /* two operands' sets: keep the one holding the other */
        PyObject *big = found[0], *other = found[1];
        if (CSET_N(other) > CSET_N(big)) {
            big = found[1];
            other = found[0];
        }
        if (cset_within(other, big))
            best = Py_NewRef(big);
        else if ((best = cset_union(found, 2, acc, tmp)) != NULL)
            *built += CSET_N(best);
    } else if (nmore > 2) {
        PyObject *biggest = found[0];
        for (Py_ssize_t i = 1; i < nmore; i++)
            if (CSET_N(found[i]) > CSET_N(biggest))
                biggest = found[i];
        int holds = 1;
        for (Py_ssize_t i = 0; i < nmore && holds; i++)
            holds = found[i] == biggest || cset_within(found[i], biggest);
        if (holds)
            best = Py_NewRef(biggest);
        else if ((best = cset_union(found, nmore, acc, tmp)) != NULL)
            *built += CSET_N(best);
    }
    if (found != small)
        PyMem_Free(found);
    return best;
}

/* dependency_sets(outputs, columns, max_pattern, no_grad, too_dense): diff.pattern.dependency_sets
   with marks, the sets kept in the terms' scratch (NotImplemented: a walk runs, or a column is not
   a small non-negative int; the Python twin answers then) */
PyObject *
marked_dependency_sets(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!Configured || nargs != 5 || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "dependency_sets(outputs, columns: dict, max_pattern, no_grad, too_dense)");
        return NULL;
    }
    PyObject *columns = args[1], *no_grad = args[3], *too_dense = args[4];
    Py_ssize_t limit = PyLong_AsSsize_t(args[2]);
    if (limit == -1 && PyErr_Occurred())
        return NULL;
    PyObject **objs = column_objects(columns);
    if (objs == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_NotImplemented);
    PyObject *result = NULL, *frozen = NULL;
    Buf acc = {NULL, 0}, tmp = {NULL, 0};
    Walk w;
    int busy;
    PyObject *outs = walk_outputs(&w, args[0], columns, &busy); /* the targets: the columns' keys */
    if (outs == NULL) {
        PyMem_Free(objs);
        return busy ? Py_NewRef(Py_NotImplemented) : NULL;
    }
    uint32_t epoch = w.epoch;
    Py_ssize_t built = 0;
    for (Py_ssize_t k = 0; k < w.n; k++) {
        TermObject *node = w.order[k];
        prefetch_walk(w.order, w.n, k, 1);
        Py_ssize_t na = TERM_NARGS(node);
        long long column = -1;
        if (marks(node, epoch) & M_TARGET) {
            PyObject *c = PyDict_GetItemWithError(columns, (PyObject *)node);
            if (c == NULL) {
                if (!PyErr_Occurred())
                    PyErr_SetObject(PyExc_KeyError, (PyObject *)node);
                goto out;
            }
            column = PyLong_AsLongLong(c); /* (checked by column_objects) */
        }
        if (na == 0) {
            uint32_t one = (uint32_t)column;
            if ((node->scratch = cset_new(&one, 1)) == NULL)
                goto out;
            continue;
        }
        if (OP_SLOT(node->op, OffGrad) == no_grad)
            continue;
        Py_ssize_t before = built;
        PyObject *best = node_set(node, epoch, &acc, &tmp, &built);
        if (best == NULL && PyErr_Occurred())
            goto out;
        if (built != before && built > limit) {
            Py_XDECREF(best);
            raise_too_dense(too_dense, built, limit);
            goto out;
        }
        if (column >= 0) { /* a target with operands is its own column too */
            uint32_t one = (uint32_t)column;
            PyObject *with = best == NULL ? cset_new(&one, 1) : cset_with(best, one, &acc);
            Py_XDECREF(best);
            if ((best = with) == NULL)
                goto out;
        }
        node->scratch = best;
    }
    result = PyList_New(PyTuple_GET_SIZE(outs));
    frozen = PyDict_New(); /* a set -> its frozenset: outputs sharing a set share the frozenset */
    if (result == NULL || frozen == NULL)
        goto fail;
    Py_ssize_t entries = 0;
    PyObject *empty = NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(outs); i++) {
        TermObject *o = TERM(PyTuple_GET_ITEM(outs, i));
        PyObject *s = (marks(o, epoch) & M_LIVE) ? o->scratch : NULL, *fs;
        if (s == NULL) {
            if (empty == NULL && (empty = PyFrozenSet_New(NULL)) == NULL)
                goto fail;
            fs = Py_NewRef(empty);
        } else if ((fs = PyDict_GetItemWithError(frozen, s)) != NULL)
            Py_INCREF(fs);
        else if (PyErr_Occurred() || (fs = cset_frozen(s, objs)) == NULL || PyDict_SetItem(frozen, s, fs) < 0) {
            Py_XDECREF(fs);
            Py_XDECREF(empty);
            goto fail;
        }
        PyList_SET_ITEM(result, i, fs);
        entries += PySet_GET_SIZE(fs);
    }
    Py_XDECREF(empty);
    if (entries > limit) {
        raise_too_dense(too_dense, entries, limit);
        goto fail;
    }
    goto out;
fail:
    Py_CLEAR(result);
out:
    walk_end(&w);
    Py_DECREF(outs);
    Py_XDECREF(frozen);
    PyMem_Free(objs);
    PyMem_Free(acc.at);
    PyMem_Free(tmp.at);
    return result;
}
