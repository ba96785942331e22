/* _cterm_ops.c: the Python operators of terms and the calls of ops, in C (see _cterm.c).

   `x * y`, `x + 2.5`, `1.0 - x` and `sin(x)` are most of what builds a large expression. In Python
   each went through a method (`_binary` of term.py, `Op.__call__`) before the C interning; here
   the common cases go straight to intern_term, and everything else calls those same Python
   functions, which stay the definition (and the pure base's whole implementation):

   - TermBase's number slots (+ - * / // % ** @ & |): two terms, or a term and a Python float or
     int (not a bool, an int within int64, next to a term that is not float32) build the op's term
     at once; a float or int becomes the constant Term(const, (), value) as term.py's `_wrap` makes
     it. Any other operand (a numpy value, a pattern, an array) calls the Python method.
   - the call of an Op (configure sets Op's tp_call): an Op called with terms only and no keyword
     is Term(op, args) with the call's own tuple as the args; any other call runs Op.__call__.

   The op of a Python operator is the one the registry maps its name to at each use, as in the
   Python method (an op registered again with replace=True takes over the operator); the lookup is
   skipped while the registry has not changed (see CachedOp). */

#include "_cterm.h"

/* the binary operators, in the order of exprgraph.core.operators.REFLECTED */
enum { B_ADD, B_SUB, B_MUL, B_TRUEDIV, B_FLOORDIV, B_MOD, B_POW, B_MATMUL, B_AND, B_OR, N_BINARY };

static const char *MethodNames[N_BINARY] = {"add",      "sub", "mul", "truediv", "floordiv",
                                            "mod",      "pow", "matmul", "and", "or"};

/* per operator: the op's name in the registry, the Python forward and reflected methods */
static PyObject *OpNames[N_BINARY];
static PyObject *Forward[N_BINARY];
static PyObject *Reflected[N_BINARY];
static PyObject *ConstName = NULL;
static ternaryfunc OpCallPython = NULL; /* Op's own tp_call (runs Op.__call__) */

/* The registered op of operator k (N_BINARY: the const op) as last found, and the registry's
   version then: on CPython 3.11 every change of a dict gives it a new version, unique among all
   dicts, so while the registry keeps that version it still maps the name to that op (alive, held
   by the registry) and the lookup is skipped. */
#define CACHED_OPS (N_BINARY + 1)
#if PY_VERSION_HEX < 0x030C0000
#define REGISTRY_VERSIONED 1
static PyObject *CachedOp[CACHED_OPS];
static PyObject *CachedIn[CACHED_OPS]; /* the registry the entry was found in (compared only) */
static uint64_t CachedVersion[CACHED_OPS];
#endif

/* operators(methods, ops, forwards, reflecteds): the C operators' facts, in REFLECTED's order */
PyObject *
set_operators(PyObject *module, PyObject *args)
{
    PyObject *methods, *ops, *fwd, *rfl;
    if (!PyArg_ParseTuple(args, "O!O!O!O!:operators", &PyTuple_Type, &methods, &PyTuple_Type, &ops, &PyTuple_Type,
                          &fwd, &PyTuple_Type, &rfl))
        return NULL;
    if (PyTuple_GET_SIZE(methods) != N_BINARY || PyTuple_GET_SIZE(ops) != N_BINARY ||
        PyTuple_GET_SIZE(fwd) != N_BINARY || PyTuple_GET_SIZE(rfl) != N_BINARY) {
        PyErr_Format(PyExc_ValueError, "operators: %d methods, op names, forward and reflected methods", N_BINARY);
        return NULL;
    }
    for (int k = 0; k < N_BINARY; k++) {
        PyObject *m = PyTuple_GET_ITEM(methods, k), *name = PyTuple_GET_ITEM(ops, k);
        if (!PyUnicode_Check(m) || PyUnicode_CompareWithASCIIString(m, MethodNames[k]) != 0 ||
            !PyUnicode_CheckExact(name)) {
            PyErr_Format(PyExc_ValueError, "operators: method %d must be %s with an op name", k, MethodNames[k]);
            return NULL;
        }
    }
    for (int k = 0; k < N_BINARY; k++) {
        PyObject *name = Py_NewRef(PyTuple_GET_ITEM(ops, k));
        PyUnicode_InternInPlace(&name);
        Py_XSETREF(OpNames[k], name);
        Py_XSETREF(Forward[k], Py_NewRef(PyTuple_GET_ITEM(fwd, k)));
        Py_XSETREF(Reflected[k], Py_NewRef(PyTuple_GET_ITEM(rfl, k)));
    }
    if (ConstName == NULL && (ConstName = PyUnicode_InternFromString("const")) == NULL)
        return NULL;
#ifdef REGISTRY_VERSIONED
    for (int k = 0; k < CACHED_OPS; k++)
        CachedOp[k] = NULL; /* the names may have changed: found again */
#endif
    Py_RETURN_NONE;
}

