"""Two sets of independent samples compared with each other: the Hodges-Lehmann shift,
its Moses interval and a Mann-Whitney U test.

pqbench itself never compares rounds this way: rounds of one run share the run's phase of
a drifting machine, so runs are compared with the run as the unit
(`pqbench.analysis.replicates`) and paired sessions pair by pair
(`pqbench.analysis.signedrank`). The tests keep this model of the pooled comparison to
check the shared verdict rule and the Mann-Whitney p against SciPy, and to show how often
pooling rounds calls a change that is not there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from pqbench.analysis import verdict as verdicts
from pqbench.analysis.stats import _EXACT_MAX_SIDE, _mwu_null_cdf, mann_whitney_p, positive_array


@dataclass(frozen=True)
class Comparison:
    """After versus before: ``ratio`` > 1 means after is faster; CI bounds are ratios too."""

    ratio: float
    ci_low: float
    ci_high: float
    ci_level: float
    p_value: float
    verdict: str
    reason: str
    n_before: int
    n_after: int
    method: str


# --- one measurement -------------------------------------------------------------------



def smallest_p_value(n: int, m: int) -> float:
    """Smallest two-sided p an exact Mann-Whitney U test on n and m samples can give.

    Complete separation has probability 1 / C(n + m, n) under the null, so the two-sided
    minimum is 2 / C(n + m, n) (Mann & Whitney, Ann. Math. Statist. 18, 1947).
    """
    if n < 1 or m < 1:
        return 1.0
    return min(1.0, 2.0 / math.comb(n + m, n))


def min_samples_for(alpha: float) -> int:
    """Smallest n for which an exact two-sided test on n versus n samples can reach p < alpha."""
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must lie in (0, 1)")
    n = 1
    while smallest_p_value(n, n) >= alpha:
        n += 1
    return n


def _moses_rank(n: int, m: int, alpha: float, exact: bool) -> tuple[int, float]:
    """k and coverage for the Moses CI [D_(k), D_(nm+1-k)] on sorted pairwise differences.

    k is the largest integer with P(U <= k - 1) <= alpha / 2 (Moses 1965; Hollander, Wolfe
    & Chicken section 4.3). Large samples use the normal approximation with continuity
    correction, k = floor(nm/2 + 1/2 - z * sqrt(nm(n + m + 1)/12)). k = 0 means the data
    cannot bound the shift at this level: the interval is the whole line.
    """
    if exact:
        cdf = _mwu_null_cdf(n, m)
        k = 0
        while k < len(cdf) and cdf[k] <= alpha / 2:
            k += 1
        return k, 1.0 - 2.0 * cdf[k - 1] if k > 0 else 0.0
    z = float(special.ndtri(1.0 - alpha / 2))
    spread = math.sqrt(n * m * (n + m + 1) / 12.0)
    k = max(0, math.floor(n * m / 2 + 0.5 - z * spread))
    return k, 1.0 - alpha if k > 0 else 0.0


def compare_samples(
    before: Sequence[float],
    after: Sequence[float],
    *,
    threshold: float = 0.05,
    alpha: float = 0.01,
    min_samples: int | None = None,
) -> Comparison:
    """Is ``after`` faster or slower than ``before``, by more than ``threshold``?

    For INDEPENDENT samples only. Rounds of one run are not independent (they share the
    run's phase of a drifting machine), so comparing runs goes through
    `pqbench.analysis.replicates.compare_runs`, with the run as the unit; pooling rounds here is the
    pseudo-replication the tests measure the false-verdict rate of.

    Method, on natural logarithms of the rates (effects are multiplicative):
    the Hodges-Lehmann shift (median of all pairwise differences ln a_j - ln b_i; Hodges &
    Lehmann, Ann. Math. Statist. 34, 1963), its (1 - alpha) Moses confidence interval from
    the ordered differences (``_moses_rank``), and a two-sided Mann-Whitney U test, exact
    without ties for up to 50 samples a side. ``ratio`` = exp(shift), after / before.

    Verdict: the shared rule `pqbench.analysis.verdict.decide` ("faster"/"slower" need p < alpha
    and the whole CI beyond the band, "no change" the whole CI inside it, otherwise
    "inconclusive"). "too few samples" when either side has fewer than
    ``min_samples`` (default ``min_samples_for(alpha)``) or when the exact test on these
    sizes could never reach p < alpha (``smallest_p_value``).
    """
    if threshold < 0:
        raise ValueError("threshold must be >= 0")
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must lie in (0, 1)")
    log_before = np.log(positive_array(before, "before"))
    log_after = np.log(positive_array(after, "after"))
    n, m = int(log_before.size), int(log_after.size)
    diffs = np.sort((log_after[None, :] - log_before[:, None]).ravel())
    has_ties = np.unique(np.concatenate([log_before, log_after])).size < n + m
    exact_ci = max(n, m) <= _EXACT_MAX_SIDE
    exact_p = exact_ci and not has_ties

    shift = float(np.median(diffs))
    k, ci_level = _moses_rank(n, m, alpha, exact_ci)
    log_low = float(diffs[k - 1]) if k > 0 else -math.inf
    log_high = float(diffs[n * m - k]) if k > 0 else math.inf
    p_value = mann_whitney_p(log_before.tolist(), log_after.tolist())

    verdict, reason = _verdict(
        n,
        m,
        p_value,
        log_low,
        log_high,
        threshold=threshold,
        alpha=alpha,
        min_samples=min_samples_for(alpha) if min_samples is None else min_samples,
    )
    method = (
        f"Hodges-Lehmann shift of ln(rate); Moses CI ({'exact' if exact_ci else 'normal'}); "
        f"two-sided Mann-Whitney U ({'exact' if exact_p else 'normal, tie-corrected'})"
    )
    return Comparison(
        ratio=math.exp(shift),
        ci_low=math.exp(log_low),
        ci_high=math.exp(log_high),
        ci_level=ci_level,
        p_value=p_value,
        verdict=verdict,
        reason=reason,
        n_before=n,
        n_after=m,
        method=method,
    )


def _verdict(
    n: int,
    m: int,
    p_value: float,
    log_low: float,
    log_high: float,
    *,
    threshold: float,
    alpha: float,
    min_samples: int,
) -> tuple[str, str]:
    """The verdict rule of ``compare_samples``: "too few samples" where independent samples
    cannot reach alpha, otherwise the shared rule (`pqbench.analysis.verdict.decide`)."""
    if min(n, m) < min_samples:
        return "too few samples", (
            f"{min(n, m)} samples on one side; at least {min_samples} are needed "
            f"for a two-sided test at alpha={alpha:g}"
        )
    floor = smallest_p_value(n, m)
    if floor >= alpha:
        return "too few samples", (
            f"with {n} and {m} samples the smallest attainable p is {floor:.3g}, "
            f"not below alpha={alpha:g}"
        )
    return verdicts.decide(p_value, log_low, log_high, alpha=alpha, threshold=threshold)
