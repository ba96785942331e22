"""Rule schedulers: which rules search in an iteration, and how many of their matches are kept.

- :class:`SimpleScheduler` searches every rule every iteration and applies every match.
- :class:`BackoffScheduler` (egg's default) bans a rule whose matches exceed its limit for a few
  iterations, doubling both its limit and its ban each time, so that explosive rules such as
  associativity and commutativity do not drown the others. Saturation is only declared once no
  rule is banned; until then banned rules are brought back early (``can_stop`` fast-forwards).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .egraph import EGraph
    from .rewrite import ERule

__all__ = ["Scheduler", "SimpleScheduler", "BackoffScheduler", "make_scheduler"]


class Scheduler:
    """Base class: ``search`` returns the matches to apply; ``can_stop`` says whether saturation may be declared."""

    def search(self, iteration: int, rule: ERule, egraph: EGraph) -> list[tuple]:
        """The matches of ``rule`` to apply in this iteration."""
        return rule.search(egraph)

    def can_stop(self, iteration: int) -> bool:
        """Whether the run may stop as saturated after an iteration that changed nothing."""
        return True


class SimpleScheduler(Scheduler):
    """Every rule, every match, every iteration."""


class _Stats:
    __slots__ = ("times_applied", "banned_until", "times_banned", "match_limit", "ban_length")

    def __init__(self, match_limit: int, ban_length: int) -> None:
        self.times_applied = 0
        self.banned_until = 0
        self.times_banned = 0
        self.match_limit = match_limit
        self.ban_length = ban_length


class BackoffScheduler(Scheduler):
    """Ban a rule with over ``match_limit << times_banned`` matches for ``ban_length << times_banned`` iterations."""

    def __init__(self, match_limit: int = 1000, ban_length: int = 5) -> None:
        self.match_limit = match_limit
        self.ban_length = ban_length
        self.stats: dict[int, _Stats] = {}
        self.banned: dict[str, int] = {}

    def _stats(self, rule: ERule) -> _Stats:
        s = self.stats.get(id(rule))
        if s is None:
            s = self.stats[id(rule)] = _Stats(self.match_limit, self.ban_length)
        return s

    def search(self, iteration: int, rule: ERule, egraph: EGraph) -> list[tuple]:
        """The matches, or none while the rule is banned or when it has too many."""
        s = self._stats(rule)
        if iteration < s.banned_until:
            return []
        threshold = s.match_limit << s.times_banned
        matches = rule.search(egraph, threshold + 1)
        if len(matches) > threshold:
            ban = s.ban_length << s.times_banned
            s.times_banned += 1
            s.banned_until = iteration + ban
            self.banned[rule.name] = s.times_banned
            return []
        s.times_applied += 1
        return matches

    def can_stop(self, iteration: int) -> bool:
        """True when no rule is banned; otherwise unban the soonest ones now and keep going."""
        banned = [s for s in self.stats.values() if s.banned_until > iteration]
        if not banned:
            return True
        soonest = min(s.banned_until for s in banned)
        delta = soonest - iteration
        for s in banned:
            s.banned_until -= delta
        return False


def make_scheduler(scheduler: str | Scheduler) -> Scheduler:
    """A scheduler from its name (``"backoff"``, ``"simple"``) or itself."""
    if isinstance(scheduler, Scheduler):
        return scheduler
    if scheduler == "backoff":
        return BackoffScheduler()
    if scheduler == "simple":
        return SimpleScheduler()
    raise ValueError(f"scheduler must be 'backoff', 'simple' or a Scheduler, not {scheduler!r}")
