"""The `pqbench speed` command line each calibration run takes, built directly."""

from __future__ import annotations

import pytest

from pqbench.app.calibrate import speed_arguments


def test_every_option_is_handed_on_in_speed_s_spelling() -> None:
    assert speed_arguments(["x25519", "sha256"], ["cryptography", "python"], ["derive"],
                           [64, 16384], 0.25, 3, "calibration") == [
        "x25519", "sha256", "-i", "cryptography", "-i", "python", "-o", "derive",
        "--bytes", "64", "--bytes", "16384", "--seconds", "0.25", "--rounds", "3",
        "--label", "calibration"]


def test_nothing_named_is_the_quick_suite_without_options() -> None:
    assert speed_arguments(None, None, None, None, None, None, None) == []
    assert speed_arguments(None, None, None, None, None, None, "") == []


@pytest.mark.parametrize("seconds", [0.001, 1e-3 + 1e-12, 3600.0])
def test_seconds_pass_through_speed_s_parser_unchanged(seconds: float) -> None:
    """`repr` keeps every digit: what speed parses is the number calibrate was given."""
    argv = speed_arguments(None, None, None, None, seconds, None, None)
    assert float(argv[-1]) == seconds
