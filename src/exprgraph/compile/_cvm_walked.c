/* _cvm_walked.c: the straight-line encoding read from the lowering's walk kept as arrays (its twin:
 * compile/vm_encode.py's _encode_flat_py; it gives what encode_flat gives, word for word).
 *
 * encode_walked(walked, steps, symbols, inputs, outputs, values, tables) encodes the program lower() made
 * from walk(..., arrays=True) as encode_flat does, in the same order (the inputs, the stores of the outputs
 * known before the run, then each step): only each step's op, dtype and operands come from the walk's
 * arrays, by node number, where encode_flat reads every step's term, its operands (held in the term) and its operands'
 * marks again, one cache miss after another. It first checks that the program is the one walked (its
 * steps, constants and symbols are the walk's nodes in the walk's order, its outputs the walk's outputs):
 * any other program, or one encode_flat declines, answers None. No node is stamped.
 */
#include "_cvm_encode.h"

#include "_cvm.h"

typedef struct {
    const Walked *w;
    int32_t *vid;   /* by number: its value, -1 none yet */
    int32_t *cidx;  /* by number: its compile-time value, -1 none */
    int32_t *first; /* by number: its first output position, -1 none */
    int32_t *last;  /* by first output position: the last position of the same output */
    int32_t k;      /* the step being encoded */
} Dag;

/* the value holding node k (a constant's made at its first use); -1 error, -2 the twin must run */
static int32_t value_of(Enc *e, Dag *d, int32_t k) {
    if (d->vid[k] >= 0) return d->vid[k];
    if (d->cidx[k] < 0) return -2; /* not computed yet, or unknown: the twin raises */
    const int32_t v = enc_constant(e, d->cidx[k]);
    if (v >= 0) d->vid[k] = v;
    return v;
}

static int32_t operand_by_number(Enc *e, void *ctx, Py_ssize_t i) {
    Dag *d = ctx;
    return value_of(e, d, AT(d->w->edges, int32_t, AT(d->w->start, int32_t, d->k) + i));
}

/* the program is the one walked: its steps, constants (`values`, in order) and symbols are the walk's
   nodes in the walk's order, every node met once, the outputs the walk's; 1 yes, 0 no */
static int same_program(const Walked *w, PyObject *steps, PyObject *symbols, PyObject *values, PyObject *outputs,
                        uint8_t *met) {
    const Py_ssize_t n = (Py_ssize_t)w->node.n;
    if ((Py_ssize_t)w->order.n != n || (Py_ssize_t)w->out_k.n != PyTuple_GET_SIZE(outputs)) return 0;
    Py_ssize_t si = 0, yi = 0, pos = 0;
    PyObject *key, *value;
    for (Py_ssize_t o = 0; o < n; o++) {
        const int32_t k = AT(w->order, int32_t, o);
        if (k < 0 || k >= n || met[k]) return 0;
        met[k] = 1;
        PyObject *node = AT(w->node, PyObject *, k);
        const uint8_t f = AT(w->flag, uint8_t, k);
        if (!(f & F_LEAF)) {
            if (si >= PyList_GET_SIZE(steps) || PyList_GET_ITEM(steps, si++) != node) return 0;
        } else if (f & F_CONST) {
            if (!PyDict_Next(values, &pos, &key, &value) || key != node) return 0;
        } else if (yi >= PyList_GET_SIZE(symbols) || PyList_GET_ITEM(symbols, yi++) != node) {
            return 0;
        }
    }
    if (si != PyList_GET_SIZE(steps) || yi != PyList_GET_SIZE(symbols) || PyDict_Next(values, &pos, &key, &value))
        return 0;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(outputs); j++) {
        const int32_t k = AT(w->out_k, int32_t, j);
        if (k < 0 || k >= n || AT(w->node, PyObject *, k) != PyTuple_GET_ITEM(outputs, j)) return 0;
    }
    return 1;
}

/* the inputs' values, then the outputs' positions (as stamp_all in _cvm_encode.c); 0, -1 error, -2 the twin */
static int start_values(Enc *e, Dag *d, PyObject *symbols, PyObject *inputs, PyObject *outputs) {
    const Walked *w = d->w;
    Py_ssize_t c = 0, y = 0;
    for (size_t o = 0; o < w->order.n; o++) { /* constants numbered in the walk's order (the values' order) */
        const int32_t k = AT(w->order, int32_t, o);
        if (AT(w->flag, uint8_t, k) & F_CONST) d->cidx[k] = (int32_t)c++;
    }
    /* the inputs by their place among the symbols: each symbol stamped with its number a moment (no Python) */
    Vec saved = VEC(Saved);
    int status = 0;
    for (size_t o = 0; o < w->order.n && status == 0; o++) {
        const int32_t k = AT(w->order, int32_t, o);
        if ((AT(w->flag, uint8_t, k) & (F_LEAF | F_CONST)) == F_LEAF)
            status = stamp(&saved, PyList_GET_ITEM(symbols, y++), (uint64_t)k);
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs) && status == 0; i++) {
        PyObject *s = PyTuple_GET_ITEM(inputs, i);
        const int dt = IS_TERM(s) ? dtype_of(s) : -1, kind = kind_of_dtype(dt);
        const uint64_t m = IS_TERM(s) ? stamped(&saved, s) : 0;
        if (kind < 0 || !(m & M_MINE)) {
            status = -2;
            break;
        }
        const int32_t v = enc_new_value(e, kind, dt, 0);
        status = v < 0 || vec_push32(&e->in_vid, v) < 0 ? -1 : 0;
        if (status == 0) d->vid[(int32_t)(m & 0xffffffffu)] = v;
    }
    unstamp(&saved);
    free(saved.data);
    if (status < 0) return status;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(outputs); j++) {
        const int32_t k = AT(w->out_k, int32_t, j), f = d->first[k];
        e->next[j] = -1;
        if (f >= 0) { /* a repeated output: one more position, chained after the last */
            e->next[d->last[f]] = (int32_t)j;
            d->last[f] = (int32_t)j;
            continue;
        }
        d->first[k] = d->last[j] = (int32_t)j;
        e->run[j] = -1;
        if (d->cidx[k] < 0) { /* known only at run time: written by the run entry point */
            e->run[j] = (int32_t)e->run_pos.n;
            if (vec_push32(&e->run_pos, (int32_t)j) < 0) return -1;
        }
    }
    return 0;
}

