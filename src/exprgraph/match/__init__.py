"""exprgraph.match: patterns and matching over terms and plain Python data, and unification interop.

``match(pattern, expr)`` returns the bindings of the first match (or raises :class:`MatchError`),
``match_all`` enumerates every match lazily, ``is_match`` tests. Patterns are plain values,
containers, terms, and the pattern nodes :class:`Var`, :data:`Dot`, :class:`Choice`,
:class:`Not`, :class:`Where`, :class:`Star`, :class:`Plus`, :class:`Segment` and
:class:`OpPattern` (built with the term operators on ``V.x``, with ``P.<op>(...)``, and with a
variable in the op position, ``V.f(V.x)``).

Importing this package registers terms with logical-unification, etuples and cons
(:mod:`exprgraph.match.unify`), so ``unify``, ``reify`` and kanren goals work on terms as soon
as ``exprgraph`` is imported.

Layer 3 of docs/architecture.md: imports core and errors; never a higher layer.
"""

from __future__ import annotations

from ..errors import MatchError, PatternError
from . import patterns, unify  # noqa: F401  (unify registers terms with the unification packages)
from .compile import CompiledPattern, compile_pattern
from .matcher import first_match, is_match, match, match_all
from .patterns import *  # noqa: F403  (the pattern nodes and builders)

__all__ = ["match", "match_all", "is_match", "first_match", "compile_pattern", "CompiledPattern"]
__all__ += patterns.__all__
__all__.remove("pattern_children")  # a helper of the matchers: import it from .patterns
__all__ += ["MatchError", "PatternError"]
