"""Groups mean one build, a session is evidence, and history agrees with compare.

A mixed store, as `bisect`, `--mask` and `ab` leave one: runs of the host's build, runs
with an older cryptography wheel (a bisection's), a masked run, and an `ab` session of the
host against another OS build. The expected verdicts are those compare gives on exactly
the runs or pairs in question, computed separately.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest

from pqbench.analysis import history as history_module
from pqbench.analysis.compare import compare_runs
from pqbench.analysis.noise import NoiseModel, Spread
from pqbench.app.compare import compare_sides
from pqbench.app.identity import by_build, one_build_side
from pqbench.catalog.algorithms.capabilities import ia32cap_value
from pqbench.data.record.results import Run
from pqbench.data.record.runs import group_runs
from tests.helpers.histories import history
from tests.helpers.runs import ROWS, environment, make_ab_session, make_run, make_runs

SHA = ("SHA-256", "python", "hash", 16384)

MASK = ia32cap_value(["aesni"])


def _store() -> list:
    host = make_runs("h", 3, seed=1, drift=0.02, env=environment(os_build="A"))
    pip = make_runs("p", 2, seed=2, drift=0.02, start_day=2, factor=0.8,
                    env=environment(os_build="A", libraries__cryptography="42.0.8"))
    masked = [make_run("m", seed=3, started_at="2026-01-03T00:00:00+00:00", factor=0.3,
                       env=environment(os_build="A", knobs__OPENSSL_ia32cap=MASK,
                                       mask={"names": ["aesni"]}))]
    side_a, side_b = make_ab_session("s", seed=4, drift=0.05, workers=6, process=0.01,
                                     factors={"SHA-256": 2.58},
                                     env_a=environment(os_build="A"),
                                     env_b=environment(os_build="B"))
    return [*host, *pip, *masked, side_a, side_b]


def test_compare_by_os_build_after_a_session_gives_the_sessions_verdict() -> None:
    runs = _store()
    groups = dict(group_runs(runs, "os_build"))
    found = compare_sides(groups["A"], groups["B"], before_name="A", after_name="B")
    session = compare_runs([runs[-2]], [runs[-1]])
    assert {r.key for r in found.rows} == {r.key for r in session.rows}
    for row in found.rows:
        alone = next(r for r in session.rows if r.key == row.key)
        assert (row.verdict, row.ratio, row.ci_low, row.ci_high) == \
            (alone.verdict, alone.ratio, alone.ci_low, alone.ci_high)
        assert row.pairs == alone.pairs and "ab session s" in (row.outcome.basis or "")
    sha = next(r for r in found.rows if r.key == SHA)
    assert sha.verdict == "faster" and sha.ratio == pytest.approx(2.58, rel=0.05)
    # The runs of other builds are named as left out, never pooled into A.
    left = [w for w in found.warnings if "another build left out" in w]
    assert any("cryptography 42.0.8: p0, p1" in w for w in left)
    assert any("AES-NI hidden: m" in w for w in left)
    assert "p0" not in found.before_runs and "m" not in found.before_runs


def test_history_points_are_one_build_each_and_count_the_runs_that_measured_the_row() -> None:
    runs = _store()
    # One host run did not measure SHA-256: its point counts the two that did.
    host = runs[0]
    runs[0] = type(host)(**{**host.__dict__, "measurements": tuple(
        m for m in host.measurements if m.key != SHA)})
    (sha,) = history(runs, "SHA-256")
    names = [p.build for p in sha.points]
    assert names[0] == "A" and "A (cryptography 42.0.8)" in names
    assert "A (AES-NI hidden)" in names and names[-1] == "B"
    first = sha.points[0]
    assert first.runs == ("h1", "h2", "s-a")  # the session's side joins its build's point
    assert first.n == 2 * 9  # its level from the two speed runs' rounds
    assert [name for name, _ in by_build(group_runs(runs, "os_build"))] == names
    # Where the session's two builds are neighbours, the step between them is the
    # session's verdict on its worker pairs, as compare gives it.
    plain = [r for r in runs if r.run_id in ("h1", "h2", "s-a", "s-b")]
    (sha,) = history(plain, "SHA-256")
    (step,) = sha.steps
    session = next(r for r in compare_runs([runs[-2]], [runs[-1]]).rows if r.key == SHA)
    assert step.build == "B" and step.verdict == session.verdict == "faster"
    assert step.ratio == session.ratio
    assert step.basis is not None and "ab session s" in step.basis


def _series_store(seed: int, sizes: list[float]) -> list:
    """One run per build, eight builds; build i's level is the product of `sizes[:i+1]`."""
    rng = np.random.default_rng(seed)
    runs, level = [], 1.0
    for i, size in enumerate(sizes):
        level *= size
        state = float(np.exp(rng.normal(0.0, 0.02)))
        runs.append(make_run(f"r{i}", seed=seed * 100 + i, label=f"b{i}",
                             started_at=f"2026-01-{i + 1:02d}T00:00:00+00:00",
                             factors={row[0]: state * (level if row[0] == "SHA-256" else 1.0)
                                      for row in ROWS}))
    return runs


