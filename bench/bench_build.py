"""Building a random 10^5-node expression: exprgraph vs symengine and sympy.

A fixed-seed random program of unary and binary ops over 10 symbols and small integer constants
is replayed by one interpreter loop against each library (only the op functions differ). Each
instruction reads earlier results, half the time one of the last few (so the DAG is deep) and
half the time any of them (so it is wide). Interleaved rounds, best of N (fewer for sympy); the
results are freed after the clock stops.

Run: ``python -m bench.bench_build``.
"""

from __future__ import annotations

import cmath
import operator
import random
from collections.abc import Callable
from typing import Any

import exprgraph as eg
from bench.common import best_of, fmt_seconds, print_table, ratio, skip

N_INSTRUCTIONS = 10**5
N_SYMBOLS = 10

BINARY = ("add", "sub", "mul", "truediv")
WITH_CONST = ("add_const", "mul_const", "pow_const")
UNARY = ("sin", "cos", "exp", "log", "neg")
OPCODES = BINARY * 3 + WITH_CONST + UNARY  # binary ops three times as likely: a wide, bushy DAG


def _fns(sin: Callable, cos: Callable, exp: Callable, log: Callable) -> dict[str, Callable]:
    """Each opcode's function, given the library's ``sin``, ``cos``, ``exp`` and ``log``."""
    return {
        "add": operator.add,
        "sub": operator.sub,
        "mul": operator.mul,
        "truediv": operator.truediv,
        "add_const": operator.add,
        "mul_const": operator.mul,
        "pow_const": operator.pow,
        "sin": sin,
        "cos": cos,
        "exp": exp,
        "log": log,
        "neg": operator.neg,
    }


_NUMERIC = _fns(cmath.sin, cmath.cos, cmath.exp, cmath.log)  # the program's values, in complex numbers


def make_program(n: int = N_INSTRUCTIONS, seed: int = 2024) -> list[tuple[str, int, int]]:
    """``n`` instructions ``(opcode, a, b)``: a and b index earlier results (b a constant for *_const).

    Each instruction is also computed in complex numbers at a random point, and one whose value is
    0 or huge is drawn again: the anchors simplify as they build (``(x+y) - (y+x)`` is 0 to them),
    and a later ``log(0)`` or ``sin(zoo)`` would make them fail.
    """
    rng = random.Random(seed)
    program: list[tuple[str, int, int]] = []
    values = [complex(rng.uniform(0.5, 1.5), rng.uniform(-0.5, 0.5)) for _ in range(N_SYMBOLS)]

    def operand() -> int:
        # half recent (deep chains), half anywhere (wide sharing)
        size = len(values)
        if rng.random() < 0.5:
            return rng.randrange(max(0, size - 8), size)
        return rng.randrange(size)

    while len(program) < n:
        code = rng.choice(OPCODES)
        a = operand()
        if code in BINARY:
            b = operand()
            if b == a:
                continue
            args = (values[a], values[b])
        elif code == "pow_const":
            b = rng.choice((2, 3))
            args = (values[a], b)
        elif code in WITH_CONST:
            b = rng.randrange(2, 10)
            args = (values[a], b)
        else:
            b = 0
            args = (values[a],)
        try:
            v = _NUMERIC[code](*args)
        except (ArithmeticError, ValueError):
            continue
        if not 1e-6 < abs(v) < 1e6:
            continue
        values.append(v)
        program.append((code, a, b))
    return program


def replay(program: list[tuple[str, int, int]], symbols: list[Any], fns: dict[str, Callable]) -> list[Any]:
    """Run ``program`` with the library functions ``fns``; every result stays alive in the list."""
    vals = list(symbols)
    append = vals.append
    for code, a, b in program:
        f = fns[code]
        if code in BINARY:
            append(f(vals[a], vals[b]))
        elif code in WITH_CONST:
            append(f(vals[a], b))
        else:
            append(f(vals[a]))
    return vals


def contenders(program: list[tuple[str, int, int]]) -> tuple[dict[str, Callable[[], Any]], dict[str, Callable]]:
    """``(name -> build function, name -> untimed setup)`` for exprgraph and each installed anchor."""
    out: dict[str, Callable[[], Any]] = {}
    setup: dict[str, Callable] = {}
    names = [f"x{i}" for i in range(N_SYMBOLS)]
    ours = [eg.Symbol(n) for n in names]
    ours_fns = _fns(eg.sin, eg.cos, eg.exp, eg.log)
    out["exprgraph"] = lambda: replay(program, ours, ours_fns)
    try:
        import symengine

        se_syms = [symengine.Symbol(n) for n in names]
        se_fns = _fns(symengine.sin, symengine.cos, symengine.exp, symengine.log)
        out["symengine"] = lambda: replay(program, se_syms, se_fns)
    except ImportError:
        pass
    try:
        import sympy
        from sympy.core.cache import clear_cache

        sp_syms = [sympy.Symbol(n) for n in names]
        sp_fns = _fns(sympy.sin, sympy.cos, sympy.exp, sympy.log)
        out["sympy"] = lambda: replay(program, sp_syms, sp_fns)
        # sympy memoises constructors; start each round cold, as exprgraph's intern table is
        setup["sympy"] = clear_cache
    except ImportError:
        pass
    return out, setup


def _table(title: str, times: dict[str, float], n: int, nodes: int) -> None:
    ours = times["exprgraph"]
    rows = []
    for name, t in times.items():
        rows.append([name, fmt_seconds(t), ratio(ours, t), f"{t / n * 1e6:.2f} µs"])
    print_table(
        f"{title}: {n:,} instructions, {nodes:,} distinct exprgraph nodes",
        ["library", "time", "exprgraph / library", "per instruction"],
        rows,
    )


def main(n: int = N_INSTRUCTIONS, repeat: int = 5, sympy_n: int = 2000, sympy_repeat: int = 2) -> None:
    """Time building the program with each library; sympy only on a prefix (it is superlinear)."""
    program = make_program(n)
    builders, setup = contenders(program)
    sympy_build = builders.pop("sympy", None)
    nodes = len(eg.postorder(builders["exprgraph"]()))
    times = best_of(builders, repeat, setup)
    _table(f"build a random expression (best of {repeat}; target <= 3x symengine)", times, n, nodes)
    if "symengine" not in builders:
        skip("symengine", "not installed")
    if sympy_build is None:
        skip("sympy", "not installed")
        return
    prefix = program[:sympy_n]
    small, setup = contenders(prefix)
    nodes = len(eg.postorder(small["exprgraph"]()))
    times = best_of(small, {name: sympy_repeat if name == "sympy" else repeat for name in small}, setup)
    _table(
        f"the same program's first {sympy_n:,} instructions (sympy is superlinear on deep DAGs; best of "
        f"{sympy_repeat} for sympy; target <= 0.05x sympy)",
        times,
        sympy_n,
        nodes,
    )


if __name__ == "__main__":
    main()
