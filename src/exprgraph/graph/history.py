"""History: a feature that records every replacement, so a rewrite session can be stepped back and forward.

Imports errors, :mod:`~exprgraph.graph.features` and :mod:`~exprgraph.graph.printing` only; it
reaches the graph through the one it is attached to.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..errors import FeatureError, InconsistencyError
from .features import Feature
from .printing import reason_name, short

if TYPE_CHECKING:
    from ..core import Term
    from .fgraph import Checkpoint, FunctionGraph

__all__ = ["History", "Step"]


@dataclass(frozen=True)
class Step:
    """One recorded replacement of a :class:`History`."""

    old: Term
    new: Term
    reason: Any
    #: rebuilds of parents done before this replacement (needed to replay it exactly)
    rebuilds: tuple[tuple[Term, Term], ...] = ()
    serial: int = 0

    def __str__(self) -> str:
        return f"{reason_name(self.reason)}: {short(self.old)} -> {short(self.new)}"


class History(Feature):
    """Records every replacement, so a rewrite session can be stepped back and forward.

    ``undo()``/``redo()``/``goto(step)`` move the graph between recorded states (step 0 is the
    graph when the history was attached); a new replacement after stepping back discards the
    steps ahead, as an editor's undo does. ``state(step)`` gives a state's outputs without
    moving. ``fgraph.checkpoint()``/``fgraph.revert()`` also rewind the record.
    """

    def __init__(self) -> None:
        self._fg: FunctionGraph | None = None
        self._steps: list[Step] = []
        self._bases: dict[int, tuple[Term, ...]] = {}
        self._rebuilds: list[tuple[Term, Term]] = []
        self._cache: dict[int, tuple[Term, ...]] = {}
        self._quiet = False
        self._here: tuple[Term, ...] = ()
        #: the step the graph is at (``len(steps)`` unless stepped back)
        self.position = 0

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Start recording from the current state (step 0)."""
        if self._fg is not None and self._fg is not fgraph:
            raise FeatureError("a History records one graph; make another History for this one")
        self._fg = fgraph
        self._bases = {0: tuple(fgraph.outputs)}

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Stop recording."""
        self._fg = None

    @property
    def steps(self) -> list[Step]:
        """The recorded replacements, oldest first."""
        return list(self._steps)

    def __len__(self) -> int:
        return len(self._steps)

    def on_rebuild(self, fgraph: FunctionGraph, old: Term, new: Term) -> None:
        """Remember parent rebuilds between replacements (for exact replay)."""
        if not self._quiet:
            self._rebuilds.append((old, new))

    def on_replace(self, fgraph: FunctionGraph, old: Term, new: Term, reason: Any) -> None:
        """Record a step (dropping the steps ahead when the graph was stepped back)."""
        if self._quiet:
            return
        if self.position < len(self._steps):
            self._truncate(self.position, self._here)
        self._steps.append(Step(old, new, reason, tuple(self._rebuilds), fgraph._serial))
        self._rebuilds = []
        self.position = len(self._steps)

    def on_revert(self, fgraph: FunctionGraph, checkpoint: Checkpoint) -> None:
        """Forget the steps made after ``checkpoint``."""
        if self._quiet:
            return
        keep = sum(1 for s in self._steps if s.serial <= checkpoint.serial)
        self._truncate(keep, checkpoint.outputs)

    def _truncate(self, n: int, outputs: tuple[Term, ...]) -> None:
        del self._steps[n:]
        self._bases = {k: v for k, v in self._bases.items() if k < n}
        self._bases[n] = outputs
        self._cache = {k: v for k, v in self._cache.items() if k <= n}
        self._rebuilds = []
        self.position = n

    def state(self, step: int) -> tuple[Term, ...]:
        """The outputs the graph had after ``step`` replacements (replayed from the nearest saved state)."""
        if not 0 <= step <= len(self._steps):
            raise IndexError(f"step {step} is outside 0..{len(self._steps)}")
        if step in self._cache:
            return self._cache[step]
        base = max(k for k in self._bases if k <= step)
        if base == step:
            return self._bases[step]
        assert self._fg is not None
        scratch = self._fg._fresh(self._bases[base])  # a plain graph on the same inputs replays the steps
        for s in self._steps[base:step]:
            for old, _new in s.rebuilds:
                if old in scratch._clients and old in scratch._stale:
                    scratch._refresh(old)
            if s.old not in scratch._clients:
                raise InconsistencyError(f"history replay diverged at {s}")
            scratch.replace(s.old, s.new, s.reason)
        out = tuple(scratch.outputs)
        self._cache[step] = out
        return out

    def goto(self, step: int) -> None:
        """Put the graph in the state it had after ``step`` replacements."""
        if self._fg is None:
            raise FeatureError("this History is not attached to a graph")
        outputs = self.state(step)
        self._quiet = True
        try:
            self._fg.set_outputs(outputs, reason="history")
        finally:
            self._quiet = False
        self._rebuilds = []
        self._here = outputs
        self.position = step

    def undo(self, n: int = 1) -> None:
        """Step back ``n`` replacements."""
        self.goto(max(0, self.position - n))

    def redo(self, n: int = 1) -> None:
        """Step forward ``n`` replacements (after an undo)."""
        self.goto(min(len(self._steps), self.position + n))

    def __getstate__(self) -> dict[str, Any]:
        """Pickled with each step's reason by name (a rewriter is stored as its name, as upstream does)."""
        state = dict(self.__dict__)
        state["_steps"] = [replace(s, reason=_reason_for_pickle(s.reason)) for s in self._steps]
        return state

    def __repr__(self) -> str:
        return f"<History at step {self.position} of {len(self._steps)}>"


def _reason_for_pickle(reason: Any) -> Any:
    """A step's reason as stored in a pickle: None and strings as they are, anything else by its name."""
    return reason if reason is None or isinstance(reason, str) else reason_name(reason)
