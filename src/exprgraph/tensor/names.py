"""Names that reach generated C: identifiers that are not C keywords nor names the generated code uses."""

from __future__ import annotations

import re

from ..core.tokens import RESERVED_NAMES
from ..errors import KernelError

__all__ = ["check_name", "is_c_identifier", "RESERVED", "fresh_name"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\Z")

_C_KEYWORDS = frozenset(
    """auto break case char const continue default do double else enum extern float for goto if inline int
    long register restrict return short signed sizeof static struct switch typedef union unsigned void volatile
    while _Bool _Complex _Imaginary _Alignas _Alignof _Atomic _Generic _Noreturn _Static_assert _Thread_local
    bool true false NULL main""".split()
)
#: C library functions, types and macros the generated code (and the C renderer's prelude) may use
_C_LIBRARY = frozenset(
    """exp log sqrt sin cos tan tanh pow fabs fmod floor trunc copysign fmax fmin max min
    expf logf sqrtf sinf cosf tanf tanhf powf fabsf fmodf floorf truncf copysignf fmaxf fminf
    log1p expm1 log1pf expm1f
    NAN INFINITY int64_t uint64_t INT64_C EG_PICK EG_MVEC""".split()
)

#: names a tensor, a loop variable or a kernel may not take (C keywords and library names, and the
#: names the core reserves for symbols: Python keywords, inf, nan...)
RESERVED = _C_KEYWORDS | _C_LIBRARY | RESERVED_NAMES


def is_c_identifier(name: object) -> bool:
    """True for a string that can name a tensor, a loop variable or a kernel in generated C."""
    return (
        isinstance(name, str)
        and _IDENT.match(name) is not None
        and name not in RESERVED
        and not name.startswith("eg_")
        and not name.startswith("__")
    )


def check_name(name: object, what: str, text: str = "", pos: int | None = None) -> str:
    """Return ``name`` if it is a safe C identifier, else raise KernelError saying why."""
    if not isinstance(name, str) or _IDENT.match(name) is None:
        raise KernelError(f"{what} {name!r} is not an identifier", text, pos)
    if name in RESERVED:
        raise KernelError(f"{what} {name!r} is reserved (a keyword or a function the C code calls)", text, pos)
    if name.startswith("eg_") or name.startswith("__"):
        raise KernelError(f"{what} {name!r} is reserved (names starting eg_ or __ belong to the generator)", text, pos)
    return name


def fresh_name(taken: set[str], preferred: tuple[str, ...] = ()) -> str:
    """A safe identifier not in ``taken`` (tried in order: ``preferred``, then t0, t1, ...); added to ``taken``."""
    for cand in preferred:
        if cand not in taken and is_c_identifier(cand):
            taken.add(cand)
            return cand
    k = 0
    while f"t{k}" in taken:
        k += 1
    taken.add(f"t{k}")
    return f"t{k}"
