/* Values of the expressions the torch fast path reads at chosen points of the ranges (see _torch_fast.c): witnesses
   that a relation holds at one point and fails at another, so that "undecided" is its only right answer
   (exprgraph.dims.witness.sometimes' ways, in C: points near the high corner of the ranges, and the value of a side
   monotone in one name where it meets a number). A value is computed exactly, in int64 with overflow checks; a node
   not evaluated (an overflow, a divisor below 1, a kind not read) leaves the question to the other rules. */
#include "_torch_fast.h"

/* -- the value of an integer expression where its one name takes a given value (witnesses of a == k) ---- */

typedef struct {
    PyObject *args;       /* owned */
    Py_ssize_t i, n;
    int kind;
    int64_t acc;
} PFrame;

/* the value of a number or a name (the names met by the walk: vals[bit]); 0 when it is not one of those */
static int leaf_at(Ctx *c, PyObject *x, const Seen *sn, const int64_t *vals, int64_t *out) {
    if (sn == NULL || sn->kind == K_INT) {
        PyObject *p = sn == NULL ? (Py_INCREF(x), x) : slot(x, sn->off_p, s_p);
        if (p == NULL) return 0;
        int overflow = 0;
        long long v = PyLong_CheckExact(p) ? PyLong_AsLongLongAndOverflow(p, &overflow) : (overflow = 1, 0);
        Py_DECREF(p);
        if (overflow || (v == -1 && PyErr_Occurred())) { PyErr_Clear(); return 0; }
        *out = v;
        return 1;
    }
    if (sn->kind != K_SYMBOL) return 0;
    PyObject *name = slot(x, sn->off_name, s_name);
    if (name == NULL || !PyUnicode_Check(name)) { Py_XDECREF(name); return 0; }
    int bit = name_bit(c, name);
    Py_DECREF(name);
    if (bit < 0) return 0;
    *out = vals[bit];
    return 1;
}

/* acc OP v for the operand at position pos of an integer call (POW by 0..MAX_POWER; a divisor >= 1, as
   witness.value_at); 0 when it is not evaluated here */
static int fold_at(int kind, Py_ssize_t pos, int64_t *acc, int64_t v) {
    if (pos == 0) { *acc = v; return 1; }
    if (kind == K_POW) {
        if (v < 0 || v > MAX_POWER) return 0;
        int64_t r = 1;
        for (int64_t i = 0; i < v; i++)
            if (__builtin_mul_overflow(r, *acc, &r)) return 0;
        *acc = r;
        return 1;
    }
    if (kind == K_MODIDX) kind = pos == 1 ? K_FLOORDIV : K_MOD;  /* (x // d) % m */
    if ((kind == K_FLOORDIV || kind == K_MOD) && v < 1) return 0;
    if (kind < K_ADD || kind > K_MIN) return 0;
    return at_point(kind, *acc, v, acc);
}

/* the value of the integer expression x with the names at vals (by bit); 0 when it is not evaluated here */
static int value_at(Ctx *c, PyObject *x, const int64_t *vals, int64_t *out) {
    if (PyLong_CheckExact(x)) return leaf_at(c, x, NULL, vals, out);
    const Seen *sn = seen_of(c, x);
    if (c->status != ST_OK) return 0;
    if (sn->kind < K_ADD || sn->kind > K_MIN) return leaf_at(c, x, sn, vals, out);
    PFrame stack[MAX_DEPTH];
    int depth = 0, ok = 1;
    PyObject *args = sn->raw ? slot(x, sn->off_args, s_raw_args) : slot(x, 0, s_args);
    if (args == NULL || !PyTuple_Check(args) || PyTuple_GET_SIZE(args) == 0) { Py_XDECREF(args); return 0; }
    stack[0].args = args; stack[0].i = 0; stack[0].n = PyTuple_GET_SIZE(args); stack[0].kind = sn->kind;
    stack[0].acc = 0;
    depth = 1;
    while (depth > 0 && ok) {
        PFrame *f = &stack[depth - 1];
        if (f->i < f->n) {
            PyObject *a = PyTuple_GET_ITEM(f->args, f->i);
            Py_ssize_t pos = f->i++;
            int64_t v;
            const Seen *an = PyLong_CheckExact(a) ? NULL : seen_of(c, a);
            if (c->status != ST_OK) { ok = 0; break; }
            if (an != NULL && an->kind >= K_ADD && an->kind <= K_MIN) {
                if (depth == MAX_DEPTH) { ok = 0; break; }
                PyObject *sub = an->raw ? slot(a, an->off_args, s_raw_args) : slot(a, 0, s_args);
                if (sub == NULL || !PyTuple_Check(sub) || PyTuple_GET_SIZE(sub) == 0) { Py_XDECREF(sub); ok = 0; break; }
                PFrame *g = &stack[depth++];
                g->args = sub; g->i = 0; g->n = PyTuple_GET_SIZE(sub); g->kind = an->kind; g->acc = 0;
                continue;
            }
            ok = leaf_at(c, a, an, vals, &v) && fold_at(f->kind, pos, &f->acc, v);
            continue;
        }
        int64_t done = f->acc;
        Py_DECREF(f->args);
        depth--;
        if (depth == 0) { *out = done; return 1; }
        PFrame *p = &stack[depth - 1];
        ok = fold_at(p->kind, p->i - 1, &p->acc, done);
    }
    while (depth > 0) Py_DECREF(stack[--depth].args);
    return 0;
}

