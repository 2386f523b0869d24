"""One algorithm's rate over OS builds (or any fingerprint field), with its steps.

The caller decides the points (`app.history`: one machine, one build a point, named by the
`--by` field and what sets a build apart, "debian-12/6.18 (cryptography 42.0.8)"); here
each point is one build's level of one row, with the run as the unit as in `compare`: the
geometric mean of the median rates of the runs that measured the row, and a 95 % Student t
interval over them
(`replicates.level_interval`; one run: that run's median and order-statistic interval).
An `ab` session's side joins the point of the build it ran; where that point has `speed`
runs of the row too, they set its level (the session's pairs are timed otherwise).

**One rule for two points and for many.** A step is a place where `compare` judges the
runs before it against the runs after it `faster` or `slower`. The candidate places come
from `step_detect.detect_steps` (asv-style penalised weighted L1 fit on the log levels,
weights from each point's run count); then every boundary between two neighbouring
segments is judged by the comparison rule (`replicates.compare_replicates` over the runs of
the segment before and the segment after that measured the row, with the row's run-to-run
spread from the noise model where the runs are too few for the exact test; or, where an
`ab` session measured a build of each segment, the session's worker pairs, as compare
does), and the boundary that fails with the largest p-value is merged away, again and
again, until every boundary left is a verdict of `faster` or `slower`. A two-point history
is therefore exactly compare's verdict on the two builds, and every step of a longer one
is a verdict compare gives on the same runs (docs: history).

`series_of` computes one series from per-build rates (a report over thousands of runs
reads them as numbers, `store.queries.RowRates`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pqbench.analysis import noise, pairing, replicates, step_detect, verdict
from pqbench.analysis.compare import run_samples
from pqbench.analysis.rows import ALPHA, RowKey
from pqbench.data.record.results import Run
from pqbench.platform.errors import ComparisonError

#: The penalty of the candidate fit: lower than asv's 4, since every candidate is then
#: judged by the comparison rule, which alone decides what is a step.
CANDIDATE_PENALTY = 2.0


@dataclass(frozen=True)
class Point:
    """One build: its level (geometric mean of the median rates of the runs that measured
    the row; bytes/s for block rows; named ``median`` as before, and a median when one run
    measured it) and CI. ``runs`` are the runs that measured the row, ``n`` their rounds."""

    build: str
    started_at: str
    runs: tuple[str, ...]
    n: int
    median: float
    ci_low: float
    ci_high: float
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"build": self.build, "started_at": self.started_at, "runs": list(self.runs),
                "n": self.n, "median": self.median, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "notes": list(self.notes)}


@dataclass(frozen=True)
class HistoryStep:
    """A change of level; ``build`` is the first build at the new level. ``before`` and
    ``after`` are the two segments' levels and ``ratio`` after / before, as the comparison
    that found it (``verdict``, its interval, p-value, reason and what it rests on) says."""

    index: int
    build: str
    before: float
    after: float
    ratio: float
    verdict: str = verdict.FASTER
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    reason: str = ""
    basis: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "build": self.build, "before": self.before,
                "after": self.after, "ratio": self.ratio, "verdict": self.verdict,
                "ci_low": verdict.finite(self.ci_low), "ci_high": verdict.finite(self.ci_high),
                "p_value": self.p_value, "reason": self.reason, "basis": self.basis}


@dataclass(frozen=True)
class Series:
    """The history of one (algorithm, implementation, operation, block size)."""

    algorithm: str
    implementation: str
    operation: str
    block_size: int | None
    unit: str
    points: tuple[Point, ...]
    steps: tuple[HistoryStep, ...]
    #: The row's run-to-run spread as a fraction (None: not known), and the smallest step
    #: reported.
    noise_floor: float | None = None
    threshold: float = verdict.MIN_THRESHOLD
    #: Where the spread came from (`noise.Spread.describe`), None without a model.
    basis: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "implementation": self.implementation,
                "operation": self.operation, "block_size": self.block_size,
                "unit": self.unit, "points": [p.as_dict() for p in self.points],
                "steps": [s.as_dict() for s in self.steps],
                "noise_floor": self.noise_floor, "threshold": self.threshold,
                "basis": self.basis}


def _norm(name: str) -> str:
    return name.upper().replace("-", "").replace("_", "")


def names_algorithm(name: str, algorithm: str) -> bool:
    """Whether a stored algorithm name is the one asked for ("mlkem768" is ML-KEM-768)."""
    return _norm(name) == _norm(algorithm)


def not_measured(algorithm: str, implementation: str | None, operation: str | None,
                 measured: Iterable[str]) -> ComparisonError:
    """The error for an algorithm no stored run has rates for, with the ones it has."""
    known = ", ".join(sorted(set(measured))) or "none"
    return ComparisonError(f"no stored run measured {algorithm}"
                           f"{f' with {implementation}' if implementation else ''}"
                           f"{f' ({operation})' if operation else ''}; measured: {known}")


def run_samples_by_id(runs: Sequence[Run]) -> dict[RowKey, list[tuple[str, list[float]]]]:
    """Per row key, (run id, per-round rates) of each run that measured it."""
    found: dict[RowKey, list[tuple[str, list[float]]]] = {}
    for run in runs:
        for key, per_run in run_samples([run]).items():
            found.setdefault(key, []).extend((run.run_id, one) for one in per_run)
    return found


@dataclass(frozen=True)
class Group:
    """One build's runs of one row key: its name, when its first run started, and (run id,
    per-round rates) of each run that measured the key (empty: not measured). ``paired``
    holds the ids of its runs that are sides of `ab` sessions."""

    name: str
    started_at: str
    samples: Sequence[tuple[str, Sequence[float]]]
    paired: frozenset[str] = frozenset()

    @property
    def level_samples(self) -> list[tuple[str, Sequence[float]]]:
        """The runs that set the point's level: its `speed` runs where it has any (an `ab`
        side's rounds are timed as pairs on one pinned CPU), else its session sides."""
        plain = [(i, one) for i, one in self.samples if i not in self.paired]
        return plain or list(self.samples)


