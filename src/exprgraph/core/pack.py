"""Several terms pickled as one flat list of nodes: shared subterms once, linear in the DAG.

A term pickles as the flat list of its own DAG (no recursion, re-interned on load), so a list of
``n`` terms that share a chain pickles that chain ``n`` times: quadratic, 8 s and 24 MB for 1,500
nested outputs. :class:`TermPack` flattens all its terms in one walk; containers of many terms
(compiled functions, graphs) pickle theirs through it. Imports the term module only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .term import FlatNode, Term, build_nodes, flatten_nodes

__all__ = ["TermPack"]


class TermPack:
    """A tuple of terms that pickles as one flat node list (``TermPack(outputs).terms`` gives them back)."""

    __slots__ = ("terms",)

    def __init__(self, terms: Iterable[Term]) -> None:
        self.terms: tuple[Term, ...] = tuple(terms)

    def __iter__(self) -> Iterator[Term]:
        return iter(self.terms)

    def __len__(self) -> int:
        return len(self.terms)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TermPack) and self.terms == other.terms

    def __hash__(self) -> int:
        return hash(self.terms)

    def __repr__(self) -> str:
        return f"TermPack({list(self.terms)!r})"

    def __reduce__(self) -> tuple:
        return (_unpack, flatten_nodes(self.terms))


def _unpack(flat: list[FlatNode], roots: list[int]) -> TermPack:
    """The pack of a pickled flat list."""
    built = build_nodes(flat)
    return TermPack(built[i] for i in roots)
