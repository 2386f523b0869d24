"""Steps in a history of rates: where a series of levels changes, and by how much.

A module of its own, as asv keeps ``step_detect.py``: a penalised weighted L1
piecewise-constant fit on log levels (Friedrich et al., JCGS 17, 2008), weights from the
points' confidence intervals, and steps smaller than the machine's own noise merged away.
`analysis.history` uses it; nothing here knows about runs or stores.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from pqbench.analysis.stats import FloatArray, positive_array

__all__ = ["Step", "detect_steps", "noise_from_ci", "weights_from_ci"]

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
    low = np.log(positive_array(ci_low, "ci_low"))
    high = np.log(positive_array(ci_high, "ci_high"))
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
    y = np.log(positive_array(values, "values"))
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
