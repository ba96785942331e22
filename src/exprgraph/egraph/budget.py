"""The work budget of a saturation run, checked inside its phases rather than only between them.

:func:`~exprgraph.egraph.saturate` makes a :class:`Budget` active while it runs: its deadline, how
many more matches the current iteration may hold and its e-node limit. A search (:mod:`.ematch`)
reads the active budget when it starts, reads the clock every :data:`CHECK_STEPS` steps, and
returns as soon as the deadline has passed or it holds the matches left. The runner applies
matches in chunks (at most :data:`APPLY_CHUNK` matches, taking at most about :data:`CHUNK_SECONDS`)
and checks the node limit and the clock between chunks, keeping in reserve the time the e-graph's
upkeep (the rebuild, then the index that the node count and the searches read) will take by its
own measure (:meth:`~exprgraph.egraph.EGraph.upkeep_seconds`). So a run ends within a few
milliseconds of its deadline, give or take the misestimate of that upkeep. Outside a run no budget
is active and a search runs to its end.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["Budget", "active_budget", "running", "CHECK_STEPS", "APPLY_CHUNK", "CHUNK_SECONDS"]

#: steps of a search between two readings of the clock: loops over a class's nodes (compiled
#: searches) or nodes (the machine); a class holds at most a few hundred nodes of one op in the
#: explosive runs measured, so that is a few milliseconds at most
CHECK_STEPS = 64
#: the most matches applied between two checks of the node limit and the clock
APPLY_CHUNK = 256
#: how long applying one chunk of matches should take at most (the chunk halves when it takes longer)
CHUNK_SECONDS = 0.005


@dataclass
class Budget:
    """What is left to a run: its deadline (a ``time.perf_counter`` time), matches and e-nodes."""

    deadline: float = math.inf
    #: matches the current iteration may still hold (-1: no limit)
    matches: int = -1
    #: the e-node limit (inf: none)
    nodes: float = math.inf

    def out_of_time(self, reserve: float = 0.0) -> bool:
        """Whether the deadline has passed, or would before ``reserve`` more seconds of work end."""
        return time.perf_counter() + reserve > self.deadline


_ACTIVE: ContextVar[Budget | None] = ContextVar("exprgraph_egraph_budget", default=None)


def active_budget() -> Budget | None:
    """The budget of the run in progress (in this thread or task), or None."""
    return _ACTIVE.get()


@contextmanager
def running(budget: Budget) -> Iterator[Budget]:
    """Make ``budget`` the active one for the duration of the ``with`` block."""
    token = _ACTIVE.set(budget)
    try:
        yield budget
    finally:
        _ACTIVE.reset(token)
