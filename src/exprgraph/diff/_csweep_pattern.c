/* _csweep_pattern.c: dependency sets of a Jacobian's rows (exprgraph.diff.pattern), as a marked
   walk: each node's set of columns is kept in its scratch while the walk runs. */

#include "_csweep.h"

/* dependency_sets(outputs, columns, max_pattern, no_grad, too_dense): diff.pattern.dependency_sets
   with marks, the sets kept in the terms' scratch */
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
    PyObject *result = NULL;
    Walk w;
    int busy;
    PyObject *outs = walk_outputs(&w, args[0], columns, &busy); /* the targets: the columns' keys */
    if (outs == NULL)
        return busy ? Py_NewRef(Py_NotImplemented) : NULL;
    uint32_t epoch = w.epoch;
    Py_ssize_t built = 0;
    for (Py_ssize_t k = 0; k < w.n; k++) {
        TermObject *node = w.order[k];
        prefetch_walk(w.order, w.n, k, 1);
        Py_ssize_t na = TERM_NARGS(node);
        PyObject *column = NULL;
        if (marks(node, epoch) & M_TARGET) {
            column = PyDict_GetItemWithError(columns, (PyObject *)node);
            if (column == NULL) {
                if (!PyErr_Occurred())
                    PyErr_SetObject(PyExc_KeyError, (PyObject *)node);
                goto out;
            }
        }
        if (na == 0) {
            PyObject *one = PyTuple_Pack(1, column);
            node->scratch = one == NULL ? NULL : PyFrozenSet_New(one);
            Py_XDECREF(one);
            if (node->scratch == NULL)
                goto out;
            continue;
        }
        if (OP_SLOT(node->op, OffGrad) == no_grad)
            continue;
        PyObject *best = NULL; /* borrowed */
        PyObject *more[2];
        PyObject *morelist = NULL;
        Py_ssize_t nmore = 0;
        for (Py_ssize_t i = 0; i < na; i++) {
            PyObject *s = TERM(TERM_ARG(node, i))->scratch;
            if ((marks(TERM(TERM_ARG(node, i)), epoch) & M_SEEN) == 0)
                s = NULL;
            if (s == NULL || s == best)
                continue;
            if (best == NULL)
                best = s;
            else {
                if (nmore < 2)
                    more[nmore] = s;
                else {
                    if (morelist == NULL) {
                        morelist = PyList_New(0);
                        if (morelist == NULL || PyList_Append(morelist, more[0]) < 0 || PyList_Append(morelist, more[1]) < 0)
                            goto fail_node;
                    }
                    if (PyList_Append(morelist, s) < 0)
                        goto fail_node;
                }
                nmore++;
            }
        }
        Py_XINCREF(best);
        if (nmore == 1) { /* two operands' sets: keep the one holding the other */
            PyObject *other = more[0];
            if (PySet_GET_SIZE(other) > PySet_GET_SIZE(best)) {
                PyObject *tmp = best;
                best = other;
                other = tmp;
                Py_INCREF(best);
                Py_DECREF(other);
            }
            int sub = PyObject_RichCompareBool(other, best, Py_LE);
            if (sub < 0)
                goto fail_node;
            if (!sub) {
                Py_SETREF(best, PyNumber_Or(best, other));
                if (best == NULL)
                    goto fail_node;
                built += PySet_GET_SIZE(best);
            }
        } else if (nmore > 1) {
            Py_ssize_t total = nmore + 1;
            PyObject *all_small[3];
            PyObject **all = all_small;
            if (morelist != NULL) {
                all = PyMem_Malloc(total * sizeof(PyObject *));
                if (all == NULL) {
                    PyErr_NoMemory();
                    goto fail_node;
                }
                all[0] = best;
                for (Py_ssize_t i = 0; i < nmore; i++)
                    all[i + 1] = PyList_GET_ITEM(morelist, i);
            } else {
                all[0] = best;
                all[1] = more[0];
                all[2] = more[1];
            }
            PyObject *biggest = all[0];
            for (Py_ssize_t i = 1; i < total; i++)
                if (PySet_GET_SIZE(all[i]) > PySet_GET_SIZE(biggest))
                    biggest = all[i];
            int holds = 1;
            for (Py_ssize_t i = 0; i < total && holds; i++) {
                holds = PyObject_RichCompareBool(all[i], biggest, Py_LE);
                if (holds < 0) {
                    if (all != all_small)
                        PyMem_Free(all);
                    goto fail_node;
                }
            }
            PyObject *chosen;
            if (!holds) {
                PyObject *acc = PySet_New(all[0]);
                for (Py_ssize_t i = 1; acc != NULL && i < total; i++) {
                    PyObject *r = PyNumber_InPlaceOr(acc, all[i]);
                    Py_XDECREF(r);
                    if (r == NULL)
                        Py_CLEAR(acc);
                }
                chosen = acc == NULL ? NULL : PyFrozenSet_New(acc);
                Py_XDECREF(acc);
                if (chosen != NULL)
                    built += PySet_GET_SIZE(chosen);
            } else {
                chosen = biggest;
                Py_INCREF(chosen);
            }
            if (all != all_small)
                PyMem_Free(all);
            if (chosen == NULL)
                goto fail_node;
            Py_SETREF(best, chosen);
        }
        if (nmore > 0 && built > limit) {
            PyObject *r = PyObject_CallFunction(too_dense, "nn", built, limit);
            Py_XDECREF(r);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_RuntimeError, "too_dense() must raise");
            goto fail_node;
        }
        if (column != NULL) { /* a target with operands is its own column too */
            PyObject *one = PyTuple_Pack(1, column);
            PyObject *single = one == NULL ? NULL : PyFrozenSet_New(one);
            Py_XDECREF(one);
            if (single == NULL)
                goto fail_node;
            if (best == NULL)
                best = single;
            else {
                Py_SETREF(best, PyNumber_Or(best, single));
                Py_DECREF(single);
                if (best == NULL)
                    goto fail_node;
            }
        }
        Py_XDECREF(morelist);
        node->scratch = best;
        continue;
    fail_node:
        Py_XDECREF(best);
        Py_XDECREF(morelist);
        goto out;
    }
    result = PyList_New(PyTuple_GET_SIZE(outs));
    if (result == NULL)
        goto out;
    Py_ssize_t entries = 0;
    PyObject *empty = NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(outs); i++) {
        TermObject *o = TERM(PyTuple_GET_ITEM(outs, i));
        PyObject *s = (marks(o, epoch) & M_LIVE) ? o->scratch : NULL;
        if (s == NULL) {
            if (empty == NULL && (empty = PyFrozenSet_New(NULL)) == NULL) {
                Py_CLEAR(result);
                goto out;
            }
            s = empty;
        }
        Py_INCREF(s);
        PyList_SET_ITEM(result, i, s);
        entries += PySet_GET_SIZE(s);
    }
    Py_XDECREF(empty);
    if (entries > limit) {
        PyObject *r = PyObject_CallFunction(too_dense, "nn", entries, limit);
        Py_XDECREF(r);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "too_dense() must raise");
        Py_CLEAR(result);
    }
out:
    walk_end(&w);
    Py_DECREF(outs);
    return result;
}
