"""Tests for pqbench.analysis.stats, record.summary and the pooled comparison the tests
keep (tests.helpers.samples): known answers by hand, agreement with SciPy, and simulated error
rates (seeded) for the verdict rule and step detection."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sp_stats

from pqbench.analysis import stats, step_detect
from pqbench.analysis.step_detect import detect_steps, weights_from_ci
from pqbench.data.record.summary import summarize
from tests.helpers.samples import compare_samples, min_samples_for, smallest_p_value

NOISE = 0.03  # 3 % lognormal noise per round


def lognormal(rng: np.random.Generator, n: int, level: float = 1000.0) -> np.ndarray:
    return level * np.exp(rng.normal(0.0, NOISE, n))


# --- summarize -------------------------------------------------------------------------


def test_summarize_known_data() -> None:
    summary = summarize([7.0, 1.0, 3.0, 10.0, 2.0, 9.0, 5.0, 4.0, 8.0, 6.0])
    assert (summary.n, summary.median, summary.mean) == (10, 5.5, 5.5)
    assert summary.stdev == pytest.approx(math.sqrt(55 / 6))
    assert summary.cv == pytest.approx(math.sqrt(55 / 6) / 5.5)
    assert (summary.min, summary.max) == (1.0, 10.0)
    # n=10: [x_(2), x_(9)] covers the median with 1 - 2 * P(Bin(10, .5) <= 1) = 1 - 22/1024;
    # the next narrower interval [x_(3), x_(8)] has only 1 - 112/1024 < 95 %.
    assert (summary.ci_low, summary.ci_high) == (2.0, 9.0)
    assert summary.ci_level == pytest.approx(1 - 22 / 1024)


def test_summarize_too_few_for_95_percent_gives_min_max_with_actual_coverage() -> None:
    summary = summarize([3.0, 1.0, 2.0, 5.0, 4.0])
    assert (summary.ci_low, summary.ci_high) == (1.0, 5.0)
    assert summary.ci_level == pytest.approx(1 - 2 / 32)  # 93.75 %, below 95 %
    assert summarize([6.0, 1.0, 2.0, 5.0, 4.0, 3.0]).ci_level >= 0.95


def test_summarize_single_sample_has_no_spread() -> None:
    summary = summarize([42.0])
    assert summary.median == 42.0 and summary.ci_level == 0.0
    assert math.isnan(summary.stdev)


def test_summarize_rejects_empty() -> None:
    with pytest.raises(ValueError):
        summarize([])


# --- compare_samples: hand-computed example --------------------------------------------

# ln(before) and ln(after), in hundredths. The 25 differences ln a_j - ln b_i:
#   a=2:   2   1  -1  -4  -8
#   a=5:   5   4   2  -1  -5
#   a=9:   9   8   6   3  -1
#   a=14: 14  13  11   8   4
#   a=20: 20  19  17  14  10
# sorted: -8 -5 -4 -1 -1 -1 1 2 2 3 4 4 [5] 6 8 8 9 10 11 13 14 14 17 19 20
HAND_BEFORE = [math.exp(x / 100) for x in (0, 1, 3, 6, 10)]
HAND_AFTER = [math.exp(x / 100) for x in (2, 5, 9, 14, 20)]


def test_hodges_lehmann_and_moses_ci_by_hand_95() -> None:
    result = compare_samples(HAND_BEFORE, HAND_AFTER, alpha=0.05)
    assert math.log(result.ratio) == pytest.approx(0.05)  # 13th of 25 differences
    # n=m=5: P(U <= 2) = 4/252 <= .025 < P(U <= 3) = 7/252, so k = 3: D_(3), D_(23).
    assert math.log(result.ci_low) == pytest.approx(-0.04)
    assert math.log(result.ci_high) == pytest.approx(0.17)
    assert result.ci_level == pytest.approx(1 - 8 / 252)
    # p = 56/252 and the interval 0.96-1.19 reaches both inside and beyond the 5 % band.
    assert result.verdict == "inconclusive"


def test_moses_ci_by_hand_99() -> None:
    result = compare_samples(HAND_BEFORE, HAND_AFTER, alpha=0.01)
    # P(U <= 0) = 1/252 <= .005 < P(U <= 1) = 2/252, so k = 1: the extreme differences.
    assert math.log(result.ci_low) == pytest.approx(-0.08)
    assert math.log(result.ci_high) == pytest.approx(0.20)
    assert result.ci_level == pytest.approx(1 - 2 / 252)


def test_mann_whitney_p_matches_scipy_and_hand() -> None:
    result = compare_samples(HAND_BEFORE, HAND_AFTER)
    reference = sp_stats.mannwhitneyu(HAND_AFTER, HAND_BEFORE, method="exact")
    # 6 negative differences: p = 2 * P(U <= 6) = 2 * 28/252.
    assert result.p_value == pytest.approx(56 / 252)
    assert result.p_value == pytest.approx(reference.pvalue)
    assert "exact" in result.method


def test_mann_whitney_p_matches_scipy_on_random_unequal_sizes() -> None:
    rng = np.random.default_rng(11)
    before, after = lognormal(rng, 9), lognormal(rng, 13, level=1020.0)
    reference = sp_stats.mannwhitneyu(after, before, method="exact")
    assert compare_samples(before, after).p_value == pytest.approx(reference.pvalue)


def test_large_samples_use_the_normal_moses_rank_at_alpha_over_two() -> None:
    # 60 a side: beyond the exact limit. ln(before) = i/1000, ln(after) = (i + 0.5)/1000 +
    # 0.01, i = 0..59. Hollander, Wolfe & Chicken (4.43): k = floor(nm/2 + 1/2 - z(1 -
    # alpha/2) sqrt(nm(n+m+1)/12)) = floor(1800.5 - 2.5758 * 190.53) = 1309, so the 99 %
    # interval is [D_(1309), D_(2292)] of the 3600 ordered differences.
    log_before = np.arange(60) / 1000
    log_after = (np.arange(60) + 0.5) / 1000 + 0.01
    result = compare_samples(np.exp(log_before), np.exp(log_after))
    diffs = np.sort((log_after[None, :] - log_before[:, None]).ravel())
    z = sp_stats.norm.ppf(0.995)
    k = math.floor(1800 + 0.5 - z * math.sqrt(3600 * 121 / 12))
    assert k == 1309
    assert math.log(result.ci_low) == pytest.approx(diffs[k - 1])
    assert math.log(result.ci_high) == pytest.approx(diffs[3600 - k])
    assert result.ci_level == pytest.approx(0.99)
    assert "normal" in result.method


def test_tied_samples_get_the_two_sided_tie_corrected_p() -> None:
    # Quantized rates tie. The p-value must be SciPy's two-sided asymptotic one with the
    # tie-corrected variance, and twice the one-sided p.
    before = [100.0, 100.0, 101.0, 101.0, 102.0, 102.0, 103.0, 104.0]
    after = [102.0, 103.0, 103.0, 104.0, 104.0, 105.0, 105.0, 106.0]
    result = compare_samples(before, after)
    two_sided = sp_stats.mannwhitneyu(np.log(after), np.log(before), alternative="two-sided",
                                      method="asymptotic", use_continuity=True).pvalue
    one_sided = sp_stats.mannwhitneyu(np.log(after), np.log(before), alternative="greater",
                                      method="asymptotic", use_continuity=True).pvalue
    assert result.p_value == pytest.approx(two_sided)
    assert result.p_value == pytest.approx(2 * one_sided)
    assert "tie-corrected" in result.method
    assert stats.mann_whitney_p(np.log(before).tolist(), np.log(after).tolist()) == \
        pytest.approx(two_sided)


@pytest.mark.parametrize("shift", [0.0, 0.004, 0.03])
def test_many_runs_a_side_get_scipys_asymptotic_p(shift: float) -> None:
    # 100 against 120 estimates (beyond the exact table), some rounded to tie: the normal
    # approximation written out must be SciPy's, from a null result to a clear one.
    rng = np.random.default_rng(5)
    before = np.round(rng.normal(0.0, 0.02, 100), 3)
    after = np.round(rng.normal(shift, 0.02, 120), 3)
    reference = sp_stats.mannwhitneyu(after, before, alternative="two-sided",
                                      method="asymptotic", use_continuity=True).pvalue
    assert stats.mann_whitney_p(before.tolist(), after.tolist()) == pytest.approx(reference)


# --- compare_samples: too few samples --------------------------------------------------


def test_three_versus_three_is_refused_with_reason() -> None:
    result = compare_samples([100.0, 101.0, 99.0], [300.0, 310.0, 290.0])
    assert result.verdict == "too few samples"
    assert "at least 5" in result.reason
    assert (result.ci_low, result.ci_high) == (0.0, math.inf)


def test_min_samples_matches_exact_tests_smallest_p() -> None:
    # Completely separated samples give the exact test's smallest attainable p.
    for n in (3, 4, 5):
        separated = sp_stats.mannwhitneyu(range(n, 2 * n), range(n), method="exact").pvalue
        assert smallest_p_value(n, n) == pytest.approx(separated)
    assert smallest_p_value(4, 4) == pytest.approx(2 / 70)
    assert min_samples_for(0.01) == 5  # 2/252 < .01 <= 2/70
    assert min_samples_for(0.05) == 4  # 2/70 < .05 <= 2/20


def test_unbalanced_sizes_that_cannot_reject_are_refused() -> None:
    # min_samples lowered to 2, but 2 vs 8 samples can reach only p = 2/45 > 0.01.
    before, after = [100.0, 101.0], [200.0 + i for i in range(8)]
    result = compare_samples(before, after, min_samples=2)
    assert result.verdict == "too few samples"
    assert "smallest attainable p" in result.reason


def test_five_versus_five_clear_change_is_judged() -> None:
    result = compare_samples([100.0, 101.0, 99.0, 100.5, 99.5], [300.0, 310.0, 290, 305, 295])
    assert result.verdict == "faster"


# --- compare_samples: simulated behaviour ----------------------------------------------


def test_20x_step_is_faster_with_ci_containing_truth() -> None:
    rng = np.random.default_rng(1)
    before, after = lognormal(rng, 10), lognormal(rng, 10, level=20_000.0)
    result = compare_samples(before, after)
    assert result.verdict == "faster"
    assert result.ratio == pytest.approx(20, rel=0.05)
    assert result.ci_low < 20 < result.ci_high
    assert result.ci_level >= 0.99


def test_20x_drop_is_slower() -> None:
    rng = np.random.default_rng(2)
    result = compare_samples(lognormal(rng, 10, level=20_000.0), lognormal(rng, 10))
    assert result.verdict == "slower"
    assert result.ratio == pytest.approx(1 / 20, rel=0.05)
    assert result.ci_low < 1 / 20 < result.ci_high


def test_a_a_false_positive_rate_at_most_one_percent() -> None:
    rng = np.random.default_rng(3)
    trials, false_positives = 2000, 0
    for _ in range(trials):
        n, m = rng.integers(10, 16, size=2)
        verdict = compare_samples(lognormal(rng, int(n)), lognormal(rng, int(m))).verdict
        assert verdict != "too few samples"
        false_positives += verdict in ("faster", "slower")
    assert false_positives / trials <= 0.01


def test_a_a_significance_alone_respects_alpha() -> None:
    # Without the noise threshold the rule is the bare test: rejections ~ alpha, not more.
    rng = np.random.default_rng(4)
    trials = 2000
    rejected = sum(
        compare_samples(lognormal(rng, 12), lognormal(rng, 12), threshold=0.0).verdict
        in ("faster", "slower")
        for _ in range(trials)
    )
    assert rejected / trials <= 0.02


@pytest.mark.slow  # hundreds of simulated sessions: the whole suite's lane
def test_10_percent_shift_is_found_with_about_90_percent_power() -> None:
    # Aim was >= 90 % of 200 trials. Over 20 000 seeded trials this rule (99 % Moses CI
    # wholly above +5 %) finds a 10 % shift with 15 samples a side and 3 % noise in 90.4 % of
    # them, so a 200-trial count falls either side of 180 by seed alone. 2000 trials and a
    # 0.88 bound (about 3.5 standard errors below 90.4 %) keep the test honest; the bare
    # Mann-Whitney test detects the shift every time.
    rng = np.random.default_rng(5)
    trials = 2000
    results = [
        compare_samples(lognormal(rng, 15), lognormal(rng, 15, level=1100.0)) for _ in range(trials)
    ]
    assert sum(r.verdict == "faster" for r in results) / trials >= 0.88
    assert sum(r.p_value < 0.01 for r in results) / trials >= 0.99
    assert all(r.verdict in ("faster", "inconclusive") for r in results)


def test_3_percent_shift_below_5_percent_threshold_is_never_a_change() -> None:
    # 3 % shift, 3 % noise. With 15 samples a side the 99 % interval (about ±2.5 %) often
    # reaches past the 5 % band: inconclusive, never faster. With 60 a side at 2 % noise
    # (about ±0.9 %) it lies inside the band: no change, although the shift is significant.
    rng = np.random.default_rng(6)
    trials = 200
    few = [compare_samples(lognormal(rng, 15), lognormal(rng, 15, level=1030.0))
           for _ in range(trials)]
    assert {r.verdict for r in few} <= {"no change", "inconclusive"}
    many = [compare_samples(1000.0 * np.exp(rng.normal(0.0, 0.02, 60)),
                            1030.0 * np.exp(rng.normal(0.0, 0.02, 60))) for _ in range(trials)]
    assert sum(r.verdict == "no change" for r in many) / trials >= 0.95
    significant = [r for r in many if r.p_value < 0.01]
    assert len(significant) / trials >= 0.9
    assert all(r.verdict != "faster" for r in many)


def test_a_small_slowdown_inside_the_band_is_no_change_not_slower() -> None:
    # The mirror image of the case above: 60 samples a side, 3 % slower, 1 % noise. The
    # shift is highly significant, but the whole interval lies inside 1/1.05..1.05.
    rng = np.random.default_rng(16)
    before = 1000.0 * np.exp(rng.normal(0.0, 0.01, 60))
    after = 970.0 * np.exp(rng.normal(0.0, 0.01, 60))
    result = compare_samples(before, after)
    assert result.p_value < 1e-6
    assert 1 / 1.05 < result.ci_low < result.ci_high < 1.0
    assert result.verdict == "no change"
    # Without a band the same data are "slower": only the threshold stands in the way.
    assert compare_samples(before, after, threshold=0.0).verdict == "slower"


def test_compare_rejects_non_positive_rates() -> None:
    with pytest.raises(ValueError):
        compare_samples([1.0, 2.0, 0.0], [1.0, 2.0, 3.0])


# --- detect_steps ----------------------------------------------------------------------


def test_flat_noisy_series_has_no_step() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        assert detect_steps(lognormal(rng, 40)) == []


def test_one_20x_jump_at_index_7() -> None:
    rng = np.random.default_rng(8)
    series = lognormal(rng, 25)
    series[7:] *= 20
    steps = detect_steps(series)
    assert [step.index for step in steps] == [7]
    # Levels are medians of 7 and 18 points with 3 % noise: 10 % covers about 5 standard errors.
    assert steps[0].ratio == pytest.approx(20, rel=0.1)
    assert steps[0].before_level == pytest.approx(1000, rel=0.1)
    assert steps[0].after_level == pytest.approx(20_000, rel=0.1)


def test_two_steps_are_both_found() -> None:
    rng = np.random.default_rng(9)
    series = lognormal(rng, 40)
    series[12:] *= 1.5
    series[28:] /= 3
    steps = detect_steps(series)
    assert [step.index for step in steps] == [12, 28]
    assert steps[0].ratio == pytest.approx(1.5, rel=0.05)
    assert steps[1].ratio == pytest.approx(1 / 3, rel=0.05)


def test_a_step_smaller_than_min_step_is_merged_into_its_neighbour() -> None:
    """3 % then 46 %: with min_step 5 % the first step goes, and the two first segments
    become one whose level is the median of five 100s and five 103s, between them in log
    space: sqrt(100 * 103) = 101.49; the step left is the one at index 10, 150 / 101.49."""
    steps = detect_steps([100.0] * 5 + [103.0] * 5 + [150.0] * 5, min_step=0.05)
    assert [step.index for step in steps] == [10]
    (step,) = steps
    assert step.before_level == pytest.approx(math.sqrt(100 * 103), rel=1e-9)
    assert step.after_level == pytest.approx(150, rel=1e-9)
    assert step.ratio == pytest.approx(150 / math.sqrt(100 * 103), rel=1e-9)
    # Without min_step both steps stay.
    assert [s.index for s in detect_steps([100.0] * 5 + [103.0] * 5 + [150.0] * 5)] == [5, 10]


def test_low_weight_outlier_does_not_create_a_step() -> None:
    rng = np.random.default_rng(10)
    series = lognormal(rng, 30)
    series[15] *= 3
    # At full weight the outlier is its own segment (two steps)...
    assert [step.index for step in detect_steps(series)] == [15, 16]
    # ...but with a CI twenty times wider than the others' it is discounted.
    low = series * 0.98
    high = series * 1.02
    low[15], high[15] = series[15] / 1.5, series[15] * 1.5
    weights = weights_from_ci(low, high)
    assert weights[15] < 0.1 * weights[0]
    assert detect_steps(series, weights) == []


def test_weights_from_ci_narrow_is_heavy_and_bad_widths_get_median() -> None:
    weights = weights_from_ci([99.0, 90.0, 100.0, 95.0], [101.0, 110.0, 100.0, 105.0])
    assert weights[0] > weights[3] > weights[1]
    assert weights[2] == pytest.approx(float(np.median([weights[0], weights[1], weights[3]])))


def test_a_regression_and_its_fix_in_five_builds_are_both_found_with_known_noise() -> None:
    # Half the successive differences are steps here: the median-based noise estimate
    # breaks down and finds nothing; the noise known from the points' CIs finds both.
    values = [18000.0, 18500.0, 250.0, 260.0, 18200.0]
    lows, highs = [v * 0.98 for v in values], [v * 1.02 for v in values]
    weights = step_detect.weights_from_ci(lows, highs)
    assert step_detect.detect_steps(values, weights) == []
    found = step_detect.detect_steps(values, weights, noise=step_detect.noise_from_ci(lows, highs))
    assert [s.index for s in found] == [2, 4]
    assert found[0].ratio < 0.02 and found[1].ratio > 50


def test_known_noise_keeps_flat_histories_flat() -> None:
    rng = np.random.default_rng(11)
    false_steps = 0
    for _ in range(300):
        values = list(np.exp(rng.normal(0.0, 0.02, 8)) * 1000.0)
        lows, highs = [v * 0.97 for v in values], [v * 1.03 for v in values]
        found = step_detect.detect_steps(values, step_detect.weights_from_ci(lows, highs),
                                   noise=step_detect.noise_from_ci(lows, highs))
        false_steps += bool(found)
    assert false_steps / 300 <= 0.05


def test_noise_from_ci_inverts_a_normal_interval() -> None:
    # ln-interval half-width 1.96 * sigma -> Laplace scale sigma / sqrt(2)
    sigma = 0.05
    low, high = math.exp(-1.959964 * sigma), math.exp(1.959964 * sigma)
    assert step_detect.noise_from_ci([low], [high]) == pytest.approx(sigma / math.sqrt(2), rel=1e-4)
