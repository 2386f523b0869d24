"""A run's estimate of a row: the median of the natural logarithms of its per-round rates.

Rates change by factors, so runs are compared on ln rates, and a run's level for a row is
the median of its rounds' ln rates, robust to a stray round (docs/statistics.md, "Groups
of runs"; the noise model learns a machine's run-to-run spread from these numbers). The
rounds counted are those with operations; a round's rate is `LoopResult.ops_per_sec`
(ops * 1e9 / elapsed ns, 0 without elapsed time). A row without such a round, or with a
round of rate 0, has no estimate.

Defined here once, in two forms that give the same numbers to the bit
(tests/data/record/test_estimates.py): `run_estimate` for one row's rates in hand, and
`of_rounds` for many rows' stored rounds at once, as the store keeps them per run and row
(`store.schema.estimates`) when it writes a run. The ln of each rate is numpy's (the
store's writer and a reader of runs in hand must agree to the bit), so this module is
imported by the code that computes figures, not at start-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def run_estimate(rates: Sequence[float] | FloatArray) -> float | None:
    """The estimate of one row from its per-round rates (`Measurement.samples`): the
    median of their ln, None without a rate or with a rate of 0."""
    values = np.asarray(rates, dtype=np.float64)
    if values.size == 0 or not float(values.min()) > 0:
        return None
    return float(np.median(np.log(values)))


def round_rates(ops: IntArray, elapsed: IntArray) -> FloatArray:
    """Each round's rate, `LoopResult.ops_per_sec` to the bit: ops * 1e9 / elapsed_ns in
    float64, 0 for a round without elapsed time."""
    timed = elapsed > 0
    return np.where(timed, ops * 1e9 / np.where(timed, elapsed, 1), 0.0)


def of_rounds(ops: IntArray, elapsed: IntArray, lengths: IntArray
              ) -> tuple[FloatArray, IntArray]:
    """The estimates of many rows at once from their rounds, packed: row i's rounds are
    the next `lengths[i]` of `ops` and `elapsed`. Per row, its estimate (NaN where it has
    none) and the rounds it rests on (those with operations). `run_estimate`'s numbers:
    the middle one of an odd count of sorted ln rates, the mean of the two middle ones,
    (a + b) / 2, of an even count, as `numpy.median` takes them."""
    rows = len(lengths)
    owner = np.repeat(np.arange(rows, dtype=np.int64), lengths)
    counted = ops > 0
    owner = owner[counted]
    rates = round_rates(ops[counted], elapsed[counted])
    rounds = np.bincount(owner, minlength=rows).astype(np.int64)
    unrated = np.bincount(owner[rates <= 0], minlength=rows) > 0
    logs = np.log(np.where(rates > 0, rates, 1.0))
    ordered = logs[np.lexsort((logs, owner))]  # by row, ascending within each row
    starts = np.cumsum(rounds) - rounds
    found = np.flatnonzero((rounds > 0) & ~unrated)
    low = ordered[starts[found] + (rounds[found] - 1) // 2]
    high = ordered[starts[found] + rounds[found] // 2]
    estimates = np.full(rows, np.nan)
    estimates[found] = np.where(rounds[found] % 2 == 1, low, (low + high) / 2)
    return estimates, rounds


def packed_rounds(rows: Sequence[tuple[Sequence[int], Sequence[int]]]
                  ) -> tuple[IntArray, IntArray, IntArray]:
    """(ops, elapsed, lengths) for `of_rounds` from each row's two round lists."""
    import itertools

    lengths = np.fromiter((len(ops) for ops, _ in rows), np.int64, len(rows))
    if not np.array_equal(lengths, [len(ns) for _, ns in rows]):
        raise ValueError("a result row's round arrays differ in length")
    total = int(lengths.sum())
    chain: Any = itertools.chain.from_iterable
    ops = np.fromiter(chain(ops for ops, _ in rows), np.int64, total)
    elapsed = np.fromiter(chain(ns for _, ns in rows), np.int64, total)
    return ops, elapsed, lengths
