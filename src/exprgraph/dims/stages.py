"""The stages of :mod:`exprgraph.dims`: every module belongs to one, and imports only its own stage and earlier ones.

Text becomes a term (*read*), a term becomes its polynomial normal form (*normalise*), the
rules of floor division, remainders, max and min (and the walks that apply them) close the
opaque atoms (*divide*), questions about the values are answered from the polynomials
(*decide*), and canonical forms go out as terms, text or ints (*print*). The order of the table
is the order of the stages: ``tests/test_architecture.py`` fails when a module imports a module
of a later stage (at the top of the file or inside a function). Why some modules sit where they do:

- ``unparse`` is read: the grammar both ways (text to term, term to text), and the sort key of
  every atom is its printed text, which the normal form needs;
- ``ranges`` is normalise: value ranges are recorded when atoms are built, and the rules of every
  later stage ask for them;
- ``ring`` (the polynomial arithmetic) and ``monomials`` import nothing from dims but each other:
  the ring can come from elsewhere by changing import lines only;
- ``regions`` (the walk) and ``polyparse`` (its twin for text) are divide: they apply its rules;
- ``polyprint`` and ``canonicalize`` are print: the canonical text and terms handed out.

Imports nothing (a table read by the tests and the docs).
"""

from __future__ import annotations

__all__ = ["STAGES", "stage_of"]

#: the stages in order, each with its modules (``__init__`` is the package itself)
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("read", ("stages", "accel", "terms", "grammar", "parse", "unparse", "evaluate", "rename")),
    ("normalise", ("monomials", "ring", "ranges", "normal", "context", "nodes", "factored")),
    ("divide", ("division", "maxmin", "combine", "regions", "polyoperands", "polyparse", "arith")),
    ("decide", ("relations", "decide", "prove", "facts", "explain", "queries", "ask", "intervals", "witness")),
    ("print", ("polyprint", "canonicalize", "dimops", "arith_twin", "cli", "__init__")),
)


def stage_of(module: str) -> int:
    """The index in STAGES of the stage of a dims module (its name without the package); KeyError if none."""
    for i, (_, modules) in enumerate(STAGES):
        if module in modules:
            return i
    raise KeyError(f"exprgraph.dims.{module} is in no stage of exprgraph.dims.stages.STAGES")
