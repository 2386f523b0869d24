"""A row's cycles per operation in its time base, round by round (`record.rounds`)."""

from __future__ import annotations

import pytest

from pqbench.data.record.rounds import cycles_per_op_in_base

# Rounds worked by hand: 10^7 cycles over 1000 ops in 2 ms of CPU time within a 4 ms
# window ran for half of them; a round without operations, without a count, with a wall
# time of 0 or without one (wall_ns is one short) is left out; a CPU time above the wall
# time counts the whole window.
OPS = [1000, 0, 1000, 1000, 1000, 1000]
CPU_NS = [2_000_000, 5, 3_000_000, 1_000_000, 3_000_000, 4_000_000]
CYCLES = [10_000_000, 5, None, 8_000_000, 9_000_000, 6_000_000]
WALL_NS = [4_000_000, 1, 1, 0, 2_000_000]


def test_a_cpu_time_row_scales_each_counted_round_by_its_share_of_the_window() -> None:
    assert cycles_per_op_in_base(OPS, CPU_NS, CYCLES, WALL_NS, "cpu") == [5000.0, 9000.0]
    assert cycles_per_op_in_base(OPS, CPU_NS, CYCLES, None, "cpu") == []


def test_a_wall_time_row_takes_every_counted_round_as_it_is() -> None:
    assert cycles_per_op_in_base(OPS, CPU_NS, CYCLES, WALL_NS, "wall") == [
        10_000.0, 8000.0, 9000.0, 6000.0]
    assert cycles_per_op_in_base(OPS, CPU_NS, CYCLES, None, "wall") == [
        10_000.0, 8000.0, 9000.0, 6000.0]


def test_rounds_and_counts_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError):
        cycles_per_op_in_base(OPS, CPU_NS[:-1], CYCLES, WALL_NS, "cpu")
