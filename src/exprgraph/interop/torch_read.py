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
The reading of each call, by class name, is in :mod:`.torch_calls`; a question about expressions read
before (a new root over known arguments, a number, a float name) is read at once, without the walk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ..core.term import Term
from ..dims import dim_name
from ..errors import ConversionError
from .torch_calls import (
    _INT_NAMES,
    BOOL_NAMES,
    CALLS,
    FALSE,
    INF_NAMES,
    INT64_RANGE,
    REL_OPS,
    TRUE,
    _const,
    _int,
    _name,
    _Ratio,
    is_bool,
    other,
)

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

#: class -> how its nodes are read: None for a leaf (no arguments to read first: numbers, symbols, atoms), else the
#: function of its arguments' values (learnt once per class, see _learn_class)
_HOW: Final[dict[type, Any]] = {int: None, bool: None, float: None}
#: what _HOW gives for a class not met yet
_UNSEEN: Final = object()
#: the classes whose ``args`` is sympy's own (``Basic.args``, which gives the slot ``_args``): read from the slot
_RAW_ARGS: Final[set[type]] = set()


def _learn_class(x: Any) -> Any:
    """How nodes of the class of ``x`` are read (recorded in ``_HOW``): None for a leaf, else a function
    ``(reader, values of the arguments, node) -> value`` (the class name's reading in :data:`.torch_calls.CALLS`,
    or :func:`.torch_calls.other`)."""
    cls = type(x)
    leaf = bool(getattr(cls, "is_Atom", False) or getattr(cls, "is_Symbol", False)) or not hasattr(x, "args")
    how = None if leaf else CALLS.get(cls.__name__, other)
    if not leaf and _basic_args(cls) and type(getattr(x, "_args", None)) is tuple:
        _RAW_ARGS.add(cls)
    _HOW[cls] = how
    return how


#: what a fact not (yet) in a symbol's table of assumptions gives
_NOT_KNOWN: Final = object()


def _fact(x: Any, fact: str) -> Any:
    """``x.is_<fact>`` of a sympy symbol: read from its table of assumptions (``_assumptions``, where sympy's own
    property looks first) when the fact is there, else by the property (which works it out and records it)."""
    kb = getattr(x, "_assumptions", None)
    if isinstance(kb, dict):
        v = kb.get(fact, _NOT_KNOWN)
        if v is not _NOT_KNOWN:
            return v
    return getattr(x, "is_" + fact, None)


def _basic_args(cls: type) -> bool:
    """Whether the ``args`` of ``cls`` is the one sympy's ``Basic`` defines (no class on the way overrides it)."""
    for c in cls.__mro__:
        if "args" in c.__dict__:
            return c.__name__ == "Basic" and c.__module__ == "sympy.core.basic"
    return False


def _error(why: Any) -> ConversionError:
    """The error of an expression that has no term: ``why`` is the error, or the name of its float or bool symbol."""
    if isinstance(why, ConversionError):
        return ConversionError(str(why))
    return ConversionError(f"torch expression: the symbol {why!r} is not an integer (a float or a bool)")


def _args(node: Any) -> Any:
    """The arguments of a node (sympy's slot when its ``args`` is ``Basic``'s: the property costs a call)."""
    return node._args if type(node) in _RAW_ARGS else node.args


