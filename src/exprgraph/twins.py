"""The twins: every fast path with the plain code that gives the same results, and how they are compared.

A fast path (C through the CPython API, a module compiled by mypyc, a shortcut inside an
algorithm) lives in the package of the algorithm it speeds up, beside its twin: the Python code
that does the same thing the plain way. The twin is the specification; the fast path must give
the same results (the same terms, in the same order where order shows) on random inputs, and the
named test checks that. ``tests/test_architecture.py`` reads this table: every C file and every
compiled module is listed, every named test exists. A fast path earns its place by a gain
measured in ``bench/RESULTS.md`` (``gain``).

Imports nothing from exprgraph (a table read by the tests and the docs).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Twin", "TWINS", "PURE_ENV"]

#: the environment variable that runs every compiled twin's Python side (C term base, C sweeps, the mypyc group)
PURE_ENV = "EXPRGRAPH_PURE_PYTHON"


@dataclass(frozen=True)
class Twin:
    """A fast path, its plain twin, how to choose the twin, the test comparing them, and the measured gain."""

    #: "C", "mypyc" or "shortcut"
    kind: str
    #: the fast code: C sources (paths under src/exprgraph) or a dotted name
    fast: tuple[str, ...]
    #: the plain code giving the same results (dotted names)
    twin: str
    #: how to run the twin instead (an environment variable, a module attribute, a parameter)
    switch: str
    #: the tests that compare them on random inputs (``tests/...py::test_name``)
    tests: tuple[str, ...]
    #: where bench/RESULTS.md records the gain (empty: not measured yet)
    gain: str = ""


_CSWEEP_SWITCH = f"{PURE_ENV}=1, or the module's _native = None"

TWINS: tuple[Twin, ...] = (
    Twin(
        "C",
        (
            "core/_cterm.c",
            "core/_cterm_term.c",
            "core/_cterm_table.c",
            "core/_cterm_hash.c",
            "core/_cterm_ops.c",
            "core/_cterm_fields.c",
            "core/_cterm_walk.c",
            "core/_cterm_alloc.c",
            "core/_cterm.h",
            "core/_cterm_api.h",
        ),
        "exprgraph.core.termbase.PureTermBase, exprgraph.core.leaves.Symbol (its Python body: plain_symbol's twin), "
        "exprgraph.core.walk._postorder_py (the C walk's twin)",
        f"{PURE_ENV}=1, or exprgraph.core.leaves._plain = None, or exprgraph.core.walk._c_walk = None",
        (
            "tests/core/test_termbase.py::test_the_pure_and_the_c_base_build_the_same_terms",
            "tests/core/test_termbase_ops.py::test_the_pure_and_the_c_base_build_the_same_terms_with_numbers",
            "tests/fuzz/test_fuzz_term.py::test_fuzz_term_constructor",
            "tests/core/test_intern_pending.py::test_every_live_term_is_found_by_its_fields_through_builds_and_drops",
            "tests/core/test_build_fast_paths.py::test_fast_and_generic_paths_build_the_same_terms",
            "tests/core/test_build_fast_paths.py::test_plain_symbols_made_in_c_are_the_symbols_python_makes",
            "tests/core/test_inline_operands.py::test_the_c_walk_lists_what_the_python_walk_lists",
            "tests/core/test_term_chunks.py::test_terms_of_every_size_read_back_and_intern_after_others_are_freed",
        ),
        "2026-11-27 issue 14 (C term base: found construction 117-124 ns vs pure 780-803 ns)",
    ),
    Twin(
        "C",
        ("diff/_csweep.c", "diff/_csweep.h", "diff/_csweep_reverse.c", "diff/_csweep_groups.c"),
        "exprgraph.diff.reverse.backprop, exprgraph.diff.reverse.live_order, exprgraph.diff.reverse.backprop_groups",
        _CSWEEP_SWITCH,
        (
            "tests/diff/test_csweep.py::test_the_c_sweep_builds_what_the_python_sweep_builds",
            "tests/diff/test_csweep.py::test_the_grouped_sweep_builds_what_one_sweep_per_group_builds",
            "tests/fuzz/test_fuzz_derivatives.py::test_the_c_sweeps_build_the_python_twins_terms",
        ),
    ),
    Twin(
        "C",
        ("diff/_csweep_forward.c",),
        "exprgraph.diff.forward._sweep",
        _CSWEEP_SWITCH,
        (
            "tests/diff/test_csweep.py::test_the_c_forward_sweep_builds_what_the_python_one_builds",
            "tests/fuzz/test_fuzz_derivatives.py::test_the_c_sweeps_build_the_python_twins_terms",
        ),
    ),
    Twin(
        "C",
        ("diff/_csweep_pattern.c",),
        "exprgraph.diff.pattern.dependency_sets",
        _CSWEEP_SWITCH,
        (
            "tests/diff/test_csweep.py::test_the_c_sweep_builds_what_the_python_sweep_builds",
            "tests/diff/test_csweep.py::test_dependency_sets_limits_hold_in_both_forms",
            "tests/fuzz/test_fuzz_derivatives.py::test_the_c_sweeps_build_the_python_twins_terms",
        ),
    ),
    Twin(
        "C",
        ("diff/_csweep_rules.c",),
        "exprgraph.core.grad_template.replay (the rules of the op table, called)",
        _CSWEEP_SWITCH,
        (
            "tests/core/test_grad_template.py::test_replaying_a_recorded_rule_builds_what_the_rule_builds",
            "tests/diff/test_csweep.py::test_the_c_sweep_builds_what_the_python_sweep_builds",
        ),
    ),
    Twin(
        "C",
        ("diff/_csweep_folds.c",),
        "exprgraph.core.grad_tools.product, exprgraph.core.grad_tools.negate, exprgraph.diff.reverse._fan_in",
        _CSWEEP_SWITCH,
        (
            "tests/diff/test_csweep.py::test_the_c_folds_are_grad_tools_folds",
            "tests/diff/test_csweep.py::test_the_c_fan_in_is_the_python_one",
        ),
    ),
    Twin(
        "C",
        ("diff/_csweep_assemble.c",),
        "exprgraph.diff.blocks.BlockHessian.assemble (numpy's bincount)",
        _CSWEEP_SWITCH,
        ("tests/diff/test_assemble_twin.py::test_the_c_sum_is_bincounts_bit_for_bit",),
    ),
    Twin(
        "mypyc",
        ("exprgraph.poly.ring", "exprgraph.poly.monomials"),
        "the same modules' Python source (poly/ring.py, poly/monomials.py), loaded a second time",
        f"{PURE_ENV}=1 (for the whole group: exprgraph.accel)",
        (
            "tests/poly/test_ring_twin.py::test_the_compiled_ring_gives_what_its_source_gives",
            "tests/poly/test_ring_twin.py::test_the_compiled_monomials_give_what_their_source_gives",
            "tests/poly/test_ring_twin.py::test_budgets_stop_at_the_same_place",
        ),
    ),
    Twin(
        "mypyc",
        (
            "exprgraph.poly.dense",
            "exprgraph.poly.division",
            "exprgraph.poly.heuristic",
            "exprgraph.poly.gcd",
            "exprgraph.poly.modular",
            "exprgraph.poly.factor_univariate",
            "exprgraph.poly.factor",
            "exprgraph.poly.rational",
            "exprgraph.poly.terms",
        ),
        "the same modules' Python source (poly/*.py), loaded a second time",
        f"{PURE_ENV}=1 (for the whole group: exprgraph.accel)",
        (
            "tests/poly/test_algebra_twin.py::test_the_compiled_gcds_and_divisions_give_what_their_sources_give",
            "tests/poly/test_algebra_twin.py::test_the_compiled_factorisation_gives_what_its_source_gives",
            "tests/poly/test_algebra_twin.py::test_the_compiled_rational_functions_give_what_their_sources_give",
            "tests/poly/test_algebra_twin.py::test_the_compiled_term_conversions_give_what_their_sources_give",
        ),
    ),
    Twin(
        "mypyc",
        ("exprgraph.dims.accel.COMPILED_MODULES",),
        "the same modules' Python source",
        f"{PURE_ENV}=1 (for the whole group: exprgraph.accel)",
        ("tests/dims/test_accel.py::test_pure_and_current_builds_give_the_same_answers",),
        "2026-11-22 session 3 (dims cold text in/out: compiled 13.3 µs vs pure 24.8 µs)",
    ),
    Twin(
        "mypyc",
        (
            "exprgraph.rules.treewalk",
            "exprgraph.simplify.order",
            "exprgraph.simplify.numbers",
            "exprgraph.simplify.collect",
            "exprgraph.simplify.association",
            "exprgraph.simplify.sums",
            "exprgraph.simplify.products",
            "exprgraph.simplify.trig_terms",
            "exprgraph.simplify.trig_units",
            "exprgraph.simplify.trig",
        ),
        "the same modules' Python source (rules/treewalk.py, simplify/*.py), run by a worker process",
        f"{PURE_ENV}=1 (for the whole group: exprgraph.accel)",
        (
            "tests/simplify/test_compiled_twin.py::test_the_compiled_canonical_pass_gives_what_its_source_gives",
            "tests/simplify/test_compiled_twin.py::test_known_forms_are_the_same_compiled_and_pure",
            "tests/simplify/test_compiled_twin.py::test_the_worker_runs_the_source_and_this_process_runs_all_or_nothing",
        ),
        "2026-11-30 bench_simplify_corpus, one tree compiled vs pure (load 1.5-2.1, thread CPU): warm default "
        "234 -> 168 µs, unsafe 490 -> 382 µs; cold default 479 -> 470 µs, unsafe 785 -> 707 µs",
    ),
    Twin(
        "mypyc",
        ("exprgraph.interop.torch_read", "exprgraph.interop.torch_calls", "exprgraph.interop.torch"),
        "the same modules' Python source (interop/torch_read.py, interop/torch_calls.py, interop/torch.py), loaded a "
        "second time",
        f"{PURE_ENV}=1 (for the whole group: exprgraph.accel)",
        (
            "tests/interop/test_torch_twin.py::test_the_compiled_reader_reads_what_its_source_reads",
            "tests/interop/test_torch_twin.py::test_replacements_are_followed_alike",
            "tests/interop/test_torch_twin.py::test_the_compiled_torchdims_answers_what_its_source_answers",
            "tests/interop/test_torch_twin.py::test_a_bool_answer_stays_a_bool_and_a_number_an_int",
        ),
        "2026-11-29 torch replay, reading alone: compiled 0.39 ms vs pure 0.51 ms (resnet), 2.1 vs 3.1 ms (swin); "
        "2026-11-30 TorchDims compiled too, bench_torch_dims warm (load 4.4-4.9, thread CPU): all 19.5 -> 17.1 ms, "
        "bert+train 0.48 -> 0.38, llama+train 0.22 -> 0.20, resnet+train 3.08 -> 2.79",
    ),
    Twin(
        "C",
        (
            "interop/_torch_fast.c",
            "interop/_torch_fast_intervals.c",
            "interop/_torch_fast_points.c",
            "interop/_torch_fast.h",
        ),
        "exprgraph.interop.torch.TorchDims' Python road (the reader of torch_read, exprgraph.dims.intervals' "
        "term_interval, quick_relation, quick_bound; TorchDims._set_ranges' loop for the ranges)",
        f"{PURE_ENV}=1, or TorchDims._fast = None (a mapping that is not a dict: the Python loop of the ranges)",
        (
            "tests/interop/test_torch_fast.py::test_the_c_answers_are_the_python_roads_or_tighter_and_hold",
            "tests/interop/test_torch_fast.py::test_the_c_ranges_are_those_the_python_loop_keeps",
            "tests/interop/test_torch_fast.py::test_pure_python_switches_the_c_path_off",
            "tests/interop/test_torch_fast.py::test_a_witnessed_undecided_relation_takes_both_truths",
            "tests/interop/test_torch_fast.py::test_an_equation_with_a_monotone_side_is_undecided_where_a_value_meets_it",
        ),
        "2026-11-30 (session 16) bench_torch_dims, one tree, C path on / off, load 4.3-5.7 (thread CPU, cold): gpt2 "
        "0.33 -> 0.10-0.12 ms, vit 0.44 -> 0.12 ms, resnet+train 3.71 -> 2.68-2.79 ms; swin 15.3 -> 16.2-16.6 ms",
    ),
    Twin(
        "shortcut",
        ("exprgraph.dims.polyparse.read_polynomial",),
        "exprgraph.dims.parse.parse_expression, then the walk of exprgraph.dims.regions",
        "exprgraph.dims.ring.MAX_WORK (a text over the budget takes the general path)",
        (
            "tests/dims/test_fastpath.py::test_fast_path_reads_the_general_walks_polynomial",
            "tests/dims/test_fastpath.py::test_simplify_expression_gives_what_the_general_path_gives",
        ),
        "2026-11-29 bench_dims_shortcuts: 0.86x of parse then walk, reference table, cold, compiled",
    ),
    Twin(
        "shortcut",
        ("exprgraph.dims.regions._quick",),
        "the walk of exprgraph.dims.regions (to_poly)",
        "exprgraph.dims.regions.QUICK_PATH = False (the quick path declines every root)",
        (
            "tests/dims/test_shortcut_twins.py::test_the_quick_path_gives_the_walks_polynomial",
            "tests/dims/test_quick_path.py::test_quick_path_gives_the_walks_polynomial",
        ),
        "2026-11-29 bench_dims_shortcuts: 0.78x (simplify), 0.86x (queries) of the walk, median of 6 runs, compiled",
    ),
    Twin(
        "shortcut",
        ("exprgraph.dims.prove.open_at_points",),
        "exprgraph.dims.prove.deduce (the proof search) run on every relation the ranges leave open",
        "exprgraph.dims.prove.SAMPLE_POINTS = False (open_at_points says False: the search always runs)",
        (
            "tests/dims/test_queries_points.py::test_sampled_points_change_no_answer",
            "tests/dims/test_queries_points.py::test_open_at_points_is_open_at_points_of_the_ranges",
        ),
        "2026-11-29 torch replay: the proof search skipped for 124 of 203 open relations (six models)",
    ),
    Twin(
        "shortcut",
        ("exprgraph.dims.intervals.quick_relation", "exprgraph.dims.intervals.quick_bound"),
        "the DimEnv of exprgraph.interop.torch.TorchDims (statically_known, bound) asked every question",
        "TorchDims._quick = False (handing out TorchDims.env does it: the intervals do not follow its changes)",
        (
            "tests/interop/test_torch_quick.py::test_quick_relations_agree_with_the_dimenv",
            "tests/interop/test_torch_quick.py::test_quick_bounds_are_at_least_as_tight_as_the_dimenv",
            "tests/dims/test_intervals.py::test_a_decided_relation_holds_as_said",
            "tests/dims/test_intervals.py::test_every_value_is_inside_and_an_exact_interval_is_reached",
        ),
        "2026-11-29 torch replay, one process, quick against _quick = False, compiled (load 7-9): gpt2 0.69x "
        "warm / 0.72x cold, bert 0.77x / 0.83x, vit 0.78x / 0.85x, resnet 0.93x / 0.97x, mobilenet 1.06x / 1.02x",
    ),
    Twin(
        "shortcut",
        ("exprgraph.dims.witness.sometimes", "exprgraph.dims.witness.reached_ends"),
        "the DimEnv of exprgraph.interop.torch.TorchDims on what the intervals leave open",
        "TorchDims._quick = False (as for the intervals)",
        (
            "tests/dims/test_witness.py::test_sometimes_is_witnessed_both_ways",
            "tests/dims/test_witness.py::test_reached_ends_are_the_least_and_the_greatest_value",
            "tests/dims/test_witness.py::test_an_open_end_said_reached_is_passed_far_out",
        ),
        "2026-11-29 (session 11) torch replay: questions reaching the DimEnv gpt2+train 7 -> 0, bert+train 8 -> 0, "
        "resnet 3 -> 0, resnet+train 20 -> 6; swin 2 ms slower (witness attempts the DimEnv then decides); "
        "(session 12) compiled, sums of like monomials: resnet+train 6 -> 4, warm 4.05 -> 3.38 ms",
    ),
    Twin(
        "shortcut",
        ("exprgraph.dims.combine.may_combine",),
        "exprgraph.dims.combine.combine_terms run on every sum (it leaves the sums may_combine skips unchanged)",
        "exprgraph.dims.combine.COMBINE_CHECK = False (may_combine says True for every sum)",
        (
            "tests/dims/test_shortcut_twins.py::test_the_combine_check_skips_only_what_the_rules_leave",
            "tests/dims/test_query_shortcuts.py::test_may_combine_false_means_combine_changes_nothing",
        ),
        "2026-11-29 bench_dims_shortcuts: 0.88x (simplify), 0.92x (queries) of the rules everywhere, median of 6 runs",
    ),
    Twin(
        "shortcut",
        ("exprgraph.dims.arith.DimArith",),
        "exprgraph.dims.arith_twin.TermRoad (build each operation's term, then simplify it)",
        "none: the test runs both",
        ("tests/dims/test_arith.py::test_chains_give_the_reference_terms",),
        "2026-11-29 bench_dims_arith: replay 0.46x of the old road",
    ),
    Twin(
        "C",
        ("compile/_cvm.c", "compile/_cvm_run.c", "compile/_cvm_alloc.c", "compile/_cvm.h"),
        "exprgraph.compile.numpy_backend.build_numpy; exprgraph.compile.vm_alloc.allocate_py (its register "
        "allocation, _cvm.allocate)",
        f"{PURE_ENV}=1, or exprgraph.compile.vm._native = None, or exprgraph.compile.vm_alloc._native = None",
        (
            "tests/compile/test_vm.py::test_the_vm_gives_the_numpy_backends_values",
            "tests/compile/test_vm.py::test_loops_on_the_vm_give_the_numpy_backends_values",
            "tests/compile/test_vm_alloc.py::test_the_extension_and_its_twin_allocate_alike",
        ),
        "2026-11-29 bench_vm: ready in 0.02-0.41 s where the C build takes 0.24-12.8 s (10^3-10^4 outputs); "
        "calls 0.97-1.89x the C library's; bench_opf: straight-line encoding of case1354pegase's "
        "Jacobian/Hessian 3.3x/3.6x faster with the allocation in C",
    ),
    Twin(
        "C",
        ("compile/_cvm_one.c",),
        "the lane interpreter of compile/_cvm_run.c at one point (and through it the numpy backend)",
        "exprgraph.compile.vm.ONE_POINT = False, or EXPRGRAPH_VM_ONE_POINT=0",
        (
            "tests/compile/test_vm_one.py::test_the_dense_code_gives_the_lane_interpreters_bits",
            "tests/compile/test_vm_one.py::test_sin_and_cos_of_one_value_are_libms",
            "tests/compile/test_vm_one.py::test_loops_integers_and_stores_through_the_dense_code",
        ),
        "2026-11-29 session 12 bench_vm --one-point: AC-OPF case1354pegase/case2869pegase g, J, H at one point "
        "1.6-1.9x quicker warm, 2.2-2.6x cold; bench_opf --backend vm callback CPU per iteration 2.48-2.81 -> "
        "1.62-1.93 ms (case1354pegase), 5.17-6.24 -> 3.18-3.45 ms (case2869pegase)",
    ),
    Twin(
        "C",
        ("compile/_cvm_nlp.c",),
        "exprgraph.optimize.ipopt_c._Callbacks (IPOPT's callbacks in Python over the CompiledNLP methods)",
        "exprgraph.optimize.ipopt_c.NATIVE = False (or a backend other than the vm)",
        (
            "tests/optimize/test_native_callbacks.py::test_the_c_callbacks_give_the_nlps_values_bit_for_bit",
            "tests/optimize/test_native_callbacks.py::test_a_solve_on_either_road_is_the_same_solve",
        ),
        "2026-11-30 session 15 bench_opf --backend vm: callback CPU per IPOPT iteration on case1354pegase "
        "0.85-0.87 -> 0.62-0.63 ms, the same solve bit for bit",
    ),
    Twin(
        "C",
        (
            "compile/_cvm_walk.c",
            "compile/_cvm_encode.c",
            "compile/_cvm_encode.h",
            "compile/_cvm_walked.c",
            "compile/_cvm_terms.h",
        ),
        "exprgraph.compile.lower.lower_py; exprgraph.compile.vm_encode._encode_flat_py",
        f"{PURE_ENV}=1, or exprgraph.compile.lower._native = None and exprgraph.compile.vm_encode._native = None",
        (
            "tests/compile/test_vm_encode_twin.py::test_the_c_walk_lowers_what_lower_py_lowers",
            "tests/compile/test_vm_encode_twin.py::test_the_c_encoding_is_the_python_encoding",
            "tests/compile/test_vm_encode_twin.py::test_both_roads_run_to_the_same_bits",
            "tests/compile/test_vm_encode_twin.py::test_the_encoding_from_the_walks_arrays_is_the_encoding_from_the_terms",
            "tests/compile/test_vm_encode_twin.py::test_the_walks_arrays_answer_for_their_own_program_only",
            "tests/compile/test_vm_encode_twin.py::"
            "test_wide_programs_are_walked_as_lower_py_lowers_them_and_run_to_the_same_bits",
        ),
        "2026-11-29 bench_opf --backend vm, CPU, load 4.7-5.2: our callbacks ready (lower + encode of f, g, "
        "grad, J, H) case1354pegase 2.06 s with the twins -> 0.29 s, case2869pegase 5.03 s -> 0.67 s; "
        "2026-11-29 23:20 load 4.9-5.0, the encoding from the walk's arrays (encode_walked): 0.29 -> 0.20 s, "
        "0.68 -> 0.50 s; 2026-11-30 02:15 load 5.3-5.5, bench_vm --ready-parts: the walk reading the outputs "
        "and constants ahead, 0.068 -> 0.044 s (case1354pegase), 0.164 -> 0.121 s (case2869pegase)",
    ),
)
