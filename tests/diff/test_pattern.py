"""Row colouring and the flat, colour-ordered pattern entries: checked against a plain greedy reference."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.diff.pattern import by_colour, colour_rows, groups_of, pattern_entries, row_colours

patterns_st = st.lists(st.frozensets(st.integers(0, 12), max_size=5), max_size=30)


def reference_colours(patterns: list[frozenset[int]]) -> list[int]:
    """Greedy colouring the obvious way: the lowest colour no earlier row sharing a column has."""
    colours: list[int] = []
    for row, cols in enumerate(patterns):
        if not cols:
            colours.append(-1)
            continue
        taken = {colours[r] for r in range(row) if patterns[r] & cols}
        colour = 0
        while colour in taken:
            colour += 1
        colours.append(colour)
    return colours


@settings(max_examples=200, deadline=None)
@given(patterns=patterns_st)
def test_colours_are_the_greedy_ones(patterns: list[frozenset[int]]) -> None:
    colours = row_colours(patterns)
    assert colours == reference_colours(patterns)
    assert row_colours(patterns, 13) == colours  # the width given or found: the same
    groups = colour_rows(patterns)
    assert groups == groups_of(colours)
    assert sorted(r for g in groups for r in g) == [r for r, p in enumerate(patterns) if p]
    for group in groups:
        assert group == sorted(group) and group
        cols = [c for r in group for c in patterns[r]]
        assert len(cols) == len(set(cols))  # no column twice in a colour


def test_more_colours_than_a_machine_word() -> None:
    patterns = [frozenset({0, r + 1}) for r in range(100)] + [frozenset({5000}), frozenset({1, 2})]
    colours = row_colours(patterns)
    assert colours == reference_colours(patterns)
    assert colours[:100] == list(range(100)) and colours[100] == 0 and colours[101] == 2


def test_empty_patterns() -> None:
    assert row_colours([]) == [] and colour_rows([]) == []
    assert row_colours([frozenset(), frozenset()]) == [-1, -1] and colour_rows([frozenset()]) == []
    rows, cols = pattern_entries([frozenset(), frozenset()])
    assert rows.tolist() == [] and cols.tolist() == []
    order, starts = by_colour([-1, -1], rows, cols)
    assert order.tolist() == [] and starts == [0]


@settings(max_examples=200, deadline=None)
@given(patterns=patterns_st)
def test_entries_ordered_by_colour_then_column(patterns: list[frozenset[int]]) -> None:
    rows, cols = pattern_entries(patterns)
    assert rows.dtype == np.int64 and cols.dtype == np.int64
    assert sorted(zip(rows.tolist(), cols.tolist(), strict=True)) == sorted(
        (r, c) for r, p in enumerate(patterns) for c in p
    )
    colours = row_colours(patterns)
    order, starts = by_colour(colours, rows, cols)
    groups = groups_of(colours)
    assert len(starts) == len(groups) + 1 and starts[0] == 0 and starts[-1] == len(rows)
    for colour, group in enumerate(groups):
        lo, hi = starts[colour], starts[colour + 1]
        got_cols = cols[order[lo:hi]].tolist()
        assert got_cols == sorted(c for r in group for c in patterns[r])  # the colour's columns, ascending
        assert {r for r in rows[order[lo:hi]].tolist()} == set(group)
