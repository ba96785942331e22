/* The five callbacks of a nonlinear program in C, over the vm's machines (or the C libraries that replace them):
 * what a solver's C interface calls (IPOPT's IpStdCInterface prototypes) with no Python on the way.
 *
 * exprgraph.optimize.ipopt_c's Python callbacks are the twin: each callback there goes ctypes -> Python ->
 * CompiledNLP -> the machine, and inside a solve, where the solver's linear algebra has evicted that code and
 * its objects from the processor's caches, that road costs 20-50 us a call. Here IPOPT calls C functions that
 * run the machines at one point (vm_run_packed) on IPOPT's arrays: the same programs on the same inputs, so the
 * same bits. Under the "auto" backend a callback's C library, once its background build has finished, is handed
 * over between two iterations (use_library: its packed entry and this thread's work area) and serves from then
 * on, as the Python road switches. What CompiledNLP adds around a call is done here the same way:
 *   - the gradient's non-zeros scattered into the dense gradient (zeros elsewhere);
 *   - the Hessian's block numbers summed with the signed weights (obj_factor for the objective's terms, the
 *     multipliers for the constraints'): out[position[e]] += w[term[e]] * numbers[e] in entry order, a term
 *     index k >= n_terms reading -w[k - n_terms] (diff.blocks.BlockHessian.assemble, the same sums in the same
 *     order);
 *   - the first non-finite output of a call recorded as (callback, index), the values still returned;
 *   - calls and thread CPU seconds counted per callback and code (the vm, a library); an integer power with a negative exponent (the
 *     machine's error flag) recorded, the callback and every later one returning false.
 * The solver calls these without the GIL (ctypes releases it around IpoptSolve): nothing here touches a Python
 * object; the Python object only owns the buffers and the machines while the solve runs.
 *
 * IPOPT's Bool is a C bool from 3.14 on and an int before. The functions take int for it (never read) and
 * return int: on the x86-64 and AArch64 calling conventions an int argument or result occupies the register
 * or stack slot a bool would, and the 0/1 result reads the same as either type. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "_cvm.h"

/* the callbacks, in CompiledNLP's order of CALLBACKS */
enum { CB_F, CB_GRAD, CB_G, CB_JAC, CB_H, CB_COUNT };
/* the code that served a call */
enum { ON_VM, ON_LIBRARY, ON_COUNT };

/* a C library's packed entry (compile/c_emit's eg_packed): rows of inputs in, rows of outputs out, its work area */
typedef int (*library_fn)(int64_t points, const double *x, double *o, void *work);

typedef struct {
    PyObject_HEAD
    PyObject *machines[CB_COUNT]; /* Machine or None (a callback with no outputs: zeros) */
    library_fn library[CB_COUNT]; /* the library serving callback k instead of its machine, or NULL */
    void *work[CB_COUNT];         /* its work area (the Python object owning it outlives the solve) */
    Py_buffer views[8];           /* the arrays below, held while the object lives */
    int n_views;
    int64_t n, m;
    const int64_t *grad_cols;     /* the gradient's non-zeros: their columns */
    int64_t n_grad;
    const int32_t *jac_rows, *jac_cols, *hess_rows, *hess_cols; /* the structures, as IPOPT takes them */
    int64_t jac_nnz, hess_nnz;
    const int64_t *position, *term; /* the Hessian's block entries: the entry each adds to, its term's weight */
    int64_t n_blocks, n_terms, n_objective_terms;
    int signed_terms;             /* term indices past n_terms read negated weights */
    double *grad_buf, *blocks, *weights; /* scratch owned here */
    /* the record of the calls */
    int64_t calls[ON_COUNT][CB_COUNT];
    double cpu[ON_COUNT][CB_COUNT];
    int error;                    /* a machine's error flag was met: every later callback returns false */
    int nonfinite_where;          /* the callback of the last call with a non-finite value (-1: none yet), */
    int64_t nonfinite_index;      /* and the index of that call's first one (CompiledNLP keeps the same) */
} NLPCallbacks;

