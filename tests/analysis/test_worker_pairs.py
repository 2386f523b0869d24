"""The worker pair as the unit above the round pairs (`signedrank.compare_worker_pairs`):
worked by hand, against SciPy's t, and on simulated sessions whose processes differ by a
layout offset of their own."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pytest
from scipy import stats as sp_stats

from pqbench.analysis import compare, signedrank, verdict
from pqbench.data.record.results import Measurement, Run
from pqbench.data.record.rounds import LoopResult
from pqbench.data.record.runs import new_run
from pqbench.sessions.ab import sequential

# Three worker pairs, their pairs' ln ratios given interleaved (pair i by worker pair i mod 3
# while each has pairs left). Hodges-Lehmann by hand (median of the Walsh averages):
#   pair 0: 0.01 0.03 0.02 -> .01 .02 .015 .03 .025 .02 -> sorted .01 .015 .02 .02 .025 .03
#           -> (.02 + .02) / 2 = 0.02
#   pair 1: 0 0.02 0.1 -> 0 .01 .05 .02 .06 .1 -> sorted 0 .01 .02 .05 .06 .1
#           -> (.02 + .05) / 2 = 0.035 (the mean of the pairs would be 0.04)
#   pair 2: -0.01 0.01 0.03 0.09 -> 10 averages -.01 0 .01 .01 .02 .03 .04 .05 .06 .09
#           -> the 5th and 6th, (.02 + .03) / 2 = 0.025
GROUPS = {0: [0.01, 0.03, 0.02], 1: [0.0, 0.02, 0.1], 2: [-0.01, 0.01, 0.03, 0.09]}
HAND_ESTIMATES = [0.02, 0.035, 0.025]


def _interleaved() -> tuple[list[float], list[int]]:
    d, workers = [], []
    for index in range(max(map(len, GROUPS.values()))):
        for worker, values in GROUPS.items():
            if index < len(values):
                d.append(values[index])
                workers.append(worker)
    return d, workers


def _rates(d: np.ndarray | list[float], rng: np.random.Generator | None = None,
           ) -> tuple[np.ndarray, np.ndarray]:
    """Before and after rates with log ratios d; a drift shared by both rounds of a pair."""
    drift = (rng.normal(0.0, 0.3, len(d)) if rng is not None
             else np.linspace(-0.2, 0.2, len(d)))
    before = 1000.0 * np.exp(drift)
    return before, before * np.exp(np.asarray(d))


def test_hodges_lehmann_by_hand_takes_the_middle_two_when_even() -> None:
    for values, expected in zip(GROUPS.values(), HAND_ESTIMATES, strict=True):
        assert signedrank.hodges_lehmann(np.array(values)) == pytest.approx(expected)


def test_worker_pairs_by_hand_against_scipy_t() -> None:
    d, workers = _interleaved()
    before, after = _rates(d)
    alpha = 0.05
    result = signedrank.compare_worker_pairs(before, after, workers, threshold=0.05,
                                             alpha=alpha)
    mean = sum(HAND_ESTIMATES) / 3
    assert math.log(result.ratio) == pytest.approx(mean)
    error = sp_stats.sem(HAND_ESTIMATES)
    half = sp_stats.t.ppf(1 - alpha / 2, 2) * error
    assert math.log(result.ci_low) == pytest.approx(mean - half)
    assert math.log(result.ci_high) == pytest.approx(mean + half)
    assert result.p_value == pytest.approx(sp_stats.ttest_1samp(HAND_ESTIMATES, 0.0).pvalue)
    assert result.ci_level == pytest.approx(1 - alpha)
    assert (result.units_before, result.units_after) == (3, 3)
    assert result.method == signedrank.WORKER_METHOD
    # before is A's geometric mean (the shared drift is symmetric about 1000).
    assert result.before == pytest.approx(1000.0)
    assert result.after == pytest.approx(1000.0 * math.exp(mean))
    # The labels, not the positions, make the groups: the same pairs in another order.
    order = np.argsort(workers, kind="stable")
    again = signedrank.compare_worker_pairs(before[order], after[order],
                                            [workers[i] for i in order], threshold=0.05,
                                            alpha=alpha)
    assert (again.ratio, again.ci_low, again.ci_high) == pytest.approx(
        (result.ratio, result.ci_low, result.ci_high))


def test_one_worker_pair_is_too_few_however_many_pairs() -> None:
    before, after = _rates([0.5] * 40)
    result = signedrank.compare_worker_pairs(before, after, [7] * 40)
    assert result.verdict == verdict.TOO_FEW
    assert "1 worker pair" in result.reason and "at least 2" in result.reason
    assert result.ci_low == 0.0 and result.ci_high == math.inf
    # Two worker pairs whose pairs agree to the last digit show no spread, not a spread of
    # zero: no interval narrower than the data can back, so no verdict either.
    two = signedrank.compare_worker_pairs(*_rates([0.5] * 40), [0, 1] * 20)
    assert two.verdict == verdict.INCONCLUSIVE and two.p_value == 1.0
    assert (two.ci_low, two.ci_high) == (0.0, math.inf)
    assert math.log(two.ratio) == pytest.approx(0.5)


def test_identical_estimates_back_no_interval_anywhere() -> None:
    """The machine's spread learnt from runs that agree exactly is no spread: it borrows
    or falls back to the prior (CPU time) or to none (wall time), never an interval of
    zero width; machines whose pairs agree exactly back no interval either."""
    from pqbench.analysis import fleet
    from pqbench.analysis.noise import NoiseModel

    model = NoiseModel()
    key = ("TLS", "openssl", "handshake", None)
    model.add_runs(key, [0.1] * 12)  # eleven degrees of freedom of nothing
    cpu = model.spread_for(key, wall_time=False)
    assert cpu is not None and cpu.source == "prior" and cpu.sd > 0
    assert model.spread_for(key, wall_time=True) is None
    same = [[[100.0, 100.0]], [[200.0, 200.0]]]
    judged = fleet.compare_machines(same, [[[110.0, 110.0]], [[220.0, 220.0]]])
    assert judged.verdict == verdict.INCONCLUSIVE and judged.ci_high == math.inf


def test_bad_worker_pairs_are_refused() -> None:
    with pytest.raises(ValueError, match="a worker pair for every pair"):
        signedrank.compare_worker_pairs([1.0, 2.0], [1.0, 2.0], [0])
    with pytest.raises(ValueError, match="finite and positive"):
        signedrank.compare_worker_pairs([1.0, 0.0], [1.0, 2.0], [0, 1])


def _session(rng: np.random.Generator, shift: float, offset: float, noise: float,
             workers: int, pairs: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """One simulated session: every process has a layout offset of its own (sd ``offset``
    in ln rate), so pair i, taken by worker pair i mod J, carries B_j's offset minus A_j's;
    each round adds its own noise and both rounds of a pair share the machine's drift."""
    process_a = rng.normal(0.0, offset, workers)
    process_b = rng.normal(0.0, offset, workers)
    taken = np.arange(pairs) % workers
    d = (shift + process_b[taken] - process_a[taken]
         + rng.normal(0.0, noise, pairs) - rng.normal(0.0, noise, pairs))
    before, after = _rates(d, rng)
    return before, after, taken.tolist()


