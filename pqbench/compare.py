"""Runs -> comparison rows with verdicts: is the after group faster, slower, or the same?

Pure domain code over frozen Runs (no printing, no storage). Rows are keyed by
(algorithm, implementation, operation, block size); the per-round samples of every run in a
group are pooled for each key and compared with `stats.compare_samples` (Hodges-Lehmann
shift of ln(rate), Moses CI, Mann-Whitney U). Each changed row carries the fingerprint
differences that plausibly explain it (`explain`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pqbench import explain, stats
from pqbench.errors import ComparisonError
from pqbench.results import Run

RowKey = tuple[str, str, str, int | None]

#: Fingerprint fields that `--by` understands besides dotted paths into the environment.
RUN_FIELDS = ("label", "run_id", "kind", "date")


@dataclass(frozen=True)
class Row:
    """One (algorithm, implementation, operation, block size) before and after.

    ``before``/``after`` are medians of the pooled per-round rates: bytes per second for
    rows with a block size, operations per second otherwise (``unit`` says which).
    ``ratio`` = after / before (Hodges-Lehmann), so greater than 1 is faster.
    """

    algorithm: str
    implementation: str
    operation: str
    block_size: int | None
    unit: str
    before: float
    after: float
    ratio: float
    ci_low: float
    ci_high: float
    ci_level: float
    p_value: float
    verdict: str
    reason: str
    n_before: int
    n_after: int
    causes: tuple[explain.Cause, ...] = ()

    @property
    def key(self) -> RowKey:
        return (self.algorithm, self.implementation, self.operation, self.block_size)

    @property
    def changed(self) -> bool:
        return self.verdict in ("faster", "slower")

    def as_dict(self) -> dict[str, Any]:
        """The JSON row of `pqbench compare --json` (field names fixed by issue #5)."""
        return {
            "algorithm": self.algorithm, "implementation": self.implementation,
            "operation": self.operation, "block_size": self.block_size, "unit": self.unit,
            "before": self.before, "after": self.after, "ratio": self.ratio,
            "ci_low": _finite(self.ci_low), "ci_high": _finite(self.ci_high),
            "ci_level": self.ci_level, "p_value": self.p_value, "verdict": self.verdict,
            "reason": self.reason, "n_before": self.n_before, "n_after": self.n_after,
            "causes": [c.as_dict() for c in self.causes],
        }


@dataclass(frozen=True)
class RunComparison:
    """Everything `pqbench compare` reports for one before/after pair of run groups."""

    before_name: str
    after_name: str
    before_runs: tuple[str, ...]
    after_runs: tuple[str, ...]
    threshold: float
    rows: tuple[Row, ...]
    differences: tuple[explain.Difference, ...]
    only_before: tuple[RowKey, ...] = ()
    only_after: tuple[RowKey, ...] = ()
    warnings: tuple[str, ...] = ()
    method: str = field(default="")

    def as_dict(self) -> dict[str, Any]:
        return {
            "before": {"name": self.before_name, "runs": list(self.before_runs)},
            "after": {"name": self.after_name, "runs": list(self.after_runs)},
            "threshold": self.threshold,
            "alpha": ALPHA,
            "method": self.method,
            "rows": [r.as_dict() for r in self.rows],
            "differences": [d.as_dict() for d in self.differences],
            "only_before": [list(k) for k in self.only_before],
            "only_after": [list(k) for k in self.only_after],
            "warnings": list(self.warnings),
        }


ALPHA = 0.01


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def field_value(run: Run, name: str) -> str | None:
    """A run's value for `--by NAME`: a run field or a dotted path into its fingerprint.

    Lists (CPU flags) become comma-joined text so they can name a group.
    """
    if name == "label":
        value: Any = run.label if run.label is not None else run.environment.get("label")
    elif name == "run_id":
        value = run.run_id
    elif name == "kind":
        value = run.kind
    elif name == "date":
        value = run.started_at[:10]
    else:
        value = run.environment
        for part in name.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, dict):
            raise ComparisonError(f"--by {name} names a group of fields; pick one of: "
                                  f"{', '.join(f'{name}.{k}' for k in value)}")
    if value is None:
        return None
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def group_runs(runs: Iterable[Run], by: str) -> list[tuple[str, list[Run]]]:
    """Runs grouped by a fingerprint field, groups ordered by their earliest run.

    Runs without the field form a group named "(none)".
    """
    groups: dict[str, list[Run]] = {}
    for run in sorted(runs, key=lambda r: (r.started_at, r.run_id)):
        value = field_value(run, by)
        groups.setdefault("(none)" if value is None else value, []).append(run)
    return list(groups.items())


def pooled_samples(runs: Sequence[Run]) -> dict[RowKey, list[float]]:
    """Per-round ops/s of every run, pooled per row key, in run order."""
    pooled: dict[RowKey, list[float]] = {}
    for run in runs:
        for m in run.measurements:
            samples = m.samples
            if samples:
                pooled.setdefault(m.key, []).extend(samples)
    return pooled


