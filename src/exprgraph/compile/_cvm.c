/* exprgraph.compile._cvm: the "vm" backend's machine, a register machine over blocks of points (the
 * Python type here, the interpreter in _cvm_run.c).
 *
 * A program is encoded once by compile/vm_encode.py into flat arrays: instructions (VM_WORDS int32
 * words each), an int32 table (class descriptors, their index and output tables), a double table
 * (the classes' constants), the registers holding constants, and the input and output maps. The
 * machine evaluates up to `block` points at a time: every register holds one lane per point, and
 * every instruction runs a tight loop over the lanes, so dispatch costs once per instruction per
 * block, not per point. A class of repeated structure (VM_LOOP) runs its body once per member,
 * after copying the member's slots and constants into the body's registers.
 *
 * Semantics are those of the C backend (compile/crender.py): floor division and modulo with
 * Python's signs, int64 arithmetic wrapping, numpy's nan-propagating maximum and minimum, an
 * integer power with a negative exponent flagged as an error. The twin: the numpy backend.
 *
 * allocate() (_cvm_alloc.c) gives the registers of straight-line code encoded over numbered values (its twin:
 * compile/vm_alloc.py's allocate_py); walk() (_cvm_walk.c) and encode_flat() (_cvm_encode.c) the
 * lowering's walk and the straight-line encoding (their twins: compile/lower.py, compile/vm_encode.py),
 * encode_walked() (_cvm_walked.c) the same encoding read from the walk's arrays; packed calls at one point
 * run the dense code of _cvm_one.c.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_cvm.h"

/* -- the Python type --------------------------------------------------------------------------------- */

static void *copy_buffer(Py_buffer *view, size_t item, int64_t *count) {
    /* a private copy of a buffer's bytes (at least one item, so malloc never gets 0) */
    size_t len = (size_t)view->len;
    void *p = malloc(len ? len : item);
    if (p == NULL) return NULL;
    if (len) memcpy(p, view->buf, len);
    if (count != NULL) *count = (int64_t)(len / item);
    return p;
}

/* the code of the machine: a bytes object's own bytes, held (they never change: the straight-line encodings come
   as bytes), else a private copy (a copy of an AC-OPF case1354pegase Hessian's 4.5 MB: ~1 ms and 1,100 fresh
   pages) */
static int32_t *keep_code(Machine *self, Py_buffer *view, int64_t *count) {
    if (view->obj == NULL || !PyBytes_CheckExact(view->obj) || view->len < 4 || ((uintptr_t)view->buf & 3u) != 0)
        return copy_buffer(view, 4, count);
    self->code_view = *view;
    view->obj = NULL; /* (released with the machine, not at the end of machine_new) */
    *count = (int64_t)(view->len / 4);
    return (int32_t *)self->code_view.buf;
}

