"""The build settings, read and checked in one place: the build time limit and the cache's size cap.

Each comes from a keyword argument when the caller gives one, else from its environment variable,
else from its default. Only finite positive numbers are accepted: ``nan``, ``inf``, zero, negative
numbers and text that is not a number raise :class:`~exprgraph.errors.SettingError` (a
``ValueError``) naming the keyword or variable and what it allows, never a raw ``OverflowError``
and never a silent "no limit".
"""

from __future__ import annotations

import math
import numbers
import os

from ..errors import SettingError

__all__ = [
    "DEFAULT_TIMEOUT",
    "DEFAULT_CAP",
    "ENV_TIMEOUT",
    "ENV_CACHE_SIZE",
    "build_timeout",
    "size_cap",
    "parse_size",
]

#: seconds a build may take before the compiler is stopped
DEFAULT_TIMEOUT = 600.0
#: default cap on the bytes of libraries kept in the cache (1 GiB)
DEFAULT_CAP = 1 << 30
#: the environment variables behind the two settings
ENV_TIMEOUT = "EXPRGRAPH_BUILD_TIMEOUT"
ENV_CACHE_SIZE = "EXPRGRAPH_CACHE_SIZE"

_TIMEOUT_RULE = "a finite positive number of seconds, such as 600 or 2.5"
_SIZE_RULE = "a finite positive size in bytes, optionally with a unit k, M, G or T (such as 500M or 2G)"
_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def _refuse(setting: str, value: object, rule: str) -> SettingError:
    return SettingError(f"{setting} must be {rule}, not {value!r}", setting=setting)


def build_timeout(timeout: object = None) -> float:
    """The build time limit in seconds: ``timeout`` if given, else ``$EXPRGRAPH_BUILD_TIMEOUT``, else 600."""
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
            raise _refuse("build_timeout", timeout, _TIMEOUT_RULE)
        value = float(timeout)
        if not (math.isfinite(value) and value > 0):
            raise _refuse("build_timeout", timeout, _TIMEOUT_RULE)
        return value
    text = os.environ.get(ENV_TIMEOUT, "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        raise _refuse(f"${ENV_TIMEOUT}", text, _TIMEOUT_RULE) from None
    if not (math.isfinite(value) and value > 0):  # nan would disable the limit, inf never end it
        raise _refuse(f"${ENV_TIMEOUT}", text, _TIMEOUT_RULE)
    return value


def parse_size(text: str, setting: str = f"${ENV_CACHE_SIZE}") -> int:
    """The byte count written as ``text``: ``1024``, ``500M``, ``1.5G`` (units are powers of 1024)."""
    body = text.strip()
    scale = 1
    if body and body[-1].lower() in _UNITS:
        scale = _UNITS[body[-1].lower()]
        body = body[:-1]
    try:
        number = float(body)
    except ValueError:
        raise _refuse(setting, text, _SIZE_RULE) from None
    scaled = number * scale
    if not (math.isfinite(scaled) and scaled >= 1):  # also nan, inf and 1e400 (an inf after float())
        raise _refuse(setting, text, _SIZE_RULE)
    return int(scaled)


def size_cap(cap: object = None) -> int:
    """The cache's cap in bytes: ``cap`` if given, else ``$EXPRGRAPH_CACHE_SIZE``, else 1 GiB."""
    if cap is not None:
        if isinstance(cap, bool) or not isinstance(cap, numbers.Integral) or int(cap) < 1:
            raise _refuse("cap", cap, "a positive int (bytes)")
        return int(cap)
    text = os.environ.get(ENV_CACHE_SIZE, "").strip()
    if not text:
        return DEFAULT_CAP
    return parse_size(text)
