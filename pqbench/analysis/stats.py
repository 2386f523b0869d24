"""Statistics over per-round samples: pure functions over sequences of floats.

No I/O and no formatting. Samples are rates (operations or bytes per second), so effects
are multiplicative: comparisons and step detection work on natural logarithms and report
ratios. Every function names its method and the reference it follows. One measurement's
own summary (median and its interval) belongs to the run format: `pqbench.data.record.summary`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

# Above this many samples on either side the Mann-Whitney null distribution is replaced by
# its normal approximation (the exact one costs O(n * n * m) big-integer steps).
_EXACT_MAX_SIDE = 50


def positive_array(samples: Sequence[float], what: str) -> FloatArray:
    """`samples` as a 1-D array of finite positive numbers (rates, interval ends), or a
    ValueError naming `what`."""
    values = np.asarray(samples, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"{what}: need a non-empty sequence of numbers")
    if not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"{what}: rates must be finite and positive")
    return values


# --- two sample sets -------------------------------------------------------------------


@lru_cache(maxsize=256)
def _mwu_null_cdf(n: int, m: int) -> tuple[float, ...]:
    """P(U <= u) for u = 0..n*m under the null, exactly, from integer counts.

    The number of arrangements with U = u is the coefficient of q**u in the Gaussian
    binomial coefficient [n + m choose n]_q = prod_{i=1..n} (1 - q**(m+i)) / (1 - q**i)
    (Andrews, *The Theory of Partitions*, 1976, section 3.4). Each partial product is a
    polynomial, so multiplying and dividing factor by factor stays exact.
    """
    size = n * m + 1
    coeffs = [0] * size
    coeffs[0] = 1
    for i in range(1, n + 1):
        for u in range(size - 1, m + i - 1, -1):  # times (1 - q**(m+i))
            coeffs[u] -= coeffs[u - m - i]
        for u in range(i, size):  # divided by (1 - q**i)
            coeffs[u] += coeffs[u - i]
    total = math.comb(n + m, n)
    return tuple(running / total for running in itertools.accumulate(coeffs))


def _mwu_p_value(
    log_before: FloatArray, log_after: FloatArray, diffs: FloatArray, exact: bool
) -> float:
    """Two-sided Mann-Whitney U p-value (Mann & Whitney 1947).

    Exact from the null distribution when there are no ties; otherwise the normal
    approximation with tie-corrected variance and continuity correction (Hollander, Wolfe &
    Chicken section 4.1; what `scipy.stats.mannwhitneyu(method="asymptotic")` computes, which
    the tests check), written out so the commands need no part of scipy, not the second it
    takes to import `scipy.stats`.
    """
    if exact:
        n, m = log_before.size, log_after.size
        below = int(np.count_nonzero(diffs < 0))
        above = n * m - below
        cdf = _mwu_null_cdf(n, m)
        return min(1.0, 2.0 * cdf[min(below, above)])
    n, m = log_before.size, log_after.size
    u = float(np.count_nonzero(diffs > 0)) + 0.5 * float(np.count_nonzero(diffs == 0))
    _, tied = np.unique(np.concatenate([log_before, log_after]), return_counts=True)
    total = n + m
    correction = float(np.sum(tied.astype(np.float64) ** 3 - tied)) / (total * (total - 1))
    variance = n * m / 12.0 * (total + 1 - correction)
    if variance <= 0:
        return 1.0  # every value tied: no evidence either way
    z = (abs(u - n * m / 2.0) - 0.5) / math.sqrt(variance)
    return min(1.0, math.erfc(z / math.sqrt(2.0)))


def mann_whitney_p(before: Sequence[float], after: Sequence[float]) -> float:
    """Two-sided Mann-Whitney U p-value of two samples of (log) estimates.

    Exact (from the null distribution, `_mwu_null_cdf`) without ties and up to 50 a side,
    which is the exact permutation distribution of the rank sum; otherwise the normal
    approximation with tie-corrected variance and continuity correction.
    """
    x = np.asarray(before, dtype=np.float64)
    y = np.asarray(after, dtype=np.float64)
    diffs = (y[None, :] - x[:, None]).ravel()
    ties = np.unique(np.concatenate([x, y])).size < x.size + y.size
    exact = max(x.size, y.size) <= _EXACT_MAX_SIDE and not ties
    return _mwu_p_value(x, y, diffs, exact)
