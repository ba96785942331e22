"""The Python operators and numpy ufuncs that build terms: which method or ufunc stands for which op.

Terms (:mod:`.term`) and match patterns (:mod:`exprgraph.match.patterns`) overload the same
operators in the same way: :func:`install_operators` gives a class all of them from one factory,
and a class deriving from :class:`OperatorMethods` declares them for type checkers.
:func:`install_array_protocol` gives terms numpy's ufunc protocol (:class:`ArrayMethods` declares
it): ``np.sin(x)`` builds ``sin(x)``, a ufunc no op stands for raises
:class:`~exprgraph.errors.UnsupportedUfuncError` naming it. Imports nothing of exprgraph but the
errors (and numpy once a ufunc is applied).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..errors import UnsupportedUfuncError

__all__ = [
    "REFLECTED",
    "COMPARISONS",
    "install_operators",
    "OperatorMethods",
    "install_array_protocol",
    "ArrayMethods",
    "ufunc_builders",
    "UFUNC_SPELLINGS",
]

_R = TypeVar("_R")

#: (method, op): ``a + b`` builds ``add``, and the reflected ``__radd__`` serves ``1 + a``; ``&`` and
#: ``|`` build the logical ops (``==`` stays identity: ``eq``/``ne`` build equality terms)
REFLECTED: tuple[tuple[str, str], ...] = (
    ("add", "add"),
    ("sub", "sub"),
    ("mul", "mul"),
    ("truediv", "truediv"),
    ("floordiv", "floordiv"),
    ("mod", "mod"),
    ("pow", "pow"),
    ("matmul", "matmul"),
    ("and", "logical_and"),
    ("or", "logical_or"),
)

#: ``a < b`` and friends build the op of the method's name; they have no reflected method (Python
#: tries the mirrored comparison instead)
COMPARISONS: tuple[str, ...] = ("lt", "le", "gt", "ge")


def install_operators(cls: type, make: Callable[[str], tuple[Any, Any]]) -> None:
    """Set the operator methods of ``cls``; ``make(op_name)`` returns the forward and reflected methods."""
    for method, op in REFLECTED:
        forward, reflected = make(op)
        setattr(cls, f"__{method}__", forward)
        setattr(cls, f"__r{method}__", reflected)
    for method in COMPARISONS:
        setattr(cls, f"__{method}__", make(method)[0])


class OperatorMethods(Generic[_R]):
    """Base of a class whose operator methods :func:`install_operators` sets: declares them, returning ``_R``.

    The declarations are for type checkers only; at run time the class adds no attribute.
    """

    __slots__ = ()

    if TYPE_CHECKING:

        def __add__(self, other: Any) -> _R: ...
        def __radd__(self, other: Any) -> _R: ...
        def __sub__(self, other: Any) -> _R: ...
        def __rsub__(self, other: Any) -> _R: ...
        def __mul__(self, other: Any) -> _R: ...
        def __rmul__(self, other: Any) -> _R: ...
        def __truediv__(self, other: Any) -> _R: ...
        def __rtruediv__(self, other: Any) -> _R: ...
        def __floordiv__(self, other: Any) -> _R: ...
        def __rfloordiv__(self, other: Any) -> _R: ...
        def __mod__(self, other: Any) -> _R: ...
        def __rmod__(self, other: Any) -> _R: ...
        def __pow__(self, other: Any) -> _R: ...
        def __rpow__(self, other: Any) -> _R: ...
        def __matmul__(self, other: Any) -> _R: ...
        def __rmatmul__(self, other: Any) -> _R: ...
        def __and__(self, other: Any) -> _R: ...
        def __rand__(self, other: Any) -> _R: ...
        def __or__(self, other: Any) -> _R: ...
        def __ror__(self, other: Any) -> _R: ...
        def __lt__(self, other: Any) -> _R: ...
        def __le__(self, other: Any) -> _R: ...
        def __gt__(self, other: Any) -> _R: ...
        def __ge__(self, other: Any) -> _R: ...


# -- numpy's ufunc protocol --------------------------------------------------------------------------


def _unary_spellings(op: Callable[[str], Any], wrap: Callable[..., Any]) -> dict[str, Callable[..., Any]]:
    """Ufuncs (by numpy name) spelled exactly with other ops, for one operand ``x``.

    A number in a spelling is made as the Python operators make it (``wrap(v, x.dtype)``: a float32
    constant next to a float32 ``x``), so ``np.reciprocal(x)`` is ``1.0 / x`` for every dtype.
    """

    def float_abs(x: Any) -> Any:
        # fabs(x) -> |x| in floats: an integer or bool operand is converted first (x*1.0), as numpy does
        return op("abs")(x if x.dtype in ("float64", "float32") else op("mul")(x, wrap(1.0)))

    def sign(x: Any) -> Any:
        # sign(x) -> the sign op (numpy's: +0 for both zeros, nan for nan); numpy refuses bools
        if x.dtype == "bool":
            raise TypeError("numpy.sign takes no bool operand")
        return op("sign")(x)

    def rounding(name: str) -> Callable[[Any], Any]:
        # floor(b) -> b for a bool, as numpy 2 keeps it (the op counts bools as integers)
        return lambda x: x if x.dtype == "bool" else op(name)(x)

    def times(factor: Callable[[Any], Any]) -> Callable[[Any], Any]:
        # deg2rad(x) -> x*(pi/180), rad2deg(x) -> x*(180/pi): numpy's own formulas, its constant rounding
        return lambda x: op("mul")(x, wrap(factor(_np_float(x.dtype)), x.dtype))

    to_radians = times(lambda f: f(math.pi) / f(180.0))
    to_degrees = times(lambda f: f(180.0) / f(math.pi))
    return {
        "positive": lambda x: x,  # +x -> x
        "conjugate": lambda x: x,  # conj(x) -> x: terms are real
        "square": lambda x: op("pow")(x, wrap(2, x.dtype)),  # square(x) -> x**2
        "reciprocal": lambda x: op("truediv")(wrap(1.0, x.dtype), x),  # reciprocal(x) -> 1.0/x
        "isnan": lambda x: op("ne")(x, x),  # isnan(x) -> x != x
        "isinf": lambda x: op("eq")(op("abs")(x), wrap(_INF, x.dtype)),  # isinf(x) -> |x| == inf
        "isfinite": lambda x: op("lt")(op("abs")(x), wrap(_INF, x.dtype)),  # isfinite(x) -> |x| < inf (nan: false)
        "fabs": float_abs,
        "sign": sign,
        "floor": rounding("floor"),
        "ceil": rounding("ceil"),
        "trunc": rounding("trunc"),
        "deg2rad": to_radians,
        "radians": to_radians,
        "rad2deg": to_degrees,
        "degrees": to_degrees,
    }


_INF = math.inf


def _np_float(dtype: str) -> Any:
    """The numpy scalar type a ufunc computes in for an operand of ``dtype`` (float32 stays float32)."""
    import numpy as np

    return np.float32 if dtype == "float32" else np.float64


def _on_bools(op: Callable[[str], Any], name: str) -> Callable[..., Any]:
    """A bitwise ufunc on bool operands as the logical op ``name`` (other dtypes: TypeError)."""

    def build(*args: Any) -> Any:
        if any(a.dtype != "bool" for a in args):
            raise TypeError(f"numpy's bitwise ufuncs build {name} terms, for bool operands only")
        return op(name)(*args)

    return build


def ufunc_builders(registry: Mapping[str, Any], wrap: Callable[[Any], Any]) -> dict[Any, Any]:
    """numpy ufunc -> term builder: each op's own ``ufunc`` entry, then :data:`UFUNC_SPELLINGS`."""
    import numpy as np

    table: dict[Any, Any] = {}
    for entry in registry.values():
        if entry.ufunc is not None:
            table.setdefault(entry.ufunc, entry)
    op = registry.__getitem__
    spelled: dict[str, Callable[..., Any]] = {
        **_unary_spellings(op, wrap),
        "fmod": op("fmod"),  # the op's impl is numpy's fmod (integer division by zero gives 0)
        "bitwise_and": _on_bools(op, "logical_and"),  # a & b on bools -> a and b
        "bitwise_or": _on_bools(op, "logical_or"),  # a | b on bools -> a or b
        "bitwise_xor": _on_bools(op, "ne"),  # a ^ b on bools -> a != b
        "invert": _on_bools(op, "logical_not"),  # ~a on bools -> not a
        "logical_xor": _on_bools(op, "ne"),  # xor(a, b) on bools -> a != b
    }
    for name in UFUNC_SPELLINGS:
        table.setdefault(getattr(np, name), spelled[name])
    return table