@pytest.mark.parametrize("seed", range(6))
def test_every_step_is_a_verdict_compare_gives_on_the_same_runs(seed: int) -> None:
    """The same data: the runs of the segment before a step and of the segment after it
    (each run its own build by label, all of one fingerprint). For every step history
    reports, compare on exactly those runs, with the same noise model, says faster or
    slower with the same ratio; and a two-point history steps exactly when compare of the
    two builds says faster or slower."""
    rng = np.random.default_rng(seed)
    sizes = [1.0, *rng.choice([1.0, 1.0, 1.03, 0.9, 1.3, 2.0, 0.5], size=7)]
    runs = _series_store(seed, sizes)
    model = NoiseModel()
    for key in {m.key for m in runs[0].measurements}:
        model.add_runs(key, list(rng.normal(0.0, 0.02, 12)))  # a calibration of 11 df
    (sha,) = history(runs, "SHA-256", by="label", model=model)
    bounds = [0, *(s.index for s in sha.steps), len(runs)]
    for i, step in enumerate(sha.steps):
        before, after = runs[bounds[i]:bounds[i + 1]], runs[bounds[i + 1]:bounds[i + 2]]
        judged = next(r for r in compare_runs(before, after, noise=model).rows if r.key == SHA)
        assert judged.verdict == step.verdict and judged.changed
        assert judged.ratio == pytest.approx(step.ratio, rel=1e-12)
    # Neighbouring segments that history merged are not called changed on their own
    # runs: every boundary left out between two steps was judged and failed.
    for a, b in itertools.pairwise(runs):
        (two,) = history([a, b], "SHA-256", by="label", model=model)
        judged = next(r for r in compare_runs([a], [b], noise=model).rows if r.key == SHA)
        assert [s.verdict for s in two.steps] == ([judged.verdict] if judged.changed else [])


def test_a_two_point_history_with_the_prior_alone_is_compares_verdict() -> None:
    runs = _series_store(9, [1.0, 3.0])
    (sha,) = history(runs, "SHA-256", by="label", model=NoiseModel())
    judged = next(r for r in compare_runs(runs[:1], runs[1:], noise=NoiseModel()).rows
                  if r.key == SHA)
    assert judged.verdict == "faster" and [s.verdict for s in sha.steps] == ["faster"]
    assert sha.basis is not None and "default prior" in sha.basis
    # Learnt from these two runs alone, the model takes them for replicates (one build by
    # every recorded fact, one run per label): a change the fingerprint does not see then
    # counts as noise, which hides it rather than inventing one.
    (learnt,) = history(runs, "SHA-256", by="label")
    assert learnt.steps == () and learnt.noise_floor is not None and learnt.noise_floor > 0.3


