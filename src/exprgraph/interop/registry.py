"""The converters of :mod:`exprgraph.interop`, each registered by its own module.

A converter turns terms into another tool's graph (``"to"``) or reads one back (``"from"``). Its
module declares it once, at import, with :func:`register_converter`, next to the function; the
package's ``__init__`` imports the converter modules (each imports its tool only when called) and
the command line, the docs and the tests list :func:`converters`. A new converter is one module
that registers itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Converter", "register_converter", "converters", "get_converter"]

DIRECTIONS = ("to", "from")


@dataclass(frozen=True)
class Converter:
    """``function`` converts terms to ``tool``'s graphs (``direction="to"``) or reads them (``"from"``)."""

    tool: str
    direction: str
    function: Callable[..., Any]
    #: the pip extra that installs the tool (``pip install 'exprgraph[extra]'``)
    extra: str


_CONVERTERS: dict[tuple[str, str], Converter] = {}


def register_converter(converter: Converter) -> Converter:
    """Make ``converter`` known under its tool and direction (each pair is registered by one module)."""
    if converter.direction not in DIRECTIONS:
        raise ValueError(f"a converter's direction is one of {DIRECTIONS}, not {converter.direction!r}")
    key = (converter.tool, converter.direction)
    known = _CONVERTERS.get(key)
    if known is not None and known.function.__module__ != converter.function.__module__:
        raise ValueError(f"a converter {converter.direction} {converter.tool!r} is registered already")
    _CONVERTERS[key] = converter
    return converter


def converters() -> tuple[Converter, ...]:
    """The registered converters, by tool then direction."""
    return tuple(_CONVERTERS[k] for k in sorted(_CONVERTERS))


def get_converter(tool: str, direction: str) -> Converter:
    """The converter ``direction`` (``"to"``/``"from"``) ``tool``; ValueError naming the known ones otherwise."""
    found = _CONVERTERS.get((tool, direction))
    if found is None:
        known = ", ".join(f"{c.direction} {c.tool}" for c in converters()) or "none"
        raise ValueError(f"no converter {direction} {tool!r} is registered (known: {known})")
    return found
