"""Finding and loading a libipopt for :mod:`exprgraph.optimize.ipopt_c` (IPOPT's C interface over ctypes).

Where a library comes from, in this order: a path the caller names, the environment variable
``EXPRGRAPH_IPOPT_LIBRARY``, then the known places - the libipopt that CasADi's wheel bundles, the
one in ``cyipopt_wheels.libs`` (the cyipopt-wheels package), the system's
(``ctypes.util.find_library("ipopt")``). The known places are found from the packages' metadata
and files (``importlib.util.find_spec`` / ``importlib.metadata``): neither casadi nor cyipopt is
imported. A place can also be asked for by name: ``"casadi"``, ``"cyipopt"``, ``"system"``.

A loaded library is an :class:`IpoptLibrary`: its path, where it was found, IPOPT's version
(``GetIpoptVersion`` when the library has it), the C type of IPOPT's ``Bool`` (``bool`` from
IPOPT 3.14 on, ``int`` before) and the functions with their argument types set. Libraries load
with ``RTLD_LOCAL``, so two IPOPT builds (and their MUMPS) can live in one process. IPOPT built
with 64-bit indices (``IPOPT_INT64``, not the default) is not supported.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.metadata
import importlib.util
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import IpoptLibraryError

__all__ = ["IpoptLibrary", "load_library", "candidates", "ENV_VAR", "PLACES", "REQUIRED"]

#: the environment variable naming a libipopt
ENV_VAR = "EXPRGRAPH_IPOPT_LIBRARY"
#: the known places, in the order they are tried
PLACES = ("casadi", "cyipopt", "system")
#: the functions of IPOPT's C interface the binding calls
REQUIRED = (
    "CreateIpoptProblem",
    "FreeIpoptProblem",
    "AddIpoptStrOption",
    "AddIpoptNumOption",
    "AddIpoptIntOption",
    "SetIntermediateCallback",
    "IpoptSolve",
)

_P = ctypes.c_void_p
_IDX = ctypes.c_int  # ipindex (IPOPT's default 32-bit build)
_NUM = ctypes.c_double  # ipnumber
_LOCK = threading.Lock()
#: the libraries loaded, by real path: (library, version, Bool type); a library is never unloaded
_LOADED: dict[str, tuple[ctypes.CDLL, tuple[int, int, int] | None, Any]] = {}


@dataclass(eq=False)
class IpoptLibrary:
    """A loaded libipopt: where it is, where it was found, IPOPT's version and its C functions."""

    #: the file loaded
    path: str
    #: where it was found: "argument", "environment", "casadi", "cyipopt" or "system"
    source: str
    #: IPOPT's (major, minor, release): from ``GetIpoptVersion`` or the file's name; None when neither says
    version: tuple[int, int, int] | None
    #: the C type of IPOPT's Bool: ctypes.c_bool from IPOPT 3.14 on, ctypes.c_int before
    bool_type: Any
    #: the ctypes library
    cdll: ctypes.CDLL = field(repr=False)

    def describe(self) -> str:
        """One line: the version, where it was found and the path."""
        version = "IPOPT " + ".".join(map(str, self.version)) if self.version else "IPOPT (version not reported)"
        return f"{version}, {self.source}: {self.path}"

    def __str__(self) -> str:
        return self.describe()


def _dist_files(dist: str, suffix_filter: str) -> list[Path]:
    """Files of installed distribution ``dist`` whose name contains ``suffix_filter`` (none if not installed)."""
    try:
        files = importlib.metadata.files(dist) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    return [Path(str(f.locate())) for f in files if suffix_filter in f.name]


def _casadi_library() -> str | None:
    """CasADi's bundled libipopt, found next to its package (casadi is not imported)."""
    spec = importlib.util.find_spec("casadi")
    folders = [Path(p) for p in (spec.submodule_search_locations or [])] if spec is not None else []
    for folder in folders:
        for name in ("libipopt.so", "libipopt.dylib", "ipopt.dll", "libipopt-3.dll"):
            if (folder / name).is_file():
                return str(folder / name)
        found = sorted(folder.glob("libipopt.so.*"))
        if found:
            return str(found[-1])
    return None