def test_segments_are_judged_by_the_comparison_rule() -> None:
    spread = Spread(0.02, 30, "row", runs=31, groups=1)
    groups = [history_module.Group(f"b{i}", "2026", [(f"r{i}", [math.exp(v)] * 3)])
              for i, v in enumerate([0.0, 0.01, -0.01, 0.7, 0.69, 0.71])]
    series = history_module.series_of(SHA, groups, {}, spread)
    assert [(s.index, s.verdict) for s in series.steps] == [(3, "faster")]
    assert series.steps[0].ratio == pytest.approx(math.exp(0.7 - 0.0))


@pytest.mark.parametrize("timing", ["tls", "elapsed"])
def test_rows_timed_in_wall_time_never_rest_on_the_cpu_prior(timing: str) -> None:
    """The default prior was measured over CPU-time rates: one run against one of two
    builds timed in wall time (TLS handshakes; `speed --elapsed`) gets the exact test's
    answer, too few runs, from compare and from history alike; the same runs in CPU time
    are judged against the prior; with replicated wall-time runs of their own, wall-time
    rows are judged against those, unmoderated by the prior."""
    def timed(run: Run, time_base: str) -> Run:
        if time_base == "cpu":
            return replace(run, settings={**run.settings, "time_base": "cpu"})
        if timing == "tls":
            return replace(run, kind="tls")
        return replace(run, settings={**run.settings, "time_base": "wall"})

    for time_base in ("wall", "cpu"):
        runs = [timed(run, time_base) for run in _series_store(3, [1.0, 3.0])]
        judged = next(r for r in compare_runs(runs[:1], runs[1:], noise=NoiseModel()).rows
                      if r.key == SHA)
        (sha,) = history(runs, "SHA-256", by="label", model=NoiseModel())
        if time_base == "cpu":
            assert judged.verdict == "faster" and "default prior" in judged.outcome.basis
            assert [s.verdict for s in sha.steps] == ["faster"]
        else:
            assert judged.verdict == "too few runs" and judged.outcome.basis is None
            assert sha.steps == ()
    model = NoiseModel()
    model.add_runs(SHA, [0.0, 0.02, -0.01, 0.01])
    spread = model.spread_for(SHA, wall_time=True)
    assert spread is not None and (spread.source, spread.freedom) == ("row", 3)
    assert spread.borrowed is None and "default prior" not in spread.describe()
    assert NoiseModel().spread_for(SHA, wall_time=True) is None
    # Two runs alone (one degree of freedom, a t factor of 63.7) back no interval.
    few = NoiseModel()
    few.add_runs(SHA, [0.0, 0.3])
    assert few.spread_for(SHA, wall_time=True) is None
    assert few.spread_for(SHA, wall_time=False) is not None  # moderated by the prior
    assert NoiseModel().spread_for(SHA, wall_time=False) == NoiseModel().spread(SHA)


def test_a_side_names_five_runs_of_another_build_and_counts_the_rest() -> None:
    def runs(prefix: str, count: int, seed: int, **env: object) -> list[Run]:
        return [make_run(f"{prefix}{i:02d}", seed=seed + i,
                         env=environment(os_build="A", **env)) for i in range(count)]

    host = runs("h", 20, 0)
    warnings: list[str] = []
    kept = one_build_side([*host[:3], *runs("p", 2, 50, libraries__cryptography="42.0.8")],
                          "A", warnings)
    assert [r.run_id for r in kept] == ["h00", "h01", "h02"]
    (said,) = warnings
    assert said.endswith("cryptography 42.0.8: p00, p01); a side is one build")
    warnings.clear()
    one_build_side([*host, *runs("q", 12, 80, libraries__cryptography="42.0.8")], "A",
                   warnings)
    (said,) = warnings
    assert said.startswith("A: 12 run(s) of another build left out")
    assert said.endswith("q00, q01, q02, q03, q04 and 7 more); a side is one build")
