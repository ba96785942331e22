/* _csweep_folds.c: the folds the reverse sweep applies as it builds terms, step for step those of
   exprgraph.core.grad_tools.product / negate and exprgraph.diff.reverse._fan_in (tests compare them
   on many inputs), and the constructors they use. */

#include "_csweep.h"

int
is_float_index(int d)
{
    return d == D_FLOAT32 || d == D_FLOAT64;
}

/* Term(op, (head, *items[0..n))) */
PyObject *
make_head(PyObject *op, PyObject *head, PyObject *const *items, Py_ssize_t n)
{
    PyObject *small[16];
    PyObject **all = n < 16 ? small : (PyObject **)PyMem_Malloc((size_t)(n + 1) * sizeof(PyObject *));
    if (all == NULL)
        return PyErr_NoMemory();
    all[0] = head;
    memcpy(all + 1, items, (size_t)n * sizeof(PyObject *));
    PyObject *res = intern_items(TermClass, op, all, n + 1, Py_None);
    if (all != small)
        PyMem_Free(all);
    return res;
}

/* Term(op, items[0..n)), n >= 1 */
PyObject *
make_n(PyObject *op, PyObject *const *items, Py_ssize_t n)
{
    return intern_items(TermClass, op, items, n, Py_None);
}

PyObject *
make2(PyObject *op, PyObject *a, PyObject *b)
{
    PyObject *items[2] = {a, b};
    return make_n(op, items, 2);
}

/* const(value), stealing the reference to value: a Python float or an int64 int is interned
   here as leaves.const would (it keeps them as they are); anything else goes to const() */
PyObject *
make_const(PyObject *value)
{
    if (value == NULL)
        return NULL;
    PyObject *res;
    int plain = PyFloat_CheckExact(value);
    if (!plain && PyLong_CheckExact(value)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(value);
            return NULL;
        }
        plain = overflow == 0;
    }
    if (plain) {
        res = intern_items(TermClass, OpConst, NULL, 0, value);
    } else {
        res = PyObject_CallOneArg(ConstFn, value);
    }
    Py_DECREF(value);
    return res;
}

/* whether t is the float64 constant -1.0 (grad_tools' _O.minus_one) */
static int
is_minus_one(PyObject *t)
{
    PyObject *attr = TERM_ATTR(t);
    return TERM(t)->op == OpConst && PyFloat_CheckExact(attr) && PyFloat_AS_DOUBLE(attr) == -1.0;
}

/* grad_tools._minus(t): -t as one neg node, -(-s) -> s (new reference) */
static PyObject *
minus(PyObject *t)
{
    if (TERM(t)->op == OpNeg) {
        PyObject *s = ARG(t, 0);
        Py_INCREF(s);
        return s;
    }
    return make_n(OpNeg, &t, 1);
}

