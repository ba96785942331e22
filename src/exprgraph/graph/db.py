"""Rewrite databases: rewriters registered by name and tags, selected by queries.

Each entry has a name and tags; its name is a tag too, and so is the database's own name
(unless registered with ``use_db_name_as_tag=False``), so ``include=("canonicalize",)`` selects
the canonicalize database of ``optdb`` and everything registered in it. A
:class:`RewriteDatabaseQuery` selects the entries with any ``include`` tag, keeps those with
every ``require`` tag and drops those with any ``exclude`` tag; a selected sub-database is
queried in turn (with ``subquery[name]`` if given, else the same query).

- :class:`SequenceDB`: entries at positions; a query gives a :class:`SequentialGraphRewriter`.
- :class:`EquilibriumDB`: a query gives an :class:`EquilibriumGraphRewriter` of the selected
  entries (``final_rewriter=True`` / ``cleanup=True`` entries in those roles).
- :class:`LocalGroupDB`: node rewriters at positions; a query gives one node rewriter, a
  :class:`SequentialNodeRewriter` trying them in order.
- :class:`ProxyDB`: another database seen through a new entry (the same database can then be
  registered in several places).

Registering a name twice, or a name that is used as a tag (or a tag that is an entry's name),
raises :class:`~exprgraph.errors.RewriteDatabaseError` unless ``overwrite_existing=True``;
registering something that is neither a rewriter nor a database raises ``TypeError``, and so does
a position that is not a number (:class:`~exprgraph.errors.RewritePositionError`).
``print_summary()`` lists a database's entries with their tags. Queries
(:class:`RewriteDatabaseQuery`, :func:`parse_query`) are in :mod:`exprgraph.graph.query`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any, TextIO

from ..errors import RewriteDatabaseError, RewritePositionError
from .equilibrium import EquilibriumGraphRewriter, Limits
from .query import RewriteDatabaseQuery, _tags, parse_query
from .rewriters import GraphRewriter, NodeRewriter, Rewriter, SequentialGraphRewriter, SequentialNodeRewriter

__all__ = ["RewriteDatabaseQuery", "RewriteDatabase", "SequenceDB", "EquilibriumDB", "LocalGroupDB", "ProxyDB"]


class RewriteDatabase:
    """Rewriters (or sub-databases) registered by name with tags; ``query`` builds a rewriter."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        self._entries: dict[str, Any] = {}
        self._entry_tags: dict[str, frozenset[str]] = {}
        self._by_tag: dict[str, set[str]] = {}

    def register(
        self,
        name: str,
        rewriter: Rewriter | RewriteDatabase,
        *tags: str,
        use_db_name_as_tag: bool = True,
        overwrite_existing: bool = False,
    ) -> None:
        """Add ``rewriter`` under ``name`` with ``tags`` (its name and the database's name are tags too)."""
        if not isinstance(name, str) or not name:
            raise RewriteDatabaseError(f"a rewriter's name is a non-empty string, not {name!r}")
        if not isinstance(rewriter, (Rewriter, RewriteDatabase)):
            raise TypeError(f"{name!r}: expected a rewriter or a rewrite database, not {rewriter!r}")
        tagset = _tags(tags)
        if name in self._entries:
            if not overwrite_existing:
                raise RewriteDatabaseError(
                    f"a rewriter named {name!r} is already registered; pass overwrite_existing=True to replace it"
                )
            self.remove(name)
        if name in self._by_tag and not overwrite_existing:
            raise RewriteDatabaseError(f"{name!r} is already used as a tag; a name must not clash with a tag")
        for t in tagset:
            if t in self._entries and t != name:
                raise RewriteDatabaseError(f"the tag {t!r} is already the name of a registered rewriter")
        all_tags = {name, *tagset}
        if use_db_name_as_tag and self.name:
            all_tags.add(self.name)
        self._entries[name] = rewriter
        self._entry_tags[name] = frozenset(all_tags)
        for t in all_tags:
            self._by_tag.setdefault(t, set()).add(name)
        if isinstance(rewriter, RewriteDatabase) and rewriter.name is None:
            rewriter.name = name
        elif isinstance(rewriter, Rewriter) and not rewriter.name:
            rewriter.name = name

    def remove(self, name: str) -> None:
        """Remove the entry ``name``."""
        if name not in self._entries:
            raise RewriteDatabaseError(f"no rewriter named {name!r}")
        del self._entries[name]
        for t in self._entry_tags.pop(name):
            names = self._by_tag[t]
            names.discard(name)
            if not names:
                del self._by_tag[t]

    __delitem__ = remove

    def __getitem__(self, name: str) -> Any:
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(f"no rewriter named {name!r}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def tags_of(self, name: str) -> frozenset[str]:
        """The tags of the entry ``name`` (its name included)."""
        return self._entry_tags[name]

    def tags(self) -> set[str]:
        """Every tag in use."""
        return set(self._by_tag)

    def select(self, query: RewriteDatabaseQuery) -> list[str]:
        """Names of the entries the query selects (registration order)."""
        chosen: set[str] = set()
        for t in query.include:
            chosen |= self._by_tag.get(t, set())
        for t in query.require:
            chosen &= self._by_tag.get(t, set())
        for t in query.exclude:
            chosen -= self._by_tag.get(t, set())
        return [n for n in self._entries if n in chosen]

    def _resolve(self, name: str, query: RewriteDatabaseQuery) -> Any:
        obj = self._entries[name]
        if isinstance(obj, RewriteDatabase):
            return obj.query(query.subquery.get(name, query))
        return obj

    def query(self, *tags: Any, **kwtags: Any) -> Rewriter:
        """A rewriter made of the selected entries (see :class:`RewriteDatabaseQuery` and :func:`parse_query`)."""
        # the base class only stores and selects entries; SequenceDB and EquilibriumDB build rewriters
        raise NotImplementedError(f"{type(self).__name__} must define query(); use SequenceDB or EquilibriumDB")

    def _entry_note(self, name: str) -> str:
        """Extra text about an entry in :meth:`print_summary` (its position, its role)."""
        return ""

    def summary_line(self) -> str:
        """The database in one line, for :meth:`print_summary`."""
        n = len(self)
        return f"{type(self).__name__} {self.name or ''}".rstrip() + f" ({n} {'entry' if n == 1 else 'entries'})"

    def summary_entries(self) -> list[tuple[str, Any]]:
        """``(name, entry)`` pairs in the order :meth:`print_summary` lists them."""
        return [(n, self._entries[n]) for n in self._entries]

    def print_summary(self, stream: TextIO | None = None) -> None:
        """Print the entries (name, position or role, tags, what they are), sub-databases indented."""
        lines: list[str] = []
        stack: list[tuple[Any, str, str, int]] = [(self, "", "", 0)]
        seen: set[int] = set()
        while stack:
            obj, label, note, indent = stack.pop()
            pad = " " * indent
            head = f"{pad}{label}: " if label else pad
            if isinstance(obj, RewriteDatabase):
                lines.append(f"{head}{obj.summary_line()}{note}")
                if id(obj) in seen:
                    continue  # registered in several places: listed once
                seen.add(id(obj))
                entries = obj.summary_entries()
                for n, entry in reversed(entries):
                    tags = sorted(obj._entry_tags.get(n, frozenset()) - {n})
                    notes = [obj._entry_note(n), f"tags: {', '.join(tags)}" if tags else ""]
                    extra = "; ".join(x for x in notes if x)
                    stack.append((entry, n, extra and f"  [{extra}]", indent + 2))
            else:
                lines.append(f"{head}{obj.summary_line()}{note}")
        print("\n".join(lines), file=stream if stream is not None else sys.stdout)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name or ''} of {len(self._entries)} entries>"


