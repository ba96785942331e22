"""Reading the sympy expressions torch's ShapeEnv builds into dimension terms (see :mod:`.torch`).

The reader dispatches on the class *name* of each node, so neither torch nor sympy is imported: ``Integer``,
``Symbol``, ``Add``, ``Mul``, ``Pow`` (integer exponent), ``PowByNatural``, ``FloorDiv``/``CleanDiv``
(``a//b``), ``CeilDiv``, ``ModularIndexing(x, d, m)`` (``(x//d)%m``), ``PythonMod``/``Mod`` (``a%b``; torch's
``Mod`` is for ``a >= 0, b > 0``, where C's and Python's agree), ``Max``/``Min``, ``Abs``, ``Identity``,
``CeilToInt``/``FloorToInt``/``TruncToInt``/``floor``/``ceiling`` of a ratio (``IntTrueDiv``, ``FloatTrueDiv``,
``ToFloat`` of integers, rational coefficients: a ratio ``n/d`` is kept as its two integer terms until a
rounding takes it, ``floor(n/d) == n//d`` and ``ceil(n/d) == -((-n)//d)`` for every ``d != 0``), the relations
``Eq Ne Lt Le Gt Ge`` (sympy's class names too, a ratio side cleared by a positive constant denominator),
``And``/``Or``/``Not`` and true/false. Another function whose node says it is an integer (``is_integer``)
becomes an opaque dimension (nothing is known of its value); anything else raises
:class:`~exprgraph.errors.ConversionError` (a ``ValueError``). Expressions are walked iteratively (each
distinct node once, remembered by identity: hashing sympy is slow; an expression that has no term is
remembered too, and a float name is refused without raising), so depth is limited by memory only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Final

from ..core.op import get_op
from ..core.term import Term
from ..dims import CEIL_DIV, dim_const, dim_fn, dim_name
from ..errors import ConversionError

__all__ = [
    "Reader",
    "read_torch_expr",
    "is_bool",
    "MAX_NODES",
    "TRUE",
    "FALSE",
    "REL_OPS",
    "INF_NAMES",
    "BOOL_NAMES",
    "INT64_RANGE",
    "fold_tree",
]

#: the largest expression read (distinct nodes); a larger one raises ConversionError
MAX_NODES: Final = 1_000_000
#: the integers a dimension holds
INT64_RANGE: Final = (-(2**63), 2**63 - 1)
#: powers up to this exponent are read as products (the dimension printer has no power)
_MAX_FACTORS: Final = 64
_ADD, _MUL, _FLOORDIV, _MOD, _POW = (get_op(n) for n in ("add", "mul", "floordiv", "mod", "pow"))
_MAX, _MIN, _ABS, _NEG = (get_op(n) for n in ("maximum", "minimum", "abs", "neg"))
_AND, _OR, _NOT = get_op("logical_and"), get_op("logical_or"), get_op("logical_not")
#: the boolean constants
TRUE: Final = Term(get_op("const"), (), True)
FALSE: Final = Term(get_op("const"), (), False)
#: relation class names (torch's and sympy's spellings) -> the core's relational op
_RELATIONS: Final = {
    **dict.fromkeys(("Eq", "Equality"), get_op("eq")),
    **dict.fromkeys(("Ne", "Unequality"), get_op("ne")),
    **dict.fromkeys(("Lt", "StrictLessThan"), get_op("lt")),
    **dict.fromkeys(("Le", "LessThan"), get_op("le")),
    **dict.fromkeys(("Gt", "StrictGreaterThan"), get_op("gt")),
    **dict.fromkeys(("Ge", "GreaterThan"), get_op("ge")),
}
#: the names of the core's relational ops
REL_OPS: Final = frozenset(op.name for op in _RELATIONS.values())
#: class names of sympy's and torch's infinities -> their value
INF_NAMES: Final = {"IntInfinity": math.inf, "Infinity": math.inf, "NegativeIntInfinity": -math.inf}
INF_NAMES["NegativeInfinity"] = -math.inf
_INT_NAMES: Final = frozenset(("Integer", "Zero", "One", "NegativeOne", "IntegerConstant"))
#: class names of the boolean atoms -> the boolean constants
BOOL_NAMES: Final = {"BooleanTrue": TRUE, "BooleanFalse": FALSE, "true": TRUE, "false": FALSE}
#: calls whose one argument is the value (integer-valued floats included): f(x) -> x
_SAME: Final = frozenset(("Identity", "ToFloat", "TruncToFloat"))
#: rounding calls: name -> what they make of a ratio num/den
_ROUNDING: Final = frozenset(("FloorToInt", "CeilToInt", "TruncToInt", "floor", "ceiling", "RoundToInt"))


class _Ratio:
    """A rational value ``num/den`` (integer terms, ``den`` non-zero): only a rounding call or a relation takes it."""

    __slots__ = ("num", "den")

    def __init__(self, num: Term, den: Term) -> None:
        self.num, self.den = num, den


#: class -> whether its nodes are leaves (no arguments to read first: numbers, symbols, atoms), learnt once per class
_LEAF_CLASSES: Final[dict[type, bool]] = {int: True, bool: True, float: True}


def _learn_class(x: Any) -> bool:
    """Whether nodes of the class of ``x`` are leaves (recorded for :meth:`Reader._read_tree`)."""
    cls = type(x)
    leaf = bool(getattr(cls, "is_Atom", False) or getattr(cls, "is_Symbol", False)) or not hasattr(x, "args")
    _LEAF_CLASSES[cls] = leaf
    return leaf


def is_bool(t: Any) -> bool:
    """Whether ``t`` is a boolean term (a relation, a logical combination, true or false)."""
    return type(t) is Term and t.dtype == "bool"


def _int(t: Any, what: Any) -> Term:
    """``t`` as an integer term (a ratio or a boolean is refused)."""
    if type(t) is Term and t.dtype == "int64":
        return t
    kind = "a ratio" if isinstance(t, _Ratio) else "a boolean"
    raise ConversionError(f"torch expression: {_name(what)} needs integer operands, got {kind}")


def _name(x: Any) -> str:
    return type(x).__name__


def _const(value: int) -> Term:
    if not INT64_RANGE[0] <= value <= INT64_RANGE[1]:
        raise ConversionError(f"torch expression: the integer {value} does not fit in int64")
    return dim_const(value)


def _chain(op: Any, args: list[Term]) -> Term:
    out = args[0]
    for a in args[1:]:
        out = Term(op, (out, a))  # (the op's own call wraps numbers: these are terms already)
    return out


def _parts(v: Term | _Ratio) -> tuple[Term, Term | None]:
    """Numerator and denominator (None for an integer)."""
    return (v.num, v.den) if isinstance(v, _Ratio) else (v, None)


def _plus(a: Term | _Ratio, b: Term | _Ratio) -> Term | _Ratio:
    # n1/d1 + n2/d2 = (n1*d2 + n2*d1)/(d1*d2); n1/d + n2/d = (n1 + n2)/d; n1 + n2/d = (n1*d + n2)/d
    (na, da), (nb, db) = _parts(a), _parts(b)
    if da is None and db is None:
        return _ADD(na, nb)
    if da is None:
        assert db is not None
        return _Ratio(_ADD(_MUL(na, db), nb), db)
    if db is None:
        return _Ratio(_ADD(na, _MUL(nb, da)), da)
    if da is db:
        return _Ratio(_ADD(na, nb), da)
    return _Ratio(_ADD(_MUL(na, db), _MUL(nb, da)), _MUL(da, db))


def _times(a: Term | _Ratio, b: Term | _Ratio) -> Term | _Ratio:
    # (n1/d1)*(n2/d2) = (n1*n2)/(d1*d2)
    (na, da), (nb, db) = _parts(a), _parts(b)
    if da is None and db is None:
        return _MUL(na, nb)
    den = db if da is None else da if db is None else _MUL(da, db)
    assert den is not None
    return _Ratio(_MUL(na, nb), den)


class Reader:
    """Reads sympy expressions (torch's) into terms, each distinct node once; ``replacements`` maps names to
    the expressions torch replaced them with."""

    def __init__(self, replacements: Mapping[str, Any] | None = None) -> None:
        #: id(node) -> (node, its term or ratio): the node is kept, so its id is not reused
        self.done: dict[int, tuple[Any, Any]] = {}
        self.replacements = dict(replacements or {})
        #: id(root) -> (root, the error reading it raised): expressions that have no term
        self.failed: dict[int, tuple[Any, ConversionError]] = {}
        #: names met, with the default range their assumptions give (torch's default for a name without a range)
        self.symbols: dict[str, tuple[int | None, int | None]] = {}

    def children(self, x: Any) -> tuple:
        """The sub-expressions read before ``x``."""
        if getattr(x, "is_Symbol", False):
            r = self.replacements.get(x.name)
            return () if r is None or r is x else (r,)
        if isinstance(x, (int, float, bool)):
            return ()
        return getattr(x, "args", ())

    def value(self, x: Any) -> Any:
        """The term (or ratio) read for ``x`` (the table is keyed by identity: hashing sympy is slow)."""
        return self.done[id(x)][1]

    def read(self, root: Any) -> Term:
        """The term of one expression (integer, or boolean for a relation)."""
        if root is True or root is False or type(root) is int:
            return self.node(root)
        done = self.done
        hit = done.get(id(root))
        if hit is not None and hit[0] is root:
            return self._result(hit[1], root)
        failed = self.failed.get(id(root))
        if failed is not None and failed[0] is root:
            raise ConversionError(str(failed[1])) from None
        if len(done) > MAX_NODES:
            done.clear()
            self.failed.clear()
        try:
            if not self.replacements:
                self._read_tree(root)  # no replacement: no cycle can be met
            else:
                self._walk(root)
            return self._result(done[id(root)][1], root)
        except ConversionError as err:
            self.failed[id(root)] = (root, err)  # asked again, it fails at once
            raise

    def try_read(self, root: Any) -> Term | None:
        """The term of one expression, or None when it has none (as :meth:`read`, without raising)."""
        if type(root) is Term:
            return root
        hit = self.done.get(id(root))
        if hit is not None and hit[0] is root and type(hit[1]) is Term:
            return hit[1]  # read before
        failed = self.failed.get(id(root))
        if failed is not None and failed[0] is root:
            return None
        if _LEAF_CLASSES.get(type(root)) and getattr(root, "is_Symbol", False) and root.is_integer is not True:
            if root.name not in self.replacements:  # a float or a bool name: no term (and no error to raise)
                self.failed[id(root)] = (root, ConversionError(f"torch expression: {root.name!r} is not an integer"))
                return None
        try:
            return self.read(root)
        except ConversionError:
            return None

    def _read_tree(self, root: Any) -> None:
        """Read ``root`` and the nodes under it not read yet (a node is read once its arguments are)."""
        done = self.done
        stack = [root]
        count = 0
        while stack:
            node = stack[-1]
            key = id(node)
            hit = done.get(key)
            if hit is not None and hit[0] is node:
                stack.pop()
                continue
            cls = type(node)
            leaf = _LEAF_CLASSES.get(cls)
            if leaf is None:
                leaf = _learn_class(node)
            if leaf:
                done[key] = (node, self.node(node))
                stack.pop()
                continue
            args = node.args
            waiting = False
            for a in args:
                h = done.get(id(a))
                if h is None or h[0] is not a:
                    stack.append(a)
                    waiting = True
            if waiting:
                count += 1
                if count > MAX_NODES:
                    raise ConversionError(f"torch expression: more than {MAX_NODES} distinct nodes")
                continue
            stack.pop()
            done[key] = (node, self.call(cls.__name__, [done[id(a)][1] for a in args], node))

    def _walk(self, root: Any) -> None:
        """Read ``root`` as :meth:`_read_tree` does, following replacements (a cycle of them is refused)."""
        done = self.done
        stack: list[tuple[Any, bool]] = [(root, False)]
        on_path: set[int] = set()  # the nodes being read (ancestors of the node on top): a cycle returns to one
        count = 0
        while stack:
            node, expanded = stack.pop()
            key = id(node)
            if expanded:
                on_path.discard(key)
                done[key] = (node, self.node(node))
                continue
            hit = done.get(key)
            if hit is not None and hit[0] is node:
                continue
            if key in on_path:
                raise ConversionError(f"torch expression: the replacements of {node} form a cycle")
            count += 1
            if count > MAX_NODES:
                raise ConversionError(f"torch expression: more than {MAX_NODES} distinct nodes")
            children = self.children(node)
            if not children:  # a leaf: read at once
                done[key] = (node, self.node(node))
                continue
            on_path.add(key)
            stack.append((node, True))
            for child in children:
                stack.append((child, False))

    def _result(self, value: Any, root: Any) -> Term:
        if isinstance(value, _Ratio):
            raise ConversionError(f"torch expression: {root} is not an integer (a ratio)")
        return value

    def node(self, x: Any) -> Any:
        """The term of ``x``, its children read."""
        if x is True or x is False:
            return TRUE if x else FALSE
        if isinstance(x, int):
            return _const(x)
        name = _name(x)
        if name == "Symbol" or getattr(x, "is_Symbol", False):
            return self.symbol(x)
        if name in _INT_NAMES or getattr(x, "is_Integer", False):
            return _const(int(x))
        if name in BOOL_NAMES:
            return BOOL_NAMES[name]
        if name == "Rational" or getattr(x, "is_Rational", False):
            return _Ratio(_const(int(x.p)), _const(int(x.q)))
        if name in INF_NAMES:
            raise ConversionError(f"torch expression: {name} (infinity) is not a dimension")
        done = self.done
        args = [done[id(a)][1] for a in x.args]
        return self.call(name, args, x)

    def symbol(self, x: Any) -> Term:
        r = self.replacements.get(x.name)
        if r is not None and r is not x:
            return _int(self.value(r), x)
        if x.is_integer is not True:
            raise ConversionError(f"torch expression: the symbol {x.name!r} is not an integer (a float or a bool)")
        try:
            term = dim_name(x.name)
        except ValueError as err:
            raise ConversionError(f"torch expression: {err}") from None
        if x.name not in self.symbols:
            # torch's default range of a name it has no range for: from its assumptions
            self.symbols[x.name] = (1 if x.is_positive else 0 if x.is_nonnegative else None, None)
        return term

    def call(self, name: str, args: list[Any], x: Any) -> Any:
        """A call or an operator node, its arguments read (``args``)."""
        if name == "Add" or name == "Mul":
            if all(type(a) is Term for a in args):  # integers (the common case): a chain of the op
                return _chain(_ADD if name == "Add" else _MUL, args)
            combine = _plus if name == "Add" else _times  # a ratio among them
            out = args[0]
            for a in args[1:]:
                out = combine(out, a)
            return out
        if name in ("Pow", "PowByNatural"):
            base, exp = args
            if not (type(exp) is Term and exp.is_const and type(exp.attr) is int):
                raise ConversionError(f"torch expression: {x} has a power that is not an integer constant")
            k = exp.attr
            power = _power(_int(base, x), abs(k))
            return power if k >= 0 else _Ratio(_const(1), power)  # b**-k = 1/b**k
        if name in _RELATIONS:
            return self.relation(name, args, x)
        if name in ("And", "Or"):
            for a in args:
                if not is_bool(a):
                    raise ConversionError(f"torch expression: {name} needs boolean operands")
            return _chain(_AND if name == "And" else _OR, args)
        if name == "Not":
            if not is_bool(args[0]):
                raise ConversionError("torch expression: Not needs a boolean operand")
            return _NOT(args[0])
        if name in _SAME and len(args) == 1:
            return args[0]
        if name in ("IntTrueDiv", "FloatTrueDiv"):
            a, b = args  # a/b = a * (1/b); a/(n/d) = a * (d/n)
            return _times(a, _Ratio(b.den, b.num) if isinstance(b, _Ratio) else _Ratio(_const(1), _int(b, x)))
        if name in _ROUNDING and len(args) == 1:
            return self.rounding(name, args[0], x)
        ints = [_int(a, x) for a in args]
        if name in ("FloorDiv", "CleanDiv") and len(ints) == 2:
            return Term(_FLOORDIV, (ints[0], ints[1]))  # a//b (CleanDiv: known exact)
        if name in ("PythonMod", "Mod") and len(ints) == 2:
            return Term(_MOD, (ints[0], ints[1]))  # a%b
        if name == "ModularIndexing" and len(ints) == 3:
            return _MOD(_FLOORDIV(ints[0], ints[1]), ints[2])  # ModularIndexing(x, d, m) -> (x//d)%m
        if name == "CeilDiv" and len(ints) == 2:
            return CEIL_DIV(*ints)  # ceil(a/b)
        if name in ("Max", "Min") and ints:
            return _chain(_MAX if name == "Max" else _MIN, ints)
        if name == "Abs" and len(ints) == 1:
            return _ABS(ints[0])
        if getattr(x, "is_integer", None) is True and name.isidentifier():
            return dim_fn(name, *ints)  # an integer function we do not know: opaque
        raise ConversionError(f"torch expression: no dimension meaning for {name} (in {x})")

    def rounding(self, name: str, v: Any, x: Any) -> Term:
        if type(v) is Term:
            return _int(v, x)  # rounding an integer changes nothing
        if not isinstance(v, _Ratio):
            raise ConversionError(f"torch expression: {name} of a boolean")
        if name in ("FloorToInt", "floor"):
            return _FLOORDIV(v.num, v.den)  # floor(n/d) == n//d for every d != 0
        if name in ("CeilToInt", "ceiling"):
            return CEIL_DIV(v.num, v.den)  # ceil(n/d) == -((-n)//d)
        return dim_fn(name, v.num, v.den)  # trunc / round of n/d: opaque (sign dependent)

    def relation(self, name: str, args: list[Any], x: Any) -> Term:
        a, b = args
        if isinstance(a, _Ratio) or isinstance(b, _Ratio):
            a, b = _cleared(a, b, x)
        return Term(_RELATIONS[name], (_int(a, x), _int(b, x)))


def _power(base: Term, k: int) -> Term:
    """``base**k`` (k >= 0): a product of k factors when k is small (as dimension text prints it), else a power."""
    if k == 0:
        return _const(1)
    if k > _MAX_FACTORS:
        return _POW(base, _const(k))
    return _chain(_MUL, [base] * k)  # b**k = b*b*...*b


def _cleared(a: Any, b: Any, x: Any) -> tuple[Term, Term]:
    """``a REL b`` as ``a*d REL b*d`` for a positive constant denominator ``d`` (the relation is unchanged)."""
    d = 1
    for side in (a, b):
        if isinstance(side, _Ratio):
            den = side.den
            if not (den.is_const and type(den.attr) is int and den.attr > 0):
                raise ConversionError(f"torch expression: {x} compares a ratio with a symbolic denominator")
            d = d * den.attr // math.gcd(d, den.attr)
    out = []
    for side in (a, b):
        if isinstance(side, _Ratio):
            out.append(_MUL(side.num, _const(d // side.den.attr)))
        else:
            out.append(_MUL(_int(side, x), _const(d)))
    return out[0], out[1]


def read_torch_expr(expr: Any, replacements: Mapping[Any, Any] | None = None) -> Term:
    """The dimension term of one torch (sympy) expression (ConversionError when it has none)."""
    repl = {k if isinstance(k, str) else k.name: v for k, v in (replacements or {}).items()}
    return Reader(repl).read(expr)


def fold_tree(tree: Any, leaf: Callable[[Any], Any], call: Callable[[str, list[Any]], Any]) -> Any:
    """Fold an expression in JSON form (``[class name, *args]``, as ``bench/torch_record.py`` stores torch's
    expressions) children first, iteratively: ``leaf(x)`` for an int, a name or an atom (a list of one item, or
    ``["Rational", p, q]`` / ``["Float", text]``), ``call(name, values of the args)`` for the others."""
    out: list[Any] = []
    stack: list[tuple[Any, bool]] = [(tree, False)]
    while stack:
        node, ready = stack.pop()
        if not isinstance(node, list) or len(node) == 1 or node[0] in ("Rational", "Float"):
            out.append(leaf(node))
        elif not ready:
            stack.append((node, True))
            stack.extend((a, False) for a in reversed(node[1:]))
        else:
            n = len(node) - 1
            args = out[len(out) - n :]
            del out[len(out) - n :]
            out.append(call(node[0], args))
    return out[0]
