"""The standard table, ``einsum``: a contraction over named indices with explicit output subscripts.

``einsum(a, b, spec="ij,jk->ik")`` is numpy's ``einsum`` with the ``->`` always written. The spec is
kept as a tuple of ints so that it prints and parses like every other attr: letters ``a``..``z`` are
0..25, ``A``..``Z`` 26..51, a comma is -1 and the arrow -2 (``einsum_spec(term)`` gives the text back).
The spec is checked when the term is built (:class:`~exprgraph.errors.EinsumSpecError` gives the
position of the fault); an index repeated within one operand (a diagonal, ``"ii->i"``) is refused
there, so every operand's adjoint is one more einsum. Importing this module registers the op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import EinsumSpecError, ShapeError
from .declare import _call
from .dtypes import promote
from .grad_tools import _O
from .inference import _numeric
from .op import as_term
from .ops_tensor import expand_reduced
from .shapes import dims_equal
from .term import Term

__all__ = ["einsum", "einsum_spec", "parse_spec", "spec_text", "contraction"]

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_COMMA, _ARROW = -1, -2


def spec_text(codes: tuple) -> str:
    """The spec text of a tuple of codes (an EinsumSpecError at the first code that is none)."""
    out = []
    for i, c in enumerate(codes):
        if not isinstance(c, int) or isinstance(c, bool) or not -2 <= c < len(_LETTERS):
            raise EinsumSpecError(f"einsum spec: entry {i} ({c!r}) is no code of a letter, ',' or '->'", pos=i)
        out.append("," if c == _COMMA else "->" if c == _ARROW else _LETTERS[c])
    return "".join(out)


def parse_spec(spec: str) -> tuple[tuple[str, ...], str]:
    """The operands' subscripts and the output's of an explicit einsum spec (``"ij,jk->ik"``)."""
    if spec.count("->") != 1:
        where = spec.find("->", spec.find("->") + 1) if "->" in spec else len(spec)
        raise EinsumSpecError(f"einsum spec {spec!r}: write the output once after one '->'", spec=spec, pos=where)
    for pos, ch in enumerate(spec):
        if ch not in _LETTERS and ch not in ",->":
            raise EinsumSpecError(f"einsum spec {spec!r}: {ch!r} is not a letter, ',' or '->'", spec=spec, pos=pos)
    left, out = spec.split("->")
    inputs = tuple(left.split(","))
    pos = 0
    for sub in inputs:
        for k, ch in enumerate(sub):
            if ch in sub[:k]:
                raise EinsumSpecError(
                    f"einsum spec {spec!r}: index {ch!r} repeated within one operand (a diagonal): "
                    "take the diagonal first",
                    spec=spec,
                    pos=pos + k,
                )
        pos += len(sub) + 1
    pos += 1
    for k, ch in enumerate(out):
        if ch in out[:k] or ch not in left:
            why = "repeated in the output" if ch in out[:k] else "in the output but in no operand"
            raise EinsumSpecError(f"einsum spec {spec!r}: index {ch!r} {why}", spec=spec, pos=pos + k)
    return inputs, out


def _spec_key(attr: Any) -> tuple[int, ...]:
    """The spec (text or codes) as its tuple of codes, checked."""
    if isinstance(attr, (tuple, list)):
        attr = spec_text(tuple(attr))
    if not isinstance(attr, str):
        raise TypeError(f"an einsum spec is a text such as 'ij,jk->ik', not {attr!r}")
    parse_spec(attr)
    codes = {",": _COMMA}
    return tuple(_ARROW if part == ">" else codes.get(part, _LETTERS.find(part)) for part in attr.replace("->", ">"))


def einsum_spec(term: Term) -> str:
    """The spec text of an einsum term (``"ij,jk->ik"``)."""
    return spec_text(term.attr)


def _einsum_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``einsum(*operands, spec=...)``: one subscript per axis; an index has one size in every operand."""
    spec = spec_text(attr)
    inputs, out = parse_spec(spec)
    if len(inputs) != len(args):
        raise ShapeError(f"einsum spec {spec!r} names {len(inputs)} operand(s), not {len(args)}")
    size: dict[str, Any] = {}
    for n, (sub, a) in enumerate(zip(inputs, args, strict=True)):
        if len(sub) != a.ndim:
            raise ShapeError(f"einsum spec {spec!r}: operand {n} has {a.ndim} axes but {len(sub)} subscripts")
        for ch, d in zip(sub, a.shape, strict=True):
            if ch in size and dims_equal(size[ch], d) is not True:
                raise ShapeError(f"einsum spec {spec!r}: index {ch!r} has sizes {size[ch]} and {d} (no broadcasting)")
            size.setdefault(ch, d)
    return _numeric(promote(*(a.dtype for a in args))), tuple(size[ch] for ch in out)


