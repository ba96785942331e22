"""The work budget of one :func:`~exprgraph.simplify.simplify` call: rule applications and time; what it did.

Two limits, each raising :class:`~exprgraph.errors.RewriteLimitError`: ``max_steps`` (rule
applications, counted by the rewrite driver in each pass) and ``time_limit`` (seconds of
wall time, checked at every sum and product the rules canonicalise, the nodes whose rules do
the work). The deadline lives in a thread-local slot for the length of the call, so the shared
rule tables need no per-call copy.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..errors import RewriteLimitError

__all__ = ["DEFAULT_MAX_STEPS", "deadline", "check_time", "check_budget_args", "SimplifyInfo"]

#: rule applications each pass of one ``simplify`` call may make before it gives up (typical terms
#: take about one per node: a million is a term of several hundred thousand nodes)
DEFAULT_MAX_STEPS = 1_000_000

_state = threading.local()
_clock = time.perf_counter


def check_budget_args(max_steps: int, time_limit: float | None) -> None:
    """Refuse a budget that is not a count of steps and a number of seconds (ValueError, TypeError)."""
    if max_steps.__class__ is bool or not isinstance(max_steps, int):
        raise TypeError(f"max_steps must be an int, not {type(max_steps).__name__}")
    if max_steps < 0:
        raise ValueError(f"max_steps must be >= 0, not {max_steps}")
    if time_limit is not None:
        if time_limit.__class__ is bool or not isinstance(time_limit, (int, float)):
            raise TypeError(f"time_limit must be a number of seconds or None, not {type(time_limit).__name__}")
        if math.isnan(time_limit) or time_limit <= 0:
            raise ValueError(f"time_limit must be a positive number of seconds, not {time_limit}")


@contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Within the block, :func:`check_time` raises once ``seconds`` have passed (None: no limit)."""
    outer = getattr(_state, "limit", None)
    if seconds is not None and (outer is None or _clock() + seconds < outer[0]):
        _state.limit = (_clock() + seconds, seconds)  # a nested call keeps an earlier deadline of its caller
    try:
        yield
    finally:
        _state.limit = outer


def check_time() -> None:
    """Raise :class:`~exprgraph.errors.RewriteLimitError` if the current call is past its deadline."""
    limit = getattr(_state, "limit", None)
    if limit is not None and _clock() > limit[0]:
        raise RewriteLimitError(
            f"simplify did not finish within its time limit of {limit[1]} s: "
            "pass a larger time_limit (or None) to simplify",
            "time_limit",
            0,
        )


@dataclass
class SimplifyInfo:
    """What one :func:`~exprgraph.simplify.simplify` call did (pass ``info=SimplifyInfo()`` to fill it).

    ``stop_reason`` says why the bounded equality saturation of the default strategy stopped: one of
    the e-graph runner's reasons ("saturated", "iteration limit", "node limit", "time limit", "match
    limit"), "not run" (``method="rules"``, or no e-graph layer), or "skipped: ..." with why (the
    input is over the strategy's size bound, or holds no function an identity is about).
    ``chosen`` names the stage whose form came back ("input" when nothing smaller was found).
    """

    #: why the saturation stage stopped (see above)
    stop_reason: str = "not run"
    #: the stage whose form was returned: "input", "rules", "egraph" or a polynomial form ("expand", ...)
    chosen: str = "input"
    #: distinct nodes, constants included, of the input and of the result
    size_before: int = 0
    size_after: int = 0
    #: e-nodes and iterations of the saturation stage (0 when it did not run)
    egraph_nodes: int = 0
    iterations: int = 0
    #: float sums kept whole so that the sign of a zero reaching a division stays (see ``simplify``)
    protected: int = 0
    #: wall seconds of the whole call
    seconds: float = 0.0
    #: the stages run, in order
    stages: list[str] = field(default_factory=list)
