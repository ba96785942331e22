"""A query over a rewrite database: the tags an entry must have (any of include, all of require, none of exclude).

:func:`parse_query` reads the short form ``("tag", "-tag", "&tag")``. This module imports only
the errors; :mod:`exprgraph.graph.db` (which re-exports both names) runs the queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import RewriteDatabaseError

__all__ = ["RewriteDatabaseQuery", "parse_query"]


def _tags(tags: Iterable[str] | str | None) -> frozenset[str]:
    if tags is None:
        return frozenset()
    if isinstance(tags, str):
        return frozenset((tags,))
    out = frozenset(tags)
    for t in out:
        if not isinstance(t, str) or not t:
            raise RewriteDatabaseError(f"tags are non-empty strings, not {t!r}")
    return out


class RewriteDatabaseQuery:
    """Which entries to take: any of ``include``, all of ``require``, none of ``exclude``.

    ``subquery`` maps a sub-database name to the query used for it; ``position_cutoff`` keeps
    only the entries of a :class:`SequenceDB` placed before that position.
    """

    __slots__ = ("include", "require", "exclude", "subquery", "position_cutoff")

    def __init__(
        self,
        include: Iterable[str] | str,
        require: Iterable[str] | str | None = None,
        exclude: Iterable[str] | str | None = None,
        subquery: Mapping[str, RewriteDatabaseQuery] | None = None,
        position_cutoff: float | None = None,
    ) -> None:
        self.include = _tags(include)
        self.require = _tags(require)
        self.exclude = _tags(exclude)
        self.subquery = dict(subquery or {})
        for name, q in self.subquery.items():
            if not isinstance(q, RewriteDatabaseQuery):
                raise RewriteDatabaseError(f"subquery[{name!r}] must be a RewriteDatabaseQuery, not {q!r}")
        self.position_cutoff = position_cutoff

    def _with(self, **changes: Any) -> RewriteDatabaseQuery:
        args: dict[str, Any] = {
            "include": self.include,
            "require": self.require,
            "exclude": self.exclude,
            "subquery": self.subquery,
            "position_cutoff": self.position_cutoff,
        }
        args.update(changes)
        return RewriteDatabaseQuery(**args)

    def including(self, *tags: str) -> RewriteDatabaseQuery:
        """This query with more ``include`` tags."""
        return self._with(include=self.include | _tags(tags))

    def excluding(self, *tags: str) -> RewriteDatabaseQuery:
        """This query with more ``exclude`` tags."""
        return self._with(exclude=self.exclude | _tags(tags))

    def requiring(self, *tags: str) -> RewriteDatabaseQuery:
        """This query with more ``require`` tags."""
        return self._with(require=self.require | _tags(tags))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RewriteDatabaseQuery):
            return NotImplemented
        return (self.include, self.require, self.exclude, self.subquery, self.position_cutoff) == (
            other.include,
            other.require,
            other.exclude,
            other.subquery,
            other.position_cutoff,
        )

    def __hash__(self) -> int:
        return hash((self.include, self.require, self.exclude, self.position_cutoff))

    def __repr__(self) -> str:
        parts = [f"include={sorted(self.include)}"]
        if self.require:
            parts.append(f"require={sorted(self.require)}")
        if self.exclude:
            parts.append(f"exclude={sorted(self.exclude)}")
        if self.subquery:
            parts.append(f"subquery={self.subquery!r}")
        if self.position_cutoff is not None:
            parts.append(f"position_cutoff={self.position_cutoff}")
        return f"RewriteDatabaseQuery({', '.join(parts)})"


def parse_query(*tags: Any, **kwtags: Any) -> RewriteDatabaseQuery:
    """A query from tags: ``"tag"``/``"+tag"`` include, ``"-tag"`` exclude, ``"&tag"`` require."""
    if len(tags) == 1 and isinstance(tags[0], RewriteDatabaseQuery) and not kwtags:
        return tags[0]
    include, require, exclude = set(), set(), set()
    for t in tags:
        if not isinstance(t, str) or not t:
            raise RewriteDatabaseError(f"a query tag is a non-empty string, not {t!r}")
        if t[0] == "-":
            exclude.add(t[1:])
        elif t[0] == "&":
            require.add(t[1:])
        else:
            include.add(t[1:] if t[0] == "+" else t)
    return RewriteDatabaseQuery(
        include | _tags(kwtags.get("include")),
        require | _tags(kwtags.get("require")),
        exclude | _tags(kwtags.get("exclude")),
        kwtags.get("subquery"),
        kwtags.get("position_cutoff"),
    )
