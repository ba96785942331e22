"""The plain twin of :class:`~.arith.DimArith`: each operation builds its term and simplifies it.

This is how ONNX inference computed before DimArith kept polynomials: the same answers (the same
canonical terms, the same int64 and size checks), one term -> polynomial -> term round trip per
operation. The tests compare the two on random chains of operations and the benchmark
(``bench/bench_dims_arith.py``) measures the gain; listed in :mod:`exprgraph.twins`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..core.op import get_op
from ..core.term import Term
from ..errors import DimOverflowError
from .arith import MAX_TERM_SIZE, Dim, DimArith, Shape, int64
from .canonicalize import simplify_dim
from .terms import CEIL_DIV, dim_const

__all__ = ["TermRoad", "OPERATIONS"]

#: operation name -> (what two ints give, the op that builds the term)
OPERATIONS: dict[str, tuple[Callable[[int, int], int], Any]] = {
    "add": (int.__add__, get_op("add")),
    "sub": (int.__sub__, get_op("sub")),
    "mul": (int.__mul__, get_op("mul")),
    "floordiv": (int.__floordiv__, get_op("floordiv")),
    "mod": (int.__mod__, get_op("mod")),
    "ceildiv": (lambda x, y: -(-x // y), CEIL_DIV),
    "max": (max, get_op("maximum")),
    "min": (min, get_op("minimum")),
}


class TermRoad:
    """DimArith's operations the plain way: build ``a op b`` as a term, then simplify it."""

    def __init__(self, positive: bool = False, env: Any = None) -> None:
        self.positive, self.env = positive, env

    def simplify(self, d: Any) -> Dim:
        """``d`` in canonical form under the env (or names >= 0/1), int64-checked, None past MAX_TERM_SIZE."""
        if d is None or d.__class__ is int:
            return None if d is None else int64(d)
        try:
            out = simplify_dim(d, positive=self.positive) if self.env is None else self.env.simplify(d)
        except OverflowError as exc:  # a constant folded past int64
            raise DimOverflowError(str(exc)) from exc
        if isinstance(out, int):
            return int64(out)
        return None if out.size > MAX_TERM_SIZE else out

    def op(self, name: str, a: Dim, b: Dim) -> Dim:
        """``a <name> b`` (``name`` a key of OPERATIONS); ``"neg"`` gives ``0 - a``."""
        if name == "neg":
            a, b, name = 0, a, "sub"
        if a is None or b is None:
            return None
        ints, build = OPERATIONS[name]
        if a.__class__ is int and b.__class__ is int:
            return int64(ints(a, b))
        return self.simplify(build(*(x if isinstance(x, Term) else dim_const(x) for x in (a, b))))

    def __getattr__(self, name: str) -> Callable[..., Dim]:
        if name not in OPERATIONS and name != "neg":
            raise AttributeError(name)
        if name == "neg":
            return lambda a: self.op("neg", a, None)
        return lambda a, b: self.op(name, a, b)

    def prod(self, dims: Iterable[Dim]) -> Dim:
        """The product of ``dims``, left to right."""
        out: Dim = 1
        for d in dims:
            out = self.op("mul", out, d)
        return out

    def total(self, dims: Iterable[Dim]) -> Dim:
        """The sum of ``dims``, left to right."""
        out: Dim = 0
        for d in dims:
            out = self.op("add", out, d)
        return out

    def broadcast(self, shapes: Iterable[Shape]) -> Shape:
        """Broadcasting is one rule (core.shapes), shared with DimArith."""
        return DimArith(self.positive, self.env).broadcast(shapes)
