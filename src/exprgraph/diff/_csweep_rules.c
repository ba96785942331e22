/* _csweep_rules.c: gradient rules recorded once (by exprgraph.core.grad_template) and replayed.

   A template is kept per signature: the op, its attr, the rule object, the dtype of the adjoint
   and per operand its dtype, or the constant itself when the rule reads constants (else a marker
   per dtype). The Python recorder gives the program as tuples; it is checked and compiled to an
   array of instructions here. A node that cannot be recorded (a shape, many operands, a full
   cache) has its rule called. */

#include "_csweep.h"

/* -- recorded templates -- */

enum { I_G = 0, I_NODE = 1, I_ARG = 2, I_CONST = 3, I_RAW = 4, I_PRODUCT = 5, I_NEGATE = 6 };

typedef struct {
    int kind;
    int index;        /* I_ARG: the operand */
    PyObject *op;     /* I_RAW */
    PyObject *attr;   /* I_RAW: the attr; I_CONST: the constant term */
    int n;
    int *operands;    /* registers */
} Instr;

#define SIG_HEAD 4 /* op, attr, gradient dtype, rule */

typedef struct Template {
    /* the signature, owned: op, attr, the gradient's dtype and the rule (a rule replaced later is
       recorded anew), then a key per operand (its dtype, or a constant's term or marker) */
    PyObject *sig[SIG_HEAD + MAX_RECORDED];
    int nargs;
    Py_hash_t hash;
    struct Template *next;
    /* the program; direct = 1 when the rule is called instead */
    int direct;
    int ninstr, nout;
    Instr *code;
    int *outputs;
    /* per output, the instructions it needs (bit k: instruction k), when there are at most 64
       instructions; NULL otherwise (every instruction runs) */
    uint64_t *needs;
} Template;

#define MAX_TEMPLATES 4096
static Template *TBuckets[1024];
static int NTemplates = 0;

/* a hash of the signature's objects by address (templates are only looked up here: any good mix
   will do, and an inline one saves a call into core per operand) */
static Py_hash_t
signature_hash(PyObject *const *sig, int n)
{
    uint64_t h = (uint64_t)n;
    for (int i = 0; i < n; i++) {
        h = (h ^ ((uintptr_t)sig[i] >> 4)) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    return (Py_hash_t)h;
}

/* fill t->needs: the instructions each output reads, directly or through earlier registers */
static int
template_needs(Template *t)
{
    if (t->ninstr > 64)
        return 0;
    uint64_t dep[64];
    for (int k = 0; k < t->ninstr; k++) {
        dep[k] = (uint64_t)1 << k;
        for (int j = 0; j < t->code[k].n; j++)
            dep[k] |= dep[t->code[k].operands[j]];
    }
    t->needs = (uint64_t *)PyMem_Calloc(t->nout ? t->nout : 1, sizeof(uint64_t));
    if (t->needs == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (int j = 0; j < t->nout; j++)
        t->needs[j] = t->outputs[j] < 0 ? 0 : dep[t->outputs[j]];
    return 0;
}

static int
compile_program(Template *t, PyObject *program)
{
    /* program = (code, outputs); code[k] = (kind, op, attr, operands) */
    if (!PyTuple_Check(program) || PyTuple_GET_SIZE(program) != 2) {
        PyErr_SetString(PyExc_TypeError, "a recorded template is (code, outputs)");
        return -1;
    }
    PyObject *code = PyTuple_GET_ITEM(program, 0), *outputs = PyTuple_GET_ITEM(program, 1);
    if (!PyTuple_Check(code) || !PyTuple_Check(outputs)) {
        PyErr_SetString(PyExc_TypeError, "a recorded template is (code, outputs)");
        return -1;
    }
    Py_ssize_t ni = PyTuple_GET_SIZE(code), no = PyTuple_GET_SIZE(outputs);
    if (no != t->nargs) {
        PyErr_SetString(PyExc_ValueError, "a recorded template gives one contribution per operand");
        return -1;
    }
    t->code = (Instr *)PyMem_Calloc(ni ? ni : 1, sizeof(Instr));
    t->outputs = (int *)PyMem_Calloc(no ? no : 1, sizeof(int));
    if (t->code == NULL || t->outputs == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    t->ninstr = (int)ni;
    t->nout = (int)no;
    for (Py_ssize_t k = 0; k < ni; k++) {
        PyObject *ins = PyTuple_GET_ITEM(code, k);
        if (!PyTuple_Check(ins) || PyTuple_GET_SIZE(ins) != 4) {
            PyErr_SetString(PyExc_TypeError, "a template instruction is (kind, op, attr, operands)");
            return -1;
        }
        Instr *in = &t->code[k];
        in->kind = (int)PyLong_AsLong(PyTuple_GET_ITEM(ins, 0));
        PyObject *operands = PyTuple_GET_ITEM(ins, 3);
        if (!PyTuple_Check(operands)) {
            PyErr_SetString(PyExc_TypeError, "template operands must be a tuple");
            return -1;
        }
        in->n = (int)PyTuple_GET_SIZE(operands);
        in->operands = (int *)PyMem_Calloc(in->n ? in->n : 1, sizeof(int));
        if (in->operands == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (int j = 0; j < in->n; j++) {
            long r = PyLong_AsLong(PyTuple_GET_ITEM(operands, j));
            if (r < 0 || r >= k) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_ValueError, "a template operand must name an earlier register");
                return -1;
            }
            in->operands[j] = (int)r;
        }
        switch (in->kind) {
        case I_ARG:
            in->index = (int)PyLong_AsLong(PyTuple_GET_ITEM(ins, 2));
            if (in->index < 0 || in->index >= t->nargs) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_ValueError, "a template reads an operand the node does not have");
                return -1;
            }
            break;
        case I_CONST:
            in->attr = PyTuple_GET_ITEM(ins, 2);
            Py_INCREF(in->attr);
            break;
        case I_RAW:
            in->op = PyTuple_GET_ITEM(ins, 1);
            in->attr = PyTuple_GET_ITEM(ins, 2);
            Py_INCREF(in->op);
            Py_INCREF(in->attr);
            break;
        case I_PRODUCT:
            if (in->n < 2) {
                PyErr_SetString(PyExc_ValueError, "a template product needs g and a factor");
                return -1;
            }
            break;
        case I_NEGATE:
            if (in->n != 1) {
                PyErr_SetString(PyExc_ValueError, "a template negate takes one operand");
                return -1;
            }
            break;
        case I_G: case I_NODE: break;
        default:
            PyErr_SetString(PyExc_ValueError, "unknown template instruction");
            return -1;
        }
        if (PyErr_Occurred())
            return -1;
    }
    for (Py_ssize_t j = 0; j < no; j++) {
        long r = PyLong_AsLong(PyTuple_GET_ITEM(outputs, j));
        if (r >= ni || r < -1) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "a template output must name a register or be -1");
            return -1;
        }
        t->outputs[j] = (int)r;
    }
    return template_needs(t);
}

