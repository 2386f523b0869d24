"""The machine's noise model, and verdicts from one run per build judged against it.

Expected values come from SciPy (Student's t, the two-sample t test) or are worked by hand
with numpy, never from the code under test. The simulations draw run estimates directly
(one ln level per run, a known spread), seeded, so they are fast and deterministic.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sp

from pqbench.analysis import noise, replicates, verdict
from pqbench.analysis.noise import NoiseModel, Spread

KEY = ("AES-256-GCM", "libcrypto", "encrypt", 16384)
OTHER = ("AES-256-XTS", "libcrypto", "encrypt", 16384)
KEM = ("ML-KEM-768", "liboqs", "encaps", None)


def _runs_of(estimates: list[float]) -> list[list[float]]:
    """Runs whose median ln rate is each estimate (three rounds about it)."""
    return [[math.exp(e) * 0.99, math.exp(e), math.exp(e) * 1.01] for e in estimates]


# --- the model ------------------------------------------------------------------------


def test_each_build_is_centred_on_its_own_level_and_pooled() -> None:
    model = NoiseModel()
    first, second = [0.0, 0.02, -0.01], [1.0, 1.05]  # the second build 2.7x faster
    model.add_runs(KEY, first)
    model.add_runs(KEY, second)
    model.add_runs(KEY, [0.5])  # one run: no degrees of freedom
    squares = sum(float(np.sum((np.array(g) - np.mean(g)) ** 2)) for g in (first, second))
    found = model.spread(KEY)
    # 3 df of its own, below BORROWED_DF, and no family: moderated by the default prior,
    # which counts PRIOR_DF degrees of freedom.
    d0 = noise.PRIOR_DF
    assert found.freedom == 3 + d0
    assert found.sd == pytest.approx(math.sqrt((squares + d0 * noise.PRIOR ** 2) / (3 + d0)))
    assert found.source == "row" and (found.runs, found.groups) == (5, 2)
    assert found.describe().startswith(
        f"this machine's run-to-run spread of {math.expm1(found.sd) * 100:.1f} % from 5 runs "
        f"of this row (2 groups of one build) and the default prior, {3 + d0} df")
    enough = NoiseModel()
    enough.add_runs(KEY, list(np.linspace(-0.02, 0.02, noise.BORROWED_DF + 1)))
    own = enough.spread(KEY)
    assert own.freedom == noise.BORROWED_DF and own.borrowed is None
    assert own.sd == pytest.approx(float(np.std(np.linspace(-0.02, 0.02, 11), ddof=1)))


def test_nothing_stored_is_the_documented_prior_and_says_so() -> None:
    found = NoiseModel().spread(KEY)
    assert (found.sd, found.freedom, found.source) == (noise.PRIOR, noise.PRIOR_DF, "prior")
    assert "default prior of 10.5 %" in found.describe()
    assert "`pqbench calibrate` sharpens it" in found.describe()
    assert found.short() == "the default prior of 10.5 % (`pqbench calibrate` sharpens it)"


def test_a_calibrated_row_that_leans_on_the_prior_is_not_told_to_calibrate() -> None:
    """Five calibration runs of a row with no family: 4 df of its own, moderated by the
    prior. The advice to run `pqbench calibrate` was given after it had been followed."""
    model = NoiseModel()
    model.add_runs(KEY, [0.0, 0.02, -0.01, 0.01, -0.02], calibration=5)
    found = model.spread(KEY)
    assert found.borrowed == "the default prior" and found.calibration == 5
    assert "5 of them calibration" in found.describe()
    assert "pqbench calibrate" not in found.describe()
    assert "pqbench calibrate" not in found.short()
    uncalibrated = NoiseModel()
    uncalibrated.add_runs(KEY, [0.0, 0.02, -0.01, 0.01, -0.02])
    assert found.describe() != uncalibrated.spread(KEY).describe()
    assert uncalibrated.spread(KEY).describe().endswith(": `pqbench calibrate` sharpens it")


def test_a_row_with_few_degrees_of_freedom_borrows_from_its_family() -> None:
    model = NoiseModel()
    model.add_runs(KEY, [0.0, 0.1])  # 1 df, sd 0.0707
    rng = np.random.default_rng(7)
    family = rng.normal(0.0, 0.02, 40)
    model.add_runs(OTHER, list(family))  # 39 df in the same family (cipher, libcrypto)
    model.add_runs(KEM, [0.0, 0.5, 1.0])  # another family: not borrowed
    found = model.spread(KEY)
    family_var = float(np.var(family, ddof=1))  # the other rows of the family
    d0 = noise.BORROWED_DF
    assert found.freedom == 1 + d0 and found.source == "row"
    assert found.sd == pytest.approx(math.sqrt((0.005 + d0 * family_var) / (1 + d0)))
    assert "its family (cipher, libcrypto: 1 other row, 40 runs)" in found.describe()
    assert found.short() == (f"this machine's run-to-run spread of {found.percent * 100:.1f} % "
                             f"(2 runs, family; {1 + d0} df)")
    # Enough of its own: no borrowing.
    own = model.spread(OTHER)
    assert own.source == "row" and own.freedom == 39 and own.borrowed is None


def test_sessions_count_inflated_and_only_where_no_runs_were_replicated() -> None:
    model = NoiseModel()
    workers = [0.01, -0.01, 0.02, 0.0, -0.02, 0.0]
    model.add_session(KEM, workers)
    found = model.spread(KEM)
    # var(e) / 2 per process, times the inflation, with J - 1 degrees of freedom, and
    # nothing else of its family: moderated by the default prior.
    squares = float(np.var(workers, ddof=1)) * 5 / 2 * noise.SESSION_INFLATION
    d0 = noise.PRIOR_DF
    assert found.source == "sessions" and found.freedom == 5 + d0
    assert found.sd == pytest.approx(math.sqrt((squares + d0 * noise.PRIOR ** 2) / (5 + d0)))
    assert "the worker pairs of 1 ab session of this row" in found.describe()
    # A second session: 10 df of pairs, counted as SESSION_DF (at the pooled variance).
    model.add_session(KEM, [0.0, 0.02, -0.02, 0.01, -0.01, 0.0])
    second = model.spread(KEM)
    assert second.freedom == noise.SESSION_DF + d0 and second.sessions == 2
    model.add_runs(KEM, [0.0, 0.04])
    assert model.spread(KEM).source == "row"


# --- verdicts against the spread ----------------------------------------------------------


def test_against_a_pooled_spread_it_is_the_two_sample_t_test() -> None:
    before, after = [0.0, 0.03, -0.02, 0.01], [0.2, 0.17]
    pooled = math.sqrt((np.sum((np.array(before) - np.mean(before)) ** 2)
                        + np.sum((np.array(after) - np.mean(after)) ** 2)) / 4)
    outcome = replicates.against_spread(np.array(before), np.array(after),
                                        Spread(pooled, 4, "row"), alpha=0.01)
    test = sp.ttest_ind(after, before, equal_var=True)
    interval = test.confidence_interval(0.99)
    assert outcome.p_value == pytest.approx(test.pvalue, rel=1e-9)
    assert math.log(outcome.ci_low) == pytest.approx(interval.low, rel=1e-9)
    assert math.log(outcome.ci_high) == pytest.approx(interval.high, rel=1e-9)
    assert outcome.ratio == pytest.approx(math.exp(np.mean(after) - np.mean(before)))
    assert outcome.verdict == verdict.FASTER
    assert outcome.threshold == pytest.approx(max(0.05, math.expm1(pooled)))


def test_one_against_one_and_five_against_one_use_the_model_where_the_exact_test_cannot() -> None:
    spread = Spread(0.02, 30, "row", runs=31, groups=1)
    one, jumped = _runs_of([0.0]), _runs_of([math.log(13.0)])
    five = _runs_of([0.0, 0.01, -0.01, 0.02, -0.02])
    for before, after in ((one, jumped), (five, jumped), (jumped, five)):
        outcome = replicates.compare_replicates(before, after, spread=spread)
        assert outcome.verdict in verdict.CHANGED
        assert outcome.basis == spread.describe() and spread.short() in outcome.reason
        assert outcome.method == replicates.SPREAD_METHOD
    # Without a spread: too few runs, as before.
    assert replicates.compare_replicates(one, jumped).verdict == verdict.TOO_FEW
    # Five a side reaches the exact test: the model is not used.
    exact = replicates.compare_replicates(five, _runs_of([2.0, 2.01, 1.99, 2.02, 1.98]),
                                          spread=spread)
    assert exact.method == replicates.METHOD and exact.verdict == verdict.FASTER
    # A change within what the machine does by itself is no faster/slower.
    small = replicates.compare_replicates(one, _runs_of([0.03]), spread=spread)
    assert small.verdict == verdict.INCONCLUSIVE


@pytest.mark.slow  # hundreds of simulated sessions: the whole suite's lane
@pytest.mark.parametrize("n,m", [(1, 1), (5, 1), (1, 5), (2, 2), (3, 3), (5, 5)])
def test_simulated_coverage_and_false_alarms_at_a_known_spread(n: int, m: int) -> None:
    """2000 trials: runs scatter N(level, 0.05) about their build's level; the model's
    spread is estimated from 20 calibration runs of another build (19 df). The 99 %
    interval covers the true shift as often as it says (binomial bounds), and an A/A pair
    of builds is called faster or slower at most at alpha."""
    rng = np.random.default_rng(1000 + 10 * n + m)
    sigma, trials, shift = 0.05, 2000, 0.3
    covered = alarms = 0
    for _ in range(trials):
        calibration = rng.normal(0.0, sigma, 20)
        spread = Spread(float(np.std(calibration, ddof=1)), 19, "row")
        before = rng.normal(0.0, sigma, n)
        after = rng.normal(shift, sigma, m)
        outcome = replicates.against_spread(before, after, spread)
        covered += math.log(outcome.ci_low) <= shift <= math.log(outcome.ci_high)
        same = replicates.against_spread(before, rng.normal(0.0, sigma, m), spread)
        alarms += same.changed
    bound = 3 * math.sqrt(0.99 * 0.01 / trials)
    assert abs(covered / trials - 0.99) <= bound
    assert alarms / trials <= 0.01


def test_a_tenfold_change_is_found_one_against_one_even_against_the_prior() -> None:
    prior = NoiseModel().spread(KEY)
    outcome = replicates.compare_replicates(_runs_of([0.0]), _runs_of([-math.log(13.0)]),
                                            spread=prior)
    assert outcome.verdict == verdict.SLOWER
    # The smallest change the prior lets one run against one call: the band plus the
    # t quantile at its degrees of freedom (SciPy) times sqrt(2) spreads.
    smallest = math.log1p(math.expm1(noise.PRIOR)) + sp.t.ppf(0.995, noise.PRIOR_DF) \
        * noise.PRIOR * math.sqrt(2)
    below = replicates.compare_replicates(_runs_of([0.0]), _runs_of([smallest * 0.98]),
                                          spread=prior)
    above = replicates.compare_replicates(_runs_of([0.0]), _runs_of([smallest * 1.02]),
                                          spread=prior)
    assert below.verdict == verdict.INCONCLUSIVE and above.verdict == verdict.FASTER


def test_the_smallest_call_takes_the_larger_of_the_band_and_the_spread() -> None:
    """One run against one, a 1 % spread on 10 df: the band is the 5 % floor (the larger),
    plus t(0.995, 10) * 0.01 * sqrt(2) in log units: about 9.8 %."""
    found = noise.smallest_call(Spread(0.01, 10, "row"), 1, 1)
    expected = math.expm1(math.log1p(0.05) + sp.t.ppf(0.995, 10) * 0.01 * math.sqrt(2))
    assert found == pytest.approx(expected) and found == pytest.approx(0.0981, abs=5e-4)
    wide = noise.smallest_call(Spread(0.10, 10, "row"), 1, 1)
    assert wide == pytest.approx(math.expm1(math.log1p(math.expm1(0.10))
                                            + sp.t.ppf(0.995, 10) * 0.10 * math.sqrt(2)))


def test_files_and_tls_runs_are_timed_in_wall_time_and_never_rest_on_the_cpu_prior() -> None:
    from pqbench.data.record.results import Run

    def run(kind: str, settings: dict) -> Run:
        return Run(run_id="r", started_at="", finished_at="", status="complete",
                   command="", label=None, settings=settings, environment={}, kind=kind)

    assert noise.timed_in_wall_time(run("files", {}))
    assert noise.timed_in_wall_time(run("tls", {}))
    assert noise.timed_in_wall_time(run("speed", {"time_base": "wall"}))
    assert not noise.timed_in_wall_time(run("speed", {"time_base": "cpu"}))
    assert not noise.timed_in_wall_time(run("speed", {}))
    model = NoiseModel()
    assert model.spread_for(KEY, wall_time=True) is None
    assert model.spread_for(KEY, wall_time=False) == Spread(noise.PRIOR, noise.PRIOR_DF,
                                                              "prior")
