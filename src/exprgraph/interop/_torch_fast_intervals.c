/* The intervals of the nodes the torch fast path reads (see _torch_fast.c): exprgraph.dims.intervals' rules for
   the kinds it reads (term_interval, relation_of_intervals, settled, cancelled), in int64 with overflow checks
   (an overflow: ST_PASS, the question goes to Python). */
#include "_torch_fast.h"

/* -- extended arithmetic (exprgraph.dims.ranges: _xadd, _xmul, fdiv, comparisons of ints and infinities) -- */

static int ext_sign(Ext a) { return a.inf ? a.inf : (a.v > 0) - (a.v < 0); }

/* x + y: an infinite x wins, then an infinite y (as _xadd) */
static Ext xadd(Ctx *c, Ext x, Ext y) {
    if (x.inf) return x;
    if (y.inf) return y;
    int64_t r;
    if (__builtin_add_overflow(x.v, y.v, &r)) { c->status = ST_PASS; return fin(0); }
    return fin(r);
}

/* x * y: 0 when either is 0, an infinity of the product's sign when either is infinite (as _xmul) */
static Ext xmul(Ctx *c, Ext x, Ext y) {
    if ((!x.inf && x.v == 0) || (!y.inf && y.v == 0)) return fin(0);
    if (x.inf || y.inf) return infinity((ext_sign(x) > 0) == (ext_sign(y) > 0) ? 1 : -1);
    int64_t r;
    if (__builtin_mul_overflow(x.v, y.v, &r)) { c->status = ST_PASS; return fin(0); }
    return fin(r);
}

static int64_t floordiv64(int64_t a, int64_t b) {  /* b >= 1 */
    int64_t q = a / b;
    if ((a % b) != 0 && a < 0) q -= 1;
    return q;
}

/* floor(x / y) for a divisor bound y >= 1 (as fdiv) */
static Ext ext_fdiv(Ext x, Ext y) {
    if (x.inf) return x;
    if (y.inf) return fin(ext_sign(x) >= 0 ? 0 : -1);
    return fin(floordiv64(x.v, y.v));
}

static Ext ext_min(Ext a, Ext b) { return ext_cmp(b, a) < 0 ? b : a; }
static Ext ext_max(Ext a, Ext b) { return ext_cmp(b, a) > 0 ? b : a; }
static int is_const(const Val *v) { return v->names == 0 && ext_cmp(v->lo, v->hi) == 0; }
static int flip(int f) { return ((f & INC) << 1) | ((f & DEC) >> 1) | (f & DENSE); }

/* -- the interval of each binary node (exprgraph.dims.intervals._call, _base, _flags) -------------------- */

void integer_val(Val *out, int64_t v) {
    memset(out, 0, sizeof *out);
    out->has = 1; out->lo = out->hi = fin(v); out->exact = 1; out->flags = CONSTANT;
    out->leaf = 2; out->leaf_id = v;
    out->prod = 1; out->coef = v;
    out->plo = out->phi = out->p3 = 1; out->vlo = out->vhi = out->v3 = v;
}

/* r_mul: the extremes of a product are among the corner products */
static void range_mul(Ctx *c, Ext alo, Ext ahi, Ext blo, Ext bhi, Ext *lo, Ext *hi) {
    if (ext_sign(alo) >= 0 && ext_sign(blo) >= 0) {
        *lo = xmul(c, alo, blo); *hi = xmul(c, ahi, bhi);
        return;
    }
    Ext k[4] = {xmul(c, alo, blo), xmul(c, alo, bhi), xmul(c, ahi, blo), xmul(c, ahi, bhi)};
    *lo = *hi = k[0];
    for (int i = 1; i < 4; i++) { *lo = ext_min(*lo, k[i]); *hi = ext_max(*hi, k[i]); }
}

