"""TermBase: the fields of a term and its interning, in C when built (``_cterm.c``), else in Python.

:class:`~exprgraph.core.term.Term` subclasses the :data:`TermBase` chosen here and adds every
method. Both bases hold the same fields (``op``, ``args``, ``attr``, ``dtype``, ``shape`` and the
caches ``_free``, ``_depth``, ``_size``) and intern the same way: ``Term(op, args, attr)`` is the
live term with the same op, the same operand objects and an equal attr key when there is one.

- The C base (``_cterm*.c``) keeps live terms in one hash table of borrowed pointers that a term leaves when it
  is freed, decides the dtype and shape of scalar elementwise ops itself (from the promotion table
  and rules it is given by :func:`configure`), and is not tracked by the cyclic collector.
- The Python base keeps, per op, a dictionary of weak references guarded by a lock.

The C base is used unless ``EXPRGRAPH_PURE_PYTHON`` is set, the extension was not built (the build
falls back to pure Python when it cannot compile), or the extension is older than ``_cterm.c``
(an edited checkout not rebuilt yet: a warning says so). :func:`native` says which is in use.
Other extensions (the sweeps of :mod:`exprgraph.diff`) reach the C term through the capsule
``_cterm._C_API`` described in ``_cterm_api.h``; this module calls none of them.

Imports dtypes and errors only.
"""

from __future__ import annotations

import os
import threading
import warnings
import weakref
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import TermTableError
from .dtypes import DTYPES, promote

if TYPE_CHECKING:
    from .op import Op

__all__ = [
    "TermBase",
    "REGISTRY",
    "PURE_ENV",
    "native",
    "configure",
    "find_term",
    "intern_table_size",
    "intern_table_capacity",
    "native_operators",
    "native_leaf_rules",
]

#: op name -> Op; filled by :mod:`exprgraph.core.op`
REGISTRY: dict[str, Op] = {}

#: set this environment variable to use the pure Python base even when the C one is built
PURE_ENV = "EXPRGRAPH_PURE_PYTHON"

_HERE = Path(__file__).parent
_T = TypeVar("_T", bound="PureTermBase")


