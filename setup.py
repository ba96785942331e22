"""Build hook: compile the C term base, the C sweeps of diff, the polynomial ring and dims' fast path when it can.

Everything else about the package is in pyproject.toml. ``src/exprgraph/core/_cterm*.c`` (the
interned term node, see ``exprgraph.core.termbase``) and ``src/exprgraph/diff/_csweep*.c`` (the
reverse and forward sweeps and the dependency sets, see ``exprgraph.diff.sweep``; it reaches the
term through the term base's capsule) are compiled by the system C compiler. The modules listed in
``exprgraph.accel.COMPILED_MODULES`` (poly's ring and monomials, and dims' modules that call them)
are compiled to C by mypyc (a build-time tool, in the build requirements), as one group, and by
the system C compiler. The build falls back to pure Python, with a
note on stderr, when ``EXPRGRAPH_PURE_PYTHON`` is set, when mypyc cannot be imported, or when the
C compiler fails (the extensions are optional); the pure modules behave the same, only slower.
The C extensions (the term base, the sweeps, the vm's machine in ``src/exprgraph/compile/_cvm*.c``)
are built whenever a C compiler works, with or without mypyc; each one falls back to its Python twin
on its own (``exprgraph.twins`` lists every pair).
"""

from __future__ import annotations

import ast
import ctypes.util
import os
import sys
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).parent
PACKAGE_DIR = Path("src", "exprgraph")
#: the names EXPRGRAPH_BUILD_ONLY accepts for the mypyc group (besides "core" and "diff")
MYPYC_PARTS = {"mypyc", "dims", "poly"}


def _accel_literals() -> tuple[dict[str, tuple[str, ...]], str]:
    """``COMPILED_MODULES`` and ``GROUP`` of exprgraph/accel.py, read as literals (nothing is importable yet)."""
    found: dict[str, object] = {}
    for node in ast.parse((HERE / PACKAGE_DIR / "accel.py").read_text()).body:
        target: ast.expr
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign):
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id in ("COMPILED_MODULES", "GROUP"):
            found[target.id] = ast.literal_eval(value)
    if set(found) != {"COMPILED_MODULES", "GROUP"}:
        raise RuntimeError("exprgraph/accel.py has no COMPILED_MODULES table or GROUP name")
    return found["COMPILED_MODULES"], found["GROUP"]  # type: ignore[return-value]


def _compiled_sources() -> list[str]:
    """The source files mypyc compiles, package by package in the table's order."""
    table, _ = _accel_literals()
    return [str(PACKAGE_DIR / package / f"{name}.py") for package, names in table.items() for name in names]


def _ext_modules() -> list:
    if os.environ.get("EXPRGRAPH_PURE_PYTHON"):
        print("exprgraph: EXPRGRAPH_PURE_PYTHON is set, building pure Python", file=sys.stderr)
        return []
    # a developer's quick rebuild: "core", "diff", "compile" (the vm), "interop" (the torch fast path), "dims" or
    # "poly" (the mypyc group)
    only = os.environ.get("EXPRGRAPH_BUILD_ONLY")
    parts = {"core": _term_extension, "diff": _sweep_extension, "compile": _vm_extension, "interop": _torch_extension}
    if only:
        wanted = set(only.split(","))
        return [make() for name, make in parts.items() if name in wanted] + (
            _mypyc_extensions() if wanted & MYPYC_PARTS else []
        )
    return [*(make() for make in parts.values()), *_mypyc_extensions()]


def _c_extension(package: str, stem: str, headers: list[Path]) -> Extension:
    """``exprgraph.<package>.<stem>`` from the package's ``<stem>*.c`` (optional: else its Python twin runs)."""
    here = Path("src", "exprgraph", package)
    return Extension(
        f"exprgraph.{package}.{stem}",
        sorted(str(p) for p in here.glob(f"{stem}*.c")),
        depends=[str(h) for h in headers],
        optional=True,
        extra_compile_args=["-O2", "-fvisibility=hidden", *_reproducible_flags()],
    )


def _term_extension() -> Extension:
    """The C term base (its twin: the pure Python base of ``core/termbase.py``)."""
    core = Path("src", "exprgraph", "core")
    return _c_extension("core", "_cterm", [core / "_cterm.h", core / "_cterm_api.h"])


