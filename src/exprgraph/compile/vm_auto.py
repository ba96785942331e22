"""The "auto" backend: run on the vm at once, and on the C library as soon as its build finishes.

``compile(outputs, inputs, backend="auto")`` encodes the program for the vm (:mod:`.vm`, ready in
milliseconds to seconds) and starts the C build (:func:`~.c_backend.build_c`, the same program,
loops included) in a background thread. Every call goes to the C library once it is loaded, to
the vm before; the swap happens between calls, never during one. If the build fails (no C
compiler, a timeout), the vm keeps running and :attr:`Switch.error` says why. A program the vm
refuses (float32 values) is built by the C backend at once, as ``backend="c"`` does.

``f.library`` is the :class:`Switch`: ``f.library.active`` names the code in use, and
``f.library.wait(timeout)`` blocks until the build has finished (or failed).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..errors import CompileError, VMUnsupportedError
from . import vm
from .backends import Backend, get_backend, register_backend
from .c_backend import CRunner, build_c
from .function import Built
from .lower import Program

__all__ = ["Switch"]


class Switch:
    """The vm runner now, the C runner when its background build is done."""

    def __init__(self, program: Program, runner: vm.VMRunner, timeout: float | None, loops: int) -> None:
        self.vm = runner
        #: the loaded C runner, once its build has finished
        self.c: CRunner | None = None
        #: why the build failed (the vm keeps running), or None
        self.error: BaseException | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._build, args=(program, timeout, loops), name="exprgraph-auto-build", daemon=True
        )
        self._thread.start()

    def _build(self, program: Program, timeout: float | None, loops: int) -> None:
        try:
            self.c = build_c(program, timeout=timeout, loops=loops)
        except (CompileError, OSError) as exc:  # no compiler, a failed or timed-out build: stay on the vm
            self.error = exc
        finally:
            self._done.set()

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
    try:
        runner = vm.build_vm(program, loops=loops)
    except VMUnsupportedError:
        return get_backend("c").build(program, build_timeout, loops=loops)
    switch = Switch(program, runner, build_timeout, loops)
    source = runner.describe() + "(the C library replaces the vm when its background build finishes)\n"
    return Built(switch.run, source, switch.packed, switch, runner.info)


register_backend(Backend("auto", _build, uses_build_timeout=True, loops=True))
