"""A run's estimate of a row (`record.estimates`): the median of the ln of its per-round
rates, as numpy's median of numpy's ln gives it, to the bit (numpy's ln is the C
library's but on CPUs with AVX-512, where numpy has its own and the two may differ in the
last bit); None without a timed round or with a round of no elapsed time."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from pqbench.data.record import codec
from pqbench.data.record.estimates import of_rounds, run_estimate
from pqbench.data.record.rounds import LoopResult
from tests.helpers import CPU_FLAGS


def _rounds(count: int, seed: int) -> list[tuple[list[int], list[int]]]:
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


def test_an_estimate_is_numpys_median_of_the_ln_rates() -> None:
    kinds = {"none": 0, "odd": 0, "even": 0}
    for ops, elapsed in _rounds(5000, seed=1):
        samples = [LoopResult(n, ns).ops_per_sec for n, ns in zip(ops, elapsed, strict=True)
                   if n > 0]
        found, counted = of_rounds(ops, elapsed)
        assert counted == len(samples)
        assert run_estimate(samples) == found
        if not samples or min(samples) <= 0:
            assert found is None
            kinds["none"] += 1
            continue
        expected = float(np.median(np.log(np.asarray(samples, dtype=np.float64))))
        assert found is not None
        if "avx512f" in CPU_FLAGS:
            assert found == pytest.approx(expected, rel=1e-15)
        else:
            assert found == expected  # not approximately: the noise model sums these
        kinds["odd" if counted % 2 else "even"] += 1
    assert min(kinds.values()) > 100  # every case was met many times


def test_an_estimate_by_hand() -> None:
    assert run_estimate([math.e, 1.0, math.e ** 3]) == pytest.approx(1.0)
    assert run_estimate([1.0, math.e ** 2, math.e, math.e ** 4]) == pytest.approx(1.5)
    assert run_estimate([]) is None
    assert run_estimate([5.0, 0.0, 7.0]) is None  # a round without elapsed time
    # Rates 1e9 and 2e9, the round without operations not counted.
    assert of_rounds([10, 0, 10], [10, 5, 5]) == (
        pytest.approx((math.log(1e9) + math.log(2e9)) / 2), 2)


def test_the_stored_row_carries_its_estimate() -> None:
    samples = [{"ops": 10, "elapsed_ns": 10}, {"ops": 0, "elapsed_ns": 5},
               {"ops": 30, "elapsed_ns": 10}]
    columns = codec.row_columns({"algorithm": "SHA-256", "implementation": "python",
                                 "operation": "hash", "block_size": 64, "samples": samples})
    assert (columns["estimate"], columns["estimate_rounds"]) == of_rounds([10, 0, 30],
                                                                          [10, 5, 10])
    assert columns["ops_per_sec"] == 2e9  # the median rate, from the same sorted rates
