/* The C fast path of exprgraph.interop.torch: torch's common dimension questions answered by intervals alone.

   answer(expr, kind, given, symbols) walks a sympy expression (torch's) with the C API, without making terms, and
   computes the interval of each node exactly as exprgraph.dims.intervals.term_interval computes it on the term the
   reader (exprgraph.interop.torch_read) would make: (lo, hi) with open ends, "exact" (both ends reached), the
   names under the node (a bit each, numbered per question), the flags INC / DEC / DENSE; and, as witnesses, the
   node's value at three points of the ranges and whether it grows past every bound (see _torch_fast_intervals.c).
   It answers only where the answer is certain and the Python road can do no better: quick_bound's exact bounds
   (or ends met at a point or passed), the relations relation_of_intervals, settled, cancelled (common factors of
   products) decide, and a relation true at one point of the ranges and false at another (the walk's three points;
   for the question itself, three more near the high corner and, for side == number, the value of a side monotone
   in its one name where it meets the number: _torch_fast_points.c). Anything else (a kind it does not read, a
   node without an interval, an int64 overflow, more than MAX_NODES calls or MAX_NAMES names) returns
   NotImplemented and the caller takes the Python road, the twin. An expression with a name that is not an
   integer (a float or a bool symbol) has no term: its answers are "unknown", as the Python reader's.

   kind: 0 static_value (an int, a bool or None), 1 bound ((lo, hi), open ends as float infinities; a relation:
   (v, v) or (False, True)), 2 evaluate (True / False / None). given: name -> (lo, hi) (ints or None: TorchDims'
   ranges); symbols: name -> (lo, hi), the defaults the reader recorded. The node kinds of each class are learnt
   once by calling the classifier set with configure() (exprgraph.interop.torch_fast.classify), and the slots its
   nodes are read from once by their member descriptors: sympy and torch are never imported here. */
#include "_torch_fast.h"
#include <structmember.h>

typedef struct {
    PyObject *args;       /* owned */
    Py_ssize_t i, n;
    int kind;
    Val acc;
} Frame;


static Seen seen[MAX_TYPES];
static Seen unseen;  /* a class past the table: read by getattr */
static int n_seen = 0;
static PyObject *classifier = NULL;
PyObject *s_args, *s_raw_args, *s_p, *s_name;
static PyObject *s_assumptions, *s_integer, *s_positive, *s_nonnegative;
static PyObject *s_is_integer, *s_is_positive, *s_is_nonnegative;

/* -- reading a node ---------------------------------------------------------------------------------------- */

/* the offset of the object slot `name` of class t (a member descriptor, which getattr would return first: a data
   descriptor of a class that does not override getattr), or 0 */
static Py_ssize_t slot_offset(PyTypeObject *t, PyObject *name) {
    if (t->tp_getattro != PyObject_GenericGetAttr) return 0;
    PyObject *d = _PyType_Lookup(t, name);
    if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type)) return 0;
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    return (m->type == T_OBJECT_EX || m->type == T_OBJECT) && !(m->flags & PY_AUDIT_READ) ? m->offset : 0;
}

/* x.name: from its slot when the class has one (a new reference; NULL with no error set when there is none) */
PyObject *slot(PyObject *x, Py_ssize_t off, PyObject *name) {
    if (off > 0) {
        PyObject *v = *(PyObject **)((char *)x + off);
        Py_XINCREF(v);
        return v;
    }
    PyObject *v = PyObject_GetAttr(x, name);
    if (v == NULL) PyErr_Clear();
    return v;
}

/* how the nodes of the class of x are read (learnt once: exprgraph.interop.torch_fast.classify) */
const Seen *seen_of(Ctx *c, PyObject *x) {
    PyTypeObject *t = Py_TYPE(x);
    for (int i = 0; i < n_seen; i++)
        if (seen[i].type == t) return &seen[i];
    if (classifier == NULL) return &unseen;
    PyObject *r = PyObject_CallOneArg(classifier, (PyObject *)t);
    if (r == NULL) { c->status = -1; return &unseen; }
    long k = PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2 ? PyLong_AsLong(PyTuple_GET_ITEM(r, 0)) : -1;
    int rw = PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2 ? PyObject_IsTrue(PyTuple_GET_ITEM(r, 1)) : 0;
    Py_DECREF(r);
    if (k < 0 || k >= K_LAST || rw < 0) { PyErr_Clear(); k = K_NONE; rw = 0; }
    if (n_seen == MAX_TYPES) return &unseen;  /* (kind K_NONE: Python reads it) */
    Seen *sn = &seen[n_seen++];
    Py_INCREF(t);
    sn->type = t; sn->kind = (int)k; sn->raw = rw;
    sn->off_args = rw ? slot_offset(t, s_raw_args) : 0;
    sn->off_name = k == K_SYMBOL ? slot_offset(t, s_name) : 0;
    sn->off_assumptions = k == K_SYMBOL ? slot_offset(t, s_assumptions) : 0;
    sn->off_p = k == K_INT ? slot_offset(t, s_p) : 0;
    return sn;
}