#: (id(registry), id(wrap)) -> (the registry's entries when built, the table): rebuilt when an op is registered
_BUILDERS: dict[tuple[int, int], tuple[tuple[int, ...], dict[Any, Any]]] = {}


def _cached_builders(registry: Mapping[str, Any], wrap: Callable[[Any], Any]) -> dict[Any, Any]:
    """:func:`ufunc_builders`, built again only when the registry's entries changed (a numpy scalar times a
    term would otherwise rebuild the whole table, ~90 us)."""
    entries = tuple(map(id, registry.values()))
    key = (id(registry), id(wrap))
    hit = _BUILDERS.get(key)
    if hit is None or hit[0] != entries:
        hit = _BUILDERS[key] = (entries, ufunc_builders(registry, wrap))
    return hit[1]


#: the numpy ufuncs terms take although no op names them: each is spelled exactly with other ops
UFUNC_SPELLINGS: tuple[str, ...] = (
    "positive",
    "conjugate",
    "square",
    "reciprocal",
    "isnan",
    "isinf",
    "isfinite",
    "fabs",
    "sign",
    "floor",
    "ceil",
    "trunc",
    "deg2rad",
    "radians",
    "rad2deg",
    "degrees",
    "fmod",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "invert",
    "logical_xor",
)


def _object_loop(ufunc: Any, method: str, cls: type, inputs: tuple, kwargs: dict) -> Any:
    """An array of terms among the inputs: numpy's object loop applies the operators element by element."""
    import numpy as np

    boxed = []
    for v in inputs:
        if v.__class__ is cls:
            box = np.empty((), dtype=object)
            box[()] = v
            v = box
        boxed.append(v)
    return getattr(ufunc, method)(*boxed, **kwargs)


