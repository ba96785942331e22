/* exprgraph.compile._cvm: register allocation for straight-line code (compile/vm_alloc.py; its twin: allocate_py
 * there), the module function allocate() of _cvm.c.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_cvm.h"

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
PyObject *cvm_allocate(PyObject *self, PyObject *args) {
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
