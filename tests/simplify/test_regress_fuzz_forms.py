"""Regressions of the simplify fuzzer (issue 30, "idempotent"): exact reciprocals, and never larger by any method.

The findings (tests/fuzz/test_fuzz_simplify_values.py): ``1/pi*x`` and ``e**-1`` simplified to ``1.0/pi``,
which a second call folded to the float 0.3183098861837907 (a bare exact constant was written ``b**-1.0``
where an exact term with operands was ``b**-1``), so simplify was not idempotent; and ``method="egraph"``
returned forms larger than the input (``x*y*x*y -> (x*y)**2`` with ``unsafe=True``: 3 distinct nodes
became 5), where the rules' path never does.
"""

from __future__ import annotations

import pytest

from exprgraph import parse, simplify
from exprgraph.simplify.simplify import no_larger

RECIPROCALS = ["1/pi*x", "x/pi", "e**-1", "y + e**-1", "pi**-1*x + y", "minimum(maximum(pi**-1, sqrt(x)), cos(x), y)"]


@pytest.mark.parametrize("unsafe", [False, True])
@pytest.mark.parametrize("text", RECIPROCALS)
def test_reciprocals_of_exact_constants_stay_exact(text: str, unsafe: bool) -> None:
    """``1/pi`` stays exact through a second call: simplify is idempotent on it."""
    s = simplify(parse(text), unsafe=unsafe)
    assert simplify(s, unsafe=unsafe) is s, (text, str(s), str(simplify(s, unsafe=unsafe)))
    assert "0.3" not in str(s) and "1.0/" not in str(s), str(s)  # 1/pi, 1/e: exact, not a rounded float


@pytest.mark.parametrize("unsafe", [False, True])
@pytest.mark.parametrize("text", ["x*y*x*y", "x*x*y*y", "x + x + x + y + y", "x*x*x*x*x*x*x*x", "x*y*z*x*y*z"])
def test_every_method_is_never_larger(text: str, unsafe: bool) -> None:
    """``simplify(method="egraph")`` never returns more distinct nodes (or a larger cost) than its input."""
    t = parse(text)
    for method in ("egraph", "rules", "auto"):
        s = simplify(t, method=method, unsafe=unsafe)
        assert no_larger(s, t), (text, method, str(s), s.size, t.size)
