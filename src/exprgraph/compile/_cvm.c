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
 * allocate() (below) gives the registers of straight-line code encoded over numbered values (its twin:
 * compile/vm_alloc.py's allocate_py); walk() (_cvm_walk.c) and encode_flat() (_cvm_encode.c) the
 * lowering's walk and the straight-line encoding (their twins: compile/lower.py, compile/vm_encode.py).
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

static void machine_dealloc(Machine *self) {
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
                            "n_cols", "n_out", "n_pk", NULL};
    Py_buffer b[10];
    memset(b, 0, sizeof(b));
    long long main_len, nd, ni, block, n_cols, n_out, n_pk;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*Ly*y*LLLy*y*y*y*y*y*y*LLL", names, &b[0], &main_len, &b[1],
                                     &b[2], &nd, &ni, &block, &b[3], &b[4], &b[5], &b[6], &b[7], &b[8], &b[9],
                                     &n_cols, &n_out, &n_pk))
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
    self->code = copy_buffer(&b[0], 4, &n_code);
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

/* packed(total, x, o): rows of n_cols doubles in at address x, rows of every output as doubles out at o */
static PyObject *machine_packed(Machine *vm, PyObject *args) {
    long long total;
    unsigned long long xa, oa;
    if (!PyArg_ParseTuple(args, "LKK", &total, &xa, &oa)) return NULL;
    const double *x = (const double *)(uintptr_t)xa;
    double *o = (double *)(uintptr_t)oa;
    const int64_t B = vm->block, cols = vm->n_cols;
    vm->error = 0;
    vm->packed = 1;
    choose_layout(vm, total);
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
    return PyLong_FromLong(vm->error);
}

static PyObject *machine_block(Machine *vm, void *closure) {
    (void)closure;
    return PyLong_FromLong(vm->block);
}

