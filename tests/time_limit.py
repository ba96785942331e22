"""One guard against hangs for the tests: a block that runs past its time raises :class:`Hang`."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any


class Hang(BaseException):
    """The block ran past its time (a BaseException: neither ``except Exception`` nor ``except OSError`` eats it)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` in the main thread once the block has run ``seconds`` (a hang becomes a failure)."""

    def expire(signum: int, frame: Any) -> None:
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