static void
free_template(Template *t)
{
    if (t->code != NULL) {
        for (int k = 0; k < t->ninstr; k++) {
            Py_XDECREF(t->code[k].op);
            Py_XDECREF(t->code[k].attr);
            PyMem_Free(t->code[k].operands);
        }
        PyMem_Free(t->code);
    }
    PyMem_Free(t->outputs);
    PyMem_Free(t->needs);
    for (int i = 0; i < SIG_HEAD + t->nargs; i++)
        Py_XDECREF(t->sig[i]);
    PyMem_Free(t);
}

/* The template for (node, g): a recorded program, a direct marker, or NULL when the node is not
   recordable here (call the rule); NULL with an exception on error. */
static Template *
find_template(PyObject *node, PyObject *g, PyObject *rule)
{
    Py_ssize_t n = TERM_NARGS(node);
    if (n > MAX_RECORDED || TERM_HAS_SHAPE(node) || TERM_HAS_SHAPE(g))
        return NULL;
    PyObject *op = TERM(node)->op;
    PyObject *reads = OP_SLOT(op, OffReadsConsts);
    int read_values = reads == Py_True
                      || (reads != NULL && reads != Py_False && reads != Py_None && PyObject_IsTrue(reads) == 1);
    PyObject *sig[SIG_HEAD + MAX_RECORDED], **keys = sig + SIG_HEAD;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = TERM_ARG(node, i);
        if (TERM_HAS_SHAPE(a))
            return NULL;
        int d = TERM_DTYPE_INDEX(a);
        if (d < 0)
            return NULL;
        if (TERM(a)->op != OpConst)
            keys[i] = DtypeNames[d];
        else if (read_values || d == D_BOOL)
            keys[i] = a;
        else
            keys[i] = ConstMarker[d];
    }
    int dg = TERM_DTYPE_INDEX(g);
    if (dg < 0)
        return NULL;
    sig[0] = op;
    sig[1] = TERM_ATTR(node);
    sig[2] = DtypeNames[dg];
    sig[3] = rule;
    int nsig = SIG_HEAD + (int)n;
    Py_hash_t h = signature_hash(sig, nsig);
    size_t b = (size_t)h & 1023;
    for (Template *t = TBuckets[b]; t != NULL; t = t->next) {
        if (t->hash != h || t->nargs != n)
            continue;
        int same = 1;
        for (int i = 0; i < nsig && same; i++)
            same = t->sig[i] == sig[i];
        if (same)
            return t;
    }
    if (NTemplates >= MAX_TEMPLATES)
        return NULL;
    Template *t = (Template *)PyMem_Calloc(1, sizeof(Template));
    if (t == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    t->nargs = (int)n;
    for (int i = 0; i < nsig; i++)
        t->sig[i] = Py_NewRef(sig[i]);
    t->hash = h;
    PyObject *program = PyObject_CallFunctionObjArgs(Recorder, node, g, NULL);
    if (program == NULL) {
        free_template(t);
        return NULL;
    }
    if (program == Py_None)
        t->direct = 1;
    else if (compile_program(t, program) < 0) {
        Py_DECREF(program);
        free_template(t);
        return NULL;
    }
    Py_DECREF(program);
    t->next = TBuckets[b];
    TBuckets[b] = t;
    NTemplates++;
    return t;
}