/* the registered op called `name`, operator k's (borrowed), NULL with an exception when there is none */
static PyObject *
registered(int k, PyObject *name)
{
#ifdef REGISTRY_VERSIONED
    int versioned = PyDict_CheckExact(Registry); /* (a lookup in a dict runs no Python code for an exact str) */
    uint64_t version = versioned ? ((PyDictObject *)Registry)->ma_version_tag : 0;
    if (versioned && CachedOp[k] != NULL && CachedIn[k] == Registry && CachedVersion[k] == version)
        return resolve_op(CachedOp[k]);
#endif
    PyObject *op = PyDict_GetItemWithError(Registry, name);
    if (op == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, name);
        return NULL;
    }
#ifdef REGISTRY_VERSIONED
    if (versioned) {
        CachedOp[k] = op;
        CachedIn[k] = Registry;
        CachedVersion[k] = version;
    }
#endif
    return resolve_op(op);
}

/* ---- constants of Python numbers ---------------------------------------------------------- */

PyObject *OpConst = NULL; /* the registered const op, found on first use once it is registered */

/* whether op is the registered const op */
int
is_const_op(PyObject *op)
{
    if (OpConst == NULL && Configured) {
        PyObject *found = PyDict_GetItemString(Registry, "const");
        if (found == NULL || Py_TYPE(found) != OpClass)
            return 0;
        OpConst = Py_NewRef(found);
    }
    return op == OpConst;
}

/* The intern key of a constant holding an exact float that is neither nan nor zero, or an exact int:
   the number itself (a new reference; NULL for any other attr: leaves.const_key decides). Such keys
   are equal exactly when leaves.const_key's ("f", value) and ("i", value) are: floats other than nan
   and the zeros are equal by value, and the table tells an int from a float by the key's type (see
   term_matches), so 1 and 1.0 stay two constants. No tuple is made or hashed (key_hash_items hashes
   such a float's bits). */
PyObject *
plain_const_key(PyObject *attr)
{
    if (PyFloat_CheckExact(attr)) {
        double v = PyFloat_AS_DOUBLE(attr);
        if (v != v || v == 0.0)
            return NULL; /* nan and the zeros are keyed by their bits: const_key decides */
        return Py_NewRef(attr);
    }
    return PyLong_CheckExact(attr) ? Py_NewRef(attr) : NULL;
}

/* `number` as the constant term _wrap makes of it next to `term` (a new reference); NULL without an
   exception when Python must decide (a bool, a float32 neighbour, an int beyond int64) */
