"""Our dimension terms as an anchor's expressions: one converter, a table of constructors per anchor.

The dims benchmarks give the same expressions to sympy, symengine and torch's sympy functions; each
anchor differs only in the constructor it has for each of our ops (``floor(a/b)`` or ``FloorDiv``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from exprgraph.core import Term
from exprgraph.core.walk import postorder

__all__ = ["convert"]


def convert(term: Term, constructors: Mapping[str, Callable[..., Any]], symbol: Callable[[str], Any]) -> Any:
    """The anchor's expression for ``term``, built bottom-up with ``constructors[op name](*converted args)``.

    A name becomes ``symbol(name)`` and an integer ``constructors["const"](value)``. Where the anchor has
    a ``"modular_indexing"`` constructor, a remainder of a floor division ``(x//d) % m`` becomes
    ``ModularIndexing(x, d, m)``.
    """
    out: dict[Term, Any] = {}
    for node in postorder((term,)):
        op = node.op.name
        if op == "symbol":
            out[node] = symbol(node.name)
        elif op == "const":
            out[node] = constructors["const"](int(node.attr))
        elif op == "mod" and node.args[0].op.name == "floordiv" and "modular_indexing" in constructors:
            x, d = (out[y] for y in node.args[0].args)
            out[node] = constructors["modular_indexing"](x, d, out[node.args[1]])
        elif op in constructors:
            out[node] = constructors[op](*[out[x] for x in node.args])
        else:  # pragma: no cover - the dims benchmarks make no other op
            raise ValueError(f"no constructor for {op!r}")
    return out[term]
