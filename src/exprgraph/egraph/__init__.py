"""exprgraph.egraph: equality saturation on the same terms, op table and rule text (egg's design).

- :class:`EGraph`: hashconsed e-nodes, union-find, deferred rebuilding with congruence closure,
  built-in constant folding, user :class:`Analysis` objects (:mod:`.egraph`, :mod:`.analysis`);
- :func:`saturate`: the runner with egg's limits, schedulers, goals, stop reasons and a
  per-iteration :class:`Report` (:mod:`.runner`, :mod:`.scheduler`);
- rules are :class:`~exprgraph.rules.Rule` objects (``rule`` is :func:`exprgraph.rule`), compiled
  for e-matching (:mod:`.ematch`, :mod:`.rewrite`); conditions in :mod:`.conditions`;
- extraction by tree or DAG cost, greedy or exact by ILP (:mod:`.extract`, :mod:`.dag`);
- explanations as chains of rule applications (:mod:`.explain`); pictures (:mod:`.dot`);
- the default strategy of ``simplify`` (:mod:`.strategy`: the canonical pass, then saturation with the
  trig and hyperbolic identities of :mod:`.identities`, and ``simplify(t, explain=True)``), gated by
  :func:`active_rules` (:mod:`.relevance`: which rules can ever match a term's e-graph);
- integration: ``simplify(t, method="egraph")`` (:mod:`.saturation`), the
  :class:`EqualitySaturationRewriter` graph rewriter, ``exprgraph saturate`` (:mod:`.cli`);
- egg's math suite and egglog's micro-benchmark in :mod:`.mathsuite`.

Top of the rewriting stack of docs/architecture.md: imports graph, simplify, rules, match, eval, core, console,
progress and errors; never a higher layer.
"""

from __future__ import annotations

from ..rules import rule
from . import conditions
from .analysis import Analysis, Intervals
from .conditions import const_or_distinct_var, is_const, is_sym, not_zero
from .dot import to_dot
from .egraph import EGraph
from .enode import ENode
from .explain import Explanation, Step, check_step, explain
from .extract import Extracted, extract
from .identities import identity_rules
from .relevance import active_rules
from .rewrite import ERule
from .rewriter import EqualitySaturationRewriter, SaturationProfile
from .runner import Iteration, Report, StopReason, saturate
from .saturation import saturation_simplify  # registers simplify(t, method="egraph")
from .scheduler import BackoffScheduler, Scheduler, SimpleScheduler
from .strategy import strategy  # registers simplify's default strategy and its explanations

__all__ = ["EGraph", "ENode", "Analysis", "Intervals", "ERule", "rule"]
__all__ += ["conditions", "not_zero", "is_const", "is_sym", "const_or_distinct_var"]
__all__ += ["saturate", "Report", "Iteration", "StopReason", "Scheduler", "SimpleScheduler", "BackoffScheduler"]
__all__ += ["extract", "Extracted", "explain", "Explanation", "Step", "check_step", "to_dot"]
__all__ += ["saturation_simplify", "EqualitySaturationRewriter", "SaturationProfile", "strategy", "identity_rules"]
__all__ += ["active_rules"]
