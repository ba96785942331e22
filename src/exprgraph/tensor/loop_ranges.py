"""Loop ranges: the interval each loop variable gets from the index positions where it stands alone.

A variable standing alone in a position of extent ``n`` (``i``, ``i + 1``, ``2*i``, ``i // 4``)
keeps the position in ``[0, n)`` exactly on an interval of its own values; a statement's loop
over the variable runs over the intersection of those intervals. Imports: the core, :mod:`.affine`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core import Term
from ..errors import KernelError
from .affine import NonAffineError, ceildiv_int, is_var, linearize

__all__ = ["single_var_range", "loop_ranges"]


def single_var_range(term: Term, extent: int) -> tuple[Term, int, int] | None:
    """``(v, lo, hi)`` when ``term`` uses one variable ``v`` and ``0 <= term < extent`` iff ``lo <= v < hi``.

    Peels ``c*atom + k`` and ``inner // d`` from the outside in; None when the position gives no
    interval of its own (several variables, a modulo, a constant).
    """
    syms = term.free_symbols
    if len(syms) != 1:
        return None
    (var,) = syms
    try:
        lin = linearize(term)
    except NonAffineError:
        return None
    lo, hi = 0, extent  # target interval [lo, hi) of the current form
    while True:
        if len(lin.coeffs) != 1:
            return None
        ((atom, c),) = lin.coeffs.items()
        c, k = int(c), int(lin.const)
        a_lo, a_hi = lo - k, hi - k  # c*atom in [a_lo, a_hi)
        if c > 0:
            lo, hi = ceildiv_int(a_lo, c), (a_hi - 1) // c + 1
        else:
            lo, hi = ceildiv_int(a_hi - 1, c), a_lo // c + 1
        if is_var(atom):
            return var, lo, hi
        inner, div = atom.args
        d = int(div.attr)
        if atom.op.name == "floordiv":
            lo, hi = d * lo, d * hi
            lin = linearize(inner)
            continue
        return None  # a modulo: periodic, no interval


def loop_ranges(st: Any, tensors: Mapping[str, Any], index: Sequence[Term], text: str) -> list[tuple[Term, int, int]]:
    """``(v, lo, hi)`` for each loop variable of the parsed statement ``st`` (written indices first, then by use).

    Each range is the intersection over every position where the variable stands alone; a variable
    that never stands alone, or whose range is empty, is a KernelError at its first use in ``text``.
    """
    ranges: dict[Term, tuple[int, int]] = {}
    order: list[Term] = list(index)
    for r in st.refs:
        shape = tensors[r.name].shape
        for t, extent in zip(r.index or (), shape, strict=False):
            for v in sorted(t.free_symbols, key=lambda s: st.var_pos.get(s.name, 0)):
                if v not in order:
                    order.append(v)
            got = single_var_range(t, extent)
            if got is None:
                continue
            v, lo, hi = got
            old = ranges.get(v)
            ranges[v] = (lo, hi) if old is None else (max(old[0], lo), min(old[1], hi))
    for v in order:
        if v not in ranges:
            raise KernelError(
                f"index {v.name} has no derivable range: use it alone (i, i + c, c*i, i // c) in some index",
                text,
                st.var_pos.get(v.name),
            )
        lo, hi = ranges[v]
        if lo >= hi:
            raise KernelError(f"the shapes leave index {v.name} an empty range", text, st.var_pos.get(v.name))
    return [(v, *ranges[v]) for v in order]