def _load_native() -> ModuleType | None:
    if os.environ.get(PURE_ENV):
        return None
    try:
        from . import _cterm  # type: ignore[attr-defined]
    except ImportError:
        return None
    built = Path(_cterm.__file__ or "")
    sources = [*_HERE.glob("_cterm*.c"), *_HERE.glob("_cterm*.h")]
    if built.exists() and any(p.stat().st_mtime > built.stat().st_mtime + 2.0 for p in sources):
        warnings.warn(
            "exprgraph.core: the compiled _cterm is older than its C sources; using the pure Python terms "
            "(rebuild: `make test`, or `pip install -e .`)",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    module: ModuleType = _cterm
    return module


_native = _load_native()


def native() -> bool:
    """Whether terms are interned by the C extension (else by the pure Python base)."""
    return _native is not None


class _Ref(weakref.ref):
    """A weak reference that remembers its intern key (set after creation: no Python __init__)."""

    __slots__ = ("key", "table")

    key: Any
    table: dict[Any, _Ref]


_lock = threading.RLock()
_new = object.__new__
#: the Term and Op classes (set by :func:`configure`): only Terms are interned, only Ops are read
_classes: list[Any] = [None, None]
#: per thread: whether an attr's comparison is running inside a lookup (it must not build terms)
_comparing = threading.local()
#: attrs of these classes compare without running Python code (so without building terms)
_PLAIN = frozenset({int, float, bool, str, bytes, complex})


def _forget(ref: _Ref, _lock: threading.RLock = _lock) -> None:
    # called by the garbage collector when an interned term dies (the lock is bound as a default
    # so that the module's globals being cleared at interpreter exit cannot break it)
    with _lock:
        table = ref.table
        if table.get(ref.key) is ref:
            del table[ref.key]


class PureTermBase:
    """The fields of an interned term and its interning, in Python (see the module docstring)."""

    __slots__ = ("op", "args", "attr", "dtype", "shape", "_free", "_depth", "_size", "__weakref__")

    def __new__(cls: type[_T], op: Any, args: tuple = (), attr: Any = None) -> _T:
        """Return the interned term for ``(op, args, attr)``, building it if none is alive."""
        if op.__class__ is str:
            return cls(REGISTRY[op], args, attr)
        if args.__class__ is not tuple:
            return cls(op, tuple(args), attr)
        if cls is not _classes[0] or op.__class__ is not _classes[1]:
            _check_classes(cls, op)
        # per-op intern table; the key is the args tuple itself unless the op carries an attr
        table = op.table
        key: Any
        if attr is None:
            key = args
            ref = table.get(key)
        else:
            keyf = op.attr_key
            key = (args, attr if keyf is None else keyf(attr))
            ref = table.get(key) if attr.__class__ in _PLAIN else _lookup(table, key)
        if ref is not None:
            term: _T | None = ref()
            if term is not None:
                return term
        dtype, shape = op.check(args, attr)  # validates arity and operand types
        if getattr(_comparing, "active", False):
            raise TermTableError(
                "a term was built while a term's attr was compared; an attr must compare without building terms"
            )
        term = _new(cls)
        _put_op(term, op)
        _put_args(term, args)
        _put_attr(term, attr)
        _put_dtype(term, dtype)
        _put_shape(term, shape)
        made = _Ref(term, _forget)
        made.key = key
        made.table = table
        # insert-if-absent is atomic without the lock; replacing an entry and _forget's delete take it
        if ref is None and table.setdefault(key, made) is made:
            return term
        with _lock:  # a dead entry to replace, or another thread interned an equal term first
            ref = table.get(key)
            if ref is not None:
                other: _T | None = ref()
                if other is not None:
                    return other
            table[key] = made
        return term


def _check_classes(cls: type, op: Any) -> None:
    if _classes[0] is None:  # not configured yet: the core is still being declared
        return
    if cls is not _classes[0]:
        raise TypeError(
            f"only {_classes[0].__name__} terms are built and interned, not {cls.__name__} "
            "(subclasses are not supported)"
        )
    if not isinstance(op, _classes[1]):
        raise TypeError(f"a term's op must be an Op or the name of a registered op, not {type(op).__name__}")


def _lookup(table: dict[Any, _Ref], key: Any) -> _Ref | None:
    # an attr's __eq__ runs inside the dict lookup; one that built a term of the same op would make
    # the dict start the lookup again forever, so building a term meanwhile is refused (see __new__)
    _comparing.active = True
    try:
        return table.get(key)
    finally:
        _comparing.active = False


# slot setters of the pure base (quicker than object.__setattr__ by name)
_put_op = vars(PureTermBase)["op"].__set__
_put_args = vars(PureTermBase)["args"].__set__
_put_attr = vars(PureTermBase)["attr"].__set__
_put_dtype = vars(PureTermBase)["dtype"].__set__
_put_shape = vars(PureTermBase)["shape"].__set__

if TYPE_CHECKING:
    TermBase = PureTermBase
else:
    TermBase = _native.TermBase if _native is not None else PureTermBase


def configure(term_class: type, op_class: type, rules: tuple[Any, Any, Any, Any, Any]) -> None:
    """Give the C base the facts it applies itself (a no-op for the pure base).

    ``rules`` are the shape/dtype rules ``arith``, ``real``, ``same``, ``boolean`` and ``where_rule`` of
    :mod:`exprgraph.core.inference`; the C base applies them to scalar operands from the
    promotion table of :func:`~exprgraph.core.dtypes.promote`, and calls them otherwise.
    """
    _classes[:] = [term_class, op_class]
    if _native is None:
        return
    index = {d: i for i, d in enumerate(DTYPES)}
    table = tuple(index[promote(a, b)] for a in DTYPES for b in DTYPES)
    numeric = tuple(index["int64" if d == "bool" else d] for d in DTYPES)
    _native.configure(term_class, REGISTRY, op_class, DTYPES, table, numeric, rules, "leaf")


def native_operators(cls: type, methods: tuple[tuple[str, str], ...], make: Callable[[str], tuple[Any, Any]]) -> bool:
    """Let the C base's number slots serve ``cls``'s binary operators (``methods``: (method, op name) pairs).

    The Python methods ``make(op_name)`` returns stay the definition: the C slots build two terms,
    or a term and a Python number, at once and call them for anything else. The methods that
    :func:`~exprgraph.core.operators.install_operators` set on ``cls`` are removed, so the class
    inherits the slots. False (and nothing changed) for the pure base.
    """
    if _native is None:
        return False
    made = [make(op) for _, op in methods]
    _native.operators(
        tuple(m for m, _ in methods),
        tuple(op for _, op in methods),
        tuple(f for f, _ in made),
        tuple(r for _, r in made),
    )
    for method, _ in methods:
        for name in (f"__{method}__", f"__r{method}__"):
            if name in vars(cls):
                delattr(cls, name)
    return True


def native_leaf_rules(
    symbol_infer: Callable[..., Any], const_infer: Callable[..., Any], reserved: frozenset[str], max_token: int
) -> Callable[[str], Any] | None:
    """Name the dtype rules of symbols and constants, whose plain cases the C base answers itself.

    Returns the C maker of plain symbols (``plain_symbol(name)``: ``Symbol(name)`` for a name that is
    an ASCII identifier of at most ``max_token`` characters not in ``reserved``, else None), or None
    for the pure base (nothing to configure).
    """
    if _native is None:
        return None
    _native.leaves(symbol_infer, const_infer, reserved, max_token)
    maker: Callable[[str], Any] = _native.plain_symbol
    return maker


def native_postorder() -> Callable[[list | tuple, Any], list | None] | None:
    """The C twin of ``walk.postorder_until`` (None for the pure base); it answers None for other roots."""
    if _native is None:
        return None
    walk: Callable[[list | tuple, Any], list | None] = _native.postorder
    return walk


def find_term(op: Op, args: tuple, attr: Any = None) -> Any:
    """The live term ``(op, args, attr)`` if there is one, else None (nothing is built)."""
    if _native is not None:
        return _native.find(op, args, attr)
    if attr is None:
        key: Any = args
    else:
        keyf = op.attr_key
        key = (args, attr if keyf is None else keyf(attr))
    ref = op.table.get(key)
    return None if ref is None else ref()


def intern_table_size() -> int:
    """Number of live interned terms."""
    if _native is not None:
        count: int = _native.table_size()
        return count
    return sum(len(op.table) for op in {id(op): op for op in REGISTRY.values()}.values())


def intern_table_capacity() -> int | None:
    """Slots of the C intern table (it halves once under an eighth full); None for the pure base."""
    if _native is not None:
        slots: int = _native.table_capacity()
        return slots
    return None