/* grad_tools.product(g, factors): g * factors[0] * ... with its folds (new reference) */
PyObject *
c_product(PyObject *g, PyObject *const *factors, Py_ssize_t n)
{
    PyObject *small[16];
    PyObject **base = n <= 16 ? small : (PyObject **)PyMem_Malloc(n * sizeof(PyObject *));
    if (base == NULL)
        return PyErr_NoMemory();
    memcpy(base, factors, n * sizeof(PyObject *));
    PyObject **f = base;
    PyObject *res = NULL;
    Py_INCREF(g);
    PyObject *first = f[0];
    if (TERM(g)->op == OpNeg && n == 1 && TERM(first)->op == OpNeg) {
        /* (-h) * (-t) -> h * t */
        PyObject *h = ARG(g, 0);
        Py_INCREF(h);
        Py_SETREF(g, h);
        f[0] = first = ARG(first, 0);
    }
    if (TERM(g)->op == OpConst && TERM(first)->op == OpConst) {
        PyObject *a = TERM_ATTR(g), *b = TERM_ATTR(first);
        if ((PyFloat_CheckExact(a) && (PyLong_CheckExact(b) || PyFloat_CheckExact(b))) ||
            (PyFloat_CheckExact(b) && PyLong_CheckExact(a))) {
            PyObject *c = make_const(PyNumber_Multiply(a, b)); /* c1*c2 -> c */
            if (c == NULL)
                goto done;
            Py_SETREF(g, c);
            f++;
            n--;
            if (n == 0) {
                res = g;
                g = NULL;
                goto done;
            }
            first = f[0];
        }
    }
    int dg = TERM_DTYPE_INDEX(g);
    if (dg < 0)
        goto general;
    PyObject *one = dg == D_FLOAT32 ? One32 : One;
    int has_one = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (f[i] == one)
            has_one = 1;
    if (has_one && is_float_index(dg)) { /* t*1.0 -> t */
        Py_ssize_t m = 0;
        for (Py_ssize_t i = 0; i < n; i++)
            if (f[i] != one)
                f[m++] = f[i];
        n = m;
        if (n == 0) {
            res = g;
            g = NULL;
            goto done;
        }
        first = f[0];
    }
    if (g == One || g == OneInt || g == One32) { /* 1*t -> t */
        int dt = TERM_DTYPE_INDEX(first);
        for (Py_ssize_t i = 1; i < n && dt >= 0; i++) {
            int di = TERM_DTYPE_INDEX(f[i]);
            dt = di < 0 ? -1 : Promote[dt][di];
        }
        if (dt < 0)
            goto general;
        if (n > 1)
            dt = Numeric[dt];
        if (is_float_index(dt) && Numeric[Promote[dg][dt]] == dt) {
            if (n == 1) {
                Py_INCREF(first);
                res = first;
            } else {
                res = make_n(OpMul, f, n);
            }
            goto done;
        }
    } else if (n == 1 && is_float_index(dg) && TERM_DTYPE_INDEX(first) == dg) {
        if (is_minus_one(g)) { /* (-1.0)*t -> -t */
            res = minus(first);
            goto done;
        }
        if (is_minus_one(first)) { /* t*(-1.0) -> -t */
            res = minus(g);
            goto done;
        }
        if (TERM(g)->op == OpTruediv && ARG(g, 0) == one) { /* (1/b)*t -> t/b */
            res = make2(OpTruediv, first, ARG(g, 1));
            goto done;
        }
        if (TERM(first)->op == OpTruediv && ARG(first, 0) == one) { /* g*(1/b) -> g/b */
            res = make2(OpTruediv, g, ARG(first, 1));
            goto done;
        }
    }
general:
    res = make_head(OpMul, g, f, n);
done:
    if (base != small)
        PyMem_Free(base);
    Py_XDECREF(g);
    return res;
}

/* grad_tools.negate(g) (new reference) */
PyObject *
c_negate(PyObject *g)
{
    PyObject *op = TERM(g)->op, *attr = TERM_ATTR(g);
    if (op == OpConst) {
        PyTypeObject *cls = Py_TYPE(attr);
        int ok = cls == &PyFloat_Type || (PyObject *)cls == Float32Type;
        if (!ok && cls == &PyLong_Type) {
            int overflow = 0;
            long long v = PyLong_AsLongLongAndOverflow(attr, &overflow);
            if (v == -1 && PyErr_Occurred())
                return NULL;
            ok = overflow != 0 || v != LLONG_MIN; /* -(-2**63) does not fit */
        }
        if (ok)
            return make_const(PyNumber_Negative(attr));
    }
    if (op == OpNeg) { /* -(-t) -> t */
        PyObject *t = ARG(g, 0);
        Py_INCREF(t);
        return t;
    }
    if (op == OpMul) {
        PyObject *first = ARG(g, 0);
        if (TERM(first)->op == OpConst && PyFloat_CheckExact(TERM_ATTR(first))) { /* -(c*t) -> (-c)*t */
            PyObject *c = make_const(PyNumber_Negative(TERM_ATTR(first)));
            if (c == NULL)
                return NULL;
            PyObject *res = make_head(OpMul, c, TERM_ITEMS(g) + 1, TERM_NARGS(g) - 1);
            Py_DECREF(c);
            return res;
        }
    }
    return make_n(OpNeg, &g, 1);
}

/* reverse._fan_in(parts): one variadic add, or one constant when every part is a float number */
PyObject *
c_fan_in(PyObject *parts)
{
    Py_ssize_t n = PyList_GET_SIZE(parts);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *p = PyList_GET_ITEM(parts, i);
        if (TERM(p)->op != OpConst || !PyFloat_CheckExact(TERM_ATTR(p)))
            return intern_items(TermClass, OpAdd, ((PyListObject *)parts)->ob_item, n, Py_None);
    }
    double total = PyFloat_AS_DOUBLE(TERM_ATTR(PyList_GET_ITEM(parts, 0)));
    for (Py_ssize_t i = 1; i < n; i++)
        total += PyFloat_AS_DOUBLE(TERM_ATTR(PyList_GET_ITEM(parts, i)));
    return make_const(PyFloat_FromDouble(total));
}
