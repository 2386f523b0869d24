"""`speed`'s warnings about rows too unsteady to trust (spread and trend, as pyperf)."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from pqbench.analysis import stability
from pqbench.analysis.figures import run_figures
from pqbench.cli import app
from pqbench.views import console
from tests.helpers.runs import make_run


def test_steady_rounds_raise_nothing() -> None:
    rng = np.random.default_rng(1)
    assert stability.problems(list(1000 * np.exp(rng.normal(0, 0.02, 7)))) == []


def test_a_wide_spread_is_named_with_its_cv() -> None:
    # sd of 100, 140, 100, 140, 100, 140, 100 is 21.4; mean 117.1: CV 18 %.
    (problem,) = stability.problems([100.0, 140.0, 100.0, 140.0, 100.0, 140.0, 100.0])
    assert problem == "CV 18.3 % is over 10 %"


def test_a_cv_just_over_the_limit_never_reads_as_the_limit() -> None:
    """10.4 % rounded to whole percents read "CV 10% is over 10%"; a CV a hair over the
    limit takes the decimals that show it is over."""
    # Two rates a and b: CV = |a - b| / (a + b) * sqrt(2); a = 100, b chosen for the CV.
    for cv, said in ((0.104, "10.4"), (0.10004, "10.004"), (0.1000004, "10.00004")):
        ratio = (1 + cv / np.sqrt(2)) / (1 - cv / np.sqrt(2))
        (problem,) = stability.problems([100.0, 100.0 * ratio])
        assert problem == f"CV {said} % is over 10 %", problem
    assert stability.problems([100.0, 100.0 * (1 + 0.0999 / np.sqrt(2)) /
                               (1 - 0.0999 / np.sqrt(2))]) == []


def test_a_trend_from_first_to_last_rounds_is_named() -> None:
    # Clock ramping: each round 3 % faster. Medians of the first and last two rounds
    # (n // 3 = 2): (100 + 103) / 2 = 101.5 and (115.93 + 119.41) / 2 = 117.67, +15.9 %.
    rates = [100 * 1.03 ** i for i in range(7)]
    assert stability.problems(rates) == ["rates moved +16 % from the first rounds to the last"]
    # A 1 % drift over the row is not a trend worth a warning, nor is noise without order.
    assert stability.problems([100 * 1.0015 ** i for i in range(7)]) == []
    assert stability.drift(np.array([100.0, 120.0, 95.0, 118.0, 101.0])) is None
    assert stability.drift(np.array([100.0, 90.0, 80.0, 70.0])) is None  # too few rounds


def test_speed_warns_on_stderr_and_says_what_helps(capsys: pytest.CaptureFixture[str]) -> None:
    shaky = run_figures(make_run("r", seed=1, noise=0.3))
    lines = console.unstable_rows(shaky)
    assert lines and all("CV" in line for line in lines)
    console.warn_unstable(shaky)
    err = capsys.readouterr().err
    assert "too unsteady to trust" in err and "pqbench ab" in err and "--cpu" in err
    console.warn_unstable(run_figures(make_run("s", seed=1, noise=0.01)))
    assert capsys.readouterr().err == ""


@pytest.mark.process
def test_speed_command_runs_the_check(tmp_path) -> None:
    # A real run: whatever the machine does, the command completes and the check ran
    # (the warning appears exactly when a stored row fails it).
    db = tmp_path / "s.db"
    result = CliRunner().invoke(app, ["speed", "sha256", "-i", "python", "--bytes", "64",
                                      "--seconds", "0.05", "--rounds", "5", "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    from pqbench.data.store import Store

    (info,) = Store.open(str(db), create=False).list_runs()
    run = Store.open(str(db), create=False).load_run(info.run_id)
    shaky = console.unstable_rows(run_figures(run))
    assert ("too unsteady to trust" in result.stderr) == bool(shaky)


def test_spearman_rho_is_scipys_to_the_bit() -> None:
    """Drawn samples with and without ties (rates rounded to few digits tie), of the round
    counts a run has, against scipy.stats.spearmanr (the expected value is scipy's)."""
    from scipy import stats

    rng = np.random.default_rng(5)
    for n in (2, 3, 5, 9, 10, 30, 101):
        for digits in (None, 1, 0):
            y = rng.normal(100.0, 3.0, n) + np.linspace(0.0, rng.normal(0.0, 5.0), n)
            y = y if digits is None else np.round(y, digits)
            if np.ptp(y) == 0:
                continue
            x = np.arange(n)
            assert stability.spearman_rho(x, y) == float(stats.spearmanr(x, y).statistic)
            both = rng.permutation(np.repeat(np.arange(n // 2 + 1), 2)[:n])
            if np.ptp(both) == 0:
                continue
            assert stability.spearman_rho(both, y) == float(stats.spearmanr(both, y).statistic)
    assert stability.spearman_rho(np.arange(4), np.array([1.0, 2.0, 3.0, 4.0])) == 1.0
    assert stability.spearman_rho(np.arange(4), np.array([4.0, 2.0, 2.0, 1.0])) == pytest.approx(
        -0.9486832980505138, abs=1e-15)
    for odd in ([1.0, np.nan, 2.0], [2.0, 2.0, 2.0]):
        assert np.isnan(stability.spearman_rho(np.arange(3), np.array(odd)))


def test_the_median_of_a_third_of_the_rounds_is_numpys_to_the_bit() -> None:
    """`drift`'s median against np.median (the expected value is numpy's), on the counts a
    third of a run's rounds has, odd and even, with ties and the ends of the float range."""
    rng = np.random.default_rng(8)
    for n in (1, 2, 3, 4, 5, 10, 33, 34):
        for values in (rng.normal(1e5, 3e3, n), np.round(rng.normal(10.0, 1.0, n)),
                       rng.uniform(1e-300, 1e300, n), rng.permutation(np.arange(n) * 0.1)):
            assert stability._median(values) == np.median(values), values
    assert stability._median(np.array([0.1, 0.2])) == np.median([0.1, 0.2]) != 0.15
    assert stability._median(np.array([3.0, np.inf])) == np.inf


def test_a_row_with_a_nan_rate_has_no_trend() -> None:
    rising = [100.0 + 10 * i for i in range(9)]
    assert stability.drift(np.array(rising)) is not None
    assert stability.drift(np.array([*rising[:4], np.nan, *rising[5:]])) is None
