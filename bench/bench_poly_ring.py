"""The compiled polynomial ring against its own Python source, interleaved in one process (thread CPU).

The ring of ``exprgraph.poly`` (and dims' algebra on it) is compiled by mypyc; its twin is the same
source loaded a second time under another package name. The workload is the ring's operations on
sums of six atoms (products, powers, exact coefficients, content, monomial division).
Run: ``.venv/bin/python -m bench.bench_poly_ring``.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from fractions import Fraction
from types import ModuleType
from typing import Any

from exprgraph import accel
from exprgraph.core import symbols
from exprgraph.poly import ring as fast

ATOMS = symbols(" ".join(f"x{i}" for i in range(6)))


def _pure_ring() -> Any:
    """poly/ring.py loaded from its source under another package name (never the compiled module)."""
    package = "exprgraph._ring_source"
    module = ModuleType(package)
    module.__path__ = []
    sys.modules[package] = module
    here = os.path.join(os.path.dirname(accel.__file__), "poly")
    files = {f"{package}.{n}": os.path.join(here, f"{n}.py") for n in accel.COMPILED_MODULES["poly"]}
    sys.meta_path.insert(0, accel._SourceFinder(files))
    return importlib.import_module(f"{package}.ring")


def _sum_of(ring: Any, k: int, frac: bool = False) -> dict:
    p: dict = {}
    for i, a in enumerate(ATOMS[:k]):
        ring.p_add_into(p, ring.p_atom(a), Fraction(1, i + 2) if frac else i + 1)
    ring.p_add_into(p, ring.p_const(3))
    return p


def _work(ring: Any) -> None:
    s = _sum_of(ring, 6)
    q = _sum_of(ring, 4, frac=True)
    p2 = ring.p_mul(s, s)
    p3 = ring.p_mul(p2, s)
    ring.p_sub(p3, ring.p_scale(p2, 7))
    ring.p_product([(s, 2), (_sum_of(ring, 3), 2)], ring.Budget())
    ring.p_mul(p2, q)
    ring.p_content(p3)
    ring.p_div_mono(p3, (), 3)


def _best(ring: Any, repeat: int = 7, inner: int = 20) -> float:
    times = []
    for _ in range(repeat):
        start = time.thread_time()
        for _ in range(inner):
            _work(ring)
        times.append(time.thread_time() - start)
    return min(times) / inner


def main() -> None:
    """Print the compiled ring's time, its source's, and the ratio."""
    pure = _pure_ring()
    print(f"compiled modules: {accel.compiled_modules('poly')}; load average {os.getloadavg()}")
    rows: dict[str, list[float]] = {"compiled": [], "source": []}
    for _ in range(3):
        rows["compiled"].append(_best(fast))
        rows["source"].append(_best(pure))
    c, p = min(rows["compiled"]), min(rows["source"])
    print(f"ring workload: compiled {c * 1e3:.2f} ms, source {p * 1e3:.2f} ms, compiled/source {c / p:.2f}x")


if __name__ == "__main__":
    main()