/* x.is_<fact> of a symbol: from its table of assumptions when there, else the property (as torch_read._fact) */
static int fact(Ctx *c, const Seen *sn, PyObject *x, PyObject *key, PyObject *attr) {
    PyObject *kb = slot(x, sn->off_assumptions, s_assumptions);
    if (kb != NULL) {
        if (PyDict_Check(kb)) {
            PyObject *v = PyDict_GetItemWithError(kb, key);
            if (v != NULL) { int r = v == Py_True ? 1 : PyObject_IsTrue(v); Py_DECREF(kb); return r < 0 ? (c->status = -1, 0) : r; }
            if (PyErr_Occurred()) { Py_DECREF(kb); c->status = -1; return 0; }
        }
        Py_DECREF(kb);
    }
    PyObject *v = PyObject_GetAttr(x, attr);
    if (v == NULL) { PyErr_Clear(); return 0; }
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    if (r < 0) { c->status = -1; return 0; }
    return r;
}

/* the "integer" fact must be True itself (not only truthy) */
static int is_integer_symbol(Ctx *c, const Seen *sn, PyObject *x) {
    PyObject *kb = slot(x, sn->off_assumptions, s_assumptions);
    if (kb != NULL) {
        if (PyDict_Check(kb)) {
            PyObject *v = PyDict_GetItemWithError(kb, s_integer);
            if (v != NULL) { Py_DECREF(kb); return v == Py_True; }
            if (PyErr_Occurred()) { Py_DECREF(kb); c->status = -1; return 0; }
        }
        Py_DECREF(kb);
    }
    PyObject *v = PyObject_GetAttr(x, s_is_integer);
    if (v == NULL) { PyErr_Clear(); return 0; }
    int r = v == Py_True;
    Py_DECREF(v);
    return r;
}

/* the reserved names (keywords, inf, nan...: dims.terms.RESERVED_NAMES), as C strings (set by configure) */
#define MAX_RESERVED 64
static char reserved_names[MAX_RESERVED][16];
static int n_reserved = -1;  /* -1: not configured, every name is left to Python */

/* whether a name is plain: an ASCII identifier that is not reserved (what dim_name takes without its checks) */
static int plain_name(PyObject *name) {
    if (!PyUnicode_CheckExact(name) || !PyUnicode_IS_ASCII(name) || n_reserved < 0) return 0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(name);
    const unsigned char *p = PyUnicode_1BYTE_DATA(name);
    if (n == 0 || !(p[0] == '_' || (unsigned)((p[0] | 32) - 'a') < 26u)) return 0;
    for (Py_ssize_t i = 1; i < n; i++)
        if (!(p[i] == '_' || (unsigned)((p[i] | 32) - 'a') < 26u || (unsigned)(p[i] - '0') < 10u)) return 0;
    if (n < 16)
        for (int i = 0; i < n_reserved; i++)
            if (memcmp(reserved_names[i], p, (size_t)n + 1) == 0) return 0;
    return 1;
}

/* one end of a recorded range: an int in int64 or None (open) */
static int range_end(PyObject *e, int open_sign, Ext *out) {
    if (e == Py_None) { *out = infinity(open_sign); return 1; }
    if (!PyLong_CheckExact(e)) return 0;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(e, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) { PyErr_Clear(); return 0; }
    *out = fin(v);
    return 1;
}

static int read_range(PyObject *r, Ext *lo, Ext *hi) {
    return PyTuple_CheckExact(r) && PyTuple_GET_SIZE(r) == 2 && range_end(PyTuple_GET_ITEM(r, 0), -1, lo) &&
           range_end(PyTuple_GET_ITEM(r, 1), 1, hi);
}

