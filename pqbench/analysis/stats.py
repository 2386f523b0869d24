"""Statistics over per-round samples: pure functions over sequences of floats.

No I/O and no formatting. Samples are rates (operations or bytes per second), so effects
are multiplicative: comparisons and step detection work on natural logarithms and report
ratios. Every function names its method and the reference it follows. One measurement's
own summary (median and its interval) belongs to the run format: `pqbench.record.summary`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray
from scipy import special

FloatArray = NDArray[np.float64]

# Above this many samples on either side the Mann-Whitney null distribution is replaced by
# its normal approximation (the exact one costs O(n * n * m) big-integer steps).
_EXACT_MAX_SIDE = 50

# Median of |X - Y| for independent standard Laplace X, Y solves (2 + t) e^-t = 1 (t =
# 1.14619...); divided by sqrt(2) because successive differences are scaled by their spread.
_LAPLACE_DIFF_MEDIAN = 1.146193 / math.sqrt(2.0)
# Smallest noise scale (log units, i.e. 0.01 %) assumed by step detection, so that a
# noise-free series is not split at every float rounding difference.
_NOISE_FLOOR = 1e-4
#: A known per-point noise below 1% (Laplace scale in log units) is not trusted: builds
#: differ by more than their within-run confidence intervals say.
_MIN_KNOWN_NOISE = 0.01


@dataclass(frozen=True)
class Step:
    """A change of level in a history series; ``index`` is the first point at the new level."""

    index: int
    before_level: float
    after_level: float
    ratio: float


def _positive_array(samples: Sequence[float], what: str) -> FloatArray:
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
    the tests check), written out so the commands need only `scipy.special`, not the
    second it takes to import `scipy.stats`.
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
    return min(1.0, float(special.erfc(z / math.sqrt(2.0))))


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


# --- history series --------------------------------------------------------------------


def weights_from_ci(ci_low: Sequence[float], ci_high: Sequence[float]) -> list[float]:
    """Relative weights for ``detect_steps``: 1 / (ln ci_high - ln ci_low), median-normalised.

    As in asv's step detection, a point's noise is taken proportional to its confidence
    interval's width (here in log units, the scale the fit uses), so a narrow CI weighs
    more. Points with an unusable CI (zero or non-finite width) get the median weight.
    """
    low = np.asarray(ci_low, dtype=np.float64)
    high = np.asarray(ci_high, dtype=np.float64)
    if low.shape != high.shape or low.ndim != 1:
        raise ValueError("ci_low and ci_high must be sequences of the same length")
    with np.errstate(divide="ignore", invalid="ignore"):
        widths = np.log(high) - np.log(low)
        weights = 1.0 / widths
    usable = np.isfinite(weights) & (weights > 0)
    fill = float(np.median(weights[usable])) if np.any(usable) else 1.0
    weights = np.where(usable, weights, fill) / fill
    return [float(w) for w in weights]


def noise_from_ci(ci_low: Sequence[float], ci_high: Sequence[float],
                  level: float = 0.95) -> float:
    """Typical Laplace scale of a point's log value from its confidence intervals: the
    median half-width in log units over the normal quantile of `level`, over sqrt(2)."""
    low = np.log(_positive_array(ci_low, "ci_low"))
    high = np.log(_positive_array(ci_high, "ci_high"))
    z = float(NormalDist().inv_cdf(0.5 + level / 2))
    return float(np.median((high - low) / 2)) / z / math.sqrt(2)


def detect_steps(
    values: Sequence[float], weights: Sequence[float] | None = None, *, penalty: float = 4.0,
    noise: float | None = None, min_step: float = 0.0,
) -> list[Step]:
    """Steps in a history of rates, by a penalised weighted L1 piecewise-constant fit.

    Method (after asv's ``asv.step_detect``, which follows Friedrich et al., "Complexity
    Penalized M-Estimation: Fast Computation", JCGS 17, 2008): on y = ln(values), minimise
        gamma * (number of segments) + sum_i w_i * |y_i - mu_segment(i)|
    exactly by dynamic programming over all segmentations (optimal partitioning, O(n^2)
    after an O(n^3) vectorised table of segment costs; fine for a few hundred points).
    Each level mu is the segment's weighted median. The penalty is a BIC-like
    gamma = penalty * sigma * ln(n), where sigma is the Laplace noise scale of the weighted
    residuals, estimated robustly from successive differences so that the steps themselves
    barely inflate it (cf. Rice, Ann. Statist. 12, 1984); asv's default amounts to 4.
    Each Step's ``index`` is the first point at the new level; levels are in rate units.

    ``noise``, when the caller knows it (the Laplace scale of a point's log value, e.g. from
    the points' confidence intervals: ``noise_from_ci``), caps sigma: a short series with
    two steps (a regression and its fix in five builds) makes half the successive
    differences steps, where the median-based estimate breaks down and would hide both.

    ``min_step`` (a fraction, e.g. the noise floor) removes steps smaller than the machine
    moves by itself: the two segments either side of the smallest such step are merged
    (level: their joint weighted median), and so on until every step is at least
    ``min_step`` in either direction (|ln ratio| >= ln(1 + min_step)).
    """
    y = np.log(_positive_array(values, "values"))
    w = _step_weights(weights, y.size)
    if y.size < 3:
        return []
    sigma = _noise_scale(y, w)
    if noise is not None:
        sigma = min(sigma, max(noise, _MIN_KNOWN_NOISE))
    gamma = penalty * sigma * math.log(y.size)
    starts = _optimal_partition(_segment_costs(y, w), gamma)
    starts, levels = _merge_small_steps(y, w, starts, math.log1p(min_step))
    return [
        Step(
            index=start,
            before_level=math.exp(prev),
            after_level=math.exp(level),
            ratio=math.exp(level - prev),
        )
        for start, prev, level in zip(starts[1:], levels, levels[1:], strict=False)
    ]


def _merge_small_steps(y: FloatArray, w: FloatArray, starts: list[int],
                       smallest: float) -> tuple[list[int], list[float]]:
    """Merge the segments around the smallest step below ``smallest`` (log units), again
    and again; returns the surviving segment starts and their levels."""
    starts = list(starts)
    while True:
        bounds = [*starts, y.size]
        levels = [_weighted_median(y[a:b], w[a:b]) for a, b in itertools.pairwise(bounds)]
        jumps = [abs(after - before) for before, after in itertools.pairwise(levels)]
        if not jumps or min(jumps) >= smallest:
            return starts, levels
        del starts[1 + jumps.index(min(jumps))]


def _step_weights(weights: Sequence[float] | None, n: int) -> FloatArray:
    if weights is None:
        return np.ones(n)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError("weights must have one entry per value")
    if not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError("weights must be finite and positive")
    return w / float(np.median(w))


def _noise_scale(y: FloatArray, w: FloatArray) -> float:
    """Laplace scale of w_i * noise_i from the median absolute successive difference."""
    spread = np.sqrt(1.0 / w[1:] ** 2 + 1.0 / w[:-1] ** 2)
    scaled = np.abs(np.diff(y)) / spread
    return max(float(np.median(scaled)) / _LAPLACE_DIFF_MEDIAN, _NOISE_FLOOR)


def _segment_costs(y: FloatArray, w: FloatArray) -> FloatArray:
    """cost[l, r] = min over mu of sum_{i=l..r} w_i |y_i - mu| (inf where r < l).

    The minimising mu is a weighted median, which is always one of the data points, so the
    minimum over the candidates mu = y_c for all c gives the exact cost.
    """
    n = y.size
    deviation = w[:, None] * np.abs(y[:, None] - y[None, :])  # [i, c]
    cost = np.full((n, n), np.inf)
    for left in range(n):
        cost[left, left:] = np.cumsum(deviation[left:], axis=0).min(axis=1)
    return cost


def _optimal_partition(cost: FloatArray, gamma: float) -> list[int]:
    """Start indices of the segments minimising gamma * segments + sum of segment costs.

    Bellman recursion best[r] = min_l best[l] + gamma + cost[l, r - 1] (Jackson et al.,
    IEEE Signal Process. Lett. 12, 2005); ties go to the longest last segment.
    """
    n = cost.shape[0]
    best = np.zeros(n + 1)
    start_of_last = np.zeros(n + 1, dtype=np.int64)
    for right in range(1, n + 1):
        candidates = best[:right] + gamma + cost[:right, right - 1]
        left = int(np.argmin(candidates))
        best[right] = candidates[left]
        start_of_last[right] = left
    starts: list[int] = []
    right = n
    while right > 0:
        right = int(start_of_last[right])
        starts.append(right)
    return starts[::-1]


def _weighted_median(y: FloatArray, w: FloatArray) -> float:
    """Weighted median; the midpoint of the two middle values when the weight splits evenly."""
    order = np.argsort(y)
    ys, cumulative = y[order], np.cumsum(w[order])
    half = cumulative[-1] / 2
    i = int(np.searchsorted(cumulative, half))
    if math.isclose(cumulative[i], half) and i + 1 < ys.size:
        return float((ys[i] + ys[i + 1]) / 2)
    return float(ys[i])
