"""compile()'s check of its outputs and inputs: the same errors whether or not the last inputs passed."""

from __future__ import annotations

import numpy as np
import pytest

import exprgraph as eg
from exprgraph.compile.function import check_signature
from exprgraph.errors import CompileError

X, Y, Z = eg.Symbol("x"), eg.Symbol("y"), eg.Symbol("z")


def test_inputs_that_passed_are_passed_again_with_the_same_result() -> None:
    first = check_signature([X * Y, X + Y], [X, Y])
    again = check_signature([X * Y], (X, Y))
    assert first[2] == again[2] == (X, Y)
    assert again[0] == (X * Y,) and not again[1]


@pytest.mark.parametrize(
    ("inputs", "error"),
    [
        ((X, X), CompileError),  # listed twice
        ((X, eg.Symbol("x", "int64")), CompileError),  # two inputs of one name
        ((X, 3), TypeError),
        ((X, np.arange(2)), TypeError),  # an array compares elementwise: never read as equal inputs
        ((X, X + Y), TypeError),
    ],
)
def test_bad_inputs_fail_right_after_good_ones_of_the_same_length(inputs: tuple, error: type) -> None:
    check_signature([X * Y], (X, Y))  # the last inputs that passed
    with pytest.raises(error):
        check_signature([X], inputs)


def test_outputs_must_be_terms_and_the_stranger_is_named() -> None:
    with pytest.raises(TypeError, match="got a float"):
        check_signature([X, 1.5, Y], (X, Y))


def test_a_symbol_outside_the_inputs_is_named() -> None:
    check_signature([X * Y], (X, Y))
    with pytest.raises(CompileError, match="z"):
        check_signature([X * Z], (X, Y))