/* the bit of a name the walk has met (names are str), or -1 */
int name_bit(const Ctx *c, PyObject *name) {
    for (int i = 0; i < c->n_names; i++) {
        PyObject *m = c->names[i];
        if (m == name || (PyUnicode_GET_LENGTH(m) == PyUnicode_GET_LENGTH(name) && PyUnicode_Compare(m, name) == 0))
            return i;
    }
    return -1;
}

static void read_symbol(Ctx *c, const Seen *sn, PyObject *x, Val *out) {
    memset(out, 0, sizeof *out);
    if (!is_integer_symbol(c, sn, x)) { if (c->status == ST_OK) c->status = ST_UNREADABLE; return; }
    PyObject *name = slot(x, sn->off_name, s_name);
    if (name == NULL) { c->status = ST_PASS; return; }
    if (!plain_name(name)) { Py_DECREF(name); c->status = ST_PASS; return; }  /* dim_name's other checks: Python */
    int bit = name_bit(c, name);
    if (bit < 0) {
        if (c->n_names == MAX_NAMES) { Py_DECREF(name); c->status = ST_PASS; return; }
        bit = c->n_names++;
        c->names[bit] = name;  /* (borrowed: the symbol keeps its name) */
    }
    Ext lo, hi;
    PyObject *r = PyDict_GetItemWithError(c->given, name);
    if (r == NULL && !PyErr_Occurred()) r = PyDict_GetItemWithError(c->symbols, name);
    if (PyErr_Occurred()) { Py_DECREF(name); c->status = -1; return; }
    Py_DECREF(name);
    if (r != NULL) {
        if (!read_range(r, &lo, &hi)) { c->status = ST_PASS; return; }
    } else {  /* torch's default range of a name: >= 1 for a positive one, >= 0 for a nonnegative one */
        hi = infinity(1);
        if (fact(c, sn, x, s_positive, s_is_positive)) lo = fin(1);
        else if (fact(c, sn, x, s_nonnegative, s_is_nonnegative)) lo = fin(0);
        else lo = infinity(-1);
        if (c->status != ST_OK) return;
    }
    out->has = 1; out->lo = lo; out->hi = hi; out->exact = 1; out->flags = INC | DENSE;
    out->names = (uint64_t)1 << bit;
    out->leaf = 1; out->leaf_id = bit;
    out->prod = 1; out->coef = 1; out->nf = 1; out->fbit[0] = bit; out->fexp[0] = 1;
    c->name_lo[bit] = lo; c->name_hi[bit] = hi;
    out->plo = !lo.inf; out->vlo = lo.v; out->phi = !hi.inf; out->vhi = hi.v;
    /* the third point: 37 above the least value (below the greatest), else 37 below the greatest, else 37 */
    out->p3 = 1;
    out->v3 = !lo.inf ? (hi.inf || (uint64_t)hi.v - (uint64_t)lo.v > 37 ? lo.v + 37 : hi.v) : !hi.inf ? (hi.v > INT64_MIN + 37 ? hi.v - 37 : hi.v) : 37;
    out->up = hi.inf > 0; out->down = lo.inf < 0;
}

static void read_integer(Ctx *c, const Seen *sn, PyObject *x, Val *out) {
    PyObject *p = sn == NULL ? (Py_INCREF(x), x) : slot(x, sn->off_p, s_p);  /* (no class: a Python int) */
    if (p == NULL) { c->status = ST_PASS; return; }
    int overflow = 0;
    long long v = PyLong_CheckExact(p) ? PyLong_AsLongLongAndOverflow(p, &overflow) : (overflow = 1, 0);
    Py_DECREF(p);
    if (overflow) { c->status = ST_PASS; return; }
    integer_val(out, v);
}

static void bool_val(Val *out, int truth) {
    memset(out, 0, sizeof *out);
    out->is_bool = 1; out->truth = truth;
}

/* a leaf (kind INT, SYMBOL, TRUE, FALSE) read at once */
static void read_leaf(Ctx *c, const Seen *sn, PyObject *x, Val *out) {
    if (sn->kind == K_INT) read_integer(c, sn, x, out);
    else if (sn->kind == K_SYMBOL) read_symbol(c, sn, x, out);
    else bool_val(out, sn->kind == K_TRUE ? T_TRUE : T_FALSE);
}

