"""Term: the one node type. Interned, immutable, compared by identity.

``Term(op, args, attr)`` returns the existing object when an equal term is alive, so ``==`` is
``is``, hashing is by identity and common subexpressions are shared at construction; equal terms
built on different threads are the same object too. The fields and the interning are the base
class's (:mod:`exprgraph.core.termbase`: in C when built, else in Python); every method is here.
Constructors never simplify.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .dtypes import INT64_MAX, INT64_MIN
from .operators import REFLECTED, ArrayMethods, OperatorMethods, install_array_protocol, install_operators
from .termbase import REGISTRY, TermBase, intern_table_size, native_operators
from .walk import postorder, postorder_until

if TYPE_CHECKING:
    from .op import Op

__all__ = ["Term", "intern_table_size", "REGISTRY"]

_set = object.__setattr__  # fills the caches of an immutable term


class Hooks:
    """Functions of the core modules above ``term`` that the bottom of core calls at run time.

    ``term`` is the lowest core module (then ``leaves`` and ``op``, then ``printing``, ``parsing``
    and ``latex``, then the op families and ``builders``), so it never imports upward: each
    module named below fills in its entries when it is imported, and the core package imports
    them all, so every entry is set before a term exists.
    """

    #: set by :mod:`exprgraph.core.printing`
    to_infix: Callable[[Term], str]
    to_repr: Callable[[Term], str]
    #: set by :mod:`exprgraph.core.latex`
    repr_latex: Callable[[Term], str | None]
    repr_svg: Callable[[Term], str | None]
    pretty_text: Callable[[Term], str]
    #: set by :mod:`exprgraph.core.leaves`: ``const(value, dtype)``
    const: Callable[..., Term]
    #: set by :mod:`exprgraph.core.op`: ``as_term(value)``
    as_term: Callable[..., Term]
    #: set by :mod:`exprgraph.core.parsing`: ``parse(text, dtype=...)``
    parse: Callable[..., Term]
    #: set by :mod:`exprgraph.core.ops_index`: ``x[key]`` of a term with axes
    getitem: Callable[[Term, Any], Term]


#: the one instance of :class:`Hooks`
hooks = Hooks()


class Term(TermBase, OperatorMethods["Term"], ArrayMethods["Term"]):
    """An interned, immutable expression node ``(op, args, attr)`` with cached dtype and shape.

    ``Term(op, args, attr)`` returns the live term with the same op, the same operand objects and
    an equal attr when there is one, and builds it otherwise (checking the operands and finding
    the dtype and shape through the op's rule). The fields and the interning live in the base
    (:mod:`exprgraph.core.termbase`: C when built, else Python); every method is here.
    """

    __slots__ = ()

    op: Op
    args: tuple[Term, ...]
    attr: Any
    dtype: str
    shape: tuple
    # caches, set on first use (see free_symbols, depth, size)
    _free: frozenset[Term]
    _depth: int
    _size: int

    # -- immutability, copying, pickling -------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("terms are immutable; build a new term instead")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("terms are immutable")

    def __copy__(self) -> Term:
        return self

    def __deepcopy__(self, memo: dict) -> Term:
        return self

    def __getitem__(self, key: Any) -> Term:
        """``x[key]`` with numpy's meaning (ints, slices, ``...``, ``None``, one index array); ``T[i, j]``
        with int64 terms on a tensor symbol is one element (``access``)."""
        return hooks.getitem(self, key)

    def __reduce__(self) -> tuple:
        # a flat list of nodes, so deep terms pickle without recursion and re-intern on load
        # (many terms sharing nodes: core.pack.TermPack flattens them together)
        flat, _ = flatten_nodes((self,))
        return (_unflatten, (flat,))

    # -- structure ------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The name of a symbol (an error for other terms)."""
        if self.op.name != "symbol":
            raise AttributeError(f"a {self.op.name} term has no name")
        return self.attr[0]

    @property
    def value(self) -> Any:
        """The value of a constant (an error for other terms)."""
        if self.op.name != "const":
            raise AttributeError(f"a {self.op.name} term has no value")
        return self.attr

    @property
    def is_symbol(self) -> bool:
        """True for symbol leaves."""
        return self.op.name == "symbol"

    @property
    def is_const(self) -> bool:
        """True for constant leaves."""
        return self.op.name == "const"

    @property
    def ndim(self) -> int:
        """Number of dimensions (0 for scalars)."""
        return len(self.shape)

    # cached properties: the slots stay unset until first asked for

    @property
    def depth(self) -> int:
        """Length of the longest path from this term down to a leaf (leaves have depth 0)."""
        try:
            return self._depth
        except AttributeError:
            pass
        if not self.args:
            return 0
        for node in postorder_until((self,), _has_depth):
            _set(node, "_depth", 1 + max(0 if not a.args else a._depth for a in node.args))
        return self._depth

    @property
    def free_symbols(self) -> frozenset[Term]:
        """The symbols this term depends on."""
        try:
            return self._free
        except AttributeError:
            pass
        for node in postorder_until((self,), _has_free):
            _set(node, "_free", _union_free(node))
        return self._free

    @property
    def size(self) -> int:
        """Number of distinct nodes in the DAG under this term (shared nodes count once)."""
        try:
            return self._size
        except AttributeError:
            pass
        _set(self, "_size", len(postorder((self,))))
        return self._size

    def __bool__(self) -> bool:
        if self.op.relational:
            raise TypeError(
                f"the truth value of the term {self} is undefined; comparisons build terms. "
                "Evaluate it, or compare terms with `is`"
            )
        return True

    def __iter__(self):
        raise TypeError("terms are not iterable; use .args for the operands")

    # -- printing (implemented in printing.py, reached through hooks) -----------------------------

    def __str__(self) -> str:
        return hooks.to_infix(self)

    def __repr__(self) -> str:
        return hooks.to_repr(self)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    # -- Python operators build terms (see _binary below) ---------------------------------------------

    def __neg__(self) -> Term:
        return Term(REGISTRY["neg"], (self,))

    def __pos__(self) -> Term:
        return self

    def __abs__(self) -> Term:
        return Term(REGISTRY["abs"], (self,))

    def __invert__(self) -> Term:
        return Term(REGISTRY["logical_not"], (self,))

    # -- notebook display (docs/notebook.md); the numpy protocol is installed below -----------------

    def _repr_latex_(self) -> str | None:
        """LaTeX for notebooks (None for very large terms, which then show as text)."""
        return hooks.repr_latex(self)

    def _repr_svg_(self) -> str | None:
        """The DAG drawn by Graphviz ``dot`` as SVG (None when ``dot`` is not installed)."""
        return hooks.repr_svg(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's pretty printer: the infix text (a summary when that text would be huge)."""
        printer.text(hooks.pretty_text(self))

    __hash__ = object.__hash__
    __eq__ = object.__eq__
    __ne__ = object.__ne__


def _wrap(value: Any, context: str = "") -> Any:
    """A constant term for a Python/numpy number or array, or NotImplemented for anything else.

    A Python int or float met by a float32 term (``context``) is weak, as numpy 2 treats Python
    scalars: it becomes a float32 constant (see :func:`exprgraph.core.dtypes.weak_dtype`).
    """
    cls = value.__class__
    if cls is float or cls is int or cls is bool:
        if context == "float32" and cls is not bool:
            return hooks.const(value, "float32")
        if cls is int and not INT64_MIN <= value <= INT64_MAX:
            raise OverflowError(f"integer constant {value} does not fit in int64")
        return Term(REGISTRY["const"], (), value)
    try:
        return hooks.as_term(value)
    except TypeError:
        return NotImplemented  # let the other operand's reflected method try (patterns do)


def _binary(name: str) -> tuple[Any, Any]:
    """The forward and reflected operator methods building ``name`` terms."""

    def forward(self: Term, other: Any) -> Any:
        if other.__class__ is not Term:
            other = _wrap(other, self.dtype)
            if other is NotImplemented:
                return other
        return Term(REGISTRY[name], (self, other))

    def reflected(self: Term, other: Any) -> Any:
        other = _wrap(other, self.dtype)
        if other is NotImplemented:
            return other
        return Term(REGISTRY[name], (other, self))

    forward.__name__, reflected.__name__ = f"__{name}__", f"__r{name}__"
    return forward, reflected


# ``+``, ``<`` and friends build terms of their ops (``==`` stays identity: use eq()/ne() for equality
# terms); ``&``, ``|`` and ``~`` build logical terms
install_operators(Term, _binary)
# with the C base, the binary operators of two terms or a term and a Python number run in C (the
# methods above stay their definition, called for every other operand)
native_operators(Term, REFLECTED, _binary)
# numpy ufuncs build terms (np.sin(x) is sin(x)), np.clip too; arrays become constants
install_array_protocol(Term, REGISTRY, _wrap)


def _has_depth(node: Term) -> bool:
    return not node.args or hasattr(node, "_depth")


def _has_free(node: Term) -> bool:
    return hasattr(node, "_free")


_EMPTY: frozenset = frozenset()


def _union_free(node: Term) -> frozenset:
    if not node.args:
        return frozenset((node,)) if node.op.name == "symbol" else _EMPTY
    # reuse a child's set when it already holds the union, so chains share one set
    best = max((a._free for a in node.args), key=len)
    extra = [a._free for a in node.args if not a._free <= best]
    return best.union(*extra) if extra else best


#: a term's node in a flat list: its op's name, the positions of its arguments earlier in the list, its attr
FlatNode = tuple[str, tuple[int, ...], Any]


def flatten_nodes(roots: tuple[Term, ...]) -> tuple[list[FlatNode], list[int]]:
    """The distinct nodes of ``roots`` as a flat list, children first, and each root's position in it."""
    nodes = postorder(roots)
    index = {node: i for i, node in enumerate(nodes)}
    return [(n.op.name, tuple(index[a] for a in n.args), n.attr) for n in nodes], [index[t] for t in roots]


def build_nodes(flat: list[FlatNode]) -> list[Term]:
    """The terms of a flat list, each built (and interned) once, in order."""
    built: list[Term] = []
    for name, arg_index, attr in flat:
        built.append(Term(REGISTRY[name], tuple(built[i] for i in arg_index), attr))
    return built


def _unflatten(flat: list[FlatNode]) -> Term:
    return build_nodes(flat)[-1]
