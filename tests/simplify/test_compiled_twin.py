"""simplify's compiled canonical pass and its Python source: the same terms on random inputs.

The build compiles the rule bodies of the canonical pass (``exprgraph.accel.COMPILED_MODULES["simplify"]``:
sums, products, numbers, order, trigonometry) and the rewrite driver's walk (``["rules"]``) with mypyc.
A worker process runs the same calls with ``EXPRGRAPH_PURE_PYTHON=1``, every module of the group
from its source. Terms travel pickled and unpickle to the interned term, so results are compared by
identity (dtype, constants' bits and operand order included). Run pure, this compares the source
with itself and still checks that the switch reaches both packages.
"""

from __future__ import annotations

import base64
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from eg_strategies import terms
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph import accel
from exprgraph.errors import ExprgraphError
from exprgraph.simplify import clear_caches, simplify

#: the worker: reads pickled (term, unsafe) lines, answers the pickled result (or the error's class name)
_WORKER = """
import base64, pickle, sys
from exprgraph import accel
from exprgraph.errors import ExprgraphError
from exprgraph.simplify import clear_caches, simplify
print(accel.PURE, accel.compiled_modules("simplify"), accel.compiled_modules("rules"), flush=True)
for line in sys.stdin:
    term, unsafe = pickle.loads(base64.b64decode(line))
    clear_caches()
    try:
        out = simplify(term, unsafe=unsafe)
    except (ExprgraphError, ArithmeticError, ValueError) as exc:
        out = type(exc).__name__
    print(base64.b64encode(pickle.dumps(out)).decode(), flush=True)
"""

X, Y = eg.Symbol("x"), eg.Symbol("y")
P = eg.Symbol("p", positive=True)
IDX, JDX = eg.Symbol("i", dtype="int64"), eg.Symbol("j", dtype="int64")
FUNCTIONS = [eg.sin, eg.cos, eg.tan, eg.sinh, eg.cosh, eg.tanh, eg.exp]


class Pure:
    """The worker process running every module of the compiled group from its source."""

    def __init__(self) -> None:
        env = {**os.environ, accel.PURE_ENV: "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.banner = self.process.stdout.readline().split()

    def simplify(self, term: eg.Term, unsafe: bool) -> Any:
        """What the pure modules make of ``term``."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(base64.b64encode(pickle.dumps((term, unsafe))).decode() + "\n")
        self.process.stdin.flush()
        return pickle.loads(base64.b64decode(self.process.stdout.readline()))

    def close(self) -> None:
        """End the worker."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def pure() -> Iterator[Pure]:
    worker = Pure()
    yield worker
    worker.close()


def _here(term: eg.Term, unsafe: bool) -> Any:
    """What this process (compiled when built) makes of ``term``."""
    clear_caches()
    try:
        return simplify(term, unsafe=unsafe)
    except (ExprgraphError, ArithmeticError, ValueError) as exc:
        return type(exc).__name__


def _same(pure: Pure, term: eg.Term, unsafe: bool) -> None:
    got, want = _here(term, unsafe), pure.simplify(term, unsafe)
    assert got is want or (isinstance(got, str) and got == want), (str(term), unsafe, str(got), str(want))


@st.composite
def trig_sums(draw: st.DrawFn) -> eg.Term:
    """A sum of products of trigonometric, hyperbolic and exp functions of x, 2*x, x + y, with small coefficients."""
    total: eg.Term | None = None
    for _ in range(draw(st.integers(1, 4))):
        t: eg.Term = eg.const(draw(st.sampled_from([1.0, -1.0, 2.0, -2.0, 0.5])))
        for _ in range(draw(st.integers(0, 2))):
            f = draw(st.sampled_from(FUNCTIONS))(draw(st.sampled_from([X, -X, 2 * X, X + Y, Y])))
            t = t * f ** draw(st.sampled_from([1, 2, -1]))
        total = t if total is None else total + t
    assert total is not None
    return total


@st.composite
def integer_terms(draw: st.DrawFn, depth: int = 3) -> eg.Term:
    """An int64 term of i, j and small constants: the full canonical form (sums, products) at either strength."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from([IDX, JDX, eg.const(2), eg.const(-1), eg.const(3)]))
    a, b = draw(integer_terms(depth - 1)), draw(integer_terms(depth - 1))
    kind = draw(st.sampled_from(["add", "sub", "mul", "square"]))
    return {"add": a + b, "sub": a - b, "mul": a * b, "square": a * a}[kind]


def test_the_worker_runs_the_source_and_this_process_runs_all_or_nothing(pure: Pure) -> None:
    assert pure.banner == ["True", "()", "()"]  # the pure switch reaches simplify's and rules' modules
    simplify_modules, rules_modules = accel.compiled_modules("simplify"), accel.compiled_modules("rules")
    if accel.PURE:
        assert simplify_modules == rules_modules == ()
    else:
        assert simplify_modules == accel.COMPILED_MODULES["simplify"]
        assert rules_modules == accel.COMPILED_MODULES["rules"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(terms(smooth=False), terms(kind="exact"), trig_sums(), integer_terms()), st.booleans())
def test_the_compiled_canonical_pass_gives_what_its_source_gives(pure: Pure, term: eg.Term, unsafe: bool) -> None:
    _same(pure, term, unsafe)


@pytest.mark.parametrize(
    "text",
    [
        "x*x*x/x + 3*x - x",  # powers of one base, like terms
        "2*p*p**-1 + log(p**2) - 1/3 + 1/6",  # assumptions, exact constants
        "sin(x)**2 + cos(x)**2 + 2*sin(x)*cos(x) - sin(2*x)",  # the trigonometric relations
        "(x + y)*(x - y) - x**2 + y**2",
        "1e308*x*10 + 1e-308*y*1e-10",  # folds declined where they overflow or underflow
        "max(x, max(y, x)) + abs(-2*x)",
    ],
)
@pytest.mark.parametrize("unsafe", [False, True])
def test_known_forms_are_the_same_compiled_and_pure(pure: Pure, text: str, unsafe: bool) -> None:
    term = eg.parse(text, {"x": X, "y": Y, "p": P})
    want = pure.simplify(term, unsafe)
    assert isinstance(want, eg.Term) and (want is not term or not unsafe)  # the unsafe strength rewrites each
    _same(pure, term, unsafe)