/* x**p (p <= MAX_POWER) of a bound, an infinity kept (as _pow_bound) */
static Ext pow_bound(Ctx *c, Ext x, int p) {
    if (x.inf) return x;
    int64_t r = 1;
    for (int i = 0; i < p; i++)
        if (__builtin_mul_overflow(r, x.v, &r)) { c->status = ST_PASS; return fin(0); }
    return fin(r);
}

/* r_pow: the range of x**p for x in [lo, hi], 1 <= p <= MAX_POWER */
static void range_pow(Ctx *c, Ext lo, Ext hi, int p, Ext *olo, Ext *ohi) {
    if (p == 1) { *olo = lo; *ohi = hi; return; }
    if (ext_sign(lo) >= 0) { *olo = pow_bound(c, lo, p); *ohi = pow_bound(c, hi, p); return; }
    Ext nlo = lo.inf ? infinity(1) : fin(-lo.v), nhi = hi.inf ? infinity(-hi.inf) : fin(-hi.v);  /* -lo, -hi */
    if (!lo.inf && lo.v == INT64_MIN) { c->status = ST_PASS; return; }
    if (!hi.inf && hi.v == INT64_MIN) { c->status = ST_PASS; return; }
    if (p % 2) {  /* an odd power is increasing */
        Ext a = pow_bound(c, nlo, p), b;
        if (ext_sign(hi) <= 0) {  /* -(((-hi)..(-lo))**p) */
            b = pow_bound(c, nhi, p);
            *olo = a.inf ? infinity(-a.inf) : fin(-a.v);
            *ohi = b.inf ? infinity(-b.inf) : fin(-b.v);
        } else {
            *olo = a.inf ? infinity(-a.inf) : fin(-a.v);
            *ohi = pow_bound(c, hi, p);
        }
        return;
    }
    /* an even power of a value in [lo, hi] with lo < 0 lies in [0, max(-lo, hi)**p] */
    Ext m = ext_cmp(nlo, hi) > 0 ? nlo : hi;
    *olo = ext_sign(hi) >= 0 ? fin(0) : pow_bound(c, nhi, p);
    *ohi = pow_bound(c, m, p);
}

/* the product of two products: coefficients multiplied, exponents of a name added */
static void product_of(Val *out, const Val *a, const Val *b) {
    out->prod = 0;
    if (!a->prod || !b->prod || __builtin_mul_overflow(a->coef, b->coef, &out->coef)) return;
    int nf = a->nf;
    int bits[MAX_FACTORS], exps[MAX_FACTORS];
    memcpy(bits, a->fbit, sizeof bits); memcpy(exps, a->fexp, sizeof exps);
    for (int j = 0; j < b->nf; j++) {
        int i = 0;
        while (i < nf && bits[i] != b->fbit[j]) i++;
        if (i == nf) {
            if (nf == MAX_FACTORS) return;
            bits[nf] = b->fbit[j]; exps[nf] = 0; nf++;
        }
        exps[i] += b->fexp[j];
        if (exps[i] > MAX_POWER) return;
    }
    out->nf = nf;
    memcpy(out->fbit, bits, sizeof bits); memcpy(out->fexp, exps, sizeof exps);
    out->prod = 1;
}

/* floor(a / b) and a % b with Python's signs (b != 0); 0 on an overflow */
static int py_floordiv(int64_t a, int64_t b, int64_t *q) {
    if (b == 0 || (a == INT64_MIN && b == -1)) return 0;
    *q = a / b;
    if ((a % b) != 0 && ((a < 0) != (b < 0))) *q -= 1;
    return 1;
}
static int py_mod(int64_t a, int64_t b, int64_t *r) {
    if (b == 0) return 0;
    if (b == -1) { *r = 0; return 1; }
    *r = a % b;
    if (*r != 0 && ((*r < 0) != (b < 0))) *r += b;
    return 1;
}

