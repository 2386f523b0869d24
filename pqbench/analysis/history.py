"""One algorithm's rate over OS builds (or any fingerprint field), with its steps.

Runs are grouped by the field (default `os_build`) in the order the groups first appear;
each group is one point, with the run as the unit as in `compare`: the geometric mean of
its runs' median rates and a 95 % Student t interval over the runs
(`replicates.level_interval`; one run: that run's median and order-statistic interval).
Steps come from `step_detect.detect_steps` (asv-style penalised weighted L1 fit on log levels,
weights from the CI widths), and no step is smaller than the series' noise band: max(5 %,
the pooled between-run spread of the builds that have several runs), the band `compare
--threshold auto` uses. Each step is pinned to the first build at the new level.

`series_of` computes one series from per-build rates (a report over thousands of runs
reads them as numbers, `store.queries.RowRates`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pqbench.analysis import explain, replicates, step_detect, verdict
from pqbench.analysis.compare import run_samples
from pqbench.analysis.rows import ALPHA, RowKey
from pqbench.errors import ComparisonError
from pqbench.record.results import Run
from pqbench.record.runs import group_runs

#: Per build: its name, its runs, and per row key the per-run samples.
PerBuild = Sequence[tuple[str, list[Run], dict[RowKey, list[list[float]]]]]


@dataclass(frozen=True)
class Point:
    """One build: its level (geometric mean of its runs' median rates; bytes/s for block
    rows; named ``median`` as before, and a median when the build has one run) and CI."""

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
    """A change of level; ``build`` is the first build at the new level."""

    index: int
    build: str
    before: float
    after: float
    ratio: float

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "build": self.build, "before": self.before,
                "after": self.after, "ratio": self.ratio}


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
    #: Pooled between-run spread as a fraction (None: no build has two runs), and the
    #: smallest step reported.
    noise_floor: float | None = None
    threshold: float = verdict.MIN_THRESHOLD

    def as_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "implementation": self.implementation,
                "operation": self.operation, "block_size": self.block_size,
                "unit": self.unit, "points": [p.as_dict() for p in self.points],
                "steps": [s.as_dict() for s in self.steps],
                "noise_floor": self.noise_floor, "threshold": self.threshold}


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


def history(
    runs: Iterable[Run],
    algorithm: str,
    *,
    implementation: str | None = None,
    operation: str | None = None,
    by: str = "os_build",
    annotations: Mapping[str, Sequence[str]] | None = None,
) -> list[Series]:
    """One series per matching row key, points in build order, steps detected.

    ``annotations`` maps a build (a value of ``by``) to its notes. Raises ComparisonError
    when no stored run measured the algorithm (with the ones that were).
    """
    groups = group_runs(runs, by)
    wanted = _norm(algorithm)
    per_build: list[tuple[str, list[Run], dict[RowKey, list[list[float]]]]] = [
        (build, members, run_samples(members)) for build, members in groups]
    keys: dict[RowKey, None] = {}
    seen_algorithms: set[str] = set()
    for _, _, pooled in per_build:
        for key in pooled:
            seen_algorithms.add(key.algorithm)
            if _norm(key.algorithm) != wanted:
                continue
            if implementation and key.implementation != implementation:
                continue
            if operation and key.operation != operation:
                continue
            keys[key] = None
    if not keys:
        raise not_measured(algorithm, implementation, operation, seen_algorithms)
    notes = annotations or {}
    return [_series(key, per_build, notes) for key in keys]


def _series(key: RowKey, per_build: PerBuild, notes: Mapping[str, Sequence[str]]) -> Series:
    groups = [Group(build, members[0].started_at, tuple(r.run_id for r in members),
                    samples.get(key) or [])
              for build, members, samples in per_build]
    return series_of(key, groups, notes)


@dataclass(frozen=True)
class Group:
    """One build's runs of one row key: its name, when its first run started, its run
    ids, and per run that measured the key its per-round rates (empty: not measured)."""

    name: str
    started_at: str
    runs: tuple[str, ...]
    samples: Sequence[Sequence[float]]


def series_of(key: RowKey, groups: Sequence[Group], notes: Mapping[str, Sequence[str]]
              ) -> Series:
    """One row key's history from its per-build rates, in build order (what `history`
    computes from runs; a report over thousands of runs reads the rates as numbers)."""
    algorithm, implementation, operation, block_size = key
    scale = block_size or 1
    measured = [g for g in groups if g.samples]
    points: list[Point] = []
    for group in measured:
        level, low, high = replicates.level_interval(group.samples)
        points.append(Point(
            build=group.name, started_at=group.started_at, runs=group.runs,
            n=sum(map(len, group.samples)), median=level * scale, ci_low=low * scale,
            ci_high=high * scale, notes=tuple(notes.get(group.name, ()))))
    floor = _floor(measured)
    band = verdict.threshold_for(floor, None)
    steps: list[HistoryStep] = []
    if len(points) >= 3:
        lows, highs = [p.ci_low for p in points], [p.ci_high for p in points]
        found = step_detect.detect_steps(
            [p.median for p in points], step_detect.weights_from_ci(lows, highs),
            noise=step_detect.noise_from_ci(lows, highs), min_step=band)
        steps = [HistoryStep(s.index, points[s.index].build, s.before_level, s.after_level,
                             s.ratio) for s in found]
    elif len(points) == 2:
        # Too short for a fit; a two-point history is a comparison of the two builds.
        result = replicates.compare_replicates(measured[0].samples, measured[1].samples,
                                         alpha=ALPHA)
        if result.changed:
            steps = [HistoryStep(1, points[1].build, points[0].median, points[1].median,
                                 result.ratio)]
    return Series(algorithm, implementation, operation, block_size,
                  "bytes/s" if block_size else "ops/s", tuple(points), tuple(steps),
                  floor, band)


#: A row key's per-round rates of each of the runs named (`store.rates.RowRates.runs`:
#: 1-D float arrays, read as sequences of floats).
def by_configuration(groups: Sequence[tuple[str, Sequence[Run]]]
                     ) -> list[tuple[str, list[Run]]]:
    """Each group whose runs differ in their OpenSSL capability knobs (masked and unmasked
    runs of one OS build) split into one group per configuration, named "build (AES-NI
    hidden)"; runs that differ by design are not one point, whose spread would be the
    mask's effect. Groups of one configuration keep their name (and their notes)."""
    split: list[tuple[str, list[Run]]] = []
    for name, runs in groups:
        configurations: dict[str | None, list[Run]] = {}
        for run in runs:
            configurations.setdefault(explain.configuration(run.environment), []).append(run)
        if len(configurations) == 1:
            split.append((name, list(runs)))
            continue
        split += [(name if config is None else f"{name} ({config})", members)
                  for config, members in configurations.items()]
    return split


RatesOf = Callable[[RowKey, Sequence[str]], Sequence[Any]]


def series_from_rates(keys: Iterable[RowKey], groups: Sequence[tuple[str, Sequence[Run]]],
                      rates: RatesOf, notes: Mapping[str, Sequence[str]]) -> list[Series]:
    """The series of `keys` over `groups` of run headers, each run's rates read by `rates`
    as numbers rather than from `Run`s (`history` of one row, a report over thousands of
    runs), in the order of `keys`; a key with rates in no group (a memory run's row) has
    none."""
    ids = [tuple(r.run_id for r in members) for _, members in groups]
    found = []
    for key in keys:
        series = series_of(key, [Group(name, members[0].started_at, of_group,
                                       rates(key, of_group))
                                 for (name, members), of_group in zip(groups, ids,
                                                                      strict=True)], notes)
        if series.points:
            found.append(series)
    return found


def _floor(groups: Sequence[Group]) -> float | None:
    """Pooled between-run spread of the builds' run estimates, as a fraction."""
    sides = [replicates.run_estimates(replicates.log_runs(g.samples, "runs"))
             for g in groups if g.samples]
    spread = replicates.pooled_spread(*sides) if sides else None
    return verdict.floor_from_spread(spread)
