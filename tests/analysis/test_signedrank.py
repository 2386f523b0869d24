"""Paired comparisons: Wilcoxon signed-rank against SciPy and by hand, and drift that the
pairs cancel (a true 2x change with 8 pairs under sigma-0.3 drift between pairs)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sp_stats

from pqbench.analysis import signedrank, walsh

# Pair log ratios (hundredths): 1, -2, 3, 4, 6. Walsh averages (d_i + d_j)/2, i <= j:
#   1 -0.5 2 2.5 3.5 | -2 0.5 1 2 | 3 3.5 4.5 | 4 5 | 6
# sorted: -2 -0.5 0.5 1 1 2 2 [2.5] 3 3.5 3.5 4 4.5 5 6  (15 values, median 2.5)
HAND = np.array([1.0, -2.0, 3.0, 4.0, 6.0]) / 100


def _pairs(d: np.ndarray, level: float = 1000.0) -> tuple[np.ndarray, np.ndarray]:
    before = level * np.exp(np.linspace(-0.1, 0.1, d.size))
    return before, before * np.exp(d)


def test_walsh_averages_and_hodges_lehmann_by_hand() -> None:
    walsh = signedrank.walsh_averages(HAND) * 100
    assert walsh.tolist() == pytest.approx([-2, -0.5, 0.5, 1, 1, 2, 2, 2.5, 3, 3.5, 3.5, 4,
                                            4.5, 5, 6])
    before, after = _pairs(HAND)
    result = signedrank.compare_pairs(before, after, alpha=0.2)
    assert math.log(result.ratio) == pytest.approx(0.025)
    # n = 5, T+ counts 1, 1, 1, 2, 2, ... of 32: P(T+ <= 2) = 3/32 <= 0.1 < P(T+ <= 3) =
    # 5/32, so k = 3: [W_(3), W_(13)] = [0.005, 0.045] with coverage 1 - 2 * 3/32.
    assert math.log(result.ci_low) == pytest.approx(0.005)
    assert math.log(result.ci_high) == pytest.approx(0.045)
    assert result.ci_level == pytest.approx(1 - 6 / 32)
    # before is A's geometric mean; after = before * ratio, exactly.
    assert result.before == pytest.approx(1000.0)
    assert result.after == pytest.approx(1000.0 * math.exp(0.025))


def test_null_distribution_and_p_match_scipy_exact() -> None:
    rng = np.random.default_rng(1)
    for n in (5, 9, 14, 30):
        d = rng.normal(0.02, 0.05, n)
        reference = sp_stats.wilcoxon(d, method="exact").pvalue
        assert signedrank.p_value(d) == pytest.approx(reference)
    # n = 5 by hand: T+ = 1 + 3 + 4 + 5 = 13 of 15 (rank 2 is negative): P(T+ <= 2) = 3/32.
    assert signedrank.p_value(HAND) == pytest.approx(2 * 3 / 32)


def test_large_samples_use_the_normal_rank() -> None:
    # n = 60: M = 1830, k = floor(M/2 + 1/2 - z sqrt(n(n+1)(2n+1)/24)), z = z(0.995).
    n = 60
    k, level = walsh.interval_rank(n, 0.01)
    expected = math.floor(1830 / 2 + 0.5 - sp_stats.norm.ppf(0.995)
                          * math.sqrt(n * (n + 1) * (2 * n + 1) / 24))
    assert (k, level) == (expected, 0.99)
    d = np.random.default_rng(2).normal(0.0, 0.05, n)
    reference = sp_stats.wilcoxon(d, method="approx", correction=True).pvalue
    assert signedrank.p_value(d) == pytest.approx(reference)


def test_too_few_pairs_say_how_many() -> None:
    before, after = _pairs(np.full(6, 0.7) + np.arange(6) / 1000)
    result = signedrank.compare_pairs(before, after)
    assert result.verdict == "too few runs"
    assert "6 pairs" in result.reason and "at least 8" in result.reason


def test_pairs_need_no_floor_and_keep_the_5_percent_band() -> None:
    # Rounds scatter 20 % from their partners: the band stays at 5 % (auto) and a 10 %
    # change with 24 pairs is not called "no change".
    d = np.log(1.10) + np.array([0.2, -0.2] * 12)
    result = signedrank.compare_pairs(*_pairs(d))
    assert result.floor is None and result.threshold == 0.05
    assert result.verdict == "inconclusive"
    assert signedrank.compare_pairs(*_pairs(d), threshold=0.2).threshold == 0.2


def test_a_2x_change_with_8_pairs_under_drift_is_found() -> None:
    # Each pair shares its own lognormal machine state (sigma 0.3); rounds scatter 2 %.
    rng = np.random.default_rng(3)
    trials, found = 2000, 0
    for _ in range(trials):
        state = np.exp(rng.normal(0.0, 0.3, 8))
        a = 1000.0 * state * np.exp(rng.normal(0.0, 0.02, 8))
        b = 2000.0 * state * np.exp(rng.normal(0.0, 0.02, 8))
        result = signedrank.compare_pairs(a, b)
        found += result.verdict == "faster"
    assert found / trials >= 0.95


def test_a_a_pairs_under_drift_stay_within_alpha() -> None:
    rng = np.random.default_rng(4)
    trials, changed = 2000, 0
    for _ in range(trials):
        state = np.exp(rng.normal(0.0, 0.3, 24))
        a = state * np.exp(rng.normal(0.0, 0.02, 24))
        b = state * np.exp(rng.normal(0.0, 0.02, 24))
        changed += signedrank.compare_pairs(a, b, threshold=0.0).changed
    # With no band at all, only the test stands: false verdicts ~ alpha.
    assert changed / trials <= 0.015


def test_rejects_unequal_or_bad_pairs() -> None:
    with pytest.raises(ValueError):
        signedrank.compare_pairs([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        signedrank.compare_pairs([1.0, float("inf")], [1.0, 2.0])


def test_the_hodges_lehmann_estimate_of_an_even_count_is_the_mean_of_the_middle_two() -> None:
    """4 pairs, ln ratios 0.01, 0.02, 0.04, 0.08: the 10 Walsh averages, ordered, are
    .01 .015 .02 .025 .03 .04 .045 .05 .06 .08; the estimate is the mean of the 5th and
    the 6th, 0.035 (not the 6th alone, 0.04)."""
    d = [0.01, 0.02, 0.04, 0.08]
    before = [100.0, 200.0, 300.0, 400.0]
    after = [b * math.exp(x) for b, x in zip(before, d, strict=True)]
    result = signedrank.compare_pairs(before, after)
    assert math.log(result.ratio) == pytest.approx(0.035, abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 6, 7, 12, 50, 51, 70])
def test_the_interval_from_a_sorted_list_is_the_interval_from_an_array(n: int) -> None:
    """`walsh.shift_interval` over a list (a speed run's paired ratios, no numpy) and
    `signedrank.shift_interval` over an array (an `ab` session's, partitioned) are one
    interval: the same estimate, ends and level to the bit, with ties and without, exact
    and in the normal approximation (above EXACT_MAX_PAIRS), widest or not. A single pair
    bounds nothing unless the widest interval is asked for."""
    rng = np.random.default_rng(n)
    for d in (rng.normal(0.05, 0.1, n), np.round(rng.normal(0.0, 0.1, n), 1)):
        for alpha in (0.01, 0.05, 0.5):
            for widest in (False, True):
                from_array = signedrank.shift_interval(d, alpha, widest=widest)
                assert walsh.shift_interval(d.tolist(), alpha, widest=widest) == from_array
                if n == 1:
                    assert from_array[1:] == ((d[0], d[0], 0.0) if widest
                                              else (-math.inf, math.inf, 0.0))