/* the value of a node at a point from its operands' (kind: of the node; 0 when it overflows or divides by 0) */
int at_point(int kind, int64_t a, int64_t b, int64_t *out) {
    switch (kind) {
    case K_ADD: return !__builtin_add_overflow(a, b, out);
    case K_MUL: return !__builtin_mul_overflow(a, b, out);
    case K_MAX: *out = a > b ? a : b; return 1;
    case K_MIN: *out = a < b ? a : b; return 1;
    case K_FLOORDIV: return py_floordiv(a, b, out);
    case K_MOD: return py_mod(a, b, out);
    default: *out = a; return 1;  /* K_NONE: the node is its first operand (a % q == a) */
    }
}

static int at_least(Ext e, int64_t k) { return !e.inf ? e.v >= k : e.inf > 0; }

/* the values at the two points, and the open ends reached (a sum with one operand past every bound and the
   other bounded on that side, a product by an operand >= 1, max / min, a // q for a bounded q >= 1) */
static void finish(Val *out, int kind, const Val *a, const Val *b) {
    out->plo = a->plo && b->plo && at_point(kind, a->vlo, b->vlo, &out->vlo);
    out->phi = a->phi && b->phi && at_point(kind, a->vhi, b->vhi, &out->vhi);
    out->p3 = a->p3 && b->p3 && at_point(kind, a->v3, b->v3, &out->v3);
    int up = 0, down = 0;
    switch (kind) {
    case K_ADD:
        up = (a->up && !b->lo.inf) || (b->up && !a->lo.inf);
        down = (a->down && !b->hi.inf) || (b->down && !a->hi.inf);
        break;
    case K_MUL:  /* a*b >= a for a >= 0, b >= 1; a*b <= a for a <= 0, b >= 1 */
        up = (a->up && at_least(b->lo, 1) && !b->lo.inf) || (b->up && at_least(a->lo, 1) && !a->lo.inf);
        down = (a->down && at_least(b->lo, 1) && !b->lo.inf) || (b->down && at_least(a->lo, 1) && !a->lo.inf);
        break;
    case K_MAX: up = a->up || b->up; break;
    case K_MIN: down = a->down || b->down; break;
    case K_FLOORDIV:  /* a//q >= a/qhi - 1 for a >= 0, a//q <= a/qhi for a < 0 */
        up = a->up && !b->hi.inf;
        down = a->down && !b->hi.inf;
        break;
    case K_NONE: up = a->up; down = a->down; break;
    default: break;
    }
    if (out->exact) {  /* an exact open end is passed */
        up |= out->hi.inf > 0;
        down |= out->lo.inf < 0;
    }
    out->up = up; out->down = down;
}

/* a node without an interval (an operand has none, or its rules give none): only its values at the three points,
   which still witness a relation (see witnessed) */
void combine_points(Val *r, int kind, const Val *a, const Val *b) {
    Val out;
    memset(&out, 0, sizeof out);
    out.names = a->names | b->names;
    if (kind == K_FLOORDIV || kind == K_MOD) {  /* a divisor below 1 at a point: not evaluated (as value_at) */
        out.plo = a->plo && b->plo && b->vlo >= 1 && at_point(kind, a->vlo, b->vlo, &out.vlo);
        out.phi = a->phi && b->phi && b->vhi >= 1 && at_point(kind, a->vhi, b->vhi, &out.vhi);
        out.p3 = a->p3 && b->p3 && b->v3 >= 1 && at_point(kind, a->v3, b->v3, &out.v3);
        *r = out;
        return;
    }
    out.plo = a->plo && b->plo && at_point(kind, a->vlo, b->vlo, &out.vlo);
    out.phi = a->phi && b->phi && at_point(kind, a->vhi, b->vhi, &out.vhi);
    out.p3 = a->p3 && b->p3 && at_point(kind, a->v3, b->v3, &out.v3);
    *r = out;
}

/* whether both ends of v's interval are reached (nothing is tighter): exact, or each end met at a point (a finite
   one) or passed (an open one) */
