"""torch as a client of ``exprgraph.dims``: read the sympy expressions torch's ShapeEnv builds, answer its questions.

torch's dynamic shapes are sympy expressions over integer symbols (``s0``, ``u0``, inductor's ``x0``), built
with torch's own functions (``torch.utils._sympy.functions``) and given value ranges (``ValueRanges(lower,
upper)``, ``int_oo`` for infinity). :class:`TorchDims` reads them into dimension terms and answers through a
:class:`~exprgraph.dims.DimEnv`: static truth (``statically_known_true``, ``evaluate``), the static value of
an expression (``static_value``), bounds and the canonical form. An answer is never wrong: None (or an open
bound) when it is not known for every value the ranges allow.

The reader (:mod:`.torch_read`) dispatches on the class *name* of each node: torch's classes are never
imported, and sympy and torch are optional and imported by no module here. It reads torch's functions
(``FloorDiv``, ``ModularIndexing``, ``CleanDiv``, ``PythonMod``, ``Mod``, ``Max``, ``Min``, ``CeilToInt``,
``FloorToInt``, ``TruncToInt``, ``IntTrueDiv``, ``Identity``...), sympy's arithmetic, relations and logic; an
expression it cannot read raises :class:`~exprgraph.errors.ConversionError` (a ``ValueError``) from
:meth:`TorchDims.term`, and is answered None (unknown) by the queries.

>>> from exprgraph.interop.torch import TorchDims
>>> td = TorchDims({"s0": (2, None), "s1": (1, 64)})
>>> td.bound(td.term_of_text("s1 - 1"))
(0, 63)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ..core.term import Term
from ..core.walk import postorder_until
from ..dims import DimEnv, dim_const, dim_name, parse_expression
from ..dims.intervals import ALWAYS, ASK, SOMETIMES, Interval, quick_bound, quick_relation, relation_of_intervals
from ..dims.ranges import INF, Range
from ..dims.relations import quick_factored
from ..dims.terms import CONST, RESERVED_NAMES, SYMBOL, is_leaf
from ..dims.witness import reached_ends, sometimes
from ..errors import ConversionError
from .torch_fast import ANSWER, BOUND, GIVEN, STATIC, TRUTH
from .torch_read import BOOL_NAMES, FALSE, INF_NAMES, INT64_RANGE, REL_OPS, TRUE, Reader, is_bool, read_torch_expr

__all__ = ["TorchDims", "from_shape_env", "read_torch_expr"]


def _bound_value(b: Any, lower: bool) -> int | None:
    """A range end as an int (None for an open end, or one we cannot read as an integer: a sound widening)."""
    if b is None or b is True or b is False:
        return None
    if isinstance(b, int):
        value = b
    else:
        name = type(b).__name__
        if name in INF_NAMES or name in BOOL_NAMES:
            return None
        try:
            f = float(b)
        except (TypeError, ValueError):
            return None  # a symbolic bound: open
        if math.isinf(f) or math.isnan(f):
            return None
        if getattr(b, "is_Integer", False):
            value = int(b)
        else:
            value = math.ceil(f) if lower else math.floor(f)  # an integer name is inside the real range
    if not INT64_RANGE[0] <= value <= INT64_RANGE[1]:
        return None
    return value


def _range_of(r: Any) -> tuple[int | None, int | None] | None:
    """``(lo, hi)`` of a ValueRanges or a pair, or None for a range that is not of integers (bool)."""
    if type(r) is tuple and len(r) == 2:  # the common case, quickly: ints in int64, or None for an open end
        lo, hi = r
        if (lo is None or (type(lo) is int and INT64_RANGE[0] <= lo <= INT64_RANGE[1])) and (
            hi is None or (type(hi) is int and INT64_RANGE[0] <= hi <= INT64_RANGE[1])
        ):
            return lo, hi
    if isinstance(r, tuple) or isinstance(r, list):
        if len(r) != 2:
            raise ConversionError(f"a range is (lo, hi) or a ValueRanges, not {r!r}")
        lo, hi = r
    elif not isinstance(r, str) and hasattr(r, "lower") and hasattr(r, "upper"):
        if getattr(r, "is_bool", False):
            return None
        lo, hi = r.lower, r.upper
    else:
        raise ConversionError(f"a range is (lo, hi) or a ValueRanges, not {type(r).__name__}")
    return _bound_value(lo, True), _bound_value(hi, False)


def _check_name(name: Any) -> None:
    """Raise ConversionError unless ``name`` is a dimension name (what :func:`~exprgraph.dims.dim_name` accepts)."""
    try:
        dim_name(name)
    except (ValueError, TypeError) as err:
        raise ConversionError(f"torch ranges: {err}") from None


def _leaf_range(env: DimEnv, t: Term) -> Range:
    """The range of a name in ``env``, or the value of a constant as a range."""
    return env.range_of(t.name) if t.op is SYMBOL else (t.attr, t.attr)


class TorchDims:
    """Answers torch's dimension questions (static truth, bounds, canonical forms) under value ranges.

    ``var_to_range`` maps sympy symbols or names to ``ValueRanges`` or ``(lo, hi)`` pairs (None, ``int_oo`` or
    ``oo`` for an open end); a name without a range gets torch's default (``>= 1`` for a positive symbol,
    ``>= 0`` for a nonnegative one, else unbounded). ``replacements`` maps symbols (or names) to the
    expressions torch replaced them with (``ShapeEnv.replacements``); ``reader`` shares the expressions another
    TorchDims read (and its replacements: ``replacements`` is then not given).
    """

    # (compiled by mypyc, exprgraph.accel: a bool never passes through an int-typed expression, which would make
    # True the int 1; the answers that may be either are typed Any)
    _given: dict[str, tuple[int | None, int | None]]
    _env: DimEnv | None
    _defaults_seen: int
    _intervals: dict[Term, Interval]
    _bits: dict[str, int]
    _ends: dict[Term, tuple[int, int] | None]
    _quick: bool
    _reader: Reader
    _fast: Callable[[Any, int, dict, dict], Any] | None

    def __init__(
        self,
        var_to_range: Mapping[Any, Any] | None = None,
        replacements: Mapping[Any, Any] | None = None,
        *,
        reader: Reader | None = None,
    ) -> None:
        self._set_ranges(var_to_range)
        if reader is not None:
            if replacements:
                raise ConversionError("torch ranges: replacements are those of the reader shared")
            self._reader = reader
        else:
            repl = {k if isinstance(k, str) else k.name: v for k, v in replacements.items()} if replacements else {}
            self._reader = Reader(repl)
        #: the C fast path (exprgraph.interop.torch_fast): questions the intervals answer, without replacements
        self._fast = None if self._reader.replacements else ANSWER

    def _set_ranges(self, var_to_range: Mapping[Any, Any] | None) -> None:
        """The ranges given (checked: identifiers, non-empty); the DimEnv over them is made when first needed."""
        ranges: dict[str, tuple[int | None, int | None]] = {}
        fast = GIVEN if type(var_to_range) is dict else None
        known = NotImplemented if fast is None else fast(var_to_range)  # plain names, int ranges: read in C
        if known is not NotImplemented:
            ranges = known
        elif var_to_range:
            for key, r in var_to_range.items():
                bounds = None if r is None else _range_of(r)
                if bounds is not None:
                    name: Any = key if type(key) is str else key.name
                    lo, hi = bounds
                    if lo is not None and hi is not None and lo > hi:
                        raise ConversionError(f"torch ranges: the range of {name!r} is empty: [{lo}, {hi}]")
                    if not (
                        type(name) is str and name.isascii() and name.isidentifier() and name not in RESERVED_NAMES
                    ):
                        _check_name(name)  # (a plain identifier, the common case, needs no term to be checked)
                    ranges[name] = bounds
        self._given = ranges
        self._env = None
        self._defaults_seen = 0
        #: the interval of each term read (see exprgraph.dims.intervals), and the bit of each name in their masks
        self._intervals = {}
        self._bits = {}
        #: each node's values at the least and the farthest points of the ranges (see exprgraph.dims.witness)
        self._ends = {}
        #: whether the intervals answer first: not once the DimEnv is handed out (its ranges may be narrowed)
        self._quick = True

    def with_ranges(self, var_to_range: Mapping[Any, Any] | None) -> TorchDims:
        """A :class:`TorchDims` over other ranges (a kernel's loop variables, a size-oblivious question) with the
        same replacements, sharing the expressions read so far (a term does not depend on the ranges)."""
        return TorchDims(var_to_range, reader=self._reader)

    @property
    def env(self) -> DimEnv:
        """The :class:`~exprgraph.dims.DimEnv` the questions are answered under (names met get their defaults)."""
        self._quick = False  # its ranges and facts may change from now on: the intervals would not follow
        return self._dims_env()

    def _dims_env(self) -> DimEnv:
        """The DimEnv (made at the first question the intervals do not answer), the names met given their defaults."""
        env = self._env
        if env is None:
            env = DimEnv(self._given, default=(None, None))
            self._env = env
        met = self._reader.symbols
        if len(met) != self._defaults_seen:
            for name, (lo, hi) in list(met.items())[self._defaults_seen :]:
                if name not in self._given and lo is not None:
                    env.set_range(name, (lo, hi))
            self._defaults_seen = len(met)
        return env

    def term(self, expr: Any) -> Term:
        """The dimension term of a torch (sympy) expression: int64, or bool for a relation (ConversionError if none)."""
        if isinstance(expr, Term):
            return expr
        return self._reader.read(expr)

    def term_of_text(self, text: str) -> Term:
        """The term of a dimension expression written as text (``FloorDiv(s0, 2)``; parsed, never evaluated)."""
        return parse_expression(text)

    def _quick_answer(self, expr: Any, kind: int) -> Any:
        """The C fast path's answer to question ``kind`` (STATIC, BOUND, TRUTH), or NotImplemented: the Python road."""
        fast = self._fast
        if fast is None or not self._quick:
            return NotImplemented
        return fast(expr, kind, self._given, self._reader.symbols)

    def evaluate(self, expr: Any) -> bool | None:
        """True / False when the relation (or And/Or/Not of relations) holds for every value / for none, else None."""
        known = self._quick_answer(expr, TRUTH)
        if known is not NotImplemented:
            return known  # answered by the intervals in C (see exprgraph.interop.torch_fast)
        t = self._reader.try_read(expr)
        if t is None or t.dtype != "bool":
            return None
        return self._truth(t)

    def _leaf_range(self, t: Term) -> Range:
        """The range of a name (:meth:`_name_range`), or the value of an integer constant as a range."""
        # (a symbol's attr is (name, dtype, shape): read directly, the ``name`` property costs a call)
        if t.op is SYMBOL:
            return self._name_range(t.attr[0])
        return (t.attr, t.attr)

    def _name_range(self, name: str) -> Range:
        """The range of a name: given, else torch's default from its assumptions (>= 1, >= 0), else unbounded."""
        r = self._given.get(name)
        if r is None:
            r = self._reader.symbols.get(name, (None, None))
        lo, hi = r
        return (-INF if lo is None else lo, INF if hi is None else hi)

    def _relation(self, root: Term) -> bool | None:
        """The truth of one relation: by the intervals of its sides when they decide it (or settle that nothing
        does, see :func:`~exprgraph.dims.intervals.quick_relation`), else asked of the DimEnv."""
        a, b = root.args
        if self._quick:
            op: str = root.op.name
            if a is not b and is_leaf(a) and is_leaf(b):
                # two different names or numbers (the commonest question): each takes every integer of its range,
                # independently of the other, so their ranges decide it, or nothing does
                return relation_of_intervals(op, self._leaf_range(a), self._leaf_range(b))
            name_range = self._name_range
            v = quick_relation(op, a, b, name_range, self._intervals, self._bits)
            if v != ASK:
                if v == SOMETIMES:
                    return None
                return v == ALWAYS
            if sometimes(op, a, b, name_range, self._intervals, self._ends):
                return None  # true at some values, false at others (see exprgraph.dims.witness)
            known = quick_factored(op, a, b, self._intervals)
            if known is not None:
                return known  # decided by the factors of a - b (see exprgraph.dims.relations)
        env = self._dims_env()
        if not self._quick and is_leaf(a) and is_leaf(b) and a is not b and env._facts is None:
            # two names or numbers under the DimEnv's current ranges: exact (facts relate names: they answer)
            return relation_of_intervals(root.op.name, _leaf_range(env, a), _leaf_range(env, b))
        return env.statically_known(root)

    def _truth(self, root: Term) -> bool | None:
        """The truth of a boolean term (relations asked of the DimEnv, combined by And/Or/Not), None if unknown."""
        name: str = root.op.name
        if name in REL_OPS:  # one relation (the commonest question)
            return self._relation(root)
        if root.is_const:
            return bool(root.attr)
        done: dict[Term, bool | None] = {}
        for t in postorder_until([root], _is_atom):
            vals: list[bool | None] = []
            for a in t.args:
                if a in done:
                    vals.append(done[a])
                else:
                    v = self._atom(a)
                    done[a] = v
                    vals.append(v)
            name = t.op.name
            if name == "logical_not":
                done[t] = None if vals[0] is None else not vals[0]
            elif name == "logical_and":  # false if one is false, true if all are
                done[t] = False if False in vals else True if all(v is True for v in vals) else None
            else:  # logical_or: true if one is true, false if all are
                done[t] = True if True in vals else False if all(v is False for v in vals) else None
        return done[root]

    def _atom(self, t: Term) -> bool | None:
        """The truth of a relation (asked) or of a boolean constant."""
        if t.is_const:
            return bool(t.attr)
        return self._relation(t)

    def statically_known_true(self, expr: Any) -> bool:
        """Whether ``expr`` (a relation, or a Python bool) holds for every value the ranges allow."""
        if expr is True or expr is False:
            return bool(expr)
        return self.evaluate(expr) is True

    def bound(self, expr: Any) -> tuple[Any, Any]:
        """``(lo, hi)`` holding every value of an integer expression (``-inf``/``inf`` when open or unreadable);
        for a relation, ``(False, True)`` unless its truth is known."""
        known = self._quick_answer(expr, BOUND)
        if known is not NotImplemented:
            return known  # answered by the intervals in C (see exprgraph.interop.torch_fast)
        t = self._reader.try_read(expr)
        if t is None:
            return (-math.inf, math.inf)
        if t.dtype == "bool":
            v = self._truth(t)
            if v is None:
                return (False, True)
            return (v, v)
        return self._int_bound(t)

    def _int_bound(self, t: Term) -> tuple[Any, Any]:
        """:meth:`bound` of an integer term."""
        op = t.op
        if op is CONST:
            return (t.attr, t.attr)  # a number (torch asks for many)
        if self._quick:
            if op is SYMBOL:
                return self._name_range(t.attr[0])  # a name: its range (every integer of it is a value)
            name_range = self._name_range
            r = quick_bound(t, name_range, self._intervals, self._bits)
            if r is not None:
                return r  # the least and the greatest value (or the only one): nothing is tighter
            i = self._intervals.get(t)
            if i and reached_ends(t, i, name_range, self._intervals, self._ends):
                return (i[0], i[1])  # both ends reached (see exprgraph.dims.witness): nothing is tighter
        env = self._dims_env()
        if t.op is SYMBOL and env._facts is None:
            return env.range_of(t.name)  # a name without facts: its range
        return env.bound(t)

    def static_value(self, expr: Any) -> Any:
        """The value of ``expr`` when the ranges fix it (an int, or a bool for a relation), else None."""
        known = self._quick_answer(expr, STATIC)
        if known is not NotImplemented:
            return known  # answered by the intervals in C (see exprgraph.interop.torch_fast)
        t = self._reader.try_read(expr)
        if t is None:
            return None
        op = t.op
        if op is CONST:
            v: Any = t.attr
            if type(v) is bool:
                return v  # true/false
            return int(v)  # a number
        if t.dtype == "bool":
            return self._truth(t)
        if op is SYMBOL and self._quick:  # a name: known when its range is one number
            r = self._name_range(t.attr[0])
            return r[0] if r[0] == r[1] else None
        lo, hi = self._int_bound(t)
        if lo == hi:
            return int(lo)
        return None

    def simplify(self, expr: Any) -> Term:
        """The canonical term of an integer expression under the ranges (a relation: true/false when known)."""
        t = self.term(expr)
        if is_bool(t):
            v = self._truth(t)
            if v is None:
                return t
            return TRUE if v else FALSE
        out = self._dims_env().simplify(t)
        if isinstance(out, int):
            return dim_const(out)
        assert isinstance(out, Term)
        return out


def _is_atom(t: Term) -> bool:
    """Whether :meth:`TorchDims._truth` stops at ``t``: a constant or a relation (asked as one)."""
    return bool(t.is_const) or t.op.name in REL_OPS


def from_shape_env(shape_env: Any) -> TorchDims:
    """A :class:`TorchDims` with a torch ``ShapeEnv``'s value ranges (``var_to_range``) and ``replacements``."""
    return TorchDims(dict(shape_env.var_to_range), dict(getattr(shape_env, "replacements", {}) or {}))
