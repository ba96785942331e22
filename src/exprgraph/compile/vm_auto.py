"""The "auto" backend: run on the vm at once, and on the C library as soon as its build finishes.

``compile(outputs, inputs, backend="auto")`` encodes the program for the vm (:mod:`.vm`, ready in
milliseconds to seconds) and starts the C build (:func:`~.c_backend.build_c`, the same program,
loops included) in a background thread. Every call goes to the C library once it is loaded, to
the vm before; the swap happens between calls, never during one. If the build fails (no C
compiler, a timeout), the vm keeps running and :attr:`Switch.error` says why. A program the vm
refuses (float32 values) is built by the C backend at once, as ``backend="c"`` does.

The classes of repeated structure (:mod:`.structure`) are found once and serve both: the vm runs
them as loops at once (at one point a loop's members are the machine's lanes, so it runs within
about 1.5x of the C library; AC-OPF case1354pegase), the C build in the background emits them.
Background builds run one at a time (a lock), so several functions compiled together leave the
other core to the caller.

``f.library`` is the :class:`Switch`: ``f.library.active`` names the code in use,
``f.library.wait(timeout)`` blocks until the build has finished (or failed), and
``f.library.build_seconds`` / ``f.library.build_cpu`` say how long it took.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from ..errors import CompileError, VMUnsupportedError
from . import vm
from .backends import Backend, get_backend, register_backend
from .c_backend import CRunner, build_c, loop_structure
from .function import Built
from .lower import Program
from .structure import Structure

__all__ = ["Switch"]

#: one background build at a time (their compilers and code generators share the machine with the caller)
_ONE_BUILD = threading.Lock()


class Switch:
    """The vm runner now, the C runner when its background build is done."""

    def __init__(
        self,
        program: Program,
        runner: vm.VMRunner,
        timeout: float | None,
        loops: int,
        structure: Structure | None = None,
    ) -> None:
        self.vm = runner
        #: the loaded C runner, once its build has finished
        self.c: CRunner | None = None
        #: why the build failed (the vm keeps running), or None
        self.error: BaseException | None = None
        #: ``time.perf_counter()`` when the switch was made, and when the library was loaded (or the build failed)
        self.started = time.perf_counter()
        self.finished: float | None = None
        #: CPU seconds of the build thread (code generation, waiting on the lock excluded; the compiler is a child)
        self.build_cpu = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._build, args=(program, timeout, loops, structure), name="exprgraph-auto-build", daemon=True
        )
        self._thread.start()

    def _build(self, program: Program, timeout: float | None, loops: int, structure: Structure | None) -> None:
        with _ONE_BUILD:
            start = time.thread_time()
            try:
                self.c = build_c(program, timeout=timeout, loops=loops, structure=structure)
            except (CompileError, OSError) as exc:  # no compiler, a failed or timed-out build: stay on the vm
                self.error = exc
            finally:
                self.build_cpu = time.thread_time() - start
                self.finished = time.perf_counter()
                self._done.set()

    @property
    def build_seconds(self) -> float | None:
        """Wall seconds from the switch's creation to the library loaded (or the build failed); None while running."""
        return None if self.finished is None else self.finished - self.started

    @property
    def active(self) -> str:
        """``"c"`` once the library is loaded, else ``"vm"``."""
        return "c" if self.c is not None else "vm"

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the background build has finished or failed (True), or ``timeout`` seconds passed."""
        return self._done.wait(timeout)

    def run(self, *args: Any) -> tuple[Any, ...]:
        """The outputs' values, from the library when loaded, else from the vm."""
        c = self.c
        return c.run(*args) if c is not None else self.vm.run(*args)

    def packed(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """A packed call, from the library when loaded, else from the vm."""
        c = self.c
        return c.packed(x, out) if c is not None else self.vm.packed(x, out)


def _build(program: Program, build_timeout: float | None, loops: int = 0) -> Built:
    """The auto backend's function: the vm at once, the C library when its build finishes."""
    if vm._native is None:
        return get_backend("c").build(program, build_timeout, loops=loops)
    # the classes are found once, for the vm and the C build, when the C build's cut of long folds changes nothing
    structure = loop_structure(program, loops) if loops and program.pointwise else None
    shared = structure if structure is not None and structure.program is program else None
    try:
        runner = vm.build_vm(program, loops=loops, structure=shared)
    except VMUnsupportedError:
        return get_backend("c").build(program, build_timeout, loops=loops)
    switch = Switch(program, runner, build_timeout, loops, structure)
    source = runner.describe() + "(the C library replaces the vm when its background build finishes)\n"
    return Built(switch.run, source, switch.packed, switch, runner.info)


register_backend(Backend("auto", _build, uses_build_timeout=True, loops=True))