/* the next operand v (at position pos) of a call of kind `kind` (its operands: args), folded into acc; root: the
   call is the question itself (a relation inside And / Or / Not is not searched for witnesses: another operand
   may decide the answer, and the search would cost for nothing) */
static void fold(Ctx *c, int kind, Py_ssize_t pos, Val *acc, Val *v, PyObject *args, int root) {
    int logic = kind == K_AND || kind == K_OR || kind == K_NOT;
    if (v->is_bool != logic) { c->status = ST_PASS; return; }  /* a boolean where an integer goes, or the reverse */
    if (kind >= K_EQ && kind <= K_GE) {
        if (pos == 0) { *acc = *v; return; }
        int t = relation(c, kind, acc, v);
        if (root && t == T_ASK && (kind == K_EQ || kind == K_NE) && c->status == ST_OK) {
            int ka = acc->has && acc->names == 0 && ext_cmp(acc->lo, acc->hi) == 0 && !acc->lo.inf;
            int kb = v->has && v->names == 0 && ext_cmp(v->lo, v->hi) == 0 && !v->lo.inf;
            if (ka != kb && meets_number(c, PyTuple_GET_ITEM(args, ka ? 1 : 0), ka ? v : acc, ka ? acc->lo.v : v->lo.v))
                t = T_SOMETIMES;
        }
        if (root && t == T_ASK && c->status == ST_OK && probed(c, kind, args, acc, v)) t = T_SOMETIMES;
        bool_val(acc, t);
        return;
    }
    if (pos == 0) { *acc = *v; return; }
    if (kind != K_POW) acc->leaf = 0;  /* a call is not a leaf (b**1 is b itself) */
    if (logic) {  /* Kleene: and is false if one is false, true if all are; or the reverse */
        int a = acc->truth, b = v->truth, r;
        if (kind == K_AND) r = (a == T_FALSE || b == T_FALSE) ? T_FALSE : (a == T_TRUE && b == T_TRUE) ? T_TRUE
                                : (a == T_ASK || b == T_ASK) ? T_ASK : T_SOMETIMES;
        else r = (a == T_TRUE || b == T_TRUE) ? T_TRUE : (a == T_FALSE && b == T_FALSE) ? T_FALSE
                 : (a == T_ASK || b == T_ASK) ? T_ASK : T_SOMETIMES;
        acc->truth = r;
        return;
    }
    if (kind == K_POW) {  /* b**k read as b*b*...*b (k <= 64), 1 for k == 0 */
        if (v->leaf != 2) { c->status = ST_PASS; return; }  /* an exponent that is not an integer constant */
        int64_t k = v->leaf_id;
        if (k < 0 || k > MAX_POWER) { c->status = ST_PASS; return; }
        if (k == 0) { integer_val(acc, 1); return; }
        if (k == 1) return;
        Val base = *acc;
        acc->leaf = 0;
        for (int64_t i = 1; i < k; i++) {
            if (base.has) combine_assoc(c, K_MUL, acc, acc, &base);
            else combine_points(acc, K_MUL, acc, &base);
        }
        return;
    }
    if (!acc->has || !v->has) {  /* an operand without an interval: none, only the values at the points */
        int pk = kind == K_MODIDX ? (pos == 1 ? K_FLOORDIV : K_MOD) : kind;
        combine_points(acc, pk, acc, v);
        return;
    }
    if (kind == K_ADD || kind == K_MUL || kind == K_MAX || kind == K_MIN) combine_assoc(c, kind, acc, acc, v);
    else if (kind == K_FLOORDIV || (kind == K_MODIDX && pos == 1)) combine_floordiv(acc, acc, v);
    else combine_mod(c, acc, v, acc);  /* K_MOD, or K_MODIDX's last: (x // d) % m */
}

/* the number of operands each kind takes (0: any number >= 1) */
static int arity_ok(int kind, Py_ssize_t n) {
    switch (kind) {
    case K_POW: case K_FLOORDIV: case K_MOD: return n == 2;
    case K_MODIDX: return n == 3;
    case K_NOT: return n == 1;
    default:
        if (kind >= K_EQ && kind <= K_GE) return n == 2;
        return n >= 1;
    }
}