/* the point near the high corner: each name met j below its greatest value (within its range), or j above its
   least when it has no greatest, or j when it has neither; 0 when a value is past int64 */
static int near_corner(Ctx *c, int64_t j, int64_t *vals) {
    for (int i = 0; i < c->n_names; i++) {
        Ext lo = c->name_lo[i], hi = c->name_hi[i];
        int64_t x = j;
        if (!hi.inf) {
            if (__builtin_sub_overflow(hi.v, j, &x)) return 0;
            if (!lo.inf && x < lo.v) x = lo.v;
        } else if (!lo.inf && __builtin_add_overflow(lo.v, j, &x)) return 0;
        vals[i] = x;
    }
    return 1;
}

/* whether a REL b (the operands args) holds at one point of the ranges and fails at another: the three points of
   the walk and three more near the high corner (when a name has a greatest value), where floor divisions and
   remainders take other residues (a witness of each answer, as witnessed) */
int probed(Ctx *c, int kind, PyObject *args, const Val *a, const Val *b) {
    int t = 0, f = 0, corner = 0;
    for (int i = 0; i < c->n_names && !corner; i++) corner = !c->name_hi[i].inf;
    if (!corner) return 0;  /* no name has a greatest value: no high corner to probe (a cost for nothing) */
    seen_truths(kind, a, b, &t, &f);
    int64_t vals[MAX_NAMES], va, vb;
    for (int64_t j = 1; j <= 3 && !(t && f); j++) {
        if (!near_corner(c, j, vals)) break;
        if (value_at(c, PyTuple_GET_ITEM(args, 0), vals, &va) && value_at(c, PyTuple_GET_ITEM(args, 1), vals, &vb)) {
            if (holds(kind, va, vb)) t = 1; else f = 1;
        }
    }
    return t && f;
}

/* whether side == k holds at one value of the side's one name and fails at another, for a side monotone in that
   name (INC or DEC) over a range with a finite least end: the least value where the side reaches k, found by
   doubling steps and halving, then evaluated (witness.sometimes' third way; monotony only guides the search, the
   answer rests on the two values computed) */
int meets_number(Ctx *c, PyObject *side, const Val *a, int64_t k) {
    if (!a->has || !(a->flags & (INC | DEC)) || a->names == 0 || (a->names & (a->names - 1))) return 0;
    int bit = __builtin_ctzll(a->names);
    Ext lo = c->name_lo[bit], hi = c->name_hi[bit];
    if (lo.inf) return 0;
    int inc = (a->flags & INC) != 0;
    int64_t vals[MAX_NAMES];
    if (!near_corner(c, 0, vals)) return 0;  /* (the side has no other name: any value in range will do) */
    int64_t v, left = lo.v, right = 0;
    vals[bit] = left;
    if (!value_at(c, side, vals, &v)) return 0;
    if (v == k) {  /* equal at the least value: unequal at another point of the ranges? */
        return (a->phi && a->vhi != k) || (a->p3 && a->v3 != k);
    }
    if (inc ? v > k : v < k) return 0;  /* past k from the start: never equal (Python proves it) */
    int found = 0;
    int64_t step = 1;
    for (int it = 0; it < 63 && !found; it++) {  /* a(left) has not reached k */
        int64_t x;
        if (__builtin_add_overflow(left, step, &x)) return 0;
        if (!hi.inf && x > hi.v) x = hi.v;
        if (x <= left) return 0;
        vals[bit] = x;
        if (!value_at(c, side, vals, &v)) return 0;
        if (inc ? v >= k : v <= k) { right = x; found = 1; }
        else { left = x; step *= 2; }
    }
    if (!found) return 0;
    while (right - left > 1) {  /* a(left) short of k, a(right) reaching it */
        int64_t mid = left + (right - left) / 2;
        vals[bit] = mid;
        if (!value_at(c, side, vals, &v)) return 0;
        if (inc ? v >= k : v <= k) right = mid; else left = mid;
    }
    vals[bit] = right;
    return value_at(c, side, vals, &v) && v == k;  /* equal at right, unequal at left (short of k) */
}