int reached(const Val *v) {
    if (v->exact) return 1;
    int lo = v->lo.inf ? v->down : ((v->plo && v->vlo == v->lo.v) || (v->phi && v->vhi == v->lo.v) || (v->p3 && v->v3 == v->lo.v));
    int hi = v->hi.inf ? v->up : ((v->plo && v->vlo == v->hi.v) || (v->phi && v->vhi == v->hi.v) || (v->p3 && v->v3 == v->hi.v));
    return lo && hi;
}

/* the post rule of _call: monotone in every name over exact operands (or dense): exact */
static void settle_exact(Val *r, const Val *a, const Val *b) {
    if ((r->flags & DENSE) || (!r->exact && (r->flags & (INC | DEC)) && a->exact && b->exact)) r->exact = 1;
}

/* a + b, a * b, max(a, b), min(a, b) of two integer values with intervals */
void combine_assoc(Ctx *c, int kind, Val *r, const Val *a, const Val *b) {
    Val out;
    memset(&out, 0, sizeof out);
    out.has = 1;
    out.exact = a->exact && b->exact && !(a->names & b->names);  /* _independent */
    out.names = a->names | b->names;
    if (kind == K_ADD) {  /* r_add: the sums of the ends */
        out.lo = xadd(c, a->lo, b->lo); out.hi = xadd(c, a->hi, b->hi);
    } else if (kind == K_MUL) {  /* r_mul: the extremes are among the corner products */
        range_mul(c, a->lo, a->hi, b->lo, b->hi, &out.lo, &out.hi);
        product_of(&out, a, b);
    } else if (kind == K_MAX) {  /* max: the max of each end */
        out.lo = ext_max(a->lo, b->lo); out.hi = ext_max(a->hi, b->hi);
    } else {  /* min: the min of each end */
        out.lo = ext_min(a->lo, b->lo); out.hi = ext_min(a->hi, b->hi);
    }
    if (kind == K_MUL) {  /* constants and operands >= 0 keep their shared direction; a negative constant flips */
        int d = INC | DEC, negative = 0, done = 0;
        const Val *vs[2] = {a, b};
        for (int i = 0; i < 2 && !done; i++) {
            const Val *v = vs[i];
            if (is_const(v)) {
                if (ext_sign(v->lo) == 0) { out.flags = CONSTANT; done = 1; }  /* x*0 == 0 */
                else if (ext_sign(v->lo) < 0) negative = !negative;
            } else if (ext_sign(v->lo) >= 0) {
                d &= v->flags;
            } else {
                out.flags = 0; done = 1;
            }
        }
        if (!done) out.flags = negative ? flip(d & (INC | DEC)) : (d & (INC | DEC));
    } else {  /* sum, max, min: the directions both share; dense if both are, over disjoint names */
        int d = (INC | DEC) & a->flags & b->flags;
        int dense = (a->flags & DENSE) && (b->flags & DENSE) && !(a->names & b->names);
        out.flags = d | (dense ? DENSE : 0);
    }
    settle_exact(&out, a, b);
    finish(&out, kind, a, b);
    *r = out;
}

/* a // q (q's interval >= 1, else no interval) */
void combine_floordiv(Val *r, const Val *a, const Val *q) {
    Val out;
    memset(&out, 0, sizeof out);
    if (ext_cmp(q->lo, fin(1)) < 0) { *r = out; return; }  /* a divisor that may be 0 or negative */
    out.has = 1;
    out.names = a->names | q->names;
    Ext qlo = q->lo, qhi = q->hi;  /* r_floordiv */
    out.lo = ext_min(ext_fdiv(a->lo, qlo), ext_fdiv(a->lo, qhi));
    out.hi = ext_max(ext_fdiv(a->hi, qlo), ext_fdiv(a->hi, qhi));
    out.exact = a->exact && ext_cmp(q->lo, q->hi) == 0;  /* x // k: nondecreasing in x */
    out.flags = (ext_cmp(q->lo, q->hi) == 0 && q->names == 0) ? a->flags : 0;
    settle_exact(&out, a, q);
    finish(&out, K_FLOORDIV, a, q);
    *r = out;
}

