/* _cvm_encode.c: the vm's straight-line encoding in C (its twin: compile/vm_encode.py's _encode_flat_py).
 *
 * encode_flat(steps, inputs, outputs, values, tables) encodes a lowered program over numbered values
 * as _encode_flat_py does, value for value and word for word: the inputs first, the stores of the
 * outputs known before the run, then each step, and each output stored as soon as it is computed.
 * It takes programs whose steps all have the common forms: a float64 op of one instruction on
 * float64 operands, a float64 to an int64 power, a left-to-right fold of float64 operands (opcodes
 * by op name in `tables`, from compile/vm_ops.py: no fact about an op lives here). Any other
 * program answers None and the twin runs (it also raises the errors). Each node's value number is
 * kept in its mark while the encoding runs (see _cvm_terms.h); the values are converted to numbers
 * before the first stamp, so no Python code runs while the stamps are on.
 */
#include "_cvm_terms.h"

#include "_cvm.h"
#include "_cvm_encode.h"

/* the stamps' payloads of an encoding: a value number (low 32 bits), a compile-time value (its index in
   the low bits until it has a number), an output (its first position + 1 in bits 32-60) */
#define M_VID ((uint64_t)1 << 62)
#define M_VALUE ((uint64_t)1 << 61)
#define OUT_SHIFT 32
#define OUT_MASK ((((uint64_t)1 << 29) - 1) << OUT_SHIFT)
#define LOW(m) ((int32_t)((m) & 0xffffffffu))

/* a new value of file `kind` (a constant when pinned); -1 on an error */
int32_t enc_new_value(Enc *e, int kind, int dtype, int pinned) {
    int32_t v = (int32_t)e->kinds.n;
    if (vec_push32(&e->kinds, kind) < 0 || vec_push32(&e->pinned, pinned) < 0 || vec_room(&e->dtype, 1) < 0) return -1;
    AT(e->dtype, int8_t, e->dtype.n++) = (int8_t)dtype;
    return v;
}

/* t holds value v from now on */
static int give_value(Enc *e, PyObject *t, int32_t v) {
    return stamp(&e->saved, t, (stamped(&e->saved, t) & (OUT_MASK | M_VALUE)) | M_VID | (uint32_t)v);
}

/* the value of compile-time value c (a constant: its number in the tables), made at its first use; -1 error */
int32_t enc_constant(Enc *e, int32_t c) {
    const int d = AT(e->c_dtype, int8_t, c), kind = kind_of_dtype(d);
    int32_t v = enc_new_value(e, kind, d, 1);
    if (v < 0 || vec_push32(kind == KD ? &e->cd_vid : &e->ci_vid, v) < 0) return -1;
    Vec *vals = kind == KD ? &e->cd_val : &e->ci_val;
    if (vec_room(vals, 1) < 0) return -1;
    memcpy(vals->data + vals->n++ * 8, e->c_num.data + (size_t)c * 8, 8);
    return v;
}

/* the value holding t (a constant's made at its first use); -1 error, -2 the twin must run */
static int32_t operand(Enc *e, PyObject *t) {
    if (!IS_TERM(t)) return -2;
    uint64_t m = stamped(&e->saved, t);
    if (m & M_VID) return LOW(m);
    if (!(m & M_VALUE)) return -2; /* not computed yet, or unknown: the twin raises */
    const int32_t v = enc_constant(e, LOW(m));
    return v < 0 ? -1 : give_value(e, t, v) < 0 ? -1 : v;
}

int enc_emit(Enc *e, int32_t op, int32_t a, int32_t b, int32_t c, int32_t d) {
    if (vec_room(&e->code, VM_WORDS) < 0) return -1;
    int32_t *w = &AT(e->code, int32_t, e->code.n);
    w[0] = op, w[1] = a, w[2] = b, w[3] = c, w[4] = d;
    e->code.n += VM_WORDS;
    return 0;
}

/* the stores of the output whose first position is j (-1: not an output), held in value v, if not stored yet */
int enc_store_at(Enc *e, int64_t j, int32_t v) {
    if (j < 0 || e->stored[j]) return 0;
    e->stored[j] = 1;
    const int d = AT(e->dtype, int8_t, v);
    const int32_t op = AT(e->kinds, int32_t, v) == KD ? VM_STORE_D : VM_STORE_I;
    const int32_t where = d == D_FLOAT64 ? 0 : d == D_INT64 ? 1 : 2;
    for (int32_t run = e->run[j]; j >= 0; j = e->next[j], run = -1)
        if (enc_emit(e, op, run, v, (int32_t)j, where) < 0) return -1;
    return 0;
}

/* the stores of t (held in value v) when it is an output not stored yet */
static int store(Enc *e, PyObject *t, int32_t v) {
    return enc_store_at(e, (int64_t)((stamped(&e->saved, t) & OUT_MASK) >> OUT_SHIFT) - 1, v);
}

