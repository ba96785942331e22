"""The facts simplify keeps about terms between calls, and :func:`clear_caches` to forget them.

Terms are immutable and interned, so a fact worked out once about a term (its sign and range, its
cost, its sort digest, the radical number it stands for, an atom's sort key, dims' simplified
forms of its integer subterms) never goes stale: these caches only save time, and results do not
change when they are cleared. A benchmark clears them before each timed call, as it clears SymPy's
cache for the anchor, so that a call on a term seen before is not timed as cheaper than the first.

Rewriting stack: imports simplify's own modules, poly, core and dims.
"""

from __future__ import annotations

from ..core.exact_radicals import clear_radical_caches
from ..dims import clear_caches as clear_dims_caches
from ..poly import gcd
from . import numbers, order, signs

__all__ = ["clear_caches"]


def clear_caches() -> None:
    """Forget every fact kept about terms between calls (signs, costs, sort digests, radicals, atom keys, dims')."""
    signs.clear_facts()
    numbers.clear_costs()
    order.clear_digests()
    gcd._ATOM_KEYS.clear()  # a compiled module: a clear function there would wait for the next build
    clear_radical_caches()
    clear_dims_caches()
