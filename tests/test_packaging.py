"""Packaging: build requirements, license, typing marker, no unused dependency, lint and test targets."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "exprgraph"

#: the import name of each runtime dependency (distribution name -> module)
IMPORT_NAMES = {
    "numpy": "numpy",
    "logical-unification": "unification",
    "etuples": "etuples",
    "cons": "cons",
    "miniKanren": "kanren",
}


@pytest.fixture(scope="module")
def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.-]+", requirement).group()


def _lower_bound(requirements: list[str], name: str) -> tuple[int, ...]:
    found = next(r for r in requirements if _name(r) == name)
    version = re.search(r">=\s*([0-9.]+)", found).group(1)
    return tuple(int(p) for p in version.split("."))


def test_build_requirements(pyproject):
    requires = pyproject["build-system"]["requires"]
    assert _lower_bound(requires, "setuptools") >= (77,)  # reads license = "MIT" (PEP 639)
    assert _lower_bound(requires, "mypy") >= (2, 4)  # mypyc compiles the dims fast path on every build
    assert "wheel" not in {_name(r) for r in requires}  # setuptools builds wheels itself


def test_license_is_mit_and_shipped(pyproject):
    project = pyproject["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Copyright (c)" in text and "the exprgraph authors" in text
    assert "Permission is hereby granted, free of charge" in text


def test_metadata_names_authors_and_topics(pyproject):
    project = pyproject["project"]
    assert project["authors"] and all(a.get("name") for a in project["authors"])
    classifiers = project["classifiers"]
    assert len(classifiers) == len(set(classifiers)) and classifiers == sorted(classifiers)
    for prefix in ("Development Status ::", "Intended Audience ::", "Topic ::", "License ::"):
        # PEP 639: the license is the `license` expression, never a classifier beside it
        assert any(c.startswith(prefix) for c in classifiers) == (prefix != "License ::"), prefix


def test_typing_marker_is_shipped(pyproject):
    assert (PACKAGE / "py.typed").exists()
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["exprgraph"]
    assert "Typing :: Typed" in pyproject["project"]["classifiers"]


def test_every_dependency_is_used(pyproject):
    deps = {_name(r) for r in pyproject["project"]["dependencies"]}
    assert deps == set(IMPORT_NAMES)  # no `packaging`, nothing unlisted here
    sources = "\n".join(p.read_text() for p in PACKAGE.rglob("*.py"))
    for dist, module in IMPORT_NAMES.items():
        assert re.search(rf"^\s*(from|import) {module}\b", sources, re.M), f"{dist} is never imported"


def test_mypy_config_is_strict_enough_and_silences_nothing_wholesale(pyproject):
    mypy = pyproject["tool"]["mypy"]
    assert mypy["files"] == ["src/exprgraph"]
    assert mypy["check_untyped_defs"] is True and mypy["warn_unused_ignores"] is True
    assert "ignore_errors" not in mypy and "ignore_missing_imports" not in mypy
    for override in mypy.get("overrides", []):
        assert "ignore_errors" not in override  # only third-party modules without types are let through
        assert not any(m.startswith("exprgraph") for m in override["module"])
    ignores = [
        (p.name, line) for p in PACKAGE.rglob("*.py") for line in p.read_text().splitlines() if "type: ignore" in line
    ]
    assert all("type: ignore[" in line for _, line in ignores), ignores  # never a bare ignore


def test_make_test_lints_with_mypy_and_test_all_covers_three_pythons():
    makefile = (ROOT / "Makefile").read_text()
    lint = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "$(BIN)/mypy" in lint and "ruff check" in lint
    assert re.search(r"^test: lint suite$", makefile, re.M)
    assert re.search(r"^PYTHONS \?= 3\.11 3\.12 3\.13$", makefile, re.M)
    # one target per version (test-python-3.11...), so `make -j3 test-all` runs them side by side
    assert "test-all: $(addprefix test-python-,$(PYTHONS))" in makefile
    # the other versions run the suite alone: lint's results do not depend on the interpreter
    recipe = r"^test-python-%:\n(\t.*\n)*\t.*\$\(MAKE\).* suite PYTHON=\$\$py VENV=\.venv-\$\*$"
    assert re.search(recipe, makefile, re.M)


def test_compiled_build_is_reproducible_across_directories():
    # the build maps its directories away (checked by building twice: see .ci/check-reproducible)
    setup = (ROOT / "setup.py").read_text()
    assert "-ffile-prefix-map={HERE.resolve()}=." in setup and "=mypyc-lib-rt" in setup
    assert (ROOT / ".ci" / "check-reproducible").exists()


def test_supported_pythons_are_declared(pyproject):
    classifiers = pyproject["project"]["classifiers"]
    for version in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in classifiers
    assert pyproject["project"]["requires-python"] == ">=3.11"
