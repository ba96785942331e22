"""DAG-aware extraction: pick one node per class so that the *shared* result is cheapest.

Tree extraction pays for a subterm each time it is used; a term's real cost is its DAG (interned
terms share equal subterms), where each chosen node is paid once. Minimising that is NP-hard, so:

- :func:`greedy_dag` (the default) settles classes cheapest-first like tree extraction, but the
  cost of a node is the total over the *set* of distinct classes below it, so shared operands
  count once; then :func:`improve` swaps single choices while the DAG gets cheaper;
- :func:`ilp_dag` solves it exactly as an integer program with HiGHS (``highspy``): a binary per
  node, one node for the root class, a chosen node's operand classes chosen too, and an order
  variable per class that forbids cycles. It reports its cost and whether HiGHS proved it optimal.

Inputs are ``{class: [node keys]}`` (see :func:`~exprgraph.egraph.extract.class_nodes`) and a
per-node cost; outputs are ``(cost, {class: chosen node key})``.

The sets of classes below each class grow with the depth of the e-graph (a chain of 4,000 classes
took 1.8 GB, 10,000 would take over 10 GB), and each swap the local search tries copies the whole
choice (a chain of 1,000 classes took 5 s, 10,000 would take minutes). Both are bounded by
:data:`MAX_DAG_WORK` entries: past it :func:`greedy_dag` costs the classes still unsettled as trees
(each operand's cost counted in full) and keeps no more sets, and :func:`improve` stops at the best
choice found so far. The result is then still one node per class, acyclic, possibly dearer; the
integer program is bounded by HiGHS's own time limit.
"""

from __future__ import annotations

import heapq
import os
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["dag_extract", "greedy_dag", "improve", "ilp_dag", "dag_cost", "reachable", "MAX_DAG_WORK"]

NodeCost = Callable[[tuple], float]

#: entries of the below-sets :func:`greedy_dag` keeps (about 200 bytes each), and entries of the
#: choices :func:`improve` copies, before each falls back (see the module docstring)
MAX_DAG_WORK = 1_000_000


def reachable(choice: dict[int, tuple], root: int) -> list[int]:
    """Classes the chosen nodes reach from ``root`` (root first)."""
    seen = {root}
    order = [root]
    stack = [root]
    while stack:
        c = stack.pop()
        for d in choice[c][1:]:
            if d not in seen:
                seen.add(d)
                order.append(d)
                stack.append(d)
    return order


def dag_cost(choice: dict[int, tuple], root: int, node_cost: NodeCost) -> float:
    """Total cost of the distinct chosen nodes below ``root``."""
    return sum(node_cost(choice[c]) for c in reachable(choice, root))


def _acyclic(choice: dict[int, tuple], root: int) -> bool:
    state: dict[int, int] = {}
    stack: list[tuple[int, int]] = [(root, 0)]
    while stack:
        c, i = stack.pop()
        key = choice[c]
        if i == 0:
            if state.get(c) == 2:
                continue
            state[c] = 1
        if i < len(key) - 1:
            stack.append((c, i + 1))
            d = key[i + 1]
            s = state.get(d)
            if s == 1:
                return False
            if s is None:
                stack.append((d, 0))
        else:
            state[c] = 2
    return True


def greedy_dag(
    nodes: dict[int, list[tuple]],
    node_cost: NodeCost,
    prepaid: frozenset[int] | set[int] = frozenset(),
    max_work: int = MAX_DAG_WORK,
) -> dict[int, tuple]:
    """One node per class, cheapest-first, costing each node by the distinct classes below it.

    Classes in ``prepaid`` cost nothing (they are in the DAG already, for :func:`improve`). Once the
    sets of classes below hold ``max_work`` entries, the classes left are costed as trees.
    """
    users: dict[int, list[int]] = {}
    flat: list[tuple[int, tuple]] = []
    waiting: list[int] = []
    heap: list[tuple[float, int, int]] = []
    for c, keys in nodes.items():
        for key in keys:
            j = len(flat)
            flat.append((c, key))
            kids = set(key[1:])
            waiting.append(len(kids))
            for d in kids:
                users.setdefault(d, []).append(j)
            if not kids:
                heap.append((node_cost(key), 1, j))
    heapq.heapify(heap)
    sets: dict[int, dict[int, float]] | None = {}  # None once max_work is spent: costs as trees
    work = 0
    settled: dict[int, float] = {}  # the cost each class was settled at
    choice: dict[int, tuple] = {}
    while heap:
        cost, _, j = heapq.heappop(heap)
        c, key = flat[j]
        if c in choice:
            continue
        choice[c] = key
        settled[c] = cost
        if sets is not None:
            sets[c] = _below(sets, c, key, 0.0 if c in prepaid else node_cost(key))
            work += len(sets[c])
            if work > max_work:
                sets = None
        for u in users.get(c, ()):
            waiting[u] -= 1
            if waiting[u] == 0 and flat[u][0] not in choice:
                uc, ukey = flat[u]
                own = 0.0 if uc in prepaid else node_cost(ukey)
                if sets is None:
                    heapq.heappush(heap, (own + sum(settled[d] for d in ukey[1:]), len(ukey), u))
                    continue
                costs: dict[int, float] = {}
                for d in ukey[1:]:
                    costs.update(sets[d])
                costs.pop(uc, None)
                heapq.heappush(heap, (sum(costs.values()) + own, len(costs) + 1, u))
    return choice