def _cyipopt_library() -> str | None:
    """The libipopt of the cyipopt-wheels package (in ``cyipopt_wheels.libs``; cyipopt is not imported)."""
    for dist in ("cyipopt-wheels", "cyipopt_wheels", "cyipopt"):
        found = [p for p in _dist_files(dist, "ipopt") if p.name.startswith("libipopt") and p.is_file()]
        if found:
            return str(sorted(found)[-1])
    spec = importlib.util.find_spec("cyipopt")
    if spec is not None and spec.origin is not None:
        libs = Path(spec.origin).parent.parent / "cyipopt_wheels.libs"
        found = sorted(libs.glob("libipopt*")) if libs.is_dir() else []
        if found:
            return str(found[-1])
    return None


def _system_library() -> str | None:
    """The system's libipopt as the dynamic loader finds it."""
    return ctypes.util.find_library("ipopt")


_FINDERS = {"casadi": _casadi_library, "cyipopt": _cyipopt_library, "system": _system_library}


def candidates() -> list[tuple[str, str]]:
    """Every libipopt found, as (where, path): the environment variable's first, then the known places."""
    out: list[tuple[str, str]] = []
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        out.append(("environment", env))
    for place in PLACES:
        path = _FINDERS[place]()
        if path is not None:
            out.append((place, path))
    return out


def _open(path: str) -> ctypes.CDLL:
    """Load ``path`` (RTLD_LOCAL); a wheel's library without a search path gets its siblings loaded first."""
    try:
        return ctypes.CDLL(path, mode=os.RTLD_LOCAL)
    except OSError as first:
        folder = Path(path).parent
        if not Path(path).is_file():
            raise first
        # auditwheel-style folders (cyipopt_wheels.libs) keep the dependencies beside the library
        # without a search path: load them first (in any order that works), so the loader finds them
        siblings = [p for p in folder.iterdir() if p.is_file() and ".so" in p.name and p != Path(path)]
        kept: list[ctypes.CDLL] = []
        progress = True
        while siblings and progress:
            progress = False
            for p in list(siblings):
                try:
                    kept.append(ctypes.CDLL(str(p), mode=os.RTLD_LOCAL))
                except OSError:
                    continue
                siblings.remove(p)
                progress = True
        return ctypes.CDLL(path, mode=os.RTLD_LOCAL)


def _version(cdll: ctypes.CDLL, path: str) -> tuple[int, int, int] | None:
    """IPOPT's version: ``GetIpoptVersion`` (3.14.12 on), else the file's name (``libipopt.so.3.14.11``)."""
    if not hasattr(cdll, "GetIpoptVersion"):
        named = re.search(r"\.so\.(\d+)\.(\d+)\.(\d+)$", Path(os.path.realpath(path)).name)
        return (int(named[1]), int(named[2]), int(named[3])) if named else None
    fn = cdll.GetIpoptVersion
    fn.argtypes, fn.restype = [ctypes.POINTER(ctypes.c_int)] * 3, None
    parts = [ctypes.c_int(0) for _ in range(3)]
    fn(*(ctypes.byref(p) for p in parts))
    return (parts[0].value, parts[1].value, parts[2].value)


