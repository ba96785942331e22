"""The matcher: ``match``, ``match_all`` and ``is_match`` over patterns, terms and plain Python data.

The engine is an explicit goal machine, never recursion over the data: a goal is a pair
(pattern, value) on a persistent linked list, bindings live in one dict with an undo trail, and
every place with alternatives (a :class:`Choice`, a run length of a :class:`Star`, an operand
order of a commutative op, a grouping of an associative op) pushes a choice point holding an
iterator of continuations. Failing pops the newest choice point, undoes the bindings made since
and resumes with its next continuation; exhausting all choice points ends the enumeration.

So a 10^5-node tree matches at the default recursion limit in time linear in its size. When
only the first match is wanted, a sub-pattern whose variables occur nowhere else is *cut* once
it has matched (its alternatives could never repair a later failure), which keeps matching
big commutative trees linear too.

Matching rules:

- plain values match by ``==``; constants of terms compare by value (a pattern ``1`` matches
  ``const(1.0)``), but booleans only match booleans;
- tuples match tuples, lists match lists and tuples (and strings, character-wise), dicts need
  the same keys; runs (:class:`Star`, :class:`Plus`, :class:`Segment`) may appear in any of
  these sequences and in the operands of an op pattern;
- terms match structurally (op, attr, then operands), so do :class:`Expression` nodes (same
  type, equal heads, then children);
- commutative ops try every operand order (fixed operands first, in order, then any runs take
  the rest in their original order);
- associative ops regroup when the pattern has fewer operands than the term (``V.x + 0``
  matches ``add(a, 0, b)`` with ``x = a + b``; variables take runs, other sub-patterns one
  operand) and flatten nested operands of the same op when it has more.
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterator
from typing import Any

from ..core import Term
from ..errors import MatchError
from .compile import compile_pattern
from .cuts import NO_CUTS as NO_CUTS
from .cuts import Cuts as Cuts
from .cuts import cut_points
from .machine import solve
from .patterns import OpPattern, Pattern
from .values import const_value_equal as const_value_equal
from .values import literal_matches as literal_matches
from .values import same_value as same_value
from .values import values_equal as values_equal

__all__ = ["match", "match_all", "is_match", "first_match", "MatchError"]

# The machine lives in :mod:`.machine` (with :mod:`.goals`, :mod:`.cuts` and :mod:`.values`); this
# module is the front over it and over the compiled matchers of :mod:`.compile`.


def _short(x: Any) -> str:
    if x.__class__ is Term:
        if x.args and x.size > 40:
            return f"<{x.op.name} term of {x.size} nodes>"
        return str(x)
    if isinstance(x, Pattern):
        text = str(x)
        return text if len(text) <= 200 else text[:200] + "..."
    return reprlib.repr(x)


def _compiled_for(pattern: Any) -> Any:
    if pattern.__class__ is OpPattern:
        comp = pattern._compiled
        if comp is None:
            comp = compile_pattern(pattern)
            pattern._compiled = comp
        return comp
    return None


def first_match(pattern: Any, expr: Any, bindings: dict | None = None) -> dict | None:
    """The first match's bindings, or None (the fast path rules use)."""
    comp = _compiled_for(pattern)
    if comp is not None:
        return comp.first(expr, bindings)
    return next(solve(pattern, expr, bindings, True, cut_points(pattern)), None)


def match(pattern: Any, expr: Any, bindings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Match ``pattern`` against ``expr``: the bindings of the first match, or raise :class:`MatchError`."""
    found = first_match(pattern, expr, bindings)
    if found is None:
        raise MatchError(f"{_short(pattern)} does not match {_short(expr)}")
    return found


def match_all(pattern: Any, expr: Any, bindings: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """Lazily enumerate the bindings of every match, in the order the alternatives are tried."""
    return solve(pattern, expr, bindings, False)


def is_match(pattern: Any, expr: Any, bindings: dict[str, Any] | None = None) -> bool:
    """Whether ``pattern`` matches ``expr``."""
    return first_match(pattern, expr, bindings) is not None