static void machine_dealloc(Machine *self) {
    if (self->code_view.obj != NULL)
        PyBuffer_Release(&self->code_view);
    else
        free(self->code);
    free(self->ints);
    free(self->doubles);
    free(self->rd);
    free(self->ri);
    free(self->rd1);
    free(self->ri1);
    free(self->pd_block);
    free(self->pi_block);
    free(self->pd_one);
    free(self->pi_one);
    free(self->in_store);
    free(self->in_reg);
    free(self->in_col);
    free(self->one);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int check_registers(Machine *m, const int32_t *regs, const int32_t *kinds, int64_t count) {
    /* every register named by an input or output map exists in its file (kind or store 0: doubles) */
    for (int64_t k = 0; k < count; k++) {
        int64_t limit = kinds[k] != 0 ? m->ni : m->nd;
        if (regs[k] < 0 || regs[k] >= limit) return -1;
    }
    return 0;
}

static PyObject *machine_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *names[] = {"code", "main_len", "ints", "doubles", "nd", "ni", "block", "const_d_reg",
                            "const_d_val", "const_i_reg", "const_i_val", "in_store", "in_reg", "in_col",
                            "n_cols", "n_out", "n_pk", "one_point", NULL};
    Py_buffer b[10];
    memset(b, 0, sizeof(b));
    long long main_len, nd, ni, block, n_cols, n_out, n_pk;
    int one_point = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*Ly*y*LLLy*y*y*y*y*y*y*LLL|p", names, &b[0], &main_len, &b[1],
                                     &b[2], &nd, &ni, &block, &b[3], &b[4], &b[5], &b[6], &b[7], &b[8], &b[9],
                                     &n_cols, &n_out, &n_pk, &one_point))
        return NULL;
    Machine *self = NULL;
    PyObject *result = NULL;
    if (block < 1 || block > 4096 || nd < 0 || ni < 0 || main_len < 0) {
        PyErr_SetString(PyExc_ValueError, "vm: bad register counts or block size");
        goto done;
    }
    self = (Machine *)type->tp_alloc(type, 0);
    if (self == NULL) goto done;
    int64_t n_code = 0, n_cd = 0, n_ci = 0, dummy = 0;
    self->code = keep_code(self, &b[0], &n_code);
    self->ints = copy_buffer(&b[1], 4, NULL);
    self->doubles = copy_buffer(&b[2], 8, NULL);
    self->nd = nd;
    self->ni = ni;
    self->block = (int)block;
    self->main_len = main_len;
    self->rd = calloc((size_t)(nd ? nd : 1) * (size_t)block, sizeof(double));
    self->ri = calloc((size_t)(ni ? ni : 1) * (size_t)block, sizeof(int64_t));
    self->rd1 = calloc((size_t)(nd ? nd : 1), sizeof(double));
    self->ri1 = calloc((size_t)(ni ? ni : 1), sizeof(int64_t));
    self->pd_block = malloc((size_t)(nd ? nd : 1) * sizeof(double *));
    self->pi_block = malloc((size_t)(ni ? ni : 1) * sizeof(int64_t *));
    self->pd_one = malloc((size_t)(nd ? nd : 1) * sizeof(double *));
    self->pi_one = malloc((size_t)(ni ? ni : 1) * sizeof(int64_t *));
    if (self->rd && self->rd1 && self->pd_block && self->pd_one)
        for (int64_t r = 0; r < nd; r++) {
            self->pd_block[r] = self->rd + r * block;
            self->pd_one[r] = self->rd1 + r;
        }
    if (self->ri && self->ri1 && self->pi_block && self->pi_one)
        for (int64_t r = 0; r < ni; r++) {
            self->pi_block[r] = self->ri + r * block;
            self->pi_one[r] = self->ri1 + r;
        }
    int32_t *cd_reg = copy_buffer(&b[3], 4, &n_cd);
    double *cd_val = copy_buffer(&b[4], 8, &dummy);
    int32_t *ci_reg = copy_buffer(&b[5], 4, &n_ci);
    int64_t *ci_val = copy_buffer(&b[6], 8, &dummy);
    self->in_store = copy_buffer(&b[7], 4, &self->n_in);
    self->in_reg = copy_buffer(&b[8], 4, NULL);
    self->in_col = copy_buffer(&b[9], 4, NULL);
    self->n_cols = n_cols;
    self->n_out = n_out;
    self->n_pk = n_pk;
    if (!self->code || !self->ints || !self->doubles || !self->rd || !self->ri || !self->rd1 || !self->ri1 || !self->pd_block ||
        !self->pi_block || !self->pd_one || !self->pi_one || !cd_reg || !cd_val || !ci_reg ||
        !ci_val || !self->in_store || !self->in_reg || !self->in_col) {
        PyErr_NoMemory();
    } else if (main_len > n_code / VM_WORDS || check_registers(self, self->in_reg, self->in_store, self->n_in)) {
        PyErr_SetString(PyExc_ValueError, "vm: an input or output names a register that does not exist");
    } else if (one_point && vm_one_transcode(self, cd_reg, cd_val, n_cd)) {
        PyErr_NoMemory();
    } else {
        /* constants: every lane, once; nothing else writes their registers */
        for (int64_t k = 0; k < n_cd; k++) {
            for (int64_t i = 0; i < block; i++) self->rd[(int64_t)cd_reg[k] * block + i] = cd_val[k];
            self->rd1[cd_reg[k]] = cd_val[k];
        }
        for (int64_t k = 0; k < n_ci; k++) {
            for (int64_t i = 0; i < block; i++) self->ri[(int64_t)ci_reg[k] * block + i] = ci_val[k];
            self->ri1[ci_reg[k]] = ci_val[k];
        }
        result = (PyObject *)self;
        self = NULL;
    }
    free(cd_reg);
    free(cd_val);
    free(ci_reg);
    free(ci_val);
done:
    Py_XDECREF(self);
    for (int k = 0; k < 10; k++)
        if (b[k].obj != NULL) PyBuffer_Release(&b[k]);
    return result;
}

/* The register layout for a call at `total` points: dense single lanes for one point (cache-friendly), else blocks. */
static void choose_layout(Machine *vm, int64_t total) {
    const int one = total == 1;
    vm->pd = one ? vm->pd_one : vm->pd_block;
    vm->pi = one ? vm->pi_one : vm->pi_block;
    vm->stride = one ? 1 : vm->block;
}

