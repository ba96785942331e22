"""The torch bridge on a real ShapeEnv (skipped without torch): its expressions read, its answers given."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
sympy = pytest.importorskip("sympy")

from torch._dynamo.source import ConstantSource  # noqa: E402
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv  # noqa: E402
from torch.utils._sympy import functions as tf  # noqa: E402

from exprgraph.dims import evaluate_expression  # noqa: E402
from exprgraph.interop.torch import from_shape_env, read_torch_expr  # noqa: E402


@pytest.fixture(scope="module")
def env() -> tuple:
    se = ShapeEnv()
    a = se.create_symbol(8, ConstantSource("a"), dynamic_dim=DimDynamic.DYNAMIC)
    b = se.create_symbol(16, ConstantSource("b"), dynamic_dim=DimDynamic.DYNAMIC)
    c = se.create_symbol(12, ConstantSource("c"), dynamic_dim=DimDynamic.DYNAMIC)
    assert se.evaluate_expr(sympy.Eq(b, 2 * a))  # torch replaces b by 2*a
    return se, a, b, c


def _expressions(a: object, b: object, c: object) -> list:
    return [
        tf.FloorDiv(a, 2),
        tf.FloorDiv(a + 7, 8) * 8,
        tf.CleanDiv(2 * a, 2),
        tf.ModularIndexing(a, 1, 4),
        tf.ModularIndexing(c * 4 + 3, 4, 16),
        tf.PythonMod(b, 2),
        tf.Mod(a, 4),
        tf.CeilToInt(tf.IntTrueDiv(a, 2)),
        tf.FloorToInt(tf.IntTrueDiv(c, 3)),
        tf.Max(a, 3),
        tf.Min(a, c, 1),
        tf.Identity(a + c),
        a * c - c * a + 5,
        sympy.Ge(a, 2),
        sympy.Eq(a, 1),
        sympy.Lt(tf.ModularIndexing(a, 1, 4), 4),
        sympy.Eq(tf.PythonMod(b, 2), 0),
        sympy.Eq(b, 2 * a),
        sympy.Ne(a, c),
        sympy.Gt(tf.Max(a, c), 1),
        sympy.Le(tf.Mod(a, 4), 3),
        sympy.And(sympy.Ge(a, 2), sympy.Ge(c, 2)),
        sympy.Or(sympy.Eq(a, 1), sympy.Ge(c, 2)),
    ]


def test_shape_env_expressions_read_and_answered(env: tuple) -> None:
    se, a, b, c = env
    td = from_shape_env(se)
    decided = 0
    for e in _expressions(a, b, c):
        ours = td.static_value(e)
        theirs = se._maybe_evaluate_static(e)
        if theirs is not None:
            decided += 1
            value = bool(theirs) if isinstance(theirs, sympy.logic.boolalg.BooleanAtom) else int(theirs)
            assert ours == value, e
        tlo, thi = se.bound_sympy(se.replace(e)).lower, se.bound_sympy(se.replace(e)).upper
        lo, hi = td.bound(e)
        if not isinstance(lo, bool):
            assert lo >= float(tlo) and hi <= float(thi), (e, (lo, hi), (tlo, thi))
    assert decided >= 8


def test_values_agree_with_torch_at_the_hints(env: tuple) -> None:
    se, a, b, c = env
    hints = {str(s): int(v) for s, v in se.backed_var_to_val.items()}
    for e in _expressions(a, b, c):
        if isinstance(e, sympy.logic.boolalg.Boolean):
            continue
        term = read_torch_expr(e, replacements=se.replacements)
        expected = int(se.replace(e).xreplace(se.backed_var_to_val))
        assert evaluate_expression(term, hints) == expected, e


def test_unbacked_and_infinite_ranges(env: tuple) -> None:
    se, a, _, _ = env
    u = se.create_unbacked_symint().node.expr
    td = from_shape_env(se)
    assert td.bound(u) == (-math.inf, math.inf)
    assert td.evaluate(sympy.Ge(u * u, 0)) in (True, None)
    assert td.bound(a) == (2, math.inf)
