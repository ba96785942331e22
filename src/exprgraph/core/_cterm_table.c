/* _cterm_table.c: the intern table of exprgraph.core._cterm (see _cterm.c): every live term, by
   (op, the operand objects, the attr's key), as a borrowed pointer that the term removes when it
   is freed. */

#include "_cterm.h"
#ifdef __linux__
#include <sys/mman.h>
#endif

/* ---- the intern table ------------------------------------------------------------------------
   Open addressing with linear probing over one word per slot: a term's address with the top 16
   bits of its hash as a tag in the address bits that user space leaves zero, so a probe touches
   the term only when the tags agree (a false match is one in 65,536); at most half the slots are
   used; a term that leaves shifts the run behind it back (no tombstones). Should an address ever
   use those bits, the table drops the tags for good (it then compares each probed term's hash). */

typedef uintptr_t Slot; /* 0: an empty slot */

static Slot *Slots = NULL;
static size_t Capacity = 0; /* a power of two */
static size_t Count = 0;
uint64_t TableVersion = 0; /* changes whenever the table does */

/* the smallest capacity; the table never shrinks below it */
#define MIN_CAPACITY ((size_t)1 << 15)

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
    return PtrMask == ~(uintptr_t)0 ? 0 : (uintptr_t)hash & TAG_MASK;
}

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

/* move every term to a fresh table of n slots (a power of two, more than twice Count), tagged
   unless untag; -1 when out of memory, with no exception set (a shrink just skips) */
static int
table_resize(size_t n, int untag)
{
    Slot *fresh = slots_alloc(n);
    if (fresh == NULL)
        return -1;
    uintptr_t old_mask = PtrMask;
    if (untag)
        PtrMask = ~(uintptr_t)0;
    for (size_t i = 0; i < Capacity; i++) {
        if (Slots[i] == 0)
            continue;
        TermObject *t = (TermObject *)(Slots[i] & old_mask);
        size_t j = (size_t)t->hash & (n - 1);
        while (fresh[j] != 0)
            j = (j + 1) & (n - 1);
        fresh[j] = (uintptr_t)t | slot_tag(t->hash);
    }
    if (Slots != NULL)
        slots_free(Slots, Capacity);
    Slots = fresh;
    Capacity = n;
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

void
table_unlink(TermObject *t)
{
    if (Capacity == 0)
        return;
    size_t mask = Capacity - 1, i = (size_t)t->hash & mask;
    while (slot_term(Slots[i]) != t) {
        if (Slots[i] == 0)
            return; /* not there (cannot happen for a linked term) */
        i = (i + 1) & mask;
    }
    /* shift back each later entry of the run that may live at i (its home is not in (i, j]) */
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (Slots[j] == 0)
            break;
        size_t k = (size_t)slot_term(Slots[j])->hash & mask;
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        Slots[i] = Slots[j];
        i = j;
    }
    Slots[i] = 0;
    t->hash = HASH_UNLINKED;
    Count--;
    TableVersion++;
}