def _is_number(x: Any) -> bool:
    """Whether ``x`` can be a position: a real number (not a bool)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class SequenceDB(RewriteDatabase):
    """Entries at positions (ties by name); a query gives a :class:`SequentialGraphRewriter`."""

    def __init__(self, name: str | None = None, failure_callback: Any = "warn") -> None:
        super().__init__(name)
        self.positions: dict[str, float] = {}
        self.failure_callback = failure_callback

    def register(
        self,
        name: str,
        rewriter: Rewriter | RewriteDatabase,
        *tags: str | float,
        position: float | str | None = None,
        use_db_name_as_tag: bool = True,
        overwrite_existing: bool = False,
    ) -> None:
        """Add an entry at ``position`` (default: after every other; ``"last"`` likewise).

        A number right after the rewriter is its position too (Theano's order of arguments,
        ``register(name, rewriter, 1, "tag")``), unless ``position=`` is given.
        """
        rest: tuple[Any, ...] = tags
        if rest and _is_number(rest[0]) and position is None:
            position, rest = rest[0], rest[1:]
        if position is None or (isinstance(position, str) and position == "last"):
            position = max(self.positions.values(), default=0.0) + 1
        if not _is_number(position):
            raise RewritePositionError(f"a position must be numeric (or 'last'), not {position!r}")
        super().register(
            name, rewriter, *rest, use_db_name_as_tag=use_db_name_as_tag, overwrite_existing=overwrite_existing
        )
        self.positions[name] = float(position)

    def remove(self, name: str) -> None:
        """Remove the entry ``name``."""
        super().remove(name)
        self.positions.pop(name, None)

    __delitem__ = remove

    def _selected(self, *tags: Any, **kwtags: Any) -> list[Any]:
        """The selected entries, resolved, in position order."""
        q = parse_query(*tags, **kwtags)
        names = self.select(q)
        if q.position_cutoff is not None:
            names = [n for n in names if self.positions[n] < q.position_cutoff]
        names.sort(key=lambda n: (self.positions[n], n))
        return [self._resolve(n, q) for n in names]

    def query(self, *tags: Any, **kwtags: Any) -> SequentialGraphRewriter:
        """The selected entries in position order, as one sequential rewriter."""
        parts = self._selected(*tags, **kwtags)
        return SequentialGraphRewriter(*parts, failure_callback=self.failure_callback, name=self.name or "SequenceDB")

    def _entry_note(self, name: str) -> str:
        return f"position {self.positions[name]:g}"

    def summary_entries(self) -> list[tuple[str, Any]]:
        """Entries in position order."""
        return sorted(super().summary_entries(), key=lambda e: (self.positions[e[0]], e[0]))


class EquilibriumDB(RewriteDatabase):
    """Entries applied together to a fixpoint; a query gives an :class:`EquilibriumGraphRewriter`."""

    def __init__(
        self,
        name: str | None = None,
        *,
        ignore_newtrees: bool = False,
        max_use_ratio: float | None = 8.0,
        max_nodes: int | None = None,
        max_passes: int | None = None,
        failure_callback: Any = "warn",
    ) -> None:
        super().__init__(name)
        self.ignore_newtrees = ignore_newtrees
        #: the budgets of the rewriters its queries give
        self.limits = Limits(max_use_ratio, max_nodes, max_passes)
        self.failure_callback = failure_callback
        self.final: set[str] = set()
        self.cleanup: set[str] = set()

    def register(
        self,
        name: str,
        rewriter: Rewriter | RewriteDatabase,
        *tags: str,
        final_rewriter: bool = False,
        cleanup: bool = False,
        use_db_name_as_tag: bool = True,
        overwrite_existing: bool = False,
    ) -> None:
        """Add an entry; ``final_rewriter``/``cleanup`` graph rewriters run after each pass/each change."""
        if final_rewriter and cleanup:
            raise RewriteDatabaseError(f"{name!r} cannot be both a final and a cleanup rewriter")
        if (final_rewriter or cleanup) and not isinstance(rewriter, GraphRewriter):
            raise RewriteDatabaseError(f"{name!r}: final and cleanup rewriters must be graph rewriters")
        super().register(
            name, rewriter, *tags, use_db_name_as_tag=use_db_name_as_tag, overwrite_existing=overwrite_existing
        )
        if final_rewriter:
            self.final.add(name)
        if cleanup:
            self.cleanup.add(name)

    def remove(self, name: str) -> None:
        """Remove the entry ``name``."""
        super().remove(name)
        self.final.discard(name)
        self.cleanup.discard(name)

    __delitem__ = remove

    def _entry_note(self, name: str) -> str:
        return "final" if name in self.final else "cleanup" if name in self.cleanup else ""

    def query(self, *tags: Any, **kwtags: Any) -> EquilibriumGraphRewriter:
        """The selected entries as one equilibrium rewriter."""
        q = parse_query(*tags, **kwtags)
        names = self.select(q)
        main: list[Rewriter] = []
        final: list[GraphRewriter] = []
        cleanup: list[GraphRewriter] = []
        for n in names:
            obj = self._resolve(n, q)
            if n in self.final:
                final.append(obj)
            elif n in self.cleanup:
                cleanup.append(obj)
            elif isinstance(obj, (NodeRewriter, GraphRewriter)):
                main.append(obj)
            else:  # pragma: no cover - register() only accepts rewriters and databases
                raise RewriteDatabaseError(f"{n!r} is not a rewriter")
        return EquilibriumGraphRewriter(
            main,
            max_use_ratio=self.limits.max_use_ratio,
            max_nodes=self.limits.max_nodes,
            max_passes=self.limits.max_passes,
            final_rewriters=final,
            cleanup_rewriters=cleanup,
            ignore_newtrees=self.ignore_newtrees,
            failure_callback=self.failure_callback,
            name=self.name or "EquilibriumDB",
        )


class LocalGroupDB(SequenceDB):
    """Node rewriters at positions; a query gives one :class:`SequentialNodeRewriter` of the selected ones.

    The result is a node rewriter, so the group can stand in an :class:`EquilibriumDB` (or a
    walk) as one entry. The arguments are upstream's: ``apply_all_rewrites`` is passed on,
    ``node_rewriter`` is the class built (called as ``node_rewriter(*rewriters,
    apply_all_rewrites=..., name=...)``), ``profile`` is accepted (profiles are always kept).
    The name is given on registration in a parent database, or with ``name=``.
    """

    def __init__(
        self,
        apply_all_rewrites: bool = False,
        profile: bool = False,
        node_rewriter: type[SequentialNodeRewriter] = SequentialNodeRewriter,
        *,
        name: str | None = None,
    ) -> None:
        if not isinstance(apply_all_rewrites, bool):
            raise TypeError(f"apply_all_rewrites must be a bool, not {apply_all_rewrites!r} (the name is name=...)")
        super().__init__(name)
        self.apply_all_rewrites = apply_all_rewrites
        self.profile = profile
        self.node_rewriter = node_rewriter

    def query(self, *tags: Any, **kwtags: Any) -> SequentialNodeRewriter:  # type: ignore[override]
        """The selected node rewriters in position order, tried in turn on each node."""
        parts = self._selected(*tags, **kwtags)
        for p in parts:
            if not isinstance(p, NodeRewriter):
                raise TypeError(f"a LocalGroupDB holds node rewriters, not {p!r}")
        return self.node_rewriter(*parts, apply_all_rewrites=self.apply_all_rewrites, name=self.name or "LocalGroupDB")


class ProxyDB(RewriteDatabase):
    """Another database seen through a new object: queries go to it, and entries are added there.

    A database has one name and one place in its parent; a proxy lets the same database be
    registered again elsewhere (under another name or position).
    """

    def __init__(self, db: RewriteDatabase, name: str | None = None) -> None:
        if not isinstance(db, RewriteDatabase):
            raise TypeError(f"ProxyDB wraps a rewrite database, not {db!r}")
        super().__init__(name)
        self.db = db

    def register(self, name: str, rewriter: Rewriter | RewriteDatabase, *tags: str, **kwargs: Any) -> None:
        """Register in the wrapped database."""
        self.db.register(name, rewriter, *tags, **kwargs)

    def remove(self, name: str) -> None:
        """Remove from the wrapped database."""
        self.db.remove(name)

    __delitem__ = remove

    def __getitem__(self, name: str) -> Any:
        return self.db[name]

    def __contains__(self, name: object) -> bool:
        return name in self.db

    def __iter__(self) -> Iterator[str]:
        return iter(self.db)

    def __len__(self) -> int:
        return len(self.db)

    def tags_of(self, name: str) -> frozenset[str]:
        """The tags of an entry of the wrapped database."""
        return self.db.tags_of(name)

    def tags(self) -> set[str]:
        """The tags of the wrapped database."""
        return self.db.tags()

    def select(self, query: RewriteDatabaseQuery) -> list[str]:
        """What the wrapped database selects."""
        return self.db.select(query)

    def query(self, *tags: Any, **kwtags: Any) -> Rewriter:
        """The wrapped database's answer."""
        return self.db.query(*tags, **kwtags)

    def summary_line(self) -> str:
        """``ProxyDB name -> the wrapped database``."""
        return f"ProxyDB {self.name or ''} -> {self.db.summary_line()}".replace("  ", " ")

    def summary_entries(self) -> list[tuple[str, Any]]:
        """The wrapped database's entries are listed where it is registered itself."""
        return []