/* the compile-time values as numbers, before any stamp; 1 done, 0 the twin must run, -1 error */
int enc_read_values(Enc *e, PyObject *values, PyObject *generic) {
    Py_ssize_t pos = 0;
    PyObject *t, *value;
    while (PyDict_Next(values, &pos, &t, &value)) {
        int d = IS_TERM(t) ? dtype_of(t) : -1, kind = kind_of_dtype(d);
        if (kind < 0 || !(PyFloat_Check(value) || PyLong_Check(value) || PyObject_TypeCheck(value, (PyTypeObject *)generic)))
            return 0; /* vm_ops.check_supported refuses it, or the twin knows better */
        if (vec_room(&e->c_dtype, 1) < 0 || vec_room(&e->c_num, 1) < 0) return -1;
        AT(e->c_dtype, int8_t, e->c_dtype.n++) = (int8_t)d;
        /* float(value) or int(value); one that does not convert is left to the twin (which converts only
           the values it reads) */
        if (kind == KD) {
            double x = PyFloat_AsDouble(value);
            if (x == -1.0 && PyErr_Occurred()) return PyErr_ExceptionMatches(PyExc_MemoryError) ? -1 : 0;
            AT(e->c_num, double, e->c_num.n++) = x;
        } else {
            PyObject *n = PyNumber_Long(value);
            long long x = n == NULL ? -1 : PyLong_AsLongLong(n);
            Py_XDECREF(n);
            if (x == -1 && PyErr_Occurred()) return PyErr_ExceptionMatches(PyExc_MemoryError) ? -1 : 0;
            AT(e->c_num, int64_t, e->c_num.n++) = x;
        }
    }
    return 1;
}

/* stamp the values, the inputs and the outputs (each output's positions chained, run indices given) */
static int stamp_all(Enc *e, PyObject *values, PyObject *inputs, PyObject *outputs) {
    Py_ssize_t pos = 0;
    PyObject *t, *value;
    for (int32_t c = 0; PyDict_Next(values, &pos, &t, &value); c++)
        if (stamp(&e->saved, t, M_VALUE | (uint32_t)c) < 0) return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); i++) {
        PyObject *s = PyTuple_GET_ITEM(inputs, i);
        int d = IS_TERM(s) ? dtype_of(s) : -1, kind = kind_of_dtype(d);
        if (kind < 0) return -2;
        int32_t v = enc_new_value(e, kind, d, 0);
        if (v < 0 || give_value(e, s, v) < 0 || vec_push32(&e->in_vid, v) < 0) return -1;
    }
    const Py_ssize_t n = PyTuple_GET_SIZE(outputs);
    int32_t *last = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    if (last == NULL) return -1;
    for (Py_ssize_t j = 0; j < n; j++) {
        t = PyTuple_GET_ITEM(outputs, j);
        if (!IS_TERM(t)) {
            free(last);
            return -2;
        }
        uint64_t m = stamped(&e->saved, t);
        int64_t f = (int64_t)((m & OUT_MASK) >> OUT_SHIFT) - 1;
        e->next[j] = -1;
        if (f >= 0) { /* a repeated output: one more position */
            e->next[last[f]] = (int32_t)j;
            last[f] = (int32_t)j;
            continue;
        }
        last[j] = (int32_t)j;
        e->run[j] = -1;
        if (!(m & M_VALUE)) { /* known only at run time: written by the run entry point */
            e->run[j] = (int32_t)e->run_pos.n;
            if (vec_push32(&e->run_pos, (int32_t)j) < 0) break;
        }
        if (stamp(&e->saved, t, (m & ~M_MINE) | ((uint64_t)(j + 1) << OUT_SHIFT)) < 0) break;
    }
    free(last);
    return PyErr_Occurred() ? -1 : 0;
}

/* the instructions of a step of op `name`, dtype `dtype`, n operands (operand i's value: get(e, ctx, i), asked in
   the twin's order); its value, -1 error, -2 the twin must run */
