"""The Python operators that build terms: which special method stands for which op of the table.

Terms (:mod:`.term`) and match patterns (:mod:`exprgraph.match.patterns`) overload the same
operators in the same way: :func:`install_operators` gives a class all of them from one factory,
and a class deriving from :class:`OperatorMethods` declares them for type checkers. Imports nothing
of exprgraph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

__all__ = ["REFLECTED", "COMPARISONS", "install_operators", "OperatorMethods"]

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
