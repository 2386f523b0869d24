"""History series over builds: pooled points, a planted step pinned to its build, notes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pqbench.analysis.noise import Spread
from pqbench.data.store import Store
from pqbench.platform.errors import ComparisonError
from tests.helpers import invoke
from tests.helpers.histories import history
from tests.helpers.runs import environment, make_run, make_runs

BUILDS = ("18A391", "18B75", "18C54", "18D42", "18E226", "18F132", "18G84")


def _runs() -> list:
    return [make_run(f"r{i}", seed=i, started_at=f"2026-01-0{i + 1}",
                     env=environment(os_build=build),
                     factors={"AES-256-XTS": 20.0 if i >= 5 else 1.0})
            for i, build in enumerate(BUILDS)]


def test_step_is_pinned_to_the_first_build_at_the_new_level() -> None:
    (aes,) = history(_runs(), "aes-256-xts")
    assert [p.build for p in aes.points] == list(BUILDS)
    assert [(s.build, round(s.ratio)) for s in aes.steps] == [("18F132", 20)]
    (kem,) = history(_runs(), "ML-KEM-768", operation="encaps")
    assert kem.steps == ()


def test_notes_and_filters() -> None:
    series = history(_runs(), "ML-KEM-768", implementation="liboqs",
                     annotations={"18F132": ["AES-NI enabled"]})
    assert {s.operation for s in series} == {"encaps", "decaps"}
    assert series[0].points[5].notes == ("AES-NI enabled",)
    with pytest.raises(ComparisonError, match="measured: AES-256-XTS"):
        history(_runs(), "RSA-2048")


def test_cli_history_and_annotate(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    store = Store.open(str(db))
    for run in _runs():
        store.save_run(run)
    store.close()
    done = invoke("annotate", "18F132", "AES-NI enabled in the kernel", "--db", str(db))
    assert done.returncode == 0, done.stderr
    done = invoke("history", "AES-256-XTS", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    (series,) = json.loads(done.stdout)["series"]
    assert series["steps"][0]["build"] == "18F132"
    assert series["points"][5]["notes"] == ["AES-NI enabled in the kernel"]
    table = invoke("history", "AES-256-XTS", "--db", str(db))
    assert "AES-NI enabled in the kernel" in table.stdout and "▲" in table.stdout
    missing = invoke("history", "nope", "--db", str(db))
    assert missing.returncode == 1 and "no stored run measured nope" in missing.stderr


def test_points_are_run_level_and_steps_respect_the_noise_floor() -> None:
    # Seven builds of three runs each on a machine drifting 15 % from run to run; a 6 %
    # step at the fifth build is smaller than that floor and is not reported, while a 2x
    # step is, and the flat rows have none.
    runs = []
    for i, build in enumerate(BUILDS):
        runs += make_runs(f"b{i}-", 3, seed=40 + i, drift=0.15, start_day=i + 1,
                          env=environment(os_build=build),
                          factors={"SHA-256": 1.06 if i >= 4 else 1.0,
                                   "AES-256-XTS": 2.0 if i >= 4 else 1.0})
    (sha,) = history(runs, "SHA-256")
    assert [len(p.runs) for p in sha.points] == [3] * 7
    assert all(p.n == 27 for p in sha.points)  # 3 runs of 9 rounds
    assert sha.noise_floor is not None and sha.noise_floor > 0.1
    assert sha.threshold == sha.noise_floor
    assert sha.steps == ()
    assert all(s.steps == () for s in history(runs, "ML-KEM-768"))
    (aes,) = history(runs, "AES-256-XTS")
    (step,) = aes.steps
    # Segment levels of 3-run builds drifting 15 %: the 2x step within about 15 %.
    assert step.build == "18E226" and step.ratio == pytest.approx(2.0, rel=0.15)
    medians = [float(np.median(m.samples)) for r in runs[:3] for m in r.measurements
               if m.algorithm == "AES-256-XTS"]
    level = math.exp(float(np.mean(np.log(medians)))) * 16384
    assert aes.points[0].median == pytest.approx(level)


def test_two_builds_are_a_run_level_comparison() -> None:
    one = make_runs("x", 5, seed=50, env=environment(os_build="A"))
    two = make_runs("y", 5, seed=51, env=environment(os_build="B"), start_day=2,
                    factors={"SHA-256": 3.0})
    (sha,) = history([*one, *two], "SHA-256")
    assert [(s.build, round(s.ratio)) for s in sha.steps] == [("B", 3)]
    # One run a build: nothing replicated is stored, so the 3x step is judged against the
    # documented prior, and is far beyond it.
    (single,) = history([one[0], two[0]], "SHA-256")
    (step,) = single.steps
    assert step.build == "B" and step.verdict == "faster"
    assert step.basis is not None and "default prior" in step.basis


def test_three_builds_with_one_step_show_it_at_its_build() -> None:
    """The shortest history the step fit runs on: three builds of three runs each, the
    rate tripled from the third build on. The step is found, pinned to that build, and
    no other step is reported."""
    runs = [*make_runs("a", 3, seed=60, env=environment(os_build="A")),
            *make_runs("b", 3, seed=61, env=environment(os_build="B"), start_day=4),
            *make_runs("c", 3, seed=62, env=environment(os_build="C"), start_day=7,
                       factors={"SHA-256": 3.0})]
    (sha,) = history(runs, "SHA-256")
    assert [p.build for p in sha.points] == ["A", "B", "C"]
    (step,) = sha.steps
    assert step.build == "C" and step.ratio == pytest.approx(3.0, rel=0.05)
    (kem,) = history(runs, "ML-KEM-768", operation="encaps")
    assert kem.steps == ()


# --- which candidate steps are kept (the merge rule, with a judge of our own) ----------------


def _judge_of(levels: list[float], band: float = 0.05):
    """A judge of segments by their mean level: a verdict where the means differ by more
    than `band`, with a p-value that falls as they differ (enough to order the failures)."""
    from pqbench.analysis.verdict import Outcome

    def judge(first: int, start: int, end: int) -> Outcome:
        before = sum(levels[first:start]) / (start - first)
        after = sum(levels[start:end]) / (end - start)
        ratio = after / before
        moved = abs(math.log(ratio))
        changed = moved > math.log1p(band)
        return Outcome(before=before, after=after, ratio=ratio, ci_low=ratio, ci_high=ratio,
                       ci_level=0.99, p_value=0.001 if changed else 1.0 / (1.0 + 100 * moved),
                       verdict=("faster" if ratio > 1 else "slower") if changed else
                       "inconclusive", reason="", units_before=1, units_after=1,
                       spread_before=None, spread_after=None, floor=None, threshold=band,
                       method="")

    return judge


def test_the_failing_boundary_with_the_largest_p_is_merged_first() -> None:
    """Candidates at 1, 2 and 4 over levels 100, 102, 104, 108.5, 130: both the boundary at
    1 (2 %) and the one at 2 (4 %) fail the 5 % band; the one at 1, with the larger p, goes
    first, and then 100, 102 against 104, 108.5 is a 5.2 % step, kept with the one at 4.
    Merging the smaller p first (the boundary at 2) would leave 100 against 102, 104, 108.5
    (4.8 %) failing too, and only the step at 4."""
    from pqbench.analysis.history import kept_steps

    levels = [100.0, 102.0, 104.0, 108.5, 130.0]
    kept = kept_steps([1, 2, 4], len(levels), _judge_of(levels))
    assert [start for start, _ in kept] == [2, 4]
    assert [o.verdict for _, o in kept] == ["faster", "faster"]
    assert kept_steps([1], 2, _judge_of([100.0, 100.0])) == []


def test_the_fit_is_told_the_laplace_scale_of_the_rows_spread() -> None:
    """A normal of sd s and a Laplace law of scale s / sqrt(2) share their variance."""
    from pqbench.analysis.history import step_noise

    spread = Spread(0.04, 10, "row")
    assert step_noise(spread) == pytest.approx(0.0283, abs=1e-4)
    assert step_noise(None) is None
