"""Paired comparisons: the Wilcoxon signed-rank test and its Hodges-Lehmann estimate.

In a paired, interleaved session (`pqbench ab`) each pair is one round of A and one of B
taken back to back on the same CPU, so the machine's drift, shared by both rounds, cancels
in the pair's log ratio d = ln(rate B) - ln(rate A). The pairs, not the rounds, are the
independent units. Methods (Hollander, Wolfe & Chicken, *Nonparametric Statistical
Methods*, 3rd ed., sections 3.1-3.3):

* estimate: the Hodges-Lehmann estimator, the median of the n(n+1)/2 Walsh averages
  (d_i + d_j) / 2, i <= j (Hodges & Lehmann, Ann. Math. Statist. 34, 1963);
* interval: [W_(k), W_(M+1-k)] of the ordered Walsh averages (M = n(n+1)/2), k the largest
  integer with P(T+ <= k - 1) <= alpha / 2 under the signed-rank null (Tukey's
  construction), exact up to 50 pairs, the normal approximation with continuity
  correction beyond;
* p-value: the two-sided Wilcoxon signed-rank test (Wilcoxon, Biometrics Bull. 1, 1945),
  exact without ties or zero differences up to 50 pairs, otherwise SciPy's normal
  approximation with tie correction.

Before, after and ratio are one estimate: before is A's level (geometric mean of its
rounds), ratio = exp(HL) and after = before * ratio. B's own mean would carry the drift
that pairing removes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from pqbench.analysis import verdict, walsh
from pqbench.analysis.stats import positive_array
from pqbench.analysis.walsh import EXACT_MAX_PAIRS, null_cdf

FloatArray = NDArray[np.float64]

METHOD = ("paired rounds, A and B back to back on one CPU in random order: Hodges-Lehmann "
          "estimate of the per-pair ln ratios with its signed-rank CI; two-sided Wilcoxon "
          "signed-rank test over pairs")


def walsh_averages(d: FloatArray) -> FloatArray:
    """All (d_i + d_j) / 2 for i <= j, sorted."""
    return np.sort(_walsh(d))


def _walsh(d: FloatArray) -> FloatArray:
    i, j = _pairs_of(d.size)
    return (d[i] + d[j]) / 2


@lru_cache(maxsize=16)
def _pairs_of(n: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    i, j = np.triu_indices(n)
    return i, j


def _order_statistics(values: FloatArray, ranks: list[int]) -> dict[int, float]:
    """The given 0-based order statistics, by partial sorting (O(n), not O(n log n))."""
    wanted = sorted(set(ranks))
    parted = np.partition(values, wanted)
    return {r: float(parted[r]) for r in wanted}


def shift_interval(d: FloatArray, alpha: float, *, widest: bool = False
                   ) -> tuple[float, float, float, float]:
    """`walsh.shift_interval` of the differences in an array, its order statistics picked
    by partial sorting (an `ab` session's thousands of Walsh averages)."""
    return walsh.shift_interval(d, alpha, widest=widest, pick=_picked)


def _picked(d: walsh.Differences, ranks: list[int]) -> dict[int, float]:
    return _order_statistics(_walsh(np.asarray(d, dtype=np.float64)), ranks)


def p_value(d: FloatArray) -> float:
    """Two-sided Wilcoxon signed-rank p of the differences ``d`` against zero."""
    n = d.size
    magnitudes = np.abs(d)
    exact = n <= EXACT_MAX_PAIRS and np.all(magnitudes > 0) \
        and np.unique(magnitudes).size == n
    if exact:
        ranks = np.argsort(np.argsort(magnitudes)) + 1  # no ties here
        positive = round(float(ranks[d > 0].sum()))
        cdf = null_cdf(n)
        total = n * (n + 1) // 2
        return min(1.0, 2.0 * cdf[min(positive, total - positive)])
    if not np.any(magnitudes > 0):
        return 1.0
    # Only an `ab` session with ties or many pairs gets here: scipy.stats (a second to
    # import) loads then, not for every command that imports the verdict rules.
    from scipy import stats as sp_stats

    result = sp_stats.wilcoxon(d, zero_method="wilcox", correction=True,
                               alternative="two-sided", method="approx")
    return float(result.pvalue)


def _log_pairs(before: Sequence[float], after: Sequence[float]
               ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each side's ln rates, pair by pair: the same number of finite, positive rates on
    each side (checked before the logarithm, so a zero is refused, not turned into -inf)."""
    a, b = positive_array(before, "pairs"), positive_array(after, "pairs")
    if a.shape != b.shape:
        raise ValueError("pairs: need the same number of rates on each side")
    return np.log(a), np.log(b)


def compare_pairs(before: Sequence[float], after: Sequence[float], *,
                  threshold: float | None = None, alpha: float = 0.01) -> verdict.Outcome:
    """Is B (``after``) faster or slower than A (``before``), pair by pair?

    ``before[i]`` and ``after[i]`` are the rates of pair i. ``threshold`` None means auto,
    which for pairs is the 5 % minimum band: the noise floor of `compare` is the spread
    between replicate runs, a drift that pairing cancels (both rounds of a pair share it),
    and the pairs' own scatter is already in the interval. Using that scatter as a band
    would call a real 10 % change "no change" on a busy machine; the row then stays
    inconclusive until enough pairs narrow its interval. ``floor`` is therefore None
    ("not needed: paired") and ``spread_*`` are each side's standard deviation of ln round
    rates, which show the drift the pairs cancelled. ``too few runs`` when n pairs cannot
    reach p < alpha (2 / 2**n >= alpha).
    """
    a, b = _log_pairs(before, after)
    d = b - a
    n = d.size
    shift, log_low, log_high, level = shift_interval(d, alpha)
    band = verdict.threshold_for(None, threshold)
    p = p_value(d)
    attainable = verdict.smallest_signed_rank_p(n)
    if attainable >= alpha:
        outcome = (verdict.TOO_FEW, (
            f"{n} pairs: the exact signed-rank test can reach p = {attainable:.3g} at best, "
            f"not below alpha={alpha:.3g}; at least {verdict.pairs_needed(alpha)} pairs are "
            "needed"))
    else:
        outcome = verdict.decide(p, log_low, log_high, alpha=alpha, threshold=band)
    before_level = math.exp(float(a.mean()))
    spread_a = float(np.std(a, ddof=1)) if n >= 2 else None
    spread_b = float(np.std(b, ddof=1)) if n >= 2 else None
    return verdict.Outcome(
        before=before_level, after=before_level * math.exp(shift), ratio=math.exp(shift),
        ci_low=math.exp(log_low), ci_high=math.exp(log_high), ci_level=level, p_value=p,
        verdict=outcome[0], reason=outcome[1], units_before=n, units_after=n,
        spread_before=spread_a, spread_after=spread_b, floor=None, threshold=band,
        method=METHOD)


# --- worker pairs as the unit above the round pairs ---------------------------------------

#: A standard deviation below this (in ln units: a billionth) is estimates agreeing to the
#: digits rates are stored with: no spread shown, which backs no interval, not a spread of 0.
NO_SPREAD = 1e-9
#: Fewer worker pairs than this leave the spread between worker processes unknown.
FEWEST_WORKER_PAIRS = 2

WORKER_METHOD = ("worker pairs as the unit above the round pairs: per worker pair the "
                 "Hodges-Lehmann estimate of its pairs' ln ratios; the session's estimate, "
                 "t interval and two-sided one-sample t test over those estimates (J - 1 df)")


def hodges_lehmann(d: FloatArray) -> float:
    """The median of the Walsh averages of ``d`` (the middle two averaged when even)."""
    walsh = _walsh(d)
    middle = [(walsh.size - 1) // 2, walsh.size // 2]
    found = _order_statistics(walsh, middle)
    return (found[middle[0]] + found[middle[1]]) / 2


def compare_worker_pairs(before: Sequence[float], after: Sequence[float],
                         workers: Sequence[object], *, threshold: float | None = None,
                         alpha: float = 0.01) -> verdict.Outcome:
    """Is B faster or slower than A, with the worker pair as the unit of replication?

    ``before[i]`` and ``after[i]`` are the rates of round pair i and ``workers[i]`` names
    the worker pair (one A and one B process) that took it. Two processes running identical
    code differ by a few percent from memory layout alone (stack and environment offsets,
    link order: Mytkowicz et al., "Producing Wrong Data Without Doing Anything Obviously
    Wrong!", ASPLOS 2009; Curtsinger & Berger, "Stabilizer", ASPLOS 2013), and every round
    pair a worker pair takes shares that pair's offset. The round pairs of one worker pair
    are therefore not independent of each other; the worker pairs are, since each was
    started afresh with its own layout. Hence a two-stage (cluster-level) analysis: per
    worker pair the Hodges-Lehmann estimate of its pairs' ln ratios (robust to a stray
    round), then over the J estimates their mean, the Student t interval mean ± t(1 -
    alpha/2, J - 1) s / sqrt(J) and the two-sided one-sample t test of mean 0 (Student,
    Biometrika 6, 1908). A test on cluster summaries keeps its level whatever the
    correlation within clusters (Donner & Klar, *Design and Analysis of Cluster
    Randomization Trials in Health Research*, 2000, section 6.2), and it is the top level of
    Kalibera & Jones's hierarchical design ("Rigorous Benchmarking in Reasonable Time",
    ISMM 2013: variation is taken at the highest level it enters, with that level's degrees
    of freedom). Each worker pair's estimate averages many round pairs, so it is close to
    normal even where single rounds are not. ``ci_level`` is 1 - alpha.

    Fewer than two worker pairs leave the spread between processes unknown: ``too few
    runs``. The band, ``floor`` (None) and ``spread_*`` (each side's sd of ln round rates)
    are as in `compare_pairs`; ``units_*`` count the worker pairs.
    """
    a, b = _log_pairs(before, after)
    if len(workers) != a.size:
        raise ValueError("pairs: need a worker pair for every pair")
    d = b - a
    groups: dict[object, list[int]] = {}
    for index, worker in enumerate(workers):
        groups.setdefault(worker, []).append(index)
    estimates = np.array([hodges_lehmann(d[np.asarray(rows)]) for rows in groups.values()])
    n = d.size
    return unit_outcome(
        estimates, math.exp(float(a.mean())), fewest=FEWEST_WORKER_PAIRS,
        too_few=(f"{estimates.size} worker pair: the spread between worker processes cannot "
                 f"be estimated; at least {FEWEST_WORKER_PAIRS} worker pairs are needed"),
        spreads=(float(np.std(a, ddof=1)) if n >= 2 else None,
                 float(np.std(b, ddof=1)) if n >= 2 else None),
        alpha=alpha, threshold=threshold, method=WORKER_METHOD)


def unit_outcome(estimates: FloatArray, before_level: float, *, fewest: int, too_few: str,
                 spreads: tuple[float | None, float | None], alpha: float,
                 threshold: float | None, method: str) -> verdict.Outcome:
    """The verdict of a design whose units (worker pairs, machines) each give one ln shift
    estimate: their mean, with its Student t interval and test (`t_interval`); fewer than
    `fewest` units back no interval (too few runs, `too_few` saying why). ``spreads`` are
    the design's spread of each side, ``before_level`` the before side's level."""
    count = estimates.size
    shift = float(estimates.mean()) if count else 0.0
    band = verdict.threshold_for(None, threshold)
    if count < fewest:
        low, high, p = -math.inf, math.inf, 1.0
        outcome = (verdict.TOO_FEW, too_few)
    else:
        low, high, p = t_interval(estimates, alpha)
        outcome = verdict.decide(p, low, high, alpha=alpha, threshold=band)
    return verdict.Outcome(
        before=before_level, after=before_level * math.exp(shift), ratio=math.exp(shift),
        ci_low=math.exp(low), ci_high=math.exp(high), ci_level=1.0 - alpha, p_value=p,
        verdict=outcome[0], reason=outcome[1], units_before=count, units_after=count,
        spread_before=spreads[0], spread_after=spreads[1], floor=None, threshold=band,
        method=method)


def t_interval(estimates: FloatArray, alpha: float) -> tuple[float, float, float]:
    """(low, high, p): the Student t interval of the mean at 1 - alpha and the two-sided
    one-sample t test of mean 0, over at least two values."""
    count = estimates.size
    mean = float(estimates.mean())
    error = float(np.std(estimates, ddof=1)) / math.sqrt(count)
    freedom = count - 1
    if error <= NO_SPREAD:  # estimates agreeing to the last digits show no spread, not 0:
        return -math.inf, math.inf, 1.0  # they back no interval (a timer's resolution)
    from scipy import special  # on first use: importing it takes a tenth of a second

    half = float(special.stdtrit(freedom, 1.0 - alpha / 2)) * error
    p = 2.0 * float(special.stdtr(freedom, -abs(mean) / error))
    return mean - half, mean + half, min(1.0, p)