static int cancelled(Ctx *c, const Val *a, const Val *b, Val *ra, Val *rb);

/* a % q: a dense a and a constant q >= 1 (_mod_dense); a itself when 0 <= a < q (_below: by the intervals, or
   once common factors >= 1 cancel; its last proof, by monomials, is left to Python); else r_mod */
void combine_mod(Ctx *c, const Val *a, const Val *q, Val *r) {
    Val out;
    memset(&out, 0, sizeof out);
    if (ext_cmp(q->lo, q->hi) == 0 && q->names == 0 && !q->lo.inf && q->lo.v >= 1 && (a->flags & DENSE)) {
        int64_t k = q->lo.v;
        out.has = 1; out.exact = 1; out.names = a->names;
        if (!a->lo.inf && !a->hi.inf && floordiv64(a->lo.v, k) == floordiv64(a->hi.v, k)) {  /* no wrap */
            out.lo = fin(a->lo.v - floordiv64(a->lo.v, k) * k);
            out.hi = fin(a->hi.v - floordiv64(a->hi.v, k) * k);
            out.flags = a->flags;
        } else {  /* every residue (k consecutive integers), or a wrap: both ends reached */
            int all = a->lo.inf || a->hi.inf || ((uint64_t)a->hi.v - (uint64_t)a->lo.v) >= (uint64_t)(k - 1);
            out.lo = fin(0); out.hi = fin(k - 1); out.flags = all ? DENSE : 0;
        }
        finish(&out, K_MOD, a, q);
        *r = out;
        return;
    }
    if (ext_cmp(q->lo, fin(1)) < 0) { *r = out; return; }  /* a divisor that may be 0 or negative */
    if (ext_sign(a->lo) >= 0) {
        Val ra, rb;
        int below = ext_cmp(a->hi, q->lo) < 0;
        if (!below && a->prod && q->prod && cancelled(c, a, q, &ra, &rb)) below = ext_cmp(ra.hi, rb.lo) < 0;
        if (below) {  /* 0 <= a < q: a % q == a */
            out.has = 1; out.lo = a->lo; out.hi = a->hi; out.exact = a->exact; out.flags = a->flags;
            out.names = a->names | q->names;
            finish(&out, K_NONE, a, q);
            *r = out;
            return;
        }
        /* a >= q somewhere (a point, or a past every bound over a bounded q): no proof of a < q exists */
        int never = (a->up && !q->hi.inf) || (a->plo && q->plo && a->vlo >= q->vlo) ||
                    (a->phi && q->phi && a->vhi >= q->vhi) || (a->p3 && q->p3 && a->v3 >= q->v3);
        if (!never) { combine_points(r, K_MOD, a, q); return; }  /* (the monomials of q - a may prove a < q: Python) */
    }
    out.has = 1;  /* r_mod: [0, qhi - 1], and at most a for 0 <= a */
    out.names = a->names | q->names;
    out.lo = fin(0);
    out.hi = q->hi.inf ? q->hi : fin(q->hi.v - 1);
    if (ext_sign(a->lo) >= 0 && ext_cmp(a->hi, out.hi) < 0) out.hi = a->hi;
    out.exact = ext_cmp(out.lo, out.hi) == 0;
    out.flags = 0;
    finish(&out, K_MOD, a, q);
    *r = out;
}

/* -- relations (relation_of_intervals, settled) ---------------------------------------------------------- */