static int push(Ctx *c, Frame *stack, int *depth, PyObject *x, const Seen *sn) {
    int kind = sn->kind;
    if (*depth == MAX_DEPTH || ++c->nodes > MAX_NODES) { c->status = ST_PASS; return 0; }
    PyObject *args = sn->raw ? slot(x, sn->off_args, s_raw_args) : slot(x, 0, s_args);
    if (args == NULL) { c->status = ST_PASS; return 0; }
    if (!PyTuple_Check(args) || !arity_ok(kind, PyTuple_GET_SIZE(args))) { Py_DECREF(args); c->status = ST_PASS; return 0; }
    Frame *f = &stack[(*depth)++];
    f->args = args; f->i = 0; f->n = PyTuple_GET_SIZE(args); f->kind = kind;
    memset(&f->acc, 0, sizeof f->acc);
    return 1;
}

/* the value of the expression x (c->status says whether it is one) */
static void evaluate(Ctx *c, PyObject *x, Val *out) {
    if (PyBool_Check(x)) { bool_val(out, x == Py_True ? T_TRUE : T_FALSE); return; }
    if (PyLong_CheckExact(x)) { read_integer(c, NULL, x, out); return; }
    const Seen *sn = seen_of(c, x);
    if (c->status != ST_OK) return;
    if (sn->kind == K_NONE) { c->status = ST_PASS; return; }
    if (sn->kind <= K_FALSE) { read_leaf(c, sn, x, out); return; }
    Frame stack[MAX_DEPTH];
    int depth = 0;
    if (!push(c, stack, &depth, x, sn)) return;
    while (depth > 0 && c->status == ST_OK) {
        Frame *f = &stack[depth - 1];
        if (f->i < f->n) {
            PyObject *a = PyTuple_GET_ITEM(f->args, f->i);
            Py_ssize_t pos = f->i++;
            Val v;
            if (PyBool_Check(a)) bool_val(&v, a == Py_True ? T_TRUE : T_FALSE);
            else if (PyLong_CheckExact(a)) read_integer(c, NULL, a, &v);
            else {
                const Seen *an = seen_of(c, a);
                if (c->status != ST_OK) break;
                if (an->kind == K_NONE) { c->status = ST_PASS; break; }
                if (an->kind > K_FALSE) {
                    push(c, stack, &depth, a, an);
                    continue;
                }
                read_leaf(c, an, a, &v);
            }
            if (c->status != ST_OK) break;
            fold(c, f->kind, pos, &f->acc, &v, f->args, depth == 1);
            continue;
        }
        Val done = f->acc;
        if (f->kind == K_NOT)
            done.truth = done.truth == T_TRUE ? T_FALSE : done.truth == T_FALSE ? T_TRUE : done.truth;
        Py_DECREF(f->args);
        depth--;
        if (depth == 0) { *out = done; return; }
        Frame *p = &stack[depth - 1];
        fold(c, p->kind, p->i - 1, &p->acc, &done, p->args, depth == 1);
    }
    while (depth > 0) Py_DECREF(stack[--depth].args);
}

static PyObject *ext_obj(Ext e) {
    if (e.inf) return PyFloat_FromDouble(e.inf > 0 ? Py_HUGE_VAL : -Py_HUGE_VAL);
    return PyLong_FromLongLong(e.v);
}

static PyObject *pass(void) { Py_RETURN_NOTIMPLEMENTED; }

static PyObject *answer(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyDict_CheckExact(args[2]) || !PyDict_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "answer(expr, kind, given: dict, symbols: dict)");
        return NULL;
    }
    long kind = PyLong_AsLong(args[1]);
    if (kind == -1 && PyErr_Occurred()) return NULL;
    Ctx c;
    c.given = args[2]; c.symbols = args[3]; c.n_names = 0; c.status = ST_OK; c.nodes = 0;
    Val v;
    memset(&v, 0, sizeof v);
    evaluate(&c, args[0], &v);
    if (c.status < 0) return NULL;  /* an error raised by the classifier or a dict */
    if (c.status == ST_UNREADABLE) {  /* no term: unknown */
        if (kind == 1) return Py_BuildValue("(dd)", -Py_HUGE_VAL, Py_HUGE_VAL);
        Py_RETURN_NONE;
    }
    if (c.status != ST_OK) return pass();
    if (v.is_bool) {
        if (v.truth == T_ASK) return pass();
        if (kind == 1) {
            if (v.truth == T_SOMETIMES) return Py_BuildValue("(OO)", Py_False, Py_True);
            PyObject *b = v.truth == T_TRUE ? Py_True : Py_False;
            return Py_BuildValue("(OO)", b, b);
        }
        if (v.truth == T_SOMETIMES) Py_RETURN_NONE;
        return PyBool_FromLong(v.truth == T_TRUE);
    }
    if (kind == 2) Py_RETURN_NONE;  /* evaluate of an integer: not a truth */
    if (!v.has || !(reached(&v) || ext_cmp(v.lo, v.hi) == 0)) return pass();  /* the Python road may do better */
    if (kind == 0) {
        if (ext_cmp(v.lo, v.hi) == 0 && !v.lo.inf) return PyLong_FromLongLong(v.lo.v);
        if (ext_cmp(v.lo, v.hi) == 0) return pass();
        Py_RETURN_NONE;
    }
    PyObject *lo = ext_obj(v.lo), *hi = ext_obj(v.hi);
    if (lo == NULL || hi == NULL) { Py_XDECREF(lo); Py_XDECREF(hi); return NULL; }
    PyObject *t = PyTuple_Pack(2, lo, hi);
    Py_DECREF(lo); Py_DECREF(hi);
    return t;
}

