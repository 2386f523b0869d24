"""One measurement's rounds, summarised: the figures a run document carries beside its
samples (median, spread and an interval for the median).

Plain Python (`statistics`, exact binomial counts), so the run format needs neither numpy
nor scipy and reading or writing a run loads no statistics package.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    """One measurement's samples, summarised. ``ci_level`` is the interval's actual coverage."""

    n: int
    median: float
    mean: float
    stdev: float
    cv: float
    ci_low: float
    ci_high: float
    ci_level: float
    min: float
    max: float


def _median_coverages(n: int) -> list[float]:
    """coverage[j] = 1 - 2 * P(B <= j - 1), B ~ Binomial(n, 1/2), for j = 1 .. n // 2 + 1,
    from exact integer counts (Python divides big integers correctly rounded)."""
    coverage = [math.nan]
    below, term = 0, 1  # sum of C(n, i) for i < j; C(n, j - 1)
    for j in range(1, n // 2 + 2):
        below += term
        coverage.append(1.0 - 2.0 * (below / 2**n))
        term = term * (n - j + 1) // j
    return coverage


def median_ci_ranks(n: int, confidence: float = 0.95) -> tuple[int, int, float]:
    """0-based ranks (lo, hi) of the order statistics bounding a CI for the median.

    Method: distribution-free interval [x_(j), x_(n+1-j)] whose coverage is
    1 - 2 * P(B <= j - 1) with B ~ Binomial(n, 1/2) (Hollander, Wolfe & Chicken,
    *Nonparametric Statistical Methods*, 3rd ed., section 3.6). The narrowest such interval
    with coverage >= ``confidence`` is chosen; when even min..max falls short, min..max is
    returned with its actual coverage 1 - 2**(1 - n).
    """
    if n < 1:
        raise ValueError("need at least one sample")
    coverage = _median_coverages(n)
    j = 1
    while j + 1 <= n + 1 - (j + 1) and coverage[j + 1] >= confidence:
        j += 1
    return j - 1, n - j, coverage[j]


def summarize(samples: Sequence[float], *, confidence: float = 0.95) -> Summary:
    """Median, mean, spread and a ~95 % order-statistic CI for the median of ``samples``.

    ``stdev`` is the sample standard deviation (n - 1 denominator) and ``cv`` = stdev/mean;
    both are NaN for a single sample. The CI follows ``median_ci_ranks``.
    """
    try:
        values = sorted(float(v) for v in samples)
    except (TypeError, ValueError):
        values = []
    if not values or not all(math.isfinite(v) for v in values):
        raise ValueError("samples: need a non-empty sequence of finite numbers")
    n = len(values)
    lo, hi, level = median_ci_ranks(n, confidence)
    mean = statistics.fmean(values)
    stdev = statistics.stdev(values) if n > 1 else math.nan
    return Summary(
        n=n,
        median=statistics.median(values),
        mean=mean,
        stdev=stdev,
        cv=stdev / mean if mean != 0 else math.nan,
        ci_low=values[lo],
        ci_high=values[hi],
        ci_level=level,
        min=values[0],
        max=values[-1],
    )