@pytest.mark.slow  # hundreds of simulated sessions: the whole suite's lane
def test_a_process_offset_breaks_the_round_pairs_and_not_the_worker_pairs() -> None:
    # Each process 2 % off by its layout, rounds 1 % noise, 4 worker pairs of 12 pairs, a
    # true ratio of exp(0.03): the round-pair interval treats 48 pairs as independent and
    # misses the truth in most sessions; over the 4 worker pairs the 99 % t interval
    # holds its level.
    rng = np.random.default_rng(22)
    trials, shift = 2000, 0.03
    missed_rounds = missed_workers = 0
    for _ in range(trials):
        before, after, workers = _session(rng, shift, 0.02, 0.01, 4, 48)
        rounds = signedrank.compare_pairs(before, after, alpha=0.01)
        grouped = signedrank.compare_worker_pairs(before, after, workers, alpha=0.01)
        missed_rounds += not rounds.ci_low <= math.exp(shift) <= rounds.ci_high
        missed_workers += not grouped.ci_low <= math.exp(shift) <= grouped.ci_high
    assert missed_rounds / trials > 0.3
    assert 1 - missed_workers / trials >= 0.985


def test_without_a_process_offset_the_worker_pairs_still_hold() -> None:
    rng = np.random.default_rng(23)
    trials = 1000
    covered = 0
    for _ in range(trials):
        before, after, workers = _session(rng, 0.0, 0.0, 0.02, 5, 40)
        grouped = signedrank.compare_worker_pairs(before, after, workers, alpha=0.01)
        covered += grouped.ci_low <= 1.0 <= grouped.ci_high
    assert covered / trials >= 0.985


