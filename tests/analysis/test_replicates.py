"""The run as the unit: worked estimates, the noise floor, and simulated drifting machines.

The drift model is that of a shared, drifting machine: each run lands at its own level (a lognormal
offset with sigma 0.3, shared by all rounds of that run) and rounds scatter 2 % around it.
"""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest

from pqbench.analysis import replicates
from pqbench.data.record.summary import summarize
from tests.helpers.samples import compare_samples

DRIFT, WITHIN = 0.3, 0.02


def drifting_runs(rng: np.random.Generator, runs: int, rounds: int = 5,
                  level: float = 1000.0, drift: float = DRIFT) -> list[list[float]]:
    return [list(level * math.exp(rng.normal(0.0, drift)) * np.exp(rng.normal(0.0, WITHIN,
                                                                                rounds)))
            for _ in range(runs)]


# --- worked by hand --------------------------------------------------------------------


def test_levels_are_geometric_means_of_run_medians_and_agree_with_the_ratio() -> None:
    # Run medians 2, 8 (before) and 4, 16, 64 (after): geometric means 4 and 16.
    before = [[1.0, 2.0, 3.0], [8.0, 7.0, 9.0]]
    after = [[4.0], [16.0, 15.0, 17.0], [60.0, 64.0, 70.0]]
    result = replicates.compare_replicates(before, after)
    assert result.before == pytest.approx(4.0)
    assert result.after == pytest.approx(16.0)
    assert result.ratio == pytest.approx(4.0)
    assert result.after / result.before == pytest.approx(result.ratio, rel=1e-12)
    assert (result.units_before, result.units_after) == (2, 3)
    assert result.spread_before == pytest.approx(math.log(8 / 2) / math.sqrt(2))
    assert result.spread_after == pytest.approx(np.std(np.log([4, 16, 64]), ddof=1))


def test_pooled_spread_and_floor_by_hand() -> None:
    # ln estimates 0, 0.2 (mean 0.1) and 1.0, 1.1, 1.3 (mean 1.1333): SS = 0.02 + 0.04667.
    pooled = replicates.pooled_spread(np.array([0.0, 0.2]), np.array([1.0, 1.1, 1.3]))
    assert pooled == pytest.approx(math.sqrt((0.02 + 0.0466667) / 3), rel=1e-5)
    assert replicates.pooled_spread(np.array([0.5]), np.array([0.7])) is None


def test_threshold_auto_follows_a_noisy_floor() -> None:
    # Runs 20 % apart within each side: the floor is far above 5 %, and the band with it.
    before = [[100.0] * 3, [120.0] * 3, [100.0] * 3, [120.0] * 3, [110.0] * 3]
    after = [[r * 1.1 for r in run] for run in before]
    result = replicates.compare_replicates(before, after)
    estimates = np.log([100, 120, 100, 120, 110])
    expected = math.expm1(float(np.std(estimates, ddof=1)))  # both sides spread alike
    assert result.floor == pytest.approx(expected)
    assert result.threshold == pytest.approx(expected)
    fixed = replicates.compare_replicates(before, after, threshold=0.02)
    assert fixed.threshold == 0.02 and fixed.floor == pytest.approx(expected)


def test_a_single_run_a_side_has_no_floor_and_no_bounded_interval() -> None:
    result = replicates.compare_replicates([[100.0, 101.0, 99.0]], [[300.0, 301.0, 299.0]])
    assert result.verdict == "too few runs"
    assert "5 a side, or 4 and 6" in result.reason and "pqbench ab" in result.reason
    assert result.floor is None and result.threshold == 0.05
    assert (result.ci_low, result.ci_high) == (0.0, math.inf)
    assert result.ratio == pytest.approx(3.0)


def test_three_runs_a_side_are_too_few_even_for_a_huge_change() -> None:
    rng = np.random.default_rng(1)
    result = replicates.compare_replicates(drifting_runs(rng, 3), drifting_runs(rng, 3, level=50e3))
    assert result.verdict == "too few runs"
    assert "p = 0.1 at best" in result.reason