def _apply_ufunc(
    cls: type,
    registry: Mapping[str, Any],
    wrap: Callable[..., Any],
    ufunc: Any,
    method: str,
    inputs: tuple,
    kwargs: dict,
) -> Any:
    """``ufunc.method(*inputs, **kwargs)`` with a term among the inputs: the term it stands for."""
    import numpy as np

    name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
    if kwargs.get("out") is not None:
        raise TypeError(f"numpy.{name}(..., out=...) cannot write into a term: terms are immutable")
    if any(v.__class__ is np.ndarray and v.dtype == object for v in inputs):
        return _object_loop(ufunc, method, cls, inputs, kwargs)
    extra = sorted(k for k in kwargs if k != "out" and not (k == "axis" and method == "reduce"))
    if extra:
        raise TypeError(f"numpy.{name} on terms takes no keyword arguments {extra}")
    dtypes = [getattr(v, "dtype", None) for v in inputs if v.__class__ is cls]
    context = "float32" if "float32" in dtypes and "float64" not in dtypes and "int64" not in dtypes else ""
    args = []
    for value in inputs:
        if value.__class__ is not cls:
            if hasattr(value, "__array_ufunc__") and not isinstance(value, (np.ndarray, np.generic)):
                return NotImplemented  # a foreign array type: let it decide
            term = wrap(value, context)
            if term is NotImplemented:
                raise TypeError(f"numpy.{name}: cannot use a {type(value).__name__} as a term")
            value = term
        args.append(value)
    if method == "reduce" and ufunc is np.add:
        # np.add.reduce(x, axis) -> sum(x, axis=axis); numpy's default axis is 0
        return registry["sum"](*args, axis=kwargs.get("axis", 0))
    build = _cached_builders(registry, wrap).get(ufunc) if method == "__call__" else None
    if build is None:
        raise UnsupportedUfuncError(
            f"numpy.{name} has no exprgraph op (Term.ufunc_builders() lists the ufuncs that have one)", ufunc=name
        )
    return build(*args)


def install_array_protocol(cls: type, registry: Mapping[str, Any], wrap: Callable[..., Any]) -> None:
    """Give ``cls`` (Term) numpy's protocol: ufuncs build terms, ``np.clip`` too, arrays become constants.

    ``registry`` is the op table by name; ``wrap(value, context)`` makes a constant term of a number
    or array (NotImplemented for anything else).
    """

    def __array_ufunc__(self: Any, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:  # noqa: N807
        """numpy ufuncs on terms build terms: ``np.sin(x)`` is ``sin(x)``, arrays become constants."""
        return _apply_ufunc(cls, registry, wrap, ufunc, method, inputs, kwargs)

    def builders() -> dict[Any, Any]:
        """numpy ufunc -> term builder: each op's own ``ufunc`` entry, plus ufuncs spelled with other ops."""
        return ufunc_builders(registry, wrap)

    def clip(self: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kwargs: Any) -> Any:
        """``np.clip(x, lo, hi)`` and ``x.clip(lo, hi)``: ``minimum(maximum(x, lo), hi)`` (a None bound is open)."""
        if out is not None or kwargs:
            raise TypeError("clip on a term takes the bounds only (no out= or other keywords): terms are immutable")
        result = self
        for bound, name in ((a_min, "maximum"), (a_max, "minimum")):
            if bound is None:
                continue
            term = bound if bound.__class__ is cls else wrap(bound, self.dtype)
            if term is NotImplemented:
                raise TypeError(f"clip: cannot use a {type(bound).__name__} as a bound")
            result = registry[name](result, term)
        return result

    cls.__array_priority__ = 100.0  # type: ignore[attr-defined]  # above ndarray's: ndarray + term is a term
    cls.__array_ufunc__ = __array_ufunc__  # type: ignore[attr-defined]
    cls.ufunc_builders = staticmethod(builders)  # type: ignore[attr-defined]
    cls.clip = clip  # type: ignore[attr-defined]


class ArrayMethods(Generic[_R]):
    """Base of a class whose numpy protocol :func:`install_array_protocol` sets: declares it for type checkers."""

    __slots__ = ()

    if TYPE_CHECKING:
        __array_priority__: float

        def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any: ...
        @staticmethod
        def ufunc_builders() -> dict[Any, Any]: ...
        def clip(self, a_min: Any = None, a_max: Any = None, out: Any = None, **kwargs: Any) -> _R: ...
