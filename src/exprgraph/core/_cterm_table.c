/* _cterm_table.c: the intern table of exprgraph.core._cterm (see _cterm.c): every live term, by
   (op, the operand objects, the attr's key), as a borrowed pointer that the term removes when it
   is freed. The operands are read from the term itself (no tuple: see _cterm_api.h). */

#include "_cterm.h"
#ifdef __linux__
#include <sys/mman.h>
#endif

/* ---- the intern table ------------------------------------------------------------------------
   Open addressing with linear probing over one word per slot: a term's address with the top 16
   bits of its hash as a tag in the address bits that user space leaves zero, so a probe touches
   the term only when the tags agree (a false match is one in 65,536). The term stores only the low
   32 bits of its hash (TermObject.hash: the index of its home slot, and the first compare), so the
   tag is taken from the hash when the term is put in, and a resize carries it over from the old
   slot; the table so never exceeds 2^32 slots (MAX_CAPACITY). At most thirteen sixteenths
   of the slots are used, by terms and tombstones together (LOAD_NUM / LOAD_DEN). A term that leaves
   leaves a tombstone (TOMB), which a probe passes over and an insertion reuses; the slots of a run
   are then never read again, nor the hashes of the terms behind it (each one a cache miss in a
   large table); a resize drops them all.
   Should an address ever use those bits, the table drops the tags for good (it then compares each
   probed term's hash). */

typedef uintptr_t Slot; /* 0: an empty slot */

/* a slot whose term has left: no term's slot (a term's address is aligned, its low bit clear) */
#define TOMB ((Slot)1)

static Slot *Slots = NULL;
static size_t Capacity = 0; /* a power of two */
static size_t Count = 0;
static size_t Tombs = 0; /* the tombstones among the slots */
uint64_t TableVersion = 0; /* changes whenever the table does */

/* the smallest capacity */
#define MIN_CAPACITY ((size_t)1 << 15)
/* the largest: a home slot's index is taken from the 32 bits of hash a term keeps (32 GiB of slots, for
   about 3.5 billion terms: more than any machine holds at 80 bytes a term) */
#define MAX_CAPACITY ((size_t)1 << 32)
/* the table never shrinks below this (2 MiB of slots, about a processor's L2): a process that drops an
   expression of a few hundred thousand terms and builds it again does not shrink and regrow the table */
#define SHRINK_FLOOR ((size_t)1 << 18)

#if UINTPTR_MAX > 0xFFFFFFFFu
#define TAG_MASK ((uintptr_t)0xFFFF << 48)
static uintptr_t PtrMask = ~TAG_MASK; /* the address bits of a slot; all bits once the tags are off */
#else
#define TAG_MASK ((uintptr_t)0)
static uintptr_t PtrMask = ~(uintptr_t)0;
#endif

static inline TermObject *
slot_term(Slot s)
{
    return (TermObject *)(s & PtrMask);
}

/* the tag of a hash (0 when the tags are off) */
static inline uintptr_t
slot_tag(Py_hash_t hash)
{
    return PtrMask == ~(uintptr_t)0 ? 0 : (uintptr_t)(Py_uhash_t)hash & TAG_MASK;
}

/* the home slot of a term of stored hash h in a table of n slots (n <= MAX_CAPACITY) */
#define HOME(h, n) ((size_t)(h) & ((n) - 1))

/* Slot arrays of 2 MiB and more are mapped on their own and, where the system allows (Linux's
   transparent huge pages in "madvise" mode), backed by huge pages: a probe lands on a random slot,
   and with 4 KiB pages a table of millions of terms misses the TLB at almost every probe. */
#if defined(__linux__) && defined(MADV_HUGEPAGE)
#define HUGE_TABLE_BYTES ((size_t)2 << 20)
#endif