def _below(sets: dict[int, dict[int, float]], c: int, key: tuple, own: float) -> dict[int, float]:
    """The classes below class ``c`` settled on node ``key`` (its operands' sets joined), with their costs."""
    children = key[1:]
    if children:
        biggest = max(children, key=lambda d: len(sets[d]))
        below = dict(sets[biggest])
        for d in children:
            if d is not biggest:
                below.update(sets[d])
    else:
        below = {}
    below[c] = own
    return below


def _with(choice: dict[int, tuple], c: int, key: tuple, keep: set[int], fresh: dict[int, tuple]) -> dict[int, tuple]:
    """``choice`` with class ``c`` on ``key``; classes newly reached below it take their ``fresh`` node."""
    trial = dict(choice)
    trial[c] = key
    stack = list(key[1:])
    seen = set(stack)
    while stack:
        d = stack.pop()
        if d in keep or d not in fresh:
            continue
        trial[d] = fresh[d]
        for e in fresh[d][1:]:
            if e not in seen:
                seen.add(e)
                stack.append(e)
    return trial


def improve(
    nodes: dict[int, list[tuple]],
    root: int,
    choice: dict[int, tuple],
    node_cost: NodeCost,
    max_rounds: int = 6,
    max_work: int = MAX_DAG_WORK,
) -> dict[int, tuple]:
    """Swap one class's node at a time while the DAG below ``root`` gets cheaper (and stays acyclic).

    The classes a swap newly reaches take the choices of a greedy pass in which the classes
    already in the DAG are free, so a swap can bring in operands that reuse what is there. The
    search stops once the swaps tried have copied ``max_work`` entries of choices.
    """
    choice = dict(choice)
    best = dag_cost(choice, root, node_cost)
    work = 0
    for _ in range(max_rounds):
        better = False
        keep = set(reachable(choice, root))
        fresh = greedy_dag(nodes, node_cost, prepaid=keep, max_work=max_work)
        for c in reachable(choice, root):
            current = choice[c]
            for key in nodes[c]:
                if key is current or any(d not in choice and d not in fresh for d in key[1:]):
                    continue
                work += len(choice)
                if work > max_work:
                    return choice
                trial = _with(choice, c, key, keep, fresh)
                if not _acyclic(trial, root):
                    continue
                cost = dag_cost(trial, root, node_cost)
                if cost < best - 1e-12:
                    best, choice, better = cost, trial, True
                    break
            if better:
                break
        if not better:
            break
    return choice


def _highs() -> Any:
    """A silent HiGHS instance (its first construction prints a banner on the C-level stdout)."""
    try:
        import highspy  # an optional dependency, needed by exact extraction only
    except ImportError:
        raise ImportError("exact DAG extraction needs HiGHS: pip install highspy") from None

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            h = highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    h.setOptionValue("output_flag", False)
    return h, highspy


def _reachable_classes(nodes: dict[int, list[tuple]], root: int) -> list[int]:
    """Classes reachable from ``root`` through any of their nodes (root first)."""
    classes = [root]
    seen = {root}
    for c in classes:
        for key in nodes[c]:
            for d in key[1:]:
                if d not in seen:
                    seen.add(d)
                    classes.append(d)
    return classes


