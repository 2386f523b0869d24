"""Is a row's figure steady enough to trust? The checks `pqbench speed` warns about.

As pyperf does after a run (pyperf `_cli.format_checks`: a standard deviation over 10 % of
the mean makes "the benchmark unstable"), each row is checked for:

* spread: the coefficient of variation of its per-round rates over ``CV_LIMIT``;
* trend: rates that move one way from the first rounds to the last (Spearman's rank
  correlation with the round number at least ``TREND_RHO`` in size, and the median of the
  last third of the rounds ``TREND_LIMIT`` or more away from the first third's): the
  machine changed speed during the row (clock ramping, a co-tenant arriving), so its
  median depends on when it was taken.

Pure functions, no printing; `console` words the warning and what helps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

CV_LIMIT = 0.10
TREND_RHO = 0.8
TREND_LIMIT = 0.05
#: Fewer rounds than this say nothing about a trend.
TREND_MIN_ROUNDS = 5

WHAT_HELPS = ("more rounds (--rounds), pinning to one CPU (--cpu), or measuring both "
              "configurations in one paired session (`pqbench ab`), which cancels drift")


def problems(samples: Sequence[float]) -> list[str]:
    """Why these per-round rates are too unsteady to trust; empty when they are fine."""
    values = np.asarray(samples, dtype=np.float64)
    found: list[str] = []
    if values.size >= 2 and values.mean() > 0:
        cv = float(np.std(values, ddof=1) / values.mean())
        if cv > CV_LIMIT:
            found.append(f"CV {_over(cv * 100, CV_LIMIT * 100)} % is over "
                         f"{CV_LIMIT * 100:g} %")
    trend = drift(values)
    if trend is not None:
        found.append(f"rates moved {trend * 100:+.0f} % from the first rounds to the last")
    return found


def _over(value: float, limit: float) -> str:
    """`value` to one decimal, as the tables print a CV, or to as many more as it takes to
    read above `limit` (rounded to whole percents, 10.4 read "CV 10% is over 10%")."""
    for decimals in range(1, 7):
        text = f"{value:.{decimals}f}"
        if float(text) > limit:
            return text
    return f"{value:.6f}"


def drift(values: np.ndarray) -> float | None:
    """The first-to-last change of a monotone run of rates, or None without one."""
    n = values.size
    if n < TREND_MIN_ROUNDS or np.ptp(values) == 0:
        return None
    rho = spearman_rho(np.arange(n), values)
    third = max(2, n // 3)
    change = float(_median(values[-third:]) / _median(values[:third])) - 1.0
    if abs(rho) >= TREND_RHO and abs(math.log1p(change)) >= math.log1p(TREND_LIMIT):
        return change
    return None


def _median(values: np.ndarray) -> np.floating:
    """np.median of a one-dimensional array, to the bit (the middle value, or the mean of
    the middle two as np.median takes it), without the masked-array module np.median
    imports on its first call, a fifth of numpy's own import. A NaN is sorted last, where
    np.median would give NaN: `drift` finds no trend in a row holding one either way."""
    ordered = np.sort(values)
    middle = ordered.size // 2
    return ordered[middle] if ordered.size % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def spearman_rho(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation of two samples: Pearson's correlation of their average
    ranks, as scipy.stats.spearmanr computes it (the same ranks, the same np.corrcoef, the
    same float), NaN where a sample holds a NaN or is constant. In numpy alone: importing
    scipy.stats takes longer than `show` may."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size < 2 or np.isnan(x).any() or np.isnan(y).any() or np.ptp(x) == 0 \
            or np.ptp(y) == 0:
        return math.nan
    ranked = np.column_stack((_average_ranks(x), _average_ranks(y)))
    return float(np.corrcoef(ranked, rowvar=False)[1, 0])


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks from 1, tied values sharing the mean of their ranks (rankdata's "average")."""
    order = np.argsort(values, kind="mergesort")
    inverse = np.empty(values.size, dtype=np.intp)
    inverse[order] = np.arange(values.size)
    ordered = values[order]
    starts = np.r_[True, ordered[1:] != ordered[:-1]]
    dense = starts.cumsum()[inverse]
    bounds = np.r_[np.nonzero(starts)[0], values.size]
    return 0.5 * (bounds[dense] + bounds[dense - 1] + 1)
