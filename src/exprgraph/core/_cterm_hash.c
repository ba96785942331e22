/* _cterm_hash.c: the intern hash of exprgraph.core._cterm (see _cterm.c): of (op, the operand objects,
   the attr's key), mixed from their addresses and the key's hash. The table (_cterm_table.c) takes its
   low bits as a term's home slot and its top 16 as the slot's tag; a term keeps its low 32 bits. */

#include "_cterm.h"

Py_uhash_t
mix(Py_uhash_t h, Py_uhash_t v)
{
    h ^= v + (Py_uhash_t)0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

/* the intern hash of (op, the n operands at items, key); -1 with an exception set when the key is unhashable */
Py_hash_t
key_hash_items(PyObject *op, PyObject *const *items, Py_ssize_t n, PyObject *key)
{
    Py_uhash_t h = (Py_uhash_t)((uintptr_t)op >> 4);
    for (Py_ssize_t i = 0; i < n; i++)
        h = mix(h, (Py_uhash_t)((uintptr_t)items[i] >> 4));
    h = mix(h, (Py_uhash_t)n);
    if (key != NULL) {
        Py_uhash_t kh;
        double v = op == OpConst && PyFloat_CheckExact(key) ? PyFloat_AS_DOUBLE(key) : 0.0;
        if (v == v && v != 0.0) {
            /* a constant's plain float key (see plain_const_key): its bits, equal exactly when the
               values are (neither nan nor a zero), with no call of float's own hash */
            uint64_t bits;
            memcpy(&bits, &v, sizeof bits);
            kh = (Py_uhash_t)bits;
        } else {
            Py_hash_t ph = PyObject_Hash(key);
            if (ph == -1)
                return -1;
            kh = (Py_uhash_t)ph;
        }
        h = mix(h, kh);
    }
    /* a final avalanche: the table takes the low bits (the index) and the top 16 (the tag) */
    h ^= h >> 33;
    h *= (Py_uhash_t)0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    if (STORED_HASH(h) == HASH_UNLINKED) /* kept distinct from an unlinked term's (and never -1) */
        h ^= 1;
    return (Py_hash_t)h;
}

/* the intern hash of (op, args, key) for an args tuple */
Py_hash_t
key_hash(PyObject *op, PyObject *args, PyObject *key)
{
    return key_hash_items(op, ITEMS(args), PyTuple_GET_SIZE(args), key);
}