static Slot *
slots_alloc(size_t n)
{
#ifdef HUGE_TABLE_BYTES
    if (n * sizeof(Slot) >= HUGE_TABLE_BYTES) {
        void *p = mmap(NULL, n * sizeof(Slot), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        (void)madvise(p, n * sizeof(Slot), MADV_HUGEPAGE); /* a hint: refused, the table works as well */
        return (Slot *)p; /* anonymous pages read as zeros: every slot empty */
    }
#endif
    return (Slot *)PyMem_Calloc(n, sizeof(Slot));
}

static void
slots_free(Slot *slots, size_t n)
{
#ifdef HUGE_TABLE_BYTES
    if (n * sizeof(Slot) >= HUGE_TABLE_BYTES) {
        munmap(slots, n * sizeof(Slot));
        return;
    }
#endif
    PyMem_Free(slots);
}

/* the most of the slots that terms and tombstones may fill together: thirteen sixteenths (an
   unsuccessful probe then reads about 15 consecutive slots, two cache lines, and only the slots: see
   the tags above; the first line's miss is most of its cost, as at three quarters). A node's share of
   the table is 1.23-2.46 slots (1.33-2.67 at three quarters): a build that ends a little past three
   quarters of a power of two (a sparse Hessian of 3.08M terms, 800k terms of the trig family) keeps a
   table half the size, and skips the rehash that doubling it would cost. */
#define LOAD_NUM 13
#define LOAD_DEN 16

#define RESIZE_FAR 48
#define RESIZE_NEAR 24

/* move every term to a fresh table of n slots (a power of two, more than twice Count, at most
   MAX_CAPACITY), each keeping its slot's tag unless untag; -1 when out of memory, with no exception
   set (a shrink just skips) */
static int
table_resize(size_t n, int untag)
{
    if (n > MAX_CAPACITY)
        return -1;
    Slot *fresh = slots_alloc(n);
    if (fresh == NULL)
        return -1;
    uintptr_t old_mask = PtrMask;
    if (untag)
        PtrMask = ~(uintptr_t)0;
    for (size_t i = 0; i < Capacity; i++) {
        /* read ahead: the hash of the term RESIZE_FAR slots on, the new home of the one RESIZE_NEAR on */
        if (i + RESIZE_FAR < Capacity && Slots[i + RESIZE_FAR] > TOMB)
            PREFETCH(&((TermObject *)(Slots[i + RESIZE_FAR] & old_mask))->hash);
        if (i + RESIZE_NEAR < Capacity && Slots[i + RESIZE_NEAR] > TOMB)
            PREFETCH(&fresh[HOME(((TermObject *)(Slots[i + RESIZE_NEAR] & old_mask))->hash, n)]);
        if (Slots[i] <= TOMB)
            continue;
        TermObject *t = (TermObject *)(Slots[i] & old_mask);
        size_t j = HOME(t->hash, n);
        while (fresh[j] != 0)
            j = (j + 1) & (n - 1);
        /* the tag moves with the term (the term does not keep the top bits of its hash) */
        fresh[j] = (uintptr_t)t | (PtrMask == ~(uintptr_t)0 ? 0 : Slots[i] & ~old_mask);
    }
    if (Slots != NULL)
        slots_free(Slots, Capacity);
    Slots = fresh;
    Capacity = n;
    Tombs = 0;
    TableVersion++;
    return 0;
}

static int
table_grow(int untag)
{
    if (table_resize(Capacity ? Capacity * 2 : MIN_CAPACITY, untag) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static int pending_remove(TermObject *t);

void
table_unlink(TermObject *t)
{
    if (pending_remove(t)) {
        t->hash = HASH_UNLINKED;
        TableVersion++;
        return;
    }
    if (Capacity == 0)
        return;
    size_t mask = Capacity - 1, i = HOME(t->hash, Capacity);
    while (Slots[i] == TOMB || slot_term(Slots[i]) != t) {
        if (Slots[i] == 0)
            return; /* not there (cannot happen for a linked term) */
        i = (i + 1) & mask;
    }
    if (Slots[(i + 1) & mask] == 0) {
        /* the end of its run: the slot empties, and so do the tombstones just before it */
        Slots[i] = 0;
        for (i = (i - 1) & mask; Slots[i] == TOMB; i = (i - 1) & mask) {
            Slots[i] = 0;
            Tombs--;
        }
    } else {
        Slots[i] = TOMB;
        Tombs++;
    }
    t->hash = HASH_UNLINKED;
    Count--;
    TableVersion++;
}

/* start reading the home slot of a hash: the probe that follows a little later then finds it in cache */
void
table_prefetch(Py_hash_t hash)
{
    if (Capacity != 0)
        PREFETCH(&Slots[HOME(STORED_HASH(hash), Capacity)]);
}

/* An attr whose __eq__ builds or frees terms changes the table at every comparison: a lookup starts
   again at most this often, then raises exprgraph.errors.TermTableError instead of spinning. */
#define MAX_LOOKUP_RETRIES 64

/* the class exprgraph.errors.<name> (a new reference), or NULL with an error set */
PyObject *
project_error(const char *name)
{
    PyObject *errors = PyImport_ImportModule("exprgraph.errors");
    PyObject *cls = errors != NULL ? PyObject_GetAttrString(errors, name) : NULL;
    Py_XDECREF(errors);
    return cls;
}

static TermObject *
table_changed_error(void)
{
    PyObject *cls = project_error("TermTableError");
    if (cls == NULL)
        return NULL;
    PyErr_SetString(cls, "the intern table changed at every comparison of this term's attr (its __eq__ builds or "
                         "frees terms); an attr must compare without building terms");
    Py_DECREF(cls);
    return NULL;
}

/* Whether live term t is the term (op, args, key) of this hash: 1 or 0; -1 on an error; 2 when the
   attr's __eq__ ran Python code that changed the table (the caller looks again). */
static int
term_matches(TermObject *t, PyObject *op, PyObject *const *items, Py_ssize_t n, PyObject *key, Py_hash_t hash)
{
    if (t->hash != STORED_HASH(hash) || t->op != op)
        return 0;
    if (TERM_NARGS(t) != n)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (t->items[i] != items[i])
            return 0;
    PyObject *tkey = TERM_KEY(t);
    if (key == NULL || tkey == NULL)
        return key == tkey;
    if (tkey == key)
        return 1;
    if (op == OpConst && Py_TYPE(tkey) != Py_TYPE(key))
        return 0; /* a constant's plain key is its int or float itself: 1 and 1.0 differ */
    uint64_t version = TableVersion;
    Py_INCREF(t);
    Py_INCREF(tkey); /* (the term holds it; held too while its __eq__ runs) */
    int eq = PyObject_RichCompareBool(tkey, key, Py_EQ);
    Py_DECREF(tkey);
    Py_DECREF(t); /* linked while the version holds, so still alive */
    if (version != TableVersion) /* Python code ran and changed the table */
        return eq < 0 ? -1 : 2;
    return eq;
}

/* ---- terms waiting for their slot ------------------------------------------------------------
   A term with an operand that has no user of its op in a slot (intern_term looks for it among the
   waiting terms only) waits here for its own slot: a slot read is a cache miss in a large table, and
   PENDING_MAX of them are read at once when the set fills (each slot prefetched first), so the
   misses overlap instead of coming one after another. The set is part of the table: lookups and
   removals look here first. Invariant: every operand of a term in a slot has the term's op's bit
   in its DEPTH_USERS. */
#define PENDING_MAX 16

static TermObject *Pending[PENDING_MAX];
static Py_hash_t PendingHash[PENDING_MAX];
static size_t PendingCount = 0;

/* put a term of this intern hash in its slot (room checked by the caller); its operands now have a user
   of its op in a slot */
static void
slot_put(TermObject *t, Py_hash_t hash)
{
    size_t i = HOME(t->hash, Capacity);
    while (Slots[i] > TOMB)
        i = (i + 1) & (Capacity - 1);
    if (Slots[i] == TOMB) /* (t is not in the table: lookups came first, so no later slot holds it) */
        Tombs--;
    Slots[i] = (uintptr_t)t | slot_tag(hash);
    Count++;
    Py_ssize_t n = TERM_NARGS(t);
    if (n == 0)
        return; /* a leaf: its op needs no bit */
    uint32_t bit = op_user_bit(t->op);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *a = t->items[k];
        if (Py_TYPE(a) == TermClass || PyObject_TypeCheck(a, &TermBaseType))
            TERM(a)->depth |= bit;
    }
}

/* the slot array has room for `more` terms, and shrinks once mostly empty: -1 (error set) when out of memory */
static int
make_room(size_t more, int untag)
{
    while (untag || LOAD_DEN * (Count + Tombs + more) > LOAD_NUM * Capacity) {
        /* mostly tombstones: the same size again drops them (a shrink below may follow) */
        if (!untag && 4 * (Count + more) <= Capacity) {
            if (table_resize(Capacity, 0) < 0) {
                PyErr_NoMemory();
                return -1;
            }
            continue;
        }
        if (table_grow(untag) < 0)
            return -1;
        untag = 0;
    }
    /* give memory back once the live terms fill less than an eighth of the table (a long-lived
       process that built and dropped a large expression then probes a small table again): one
       resize at the next construction, to a table at most a quarter full, so freeing a large
       expression does not rehash the table once per halving and growing again takes as many new
       terms as there are live ones */
    if (Capacity > SHRINK_FLOOR && Count + more < Capacity / 8) {
        size_t n = Capacity / 2;
        while (n > SHRINK_FLOOR && 4 * (Count + more) <= n / 2)
            n /= 2;
        (void)table_resize(n, 0);
    }
    return 0;
}

/* every waiting term into its slot, the slots read together; -1 (error set) when out of memory */
static int
pending_flush(void)
{
    if (PendingCount == 0)
        return 0;
    if (make_room(PendingCount, 0) < 0)
        return -1;
    for (size_t k = 0; k < PendingCount; k++)
        PREFETCH(&Slots[HOME(STORED_HASH(PendingHash[k]), Capacity)]);
    for (size_t k = 0; k < PendingCount; k++)
        slot_put(Pending[k], PendingHash[k]);
    PendingCount = 0;
    TableVersion++;
    return 0;
}

/* the waiting term (op, args, key) of this hash, as term_matches answers; *found set on 1 */
static int
pending_find(PyObject *op, PyObject *const *items, Py_ssize_t n, PyObject *key, Py_hash_t hash, TermObject **found)
{
    for (size_t k = 0; k < PendingCount; k++) {
        if (PendingHash[k] != hash)
            continue;
        TermObject *t = Pending[k];
        int m = term_matches(t, op, items, n, key, hash);
        if (m == 1)
            *found = t;
        if (m != 0)
            return m;
    }
    return 0;
}

/* take t out of the waiting set: 1 when it was there */
static int
pending_remove(TermObject *t)
{
    for (size_t k = 0; k < PendingCount; k++) {
        if (Pending[k] != t)
            continue;
        PendingCount--;
        Pending[k] = Pending[PendingCount];
        PendingHash[k] = PendingHash[PendingCount];
        return 1;
    }
    return 0;
}

/* Whether an operand has no user of op in the slots of the intern table (op's bit of DEPTH_USERS
   unset): then every live term (op, ... it ...) is one of the few terms waiting for their slots
   (see table_insert_later), and the lookup reads only those. A bit is set when a user of an op with
   that bit takes its slot and never cleared (a user that has gone, or another op sharing the bit,
   leaves it set: the whole table is then looked at, as before); a new term starts without any (its
   memory comes zeroed). A new term whose operands have users of other ops only (sin(s) once s*c
   exists) so costs no read of the slot array, which for a large table is a cache miss. */
int
has_fresh_operand(PyObject *op, PyObject *const *items, Py_ssize_t n)
{
    if (n == 0)
        return 0; /* a leaf: no operand, and its op takes no bit */
    uint32_t bit = op_user_bit(op);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = items[i];
        if ((Py_TYPE(a) == TermClass || PyObject_TypeCheck(a, &TermBaseType)) && !(TERM(a)->depth & bit))
            return 1;
    }
    return 0;
}

/* The live term for (op, the n operands at items, key), borrowed; NULL when there is none (or on error:
   check PyErr_Occurred). The operands are only pointers to compare, so non-terms simply miss. recent_only:
   the caller knows that an operand has no user of op in a slot (looked at again in full once Python code
   has changed the table: a flush gives the operands users in slots). */
TermObject *
table_find(PyObject *op, PyObject *const *items, Py_ssize_t n, PyObject *key, Py_hash_t hash, int recent_only)
{
    int retries = 0;
again:
    if (retries > MAX_LOOKUP_RETRIES)
        return table_changed_error();
    TermObject *found = NULL;
    int m = pending_find(op, items, n, key, hash, &found);
    if (m == 1)
        return found;
    if (m < 0)
        return NULL;
    if (m == 2) {
        retries++;
        recent_only = 0;
        goto again;
    }
    if (Capacity == 0 || recent_only)
        return NULL;
    uintptr_t tag = slot_tag(hash);
    for (size_t i = HOME(STORED_HASH(hash), Capacity); Slots[i] != 0; i = (i + 1) & (Capacity - 1)) {
        if ((Slots[i] & ~PtrMask) != tag || Slots[i] == TOMB)
            continue;
        TermObject *t = slot_term(Slots[i]);
        m = term_matches(t, op, items, n, key, hash);
        if (m == 1)
            return t;
        if (m < 0)
            return NULL;
        if (m == 2) {
            retries++;
            goto again;
        }
    }
    return NULL;
}

int
table_insert(TermObject *t, Py_hash_t hash)
{
    /* an address in the tag bits (never seen on the 64-bit systems CPython runs on): drop the tags */
    int untag = ((uintptr_t)t & ~PtrMask) != 0;
    if (make_room(1, untag) < 0)
        return -1;
    slot_put(t, hash);
    TableVersion++;
    return 0;
}

int
table_insert_later(TermObject *t, Py_hash_t hash)
{
    if (PendingCount == PENDING_MAX && pending_flush() < 0)
        return -1;
    /* the shrink of a mostly empty table (see make_room) at the first construction, as for table_insert */
    if (Capacity > SHRINK_FLOOR && Count + PendingCount + 1 < Capacity / 8 && make_room(PendingCount + 1, 0) < 0)
        return -1;
    if (((uintptr_t)t & ~PtrMask) != 0)
        return table_insert(t, hash);
    Pending[PendingCount] = t;
    PendingHash[PendingCount] = hash;
    PendingCount++;
    TableVersion++;
    return 0;
}

size_t
table_count(void)
{
    return Count + PendingCount;
}

size_t
table_capacity(void)
{
    return Capacity;
}

/* every live term's mark set to 0 (the terms in slots and those waiting for theirs: every live term) */
void
table_clear_marks(void)
{
    for (size_t i = 0; i < Capacity; i++)
        if (Slots[i] > TOMB)
            slot_term(Slots[i])->mark = 0;
    for (size_t k = 0; k < PendingCount; k++)
        Pending[k]->mark = 0;
}
