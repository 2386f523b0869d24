"""The one wording of a ratio, worked by hand: a speed ratio in words with its interval
beside it, and a time ratio turned into the same words."""

from __future__ import annotations

import math

import pytest

from pqbench.views import numbers


def test_a_speed_ratio_carries_its_interval_in_the_same_cell() -> None:
    assert numbers.change_beside_interval(2.58, 2.50, 2.66) == "2.58x faster [2.50–2.66]"
    # Slower: the factors, as the ratio is said ("1/0.7 = 1.43x slower").
    assert numbers.change_beside_interval(0.7, 0.69, 0.71) == "1.43x slower [1.41–1.45]"
    # Across 1: both ends in words.
    assert numbers.change_beside_interval(1.02, 0.99, 1.05) == \
        "1.02x faster [1.01x slower – 1.05x faster]"
    assert numbers.change_beside_interval(1.001, 0.999, 1.012) == \
        "same speed [1.00x – 1.01x faster]"
    assert numbers.change_beside_interval(2.0, 0.0, math.inf) == "2.00x faster [no interval]"


def test_a_time_ratio_reads_as_the_speed_ratio_it_is_the_inverse_of() -> None:
    # Takes 0.294x the time (0.288–0.297): 1/0.294 = 3.40x faster, 1/0.297 = 3.37 and
    # 1/0.288 = 3.47 the ends.
    assert numbers.time_change(0.294, 0.288, 0.297) == "3.40x faster [3.37–3.47]"
    assert numbers.time_change(1.83, 1.53, 2.59) == "1.83x slower [1.53–2.59]"


def test_an_interval_after_no_change_says_which_way_it_lies() -> None:
    """After "no change (within ±5 %)" no word gives the direction: an interval wholly on
    one side says it ("[1.01–1.05x faster]", "[1.00–1.03x slower]"), where "[1.01–1.05]"
    read the same both ways; across 1 each end says it already."""
    assert numbers.bracket(1.01, 1.05, directed=True) == "[1.01–1.05x faster]"
    assert numbers.bracket(0.97, 0.999, directed=True) == "[1.00–1.03x slower]"
    assert numbers.bracket(0.97, 1.02, directed=True) == "[1.03x slower – 1.02x faster]"
    assert numbers.bracket(1.01, 1.05) == "[1.01–1.05]"  # after "1.03x faster"
    assert numbers.bracket(0.0, 1.05, directed=True) == "[no interval]"


def test_an_end_beyond_a_thousandfold_is_said_in_words() -> None:
    """One run against one on a row whose runs spread threefold, judged on one degree of
    freedom, has an interval out to 10^30: its ends read "over 1,000", never 31 digits."""
    assert numbers.change_beside_interval(1.2, 3.4e-31, 2.9e30) == \
        "1.20x faster [over 1,000x slower – over 1,000x faster]"
    assert numbers.bracket(2.5, 4e9) == "[2.50 – over 1,000]"
    assert numbers.bracket(1e-12, 0.5, directed=True) == "[2.00 – over 1,000x slower]"
    assert numbers.bracket(2.5, 999.0) == "[2.50–999]"


@pytest.mark.parametrize(("low", "high", "said"), [
    (0.88, 0.90, "1.11x–1.14x slower"), (1.10, 1.25, "1.10x–1.25x faster"),
    (0.90, 0.90, "1.11x slower"), (0.95, 1.02, "1.05x slower – 1.02x faster"),
    (0.5, 0.9995, "2.00x slower – same speed")])
def test_several_machines_steps_read_as_one_range_of_speed_words(low: float, high: float,
                                                                 said: str) -> None:
    assert numbers.speed_change_range(low, high) == said
