"""The signed-rank interval of a shift, by the order statistics of the Walsh averages: its
definition, in plain Python.

Tukey's construction (Hollander, Wolfe & Chicken, *Nonparametric Statistical Methods*, 3rd
ed., section 3.3): of the n(n+1)/2 Walsh averages (d_i + d_j) / 2, i <= j, the median is
the Hodges-Lehmann estimate, and [W_(k), W_(M+1-k)] the interval, k the largest integer with
P(T+ <= k - 1) <= alpha / 2 under the signed-rank null, exact up to `EXACT_MAX_PAIRS`
pairs, the normal approximation beyond. `analysis.signedrank` judges `ab` sessions by it,
picking the order statistics from numpy arrays; a speed run's paired ratios (`show`,
`speed`, `ratios`: a few dozen rounds) pick them from a sorted list here, with no numpy
loaded for a command that needs none.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:  # numpy is not loaded here: an array is only handed through
    import numpy as np
    from numpy.typing import NDArray

    #: The differences: a list, or an array (`signedrank`).
    Differences: TypeAlias = Sequence[float] | NDArray[np.float64]
    #: Order statistics (0-based ranks -> value) of the Walsh averages of differences.
    Picker: TypeAlias = Callable[[Differences, list[int]], dict[int, float]]

#: Above this many pairs the null distribution is replaced by its normal approximation.
EXACT_MAX_PAIRS = 50


@lru_cache(maxsize=128)
def null_cdf(n: int) -> tuple[float, ...]:
    """P(T+ <= t) for t = 0..n(n+1)/2 under the null, exactly.

    The number of sign assignments with T+ = t is the coefficient of q**t in
    prod_{i=1..n} (1 + q**i) (each rank i is either counted or not), out of 2**n.
    """
    size = n * (n + 1) // 2 + 1
    counts = [0] * size
    counts[0] = 1
    for i in range(1, n + 1):
        for t in range(size - 1, i - 1, -1):
            counts[t] += counts[t - i]
    total = 2 ** n
    return tuple(running / total for running in itertools.accumulate(counts))


def interval_rank(n: int, alpha: float) -> tuple[int, float]:
    """k (1-based) and actual coverage of the interval [W_(k), W_(M+1-k)]; k = 0 means the
    data cannot bound the shift at this level."""
    total = n * (n + 1) // 2
    if n <= EXACT_MAX_PAIRS:
        cdf = null_cdf(n)
        k = 0
        while k < len(cdf) and cdf[k] <= alpha / 2:
            k += 1
        return k, 1.0 - 2.0 * cdf[k - 1] if k > 0 else 0.0
    z = statistics.NormalDist().inv_cdf(1.0 - alpha / 2)
    sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
    k = max(0, math.floor(total / 2 + 0.5 - z * sd))
    return k, 1.0 - alpha if k > 0 else 0.0


def sorted_averages(d: Differences, ranks: list[int]) -> dict[int, float]:
    """The Walsh averages of `d` at the given 0-based ranks, from all of them sorted."""
    n = len(d)
    ordered = sorted(float(d[i] + d[j]) / 2 for i in range(n) for j in range(i, n))
    return {r: ordered[r] for r in ranks}


def shift_interval(d: Differences, alpha: float, *, widest: bool = False,
                   pick: Picker = sorted_averages) -> tuple[float, float, float, float]:
    """(Hodges-Lehmann estimate, interval low, interval high, true level) of the shift of
    the differences ``d``: Tukey's interval [W_(k), W_(M+1-k)] at 1 - alpha. With too few
    differences to reach it, (-inf, inf) at level 0, or with ``widest`` the widest finite
    interval there is, [W_(1), W_(M)], at its own level 1 - 2 / 2**n. `pick` gives the
    order statistics it needs (`sorted_averages`; `signedrank` partitions an array)."""
    n = len(d)
    size = n * (n + 1) // 2
    k, level = interval_rank(n, alpha)
    if k == 0 and widest:
        k, level = 1, 1.0 - 2.0 * null_cdf(n)[0]
    middle = [(size - 1) // 2, size // 2]
    found = pick(d, [*middle, *([k - 1, size - k] if k > 0 else [])])
    shift = (found[middle[0]] + found[middle[1]]) / 2
    if k == 0:
        return shift, -math.inf, math.inf, level
    return shift, found[k - 1], found[size - k], level