static double thread_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* the machine of callback k, or NULL */
static Machine *machine_of(NLPCallbacks *cb, int k) {
    return cb->machines[k] == Py_None ? NULL : (Machine *)cb->machines[k];
}

/* callback k's code at x into o (n_out values; zeros without a machine): 1, or 0 after recording an error */
static int run(NLPCallbacks *cb, int k, const double *x, double *o, int64_t n_out) {
    Machine *vm = machine_of(cb, k);
    if (vm == NULL && cb->library[k] == NULL) {
        memset(o, 0, (size_t)n_out * sizeof(double));
        return 1;
    }
    if (cb->library[k] != NULL ? cb->library[k](1, x, o, cb->work[k]) : vm_run_packed(vm, 1, x, o)) {
        cb->error = 1;
        return 0;
    }
    for (int64_t i = 0; i < n_out; i++)
        if (!isfinite(o[i])) { /* this call's first, replacing an earlier call's, as CompiledNLP keeps it */
            cb->nonfinite_where = k;
            cb->nonfinite_index = i;
            break;
        }
    return 1;
}

static void done(NLPCallbacks *cb, int k, double start) {
    const int on = cb->library[k] != NULL ? ON_LIBRARY : ON_VM;
    cb->calls[on][k]++;
    cb->cpu[on][k] += thread_seconds() - start;
}

static int eval_f(int n, double *x, int new_x, double *obj, void *ud) {
    (void)n, (void)new_x;
    NLPCallbacks *cb = ud;
    if (cb->error) return 0;
    const double start = thread_seconds();
    const int ok = run(cb, CB_F, x, obj, 1);
    done(cb, CB_F, start);
    return ok;
}

static int eval_grad_f(int n, double *x, int new_x, double *grad, void *ud) {
    (void)n, (void)new_x;
    NLPCallbacks *cb = ud;
    if (cb->error) return 0;
    const double start = thread_seconds();
    const int ok = run(cb, CB_GRAD, x, cb->grad_buf, cb->n_grad);
    if (ok) {
        memset(grad, 0, (size_t)cb->n * sizeof(double));
        for (int64_t i = 0; i < cb->n_grad; i++) grad[cb->grad_cols[i]] = cb->grad_buf[i];
    }
    done(cb, CB_GRAD, start);
    return ok;
}

static int eval_g(int n, double *x, int new_x, int m, double *g, void *ud) {
    (void)n, (void)new_x;
    NLPCallbacks *cb = ud;
    if (cb->error) return 0;
    if (m == 0) return 1;
    const double start = thread_seconds();
    const int ok = run(cb, CB_G, x, g, cb->m);
    done(cb, CB_G, start);
    return ok;
}

static int eval_jac_g(int n, double *x, int new_x, int m, int nnz, int *rows, int *cols, double *values, void *ud) {
    (void)n, (void)new_x, (void)m;
    NLPCallbacks *cb = ud;
    if (cb->error) return 0;
    if (nnz == 0) return 1;
    if (values == NULL) { /* the structure, asked once */
        memcpy(rows, cb->jac_rows, (size_t)cb->jac_nnz * sizeof(int32_t));
        memcpy(cols, cb->jac_cols, (size_t)cb->jac_nnz * sizeof(int32_t));
        return 1;
    }
    const double start = thread_seconds();
    const int ok = run(cb, CB_JAC, x, values, cb->jac_nnz);
    done(cb, CB_JAC, start);
    return ok;
}