def _einsum(*values: Any, attr: Any) -> Any:
    # leading batch axes (many parameter sets) are numpy's ellipsis: they broadcast across operands
    inputs, out = parse_spec(spec_text(attr))
    arrays = [np.asarray(v) for v in values]
    arrays = [a.astype(np.int64) if a.dtype == np.bool_ else a for a in arrays]  # bools count (as in sum)
    spec = ",".join("..." + s for s in inputs) + "->..." + out
    return np.einsum(spec, *arrays)


def _grad_einsum(node: Any, g: Any) -> tuple:
    # out[o] = sum over the other indices of prod_j A_j[s_j]: dA_i[s_i] = sum of g[o] * prod_{j != i} A_j[s_j]
    # over the indices not in s_i, an einsum of g with the other operands; an index of s_i found
    # nowhere else (summed in A_i alone) gets the upstream broadcast along it
    inputs, out = parse_spec(spec_text(node.attr))
    result: list = []
    for i, a in enumerate(node.args):
        if a.is_const:
            result.append(None)
            continue
        others = [(s, t) for j, (s, t) in enumerate(zip(inputs, node.args, strict=True)) if j != i]
        seen = out + "".join(s for s, _ in others)
        kept = "".join(ch for ch in inputs[i] if ch in seen)
        subs = ",".join([out, *(s for s, _ in others)]) + "->" + kept
        operands = (g, *(t for _, t in others))
        share = g if subs == f"{out}->{out}" else _O.einsum(*operands, spec=subs)
        missing = tuple(k for k, ch in enumerate(inputs[i]) if ch not in seen)
        result.append(expand_reduced(share, missing, a) if missing else share)
    return tuple(result)


_call(
    "einsum",
    (1, None),
    _einsum_rule,
    impl=_einsum,
    attr_name="spec",
    attr_key=_spec_key,
    grad=_grad_einsum,
    counts_bools=True,
    doc="numpy einsum with explicit output subscripts: einsum(a, b, spec='ij,jk->ik').",
)


def einsum(*args: Any, spec: Any = None) -> Term:
    """numpy's ``einsum(spec, *operands)`` as a term; the spec names the output (``"ij,jk->ik"``).

    ``einsum(*operands, spec=...)`` (the op's own form, as its ``repr`` prints it) is the same.
    """
    if spec is None:
        if not args or not isinstance(args[0], str):
            raise TypeError("einsum takes the spec first: einsum('ij,jk->ik', a, b)")
        spec, args = args[0], args[1:]
    return _O.einsum(*(as_term(t) for t in args), spec=spec)


def contraction(a: Any, b: Any, contract: tuple = ((), ()), batch: tuple = ((), ())) -> Term:
    """``a`` and ``b`` summed over the paired axes ``contract``, matched along the paired ``batch`` axes:
    an einsum whose result has the batch axes, then ``a``'s other axes, then ``b``'s (``dot_general``'s order)."""
    a, b = as_term(a), as_term(b)
    (ca, cb), (ba, bb) = ((tuple(int(i) for i in p) for p in pair) for pair in (contract, batch))
    if len(ca) != len(cb) or len(ba) != len(bb) or a.ndim + b.ndim > len(_LETTERS):
        raise ShapeError(f"contraction: unpaired axes {contract}, {batch} (or more than {len(_LETTERS)} in all)")
    sa = [_LETTERS[i] for i in range(a.ndim)]
    sb = [_LETTERS[a.ndim + i] for i in range(b.ndim)]
    for i, j in zip((*ca, *ba), (*cb, *bb), strict=True):
        sb[j] = sa[i]  # a shared letter: summed (contract) or kept once (batch)
    out = [sa[i] for i in ba]
    out += [sa[i] for i in range(a.ndim) if i not in ca and i not in ba]
    out += [sb[j] for j in range(b.ndim) if j not in cb and j not in bb]
    return _O.einsum(a, b, spec="".join(sa) + "," + "".join(sb) + "->" + "".join(out))
