"""The verdict rule's edges and the run counts an exact test needs, worked by hand."""

from __future__ import annotations

import math

import pytest
from scipy import stats as sp_stats

from pqbench.analysis import verdict

LN = math.log
BAND = 0.05  # ln(1.05) = 0.04879


@pytest.mark.parametrize(("p", "low", "high", "expected"), [
    (0.001, LN(1.06), LN(1.30), "faster"),
    (0.001, LN(1 / 1.30), LN(1 / 1.06), "slower"),
    # Significant, but the interval reaches into the band: not enough for a change.
    (0.001, LN(1.04), LN(1.30), "inconclusive"),
    (0.001, LN(1 / 1.30), LN(1 / 1.04), "inconclusive"),
    # The whole interval beyond the band, but p not below alpha: no change shown either.
    (0.02, LN(1.06), LN(1.30), "inconclusive"),
    (0.02, LN(1 / 1.30), LN(1 / 1.06), "inconclusive"),
    # Inside the band: no change, whether or not the (small) shift is significant.
    (0.5, LN(0.97), LN(1.03), "no change"),
    (0.001, LN(1.01), LN(1.04), "no change"),
    (0.001, LN(1 / 1.04), LN(1 / 1.01), "no change"),
    # Exactly on the band's edges counts as inside (closed band).
    (0.5, -math.log1p(BAND), math.log1p(BAND), "no change"),
    # Wider than the band on both sides: too wide to tell.
    (0.5, LN(0.8), LN(1.2), "inconclusive"),
])
def test_rule_edges(p: float, low: float, high: float, expected: str) -> None:
    found, reason = verdict.decide(p, low, high, alpha=0.01, threshold=BAND)
    assert found == expected, reason
    assert reason


def test_a_reason_writes_its_band_as_every_percentage_is_written() -> None:
    """"±5.0 %", with the space `views.numbers.percent` puts before the sign, so a reason
    reads like the table beside it ("band ±5.0 %"), not "±5.0%"."""
    _, inside = verdict.decide(0.5, LN(0.99), LN(1.01), alpha=0.01, threshold=0.05)
    assert inside == "the CI 0.99–1.01 lies inside the ±5.0 % band"
    _, wide = verdict.decide(0.5, LN(0.8), LN(1.2), alpha=0.01, threshold=0.125)
    assert wide.endswith("reaches beyond the ±12.5 % band")


def test_the_band_is_symmetric_in_log() -> None:
    # 1/1.05 = 0.95238: an interval ending at 0.951 is beyond the band, at 0.953 inside it.
    assert verdict.decide(0.001, LN(0.5), LN(0.951), alpha=0.01, threshold=BAND)[0] == "slower"
    assert verdict.decide(0.001, LN(0.5), LN(0.953), alpha=0.01,
                          threshold=BAND)[0] == "inconclusive"


def test_reasons_name_the_figures() -> None:
    _, reason = verdict.decide(0.02, LN(1.06), LN(1.30), alpha=0.01, threshold=BAND)
    assert "p=0.02" in reason and "alpha=0.01" in reason and "1.06–1.3" in reason
    _, reason = verdict.decide(0.5, -math.inf, math.inf, alpha=0.01, threshold=BAND)
    assert "0–∞" in reason


def test_smallest_p_is_complete_separation() -> None:
    for n, m in ((3, 3), (4, 6), (5, 5), (2, 7)):
        separated = sp_stats.mannwhitneyu(range(n, n + m), range(n), method="exact").pvalue
        assert verdict.smallest_two_sample_p(n, m) == pytest.approx(separated)
    assert verdict.smallest_two_sample_p(3, 3) == pytest.approx(2 / 20)
    assert verdict.smallest_two_sample_p(1, 1) == 1.0
    # Thousands of runs a side (a fleet's history pooled by OS build): 2 / C(n + m, n) is
    # below the smallest float, not an OverflowError.
    assert verdict.smallest_two_sample_p(5000, 5000) == 0.0
    assert verdict.smallest_two_sample_p(100, 100) == pytest.approx(2 / math.comb(200, 100))


def test_runs_needed_at_one_percent() -> None:
    # 5 a side: 2/252 < 0.01; 4 and 6: 2/210 < 0.01 while 4 and 5 give 2/126.
    assert verdict.runs_needed(1, 1, 0.01) == "5 a side, or 4 and 6"
    assert verdict.runs_needed(3, 3, 0.01) == "5 a side, or 4 and 6"
    # With 12 runs already on one side, 3 on the other suffice: 2/C(15,3) = 2/455.
    assert verdict.runs_needed(1, 12, 0.01) == "5 a side, or 4 and 6, or 3 against the 12 " \
        "already recorded"
    assert verdict.runs_needed(1, 1, 0.05) == "4 a side, or 3 and 5"


def test_pairs_needed_and_signed_rank_floor() -> None:
    assert verdict.smallest_signed_rank_p(7) == pytest.approx(2 / 128)
    assert verdict.pairs_needed(0.01) == 8  # 2/256 < 0.01 <= 2/128
    assert verdict.pairs_needed(0.01 / 6) == 11  # 2/2048 < 0.00167 <= 2/1024


def test_threshold_auto_and_floor() -> None:
    assert verdict.threshold_for(None, None) == 0.05
    assert verdict.threshold_for(0.02, None) == 0.05
    assert verdict.threshold_for(0.12, None) == 0.12
    assert verdict.threshold_for(0.12, 0.03) == 0.03  # a fixed band is used as given
    assert verdict.floor_from_spread(math.log(1.1)) == pytest.approx(0.1)
    assert verdict.floor_from_spread(None) is None
