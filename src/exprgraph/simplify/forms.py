"""The polynomial forms ``simplify(unsafe=True)`` tries: ``expand``, ``factor`` and ``cancel`` of a term.

Each is worked out once per call of ``simplify`` (``memo`` is the call's): ``factor`` and ``cancel``
read a term's rational function in lowest terms once, and a rational function met again (a term and
its canonical form often have the same one: ``x*y + x*z`` and ``x*z + x*y``) is not factored again.
A form's term depends on the rational function and on the dtype of the term it came from only.
"""

from __future__ import annotations

from typing import Any

from ..core import Term
from ..errors import ExprgraphError
from ..poly import Ratio, r_cancel, same_kind, to_ratio
from .polynomial import expand, factored
from .rational import fraction_term

__all__ = ["FORMS", "formed"]

#: the forms, in the order they are tried
FORMS = ("expand", "factor", "cancel")


def formed(name: str, base: Term, memo: dict[tuple, Any]) -> Term:
    """The form ``name`` (one of :data:`FORMS`) of ``base``; raises what the polynomial algebra raises
    past its limits (:class:`~exprgraph.errors.TermTooLargeError`, ValueError, ZeroDivisionError)."""
    if name == "expand":
        return expand(base)
    ratio, key = _lowest_terms(base, memo)
    raw_key = (name, key, base.dtype, base.shape)
    raw = memo.get(raw_key)
    if raw is None:
        raw = memo[raw_key] = factored(ratio, base) if name == "factor" else fraction_term(ratio, base)
    return same_kind(raw, base)


def _lowest_terms(base: Term, memo: dict[tuple, Any]) -> tuple[Ratio, tuple[frozenset, frozenset]]:
    """``base``'s rational function in lowest terms and a hashable key of it (once a call; a failure too)."""
    found = memo.get(("ratio", base))
    if found is None:
        try:
            ratio = r_cancel(to_ratio(base))
            found = (ratio, (frozenset(ratio[0].items()), frozenset(ratio[1].items())))
        except (ExprgraphError, ValueError, ZeroDivisionError) as e:  # kept: raised again for the other form
            found = e
        memo["ratio", base] = found
    if isinstance(found, Exception):
        raise found
    return found
