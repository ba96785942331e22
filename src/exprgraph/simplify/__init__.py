"""exprgraph.simplify: a canonical form by the rule engine, never larger and never of another value.

``simplify(term)`` folds constants, collects like terms and powers, removes identities, sorts
operands and cancels quotients, then prints subtraction and division back. The rules are named
and documented (``rules()``). By default only the safe ones run, never less accurate than the
input at any value, as everywhere in exprgraph; ``unsafe=True`` adds those exact only for finite
or non-zero values (``x*0 -> 0``, ``x - x -> 0``, ``(x*y)/y -> x``) and reassociates sums and
products. A call works within a budget (``max_steps``, ``time_limit``; RewriteLimitError past it).

Rewriting stack of docs/architecture.md: imports rules, match, eval, dims (integer subterms,
:mod:`.integers`), core, console and errors.
"""

from __future__ import annotations

from .budget import SimplifyInfo
from .caches import clear_caches
from .canonical import CANONICAL_RULES, GuardedRule
from .output import OUTPUT_RULES
from .polynomial import collect, expand, factor
from .rational import apart, cancel, together
from .simplify import DEFAULT_MAX_STEPS, canonical, canonical_ruleset, cost, output_ruleset, rules, simplify, size

__all__ = ["simplify", "canonical", "cost", "rules", "canonical_ruleset", "output_ruleset", "DEFAULT_MAX_STEPS"]
__all__ += ["GuardedRule", "CANONICAL_RULES", "OUTPUT_RULES"]
__all__ += ["expand", "collect", "factor", "cancel", "together", "apart", "SimplifyInfo", "size", "clear_caches"]
