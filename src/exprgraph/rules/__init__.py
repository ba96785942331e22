"""exprgraph.rules: rewrite rules, rule combinators, textual rules, rule sets and the rewrite driver.

- :func:`make_rule` / ``pattern >> rhs`` / :func:`rule` (``"x*1 -> x"``) build :class:`Rule` objects,
  the one rule class every engine reads (pattern, result, condition, name, strength tag, guard;
  :meth:`Rule.of_function` for a Python function of the whole term);
- the combinators :func:`rule_list`, :func:`in_order`, :func:`iterated`,
  :func:`rewrite_subexpressions`, :func:`bottom_up`, :func:`top_down`, :func:`term_rewriter`
  follow the Oryx/Radul *rules* library on terms and on plain Python trees;
- :class:`RuleSet` indexes rules by root op; :func:`rewrite` drives them bottom-up to a normal
  form (memoised, iterative, with a step budget and an optional :class:`RewriteProfile`, the one
  profile class, which the graph rewriters return too: :mod:`.profile`);
- :func:`relation_rule` turns a miniKanren relation into a rule (see :mod:`.relations`);
- :mod:`.algebra` holds a small standard algebra rule set.

Layer 4 of docs/architecture.md: imports match, core and errors; never a higher layer.
"""

from __future__ import annotations

from ..errors import RewriteLimitError, RuleSyntaxError
from . import combinators
from .combinators import *  # noqa: F403  (make_rule, the combinators, tree_map and tree_children)
from .rewrite import RewriteProfile, RuleStats, rewrite
from .ruleset import Rule, RuleSet, Template
from .textual import parse_condition, parse_rules, rule

__all__ = []
__all__ += combinators.__all__
__all__ += ["Rule", "RuleSet", "Template", "rule", "parse_rules", "parse_condition"]
__all__ += ["rewrite", "RewriteProfile", "RuleStats"]
__all__ += ["relation_rule"]  # noqa: F405 (given lazily by __getattr__ below)
__all__ += ["RewriteLimitError", "RuleSyntaxError"]


def __getattr__(name: str):  # kanren is imported only when relations are used
    if name in ("relation_rule", "RelationRule", "declare_op_facts"):
        from . import relations

        return getattr(relations, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