/* given(var_to_range): TorchDims' ranges {name: (lo, hi)} when every key is a plain name (an ASCII identifier, not
   reserved) and every value None (skipped) or a pair of ints in int64 / None with lo <= hi; else NotImplemented (the
   Python loop of TorchDims._set_ranges, its twin, reads them and names what is wrong) */
static PyObject *given(PyObject *self, PyObject *arg) {
    if (!PyDict_CheckExact(arg)) return pass();
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int skipped = 0;
    while (PyDict_Next(arg, &pos, &key, &value)) {
        if (value == Py_None) { skipped = 1; continue; }
        Ext lo, hi;
        if (!(plain_name(key) && read_range(value, &lo, &hi) && ext_cmp(lo, hi) <= 0)) return pass();
    }
    if (!skipped) return PyDict_Copy(arg);  /* every entry kept as given (a copy: the caller's dict may change) */
    PyObject *out = PyDict_New();
    if (out == NULL) return NULL;
    pos = 0;
    while (PyDict_Next(arg, &pos, &key, &value))
        if (value != Py_None && PyDict_SetItem(out, key, value) < 0) { Py_DECREF(out); return NULL; }
    return out;
}

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *cls, *res;
    if (!PyArg_ParseTuple(args, "OO", &cls, &res)) return NULL;
    PyObject *names = PySequence_Tuple(res);
    if (names == NULL) return NULL;
    n_reserved = -1;  /* (a name that does not fit: every name is left to Python) */
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    int ok = n <= MAX_RESERVED;
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        PyObject *r = PyTuple_GET_ITEM(names, i);
        ok = PyUnicode_CheckExact(r) && PyUnicode_IS_ASCII(r) && PyUnicode_GET_LENGTH(r) < 16;
        if (ok) memcpy(reserved_names[i], PyUnicode_1BYTE_DATA(r), (size_t)PyUnicode_GET_LENGTH(r) + 1);
    }
    Py_DECREF(names);
    if (ok) n_reserved = (int)n;
    Py_XINCREF(cls); Py_XSETREF(classifier, cls);
    for (int i = 0; i < n_seen; i++) Py_DECREF(seen[i].type);
    n_seen = 0;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"answer", (PyCFunction)(void (*)(void))answer, METH_FASTCALL,
     "answer(expr, kind, given, symbols): the quick answer (0 static value, 1 bound, 2 truth) or NotImplemented."},
    {"given", given, METH_O, "given(var_to_range): the ranges as TorchDims keeps them, or NotImplemented."},
    {"configure", configure, METH_VARARGS, "configure(classifier, reserved_names): how classes are read."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_torch_fast",
                                    "torch's dimension questions answered by intervals, in C.", -1, methods};

PyMODINIT_FUNC PyInit__torch_fast(void) {
    PyObject **names[] = {&s_args, &s_raw_args, &s_p, &s_name, &s_assumptions, &s_integer, &s_positive,
                          &s_nonnegative, &s_is_integer, &s_is_positive, &s_is_nonnegative};
    const char *text[] = {"args", "_args", "p", "name", "_assumptions", "integer", "positive", "nonnegative",
                          "is_integer", "is_positive", "is_nonnegative"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        *names[i] = PyUnicode_InternFromString(text[i]);
        if (*names[i] == NULL) return NULL;
    }
    return PyModule_Create(&module);
}