#: Judges two segments by the `ab` sessions that measured a build of each (the runs named
#: before and after), for one row: the session's outcome, or None where no session did.
SessionJudge = Callable[[RowKey, Sequence[str], Sequence[str]], verdict.Outcome | None]


def session_judge(sides: Sequence[Run], threshold: float | None = None) -> SessionJudge:
    """A `SessionJudge` over these `ab` sides (whole runs), as `compare` judges them."""
    from pqbench.analysis.compare import session_rows

    by_id = {r.run_id: r for r in sides}
    cache: dict[tuple[frozenset[str], frozenset[str]], dict[RowKey, Any]] = {}

    def judge(key: RowKey, before: Sequence[str], after: Sequence[str]
              ) -> verdict.Outcome | None:
        wanted = (frozenset(i for i in before if i in by_id),
                  frozenset(i for i in after if i in by_id))
        if not wanted[0] or not wanted[1]:
            return None
        if wanted not in cache:
            pairs, _, _ = pairing.sessions_between([by_id[i] for i in sorted(wanted[0])],
                                                   [by_id[i] for i in sorted(wanted[1])])
            cache[wanted] = session_rows(pairs, threshold) if pairs else {}
        row = cache[wanted].get(key)
        return None if row is None else row.outcome

    return judge


def series_of(key: RowKey, groups: Sequence[Group], notes: Mapping[str, Sequence[str]],
              spread: noise.Spread | None = None, sessions: SessionJudge | None = None
              ) -> Series:
    """One row key's history from its per-build rates, in build order (what `history`
    computes from runs; a report over thousands of runs reads the rates as numbers).
    ``spread`` is the row's run-to-run spread (None: the exact test over runs alone)."""
    algorithm, implementation, operation, block_size = key
    scale = block_size or 1
    measured = [g for g in groups if g.samples]
    points: list[Point] = []
    used_by = [group.level_samples for group in measured]
    levels = replicates.level_intervals([[one for _, one in used] for used in used_by])
    for group, used, (level, low, high) in zip(measured, used_by, levels, strict=True):
        points.append(Point(
            build=group.name, started_at=group.started_at,
            runs=tuple(i for i, _ in group.samples), n=sum(len(one) for _, one in used),
            median=level * scale, ci_low=low * scale, ci_high=high * scale,
            notes=tuple(notes.get(group.name, ()))))
    floor = (spread.percent if spread is not None else _floor(measured))
    band = verdict.threshold_for(floor, None)
    steps = _steps(points, measured, spread, sessions, key)
    return Series(algorithm, implementation, operation, block_size,
                  "bytes/s" if block_size else "ops/s", tuple(points), tuple(steps),
                  floor, band, spread.describe() if spread is not None else None)


def judge_segments(before: Sequence[Group], after: Sequence[Group], key: RowKey,
                   spread: noise.Spread | None, sessions: SessionJudge | None = None
                   ) -> verdict.Outcome:
    """The comparison rule on two segments of a history: the `ab` sessions that measured a
    build of each, where there are; else the runs of each that set its points' levels,
    judged as compare judges runs (`replicates.compare_replicates`, against ``spread``
    where the runs are too few for the exact test)."""
    if sessions is not None:
        found = sessions(key, [i for g in before for i, _ in g.samples],
                         [i for g in after for i, _ in g.samples])
        if found is not None:
            return found
    return replicates.compare_replicates(
        [one for g in before for _, one in g.level_samples],
        [one for g in after for _, one in g.level_samples], alpha=ALPHA, spread=spread)