def _ilp_model(highspy: Any, nodes: dict, root: int, node_cost: NodeCost, classes: list, flat: list) -> Any:
    """The integer program: a binary per node, an order variable per class (see the module docstring)."""
    col_of_class = {c: i for i, c in enumerate(classes)}
    n_x, n_t = len(flat), len(classes)
    big = float(n_t)
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_ = n_x + n_t
    lp.col_cost_ = [node_cost(key) for _, key in flat] + [0.0] * n_t
    lp.col_lower_ = [0.0] * (n_x + n_t)
    lp.col_upper_ = [0.0 if c in key[1:] else 1.0 for c, key in flat] + [big] * n_t
    lo: list[float] = []
    hi: list[float] = []
    starts, index, value = [0], [], []

    def row(cols: list[int], vals: list[float], low: float, high: float) -> None:
        index.extend(cols)
        value.extend(vals)
        starts.append(len(index))
        lo.append(low)
        hi.append(high)

    by_class: dict[int, list[int]] = {}
    for j, (c, _) in enumerate(flat):
        by_class.setdefault(c, []).append(j)
    for c in classes:  # one node for the root class, at most one for the others
        js = by_class[c]
        row(js, [1.0] * len(js), 1.0 if c == root else 0.0, 1.0)
    for j, (c, key) in enumerate(flat):
        for d in set(key[1:]):
            if d == c:
                continue
            js = by_class[d]
            row([j, *js], [1.0] + [-1.0] * len(js), -inf, 0.0)  # a chosen node's operands are chosen
            tc, td = n_x + col_of_class[c], n_x + col_of_class[d]
            row([tc, td, j], [1.0, -1.0, -big], 1.0 - big, inf)  # and come strictly earlier
    lp.num_row_ = len(lo)
    lp.row_lower_ = lo
    lp.row_upper_ = hi
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = starts
    lp.a_matrix_.index_ = index
    lp.a_matrix_.value_ = value
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n_x + [highspy.HighsVarType.kContinuous] * n_t
    return lp


def ilp_dag(
    nodes: dict[int, list[tuple]],
    root: int,
    node_cost: NodeCost,
    *,
    start: dict[int, tuple] | None = None,
    time_limit: float = 30.0,
) -> tuple[float, dict[int, tuple], bool]:
    """The cheapest acyclic choice below ``root`` by integer programming: ``(cost, choice, proved optimal)``."""
    h, highspy = _highs()
    classes = _reachable_classes(nodes, root)
    flat = [(c, key) for c in classes for key in nodes[c]]
    h.passModel(_ilp_model(highspy, nodes, root, node_cost, classes, flat))
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", 0.0)
    if start is not None and all(c in start for c in reachable(start, root)):
        _warm_start(h, highspy, flat, classes, start, root, len(flat))
    h.run()
    status = h.getModelStatus()
    sol = h.getSolution().col_value
    if len(sol) < len(flat):
        raise RuntimeError(f"HiGHS found no solution ({h.modelStatusToString(status)})")
    choice = {c: key for j, (c, key) in enumerate(flat) if sol[j] > 0.5}
    optimal = status == highspy.HighsModelStatus.kOptimal
    return dag_cost(choice, root, node_cost), choice, optimal


def _warm_start(h: Any, highspy: Any, flat: list, classes: list, start: dict, root: int, n_x: int) -> None:
    """Offer a known acyclic choice to HiGHS as its first incumbent."""
    used = set(reachable(start, root))
    depth: dict[int, int] = {}
    stack = [root]
    while stack:  # operands get smaller order numbers than their users
        c = stack[-1]
        missing = [d for d in start[c][1:] if d not in depth]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        depth[c] = 1 + max((depth[d] for d in start[c][1:]), default=0)
    values = [1.0 if c in used and start[c] == key else 0.0 for c, key in flat]
    values += [float(depth.get(c, 0)) for c in classes]
    sol = highspy.HighsSolution()
    sol.col_value = values
    sol.value_valid = True
    try:
        h.setSolution(sol)
    except Exception:  # pragma: no cover - an older highspy without setSolution
        pass


def dag_extract(
    nodes: dict[int, list[tuple]],
    root: int,
    node_cost: NodeCost,
    *,
    exact: bool = False,
    start: dict[int, tuple] | None = None,
) -> tuple[float, dict[int, tuple]]:
    """``(DAG cost, choice)`` below ``root``: the greedy heuristic improved locally, or the exact ILP.

    ``start`` is a precomputed :func:`greedy_dag` choice (it does not depend on the root).
    """
    choice = improve(nodes, root, start if start is not None else greedy_dag(nodes, node_cost), node_cost)
    if not exact:
        return dag_cost(choice, root, node_cost), choice
    cost, best, _optimal = ilp_dag(nodes, root, node_cost, start=choice)
    return cost, best
