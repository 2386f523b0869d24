"""A run's estimate of a row (`record.estimates`): the packed form the store writes gives
`run_estimate`'s numbers to the bit, on rows of every shape; and `run_estimate` is the
median of the ln rates, worked out here by hand."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from pqbench.data.record.estimates import of_rounds, packed_rounds, run_estimate
from pqbench.data.record.rounds import LoopResult


def _rows(count: int, seed: int) -> list[tuple[list[int], list[int]]]:
    """Rows of 0 to 11 rounds: most timed, some without operations, some without time."""
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        rounds = rng.randrange(0, 12)
        ops = [0 if rng.random() < 0.08 else rng.randrange(1, 10 ** 7) for _ in range(rounds)]
        elapsed = [0 if rng.random() < 0.04 else rng.randrange(1, 10 ** 10)
                   for _ in range(rounds)]
        rows.append((ops, elapsed))
    return rows


def test_the_packed_estimates_are_run_estimates_to_the_bit() -> None:
    rows = _rows(5000, seed=1)
    values, rounds = of_rounds(*packed_rounds(rows))
    kinds = {"none": 0, "odd": 0, "even": 0}
    for (ops, elapsed), value, count in zip(rows, values.tolist(), rounds.tolist(),
                                            strict=True):
        samples = [LoopResult(n, ns).ops_per_sec for n, ns in zip(ops, elapsed, strict=True)
                   if n > 0]
        assert count == len(samples)
        expected = run_estimate(samples)
        if expected is None:
            assert math.isnan(value)
            kinds["none"] += 1
        else:
            assert value == expected  # not approximately: the noise model sums these
            kinds["odd" if count % 2 else "even"] += 1
    assert min(kinds.values()) > 100  # every case was met many times


def test_an_estimate_is_the_median_of_the_ln_rates() -> None:
    assert run_estimate([math.e, 1.0, math.e ** 3]) == pytest.approx(1.0)
    assert run_estimate([1.0, math.e ** 2, math.e, math.e ** 4]) == pytest.approx(1.5)
    assert run_estimate([]) is None
    assert run_estimate([5.0, 0.0, 7.0]) is None  # a round without elapsed time
    values, rounds = of_rounds(np.array([10, 0, 10, 30]), np.array([10, 5, 5, 10]),
                               np.array([3, 1]))
    # Row 0: rates 1e9 and 2e9 (the round without operations not counted); row 1: 3e9.
    assert values.tolist() == pytest.approx([(math.log(1e9) + math.log(2e9)) / 2,
                                             math.log(3e9)])
    assert rounds.tolist() == [2, 1]


def test_rounds_of_two_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        packed_rounds([([1, 2], [3])])