/* the known outputs' stores, then every step; 0 done, -1 error, -2 the twin must run */
static int encode_steps(Enc *e, Dag *d, PyObject *outputs) {
    const Walked *w = d->w;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(outputs); j++) {
        const int32_t k = AT(w->out_k, int32_t, j);
        if (d->vid[k] >= 0 || d->cidx[k] >= 0) { /* an input or a compile-time value: stored before anything runs */
            const int32_t v = value_of(e, d, k);
            if (v < 0) return v;
            if (enc_store_at(e, d->first[k], v) < 0) return -1;
        }
    }
    const Py_ssize_t off = *CvmTerms->off_name;
    for (size_t o = 0; o < w->order.n; o++) {
        const int32_t k = AT(w->order, int32_t, o);
        if (AT(w->flag, uint8_t, k) & F_LEAF) continue;
        const int32_t end = k + 1 < (int32_t)w->node.n ? AT(w->start, int32_t, k + 1) : (int32_t)w->edges.n;
        const Py_ssize_t n = (Py_ssize_t)(end - AT(w->start, int32_t, k));
        d->k = k;
        const int32_t dst = enc_instructions(e, OP_SLOT(AT(w->op, PyObject *, k), off), AT(w->dt, int8_t, k), n,
                                             operand_by_number, d);
        if (dst < 0) return dst;
        d->vid[k] = dst;
        if (enc_store_at(e, d->first[k], dst) < 0) return -1;
    }
    return 0;
}

/* encode_walked(walked, steps, symbols, inputs, outputs, values, tables) -> tuple or None: encode_flat's
   result for the program lower() made from walk(..., arrays=True) (see the top of the file) */
PyObject *cvm_encode_walked(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *capsule, *steps, *symbols, *inputs, *outputs, *values, *tables;
    if (!PyArg_ParseTuple(args, "OO!O!O!O!O!O!:encode_walked", &capsule, &PyList_Type, &steps, &PyList_Type, &symbols,
                          &PyTuple_Type, &inputs, &PyTuple_Type, &outputs, &PyDict_Type, &values, &PyTuple_Type,
                          &tables))
        return NULL;
    if (!enc_tables_ok(tables)) return NULL;
    const Walked *w = PyCapsule_IsValid(capsule, WALKED_CAPSULE) ? PyCapsule_GetPointer(capsule, WALKED_CAPSULE) : NULL;
    const Py_ssize_t n_out = PyTuple_GET_SIZE(outputs);
    if (w == NULL || cvm_term_api() == NULL || n_out >= ((Py_ssize_t)1 << 29) - 1) Py_RETURN_NONE;
    const size_t n = w->node.n ? w->node.n : 1;
    Dag d = {w, malloc(n * sizeof(int32_t)), malloc(n * sizeof(int32_t)), malloc(n * sizeof(int32_t)),
             malloc((size_t)(n_out ? n_out : 1) * sizeof(int32_t)), 0};
    uint8_t *met = calloc(n, 1);
    Enc e;
    int status = enc_start(&e, n_out, tables) < 0 || !d.vid || !d.cidx || !d.first || !d.last || !met ? -1 : 0;
    if (status == 0 && !same_program(w, steps, symbols, values, outputs, met)) status = -2;
    if (status == 0) {
        const int fit = enc_read_values(&e, values, PyTuple_GET_ITEM(tables, 4));
        status = fit < 0 ? -1 : fit == 0 ? -2 : 0;
    }
    if (status == 0) { /* room for everything at once (no copy as the vectors grow): an instruction per operand
                          slot at most, a store per output, a value per instruction, input or constant */
        const size_t slots = w->edges.n, values_at_most = slots + (size_t)PyTuple_GET_SIZE(inputs) + n;
        if (vec_room(&e.code, (slots + (size_t)n_out) * VM_WORDS) < 0 || vec_room(&e.kinds, values_at_most) < 0 ||
            vec_room(&e.pinned, values_at_most) < 0 || vec_room(&e.dtype, values_at_most) < 0)
            status = -1;
    }
    if (status == 0) {
        memset(d.vid, 0xff, n * sizeof(int32_t));
        memset(d.cidx, 0xff, n * sizeof(int32_t));
        memset(d.first, 0xff, n * sizeof(int32_t));
        status = start_values(&e, &d, symbols, inputs, outputs);
    }
    if (status == 0) status = encode_steps(&e, &d, outputs);
    PyObject *result = enc_finish(&e, status, outputs);
    free(d.vid);
    free(d.cidx);
    free(d.first);
    free(d.last);
    free(met);
    return result;
}
