"""The import graph of exprgraph: three stacks on one core, no cycle, rooms of readable size, twins declared.

Every ``import`` in ``src/exprgraph`` is read from the source (function-local ones too; those under
``if TYPE_CHECKING:`` are for the type checker only and are skipped). ``MAY_USE`` says, for each
package, which packages it builds on directly; it may import those and everything they build on
(the closure), never anything else, and no chain of imports may lead back to where it started. A
submodule that imports its own package (``from . import name`` for a name its ``__init__``
re-exports) closes a cycle through that ``__init__``: import the sibling module instead. The
fast paths and their twins are the table of ``exprgraph.twins``. Inside ``dims``, every module is in
one stage of ``exprgraph.dims.stages.STAGES`` and imports none of a later stage (docs/architecture.md
and docs/dims.md draw all this).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from exprgraph import accel
from exprgraph.dims.stages import STAGES, stage_of
from exprgraph.twins import TWINS

SRC = Path(__file__).resolve().parent.parent / "src"
ROOT = "exprgraph"
TESTS = Path(__file__).resolve().parent

#: the base every package may use: error classes, progress reports, the console helpers, the twins table,
#: the choice between compiled modules and their sources
BASE = {"errors", "progress", "console", "twins", "accel"}
#: each package and the packages it builds on directly (besides the base); it may import their closure
MAY_USE: dict[str, set[str]] = {
    "core": set(),
    # integers and polynomials: one polynomial module directly above core, the integer algebra on its ring
    "poly": {"core"},
    "dims": {"core", "poly"},
    # rewriting: patterns, rules, the simplifier (integer subterms go to dims), graphs, e-graphs
    "match": {"core"},
    "rules": {"match"},
    "simplify": {"rules", "eval", "dims", "poly"},
    "graph": {"simplify"},
    "egraph": {"graph"},
    # numerics: evaluation, derivatives (diff's command line simplifies), code generation, kernels
    "eval": {"core"},
    "diff": {"eval", "simplify"},
    "compile": {"eval"},
    "tensor": {"diff", "compile", "dims"},
    "optimize": {"diff", "compile"},
    # the edges: converters and dask, the command line and the tour
    "interop": {"graph", "dims", "eval"},
    "dask": {"interop"},
    "cli": {"(top)"},
    "demo": {"tensor", "egraph", "interop"},
    "__main__": {"cli"},
    "(top)": {"tensor", "egraph", "interop", "dask", "optimize"},
}
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / ROOT).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()
#: C extension modules (``name.c`` built as ``name``): they import no exprgraph module
EXTENSIONS = {".".join(p.relative_to(SRC).with_suffix("").parts) for p in (SRC / ROOT).rglob("*.c")}


def package_of(module: str) -> str:
    """The first component under ``exprgraph`` (``(top)`` for the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(top)"


def _closure(package: str) -> set[str]:
    """The packages ``package`` may import: what it builds on, what those build on, and the base."""
    if package in BASE:
        return set(BASE)
    if package not in MAY_USE:
        raise AssertionError(f"package {package!r} is in no stack of tests/test_architecture.py (MAY_USE)")
    found: set[str] = set()
    stack = [package]
    while stack:
        for used in MAY_USE[stack.pop()]:
            if used not in found:
                found.add(used)
                stack.append(used)
    return found | BASE | {package}


def may_import(package: str, target: str) -> bool:
    """Whether a module of ``package`` may import a module of ``target``."""
    return target in _closure(package)


def _runtime_nodes(tree: ast.Module) -> Iterator[ast.AST]:
    """Every node of ``tree`` outside ``if TYPE_CHECKING:`` blocks."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def imports_in(source: str, module: str, is_package: bool) -> dict[str, int]:
    """The exprgraph modules ``source`` (the text of ``module``) imports, each with its first line."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    found: dict[str, int] = {}
    for node in _runtime_nodes(ast.parse(source)):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                stem = base[: len(base) - node.level + 1]
                target = ".".join(stem + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in EXTENSIONS:
                    continue  # an extension module imports nothing: no edge that could close a cycle
                targets.append(sub if sub in MODULES else target)
        elif isinstance(node, ast.Import):
            targets.extend(alias.name for alias in node.names)
        for target in targets:
            if target in MODULES and target != module:
                found.setdefault(target, getattr(node, "lineno", 0))
    return found


def imports_of(module: str) -> dict[str, int]:
    """The exprgraph modules ``module`` imports, each with the line of its first import."""
    path = MODULES[module]
    return imports_in(path.read_text(), module, path.name == "__init__.py")


GRAPH = {module: imports_of(module) for module in MODULES}
PACKAGES = sorted({package_of(m) for m in MODULES} - {"(top)"})


def _check(check: str, package: str, problems: list[str]) -> None:
    assert not problems, f"{check} in {package}:\n" + "\n".join(problems)


def test_every_package_is_placed_and_the_stacks_have_no_cycle() -> None:
    for module in MODULES:
        _closure(package_of(module))
    uses = {p: {u: 1 for u in used} for p, used in MAY_USE.items()}
    assert cycles_of(uses) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_go_only_downward(package: str) -> None:
    problems = []
    for module, targets in GRAPH.items():
        if package_of(module) != package:
            continue
        for target, line in targets.items():
            if not may_import(package, package_of(target)):
                problems.append(f"{MODULES[module].relative_to(SRC)}:{line} imports {target} (not below it)")
    _check("downward", package, problems)


def cycles_of(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


CYCLES = cycles_of(GRAPH)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(package: str) -> None:
    problems = [" <-> ".join(c) for c in CYCLES if any(package_of(m) == package for m in c)]
    _check("cycles", package, problems)


@pytest.mark.parametrize("package", PACKAGES)
def test_modules_and_functions_are_small(package: str) -> None:
    problems = []
    for module, path in MODULES.items():
        if package_of(module) != package:
            continue
        text = path.read_text()
        lines = text.count("\n")
        if lines > MAX_MODULE_LINES:
            problems.append(f"{path.relative_to(SRC)} has {lines} lines (at most {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    problems.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name} has {size} lines")
    _check("sizes", package, problems)


def test_the_reader_resolves_relative_imports_and_skips_type_checking() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from ..graph import fgraph\n"
        "from . import term\n"
        "def f():\n    from ..errors import ParseError\n"
        "if TYPE_CHECKING:\n    from ..cli import main\n"
    )
    found = imports_in(source, "exprgraph.core.anything", is_package=False)
    assert found == {"exprgraph.graph.fgraph": 2, "exprgraph.core.term": 3, "exprgraph.errors": 5}


def test_cycles_are_found_and_a_dag_has_none() -> None:
    ring = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert cycles_of(ring) == [["a", "b", "c"]]
    assert cycles_of({"a": {"b": 1}, "b": {}, "d": {"a": 1, "b": 1}}) == []
    chain = {str(i): {str(i + 1): 1} for i in range(10**5)} | {str(10**5): {"0": 1}}
    assert len(cycles_of(chain)[0]) == 10**5 + 1


# -- the twins table (exprgraph.twins) -------------------------------------------------------------


def _fast_files() -> set[str]:
    return {f for twin in TWINS if twin.kind == "C" for f in twin.fast}


def test_every_c_file_is_a_declared_twin() -> None:
    on_disk = {str(p.relative_to(SRC / ROOT)) for p in (SRC / ROOT).rglob("*.[ch]")}
    assert on_disk == _fast_files(), "list each C source in exprgraph.twins.TWINS (and remove the gone ones)"


def _mypyc_twin_modules() -> set[str]:
    """The modules the mypyc twins name: a ``...COMPILED_MODULES`` entry stands for the modules it lists."""
    found = set()
    for twin in TWINS:
        if twin.kind != "mypyc":
            continue
        for name in twin.fast:
            if name.endswith(".COMPILED_MODULES"):
                owner = importlib.import_module(name.rpartition(".")[0])
                package = owner.__name__.rpartition(".")[0]
                found |= {f"{package}.{m}" for m in owner.COMPILED_MODULES}
            else:
                found.add(name)
    return found


def test_every_compiled_module_is_a_declared_twin() -> None:
    listed = {f"{ROOT}.{package}.{name}" for package, names in accel.COMPILED_MODULES.items() for name in names}
    assert _mypyc_twin_modules() == listed, "name each module of exprgraph.accel.COMPILED_MODULES in a mypyc twin"
    extensions = {f.split("/")[0] + "." + Path(f).stem for f in _fast_files() if f.endswith(".c")}
    for built in (SRC / ROOT).rglob("*.so"):
        package = built.parent.name
        stem = built.name.split(".")[0]
        assert f"{package}.{stem}" in extensions or stem in accel.COMPILED_MODULES.get(package, ()), built


def test_every_shortcut_names_code_that_exists() -> None:
    for twin in TWINS:
        if twin.kind != "shortcut":
            continue
        for name in twin.fast:
            module, _, attr = name.rpartition(".")
            while module not in _IMPORTABLE and "." in module:  # a method: Class.method
                module, _, owner = module.rpartition(".")
                attr = f"{owner}.{attr}"
            found: object = importlib.import_module(module)
            for part in attr.split("."):
                found = getattr(found, part)
            assert callable(found), name


_IMPORTABLE = set(MODULES)


@pytest.mark.parametrize("test", sorted({t for twin in TWINS for t in twin.tests}))
def test_every_twin_test_exists(test: str) -> None:
    path, _, name = test.partition("::")
    source = (TESTS.parent / path).read_text()
    assert f"def {name}(" in source, f"{test} is named in exprgraph.twins but not defined"


def test_every_twin_says_how_to_switch_and_what_it_is() -> None:
    for twin in TWINS:
        assert twin.kind in ("C", "mypyc", "shortcut") and twin.fast and twin.twin and twin.switch and twin.tests


# -- the stages of dims (exprgraph.dims.stages) ------------------------------------------------------

DIMS = f"{ROOT}.dims"


def _dims_modules() -> dict[str, str]:
    """Each module of exprgraph.dims by its short name (``__init__`` for the package)."""
    return {("__init__" if m == DIMS else m.rpartition(".")[2]): m for m in MODULES if package_of(m) == "dims"}


def test_every_dims_module_is_in_exactly_one_stage() -> None:
    listed = [name for _, names in STAGES for name in names]
    assert len(listed) == len(set(listed)), "a module is in two stages of exprgraph.dims.stages.STAGES"
    assert set(listed) == set(_dims_modules()), "list each dims module in one stage (and remove the gone ones)"


def test_dims_imports_never_reach_a_later_stage() -> None:
    problems = []
    for name, module in _dims_modules().items():
        for target, line in GRAPH[module].items():
            if package_of(target) != "dims":
                continue
            target_name = "__init__" if target == DIMS else target.rpartition(".")[2]
            if stage_of(target_name) > stage_of(name):
                stage, later = STAGES[stage_of(name)][0], STAGES[stage_of(target_name)][0]
                problems.append(f"{MODULES[module].relative_to(SRC)}:{line} ({stage}) imports {target} ({later})")
    _check("stages", "dims", problems)


def _function_imports(source: str) -> list[int]:
    """The lines of imports inside functions (outside ``if TYPE_CHECKING:``)."""
    lines = []
    for node in _runtime_nodes(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in _runtime_nodes(ast.Module(body=node.body, type_ignores=[])):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    lines.append(inner.lineno)
    return sorted(set(lines))


def test_dims_has_no_function_local_import() -> None:
    problems = [
        f"{MODULES[module].relative_to(SRC)}:{line}"
        for module in _dims_modules().values()
        for line in _function_imports(MODULES[module].read_text())
    ]
    _check("function-local imports (move the code to the right stage instead)", "dims", problems)


def test_the_stage_check_sees_function_level_imports() -> None:
    source = "def f():\n    from .queries import DimEnv\n"
    assert imports_in(source, f"{DIMS}.normal", is_package=False) == {f"{DIMS}.queries": 2}
    assert _function_imports(source) == [2]
    assert stage_of("queries") > stage_of("normal")


# -- one ring (exprgraph.poly.ring), which dims uses -------------------------------------------------

POLY_RING = (f"{ROOT}.poly.ring", f"{ROOT}.poly.monomials")
#: what dims' ring module adds over poly's ring: its budget (a subclass), its integer product, and
#: three functions that call the ring's own with dims' bound on constant powers
DIMS_RING_EXTRAS = {"Budget", "times", "int_power", "split_factors", "p_product"}
DIMS_RING_WRAPPERS = {"int_power", "split_factors", "p_product"}


def _defined(module: str) -> dict[str, ast.AST]:
    """The functions and classes defined at the top of ``module``."""
    tree = ast.parse(MODULES[module].read_text())
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def test_the_polynomial_ring_of_dims_stands_alone() -> None:
    """dims' ring and monomials import no dims module but each other (and poly's ring)."""
    ring = {f"{DIMS}.ring", f"{DIMS}.monomials"}
    for module in ring:
        inside = {t for t in GRAPH[module] if package_of(t) == "dims"}
        assert inside <= ring, f"{module} imports {sorted(inside - ring)}"


def test_there_is_one_ring() -> None:
    """No module outside poly's ring defines a function of the ring again; dims' ring holds only its extras."""
    ring_names = {name for module in POLY_RING for name in _defined(module)}
    problems = []
    for module in MODULES:
        if module in POLY_RING or package_of(module) not in ("dims", "poly"):
            continue
        for name in sorted(set(_defined(module)) & ring_names):
            if not (module == f"{DIMS}.ring" and name in DIMS_RING_EXTRAS):
                problems.append(
                    f"{MODULES[module].relative_to(SRC)} defines {name}, a function of exprgraph.poly's ring"
                )
    _check("a second ring", "dims", problems)
    assert set(_defined(f"{DIMS}.ring")) == DIMS_RING_EXTRAS, "dims' ring adds only its limits over poly's ring"
    assert not _defined(f"{DIMS}.monomials"), "dims' monomials are poly's"


def test_dims_ring_wrappers_call_the_ring() -> None:
    """Each wrapper of dims' ring calls poly's function of its name (it adds a limit, not an algorithm)."""
    defined = _defined(f"{DIMS}.ring")
    for name in DIMS_RING_WRAPPERS:
        calls = {
            node.func.attr
            for node in ast.walk(defined[name])
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "ring"
        }
        assert calls == {name}, f"dims.ring.{name} calls ring.{sorted(calls)}"


def test_dims_ring_operations_are_poly_ring_objects() -> None:
    """The ring operations dims imports are the very functions of exprgraph.poly (not copies)."""
    dims_ring = importlib.import_module(f"{DIMS}.ring")
    dims_monomials = importlib.import_module(f"{DIMS}.monomials")
    poly_ring = importlib.import_module(f"{ROOT}.poly.ring")
    poly_monomials = importlib.import_module(f"{ROOT}.poly.monomials")
    poly_division = importlib.import_module(f"{ROOT}.poly.division")
    assert dims_ring.Poly is dict  # dims types its polynomials as plain dicts: the ring's, unchecked
    for name in set(dims_ring.__all__) - DIMS_RING_EXTRAS - {"Poly", "MAX_WORK", "MAX_POWER_BITS"}:
        source = poly_division if name == "p_exact_div" else poly_ring
        assert getattr(dims_ring, name) is getattr(source, name), name
    for name in dims_monomials.__all__:
        assert getattr(dims_monomials, name) is getattr(poly_monomials, name.lstrip("_"))
    assert issubclass(dims_ring.Budget, poly_ring.Budget)
