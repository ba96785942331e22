"""The standard table, ``arange``: evenly spaced int64 numbers whose length may be a dimension term.

``arange(start, stop, step)`` of Python numbers is a constant array (numpy's ``arange``, floats
included). With an int64 scalar term for ``stop`` it is the op ``arange(stop, spec=(start, step))``
(start and step constant ints) whose one axis has the length ``maximum(ceil_div(stop - start,
step), 0)``, a dimension term. Importing this module registers the op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import EvaluationError, ShapeError
from .declare import _call
from .dtypes import INT64
from .grad_tools import _O, no_grad
from .leaves import const
from .op import as_term
from .term import Term

__all__ = ["arange"]


def _int_const(t: Term) -> int | None:
    return int(t.attr) if t.op.name == "const" and t.dtype == INT64 and not t.shape else None


def range_length(start: int, stop: Term, step: int) -> Any:
    """The length of ``arange(start, stop, step)``: an int for a constant ``stop``, else an int64 term."""
    hi = _int_const(stop)
    if hi is not None:
        return max(-((start - hi) // step), 0)  # ceil((stop - start) / step), never negative
    span = stop if start == 0 else _O.sub(stop, const(start))
    count = span if step == 1 else _O.ceil_div(span, const(step))
    return _O.maximum(count, const(0))


def _spec(attr: Any) -> tuple[int, int]:
    if not (isinstance(attr, tuple) and len(attr) == 2 and all(isinstance(v, int) for v in attr)):
        raise TypeError(f"arange takes spec=(start, step), two ints, not {attr!r}")
    if not attr[1]:
        raise ShapeError("arange: the step must be nonzero")
    return attr


def _arange_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``arange(stop, spec=(start, step))``: an int64 scalar bound; one axis of the range's length."""
    (stop,) = args
    start, step = _spec(attr)
    if stop.dtype != INT64 or stop.shape:
        raise ShapeError(f"arange takes an int64 scalar stop (a float range of numbers is a constant), not {stop}")
    return INT64, (range_length(start, stop, step),)


def _arange(stop: Any, attr: Any) -> Any:
    a = np.asarray(stop)
    if a.ndim and not (a == a.reshape(-1)[0]).all():
        # many parameter sets with different bounds would give arrays of different lengths
        raise EvaluationError("arange: the stop differs between parameter sets, so the lengths would differ")
    return np.arange(attr[0], int(a.reshape(-1)[0]), attr[1], dtype=np.int64)


def _key(attr: Any) -> Any:
    return tuple(attr) if isinstance(attr, list) else attr


_call(
    "arange",
    1,
    _arange_rule,
    impl=_arange,
    attr_name="spec",
    attr_key=_key,
    grad=no_grad,
    doc="start, start+step, ... below an int64 scalar stop (numpy arange): arange(stop, spec=(start, step)).",
)


def arange(start: Any, stop: Any = None, step: Any = 1, *, spec: Any = None) -> Term:
    """numpy's ``arange``: a constant array for numbers, the ``arange`` op for an int64 scalar term ``stop``.

    ``arange(stop, spec=(start, step))`` is the op's own form, as its ``repr`` prints it.
    """
    if spec is not None:
        return _O.arange(as_term(start, INT64), spec=spec)
    if stop is None:
        start, stop = 0, start
    if not isinstance(stop, Term) or stop.op.name == "const":
        if isinstance(start, Term) or isinstance(step, Term):
            raise ShapeError("arange: start and step are numbers (only the stop may be a term)")
        return const(np.arange(start, stop.attr if isinstance(stop, Term) else stop, step))
    ints = [v for v in (start, step) if isinstance(v, (int, np.integer)) and not isinstance(v, bool)]
    if len(ints) != 2:
        raise ShapeError(f"arange: with a term for stop, start and step are constant ints, not {start!r}, {step!r}")
    return _O.arange(as_term(stop, INT64), spec=(int(start), int(step)))