def _sweep_extension() -> Extension:
    """The C sweeps of diff (their twins: the Python sweeps of ``diff/``); the term struct comes from core's header."""
    core, diff = Path("src", "exprgraph", "core"), Path("src", "exprgraph", "diff")
    ext = _c_extension("diff", "_csweep", [diff / "_csweep.h", core / "_cterm_api.h"])
    # the Hessian's scatter-add (_csweep_assemble.c) rounds as numpy's bincount: no fused multiply-add
    ext.extra_compile_args = [*ext.extra_compile_args, "-ffp-contract=off"]
    return ext


def _vm_extension() -> Extension:
    """The vm backend's register machine (its twin: the numpy backend, see ``compile/vm.py``), and the walk and
    straight-line encoding that feed it (``_cvm_walk.c``, ``_cvm_walked.c``, ``_cvm_encode.c``; twins in lower.py and
    vm_encode.py).

    Without -fno-math-errno libm calls would set errno; without -ffp-contract=off a multiply-add could be
    fused, giving other roundings than the C backend's (which builds with both).
    """
    core = Path("src", "exprgraph", "core")
    here = Path("src", "exprgraph", "compile")
    ext = _c_extension(
        "compile", "_cvm", [here / "_cvm.h", here / "_cvm_terms.h", here / "_cvm_encode.h", core / "_cterm_api.h"]
    )
    ext.extra_compile_args = [*ext.extra_compile_args, "-fno-math-errno", "-ffp-contract=off", "-fopenmp-simd"]
    if sys.platform == "linux" and os.uname().machine == "x86_64" and ctypes.util.find_library("mvec"):
        # glibc's vector math: the lane loops call its SIMD variants, as the C backend's loops do
        ext.extra_compile_args.append("-DEG_VM_MVEC")
        ext.extra_link_args = ["-lmvec"]
    return ext


def _torch_extension() -> Extension:
    """torch's common dimension questions answered by intervals in C (its twin: TorchDims' Python road, see
    ``interop/torch_fast.py``)."""
    return _c_extension("interop", "_torch_fast", [Path("src", "exprgraph", "interop", "_torch_fast.h")])


def _mypyc_extensions() -> list:
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("exprgraph: mypyc is not available, building pure Python", file=sys.stderr)
        return []
    # the modules they import are checked too, but only the compiled ones must type-check cleanly;
    # mypyc stops at any message, so the lint-only warnings of [tool.mypy] (an unused ignore under
    # another mypy version) are off here, and the runtime dependencies, absent from an isolated
    # build environment (numpy), are read as untyped (compiled code treats their values as objects)
    args = [
        "--follow-imports=silent",
        "--no-warn-unused-ignores",
        "--ignore-missing-imports",
        *_compiled_sources(),
    ]
    old = Path.cwd()
    os.chdir(HERE)  # mypyc names modules by their paths from here
    try:
        # its C goes to a directory of this interpreter's own: `make -j2 test-all` builds two at once
        target = f"build/mypyc-{sys.implementation.cache_tag}"
        extensions = mypycify(args, opt_level="3", group_name=_accel_literals()[1], target_dir=target)
    except (Exception, SystemExit) as exc:  # a type error (mypyc exits) or a mypyc fault: pure still works
        print(f"exprgraph: mypyc failed ({exc}), building pure Python", file=sys.stderr)
        return []
    finally:
        os.chdir(old)
    for ext in extensions:
        ext.optional = True  # a C compiler failure skips the extension instead of failing the build
        ext.extra_compile_args = [*(ext.extra_compile_args or []), *_reproducible_flags()]
    return extensions


def _reproducible_flags() -> list[str]:
    """Compiler flags that keep the build's directories out of the binaries (same bytes from any checkout).

    The source tree and mypyc's runtime sources (in the build's temporary environment) are named in
    debug information and ``__FILE__``; both are mapped to fixed relative names.
    """
    if sys.platform == "win32":
        return []
    flags = [f"-ffile-prefix-map={HERE.resolve()}=."]
    try:
        import mypyc
    except ImportError:
        return flags
    runtime = Path(mypyc.__file__).resolve().parent / "lib-rt"
    return [*flags, f"-ffile-prefix-map={runtime}=mypyc-lib-rt"]


setup(ext_modules=_ext_modules())