class Reader:
    """Reads sympy expressions (torch's) into terms, each distinct node once; ``replacements`` maps names to
    the expressions torch replaced them with."""

    def __init__(self, replacements: Mapping[str, Any] | None = None) -> None:
        #: id(node) -> its term or ratio; every node keyed is kept in ``kept``, so no other object takes its id
        self.done: dict[int, Any] = {}
        self.kept: list[Any] = []
        self.replacements = dict(replacements or {})
        #: id(root) -> (root, the error reading it raised, or the name of the float or bool symbol it has: the error
        #: is made only if it is raised): expressions that have no term
        self.failed: dict[int, tuple[Any, Any]] = {}
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

    def keep(self, node: Any, value: Any) -> None:
        """Record the term (or ratio) read for ``node``; the node is kept alive, so no other object takes its id."""
        self.done[id(node)] = value
        self.kept.append(node)

    def value(self, x: Any) -> Any:
        """The term (or ratio) read for ``x`` (the table is keyed by identity: hashing sympy is slow)."""
        return self.done[id(x)]

    def read(self, root: Any) -> Term:
        """The term of one expression (integer, or boolean for a relation)."""
        if root is True or root is False or type(root) is int:
            return self.node(root)
        done = self.done
        hit = done.get(id(root))
        if hit is not None:
            return self._result(hit, root)
        failed = self.failed.get(id(root))
        if failed is not None and failed[0] is root:
            raise _error(failed[1]) from None
        if len(done) > MAX_NODES:
            done.clear()
            self.kept.clear()
            self.failed.clear()
        try:
            if not self.replacements:
                self._read_tree(root)  # no replacement: no cycle can be met
            else:
                self._walk(root)
            return self._result(done[id(root)], root)
        except ConversionError as err:
            self.failed[id(root)] = (root, err)  # asked again, it fails at once
            raise

    def try_read(self, root: Any) -> Term | None:
        """The term of one expression, or None when it has none (as :meth:`read`, without raising)."""
        if type(root) is Term:
            return root
        hit = self.done.get(id(root))
        if type(hit) is Term:
            return hit  # read before
        failed = self.failed.get(id(root))
        if failed is not None and failed[0] is root:
            return None
        if not self.replacements and len(self.done) <= MAX_NODES:
            how = _HOW.get(type(root), _UNSEEN)
            if how is None:  # a leaf: a number (torch asks for the bounds of many), a name, an atom
                return self._read_leaf(root)
            if how is not _UNSEEN:
                return self._read_one(root, how)
        if getattr(root, "is_Symbol", False) is True and _fact(root, "integer") is not True:
            if root.name not in self.replacements:  # a float or a bool name: no term (and no error to raise)
                self.failed[id(root)] = (root, root.name)
                return None
        try:
            return self.read(root)
        except ConversionError:
            return None

    def _read_leaf(self, root: Any) -> Term | None:
        """:meth:`try_read` of a leaf (no replacements)."""
        if getattr(root, "is_Symbol", False) is True and _fact(root, "integer") is not True:
            # a float or a bool name (torch asks about many): no term, and no error made (see _error)
            self.failed[id(root)] = (root, root.name)
            return None
        try:
            value = self.node(root)
        except ConversionError as err:
            self.failed[id(root)] = (root, err)  # asked again, it fails at once
            return None
        self.keep(root, value)
        return value if type(value) is Term else None  # (a rational has no term)

    def _read_one(self, root: Any, how: Any) -> Term | None:
        """:meth:`try_read` of a call (no replacements): at once when its arguments were read before (the common
        case: a question about expressions met already), else by the walk (:meth:`_read_tree`)."""
        done = self.done
        vals = []
        for a in _args(root):
            h = done.get(id(a))
            if h is not None:
                vals.append(h)
            elif getattr(a, "is_Symbol", False) is True and _fact(a, "integer") is not True:
                # a float or a bool name (torch asks about them): no term, and no error made (see _error)
                self.failed[id(root)] = (root, a.name)
                return None
            else:  # an argument not read yet: the walk
                try:
                    self._read_tree(root)
                except ConversionError as err:
                    self.failed[id(root)] = (root, err)  # asked again, it fails at once
                    return None
                value = done[id(root)]
                return value if type(value) is Term else None  # (a ratio has no term)
        try:
            value = how(self, vals, root)
        except ConversionError as err:
            self.failed[id(root)] = (root, err)  # asked again, it fails at once
            return None
        self.keep(root, value)
        return value if type(value) is Term else None  # (a ratio has no term)

    def _read_tree(self, root: Any) -> None:
        """Read ``root`` and the nodes under it not read yet (a node is read once its arguments are)."""
        done = self.done
        stack = [root]
        count = 0
        while stack:
            node = stack.pop()
            key = id(node)
            if key in done:
                continue
            cls = type(node)
            how = _HOW.get(cls, _UNSEEN)
            if how is _UNSEEN:
                how = _learn_class(node)
            if how is None:  # a leaf
                self.keep(node, self.node(node))
                continue
            args = node._args if cls in _RAW_ARGS else node.args
            vals = []
            for a in args:
                h = done.get(id(a))
                if h is None:
                    break
                vals.append(h)
            else:  # every argument read: this node now
                self.keep(node, how(self, vals, node))
                continue
            count += 1
            if count > MAX_NODES:
                raise ConversionError(f"torch expression: more than {MAX_NODES} distinct nodes")
            stack.append(node)  # again, after its arguments (those read already are skipped)
            stack.extend(args)

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
                self.keep(node, self.node(node))
                continue
            if key in done:
                continue
            if key in on_path:
                raise ConversionError(f"torch expression: the replacements of {node} form a cycle")
            count += 1
            if count > MAX_NODES:
                raise ConversionError(f"torch expression: more than {MAX_NODES} distinct nodes")
            children = self.children(node)
            if not children:  # a leaf: read at once
                self.keep(node, self.node(node))
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
            p = getattr(x, "p", None)  # sympy's Integer keeps its value as a Python int (int() costs a call)
            return _const(p if type(p) is int else int(x))
        if name in BOOL_NAMES:
            return BOOL_NAMES[name]
        if name == "Rational" or getattr(x, "is_Rational", False):
            return _Ratio(_const(int(x.p)), _const(int(x.q)))
        if name in INF_NAMES:
            raise ConversionError(f"torch expression: {name} (infinity) is not a dimension")
        done = self.done
        args = [done[id(a)] for a in _args(x)]
        return self.call(name, args, x)

    def symbol(self, x: Any) -> Term:
        r = self.replacements.get(x.name)
        if r is not None and r is not x:
            return _int(self.value(r), x)
        if _fact(x, "integer") is not True:
            raise _error(x.name)
        try:
            term = dim_name(x.name)
        except ValueError as err:
            raise ConversionError(f"torch expression: {err}") from None
        if x.name not in self.symbols:
            # torch's default range of a name it has no range for: from its assumptions
            self.symbols[x.name] = (1 if _fact(x, "positive") else 0 if _fact(x, "nonnegative") else None, None)
        return term

    def call(self, name: str, args: list[Any], x: Any) -> Any:
        """A call or an operator node, its arguments read (``args``)."""
        return CALLS.get(name, other)(self, args, x)


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