@pytest.mark.slow
def test_the_looks_over_worker_pairs_keep_false_verdicts_below_alpha() -> None:
    # `ab`'s schedule with the worker pair as the unit: six looks at alpha / 6, A/A with a
    # 2 % process offset and no band at all (threshold 0): any p < alpha / 6 at any look is
    # a false verdict. Bonferroni bounds the total by alpha.
    rng = np.random.default_rng(24)
    looks = sequential.Looks()
    trials, false = 1000, 0
    for _ in range(trials):
        before, after, workers = _session(rng, 0.0, 0.02, 0.01, 4, looks.last)
        for count in looks.counts:
            outcome = sequential.analyse(list(before[:count]), list(after[:count]), looks,
                                         0.0, workers[:count])
            if sequential.decided(outcome):
                break
        false += outcome.verdict in verdict.CHANGED
    assert false / trials <= 0.015


def test_a_large_change_over_worker_pairs_is_decided_at_the_first_look() -> None:
    # The masked AES-NI jump is several-fold: 12 pairs over 4 worker pairs decide it.
    rng = np.random.default_rng(25)
    looks = sequential.Looks()
    before, after, workers = _session(rng, math.log(5.0), 0.02, 0.05, 4, looks.counts[0])
    outcome = sequential.analyse(list(before), list(after), looks, None, workers)
    assert outcome.verdict == verdict.FASTER and outcome.units_before == 4


def _side(session: str, side: str, d: list[float], workers: list[int] | None) -> Run:
    """One side of a stored `ab` session with one SHA-256 row: rounds of 1000 operations,
    B's rounds faster by exp(d[i]) in CPU time (elapsed_ns is CPU time, as `ab` stores)."""
    elapsed = [10**9 if side == "a" else round(10**9 / math.exp(x)) for x in d]
    attributes: dict[str, object] = {"ab_cpu_ns": elapsed, "time_base": "cpu"}
    if workers is not None:
        attributes["ab_worker"] = workers
    row = Measurement("SHA-256", "libcrypto", "hash",
                      tuple(LoopResult(1000, ns, None) for ns in elapsed), block_size=64,
                      attributes=attributes)
    return new_run("speed", datetime(2026, 11, 25, tzinfo=UTC),
                   settings={"ab": {"session": session, "side": side, "alpha": 0.01,
                                    "looks": [12]}},
                   environment={}, measurements=[row], label=side, command="ab")


def test_compare_takes_each_sessions_worker_pairs_as_units_of_their_own() -> None:
    # Two sessions, each with worker pairs 0 and 1: four units, not two. Per worker pair
    # the pairs' ln ratios are constant, so each estimate is that constant.
    one, two = [0.01, 0.03, 0.01, 0.03], [0.02, 0.06, 0.02, 0.06]
    workers = [0, 1, 0, 1]
    result = compare.compare_runs(
        [_side("s1", "a", one, workers), _side("s2", "a", two, workers)],
        [_side("s1", "b", one, workers), _side("s2", "b", two, workers)], 0.05)
    (row,) = result.rows
    estimates = [0.01, 0.03, 0.02, 0.06]
    half = sp_stats.t.ppf(1 - 0.01 / 2, 3) * sp_stats.sem(estimates)
    assert math.log(row.ratio) == pytest.approx(np.mean(estimates))
    assert math.log(row.ci_low) == pytest.approx(np.mean(estimates) - half)
    assert math.log(row.ci_high) == pytest.approx(np.mean(estimates) + half)
    assert row.pairs == 8 and signedrank.WORKER_METHOD in result.method
    # A session stored before worker pairs existed leaves the row to the round pairs.
    mixed = compare.compare_runs(
        [_side("s1", "a", one, workers), _side("s2", "a", two, None)],
        [_side("s1", "b", one, workers), _side("s2", "b", two, None)], 0.05)
    assert mixed.method.startswith(signedrank.METHOD)
    (old,) = mixed.rows
    walsh = sorted((x + y) / 2 for i, x in enumerate(one + two) for y in (one + two)[i:])
    assert math.log(old.ratio) == pytest.approx(float(np.median(walsh)))