Py_uhash_t
mix(Py_uhash_t h, Py_uhash_t v)
{
    h ^= v + (Py_uhash_t)0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

/* the intern hash of (op, args, key); -1 with an exception set when the key is unhashable */
Py_hash_t
key_hash(PyObject *op, PyObject *args, PyObject *key)
{
    Py_uhash_t h = (Py_uhash_t)((uintptr_t)op >> 4);
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    for (Py_ssize_t i = 0; i < n; i++)
        h = mix(h, (Py_uhash_t)((uintptr_t)PyTuple_GET_ITEM(args, i) >> 4));
    h = mix(h, (Py_uhash_t)n);
    if (key != NULL) {
        Py_hash_t kh = PyObject_Hash(key);
        if (kh == -1)
            return -1;
        h = mix(h, (Py_uhash_t)kh);
    }
    /* a final avalanche: the table takes the low bits */
    h ^= h >> 33;
    h *= (Py_uhash_t)0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    if ((Py_hash_t)h == -1)
        h = (Py_uhash_t)-2;
    return (Py_hash_t)h;
}

/* An attr whose __eq__ builds or frees terms changes the table at every comparison: a lookup starts
   again at most this often, then raises exprgraph.errors.TermTableError instead of spinning. */
#define MAX_LOOKUP_RETRIES 64

static TermObject *
table_changed_error(void)
{
    PyObject *errors = PyImport_ImportModule("exprgraph.errors");
    PyObject *cls = errors != NULL ? PyObject_GetAttrString(errors, "TermTableError") : NULL;
    Py_XDECREF(errors);
    if (cls == NULL)
        return NULL;
    PyErr_SetString(cls, "the intern table changed at every comparison of this term's attr (its __eq__ builds or "
                         "frees terms); an attr must compare without building terms");
    Py_DECREF(cls);
    return NULL;
}

/* The live term for (op, args, key), borrowed; NULL when there is none (or on error: check
   PyErr_Occurred). `args` holds only pointers to compare, so non-terms simply miss. */
TermObject *
table_find(PyObject *op, PyObject *args, PyObject *key, Py_hash_t hash)
{
    if (Capacity == 0)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    int retries = 0;
again:
    if (retries > MAX_LOOKUP_RETRIES)
        return table_changed_error();
    uintptr_t tag = slot_tag(hash);
    for (size_t i = (size_t)hash & (Capacity - 1); Slots[i] != 0; i = (i + 1) & (Capacity - 1)) {
        if ((Slots[i] & ~PtrMask) != tag)
            continue;
        TermObject *t = slot_term(Slots[i]);
        if (t->hash != hash || t->op != op)
            continue;
        PyObject *targs = t->args;
        if (PyTuple_GET_SIZE(targs) != n)
            continue;
        Py_ssize_t i = 0;
        while (i < n && PyTuple_GET_ITEM(targs, i) == PyTuple_GET_ITEM(args, i))
            i++;
        if (i < n)
            continue;
        if (key == NULL || t->key == NULL) {
            if (key == t->key)
                return t;
            continue;
        }
        if (t->key == key)
            return t;
        uint64_t version = TableVersion;
        Py_INCREF(t);
        int eq = PyObject_RichCompareBool(t->key, key, Py_EQ);
        if (version != TableVersion) { /* Python code ran and changed the table: look again */
            Py_DECREF(t);
            if (eq < 0)
                return NULL;
            retries++;
            goto again;
        }
        Py_DECREF(t); /* still linked, so still alive */
        if (eq < 0)
            return NULL;
        if (eq)
            return t;
    }
    return NULL;
}

int
table_insert(TermObject *t)
{
    /* an address in the tag bits (never seen on the 64-bit systems CPython runs on): drop the tags */
    int untag = ((uintptr_t)t & ~PtrMask) != 0;
    if ((untag || 2 * (Count + 1) > Capacity) && table_grow(untag) < 0)
        return -1;
    /* give memory back once the live terms fill less than an eighth of the table (a long-lived
       process that built and dropped a large expression then probes a small table again): one
       resize at the next construction, to a table at most a quarter full, so freeing a large
       expression does not rehash the table once per halving and growing again takes as many new
       terms as there are live ones */
    if (Capacity > MIN_CAPACITY && Count < Capacity / 8) {
        size_t n = Capacity / 2;
        while (n > MIN_CAPACITY && 4 * (Count + 1) <= n / 2)
            n /= 2;
        (void)table_resize(n, 0);
    }
    size_t i = (size_t)t->hash & (Capacity - 1);
    while (Slots[i] != 0)
        i = (i + 1) & (Capacity - 1);
    Slots[i] = (uintptr_t)t | slot_tag(t->hash);
    Count++;
    TableVersion++;
    return 0;
}

size_t
table_count(void)
{
    return Count;
}

size_t
table_capacity(void)
{
    return Capacity;
}
