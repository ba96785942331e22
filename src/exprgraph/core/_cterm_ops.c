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

   The op of a Python operator is looked up by name in the registry at each use, as the Python
   method does (an op registered again with replace=True takes over the operator). */

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
    Py_RETURN_NONE;
}

/* the registered op called `name` (borrowed), NULL with an exception when there is none */
static PyObject *
registered(PyObject *name)
{
    PyObject *op = PyDict_GetItemWithError(Registry, name);
    if (op == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, name);
        return NULL;
    }
    return resolve_op(op);
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
    if (dtype_index(TERM(term)->dtype) == D_FLOAT32)
        return NULL; /* a weak Python number next to float32 is a float32 constant: Python's way */
    PyObject *op = registered(ConstName);
    if (op == NULL)
        return NULL;
    Py_INCREF(op);
    PyObject *res = intern_taking(TermClass, op, PyTuple_New(0), number);
    Py_DECREF(op);
    return res;
}

/* a op b for operator k; the Python method when the operands are not two terms or a term and a number */
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
    PyObject *op = registered(OpNames[k]);
    if (op == NULL) {
        Py_XDECREF(made);
        return NULL;
    }
    Py_INCREF(op); /* held while a Python dtype rule runs (it could register another op of the name) */
    PyObject *args = reflected ? PyTuple_Pack(2, other, self) : PyTuple_Pack(2, self, other);
    Py_XDECREF(made);
    PyObject *res = intern_taking(TermClass, op, args, Py_None);
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

/* leaves(symbol_infer, const_infer): the two rules this file may answer for */
PyObject *
set_leaf_rules(PyObject *module, PyObject *args)
{
    PyObject *symbol_infer, *const_infer;
    if (!PyArg_ParseTuple(args, "OO:leaves", &symbol_infer, &const_infer))
        return NULL;
    Py_XSETREF(SymbolInfer, Py_NewRef(symbol_infer));
    Py_XSETREF(ConstInfer, Py_NewRef(const_infer));
    Py_RETURN_NONE;
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