int32_t enc_instructions(Enc *e, PyObject *name, int dtype, Py_ssize_t n, EncOperand get, void *ctx) {
    if (dtype != D_FLOAT64 || n == 0 || name == NULL) return -2;
    PyObject *code = PyDict_GetItemWithError(e->tables[n == 1 ? 0 : n == 2 ? 1 : 2], name);
    if (code == NULL) return PyErr_Occurred() ? -1 : -2;
    int32_t dst;
    if (n <= 2) { /* one instruction, as the twin's inline step: operands first, then the result */
        int32_t a = get(e, ctx, 0), b = get(e, ctx, n - 1);
        if (a < 0 || b < 0) return a == -1 || b == -1 ? -1 : -2;
        long op = PyLong_AsLong(code);
        if (AT(e->dtype, int8_t, b) != D_FLOAT64) { /* x ** k, k an int64: POW_DI */
            PyObject *power = PyDict_GetItemWithError(e->tables[3], name);
            if (power == NULL) return PyErr_Occurred() ? -1 : -2;
            if (n != 2 || AT(e->dtype, int8_t, b) != D_INT64) return -2;
            op = PyLong_AsLong(power);
        }
        if (AT(e->dtype, int8_t, a) != D_FLOAT64) return -2;
        if ((dst = enc_new_value(e, KD, D_FLOAT64, 0)) < 0 || enc_emit(e, (int32_t)op, dst, a, b, -1) < 0) return -1;
        return dst;
    }
    /* a fold, left to right: the result first, then the operands, then the partial results */
    if ((dst = enc_new_value(e, KD, D_FLOAT64, 0)) < 0) return -1;
    int32_t *ops = malloc((size_t)n * sizeof(int32_t));
    if (ops == NULL) return -1;
    int status = 0;
    for (Py_ssize_t i = 0; i < n && status == 0; i++) {
        int32_t v = get(e, ctx, i);
        status = v < 0 ? v : AT(e->dtype, int8_t, v) != D_FLOAT64 ? -2 : 0;
        ops[i] = v;
    }
    int32_t acc = ops[0], op = (int32_t)PyLong_AsLong(code);
    for (Py_ssize_t i = 1; i < n && status == 0; i++) {
        int32_t target = i == n - 1 ? dst : enc_new_value(e, KD, D_FLOAT64, 0);
        status = target < 0 || enc_emit(e, op, target, acc, ops[i], -1) < 0 ? -1 : 0;
        acc = target;
    }
    free(ops);
    return status < 0 ? status : dst;
}

/* operand i of the node ctx (by its mark) */
static int32_t operand_of_term(Enc *e, void *ctx, Py_ssize_t i) {
    return operand(e, TERM_ARG(ctx, i));
}

/* the instructions of one step; 0 done, -1 error, -2 the twin must run */
static int step(Enc *e, PyObject *node) {
    PyObject *name = OP_SLOT(TERM(node)->op, *CvmTerms->off_name);
    int32_t dst = enc_instructions(e, name, dtype_of(node), NARGS(node), operand_of_term, node);
    if (dst < 0) return dst;
    if (give_value(e, node, dst) < 0) return -1;
    return store(e, node, dst);
}

/* ask for what the steps after step k read, in stages (their terms, the operands held in them, their
   operands' words): the encoding is bound by memory latency, one term after another */
static inline void ahead(PyObject *steps, Py_ssize_t k, Py_ssize_t n) {
    if (k + 32 < n) {
        const char *t = (const char *)PyList_GET_ITEM(steps, k + 32);
        __builtin_prefetch(t);
        __builtin_prefetch(t + 32);
    }
    if (k + 16 < n && IS_TERM(PyList_GET_ITEM(steps, k + 16))) {
        const char *args = (const char *)TERM(PyList_GET_ITEM(steps, k + 16))->items; /* (in the term) */
        __builtin_prefetch(args);
        __builtin_prefetch(args + 32);
    }
    if (k + 6 < n && IS_TERM(PyList_GET_ITEM(steps, k + 6))) {
        PyObject *soon = PyList_GET_ITEM(steps, k + 6);
        for (Py_ssize_t i = 0; i < TERM_NARGS(soon) && i < 4; i++) {
            const char *a = (const char *)TERM_ARG(soon, i);
            __builtin_prefetch(a + offsetof(TermObject, mark));
        }
    }
}

/* everything under the stamps: 0 done, -1 error, -2 the twin must run */
static int encode_all(Enc *e, PyObject *steps, PyObject *values, PyObject *inputs, PyObject *outputs) {
    int status = stamp_all(e, values, inputs, outputs);
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(outputs) && status == 0; j++) {
        PyObject *t = PyTuple_GET_ITEM(outputs, j);
        if (stamped(&e->saved, t) & (M_VID | M_VALUE)) { /* an input or a compile-time value: stored before anything runs */
            int32_t v = operand(e, t);
            status = v < 0 ? v : store(e, t, v);
        }
    }
    const Py_ssize_t n = PyList_GET_SIZE(steps);
    for (Py_ssize_t k = 0; k < n && status == 0; k++) {
        ahead(steps, k, n);
        PyObject *node = PyList_GET_ITEM(steps, k);
        status = IS_TERM(node) ? step(e, node) : -2;
    }
    return status;
}

static PyObject *bytes_of(const Vec *v) {
    return PyBytes_FromStringAndSize(v->data ? v->data : "", (Py_ssize_t)(v->n * v->item));
}