def test_the_same_data_give_the_same_interval() -> None:
    rng = np.random.default_rng(2)
    before, after = drifting_runs(rng, 5), drifting_runs(rng, 5)
    first = replicates.compare_replicates(before, after)
    assert first == replicates.compare_replicates(before, after)


def test_bootstrap_spread_matches_the_standard_error_of_the_mean() -> None:
    # Identical rounds within each run: only runs vary, so the (expanded) bootstrap
    # standard deviation of the level must be the textbook s / sqrt(R).
    estimates = np.log([90.0, 100.0, 105.0, 120.0, 98.0, 111.0])
    logs = [np.full(5, e) for e in estimates]
    levels = replicates.bootstrap_levels(logs, np.random.default_rng(3), draws=40_000)
    expected = np.std(estimates, ddof=1) / math.sqrt(estimates.size)
    assert float(np.std(levels)) == pytest.approx(expected, rel=0.03)


@pytest.mark.parametrize("rounds", range(1, 8))
def test_median_positions_are_the_exact_distribution_of_a_resampled_median(rounds: int) -> None:
    # Enumerate all rounds**rounds resamples of the positions 0..rounds-1 and count where
    # their median's two middle order statistics fall.
    counts: dict[tuple[int, int], int] = {}
    for resample in itertools.product(range(rounds), repeat=rounds):
        ordered = sorted(resample)
        key = (ordered[(rounds - 1) // 2], ordered[rounds // 2])
        counts[key] = counts.get(key, 0) + 1
    lo, hi, probability = replicates.median_positions(rounds)
    found = {(int(a), int(b)): float(p) for a, b, p in zip(lo, hi, probability, strict=True)}
    assert found.keys() == counts.keys()
    for key, count in counts.items():
        assert found[key] == pytest.approx(count / rounds ** rounds, abs=1e-12)


def naive_levels(logs: list[np.ndarray], rng: np.random.Generator, draws: int) -> np.ndarray:
    """The two-level bootstrap written out: runs with replacement, then each picked run's
    rounds with replacement, the median of those, the mean over runs, expanded."""
    picked = rng.integers(0, len(logs), (draws, len(logs)))
    medians = np.empty(picked.shape)
    for i, run in enumerate(logs):
        where = picked == i
        rounds = rng.integers(0, run.size, (int(where.sum()), run.size))
        medians[where] = np.median(run[rounds], axis=1)
    observed = float(np.mean([np.median(run) for run in logs]))
    return observed + math.sqrt(len(logs) / (len(logs) - 1)) * (medians.mean(axis=1) - observed)


@pytest.mark.parametrize("sizes", [(5,) * 8, (6,) * 8, (7, 4, 1, 6, 3, 2, 5, 9)],
                         ids=["odd rounds", "even rounds", "mixed rounds"])
def test_bootstrap_levels_draw_from_the_two_level_resampling_distribution(
        sizes: tuple[int, ...]) -> None:
    # Rounds scatter far more than runs do, so the level's spread comes mostly from the
    # resampled medians and a wrong weight on any order statistic shows in the quantiles.
    rng = np.random.default_rng(11)
    logs = [rng.lognormal(0.0, 1.0, size) + 0.02 * i for i, size in enumerate(sizes)]
    fast = replicates.bootstrap_levels(logs, np.random.default_rng(1), draws=60_000)
    slow = naive_levels(logs, np.random.default_rng(2), draws=60_000)
    scale = float(np.std(slow))
    for q in (0.01, 0.1, 0.5, 0.9, 0.99):
        assert float(np.quantile(fast, q)) == pytest.approx(float(np.quantile(slow, q)),
                                                            abs=0.05 * scale)
    assert float(np.std(fast)) == pytest.approx(scale, rel=0.02)


def test_resamples_keep_20_beyond_each_tail() -> None:
    assert replicates.draws_for(0.005) == 4000  # 99 %
    assert replicates.draws_for(0.025) == 1000  # 95 %: 800 would do; never below 1000
    assert replicates.draws_for(0.0005) == 40_000


def test_rejects_empty_and_non_positive_runs() -> None:
    with pytest.raises(ValueError):
        replicates.compare_replicates([], [[1.0]])
    with pytest.raises(ValueError):
        replicates.compare_replicates([[1.0, 0.0]], [[1.0]])


# --- simulated drift -----------------------------------------------------------------


@pytest.mark.slow
def test_a_a_with_three_drifting_runs_a_side_never_calls_a_change() -> None:
    rng = np.random.default_rng(4)
    trials, changed, pooled_changed = 2000, 0, 0
    for _ in range(trials):
        before, after = drifting_runs(rng, 3), drifting_runs(rng, 3)
        changed += replicates.compare_replicates(before, after).changed
        # The old method: every round of every run pooled as independent samples.
        pooled = compare_samples([r for run in before for r in run],
                                       [r for run in after for r in run])
        pooled_changed += pooled.verdict in ("faster", "slower")
    assert changed / trials <= 0.01
    # Pseudo-replication: the pooled method calls about a quarter of identical pairs
    # changed (25 % in this seeded run), against the 1 % it promises.
    assert pooled_changed / trials > 0.10


@pytest.mark.slow
def test_a_a_with_five_drifting_runs_a_side_stays_within_alpha() -> None:
    rng = np.random.default_rng(5)
    trials = 2000
    verdicts = [replicates.compare_replicates(drifting_runs(rng, 5), drifting_runs(rng, 5)).verdict
                for _ in range(trials)]
    assert sum(v in ("faster", "slower") for v in verdicts) / trials <= 0.01
    # 30 % run-to-run drift: five runs cannot show "no change" within ±5 % either.
    assert verdicts.count("inconclusive") / trials >= 0.95


@pytest.mark.slow  # hundreds of simulated sessions: the whole suite's lane
def test_a_quiet_a_a_with_eight_runs_a_side_is_no_change() -> None:
    rng = np.random.default_rng(6)
    # Run estimates scatter about 1.2 % (0.5 % drift, 2 % rounds, medians of 5): with
    # eight runs a side the 99 % interval is about ±1.8 %, inside the ±5 % band.
    verdicts = [replicates.compare_replicates(drifting_runs(rng, 8, drift=0.005),
                                        drifting_runs(rng, 8, drift=0.005)).verdict
                for _ in range(200)]
    assert verdicts.count("no change") / 200 >= 0.95


@pytest.mark.slow  # hundreds of simulated sessions: the whole suite's lane
def test_interval_covers_a_true_change_under_drift() -> None:
    rng = np.random.default_rng(7)
    covered = 0
    for _ in range(400):
        result = replicates.compare_replicates(drifting_runs(rng, 5, drift=0.1),
                                         drifting_runs(rng, 5, level=1300.0, drift=0.1))
        covered += result.ci_low < 1.3 < result.ci_high
    assert covered / 400 >= 0.97  # nominal 99 %; 98.75 % in this seeded run


@pytest.mark.slow  # hundreds of simulated sessions: the whole suite's lane
def test_a_2x_change_with_five_runs_a_side_at_10_percent_drift_is_found() -> None:
    rng = np.random.default_rng(8)
    results = [replicates.compare_replicates(drifting_runs(rng, 5, drift=0.1),
                                       drifting_runs(rng, 5, level=2000.0, drift=0.1))
               for _ in range(200)]
    assert sum(r.verdict == "faster" for r in results) / 200 >= 0.95
    assert all(r.verdict in ("faster", "inconclusive") for r in results)


def test_level_interval_for_history_points() -> None:
    level, low, high = replicates.level_interval([[100.0, 101.0, 99.0]])
    assert (level, low, high) == pytest.approx((100.0, 99.0, 101.0))
    rng = np.random.default_rng(9)
    runs = drifting_runs(rng, 6, drift=0.05)
    level, low, high = replicates.level_interval(runs)
    medians = [float(np.median(r)) for r in runs]
    assert level == pytest.approx(math.exp(np.mean(np.log(medians))))
    assert low < level < high


def test_the_bootstrap_expansion_factor_is_t_over_z_at_the_two_sided_tail() -> None:
    """The expanded percentile interval widens the unexpanded one about the observed shift
    by t(1 - alpha/2, df) / z(1 - alpha/2), df = R_before + R_after - 2 (Hesterberg 2015,
    section 5.1). With identical rounds in each run, each run's median is its one value,
    so the unexpanded interval is the same resampling of runs the code draws."""
    from scipy import stats as sp_stats

    before = [[100.0] * 5, [104.0] * 5, [97.0] * 5]
    after = [[110.0] * 5, [108.0] * 5, [115.0] * 5, [111.0] * 5]
    logs_before = replicates.log_runs(before, "before")
    logs_after = replicates.log_runs(after, "after")
    for alpha in (0.01, 0.05):
        low, high = replicates.ratio_interval(logs_before, logs_after, alpha, draws=2000)
        rng = np.random.default_rng(replicates.SEED)
        shifts = (replicates.bootstrap_levels(logs_after, rng, 2000)
                  - replicates.bootstrap_levels(logs_before, rng, 2000))
        plain_low, plain_high = np.quantile(shifts, [alpha / 2, 1 - alpha / 2])
        factor = sp_stats.t.ppf(1 - alpha / 2, 3 + 4 - 2) / sp_stats.norm.ppf(1 - alpha / 2)
        assert (high - low) / (plain_high - plain_low) == pytest.approx(factor, rel=1e-9)
        assert factor > 1.2  # 5 degrees of freedom: a visibly wider interval


@pytest.mark.parametrize("rounds", [10, 20, 31])
def test_places_are_numpys_search_of_every_draw(rounds: int) -> None:
    """`places` gives what np.searchsorted of the whole table gives (the expected value is
    numpy's), for uniform draws, draws exactly on a bound or an integer, and the largest
    draw below R; and searches the whole where no table is given."""
    cumulative = np.cumsum(replicates.median_positions(rounds)[2])
    rng = np.random.default_rng(rounds)
    for runs in (1, 2, 7, 150):
        bounds = np.concatenate([i + cumulative for i in range(runs)])[:-1]
        draws = np.concatenate([
            np.minimum(rng.random(20_000) * runs, np.nextafter(runs, 0)),
            bounds, np.nextafter(bounds, -np.inf), np.nextafter(bounds, np.inf),
            np.arange(runs, dtype=np.float64), [np.nextafter(runs, 0)]])
        draws = draws[(draws >= 0) & (draws < runs)].reshape(1, -1)
        expected = np.searchsorted(bounds, draws, side="right")
        assert np.array_equal(replicates.places(bounds, draws, cumulative), expected)
        assert np.array_equal(replicates.places(bounds, draws), expected)


@pytest.mark.parametrize("rounds", [10, 20, 31])
def test_fractions_are_placed_as_numpys_search_places_them(rounds: int) -> None:
    """`search_fractions` gives np.searchsorted's places (side right) for uniform fractions,
    fractions exactly on a table entry and beside it, on a cell's edge and beside it, 0
    and the largest fraction below 1; a table entry inside a cell is searched, not
    looked up (an entry placed just past a cell's edge)."""
    table = np.cumsum(replicates.median_positions(rounds)[2])[:-1]
    edge = 7 / replicates.GRID
    table = np.sort(np.append(table, [edge, np.nextafter(edge, 1.0)]))
    rng = np.random.default_rng(rounds)
    cells = np.arange(replicates.GRID, dtype=np.float64) / replicates.GRID
    fractions = np.concatenate([
        rng.random(50_000), table, np.nextafter(table, 0.0), np.nextafter(table, 1.0),
        cells, np.nextafter(cells, 1.0), np.nextafter(cells[1:], 0.0),
        [0.0, np.nextafter(1.0, 0.0)]])
    fractions = fractions[(fractions >= 0) & (fractions < 1)]
    expected = np.searchsorted(table, fractions, side="right")
    assert np.array_equal(replicates.search_fractions(table, fractions), expected)


@pytest.mark.parametrize("sizes", [(5,) * 8, (6,) * 8, (7, 4, 1, 6, 3, 2, 5, 9)],
                         ids=["odd rounds", "even rounds", "mixed rounds"])
def test_level_cumulants_are_the_drawn_bootstraps_moments(sizes: tuple[int, ...]) -> None:
    # Eight runs: the expansion sqrt(8 / 7) widens the spread by 7 %, and skewed rounds give
    # the level a third moment, so a wrong weight, power or factor shows.
    rng = np.random.default_rng(5)
    logs = [rng.exponential(1.0, size) + 0.3 * i for i, size in enumerate(sizes)]
    drawn = replicates.bootstrap_levels(logs, np.random.default_rng(6), draws=200_000)
    mean, variance, third = replicates.level_cumulants(logs)
    sd = math.sqrt(variance)
    assert mean == pytest.approx(float(drawn.mean()), abs=0.01 * sd)
    assert variance == pytest.approx(float(drawn.var()), rel=0.02)
    drawn_third = float(((drawn - drawn.mean()) ** 3).mean())
    assert third == pytest.approx(drawn_third, abs=0.1 * abs(drawn_third))
    assert abs(third) > 0.02 * sd ** 3  # skewed indeed: the third moment is tested


@pytest.mark.parametrize("rounds", [1, 6, 7, 10])
def test_runs_of_one_length_give_their_median_places_at_once_bit_for_bit(rounds: int) -> None:
    """The places of runs of one length, taken as one array, are run by run's exactly:
    the same values and probabilities in the same order, so the cumulants do not move."""
    rng = np.random.default_rng(rounds)
    logs = [rng.normal(0.0, 0.1, rounds) + rng.normal() for _ in range(50)]
    values, weights = replicates._median_places(logs)
    expected_values, expected_weights = [], []
    for run in logs:
        lo, hi, probability = replicates.median_positions(run.size)
        ordered = np.sort(run)
        expected_values.append((ordered[lo] + ordered[hi]) / 2)
        expected_weights.append(probability)
    assert np.array_equal(values, np.concatenate(expected_values))
    assert np.array_equal(weights, np.concatenate(expected_weights))
    # One run of another length goes run by run: the same places for the 50 as before.
    mixed_values, _ = replicates._median_places([*logs, np.array([0.5, 0.1, 0.3])])
    assert np.array_equal(mixed_values[:values.size], values)
    assert mixed_values[values.size:].tolist() == [0.1, 0.3, 0.5]


def test_large_sides_take_the_bootstraps_limit_and_agree_with_drawing_it() -> None:
    """Both sides at LIMIT_RUNS runs or more: the interval is the bootstrap's limit, and it
    agrees with drawing 40,000 resamples a side to within a few hundredths of the shift's
    spread at both ends. One side's runs are skewed and the other's are not, so the level
    difference is skewed and its skewness term (0.15 of a spread at the 99 % ends) counts."""
    rng = np.random.default_rng(8)
    runs = replicates.LIMIT_RUNS + 20
    before = [rng.normal(0.0, 0.05, 7) + rng.normal(0.0, 0.1) for _ in range(runs)]
    after = [rng.normal(0.0, 0.05, 7) + rng.exponential(0.3) for _ in range(runs)]
    alpha = 0.01
    low, high = replicates.ratio_interval(before, after, alpha)
    draw = np.random.default_rng(9)
    shifts = (replicates.bootstrap_levels(after, draw, 40_000)
              - replicates.bootstrap_levels(before, draw, 40_000))
    observed = float(replicates.run_estimates(after).mean()
                     - replicates.run_estimates(before).mean())
    widen = (replicates._t_quantile(1 - alpha / 2, 2 * runs - 2)
             / statistics.NormalDist().inv_cdf(1 - alpha / 2))
    drawn_low, drawn_high = observed + widen * (
        np.quantile(shifts, [alpha / 2, 1 - alpha / 2]) - observed)
    scale = float(np.std(shifts))
    assert low == pytest.approx(drawn_low, abs=0.05 * scale)
    assert high == pytest.approx(drawn_high, abs=0.05 * scale)
    # Not a normal interval: the skewed side pulls the upper end out further.
    assert (high - observed) - (observed - low) > 0.1 * scale


def test_below_the_limit_the_interval_is_drawn() -> None:
    rng = np.random.default_rng(10)
    before = [rng.normal(0.0, 0.05, 5) for _ in range(replicates.LIMIT_RUNS - 1)]
    after = [rng.normal(0.1, 0.05, 5) for _ in range(replicates.LIMIT_RUNS + 50)]
    drawn = replicates.ratio_interval(before, after, 0.01)
    assert drawn != replicates.ratio_interval(before, after, 0.01, seed=replicates.SEED + 1)
    limit = replicates.ratio_interval(before + before[:1], after, 0.01)
    assert limit == replicates.ratio_interval(before + before[:1], after, 0.01,
                                              seed=replicates.SEED + 1)


def _level_by_definition(runs: list[list[float]], confidence: float
                         ) -> tuple[float, float, float]:
    """`level_interval` as its docstring defines it, with the standard library and
    SciPy's t distribution: the mean of the runs' median ln rates, Student's t interval."""
    from scipy import stats

    estimates = [statistics.median(math.log(rate) for rate in run) for run in runs]
    mean = statistics.fmean(estimates)
    if len(estimates) == 1:
        one = summarize(runs[0], confidence=confidence)
        return math.exp(mean), one.ci_low, one.ci_high
    half = (float(stats.t.ppf(0.5 + confidence / 2, len(estimates) - 1))
            * statistics.stdev(estimates) / math.sqrt(len(estimates)))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def test_level_intervals_are_each_sides_level_interval() -> None:
    """A history's points worked out at once, by shape, are each side's `level_interval`:
    sides of one shape (taken together), of another shape, of one run, of runs of unequal
    lengths, in their order."""
    rng = np.random.default_rng(9)

    def side(runs: int, rounds: int | list[int], level: float) -> list[list[float]]:
        lengths = rounds if isinstance(rounds, list) else [rounds] * runs
        return [list(np.exp(rng.normal(level, 0.05, n))) for n in lengths]

    sides = [side(10, 10, 9.0 + i / 10) for i in range(12)]
    sides[3] = side(4, 7, 3.0)
    sides[5] = side(1, 10, 5.0)
    sides[7] = side(3, [5, 9, 7], 6.0)
    sides[9] = side(1, 10, 4.0)  # two sides of one run: one shape
    sides.append(side(4, 7, 2.0))
    found = replicates.level_intervals(sides, confidence=0.99)
    expected = [_level_by_definition(one, 0.99) for one in sides]
    assert len(found) == len(expected) == 13
    assert [replicates.level_interval(one, confidence=0.99) for one in sides] == found
    for got, want in zip(found, expected, strict=True):
        assert got == pytest.approx(want, rel=1e-12)
    assert found[0] != found[1] and found[3] != found[12]  # each side its own point


def test_level_intervals_refuse_a_bad_rate_as_level_interval_does() -> None:
    sides = [[[1.0, 2.0], [1.5, 2.5]], [[1.0, 0.0], [1.5, 2.5]]]
    with pytest.raises(ValueError, match="finite, positive rates"):
        replicates.level_intervals(sides)
    with pytest.raises(ValueError, match="finite, positive rates"):
        replicates.level_interval(sides[1])