def _declare(cdll: ctypes.CDLL, bool_type: Any) -> None:
    """Set the argument and result types of the functions the binding calls (IpStdCInterface.h)."""
    num_p = ctypes.POINTER(_NUM)
    signatures: dict[str, tuple[list[Any], Any]] = {
        # n, x_L, x_U, m, g_L, g_U, nele_jac, nele_hess, index_style, eval_f, eval_g, eval_grad_f, eval_jac_g, eval_h
        "CreateIpoptProblem": ([_IDX, num_p, num_p, _IDX, num_p, num_p, _IDX, _IDX, _IDX, _P, _P, _P, _P, _P], _P),
        "FreeIpoptProblem": ([_P], None),
        "AddIpoptStrOption": ([_P, ctypes.c_char_p, ctypes.c_char_p], bool_type),
        "AddIpoptNumOption": ([_P, ctypes.c_char_p, _NUM], bool_type),
        "AddIpoptIntOption": ([_P, ctypes.c_char_p, _IDX], bool_type),
        "SetIntermediateCallback": ([_P, _P], bool_type),
        # problem, x, g, obj_val, mult_g, mult_x_L, mult_x_U, user_data -> ApplicationReturnStatus
        "IpoptSolve": ([_P, num_p, num_p, num_p, num_p, num_p, num_p, _P], ctypes.c_int),
    }
    for name, (args, result) in signatures.items():
        fn = getattr(cdll, name)
        fn.argtypes, fn.restype = args, result


def _resolve(where: str | os.PathLike[str] | None) -> tuple[str, str]:
    """(source, path) for ``where``: None/"auto" (the search order), a place's name or a path."""
    if where is None or where == "auto":
        found = candidates()
        if not found:
            raise IpoptLibraryError(
                "no libipopt found: install casadi or cyipopt-wheels (both bundle IPOPT), install IPOPT "
                f"on the system, or name the file with ipopt_library=PATH or {ENV_VAR}=PATH",
                path="",
            )
        return found[0]
    text = os.fspath(where)
    if text in _FINDERS:
        path = _FINDERS[text]()
        if path is None:
            what = {"casadi": "the casadi package", "cyipopt": "the cyipopt-wheels package", "system": "IPOPT"}
            raise IpoptLibraryError(
                f"no libipopt in place {text!r}: install {what[text]}, or name the file with ipopt_library=PATH",
                path="",
            )
        return text, path
    return "argument", text


def load_library(where: str | os.PathLike[str] | None = None) -> IpoptLibrary:
    """Load a libipopt: ``where`` is a path, a place ("casadi", "cyipopt", "system") or None / "auto".

    None and "auto" try ``EXPRGRAPH_IPOPT_LIBRARY`` then the known places; a file is loaded once
    per process (each call says where this call found it). A file that does not load, or lacks
    IPOPT's C interface, raises :class:`~exprgraph.errors.IpoptLibraryError` naming the file and
    what to do.
    """
    source, path = _resolve(where)
    with _LOCK:
        key = os.path.realpath(path) if os.path.exists(path) else path
        if key not in _LOADED:
            _LOADED[key] = _load(path)
        cdll, version, bool_type = _LOADED[key]
    return IpoptLibrary(path=path, source=source, version=version, bool_type=bool_type, cdll=cdll)


def _load(path: str) -> tuple[ctypes.CDLL, tuple[int, int, int] | None, Any]:
    """Load ``path`` and declare its functions: (the library, IPOPT's version, the C type of its Bool)."""
    try:
        cdll = _open(path)
    except OSError as e:
        raise IpoptLibraryError(
            f"cannot load {path!r} as IPOPT ({e}): name an existing libipopt (a .so/.dylib/.dll) "
            f"with ipopt_library=PATH or {ENV_VAR}, or leave both unset to use casadi's or cyipopt-wheels'",
            path=path,
        ) from e
    missing = [name for name in REQUIRED if not hasattr(cdll, name)]
    if missing:
        raise IpoptLibraryError(
            f"{path!r} is not a libipopt with IPOPT's C interface (missing {', '.join(missing)}): "
            "name the libipopt file itself (IPOPT 3.12 or later), not one of its dependencies",
            path=path,
        )
    version = _version(cdll, path)
    # IPOPT 3.14 made Bool a C bool (GetIpoptCurrentIterate came with it); before, Bool was int
    modern = (version is not None and version >= (3, 14, 0)) or hasattr(cdll, "GetIpoptCurrentIterate")
    bool_type = ctypes.c_bool if modern else ctypes.c_int
    _declare(cdll, bool_type)
    return cdll, version, bool_type