/* the result tuple of a finished encoding (the stamps are off) */
PyObject *enc_result(Enc *e, PyObject *outputs) {
    PyObject *runs = PyList_New((Py_ssize_t)e->run_pos.n);
    if (runs == NULL) return NULL;
    for (size_t r = 0; r < e->run_pos.n; r++) {
        PyObject *t = PyTuple_GET_ITEM(outputs, AT(e->run_pos, int32_t, r));
        PyList_SET_ITEM(runs, (Py_ssize_t)r, Py_NewRef(t));
    }
    return Py_BuildValue("(NNNNNNNNN)", bytes_of(&e->code), bytes_of(&e->kinds), bytes_of(&e->pinned),
                         bytes_of(&e->in_vid), bytes_of(&e->cd_vid), bytes_of(&e->cd_val), bytes_of(&e->ci_vid),
                         bytes_of(&e->ci_val), runs);
}

/* what an encoding ends in, by its status: the result tuple (0), None (-2: the program does not fit, the
   caller's twin runs), or NULL with an error (-1); the encoder is freed either way */
PyObject *enc_finish(Enc *e, int status, PyObject *outputs) {
    PyObject *result = NULL;
    if (status == -2) {
        PyErr_Clear();
        result = Py_NewRef(Py_None);
    } else if (status == 0) {
        result = enc_result(e, outputs);
    } else if (!PyErr_Occurred()) {
        PyErr_NoMemory();
    }
    enc_free(e);
    return result;
}

void enc_free(Enc *e) {
    Vec *vecs[] = {&e->saved,  &e->kinds,  &e->pinned,  &e->dtype, &e->code,   &e->cd_vid,  &e->ci_vid,
                   &e->cd_val, &e->ci_val, &e->c_dtype, &e->c_num, &e->in_vid, &e->run_pos};
    for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++) free(vecs[i]->data);
    free(e->stored);
    free(e->next);
    free(e->run);
}

/* 1 when `tables` is (unary, binary, folds, powers, numpy.generic), else 0 with a TypeError */
int enc_tables_ok(PyObject *tables) {
    int ok = PyTuple_GET_SIZE(tables) == 5 && PyType_Check(PyTuple_GET_ITEM(tables, 4));
    for (int i = 0; ok && i < 4; i++) ok = PyDict_Check(PyTuple_GET_ITEM(tables, i));
    if (!ok) PyErr_SetString(PyExc_TypeError, "encoding tables are (unary, binary, folds, powers, numpy.generic)");
    return ok;
}

/* an empty encoder for n_out outputs; 0, or -1 out of memory (free it with enc_free either way) */
int enc_start(Enc *e, Py_ssize_t n_out, PyObject *tables) {
    *e = (Enc){VEC(Saved),  VEC(int32_t), VEC(int32_t), VEC(int8_t),  VEC(int32_t), VEC(int32_t), VEC(int32_t),
               VEC(double), VEC(int64_t), VEC(int8_t),  VEC(double),  VEC(int32_t), VEC(int32_t), NULL,
               NULL,        NULL,         &PyTuple_GET_ITEM(tables, 0)};
    size_t size = (size_t)(n_out ? n_out : 1);
    e->stored = calloc(size, 1);
    e->next = malloc(size * sizeof(int32_t));
    e->run = malloc(size * sizeof(int32_t));
    return !e->stored || !e->next || !e->run ? -1 : 0;
}

/* encode_flat(steps: list, inputs: tuple, outputs: tuple, values: dict, tables: tuple) -> tuple or None
   tables: (unary, binary, folds, powers: dicts op name -> opcode, numpy.generic). The result: (code,
   kinds, pinned, input values, double constants' values, their numbers, int constants' values, their
   numbers, run outputs): bytes of int32 (the numbers: float64, int64), and a list. */
PyObject *cvm_encode_flat(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *steps, *inputs, *outputs, *values, *tables;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!:encode_flat", &PyList_Type, &steps, &PyTuple_Type, &inputs,
                          &PyTuple_Type, &outputs, &PyDict_Type, &values, &PyTuple_Type, &tables))
        return NULL;
    if (!enc_tables_ok(tables)) return NULL;
    const Py_ssize_t n_out = PyTuple_GET_SIZE(outputs);
    if (cvm_term_api() == NULL || n_out >= ((Py_ssize_t)1 << 29) - 1 || PyList_GET_SIZE(steps) >= 0x3fffffff)
        Py_RETURN_NONE;
    Enc e;
    int fit = enc_start(&e, n_out, tables) < 0 ? -1 : enc_read_values(&e, values, PyTuple_GET_ITEM(tables, 4));
    int status = fit < 0 ? -1 : fit == 0 ? -2 : encode_all(&e, steps, values, inputs, outputs);
    unstamp(&e.saved); /* before any Python object is made */
    return enc_finish(&e, status, outputs);
}
