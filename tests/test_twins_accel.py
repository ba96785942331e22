"""exprgraph.accel: one table of the modules mypyc compiles, one choice for the whole group."""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import os
import subprocess
import sys
from pathlib import Path

import pytest

from exprgraph import accel
from exprgraph.dims import accel as dims_accel


def _package(tmp_path: Path, name: str, mtime: float) -> Path:
    """A package ``name`` whose module ``mod`` is source (VALUE = 'source') beside a broken compiled file."""
    directory = tmp_path / name
    directory.mkdir()
    (directory / "__init__.py").write_text("")
    source = directory / "mod.py"
    source.write_text("VALUE = 'source'\n")
    compiled = directory / f"mod{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    compiled.write_bytes(b"not a shared object")  # importing it fails: a successful import came from source
    os.utime(source, (1_000_000, 1_000_000))
    os.utime(compiled, (mtime, mtime))
    return directory


def test_one_stale_module_serves_every_module_of_the_group_from_source(tmp_path, monkeypatch):
    fresh = _package(tmp_path, "freshpkg", 1_000_100)  # built after its source
    stale = _package(tmp_path, "stalepkg", 999_000)  # built before its source was edited
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.delenv(accel.PURE_ENV, raising=False)
    with pytest.warns(RuntimeWarning, match=r"stalepkg\.mod is missing or older than its source"):
        assert accel.select_group([("freshpkg", fresh, ["mod"]), ("stalepkg", stale, ["mod"])]) is True
    # the fresh package's compiled module would call the stale one's compiled code: both run from source
    assert importlib.import_module("freshpkg.mod").VALUE == "source"
    assert importlib.import_module("stalepkg.mod").VALUE == "source"


def test_a_fresh_group_keeps_its_compiled_modules(tmp_path, monkeypatch):
    one = _package(tmp_path, "onepkg", 1_000_100)
    two = _package(tmp_path, "twopkg", 1_000_100)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.delenv(accel.PURE_ENV, raising=False)
    assert accel.select_group([("onepkg", one, ["mod"]), ("twopkg", two, ["mod"])]) is False
    for name in ("onepkg.mod", "twopkg.mod"):
        with pytest.raises(ImportError):  # Python tries the (broken) compiled file first
            importlib.import_module(name)


def test_the_table_is_a_literal_setup_can_read():
    # setup.py reads COMPILED_MODULES and GROUP from the file's text, before anything is importable
    tree = ast.parse(Path(accel.__file__).read_text())
    values = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id in ("COMPILED_MODULES", "GROUP"):
                values[target.id] = ast.literal_eval(node.value)
    assert values == {"COMPILED_MODULES": accel.COMPILED_MODULES, "GROUP": accel.GROUP}
    assert accel.COMPILED_MODULES["poly"][:2] == ("monomials", "ring")  # the ring first: dims' modules call it
    assert {"monomials", "ring"} <= set(accel.COMPILED_MODULES["dims"])
    assert dims_accel.COMPILED_MODULES == accel.COMPILED_MODULES["dims"]
    for package, names in accel.COMPILED_MODULES.items():
        for name in names:
            assert (Path(accel.__file__).parent / package / f"{name}.py").exists(), (package, name)


def test_the_build_is_compiled_all_or_nothing():
    poly, dims = accel.compiled_modules("poly"), accel.compiled_modules("dims")
    interop = accel.compiled_modules("interop")  # the reader of torch's expressions
    rules, simplify = accel.compiled_modules("rules"), accel.compiled_modules("simplify")  # the canonical pass
    if accel.PURE:
        assert poly == dims == interop == rules == simplify == ()
    else:
        assert poly == accel.COMPILED_MODULES["poly"] and dims == accel.COMPILED_MODULES["dims"]
        assert interop == accel.COMPILED_MODULES["interop"]
        assert rules == accel.COMPILED_MODULES["rules"] and simplify == accel.COMPILED_MODULES["simplify"]


def test_the_pure_switch_reaches_poly_in_a_fresh_process():
    code = "from exprgraph import accel, poly; print(accel.PURE, accel.compiled_modules('poly'))"
    env = {**os.environ, accel.PURE_ENV: "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "()"]


@pytest.mark.parametrize("package", ["rules", "simplify"])
def test_the_pure_switch_reaches_the_canonical_pass_imported_first(package):
    # importing a compiled module of rules or simplify before anything else still lets accel choose first
    first = f"exprgraph.{package}.{accel.COMPILED_MODULES[package][0]}"
    code = f"import {first}; from exprgraph import accel; print(accel.PURE, accel.compiled_modules({package!r}))"
    env = {**os.environ, accel.PURE_ENV: "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "()"]