static PyObject *
number_const(PyObject *term, PyObject *number)
{
    if (PyLong_CheckExact(number)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(number, &overflow);
        if (v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
        if (overflow)
            return NULL;
    } else if (!PyFloat_CheckExact(number)) {
        return NULL;
    }
    if (TERM_DTYPE_INDEX(term) == D_FLOAT32)
        return NULL; /* a weak Python number next to float32 is a float32 constant: Python's way */
    PyObject *op = registered(N_BINARY, ConstName);
    if (op == NULL)
        return NULL;
    Py_INCREF(op);
    PyObject *res = intern_items(TermClass, op, NULL, 0, NULL, number);
    Py_DECREF(op);
    return res;
}

/* a op b for operator k; the Python method when the operands are not two terms or a term and a number.
   The operands are held in the new term (see intern_items); no args tuple is made. */
static PyObject *
binary(int k, PyObject *a, PyObject *b)
{
    if (!Configured || OpNames[k] == NULL)
        Py_RETURN_NOTIMPLEMENTED;
    int reflected = Py_TYPE(a) != TermClass;
    if (reflected && Py_TYPE(b) != TermClass)
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *self = reflected ? b : a, *other = reflected ? a : b;
    PyObject *made = NULL;
    if (Py_TYPE(other) != TermClass) {
        made = number_const(self, other);
        if (made == NULL) {
            if (PyErr_Occurred())
                return NULL;
            return PyObject_CallFunctionObjArgs(reflected ? Reflected[k] : Forward[k], self, other, NULL);
        }
        other = made;
    }
    PyObject *op = registered(k, OpNames[k]);
    if (op == NULL) {
        Py_XDECREF(made);
        return NULL;
    }
    Py_INCREF(op); /* held while a Python dtype rule runs (it could register another op of the name) */
    PyObject *items[2] = {reflected ? other : self, reflected ? self : other};
    PyObject *res = intern_items(TermClass, op, items, 2, NULL, Py_None);
    Py_XDECREF(made); /* after: a new term holds the constant among its operands by then */
    Py_DECREF(op);
    return res;
}

#define BINARY_SLOT(fname, k)                                                                                 \
    static PyObject *fname(PyObject *a, PyObject *b) { return binary(k, a, b); }
BINARY_SLOT(term_add, B_ADD)
BINARY_SLOT(term_sub, B_SUB)
BINARY_SLOT(term_mul, B_MUL)
BINARY_SLOT(term_truediv, B_TRUEDIV)
BINARY_SLOT(term_floordiv, B_FLOORDIV)
BINARY_SLOT(term_mod, B_MOD)
BINARY_SLOT(term_matmul, B_MATMUL)
BINARY_SLOT(term_and, B_AND)
BINARY_SLOT(term_or, B_OR)

static PyObject *
term_pow(PyObject *a, PyObject *b, PyObject *modulo)
{
    if (modulo != Py_None)
        Py_RETURN_NOTIMPLEMENTED; /* pow(x, y, m): terms have no modular power */
    return binary(B_POW, a, b);
}

PyNumberMethods TermNumberMethods = {
    .nb_add = term_add,
    .nb_subtract = term_sub,
    .nb_multiply = term_mul,
    .nb_remainder = term_mod,
    .nb_power = term_pow,
    .nb_and = term_and,
    .nb_or = term_or,
    .nb_floor_divide = term_floordiv,
    .nb_true_divide = term_truediv,
    .nb_matrix_multiply = term_matmul,
};

/* Op(*terms): the term itself, with the call's tuple as its args; anything else runs Op.__call__ */
static PyObject *
op_call(PyObject *op, PyObject *args, PyObject *kwargs)
{
    if (Configured && Py_TYPE(op) == OpClass && (kwargs == NULL || PyDict_GET_SIZE(kwargs) == 0) &&
        PyTuple_CheckExact(args)) {
        Py_ssize_t n = PyTuple_GET_SIZE(args), i = 0;
        while (i < n && Py_TYPE(PyTuple_GET_ITEM(args, i)) == TermClass)
            i++;
        if (i == n) {
            if (resolve_op(op) == NULL)
                return NULL;
            return intern_term(TermClass, op, args, Py_None);
        }
    }
    return OpCallPython(op, args, kwargs);
}

/* give the op class the C call (once: configuring again keeps the Python call it saved) */
void
install_op_call(PyTypeObject *op_class)
{
    if (op_class->tp_call == NULL || op_class->tp_call == op_call)
        return;
    OpCallPython = op_class->tp_call;
    op_class->tp_call = op_call;
}

/* ---- the leaves' dtype rules ----------------------------------------------------------------
   Every symbol and constant calls its op's Python rule (leaves.symbol_infer, leaves.const_infer)
   once when it is first built. For the plain cases this file gives the same answer itself:
   a symbol's attr (name, dtype, shape) as an exact tuple -> (dtype, shape); a constant's exact
   float -> float64 and exact int -> int64, of shape (). Anything else calls the rule. */

static PyObject *SymbolInfer = NULL, *ConstInfer = NULL;
static PyObject *SymbolName = NULL, *Reserved = NULL; /* "symbol"; tokens.RESERVED_NAMES */
static Py_ssize_t MaxToken = 0;                        /* tokens.MAX_TOKEN */

/* leaves(symbol_infer, const_infer, reserved, max_token): the two rules this file may answer for,
   and what a plain symbol name must pass (see plain_symbol) */
PyObject *
set_leaf_rules(PyObject *module, PyObject *args)
{
    PyObject *symbol_infer, *const_infer, *reserved;
    Py_ssize_t max_token;
    if (!PyArg_ParseTuple(args, "OOO!n:leaves", &symbol_infer, &const_infer, &PyFrozenSet_Type, &reserved, &max_token))
        return NULL;
    if (SymbolName == NULL && (SymbolName = PyUnicode_InternFromString("symbol")) == NULL)
        return NULL;
    Py_XSETREF(SymbolInfer, Py_NewRef(symbol_infer));
    Py_XSETREF(ConstInfer, Py_NewRef(const_infer));
    Py_XSETREF(Reserved, Py_NewRef(reserved));
    MaxToken = max_token;
    Py_RETURN_NONE;
}

/* plain_symbol(name): leaves.Symbol(name) (a float64 scalar without assumptions) when the name
   passes tokens.check_name's test without Python: an exact ASCII str, an identifier of at most
   MAX_TOKEN characters, not reserved. None otherwise (Python's Symbol decides, and explains). */
PyObject *
plain_symbol(PyObject *module, PyObject *name)
{
    if (!Configured || Reserved == NULL || DtypeNames[D_FLOAT64] == NULL || !PyUnicode_CheckExact(name) ||
        !PyUnicode_IS_ASCII(name) || PyUnicode_GET_LENGTH(name) > MaxToken || PyUnicode_IsIdentifier(name) != 1)
        Py_RETURN_NONE;
    int reserved = PySet_Contains(Reserved, name);
    if (reserved != 0)
        return reserved < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *op = PyDict_GetItemWithError(Registry, SymbolName);
    if (op == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    if ((op = resolve_op(op)) == NULL)
        return NULL;
    PyObject *scalar = PyTuple_New(0);
    PyObject *attr = scalar != NULL ? PyTuple_Pack(3, name, DtypeNames[D_FLOAT64], scalar) : NULL;
    Py_XDECREF(scalar);
    if (attr == NULL)
        return NULL;
    Py_INCREF(op);
    PyObject *res = intern_items(TermClass, op, NULL, 0, NULL, attr);
    Py_DECREF(op);
    Py_DECREF(attr);
    return res;
}

/* dtype and shape (borrowed) of a leaf whose rule is one of the two above; 1 when done, 0 when the
   rule must decide */
int
leaf_infer(PyObject *infer, PyObject *attr, PyObject **dtype, PyObject **shape)
{
    if (infer == SymbolInfer && infer != NULL) {
        if (!PyTuple_CheckExact(attr) || PyTuple_GET_SIZE(attr) != 3 || !PyTuple_CheckExact(PyTuple_GET_ITEM(attr, 2)))
            return 0;
        *dtype = PyTuple_GET_ITEM(attr, 1); /* symbol_infer: attr[1], attr[2] */
        *shape = PyTuple_GET_ITEM(attr, 2);
        return 1;
    }
    if (infer == ConstInfer && infer != NULL) {
        int d = PyFloat_CheckExact(attr) ? D_FLOAT64 : PyLong_CheckExact(attr) ? D_INT64 : -1;
        if (d < 0 || DtypeNames[d] == NULL)
            return 0;
        *dtype = DtypeNames[d]; /* dtype_of_value: float -> float64, int -> int64 */
        *shape = PyTuple_New(0); /* the empty tuple: immortal in effect, a borrowed use is safe */
        Py_DECREF(*shape);
        return 1;
    }
    return 0;
}

/* ---- the user bits of DEPTH_USERS --------------------------------------------------------------
   The ops met first as users (terms with operands: a leaf's op never asks) get the 8 bits in turn
   (a build meets its common ops early, so they get bits of their own); an op past a full map
   shares a bit by the hash of its address. Any op-to-bit map is
   sound as long as it does not change for a live op: a term holds its op, so an op's address is
   not reused while a term of it is in a slot. */
#define OP_BIT_SLOTS 256

static PyObject *OpBitKey[OP_BIT_SLOTS];
static uint8_t OpBitVal[OP_BIT_SLOTS];
static unsigned OpBitCount = 0;

uint32_t
op_user_bit(PyObject *op)
{
    uint64_t h = (uint64_t)(uintptr_t)op >> 4;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    size_t i = (size_t)h & (OP_BIT_SLOTS - 1);
    for (unsigned probes = 0; probes < OP_BIT_SLOTS; probes++, i = (i + 1) & (OP_BIT_SLOTS - 1)) {
        if (OpBitKey[i] == op)
            return (uint32_t)1 << (24 + OpBitVal[i]);
        if (OpBitKey[i] == NULL) {
            if (2 * OpBitCount >= OP_BIT_SLOTS)
                break; /* full: the hash decides */
            OpBitKey[i] = op; /* the address only: a key, never dereferenced */
            OpBitVal[i] = (uint8_t)(OpBitCount++ & 7);
            return (uint32_t)1 << (24 + OpBitVal[i]);
        }
    }
    return (uint32_t)1 << (24 + (unsigned)(h >> 61));
}