static int relation_of(int kind, const Val *a, const Val *b) {
    if (kind == K_GT || kind == K_GE) {  /* x > y is y < x */
        const Val *t = a; a = b; b = t;
        kind = kind == K_GT ? K_LT : K_LE;
    }
    if (kind == K_LT)
        return ext_cmp(a->hi, b->lo) < 0 ? T_TRUE : ext_cmp(a->lo, b->hi) >= 0 ? T_FALSE : T_SOMETIMES;
    if (kind == K_LE)
        return ext_cmp(a->hi, b->lo) <= 0 ? T_TRUE : ext_cmp(a->lo, b->hi) > 0 ? T_FALSE : T_SOMETIMES;
    if (ext_cmp(a->hi, b->lo) < 0 || ext_cmp(b->hi, a->lo) < 0) return kind == K_NE ? T_TRUE : T_FALSE;
    if (ext_cmp(a->lo, a->hi) == 0 && ext_cmp(a->hi, b->lo) == 0 && ext_cmp(b->lo, b->hi) == 0)
        return kind == K_EQ ? T_TRUE : T_FALSE;
    return T_SOMETIMES;
}

static int settled(int kind, const Val *a, const Val *b) {
    if (!(a->exact && b->exact) || (a->names & b->names)) return 0;
    if (kind != K_EQ && kind != K_NE) return 1;
    return (!a->lo.inf && ext_cmp(a->lo, b->hi) == 0) || (!a->hi.inf && ext_cmp(a->hi, b->lo) == 0);
}

/* whether a finite end of x (reached: x is exact) lies between the ends of d */
static int end_inside(const Val *x, const Val *d) {
    return (!x->lo.inf && ext_cmp(d->lo, x->lo) <= 0 && ext_cmp(x->lo, d->hi) <= 0) ||
           (!x->hi.inf && ext_cmp(d->lo, x->hi) <= 0 && ext_cmp(x->hi, d->hi) <= 0);
}

/* intervals._product: the interval of coef * name**exp * ... (names are exact and distinct) */
static void product_interval(Ctx *c, int64_t coef, int nf, const int *bits, const int *exps, Val *out) {
    memset(out, 0, sizeof *out);
    Ext lo = fin(coef), hi = fin(coef);
    int exact = 1;
    uint64_t names = 0;
    for (int i = 0; i < nf; i++) {
        int bit = bits[i], e = exps[i];
        Ext flo = c->name_lo[bit], fhi = c->name_hi[bit];
        if (e > 1) range_pow(c, c->name_lo[bit], c->name_hi[bit], e, &flo, &fhi);
        range_mul(c, lo, hi, flo, fhi, &lo, &hi);
        if (e % 2 == 0 && ext_sign(c->name_lo[bit]) < 0) exact = 0;  /* an even power of a name changing sign */
        names |= (uint64_t)1 << bit;
    }
    out->has = 1; out->lo = lo; out->hi = hi; out->exact = exact; out->names = names;
}

/* intervals.cancelled for products of names and numbers: the common factors >= 1 divided out of both sides
   (a OP b holds where a/P OP b/P does, P >= 1); 0 when there is none */
static int cancelled(Ctx *c, const Val *a, const Val *b, Val *ra, Val *rb) {
    int ea[MAX_FACTORS], eb[MAX_FACTORS], common = 0;
    memcpy(ea, a->fexp, sizeof ea); memcpy(eb, b->fexp, sizeof eb);
    for (int i = 0; i < a->nf; i++)
        for (int j = 0; j < b->nf; j++)
            if (a->fbit[i] == b->fbit[j] && ext_cmp(c->name_lo[a->fbit[i]], fin(1)) >= 0) {
                int e = ea[i] < eb[j] ? ea[i] : eb[j];
                ea[i] -= e; eb[j] -= e;
                common = 1;
            }
    if (!common) return 0;
    int ba[MAX_FACTORS], bb[MAX_FACTORS], na = 0, nb = 0;
    for (int i = 0; i < a->nf; i++) if (ea[i]) { ba[na] = a->fbit[i]; ea[na++] = ea[i]; }
    for (int j = 0; j < b->nf; j++) if (eb[j]) { bb[nb] = b->fbit[j]; eb[nb++] = eb[j]; }
    product_interval(c, a->coef, na, ba, ea, ra);
    product_interval(c, b->coef, nb, bb, eb, rb);
    return c->status == ST_OK;
}