static int eval_h(int n, double *x, int new_x, double obj_factor, int m, double *lambda, int new_lambda, int nnz,
                  int *rows, int *cols, double *values, void *ud) {
    (void)n, (void)new_x, (void)new_lambda;
    NLPCallbacks *cb = ud;
    if (cb->error) return 0;
    if (nnz == 0) return 1;
    if (values == NULL) {
        memcpy(rows, cb->hess_rows, (size_t)cb->hess_nnz * sizeof(int32_t));
        memcpy(cols, cb->hess_cols, (size_t)cb->hess_nnz * sizeof(int32_t));
        return 1;
    }
    const double start = thread_seconds();
    const int ok = run(cb, CB_H, x, cb->blocks, cb->n_blocks);
    if (ok) {
        double *w = cb->weights;
        const int64_t nw = cb->n_terms, k0 = cb->n_objective_terms;
        for (int64_t k = 0; k < k0; k++) w[k] = obj_factor;
        for (int64_t k = k0; k < nw; k++) w[k] = (m > 0 && lambda != NULL) ? lambda[k - k0] : 0.0;
        memset(values, 0, (size_t)cb->hess_nnz * sizeof(double));
        const double *num = cb->blocks;
        if (cb->signed_terms) {
            for (int64_t e = 0; e < cb->n_blocks; e++) {
                const int64_t k = cb->term[e];
                values[cb->position[e]] += (k < nw ? w[k] : -w[k - nw]) * num[e];
            }
        } else {
            for (int64_t e = 0; e < cb->n_blocks; e++) values[cb->position[e]] += w[cb->term[e]] * num[e];
        }
    }
    done(cb, CB_H, start);
    return ok;
}

/* -- the Python object ------------------------------------------------------------------------------------ */