/* run(total, in, step, out): in/out are buffers of addresses, step a buffer of int64 strides (elements) */
static PyObject *machine_run(Machine *vm, PyObject *args) {
    long long total;
    Py_buffer bin, bstep, bout;
    if (!PyArg_ParseTuple(args, "Ly*y*y*", &total, &bin, &bstep, &bout)) return NULL;
    PyObject *result = NULL;
    if ((size_t)bin.len < (size_t)vm->n_in * sizeof(void *) || (size_t)bstep.len < (size_t)vm->n_in * 8 ||
        (size_t)bout.len < (size_t)vm->n_out * sizeof(void *)) {
        PyErr_SetString(PyExc_ValueError, "vm.run: too few input or output addresses");
        goto done;
    }
    void *const *in = bin.buf;
    const int64_t *step = bstep.buf;
    void *const *out = bout.buf;
    const int64_t B = vm->block;
    vm->error = 0;
    vm->packed = 0;
    choose_layout(vm, total);
    vm->out = out;
    for (int64_t s = 0; s < total; s += B) {
        vm->s = s;
        const int n = (int)(total - s < B ? total - s : B);
        for (int64_t k = 0; k < vm->n_in; k++) {
            const int64_t d = step[k];
            const int32_t r = vm->in_reg[k];
            switch (vm->in_store[k]) {
                case 0: {
                    const double *p = (const double *)in[k] + s * d;
                    for (int i = 0; i < n; i++) RD(r)[i] = p[i * d];
                    break;
                }
                case 1: {
                    const int64_t *p = (const int64_t *)in[k] + s * d;
                    for (int i = 0; i < n; i++) RI(r)[i] = p[i * d];
                    break;
                }
                default: {
                    const uint8_t *p = (const uint8_t *)in[k] + s * d;
                    for (int i = 0; i < n; i++) RI(r)[i] = p[i * d] != 0;
                }
            }
        }
        vm_run_main(vm, n);
    }
    result = PyLong_FromLong(vm->error);
done:
    PyBuffer_Release(&bin);
    PyBuffer_Release(&bstep);
    PyBuffer_Release(&bout);
    return result;
}

/* `total` rows of n_cols doubles in at x, rows of every output as doubles out at o; the error flag */
int vm_run_packed(Machine *vm, int64_t total, const double *x, double *o) {
    const int64_t B = vm->block, cols = vm->n_cols;
    vm->error = 0;
    vm->packed = 1;
    choose_layout(vm, total);
    if (total == 1 && vm->one != NULL) { /* one point: the dense code (_cvm_one.c) */
        vm->os = o;
        for (int64_t k = 0; k < vm->n_in; k++) {
            const int32_t r = vm->in_reg[k], c = vm->in_col[k];
            if (vm->in_store[k] == 0)
                vm->rd1[r] = x[c];
            else
                vm->ri1[r] = vm->in_store[k] == 1 ? d2i(x[c]) : x[c] != 0.0;
        }
        vm_one_run(vm, o);
        return vm->error;
    }
    for (int64_t s = 0; s < total; s += B) {
        const int n = (int)(total - s < B ? total - s : B);
        vm->os = o + s * vm->n_pk;
        const double *xs = x + s * cols;
        for (int64_t k = 0; k < vm->n_in; k++) {
            const int32_t r = vm->in_reg[k], c = vm->in_col[k];
            if (vm->in_store[k] == 0) {
                for (int i = 0; i < n; i++) RD(r)[i] = xs[i * cols + c];
            } else if (vm->in_store[k] == 1) {
                for (int i = 0; i < n; i++) RI(r)[i] = d2i(xs[i * cols + c]);
            } else {
                for (int i = 0; i < n; i++) RI(r)[i] = xs[i * cols + c] != 0.0;
            }
        }
        vm_run_main(vm, n);
    }
    return vm->error;
}

/* packed(total, x, o): rows of n_cols doubles in at address x, rows of every output as doubles out at o */
static PyObject *machine_packed(Machine *vm, PyObject *args) {
    long long total;
    unsigned long long xa, oa;
    if (!PyArg_ParseTuple(args, "LKK", &total, &xa, &oa)) return NULL;
    return PyLong_FromLong(vm_run_packed(vm, total, (const double *)(uintptr_t)xa, (double *)(uintptr_t)oa));
}

