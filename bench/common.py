"""Shared benchmark helpers: interleaved best-of-N timing, peak memory, markdown tables."""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "anchor_module",
    "best_of",
    "warm_best_of",
    "peak_memory",
    "ratio",
    "print_table",
    "skip",
    "fmt_seconds",
    "fmt_bytes",
]


def best_of(
    contenders: dict[str, Callable[[], Any]],
    repeat: int | dict[str, int] = 3,
    setup: dict[str, Callable[[], Any]] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    warm: bool = False,
) -> dict[str, float]:
    """Best wall time of each contender over ``repeat`` rounds, run interleaved (A B C, A B C, ...).

    ``repeat`` may be a per-contender dict (a slow anchor runs fewer rounds; it sits out the
    later rounds). ``setup[name]``, if given, runs untimed before each of that contender's calls
    (to clear a cache, say). The garbage collector runs before, and is paused during, each timed
    call; the call's result is dropped after the clock stops, so freeing it is not timed.
    ``clock`` reads the time (``time.thread_time`` times single-threaded work by the CPU time of
    the calling thread, which other processes on a busy machine cannot stretch). ``warm``: see
    :func:`warm_best_of`.
    """
    setup = setup or {}
    rounds = repeat if isinstance(repeat, dict) else dict.fromkeys(contenders, repeat)
    best = dict.fromkeys(contenders, float("inf"))
    for r in range(max(rounds.values())):
        for name, fn in contenders.items():
            if r >= rounds.get(name, 1):
                continue
            prepare = setup.get(name)
            if prepare is not None:
                prepare()
            gc.collect()
            gc.disable()
            try:
                if warm:
                    untimed = fn()  # the processor's caches warm
                    del untimed
                    if prepare is not None:
                        prepare()  # the contender's own caches emptied again
                start = clock()
                result = fn()
                elapsed = clock() - start
                del result
            finally:
                gc.enable()
            best[name] = min(best[name], elapsed)
    return best


def warm_best_of(
    contenders: dict[str, Callable[[], Any]],
    repeat: int | dict[str, int] = 3,
    clears: dict[str, Callable[[], Any]] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """:func:`best_of` with the processor's caches warm and each contender's own caches cold: per round and
    contender, interleaved, a full gc, one untimed call (it brings code and data into the processor's caches),
    ``clears[name]()`` (the contender's own caches emptied again: a memo must not answer the timed call), then
    the timed call. :func:`best_of` runs the gc right before the timed call instead, which walks the whole heap
    and evicts the processor's caches: a cold call, as after other work. Report both, each side treated alike.
    """
    return best_of(contenders, repeat, clears, clock, warm=True)


def peak_memory(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated (Python objects and numpy buffers, via tracemalloc) while ``fn`` runs."""
    gc.collect()
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak


def ratio(ours: float, anchor: float) -> str:
    """``ours/anchor`` as text (lower is better)."""
    if anchor <= 0:
        return "n/a"
    r = ours / anchor
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.2g}x"


def fmt_seconds(t: float) -> str:
    """Seconds with a unit that keeps three significant figures readable."""
    if t >= 1:
        return f"{t:.2f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.1f} ms"
    return f"{t * 1e6:.0f} µs"


def fmt_bytes(n: float) -> str:
    """Bytes in MiB (or KiB when small)."""
    if n >= 2**20:
        return f"{n / 2**20:.1f} MiB"
    return f"{n / 2**10:.1f} KiB"


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print a markdown table under a ``### title`` line."""
    print(f"### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    print()


def skip(what: str, reason: str) -> None:
    """Say that a row or a whole benchmark is skipped, and why."""
    print(f"(skipped {what}: {reason})")


def anchor_module(name: str) -> Any:
    """The anchor module ``name``, or None (and a line saying its rows are skipped) when it is not installed."""
    try:
        return __import__(name)
    except ImportError:
        skip(f"{name} rows", "not installed")
        return None
