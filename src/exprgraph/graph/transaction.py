"""The one driver that applies node rewrites: each result is a transaction.

:class:`RewriteDriver.try_rewrite` runs a node rewriter on a node and applies what it returns:

1. the result is read as replacement pairs (a list for the node, or a dict ``{old: new}``);
2. each pair is checked before anything changes (the node is in the graph, dtype and shape
   agree, no unknown inputs, no cycle), so a single replacement never needs undoing;
3. several pairs, or a graph with validators, run as checkpoint / replace / validate, and are
   reverted if any step fails;
4. a failure (an exception in ``transform``, a rejected pair, a failed validation) goes to the
   failure callback: ``"raise"`` (re-raise), ``"warn"`` (a :class:`~exprgraph.errors.RewriteWarning`),
   ``"ignore"``, or a function ``fn(exc, rewriter, pairs, node)``.

In verbose mode each replacement prints ``rewrite <name> replaces <old> with <new>``; the same
line always goes to the ``exprgraph.graph`` logger at DEBUG level.
"""

from __future__ import annotations

import logging
import sys
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core import Term
from ..errors import RewriteWarning
from .printing import short
from .profile import RewriterStats
from .propagation import as_term_like

if TYPE_CHECKING:
    from .fgraph import FunctionGraph
    from .interface import NodeRewriter

__all__ = ["RewriteDriver", "replacement_pairs", "FAILURE_MODES", "logger"]

logger = logging.getLogger("exprgraph.graph")

#: the named failure callbacks
FAILURE_MODES = ("raise", "warn", "ignore")

FailureCallback = str | Callable[..., Any] | None


def replacement_pairs(node: Term, result: Any) -> list[tuple[Term, Term]]:
    """The ``(old, new)`` pairs a node rewriter's result stands for (empty: nothing to do)."""
    if result is None or result is False:
        return []
    pairs: list[tuple[Any, Any]]  # the values become terms below
    if result.__class__ is Term:
        pairs = [(node, result)]
    elif isinstance(result, dict):
        if "remove" in result:
            raise ValueError("a 'remove' entry has no meaning here: a node is removed by replacing what uses it")
        pairs = list(result.items())
        for old, _ in pairs:
            if old.__class__ is not Term:
                raise TypeError(f"keys of a replacement dict must be terms, not {old!r}")
    elif isinstance(result, (list, tuple)):
        if len(result) > 1:
            raise ValueError(f"a node has one output, but the rewriter returned {len(result)} replacements")
        if not result or result[0] is None:
            return []
        pairs = [(node, result[0])]
    elif result.__class__ in (int, float, bool):
        pairs = [(node, result)]
    else:
        raise TypeError(f"a node rewriter returns False, a list or a dict, not {type(result).__name__}")
    out: list[tuple[Term, Term]] = []
    for old, new in pairs:
        if new is None:
            continue
        if new.__class__ is not Term:
            new = as_term_like(new, old)
        if new is not old:
            out.append((old, new))
    return out


class RewriteDriver:
    """Applies node rewriters' results as transactions, with a failure callback and verbose logging."""

    __slots__ = ("failure_callback", "verbose")

    def __init__(self, failure_callback: FailureCallback = "raise", verbose: bool = False) -> None:
        if failure_callback is None:
            failure_callback = "raise"
        if isinstance(failure_callback, str) and failure_callback not in FAILURE_MODES:
            raise ValueError(f"failure_callback must be one of {FAILURE_MODES} or a function, not {failure_callback!r}")
        self.failure_callback = failure_callback
        self.verbose = verbose

    def try_rewrite(self, fgraph: FunctionGraph, rewriter: NodeRewriter, node: Term, stats: RewriterStats) -> bool:
        """Run ``rewriter`` on ``node`` and apply its result; True when the graph changed."""
        stats.tried += 1
        start = time.perf_counter()
        try:
            result = rewriter.transform(fgraph, node)
        except Exception as exc:
            stats.time += time.perf_counter() - start
            stats.failed += 1
            self.fail(exc, rewriter, [], node)
            return False
        if result is None or result is False:
            stats.time += time.perf_counter() - start
            return False
        ok = self.commit(fgraph, rewriter, node, result, stats)
        stats.time += time.perf_counter() - start
        return ok

    def commit(self, fgraph: FunctionGraph, rewriter: Any, node: Term, result: Any, stats: RewriterStats) -> bool:
        """Apply a result of ``rewriter`` at ``node`` as one transaction; True when applied."""
        try:
            pairs = replacement_pairs(node, result)
        except (TypeError, ValueError) as exc:
            stats.failed += 1
            self.fail(exc, rewriter, [], node)
            return False
        if not pairs:
            return False
        imported = fgraph.imported
        if len(pairs) == 1 and not fgraph.has_validators:
            old, new = pairs[0]
            try:
                fgraph.replace(old, new, rewriter)  # checks everything before changing anything
            except Exception as exc:
                stats.failed += 1
                self.fail(exc, rewriter, pairs, node)
                return False
        else:
            cp = fgraph.checkpoint()
            try:
                for old, new in pairs:
                    fgraph.replace(old, new, rewriter)
                fgraph.validate()
            except Exception as exc:
                fgraph.revert(cp)
                stats.failed += 1
                self.fail(exc, rewriter, pairs, node)
                return False
        stats.applied += 1
        stats.nodes_created += fgraph.imported - imported
        if self.verbose or logger.isEnabledFor(logging.DEBUG):
            name = getattr(rewriter, "name", None) or type(rewriter).__name__
            for old, new in pairs:
                line = f"rewrite {name} replaces {short(old)} with {short(new)}"
                logger.debug(line)
                if self.verbose:
                    print(line, file=sys.stdout)
        return True

    def fail(self, exc: Exception, rewriter: Any, pairs: list, node: Term) -> None:
        """Report a failed rewrite through the failure callback (re-raises for ``"raise"``)."""
        cb = self.failure_callback
        if cb == "raise":
            raise exc
        if cb == "ignore":
            return
        if cb == "warn":
            name = getattr(rewriter, "name", None) or type(rewriter).__name__
            warnings.warn(
                f"rewrite {name} failed at {short(node)}: {type(exc).__name__}: {exc}", RewriteWarning, stacklevel=4
            )
            return
        if not callable(cb):
            raise ValueError(f"failure_callback must be one of {FAILURE_MODES} or a function, not {cb!r}")
        cb(exc, rewriter, pairs, node)
