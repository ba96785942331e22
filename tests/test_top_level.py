"""The top level a newcomer meets: functions where functions are expected, a star import that
shadows no builtin, names accepted as evaluate accepts them, compile's argument order, pi and e."""

from __future__ import annotations

import builtins
import importlib
import math
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import exprgraph as eg
from exprgraph import Symbol, parse, symbols

x, y = symbols("x y")

#: the modules our docs star-import
STAR_MODULES = ["exprgraph", "exprgraph.core", "exprgraph.dims", "exprgraph.match", "exprgraph.rules",
                "exprgraph.graph", "exprgraph.interop"]  # fmt: skip


# -- simplify, compile, grad are functions -----------------------------------------------------------


def test_simplify_compile_and_grad_are_callables_at_the_top_level():
    assert isinstance(eg.simplify, types.FunctionType) and isinstance(eg.compile, types.FunctionType)
    assert str(eg.simplify(x * 1 + 0 + x)) == "2*x"
    assert float(eg.compile(x * y, [x, y])(2.0, 3.0)) == 6.0
    assert eg.grad(x * y, x) is y
    # the subpackages keep their module paths for from-imports
    from exprgraph.compile import CompiledFunction
    from exprgraph.compile import compile as compile_fn
    from exprgraph.simplify import rules, simplify

    assert simplify is eg.simplify and compile_fn is eg.compile and callable(rules)
    assert isinstance(eg.compile(x, [x]), CompiledFunction)
    assert isinstance(importlib.import_module("exprgraph.simplify"), types.ModuleType)


def test_importing_a_submodule_later_does_not_rebind_the_functions():
    # importing a package's submodule for the first time sets the package as an attribute of its
    # parent: the top level imports both subpackages first, so nothing can replace the functions
    code = textwrap.dedent(
        """
        import exprgraph, types
        import exprgraph.compile.c_backend, exprgraph.simplify.cli, exprgraph.compile.llvm_emit
        from exprgraph.simplify import canonical
        assert isinstance(exprgraph.simplify, types.FunctionType), exprgraph.simplify
        assert isinstance(exprgraph.compile, types.FunctionType), exprgraph.compile
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


# -- no builtin shadowed --------------------------------------------------------------------------------


@pytest.mark.parametrize("module", STAR_MODULES)
def test_star_import_shadows_no_builtin(module):
    namespace: dict = {}
    exec(f"from {module} import *", namespace)  # the one way to test a star import
    shadowed = sorted(name for name in namespace if name != "__builtins__" and hasattr(builtins, name))
    assert shadowed == []


def test_builtin_named_ops_are_exported_with_an_underscore():
    namespace: dict = {}
    exec("from exprgraph import *", namespace)
    A = Symbol("A", shape=(2, 3))
    assert namespace["sum_"] is eg.sum is eg.get_op("sum")
    assert namespace["abs_"] is eg.abs and namespace["pow_"] is eg.pow
    assert namespace["sum_"](A, axis=0).shape == (3,)
    # the builtins themselves build the same terms through the operators
    assert abs(x) is eg.abs(x) and pow(x, 2) is eg.pow(x, 2)
    assert "compile" not in eg.__all__ and "simplify" in eg.__all__ and "grad" in eg.__all__
    from exprgraph import sum as plain_sum  # the plain names stay importable

    assert plain_sum is eg.sum


# -- substitute takes names -----------------------------------------------------------------------------


def test_substitute_accepts_names_as_evaluate_does():
    f = x * y + eg.sin(x)
    assert eg.substitute(f, {"x": 2}) is eg.substitute(f, {x: 2})
    assert str(eg.substitute(f, {"x": 2})) == "2*y + sin(2)"
    assert eg.substitute(f, {"x": y, "y": 3.0}) is y * 3.0 + eg.sin(y)
    assert eg.substitute(f, {"x": 1, x: 5}) is eg.substitute(f, {x: 5})  # a term key wins over its name
    assert eg.substitute(f, {"z": 1}) is f  # a name the term does not use changes nothing, like a term key
    n = Symbol("n", "int64")
    assert eg.substitute(n * x, {"n": 3}) is eg.const(3) * x
    g = eg.substitute(f, {"x": 0.5})
    assert float(eg.evaluate(g, {"y": 4.0})) == float(eg.evaluate(f, {"x": 0.5, "y": 4.0}))


# -- compile's signature ----------------------------------------------------------------------------------


def test_compile_takes_outputs_and_inputs_by_position_or_keyword():
    outs = [x * y + eg.sin(x), x - y]
    by_position = eg.compile(outs, [x, y])
    by_keyword = eg.compile(inputs=[x, y], outputs=outs)
    mixed = eg.compile(outs, inputs=[x, y])
    points = np.array([0.5, 2.0, -1.0]), np.array([3.0, -0.25, 4.0])
    for f in (by_keyword, mixed):
        for got, want in zip(f(*points), by_position(*points), strict=True):
            np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError):
        eg.compile(outs)  # inputs are required


# -- pi and e -----------------------------------------------------------------------------------------------


def test_parse_reads_pi_and_e_as_the_constants():
    r = Symbol("r")
    assert parse("2*pi*r") is eg.mul(2, eg.exact_constant("pi"), r)  # exact until evaluated
    assert parse("e**x") is eg.exact_constant("e") ** x
    assert float(eg.evaluate(parse("sin(pi/2) + log(e)"), {})) == 2.0
    assert float(eg.evaluate(parse("pi"), {})) == math.pi
    assert parse("pi", strict=True) is eg.exact_constant("pi")  # a constant is not an unknown name


def test_names_pi_and_e_for_symbols():
    s = Symbol("e")  # a float symbol named e prints quoted: bare e in text is Euler's number
    assert str(s * 2) == "`e`*2" and parse(str(s * 2)) is s * 2
    assert symbols("x pi")[1] is Symbol("pi")
    # int64 and bool symbols may take them (dimension names): int and bool parses read them as names
    e = Symbol("e", "int64")
    assert parse("e + 1", dtype="int64") is e + 1
    assert parse(str(e * 2 + 1), dtype="int64") is e * 2 + 1
    assert parse("pi", dtype="bool") is Symbol("pi", "bool")
    assert parse("e*x", symbols=[e]) is e * parse("x")  # a symbol given in symbols= is used


# -- printing n-ary ops --------------------------------------------------------------------------------------


def test_nary_ops_print_in_infix_and_read_back():
    t = eg.mul(x, y, eg.sin(x * y))
    assert str(t) == "x*y*sin(x*y)" and parse(str(t)) is t
    # safe simplify keeps the rule's product order (x*y*c may overflow where (x*c)*y does not)
    assert str(eg.simplify(eg.grad(eg.sin(x * y) * x, x))) == "(x*cos(x*y))*y + sin(x*y)"
    # unsafe: one node less by sharing x*y with the sine
    assert str(eg.simplify(eg.grad(eg.sin(x * y) * x, x), unsafe=True)) == "(x*y)*cos(x*y) + sin(x*y)"
    nested = (x * y) * eg.sin(x * y)  # Python's grouping: a product of a product
    assert str(nested) == "(x*y)*sin(x*y)" and parse(str(nested)) is nested
