"""Lazy imports of the optional packages, with an error that names the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import OptionalDependencyError

__all__ = ["require"]


def require(module: str, extra: str) -> ModuleType:
    """Import ``module``; if it is missing, raise an error saying ``pip install 'exprgraph[extra]'``."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        package = module.split(".")[0]
        raise OptionalDependencyError(
            f"this needs the optional package {package!r}, which is not installed: pip install 'exprgraph[{extra}]'"
        ) from err