def _steps(points: Sequence[Point], measured: Sequence[Group], spread: noise.Spread | None,
           sessions: SessionJudge | None, key: RowKey) -> list[HistoryStep]:
    """Candidate steps from the fit, kept only where the comparison rule calls them."""
    if len(points) < 2:
        return []

    def judge(first: int, start: int, end: int) -> verdict.Outcome:
        return judge_segments(measured[first:start], measured[start:end], key, spread, sessions)

    return [HistoryStep(
        start, points[start].build, o.before * (key[3] or 1), o.after * (key[3] or 1),
        o.ratio, o.verdict, o.ci_low, o.ci_high, o.p_value, o.reason, o.basis)
        for start, o in kept_steps(_candidates(points, measured, spread), len(points), judge)]


#: Judges the segment [first, start) against [start, end) of a series' points.
SegmentJudge = Callable[[int, int, int], verdict.Outcome]


def kept_steps(starts: Sequence[int], count: int, judge: SegmentJudge
               ) -> list[tuple[int, verdict.Outcome]]:
    """The candidate steps (`starts`, indexes into `count` points) the comparison rule
    keeps: every boundary between neighbouring segments is judged; while any fails, the
    one that fails with the largest p-value (the least evidence of a step) is merged away,
    and the rest are judged again on the longer segments. What remains are verdicts."""
    starts = list(starts)
    while starts:
        bounds = [0, *starts, count]
        judged = [judge(bounds[i], bounds[i + 1], bounds[i + 2]) for i in range(len(starts))]
        failing = [(o.p_value, i) for i, o in enumerate(judged) if not o.changed]
        if not failing:
            return list(zip(starts, judged, strict=True))
        del starts[max(failing)[1]]
    return []


def _candidates(points: Sequence[Point], measured: Sequence[Group],
                spread: noise.Spread | None) -> list[int]:
    """Where a step may start: between two points, both; over more, the places the
    penalised L1 fit puts its steps, each point weighted by how many runs set its level."""
    if len(points) == 2:
        return [1]
    counts = [len(g.level_samples) for g in measured]
    weights = [math.sqrt(c) for c in counts]
    known = step_noise(spread)
    if known is None:
        lows, highs = [p.ci_low for p in points], [p.ci_high for p in points]
        known = step_detect.noise_from_ci(lows, highs)
    found = step_detect.detect_steps([p.median for p in points], weights,
                                     penalty=CANDIDATE_PENALTY, noise=known)
    return [s.index for s in found]


def step_noise(spread: noise.Spread | None) -> float | None:
    """The noise the candidate fit is told a point's ln level carries: the fit's model is
    Laplace (`step_detect.detect_steps` takes its scale b), and a Laplace law with the
    variance of the row's run-to-run spread, a normal of sd s, has b = s / sqrt(2)
    (variance 2 b^2). None without a spread: the fit estimates it from the points'
    intervals."""
    return None if spread is None else spread.sd / math.sqrt(2.0)


#: Per row key, (run id, per-round rates) of each of the runs named that measured it.
RatesOf = Callable[[RowKey, Sequence[str]], Sequence[tuple[str, Any]]]


def series_from_rates(keys: Iterable[RowKey], groups: Sequence[tuple[str, Sequence[Run]]],
                      rates: RatesOf, notes: Mapping[str, Sequence[str]], *,
                      model: noise.NoiseModel | None = None,
                      sessions: SessionJudge | None = None) -> list[Series]:
    """The series of `keys` over `groups` of run headers, each run's rates read by `rates`
    as numbers rather than from `Run`s (`history` of one row, a report over thousands of
    runs), in the order of `keys`; a key with rates in no group (a memory run's row) has
    none. ``model`` gives each row's run-to-run spread; ``sessions`` judges segments an
    `ab` session measured."""
    ids = [tuple(r.run_id for r in members) for _, members in groups]
    paired = [frozenset(r.run_id for r in members if pairing.ab_session(r) is not None)
              for _, members in groups]
    # As compare judges runs: a row measured in wall time never rests on the CPU prior.
    wall_time = {r.run_id for _, members in groups for r in members
                 if noise.timed_in_wall_time(r)}
    found = []
    for key in keys:
        of_key = [Group(name, members[0].started_at, rates(key, of_group), sides)
                  for (name, members), of_group, sides in zip(groups, ids, paired, strict=True)]
        walled = any(run_id in wall_time for group in of_key for run_id, _ in group.samples)
        series = series_of(key, of_key, notes,
                           model.spread_for(key, walled) if model is not None else None,
                           sessions)
        if series.points:
            found.append(series)
    return found


def _floor(groups: Sequence[Group]) -> float | None:
    """Pooled between-run spread of the builds' run estimates, as a fraction."""
    sides = [replicates.run_estimates(replicates.log_runs([one for _, one in g.level_samples],
                                                          "runs"))
             for g in groups if g.samples]
    spread = replicates.pooled_spread(*sides) if sides else None
    return verdict.floor_from_spread(spread)