static PyMethodDef machine_methods[] = {
    {"run", (PyCFunction)machine_run, METH_VARARGS, "run(total, in, step, out): evaluate at `total` points."},
    {"packed", (PyCFunction)machine_packed, METH_VARARGS, "packed(total, x, o): rows of inputs in, rows of outputs out."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef machine_getset[] = {
    {"block", (getter)machine_block, NULL, "lanes per register (points evaluated at a time)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject MachineType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "exprgraph.compile._cvm.Machine",
    .tp_basicsize = sizeof(Machine),
    .tp_dealloc = (destructor)machine_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An encoded program and its registers (see exprgraph.compile.vm).",
    .tp_methods = machine_methods,
    .tp_getset = machine_getset,
    .tp_new = machine_new,
};

/* -- register allocation for straight-line code (compile/vm_alloc.py; its twin: allocate_py there) -------
 *
 * The straight-line encoder names every value by its own number; this pass gives each value a register of
 * its file (doubles or int64) when it is written and takes it back after its last reader, a register freed
 * last being taken first; constants keep registers of their own. Linear in the code.
 */

#define UNUSED (-1)

typedef struct {
    int32_t *stack[2]; /* freed registers of each file, the last freed on top */
    int64_t top[2];
    int32_t count[2]; /* registers used in each file */
    char *held;       /* per value: it holds its register now (so a register is given back once) */
} Files;

static void take(Files *f, int32_t *phys, const int32_t *kinds, int32_t v) {
    const int k = kinds[v] != 0;
    phys[v] = f->top[k] ? f->stack[k][--f->top[k]] : f->count[k]++;
    f->held[v] = 1;
}

static void give(Files *f, const int32_t *phys, const int32_t *kinds, int32_t v) {
    if (!f->held[v]) return; /* a constant, or given back already */
    const int k = kinds[v] != 0;
    f->stack[k][f->top[k]++] = phys[v];
    f->held[v] = 0;
}

/* the value words an instruction reads: word 2 of a STORE, else words 2-4 that name a value */
static int reads_of(const int32_t *ins, int32_t *out) {
    if (ins[0] == VM_STORE_D || ins[0] == VM_STORE_I) {
        out[0] = ins[2];
        return 1;
    }
    int n = 0;
    for (int j = 2; j < VM_WORDS; j++)
        if (ins[j] != UNUSED) out[n++] = ins[j];
    return n;
}

/* the last instruction reading each value (-1: none); -1 returned if a word names no value */
static int64_t find_last(const int32_t *code, int64_t n_ins, int64_t n_values, int64_t *last) {
    for (int64_t v = 0; v < n_values; v++) last[v] = -1;
    for (int64_t i = 0; i < n_ins; i++) {
        const int32_t *ins = code + i * VM_WORDS;
        int32_t r[3];
        const int n = reads_of(ins, r);
        const int store = ins[0] == VM_STORE_D || ins[0] == VM_STORE_I;
        if (ins[0] == VM_LOOP || ins[0] < 0 || ins[0] >= VM_OPCODES) return i;
        if (!store && (ins[1] < 0 || ins[1] >= n_values)) return i;
        for (int j = 0; j < n; j++) {
            if (r[j] < 0 || r[j] >= n_values) return i;
            last[r[j]] = i;
        }
    }
    return -1;
}

static void run_pass(int32_t *code, int64_t n_ins, const int32_t *kinds, const int32_t *pinned, const int32_t *inputs,
                     int64_t n_inputs, const int64_t *last, int32_t *phys, Files *f, int64_t n_values) {
    /* (a constant never holds a register that can be given back: held stays 0) */
    for (int64_t v = 0; v < n_values; v++) phys[v] = -1;
    for (int64_t v = 0; v < n_values; v++) /* constants first: registers of their own */
        if (pinned[v]) phys[v] = f->count[kinds[v] != 0]++;
    for (int64_t k = 0; k < n_inputs; k++)
        if (phys[inputs[k]] < 0) take(f, phys, kinds, inputs[k]);
    for (int64_t k = 0; k < n_inputs; k++)
        if (last[inputs[k]] < 0) give(f, phys, kinds, inputs[k]); /* an input nobody reads */
    for (int64_t i = 0; i < n_ins; i++) {
        int32_t *ins = code + i * VM_WORDS;
        const int store = ins[0] == VM_STORE_D || ins[0] == VM_STORE_I;
        if (!store && phys[ins[1]] < 0) take(f, phys, kinds, ins[1]);
        int32_t r[3];
        const int n = reads_of(ins, r);
        for (int j = 2; j < (store ? 3 : VM_WORDS); j++) ins[j] = ins[j] != UNUSED ? phys[ins[j]] : 0;
        for (int j = 0; j < n; j++) {
            int seen = 0; /* a value read twice by one instruction is given back once */
            for (int q = 0; q < j; q++) seen |= r[q] == r[j];
            if (!seen && last[r[j]] == i) give(f, phys, kinds, r[j]);
        }
        if (!store) {
            const int32_t dst = ins[1];
            ins[1] = phys[dst];
            if (last[dst] < 0) give(f, phys, kinds, dst); /* written and never read */
        }
    }
}

/* allocate(code, kinds, pinned, inputs) -> (code bytes, phys bytes, nd, ni); all arguments int32 buffers */
static PyObject *cvm_allocate(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer bc, bk, bp, bi;
    if (!PyArg_ParseTuple(args, "y*y*y*y*", &bc, &bk, &bp, &bi)) return NULL;
    PyObject *result = NULL, *code_out = NULL, *phys_out = NULL;
    int64_t *last = NULL;
    Files f;
    memset(&f, 0, sizeof(f));
    const int64_t n_words = bc.len / 4, n_values = bk.len / 4, n_inputs = bi.len / 4;
    const int64_t n_ins = n_words / VM_WORDS;
    if (n_words % VM_WORDS || bp.len != bk.len || n_values >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "vm allocate: the code is not whole instructions, or bad value tables");
        goto done;
    }
    const int32_t *kinds = bk.buf, *pinned = bp.buf, *inputs = bi.buf;
    for (int64_t k = 0; k < n_inputs; k++)
        if (inputs[k] < 0 || inputs[k] >= n_values) {
            PyErr_SetString(PyExc_ValueError, "vm allocate: an input names no value");
            goto done;
        }
    code_out = PyBytes_FromStringAndSize(bc.buf, bc.len);
    phys_out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n_values * 4);
    last = malloc((size_t)(n_values ? n_values : 1) * sizeof(int64_t));
    f.held = calloc((size_t)(n_values ? n_values : 1), 1);
    f.stack[0] = malloc((size_t)(n_values ? n_values : 1) * sizeof(int32_t));
    f.stack[1] = malloc((size_t)(n_values ? n_values : 1) * sizeof(int32_t));
    if (!code_out || !phys_out || !last || !f.held || !f.stack[0] || !f.stack[1]) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    int32_t *code = (int32_t *)PyBytes_AS_STRING(code_out);
    const int64_t bad = find_last(code, n_ins, n_values, last);
    if (bad >= 0) {
        PyErr_Format(PyExc_ValueError, "vm allocate: instruction %lld names no value or is not straight-line",
                     (long long)bad);
        goto done;
    }
    run_pass(code, n_ins, kinds, pinned, inputs, n_inputs, last, (int32_t *)PyBytes_AS_STRING(phys_out), &f,
             n_values);
    result = Py_BuildValue("(OOii)", code_out, phys_out, (int)f.count[0], (int)f.count[1]);
done:
    Py_XDECREF(code_out);
    Py_XDECREF(phys_out);
    free(last);
    free(f.held);
    free(f.stack[0]);
    free(f.stack[1]);
    PyBuffer_Release(&bc);
    PyBuffer_Release(&bk);
    PyBuffer_Release(&bp);
    PyBuffer_Release(&bi);
    return result;
}

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
     "walk(outputs, symbol, const): lower()'s walk (steps, nodes, reads, constants, symbols, fixed), or None"},
    {"encode_flat", cvm_encode_flat, METH_VARARGS,
     "encode_flat(steps, inputs, outputs, values, tables): the straight-line encoding, or None (vm_encode.py)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef cvm_module = {
    PyModuleDef_HEAD_INIT, "_cvm", "The register machine of exprgraph's vm backend.", -1, module_methods,
};

PyMODINIT_FUNC PyInit__cvm(void) {
    if (PyType_Ready(&MachineType) < 0) return NULL;
    PyObject *m = PyModule_Create(&cvm_module);
    if (m == NULL) return NULL;
    Py_INCREF(&MachineType);
    if (PyModule_AddObject(m, "Machine", (PyObject *)&MachineType) < 0) {
        Py_DECREF(&MachineType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