def row_libraries(runs: Sequence[Run]) -> dict[RowKey, str]:
    """The library an implementation used for a row, where it says (python -> hashlib)."""
    found: dict[RowKey, str] = {}
    for run in runs:
        for m in run.measurements:
            library = m.attributes.get("library")
            if isinstance(library, str):
                found.setdefault(m.key, library)
    return found


def check_testbeds(runs: Sequence[Run], cross_machine: bool) -> list[str]:
    """Refuse runs from different testbeds (CPU model, flags, arch) unless asked; warn then."""
    testbeds = sorted({str(r.environment.get("testbed")) for r in runs})
    if len(testbeds) <= 1:
        return []
    hosts = sorted({str(r.environment.get("hostname")) for r in runs})
    message = (f"the runs come from {len(testbeds)} testbeds ({', '.join(testbeds)}; hosts "
               f"{', '.join(hosts)}): differences may be the machines, not the OS builds")
    if not cross_machine:
        raise ComparisonError(message + "; pass --cross-machine to compare anyway")
    return [message]


def compare_runs(
    before: Sequence[Run],
    after: Sequence[Run],
    threshold: float = 0.05,
    *,
    cross_machine: bool = False,
    before_name: str | None = None,
    after_name: str | None = None,
) -> RunComparison:
    """Compare two groups of runs row by row; rows sorted by |ln ratio|, largest first.

    Raises ComparisonError when a group is empty, when the runs come from different
    testbeds (unless ``cross_machine``), or when the groups share no row.
    """
    if not before or not after:
        raise ComparisonError("need at least one run on each side to compare")
    if threshold < 0:
        raise ComparisonError("--threshold must not be negative")
    warnings = check_testbeds([*before, *after], cross_machine)
    if len(before) == 1 or len(after) == 1:
        warnings.append(
            "a side has a single run: its rounds were taken back to back, so drift of the "
            "machine between runs (load, clock speed) is not in the intervals; for verdicts "
            "that hold across runs, record two or more runs per side, interleaved")
    pooled_before, pooled_after = pooled_samples(before), pooled_samples(after)
    common = [k for k in pooled_before if k in pooled_after]
    if not common:
        raise ComparisonError(
            "the runs have no row in common (algorithm, implementation, operation and block "
            "size must match); `pqbench runs` and `pqbench export` show what each holds")
    differences = explain.differences([r.environment for r in before],
                                      [r.environment for r in after])
    backends = row_libraries([*before, *after])
    rows = [_row(key, pooled_before[key], pooled_after[key], threshold, differences,
                 backends.get(key)) for key in common]
    rows.sort(key=lambda r: (-abs(math.log(r.ratio)), r.key[:3], r.block_size or 0))
    return RunComparison(
        before_name=before_name or _group_name(before),
        after_name=after_name or _group_name(after),
        before_runs=tuple(r.run_id for r in before),
        after_runs=tuple(r.run_id for r in after),
        threshold=threshold,
        rows=tuple(rows),
        differences=tuple(differences),
        only_before=tuple(k for k in pooled_before if k not in pooled_after),
        only_after=tuple(k for k in pooled_after if k not in pooled_before),
        warnings=tuple(warnings),
        method=_METHOD,
    )


_METHOD = ("per-round rates pooled per row; Hodges-Lehmann shift of ln(rate) with a 99% Moses "
           "CI; two-sided Mann-Whitney U; verdict needs p < 0.01 and the whole CI beyond "
           "the threshold")


def _group_name(runs: Sequence[Run]) -> str:
    return runs[0].run_id if len(runs) == 1 else f"{len(runs)} runs"


def _row(key: RowKey, before: list[float], after: list[float], threshold: float,
         differences: Sequence[explain.Difference], library: str | None = None) -> Row:
    result = stats.compare_samples(before, after, threshold=threshold, alpha=ALPHA)
    algorithm, implementation, operation, block_size = key
    scale = block_size or 1
    row = Row(
        algorithm=algorithm, implementation=implementation, operation=operation,
        block_size=block_size, unit="bytes/s" if block_size else "ops/s",
        before=stats.summarize(before).median * scale,
        after=stats.summarize(after).median * scale,
        ratio=result.ratio, ci_low=result.ci_low, ci_high=result.ci_high,
        ci_level=result.ci_level, p_value=result.p_value, verdict=result.verdict,
        reason=result.reason, n_before=result.n_before, n_after=result.n_after,
    )
    if not row.changed:
        return row
    causes = explain.causes_for(algorithm, implementation, differences, library=library)
    return Row(**{**row.__dict__, "causes": tuple(causes)})


def compare_groups(
    groups: Sequence[tuple[str, Sequence[Run]]],
    threshold: float = 0.05,
    *,
    cross_machine: bool = False,
) -> list[RunComparison]:
    """Each group against the next (in the given order): one comparison per step."""
    if len(groups) < 2:
        names = ", ".join(name for name, _ in groups) or "none"
        raise ComparisonError(f"need at least two groups to compare; found {names}")
    return [compare_runs(list(b), list(a), threshold, cross_machine=cross_machine,
                         before_name=bn, after_name=an)
            for (bn, b), (an, a) in itertools.pairwise(groups)]
