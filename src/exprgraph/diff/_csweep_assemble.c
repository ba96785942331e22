/* _csweep_assemble.c: the scatter-add of diff.blocks.BlockHessian.assemble, in one pass.

   out[position[e]] += weights[term[e]] * numbers[e] for every block entry e in order, out zeroed first:
   numpy's bincount(position, weights=numbers * weights[term]) adds in the same order, so the bits are
   the same (built without contraction of the product into the sum: see setup.py's flags). A solver
   calls it every iteration; bincount takes three passes and two new arrays. With `signed` set, a
   term index k in [nw, 2 nw) reads -weights[k - nw]: the weights [w, -w] without building them
   (negation is exact, so the bits are those of the built array). */

#include "_csweep.h"

/* a C-contiguous buffer of n items of the format `fmt` ("d" float64, "q"/"l" int64), or -1 with an error */
static int
get_array(PyObject *obj, Py_buffer *view, int writable, char kind, const char *what)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0)
        return -1;
    const char *f = view->format != NULL ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@')
        f++;
    int ok = view->itemsize == 8 && f[1] == '\0' && (kind == 'd' ? f[0] == 'd' : (f[0] == 'q' || f[0] == 'l'));
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "assemble: %s must be a contiguous %s array", what,
                     kind == 'd' ? "float64" : "int64");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* assemble(position, term, weights, numbers, out, signed=False): BlockHessian.assemble's sum into out; an
   index outside out or the (signed) weights is an IndexError and leaves out zeroed */
PyObject *
py_assemble(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 5 && nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "assemble(position, term, weights, numbers, out, signed=False) takes 5 "
                                         "arrays and a flag");
        return NULL;
    }
    int sign = nargs == 6 ? PyObject_IsTrue(args[5]) : 0;
    if (sign < 0)
        return NULL;
    Py_buffer v[5];
    static const char kinds[5] = {'q', 'q', 'd', 'd', 'd'};
    static const char *names[5] = {"position", "term", "weights", "numbers", "out"};
    int got = 0;
    for (; got < 5; got++)
        if (get_array(args[got], &v[got], got == 4, kinds[got], names[got]) < 0)
            break;
    PyObject *result = NULL;
    if (got == 5) {
        Py_ssize_t n = v[0].len / 8, nw = v[2].len / 8, nout = v[4].len / 8;
        const int64_t *pos = v[0].buf, *term = v[1].buf;
        const double *w = v[2].buf, *num = v[3].buf;
        double *out = v[4].buf;
        if (v[1].len / 8 != n || v[3].len / 8 != n) {
            PyErr_SetString(PyExc_ValueError, "assemble: position, term and numbers must have one length");
        }
        else {
            memset(out, 0, (size_t)nout * sizeof(double));
            Py_ssize_t e = 0;
            if (sign) {
                for (; e < n; e++) {
                    int64_t p = pos[e], k = term[e];
                    if (p < 0 || p >= nout || k < 0 || k >= 2 * nw)
                        break;
                    out[p] += (k < nw ? w[k] : -w[k - nw]) * num[e];
                }
            }
            else {
                for (; e < n; e++) {
                    int64_t p = pos[e], k = term[e];
                    if (p < 0 || p >= nout || k < 0 || k >= nw)
                        break;
                    out[p] += w[k] * num[e];
                }
            }
            if (e < n) {
                memset(out, 0, (size_t)nout * sizeof(double)); /* no half sum left behind */
                PyErr_Format(PyExc_IndexError, "assemble: block entry %zd points outside out or weights", e);
            }
            else
                result = Py_NewRef(Py_None);
        }
    }
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&v[i]);
    return result;
}
