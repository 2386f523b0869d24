"""A run's estimate of a row: the median of the natural logarithms of its per-round rates.

Rates change by factors, so runs are compared on ln rates, and a run's level for a row is
the median of its rounds' ln rates, robust to a stray round (docs/statistics.md, "Groups
of runs"; the noise model learns a machine's run-to-run spread from these numbers). The
rounds counted are those with operations, each at `LoopResult.ops_per_sec` (ops * 1e9 /
elapsed ns, 0 without elapsed time). A row without such a round, or with a round of rate
0, has no estimate.

Defined here once, for every caller: the store writes it with each run
(`store.schema.estimates`, from `codec.row_columns`, which sorts the rates for the row's
median rate anyway), and readers of runs in hand take it from their rates. The ln is
math.log, the C library's, as numpy's is on CPUs without AVX-512 (where numpy has a
log of its own, which may differ from it in the last bit); since log is monotonic, the
median of the ln rates is the ln of the middle rate of an odd count, and the mean of the
ln of the middle two, (a + b) / 2, of an even count, as `numpy.median` takes it. Plain
Python, so an import loads no numpy for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def run_estimate(rates: Sequence[float]) -> float | None:
    """The estimate of one row from its per-round rates (`Measurement.samples`): the
    median of their ln, None without a rate or with a rate of 0."""
    return of_ordered(sorted(rates))


def of_ordered(ordered: Sequence[float]) -> float | None:
    """`run_estimate` of rates already sorted in ascending order."""
    if not ordered or not ordered[0] > 0:
        return None
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return math.log(ordered[middle])
    return (math.log(ordered[middle - 1]) + math.log(ordered[middle])) / 2


def round_rates(ops: Sequence[int], elapsed: Sequence[int]) -> list[float]:
    """The per-round rates of a row's stored rounds (`Measurement.samples`): those with
    operations, each at `LoopResult.ops_per_sec` to the bit."""
    return [n * 1e9 / ns if ns > 0 else 0.0 for n, ns in zip(ops, elapsed, strict=True)
            if n > 0]


def of_rounds(ops: Sequence[int], elapsed: Sequence[int]) -> tuple[float | None, int]:
    """A row's estimate from its stored rounds, and the rounds it rests on."""
    rates = round_rates(ops, elapsed)
    return run_estimate(rates), len(rates)
