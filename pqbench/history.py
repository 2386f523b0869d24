"""One algorithm's rate over OS builds (or any fingerprint field), with its steps.

Runs are grouped by the field (default `os_build`) in the order the groups first appear;
each group's per-round samples are pooled into one point (median and ~95% median CI).
Steps come from `stats.detect_steps` (asv-style penalised weighted L1 fit on log medians,
weights from the CI widths); each step is pinned to the first build at the new level.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pqbench import stats
from pqbench.compare import RowKey, group_runs, pooled_samples
from pqbench.errors import ComparisonError
from pqbench.results import Run


@dataclass(frozen=True)
class Point:
    """One build: the pooled samples' median rate (bytes/s for block rows) and its CI."""

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

    def as_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "implementation": self.implementation,
                "operation": self.operation, "block_size": self.block_size,
                "unit": self.unit, "points": [p.as_dict() for p in self.points],
                "steps": [s.as_dict() for s in self.steps]}


def _norm(name: str) -> str:
    return name.upper().replace("-", "").replace("_", "")


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
    per_build: list[tuple[str, list[Run], dict[RowKey, list[float]]]] = [
        (build, members, pooled_samples(members)) for build, members in groups]
    keys: dict[RowKey, None] = {}
    seen_algorithms: set[str] = set()
    for _, _, pooled in per_build:
        for key in pooled:
            seen_algorithms.add(key[0])
            if _norm(key[0]) != wanted:
                continue
            if implementation and key[1] != implementation:
                continue
            if operation and key[2] != operation:
                continue
            keys[key] = None
    if not keys:
        known = ", ".join(sorted(seen_algorithms)) or "none"
        raise ComparisonError(f"no stored run measured {algorithm}"
                              f"{f' with {implementation}' if implementation else ''}"
                              f"{f' ({operation})' if operation else ''}; measured: {known}")
    notes = annotations or {}
    return [_series(key, per_build, notes) for key in keys]


def _series(key: RowKey, per_build: Sequence[tuple[str, list[Run], dict[RowKey, list[float]]]],
            notes: Mapping[str, Sequence[str]]) -> Series:
    algorithm, implementation, operation, block_size = key
    scale = block_size or 1
    points: list[Point] = []
    for build, members, pooled in per_build:
        samples = pooled.get(key)
        if not samples:
            continue
        summary = stats.summarize(samples)
        points.append(Point(
            build=build, started_at=members[0].started_at,
            runs=tuple(r.run_id for r in members), n=summary.n,
            median=summary.median * scale, ci_low=summary.ci_low * scale,
            ci_high=summary.ci_high * scale, notes=tuple(notes.get(build, ()))))
    steps: list[HistoryStep] = []
    if len(points) >= 3:
        lows, highs = [p.ci_low for p in points], [p.ci_high for p in points]
        found = stats.detect_steps([p.median for p in points], stats.weights_from_ci(lows, highs),
                                   noise=stats.noise_from_ci(lows, highs))
        steps = [HistoryStep(s.index, points[s.index].build, s.before_level, s.after_level,
                             s.ratio) for s in found]
    elif len(points) == 2:
        # Too short for a fit; a two-point history is a comparison of the two builds.
        before, after = pooled_for(key, per_build)
        result = stats.compare_samples(before, after)
        if result.verdict in ("faster", "slower"):
            steps = [HistoryStep(1, points[1].build, points[0].median, points[1].median,
                                 result.ratio)]
    return Series(algorithm, implementation, operation, block_size,
                  "bytes/s" if block_size else "ops/s", tuple(points), tuple(steps))


def pooled_for(key: RowKey, per_build: Sequence[tuple[str, list[Run], dict[RowKey, list[float]]]]
               ) -> list[list[float]]:
    """The pooled samples of each build that measured the key, in build order."""
    return [pooled[key] for _, _, pooled in per_build if pooled.get(key)]
