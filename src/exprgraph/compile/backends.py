"""The backends of :func:`exprgraph.compile.compile`, each registered by its own module.

A backend turns the one lowering (:class:`~exprgraph.compile.lower.Program`) into a
:class:`~exprgraph.compile.function.Built`. Its module declares it once, at import, with
:func:`register_backend`; ``compile(..., backend=name)`` looks the name up here. A new backend is
one module that registers itself (and is imported by the package's ``__init__``, or listed in
``_ON_DEMAND`` to be imported when first asked for: the vm backends).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from .function import Built

__all__ = ["Backend", "register_backend", "get_backend", "backend_names"]


@dataclass(frozen=True)
class Backend:
    """A named code generator: ``build(program, build_timeout)`` gives the function's :class:`Built`."""

    name: str
    build: Callable[..., Built]
    #: whether the build runs a compiler bounded by ``build_timeout`` (a pickle then keeps the timeout)
    uses_build_timeout: bool = False
    #: whether ``build`` takes ``loops=threshold``: loops over classes of repeated structure
    #: (see :mod:`exprgraph.compile.structure`; 0 turns them off)
    loops: bool = False


_BACKENDS: dict[str, Backend] = {}
#: backends registered by their module when first asked for (not imported with the package): name -> module
_ON_DEMAND: dict[str, str] = {"vm": "exprgraph.compile.vm", "auto": "exprgraph.compile.vm_auto"}


def register_backend(backend: Backend) -> Backend:
    """Make ``backend`` available to ``compile`` under its name (a name is registered once)."""
    known = _BACKENDS.get(backend.name)
    if known is not None and known.build.__module__ != backend.build.__module__:
        raise ValueError(f"a backend named {backend.name!r} is registered already (by {known.build.__module__})")
    _BACKENDS[backend.name] = backend
    return backend


def backend_names() -> tuple[str, ...]:
    """The names of the registered backends, in the order they were registered."""
    return tuple(_BACKENDS)


def get_backend(name: str) -> Backend:
    """The backend registered as ``name`` (ValueError naming the others when there is none)."""
    found = _BACKENDS.get(name) if isinstance(name, str) else None
    if found is None and isinstance(name, str) and name in _ON_DEMAND:
        importlib.import_module(_ON_DEMAND[name])  # the module registers the backend
        found = _BACKENDS.get(name)
    if found is None:
        known = (*backend_names(), *(n for n in _ON_DEMAND if n not in _BACKENDS))
        raise ValueError(f"backend must be one of {known}, not {name!r}")
    return found
