"""Evaluation refuses, before allocating, an array larger than its limit (an evaluation grid, say)."""

from __future__ import annotations

import numpy as np
import pytest

from exprgraph.compile import compile as compile_terms
from exprgraph.compile.cbuild import find_compiler
from exprgraph.core import Symbol, get_op, symbols, where
from exprgraph.errors import CompilerNotFoundError, SizeLimitError
from exprgraph.eval import evaluate
from exprgraph.eval.limits import DEFAULT_MAX_ELEMENTS, limit_in_force

x, y = symbols("x y")
COLUMN = np.zeros((100_000, 1))
ROW = np.zeros(100_000)


def test_a_huge_grid_is_refused_before_allocating() -> None:
    # a column and a row broadcast to 10**10 elements (80 GB): a named error, not a MemoryError
    with pytest.raises(SizeLimitError) as info:
        evaluate(x * y + 1, {x: COLUMN, y: ROW})
    err = info.value
    assert err.size == 10**10 and err.limit == DEFAULT_MAX_ELEMENTS
    assert "max_elements" in str(err) and "EXPRGRAPH_MAX_ELEMENTS" in str(err) and "(100000, 100000)" in str(err)


def test_the_limit_is_a_keyword_or_an_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = np.ones((30, 1)), np.ones(30)
    assert evaluate(x + y, {x: a, y: b}, max_elements=900).shape == (30, 30)
    with pytest.raises(SizeLimitError):
        evaluate(x + y, {x: a, y: b}, max_elements=899)
    monkeypatch.setenv("EXPRGRAPH_MAX_ELEMENTS", "500")
    assert limit_in_force() == 500
    with pytest.raises(SizeLimitError) as info:
        evaluate(x + y, {x: a, y: b})
    assert info.value.limit == 500
    assert evaluate(x + y, {x: a, y: b}, max_elements=10**6).shape == (30, 30)  # the keyword wins
    monkeypatch.setenv("EXPRGRAPH_MAX_ELEMENTS", "lots")
    with pytest.raises(ValueError, match="EXPRGRAPH_MAX_ELEMENTS"):
        evaluate(x + y, {x: 1.0, y: 2.0})
    with pytest.raises(ValueError, match="max_elements"):
        evaluate(x, {x: 1.0}, max_elements=0)


@pytest.mark.parametrize(
    "make",
    [
        lambda a, b: get_op("add")(a, b, a),  # a variadic fold
        lambda a, b: where(a < 0, a, b),  # an impl
        lambda a, b: a**b,
    ],
)
def test_every_path_checks(make) -> None:
    a, b = np.ones((40, 1)), np.ones(40)
    with pytest.raises(SizeLimitError):
        evaluate(make(x, y), {x: a, y: b}, max_elements=1000)
    assert np.shape(evaluate(make(x, y), {x: a, y: b}, max_elements=1600)) == (40, 40)


def test_matrix_products_are_checked() -> None:
    a = Symbol("A", shape=(50, 1))
    b = Symbol("B", shape=(1, 50))
    with pytest.raises(SizeLimitError):
        evaluate(a @ b, {a: np.ones((50, 1)), b: np.ones((1, 50))}, max_elements=2000)
    assert evaluate(a @ b, {a: np.ones((50, 1)), b: np.ones((1, 50))}, max_elements=2500).shape == (50, 50)


def test_the_c_backend_checks_too(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        find_compiler()
    except CompilerNotFoundError:
        pytest.skip("no C compiler")
    f = compile_terms(x * y, [x, y], backend="c")
    monkeypatch.setenv("EXPRGRAPH_MAX_ELEMENTS", "100")
    with pytest.raises(SizeLimitError):
        f(np.ones((20, 1)), np.ones(20))
    assert f(np.ones((10, 1)), np.ones(10)).shape == (10, 10)