/* whether x REL y holds (kind K_EQ .. K_GE) */
int holds(int kind, int64_t x, int64_t y) {
    switch (kind) {
    case K_EQ: return x == y;
    case K_NE: return x != y;
    case K_LT: return x < y;
    case K_LE: return x <= y;
    case K_GT: return x > y;
    default: return x >= y;
    }
}

/* the truths of a REL b seen at the three points of the ranges: *t set when it holds at one, *f when it fails */
void seen_truths(int kind, const Val *a, const Val *b, int *t, int *f) {
    if (a->plo && b->plo) { if (holds(kind, a->vlo, b->vlo)) *t = 1; else *f = 1; }
    if (a->phi && b->phi) { if (holds(kind, a->vhi, b->vhi)) *t = 1; else *f = 1; }
    if (a->p3 && b->p3) { if (holds(kind, a->v3, b->v3)) *t = 1; else *f = 1; }
}

/* whether a REL b holds at one of the three points of the ranges and fails at another (witness.sometimes: a
   witness of each answer, so no answer but "it depends" is right) */
static int witnessed(int kind, const Val *a, const Val *b) {
    int t = 0, f = 0;
    seen_truths(kind, a, b, &t, &f);
    return t && f;
}

/* the truth of a REL b as TorchDims._relation's quick road gives it (T_ASK: the Python road decides) */
int relation(Ctx *c, int kind, const Val *a, const Val *b) {
    if (!a->has || !b->has) return witnessed(kind, a, b) ? T_SOMETIMES : T_ASK;
    int v = relation_of(kind, a, b);
    if (v != T_SOMETIMES) return v;
    int same = a->leaf == b->leaf && a->leaf_id == b->leaf_id;
    if ((a->leaf && b->leaf && !same) || settled(kind, a, b)) return T_SOMETIMES;
    Val ra, rb;
    if (a->prod && b->prod && cancelled(c, a, b, &ra, &rb)) {  /* s0*s1 == s0 where s1 == 1 (s0 >= 1) */
        v = relation_of(kind, &ra, &rb);
        if (v != T_SOMETIMES) return v;
        if (settled(kind, &ra, &rb)) return T_SOMETIMES;
    }
    if ((kind == K_EQ || kind == K_NE) && a->exact && b->exact && !(a->names & b->names) &&
        (((a->flags & DENSE) && end_inside(b, a)) || ((b->flags & DENSE) && end_inside(a, b))))
        return T_SOMETIMES;  /* equal where one side takes the other's end, unequal elsewhere (a witness) */
    if (witnessed(kind, a, b)) return T_SOMETIMES;
    if ((kind == K_EQ || kind == K_NE) && ((a->plo && b->plo && a->vlo == b->vlo) || (a->phi && b->phi && a->vhi == b->vhi) ||
                                           (a->p3 && b->p3 && a->v3 == b->v3))) {
        /* equal at a point; unequal at another: another point, or a side over its own names that moves */
        int differ = (a->plo && b->plo && a->vlo != b->vlo) || (a->phi && b->phi && a->vhi != b->vhi) ||
                     (a->p3 && b->p3 && a->v3 != b->v3) ||
                     (a->up && !b->hi.inf) || (b->up && !a->hi.inf) || (a->down && !b->lo.inf) || (b->down && !a->lo.inf) ||
                     (!(a->names & b->names) && ((a->exact && ext_cmp(a->lo, a->hi) < 0) || (b->exact && ext_cmp(b->lo, b->hi) < 0)));
        if (differ) return T_SOMETIMES;
    }
    return T_ASK;
}
