"""A user's script type-checks against the package (it ships py.typed) and gets precise types.

mypy runs on scripts written to a temporary directory, as a user's would be, against the installed
package; each ``reveal_type`` must show the type written next to it (``Any`` only where a value is
a numpy scalar or array, whose type depends on the data).
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

import exprgraph
from exprgraph import Symbol, dprint

pytest.importorskip("mypy")

ROOT = Path(__file__).resolve().parent.parent
#: mypy's cache for these scripts (kept between runs: a cold check of the package takes ~10-30 s)
CACHE = ROOT / ".mypy_cache" / "user-scripts"

TERM = "exprgraph.core.term.Term"


def _gradient_type() -> str:
    """What ``grad(f)`` is declared to return: a plain dict, or (once grad returns one) a GradientMap."""
    from exprgraph.diff import GradientMap, grad

    return f"GradientMap[{TERM}]" if isinstance(grad(Symbol("a") * 2), GradientMap) else f"dict[{TERM}, {TERM}]"


#: the type ``grad(f)`` reveals
GRADIENT = _gradient_type()

#: a script importing from the subpackages: (line of code, the type mypy must reveal for it)
SUBPACKAGES = [
    "from exprgraph.compile import compile",
    "from exprgraph.core.builders import sin",
    "from exprgraph.core.leaves import Symbol",
    "from exprgraph.core.printing import dprint",
    "from exprgraph.diff import GradientMap, grad, numeric_gradient",
    "from exprgraph.eval import evaluate, evaluate_nodes",
    "a = Symbol('a')",
    "b = Symbol('b', 'float32')",
    "f = sin(a) * b + a**2",
    ("a", TERM),
    ("f", TERM),
    ("sin(a) + 1", TERM),
    ("-a", TERM),
    ("grad(f)", GRADIENT),
    ("grad(f, a)", TERM),
    ("grad(f, [a, b])", f"builtins.list[{TERM}]"),
    ("evaluate(f, {a: 1.0, 'b': 2.0})", "Any"),
    ("evaluate([f, a], {a: 1.0, b: 2.0})", "builtins.list[Any]"),
    ("evaluate(f, {a + b: 1.0}, on_unused_input='raise')", "Any"),
    ("evaluate_nodes(f, {a: 1.0, b: 2.0})", f"builtins.dict[{TERM}, Any]"),
    ("numeric_gradient(f, {a: 1.0, b: 2.0})", "GradientMap[Any]"),
    ("numeric_gradient(f, {a: 1.0, b: 2.0}, [a, b])", "builtins.list[Any]"),
    ("dprint(f, file='str')", "builtins.str"),
    ("compile([a, b], f)", "exprgraph.compile.function.CompiledFunction"),
    "value: float = float(evaluate(f, {a: 1.0, b: 2.0}))",
    "partials: GradientMap[object] = numeric_gradient(f, {a: 1.0, b: 2.0})",
]

#: the issue's script: everything from the top level
TOP_LEVEL = [
    "from exprgraph import Symbol, compile, evaluate, grad, sin, symbols, sum_",
    "x, y = symbols('x y')  # (one term for one name, a tuple for several: the count is in the string)",
    "a = Symbol('a')",
    "f = sin(a) * a + 1",
    ("sin(a)", TERM),
    ("f", TERM),
    ("grad(f)", GRADIENT),
    ("grad(f, a)", TERM),
    ("sum_(a)", TERM),
    ("compile([a], f)", "exprgraph.compile.function.CompiledFunction"),
    ("evaluate([f], {a: 2.0})", "builtins.list[Any]"),
]


def _script(lines: list) -> tuple[str, dict[int, str]]:
    """The script's text, and the type expected on each line holding a reveal_type."""
    text, expected = [], {}
    for item in lines:
        if isinstance(item, tuple):
            expr, revealed = item
            expected[len(text) + 1] = revealed
            text.append(f"reveal_type({expr})")
        else:
            text.append(item.replace("'", '"'))
    return "\n".join(text) + "\n", expected


def _mypy(tmp_path: Path, name: str, lines: list) -> tuple[list[str], dict[int, str], dict[int, str]]:
    """Run mypy on the script: (errors, revealed types by line, expected types by line)."""
    text, expected = _script(lines)
    script = tmp_path / f"{name}.py"
    script.write_text(text)
    CACHE.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(CACHE), "--show-error-codes", "--no-pretty", script.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    revealed: dict[int, str] = {}
    errors: list[str] = []
    for line in done.stdout.splitlines():
        m = re.match(rf"{name}\.py:(\d+): (note|error): (.*)", line)
        if m is None:
            continue
        number, kind, message = int(m.group(1)), m.group(2), m.group(3)
        found = re.fullmatch(r'Revealed type is "(.*)"', message)
        if found is not None:
            # (GradientMap is named by its module, which may move within exprgraph.diff)
            revealed[number] = re.sub(r"exprgraph\.diff\.\w+\.GradientMap", "GradientMap", found.group(1))
            revealed[number] = revealed[number].replace("builtins.", "")
        elif kind == "error":
            errors.append(line)
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 2: mypy itself failed
    return errors, revealed, {k: v.replace("builtins.", "") for k, v in expected.items()}


def test_a_script_importing_the_subpackages_gets_precise_types(tmp_path: Path) -> None:
    errors, revealed, expected = _mypy(tmp_path, "user_subpackages", SUBPACKAGES)
    assert errors == []
    assert revealed == expected


def _literal_all(path: Path) -> bool:
    """Whether the module's ``__all__`` is one list of string literals (the only form type checkers read)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            value = node.value
            return isinstance(value, ast.List) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
            )
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == "__all__":
            return False
    return False


PACKAGE = Path(exprgraph.__file__).parent


def test_the_top_level_export_lists_are_literal() -> None:
    # mypy reads only a literal __all__: one built at run time hides every name from a user's checker
    for path in ("__init__.py", "core/__init__.py", "core/builders.py"):
        assert _literal_all(PACKAGE / path), path


def test_the_issues_script_importing_from_the_top_level_gets_precise_types(tmp_path: Path) -> None:
    errors, revealed, expected = _mypy(tmp_path, "user_top_level", TOP_LEVEL)
    assert errors == []
    assert revealed == expected


def test_the_all_lists_are_what_the_modules_export() -> None:
    # whatever their form, the lists name what the modules hold, and the top level holds core's names
    import exprgraph.core as core
    from exprgraph.core import builders

    assert set(core.__all__) <= set(exprgraph.__all__)
    assert {"sum_", "abs_", "pow_"} <= set(builders.__all__) and not {"sum", "abs", "pow"} & set(builders.__all__)
    for module in (exprgraph, core, builders):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == [], module.__name__


def test_dprint_returns_the_text_for_str_and_prints_otherwise() -> None:
    x = Symbol("x")
    t = x * x + 1
    text = dprint(t, file="str")
    assert isinstance(text, str) and text.splitlines()[0] == "add float64" and not text.endswith("\n")
    stream = io.StringIO()
    assert dprint(t, file=stream) is None
    assert stream.getvalue() == text + "\n"
    assert dprint([t, x], file="str", ids="int").count("\n") >= 3  # dformat's options pass through
    with pytest.raises(ValueError, match="'str'"):
        dprint(t, file="text")  # type: ignore[call-overload]
    # the same contract as a FunctionGraph's dprint
    from exprgraph.graph import FunctionGraph

    assert FunctionGraph(outputs=[t]).dprint(file="str") == text
