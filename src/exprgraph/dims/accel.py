"""dims' share of the compiled fast path: its modules of :data:`exprgraph.accel.COMPILED_MODULES`.

The choice between compiled and pure modules is :mod:`exprgraph.accel`'s, one for every compiled
module of exprgraph (dims' and the polynomial ring of :mod:`exprgraph.poly` it calls); importing
this module (``exprgraph.dims`` does, first) makes it. Here: dims' list, and the names the
package exports about it.
"""

from __future__ import annotations

from .. import accel
from ..accel import MTIME_SLACK, PURE_ENV, is_compiled, select, stale_modules

__all__ = [
    "COMPILED_MODULES",
    "PURE_ENV",
    "MTIME_SLACK",
    "PURE",
    "select",
    "stale_modules",
    "compiled_modules",
    "is_compiled",
]

#: modules of exprgraph.dims the build compiles (their list is in exprgraph.accel.COMPILED_MODULES)
COMPILED_MODULES: tuple[str, ...] = accel.COMPILED_MODULES["dims"]

#: whether this process runs the pure modules (decided once, by exprgraph.accel)
PURE: bool = accel.PURE


def compiled_modules() -> tuple[str, ...]:
    """The modules of exprgraph.dims running compiled in this process (empty: all pure Python)."""
    return accel.compiled_modules("dims")
