"""exprgraph.graph: graph rewriting on interned terms (FunctionGraph, node and graph rewriters, databases).

- :class:`FunctionGraph`: a view over the DAG between inputs and outputs, with clients,
  replacement (parents rebuilt lazily, linear in the nodes touched), checkpoints and features
  (:class:`ReplaceValidate`, :class:`History`, :class:`Validator`);
- node rewriters (:class:`NodeRewriter`, :func:`node_rewriter`, :class:`PatternNodeRewriter`,
  :class:`SubstitutionNodeRewriter`, :class:`RemovalNodeRewriter`, :class:`SequentialNodeRewriter`,
  :class:`KanrenRelationSub`, :class:`RuleNodeRewriter`, :class:`RegionNodeRewriter`) and graph rewriters
  (:class:`GraphRewriter`, :func:`graph_rewriter`,
  :class:`WalkingGraphRewriter` / :func:`in2out` / :func:`out2in`, :class:`SequentialGraphRewriter`,
  :class:`EquilibriumGraphRewriter`, :class:`MergeOptimizer`), all applied through one
  transaction driver (:class:`RewriteDriver`);
- rewrite databases (:class:`SequenceDB`, :class:`EquilibriumDB`, :class:`LocalGroupDB`,
  :class:`ProxyDB`, :class:`RewriteDatabaseQuery`), the default :data:`optdb` and :func:`rewrite_graph`;
- profiles (dataclasses with ``print_profile()``);
- PyTensor's graph toolbox over terms: traversals (:func:`io_toposort`, :func:`general_toposort`,
  :func:`walk`, :func:`ancestors`, :func:`vars_between`, :func:`orphans_between`,
  :func:`applys_between`, :func:`apply_depends_on`, :func:`variable_depends_on`,
  :func:`truncated_graph_inputs`, :func:`graph_inputs`, :func:`explicit_graph_inputs`),
  :func:`graph_replace` / :func:`clone_replace`, :func:`equal_computations`, :func:`as_string`,
  and :class:`FrozenFunctionGraph` (``FunctionGraph.freeze()``).

Layer 6 of docs/architecture.md: imports simplify, rules, match, core, console and errors; nothing
above it.
"""

from __future__ import annotations

from . import profile, rewriters, traversal
from .comparison import equal_computations
from .db import EquilibriumDB, LocalGroupDB, ProxyDB, RewriteDatabase, RewriteDatabaseQuery, SequenceDB
from .equilibrium import STOP_REASONS, EquilibriumGraphRewriter, Limits
from .features import Feature, ReplaceValidate, Validator
from .fgraph import OUTPUT, Checkpoint, FunctionGraph
from .frozen import FrozenFunctionGraph
from .history import History, Step
from .merge import MergeOptimizer, MergeTracker
from .optdb import optdb, register_canonicalize, register_specialize, register_stabilize, rewrite_graph
from .pattern_rewriter import PatternNodeRewriter
from .printing import as_string, format_terms
from .profile import *  # noqa: F403  (the profile classes)
from .region_rewrite import RegionCache, RegionNodeRewriter
from .replace import clone_replace, graph_replace
from .rewriters import *  # noqa: F403  (the rewriter interfaces and the ready-made node rewriters)
from .transaction import RewriteDriver, replacement_pairs
from .traversal import *  # noqa: F403  (PyTensor's traversals: io_toposort, ancestors, ...)
from .walking import WalkingGraphRewriter, in2out, out2in

__all__ = ["FunctionGraph", "OUTPUT", "Checkpoint", "Feature", "ReplaceValidate", "Validator", "History", "Step"]
__all__ += rewriters.__all__
__all__.remove("as_op")  # a helper of the rewriters: import it from .rewriters
__all__ += ["PatternNodeRewriter", "RegionNodeRewriter", "RegionCache"]
__all__ += ["WalkingGraphRewriter", "in2out", "out2in", "EquilibriumGraphRewriter", "STOP_REASONS", "Limits"]
__all__ += ["MergeOptimizer", "MergeTracker", "RewriteDriver", "replacement_pairs"]
__all__ += ["RewriteDatabase", "SequenceDB", "EquilibriumDB", "LocalGroupDB", "ProxyDB", "RewriteDatabaseQuery"]
__all__ += ["optdb", "rewrite_graph", "register_canonicalize", "register_stabilize", "register_specialize"]
__all__ += profile.__all__
__all__.remove("format_table")  # a helper of the profiles: import it from .profile
__all__ += ["format_terms"]
__all__ += ["FrozenFunctionGraph", "graph_replace", "clone_replace", "equal_computations", "as_string"]
__all__ += traversal.__all__
