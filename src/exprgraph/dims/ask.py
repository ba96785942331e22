"""One-shot questions about dimension expressions, asked of a shared :class:`~.queries.DimEnv`.

Each function takes the names' ranges as a DimEnv, a mapping ``name -> range`` or relations
(``["s0 >= 2"]``), or nothing (every name ``>= 0``), and keeps a few recent environments so that
repeated questions under the same ranges reuse their memoised answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from ..core.term import Term
from .context import CLEAR_HOOKS
from .queries import DimEnv
from .ranges import Range

__all__ = [
    "bound",
    "statically_known",
    "equal",
    "divisible",
    "compare_expressions",
    "exact_div",
    "ranges_from_expressions",
]

_DEFAULT = DimEnv()
_envs: Final[dict[tuple, DimEnv]] = {}


def _clear() -> None:
    _DEFAULT._memo.clear()
    _envs.clear()


CLEAR_HOOKS.append(_clear)


def _env(ranges: DimEnv | Mapping[str, Any] | Iterable[str] | None) -> DimEnv:
    if ranges is None:
        return _DEFAULT
    if isinstance(ranges, DimEnv):
        return ranges
    if isinstance(ranges, Mapping):
        key: tuple = ("map", *sorted((k, str(v)) for k, v in ranges.items()))
        env = _envs.get(key)
        if env is None:
            env = DimEnv(ranges)
    else:
        items = tuple(ranges)
        key = ("constraints", *[str(c) for c in items])
        env = _envs.get(key)
        if env is None:
            env = DimEnv(constraints=items)
    if len(_envs) > 256:
        _envs.clear()
    _envs[key] = env
    return env


Ranges = DimEnv | Mapping[str, Any] | Iterable[str] | None


def bound(expr: int | str | Term, ranges: Ranges = None) -> tuple[int | float, int | float]:
    """``(lo, hi)`` holding every value of ``expr`` (names ``>= 0`` unless ``ranges`` says otherwise).

    >>> bound("x%8 + 1"), bound("s0//2", {"s0": (2, 100)})
    ((1, 8), (1, 50))
    """
    return _env(ranges).bound(expr)


def statically_known(rel: str | Term, ranges: Ranges = None) -> bool | None:
    """True when ``rel`` holds for every value, False when for none, None otherwise.

    >>> statically_known("x%8 < 8"), statically_known("2*x == 2*y + 1"), statically_known("x >= y")
    (True, False, None)
    """
    return _env(ranges).statically_known(rel)


def equal(e1: int | str | Term, e2: int | str | Term, ranges: Ranges = None) -> bool | None:
    """True when ``e1 == e2`` for every value, False when for none, None otherwise.

    >>> equal("(a+b)*c", "a*c + b*c"), equal("x + 1", "x"), equal("x", "y")
    (True, False, None)
    """
    return _env(ranges).equal(e1, e2)


def divisible(expr: int | str | Term, k: int | str | Term, ranges: Ranges = None) -> bool | None:
    """True when ``k`` divides ``expr`` for every value, False when for none, None otherwise.

    >>> divisible("4*x + 8*y", 4), divisible("4*x + 2", 4), divisible("x", 4)
    (True, False, None)
    """
    return _env(ranges).divisible(expr, k)


def compare_expressions(e1: int | str | Term, e2: int | str | Term, ranges: Ranges = None) -> str | None:
    """The strongest of ``== < <= > >= !=`` that always holds between ``e1`` and ``e2``, or None.

    >>> compare_expressions("x + 1", "x"), compare_expressions("x//2", "x"), compare_expressions("x", "y")
    ('>', '<=', None)
    """
    return _env(ranges).compare(e1, e2)


def exact_div(expr: int | str | Term, d: int | str | Term, ranges: Ranges = None) -> int | str | Term | None:
    """``expr / d`` when ``d`` divides ``expr`` for every value, else None.

    >>> exact_div("6*x*y + 3*y", "3*y"), exact_div("x*x - 1", "x - 1"), exact_div("x + 1", 2)
    ('2*x+1', 'x+1', None)
    """
    return _env(ranges).exact_div(expr, d)


def ranges_from_expressions(
    constraints: Iterable[str | Term], ranges: Mapping[str, Any] | None = None
) -> dict[str, Range]:
    """The ranges of names that relations imply (``["s0 >= 2", "s1 == 2*s0"]`` -> s0 in [2, inf), s1 in [4, inf)).

    >>> ranges_from_expressions(["s0 >= 2", "s0 <= 2**10", "s1 == 2*s0 + 1"])
    {'s0': (2, 1024), 's1': (5, 2049)}
    """
    return DimEnv(ranges, constraints).ranges