/* the contributions of a template replayed on (node, g) into out[0 .. t->nout): new references, None
   where there is none and for each output j < 64 whose bit is clear in want (the terms only it needs
   are never built, since a sweep would drop them, e.g. d(w*x)/dw when w leads to no target). 0, or -1 */
static int
replay_into(Template *t, PyObject *node, PyObject *g, uint64_t want, PyObject **out)
{
    PyObject *small[32];
    PyObject **regs = t->ninstr <= 32 ? small : (PyObject **)PyMem_Calloc(t->ninstr, sizeof(PyObject *));
    int done = -1;
    if (regs == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    uint64_t need = ~(uint64_t)0;
    if (t->needs != NULL) {
        need = 0;
        for (int j = 0; j < t->nout; j++)
            if (j >= 64 || (want >> j) & 1)
                need |= t->needs[j];
    }
    int filled = 0;
    for (int k = 0; k < t->ninstr; k++) {
        Instr *in = &t->code[k];
        PyObject *v = NULL;
        if (k < 64 && !((need >> k) & 1)) { /* (no wanted output reads it) */
            regs[k] = NULL;
            filled = k + 1;
            continue;
        }
        switch (in->kind) {
        case I_G: v = g; Py_INCREF(v); break;
        case I_NODE: v = node; Py_INCREF(v); break;
        case I_ARG: v = ARG(node, in->index); Py_INCREF(v); break;
        case I_CONST: v = in->attr; Py_INCREF(v); break;
        case I_RAW: {
            PyObject *operands[MAX_RECORDED + 8];
            PyObject **os = in->n <= MAX_RECORDED + 8 ? operands : (PyObject **)PyMem_Malloc(in->n * sizeof(PyObject *));
            if (os == NULL) {
                PyErr_NoMemory();
                goto fail;
            }
            for (int j = 0; j < in->n; j++)
                os[j] = regs[in->operands[j]];
            v = intern_items(TermClass, in->op, os, in->n, in->attr);
            if (os != operands)
                PyMem_Free(os);
            break;
        }
        case I_PRODUCT: {
            PyObject *factors[MAX_RECORDED + 8];
            PyObject **fs = in->n - 1 <= MAX_RECORDED + 8 ? factors : (PyObject **)PyMem_Malloc((in->n - 1) * sizeof(PyObject *));
            if (fs == NULL) {
                PyErr_NoMemory();
                goto fail;
            }
            for (int j = 1; j < in->n; j++)
                fs[j - 1] = regs[in->operands[j]];
            v = c_product(regs[in->operands[0]], fs, in->n - 1);
            if (fs != factors)
                PyMem_Free(fs);
            break;
        }
        default: v = c_negate(regs[in->operands[0]]);
        }
        if (v == NULL)
            goto fail;
        regs[k] = v;
        filled = k + 1;
    }
    for (int j = 0; j < t->nout; j++) {
        PyObject *v = t->outputs[j] < 0 || regs[t->outputs[j]] == NULL ? Py_None : regs[t->outputs[j]];
        out[j] = Py_NewRef(v);
    }
    done = 0;
fail:
    for (int k = 0; k < filled; k++)
        Py_XDECREF(regs[k]);
    if (regs != small)
        PyMem_Free(regs);
    return done;
}

/* the same as a new tuple */
static PyObject *
replay(Template *t, PyObject *node, PyObject *g, uint64_t want)
{
    PyObject *out = PyTuple_New(t->nout);
    if (out != NULL && replay_into(t, node, g, want, ((PyTupleObject *)out)->ob_item) < 0)
        Py_CLEAR(out); /* (its items are still NULL) */
    return out;
}

/* the contributions of node's rule for adjoint g: replayed, or the rule called (new reference) */
PyObject *
replayed(PyObject *node, PyObject *g, PyObject *rule)
{
    Template *t = find_template(node, g, rule);
    if (t == NULL || t->direct)
        return NULL;
    return replay(t, node, g, ~(uint64_t)0);
}

Py_ssize_t
contributions_into(PyObject *node, PyObject *g, uint64_t want, PyObject **out, PyObject **holder)
{
    *holder = NULL;
    PyObject *rule = OP_SLOT(TERM(node)->op, OffGrad);
    if (rule == NULL || rule == Py_None) {
        PyErr_Format(DiffError, "op %R has no gradient rule; give it one with the grad= entry of its Op",
                     OP_NAME(TERM(node)->op));
        return -1;
    }
    Template *t = find_template(node, g, rule);
    if (t != NULL && !t->direct)
        return replay_into(t, node, g, want, out) < 0 ? -1 : t->nout;
    if (PyErr_Occurred())
        return -1;
    PyObject *res = PyObject_CallFunctionObjArgs(rule, node, g, NULL);
    if (res == NULL)
        return -1;
    *holder = PySequence_Tuple(res);
    Py_DECREF(res);
    return *holder == NULL ? -1 : PyTuple_GET_SIZE(*holder);
}

int
template_total(void)
{
    return NTemplates;
}