/* a one-dimensional C-contiguous buffer of `count` doubles (writable if asked), else 0 and no error set */
static int doubles_of(PyObject *obj, Py_buffer *view, int64_t count, int writable) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0))) {
        PyErr_Clear();
        return 0;
    }
    const char *f = view->format;
    if (f != NULL && (*f == '=' || *f == '@' || *f == (PY_LITTLE_ENDIAN ? '<' : '>'))) f++; /* native order */
    if (view->ndim == 1 && view->shape[0] == count && view->itemsize == 8 && f != NULL && f[0] == 'd' && !f[1])
        return 1;
    PyBuffer_Release(view);
    return 0;
}

/* one(x, o): a packed call at one point on arrays (no addresses to make): 0 or 1 (the error flag); 2: not
 * one-dimensional float64 arrays of n_cols and n_pk values (x C-contiguous, o writable too): call packed */
static PyObject *machine_one(Machine *vm, PyObject *args) {
    PyObject *xo, *oo;
    if (!PyArg_ParseTuple(args, "OO", &xo, &oo)) return NULL;
    Py_buffer bx, bo;
    if (!doubles_of(xo, &bx, vm->n_cols, 0)) return PyLong_FromLong(2);
    if (!doubles_of(oo, &bo, vm->n_pk, 1)) {
        PyBuffer_Release(&bx);
        return PyLong_FromLong(2);
    }
    const int error = vm_run_packed(vm, 1, bx.buf, bo.buf);
    PyBuffer_Release(&bx);
    PyBuffer_Release(&bo);
    return PyLong_FromLong(error);
}

static PyObject *machine_block(Machine *vm, void *closure) {
    (void)closure;
    return PyLong_FromLong(vm->block);
}

static PyObject *machine_one_words(Machine *vm, void *closure) {
    (void)closure;
    return PyLong_FromLongLong(vm->one != NULL ? vm->one_len : -1);
}

static PyMethodDef machine_methods[] = {
    {"run", (PyCFunction)machine_run, METH_VARARGS, "run(total, in, step, out): evaluate at `total` points."},
    {"packed", (PyCFunction)machine_packed, METH_VARARGS, "packed(total, x, o): rows of inputs in, rows of outputs out."},
    {"one", (PyCFunction)machine_one, METH_VARARGS,
     "one(x, o): a packed call at one point on float64 arrays: the error flag, or 2 if they are not such arrays"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef machine_getset[] = {
    {"block", (getter)machine_block, NULL, "lanes per register (points evaluated at a time)", NULL},
    {"one_words", (getter)machine_one_words, NULL, "words of the code for calls at one point (-1: none)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject MachineType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "exprgraph.compile._cvm.Machine",
    .tp_basicsize = sizeof(Machine),
    .tp_dealloc = (destructor)machine_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An encoded program and its registers (see exprgraph.compile.vm).",
    .tp_methods = machine_methods,
    .tp_getset = machine_getset,
    .tp_new = machine_new,
};

static PyObject *cvm_opcodes(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return Py_BuildValue("(iii)", VM_OPCODES, VM_WORDS, VM_C_FIELDS);
}

static PyMethodDef module_methods[] = {
    {"layout", cvm_opcodes, METH_NOARGS, "(opcodes, words per instruction, words per class descriptor)"},
    {"allocate", cvm_allocate, METH_VARARGS,
     "allocate(code, kinds, pinned, inputs): registers for straight-line code over numbered values (vm_alloc.py)"},
    {"walk", cvm_walk, METH_VARARGS,
     "walk(outputs, symbol, const, arrays=False): lower()'s walk (steps, nodes, reads, constants, symbols, fixed"
     "[, arrays]), or None"},
    {"encode_flat", cvm_encode_flat, METH_VARARGS,
     "encode_flat(steps, inputs, outputs, values, tables): the straight-line encoding, or None (vm_encode.py)"},
    {"encode_walked", cvm_encode_walked, METH_VARARGS,
     "encode_walked(walked, steps, symbols, inputs, outputs, values, tables): encode_flat's encoding read from "
     "walk()'s arrays, or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef cvm_module = {
    PyModuleDef_HEAD_INIT, "_cvm", "The register machine of exprgraph's vm backend.", -1, module_methods,
};

PyMODINIT_FUNC PyInit__cvm(void) {
    if (PyType_Ready(&MachineType) < 0) return NULL;
    PyObject *m = PyModule_Create(&cvm_module);
    if (m == NULL) return NULL;
    if (PyType_Ready(&NLPCallbacksType) < 0 || PyModule_AddObjectRef(m, "Machine", (PyObject *)&MachineType) < 0 ||
        PyModule_AddObjectRef(m, "NLPCallbacks", (PyObject *)&NLPCallbacksType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