static void nlp_dealloc(NLPCallbacks *self) {
    for (int k = 0; k < CB_COUNT; k++) Py_XDECREF(self->machines[k]);
    for (int i = 0; i < self->n_views; i++) PyBuffer_Release(&self->views[i]);
    free(self->grad_buf);
    free(self->blocks);
    free(self->weights);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* a held view of a C-contiguous one-dimensional array of `size`-byte integers ('i' int32, 'q'/'l' int64) */
static const void *held_ints(NLPCallbacks *self, PyObject *obj, int size, int64_t *count, const char *what) {
    Py_buffer *v = &self->views[self->n_views];
    if (PyObject_GetBuffer(obj, v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    const char *f = v->format != NULL ? v->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    const int ok = v->ndim == 1 && v->itemsize == size && f[1] == '\0' &&
                   (size == 4 ? (f[0] == 'i' || f[0] == 'l') : (f[0] == 'q' || f[0] == 'l'));
    if (!ok) {
        PyBuffer_Release(v);
        PyErr_Format(PyExc_TypeError, "NLPCallbacks: %s must be a contiguous int%d array", what, 8 * size);
        return NULL;
    }
    self->n_views++;
    *count = v->shape[0];
    return v->buf;
}

/* the indices in [0, bound) (or the signed range [0, 2 bound)) */
static int in_range(const int64_t *a, int64_t count, int64_t bound, const char *what) {
    for (int64_t i = 0; i < count; i++)
        if (a[i] < 0 || a[i] >= bound) {
            PyErr_Format(PyExc_IndexError, "NLPCallbacks: %s[%lld] = %lld is outside [0, %lld)", what, (long long)i,
                         (long long)a[i], (long long)bound);
            return 0;
        }
    return 1;
}

/* whether machine k (or None) reads n columns and writes `outputs` values */
static int machine_fits(PyObject *obj, int64_t n, int64_t outputs, const char *what) {
    if (obj == Py_None) return 1;
    if (!PyObject_TypeCheck(obj, &MachineType)) {
        PyErr_Format(PyExc_TypeError, "NLPCallbacks: the %s callback's machine must be a Machine or None", what);
        return 0;
    }
    const Machine *vm = (const Machine *)obj;
    if (vm->n_cols != n || vm->n_pk != outputs) {
        PyErr_Format(PyExc_ValueError, "NLPCallbacks: the %s machine reads %lld columns and writes %lld values, "
                     "expected %lld and %lld", what, (long long)vm->n_cols, (long long)vm->n_pk, (long long)n,
                     (long long)outputs);
        return 0;
    }
    return 1;
}

static PyObject *nlp_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *names[] = {"machines", "n", "m", "grad_cols", "jac_rows", "jac_cols", "hess_rows", "hess_cols",
                            "position", "term", "n_terms", "n_objective_terms", "signed", NULL};
    PyObject *machines, *arrays[8];
    long long n, m, n_terms, n_obj;
    int sign;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OLLOOOOOOOLLp:NLPCallbacks", names, &machines, &n, &m,
                                     &arrays[0], &arrays[1], &arrays[2], &arrays[3], &arrays[4], &arrays[5],
                                     &arrays[6], &n_terms, &n_obj, &sign))
        return NULL;
    if (!PyTuple_Check(machines) || PyTuple_GET_SIZE(machines) != CB_COUNT) {
        PyErr_SetString(PyExc_TypeError, "NLPCallbacks: machines must be a tuple of five (Machine or None)");
        return NULL;
    }
    if (n < 1 || m < 0 || n > INT32_MAX || m > INT32_MAX || n_obj < 0 || n_terms - n_obj != m) {
        PyErr_SetString(PyExc_ValueError, "NLPCallbacks: n >= 1, m >= 0 and n_terms - n_objective_terms == m");
        return NULL;
    }
    NLPCallbacks *self = (NLPCallbacks *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->n = n;
    self->m = m;
    self->n_terms = n_terms;
    self->n_objective_terms = n_obj;
    self->signed_terms = sign;
    self->nonfinite_where = -1;
    for (int k = 0; k < CB_COUNT; k++) self->machines[k] = Py_NewRef(PyTuple_GET_ITEM(machines, k));
    int64_t counts[8];
    static const char *what[8] = {"grad_cols", "jac_rows", "jac_cols", "hess_rows", "hess_cols", "position", "term"};
    static const int sizes[8] = {8, 4, 4, 4, 4, 8, 8};
    const void *bufs[8];
    for (int i = 0; i < 7; i++)
        if ((bufs[i] = held_ints(self, arrays[i], sizes[i], &counts[i], what[i])) == NULL) goto fail;
    self->grad_cols = bufs[0], self->n_grad = counts[0];
    self->jac_rows = bufs[1], self->jac_cols = bufs[2], self->jac_nnz = counts[1];
    self->hess_rows = bufs[3], self->hess_cols = bufs[4], self->hess_nnz = counts[3];
    self->position = bufs[5], self->term = bufs[6], self->n_blocks = counts[5];
    if (counts[2] != counts[1] || counts[4] != counts[3] || counts[6] != counts[5]) {
        PyErr_SetString(PyExc_ValueError, "NLPCallbacks: rows and columns (position and term) differ in length");
        goto fail;
    }
    if (!in_range(self->grad_cols, self->n_grad, n, "grad_cols") ||
        !in_range(self->position, self->n_blocks, self->hess_nnz, "position") ||
        !in_range(self->term, self->n_blocks, sign ? 2 * n_terms : n_terms, "term"))
        goto fail;
    static const char *callback[CB_COUNT] = {"objective", "gradient", "constraints", "jacobian", "hessian"};
    const int64_t outputs[CB_COUNT] = {1, self->n_grad, m, self->jac_nnz, self->n_blocks};
    for (int k = 0; k < CB_COUNT; k++)
        if (!machine_fits(self->machines[k], n, outputs[k], callback[k])) goto fail;
    self->grad_buf = malloc((size_t)(self->n_grad ? self->n_grad : 1) * sizeof(double));
    self->blocks = malloc((size_t)(self->n_blocks ? self->n_blocks : 1) * sizeof(double));
    self->weights = malloc((size_t)(n_terms ? n_terms : 1) * sizeof(double));
    if (self->grad_buf == NULL || self->blocks == NULL || self->weights == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

/* pointers(): the addresses of eval_f, eval_g, eval_grad_f, eval_jac_g, eval_h (CreateIpoptProblem's order) */
static PyObject *nlp_pointers(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    return Py_BuildValue("(KKKKK)", (unsigned long long)(uintptr_t)eval_f, (unsigned long long)(uintptr_t)eval_g,
                         (unsigned long long)(uintptr_t)eval_grad_f, (unsigned long long)(uintptr_t)eval_jac_g,
                         (unsigned long long)(uintptr_t)eval_h);
}

/* a 5-tuple of the counts (or seconds) of one code */
static PyObject *per_callback(const int64_t *calls, const double *cpu) {
    return calls != NULL ? Py_BuildValue("(LLLLL)", (long long)calls[0], (long long)calls[1], (long long)calls[2],
                                         (long long)calls[3], (long long)calls[4])
                         : Py_BuildValue("(ddddd)", cpu[0], cpu[1], cpu[2], cpu[3], cpu[4]);
}

/* record(): {code: (calls per callback, CPU seconds per callback)} for "vm" and "c", the error flag, and
   (callback, index) of the last non-finite value met or None */
static PyObject *nlp_record(NLPCallbacks *self, PyObject *unused) {
    (void)unused;
    PyObject *nonfinite = self->nonfinite_where < 0
                              ? Py_NewRef(Py_None)
                              : Py_BuildValue("(iL)", self->nonfinite_where, (long long)self->nonfinite_index);
    if (nonfinite == NULL) return NULL;
    return Py_BuildValue("({s:(NN),s:(NN)}iN)", "vm", per_callback(self->calls[ON_VM], NULL),
                         per_callback(NULL, self->cpu[ON_VM]), "c", per_callback(self->calls[ON_LIBRARY], NULL),
                         per_callback(NULL, self->cpu[ON_LIBRARY]), self->error, nonfinite);
}

/* use_library(k, entry, work): callback k is served from now on by a C library's packed entry (an address) with
   the work area at `work` (the caller keeps the library and the area alive); made between two solver calls */
static PyObject *nlp_use_library(NLPCallbacks *self, PyObject *args) {
    int k;
    unsigned long long entry, work;
    if (!PyArg_ParseTuple(args, "iKK:use_library", &k, &entry, &work)) return NULL;
    if (k < 0 || k >= CB_COUNT || entry == 0) {
        PyErr_SetString(PyExc_ValueError, "use_library: a callback number 0-4 and a library entry's address");
        return NULL;
    }
    self->library[k] = (library_fn)(uintptr_t)entry;
    self->work[k] = (void *)(uintptr_t)work;
    Py_RETURN_NONE;
}

static PyObject *nlp_address(NLPCallbacks *self, void *closure) {
    (void)closure;
    return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)self);
}

static PyMethodDef nlp_methods[] = {
    {"pointers", nlp_pointers, METH_NOARGS,
     "The addresses of eval_f, eval_g, eval_grad_f, eval_jac_g, eval_h (IPOPT's C prototypes)."},
    {"record", (PyCFunction)nlp_record, METH_NOARGS,
     "({code: ((calls per callback), (CPU seconds per callback))}, error flag, (callback, index) of the last "
     "non-finite value or None)"},
    {"use_library", (PyCFunction)nlp_use_library, METH_VARARGS,
     "use_library(k, entry, work): callback k served by a C library's packed entry from now on"},
    {NULL, NULL, 0, NULL},
};

static PyObject *nlp_error(NLPCallbacks *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->error);
}

static PyGetSetDef nlp_getset[] = {
    {"address", (getter)nlp_address, NULL, "the user data pointer the callbacks take (this object)", NULL},
    {"error", (getter)nlp_error, NULL, "whether a machine met an error (every later callback returns false)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject NLPCallbacksType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "exprgraph.compile._cvm.NLPCallbacks",
    .tp_basicsize = sizeof(NLPCallbacks),
    .tp_dealloc = (destructor)nlp_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A nonlinear program's five callbacks in C over vm machines (see exprgraph.optimize.ipopt_c).",
    .tp_methods = nlp_methods,
    .tp_getset = nlp_getset,
    .tp_new = nlp_new,
};
