"""Runs -> comparison rows with verdicts: is the after group faster, slower, or the same?

Pure domain code over frozen Runs (no printing, no storage). Rows are keyed by
(algorithm, implementation, operation, block size). The run is the unit of replication
(`replicates.compare_runs`: one estimate per run, a two-level bootstrap interval, an exact
rank test over runs), because rounds of one run share its phase of a drifting machine.
When the two groups are the two sides of `pqbench ab` sessions, rows are compared pair by
pair instead (`signedrank.compare_pairs`), at the per-look alpha the session used, so
`compare` gives the verdict `ab` gave. Each changed row carries the fingerprint
differences that can explain it (`explain`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pqbench.analysis import explain, pairing, replicates, signedrank, verdict
from pqbench.analysis.news import News, summarize
from pqbench.analysis.verdict import MIN_THRESHOLD
from pqbench.errors import ComparisonError
from pqbench.memory.compare import MemoryChange, compare_memory
from pqbench.record.results import RowKey, Run
from pqbench.record.runs import NO_VALUE, RUN_FIELDS, check_field, field_value

__all__ = ["ALPHA", "RUN_FIELDS", "Row", "RowKey", "RunComparison", "compare_groups",
           "compare_runs", "field_value", "group_runs", "run_order", "run_samples",
           "without_value"]

#: Significance level of every comparison (two-sided); intervals are at 1 - ALPHA.
ALPHA = 0.01


@dataclass(frozen=True)
class Row:
    """One (algorithm, implementation, operation, block size) before and after.

    ``before``/``after`` are the two levels (bytes per second for rows with a block size,
    operations per second otherwise; ``unit`` says which) and ``ratio`` = after / before
    exactly (greater than 1 is faster): one estimate, see `verdict.Outcome`. ``n_*`` count
    rounds, ``runs_*`` runs; ``pairs`` is set for a paired (`ab`) row.
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
    runs_before: int = 1
    runs_after: int = 1
    spread_before: float | None = None
    spread_after: float | None = None
    noise_floor: float | None = None
    threshold: float = MIN_THRESHOLD
    pairs: int | None = None
    seconds: float | None = None
    causes: tuple[explain.Cause, ...] = ()

    @property
    def key(self) -> RowKey:
        return (self.algorithm, self.implementation, self.operation, self.block_size)

    @property
    def changed(self) -> bool:
        return self.verdict in verdict.CHANGED

    def as_dict(self) -> dict[str, Any]:
        """The JSON row of `pqbench compare --json` (names fixed by issues #5 and #9)."""
        return {
            "algorithm": self.algorithm, "implementation": self.implementation,
            "operation": self.operation, "block_size": self.block_size, "unit": self.unit,
            "before": self.before, "after": self.after, "ratio": self.ratio,
            "ci_low": verdict.finite(self.ci_low), "ci_high": verdict.finite(self.ci_high),
            "ci_level": self.ci_level, "p_value": self.p_value, "verdict": self.verdict,
            "reason": self.reason, "n_before": self.n_before, "n_after": self.n_after,
            "runs_before": self.runs_before, "runs_after": self.runs_after,
            "spread_before": self.spread_before, "spread_after": self.spread_after,
            "noise_floor": self.noise_floor, "threshold": self.threshold,
            "design": "pairs" if self.pairs is not None else "runs", "pairs": self.pairs,
            "seconds": self.seconds,
            "causes": [c.as_dict() for c in self.causes],
        }


@dataclass(frozen=True)
class RunComparison:
    """Everything `pqbench compare` reports for one before/after pair of run groups.

    ``threshold`` is the fixed band, or None for auto (max(5 %, each row's noise floor)).
    """

    before_name: str
    after_name: str
    before_runs: tuple[str, ...]
    after_runs: tuple[str, ...]
    threshold: float | None
    rows: tuple[Row, ...]
    differences: tuple[explain.Difference, ...]
    only_before: tuple[RowKey, ...] = ()
    only_after: tuple[RowKey, ...] = ()
    warnings: tuple[str, ...] = ()
    method: str = field(default="")
    paired: bool = False
    #: The level each row was judged at: ALPHA, or an `ab` session's alpha per look.
    alpha: float = ALPHA
    #: Memory figures (runs of kind "memory"), compared exactly: pqbench.memory.compare.
    memory: tuple[MemoryChange, ...] = ()
    #: What changed, told first (`analysis.news`): set by `compare_runs`.
    news: News | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "news": self.news.as_dict() if self.news is not None else None,
            "before": {"name": self.before_name, "runs": list(self.before_runs)},
            "after": {"name": self.after_name, "runs": list(self.after_runs)},
            "threshold": MIN_THRESHOLD if self.threshold is None else self.threshold,
            "threshold_mode": "auto" if self.threshold is None else "fixed",
            "alpha": self.alpha,
            "design": "pairs" if self.paired else "runs",
            "method": self.method,
            "rows": [r.as_dict() for r in self.rows],
            "differences": [d.as_dict() for d in self.differences],
            "only_before": [list(k) for k in self.only_before],
            "only_after": [list(k) for k in self.only_after],
            "warnings": list(self.warnings),
            "memory": [m.as_dict() for m in self.memory],
        }


def run_order(run: Run) -> tuple[str, str, str]:
    """Oldest first; the two sides of an `ab` session (started together) A before B."""
    return (run.started_at, pairing.side_of(run) or "", run.run_id)


def group_runs(runs: Iterable[Run], by: str, *, missing: bool = False
               ) -> list[tuple[str, list[Run]]]:
    """Runs grouped by a fingerprint field, groups ordered by their earliest run.

    Runs without a value for the field are left out: unlabelled runs are not one
    configuration, and comparing them as one would report their mix as a change. With
    `missing` they form a group named "(none)". A field no run records is a UsageError
    naming the known ones (`record.runs.check_field`).
    """
    runs = sorted(runs, key=run_order)
    check_field(runs, by)
    groups: dict[str, list[Run]] = {}
    for run in runs:
        value = field_value(run, by)
        if value is not None or missing:
            groups.setdefault(NO_VALUE if value is None else value, []).append(run)
    return list(groups.items())


def without_value(runs: Iterable[Run], by: str) -> list[Run]:
    """The runs `group_runs` leaves out by default: those without a value for `by`."""
    return [run for run in runs if field_value(run, by) is None]


def run_samples(runs: Sequence[Run]) -> dict[RowKey, list[list[float]]]:
    """Per row key, per run that measured it, that run's per-round ops/s (in run order)."""
    found: dict[RowKey, list[list[float]]] = {}
    for run in runs:
        for m in run.measurements:
            samples = m.samples
            if samples:
                found.setdefault(m.key, []).append(samples)
    return found


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
    testbeds = sorted({str(r.environment.testbed) for r in runs})
    if len(testbeds) <= 1:
        return []
    hosts = sorted({str(r.environment.hostname) for r in runs})
    message = (f"the runs come from {len(testbeds)} testbeds ({', '.join(testbeds)}; hosts "
               f"{', '.join(hosts)}): differences may be the machines, not the OS builds")
    if not cross_machine:
        raise ComparisonError(message + "; pass --cross-machine to compare anyway")
    return [message]


def compare_runs(
    before: Sequence[Run],
    after: Sequence[Run],
    threshold: float | None = None,
    *,
    cross_machine: bool = False,
    before_name: str | None = None,
    after_name: str | None = None,
) -> RunComparison:
    """Compare two groups of runs row by row; rows sorted by |ln ratio|, largest first.

    ``threshold`` None is auto: each row is judged against max(5 %, its noise floor).
    Raises ComparisonError when a group is empty, when the runs come from different
    testbeds (unless ``cross_machine``), or when the groups share no row.
    """
    if not before or not after:
        raise ComparisonError("need at least one run on each side to compare")
    if threshold is not None and threshold < 0:
        raise ComparisonError("--threshold must not be negative")
    warnings = check_testbeds([*before, *after], cross_machine)
    pairs = pairing.session_pairs(before, after)
    if pairs is None:
        outcomes, only_before, only_after = _by_runs(before, after, threshold)
        if outcomes:  # memory runs carry no rounds: a run count says nothing about them
            warnings += _run_count_warning(len(before), len(after))
        method = replicates.METHOD
    else:
        outcomes, only_before, only_after = _by_pairs(pairs, threshold)
        methods = sorted({found[0].method for found in outcomes.values()})
        method = (f"{'; '.join(methods) or signedrank.METHOD}; alpha "
                  f"{pairing.paired_alpha(pairs):.3g} per look "
                  f"({ALPHA:g} over the session's looks, Bonferroni)")
    memory = tuple(compare_memory(before, after))
    if not outcomes and not memory:
        raise ComparisonError(
            "the runs have no row in common (algorithm, implementation, operation and block "
            "size must match); `pqbench runs` and `pqbench export` show what each holds")
    context = explain.context_of(r.environment for r in [*before, *after])
    differences = explain.annotate(
        explain.differences([r.environment for r in before], [r.environment for r in after]),
        context, {key[0] for key in outcomes})
    backends = row_libraries([*before, *after])
    rows = [_row(key, *found, differences, context, backends.get(key))
            for key, found in outcomes.items()]
    rows.sort(key=lambda r: (-abs(math.log(r.ratio)), r.key[:3], r.block_size or 0))
    result = RunComparison(
        before_name=before_name or _group_name(before),
        after_name=after_name or _group_name(after),
        before_runs=tuple(r.run_id for r in before),
        after_runs=tuple(r.run_id for r in after),
        threshold=threshold,
        rows=tuple(rows),
        differences=tuple(differences),
        only_before=only_before,
        only_after=only_after,
        warnings=tuple(warnings),
        method=method,
        paired=pairs is not None,
        alpha=ALPHA if pairs is None else pairing.paired_alpha(pairs),
        memory=memory,
    )
    return replace(result, news=summarize(result, before, after))


#: What a row's analysis produced: the outcome, rounds before and after, pairs, seconds.
_Found = tuple[verdict.Outcome, int, int, int | None, float | None]


def _by_runs(before: Sequence[Run], after: Sequence[Run], threshold: float | None
             ) -> tuple[dict[RowKey, _Found], tuple[RowKey, ...], tuple[RowKey, ...]]:
    samples_before, samples_after = run_samples(before), run_samples(after)
    found: dict[RowKey, _Found] = {}
    for key, runs_before in samples_before.items():
        runs_after = samples_after.get(key)
        if runs_after:
            outcome = replicates.compare_runs(runs_before, runs_after, threshold=threshold,
                                              alpha=ALPHA)
            found[key] = (outcome, sum(map(len, runs_before)), sum(map(len, runs_after)),
                          None, None)
    return (found, tuple(k for k in samples_before if k not in samples_after),
            tuple(k for k in samples_after if k not in samples_before))


def _by_pairs(pairs: Sequence[tuple[Run, Run]], threshold: float | None
              ) -> tuple[dict[RowKey, _Found], tuple[RowKey, ...], tuple[RowKey, ...]]:
    alpha = pairing.paired_alpha(pairs)
    found: dict[RowKey, _Found] = {}
    for key, (before, after, workers, seconds) in pairing.paired_rows(pairs).items():
        # Sessions that replicated their workers: the worker pair is the unit (as in `ab`).
        outcome = (signedrank.compare_pairs(before, after, threshold=threshold, alpha=alpha)
                   if workers is None else signedrank.compare_worker_pairs(
                       before, after, workers, threshold=threshold, alpha=alpha))
        found[key] = (replace(outcome, units_before=len(pairs), units_after=len(pairs)),
                      len(before), len(after), len(before), seconds)
    keys_before = {m.key for run, _ in pairs for m in run.measurements if m.samples}
    keys_after = {m.key for _, run in pairs for m in run.measurements if m.samples}
    return (found, tuple(sorted(keys_before - set(found), key=str)),
            tuple(sorted(keys_after - set(found), key=str)))


def _run_count_warning(n: int, m: int) -> list[str]:
    if verdict.smallest_two_sample_p(n, m) < ALPHA:
        return []
    return [f"{n} and {m} runs: with the run as the unit no row can show a change at "
            f"alpha={ALPHA:g}; record more runs ({verdict.runs_needed(n, m, ALPHA)}), "
            "interleaved, or measure both configurations in one paired session with "
            "`pqbench ab`"]


def _group_name(runs: Sequence[Run]) -> str:
    """The runs' shared label (an `ab` side's, say), else the run id or the count."""
    labels = {run.label for run in runs}
    if len(labels) == 1 and None not in labels:
        return str(labels.pop())
    return runs[0].run_id if len(runs) == 1 else f"{len(runs)} runs"


def _row(key: RowKey, outcome: verdict.Outcome, rounds_before: int, rounds_after: int,
         pairs: int | None, seconds: float | None, differences: Sequence[explain.Difference],
         context: explain.Context, library: str | None = None) -> Row:
    algorithm, implementation, operation, block_size = key
    scale = block_size or 1
    causes: tuple[explain.Cause, ...] = ()
    if outcome.changed:
        causes = tuple(explain.causes_for(algorithm, implementation, differences,
                                          library=library, context=context,
                                          operation=operation))
    return Row(
        algorithm=algorithm, implementation=implementation, operation=operation,
        block_size=block_size, unit="bytes/s" if block_size else "ops/s",
        before=outcome.before * scale, after=outcome.after * scale, ratio=outcome.ratio,
        ci_low=outcome.ci_low, ci_high=outcome.ci_high, ci_level=outcome.ci_level,
        p_value=outcome.p_value, verdict=outcome.verdict, reason=outcome.reason,
        n_before=rounds_before, n_after=rounds_after, runs_before=outcome.units_before,
        runs_after=outcome.units_after, spread_before=outcome.spread_before,
        spread_after=outcome.spread_after, noise_floor=outcome.floor,
        threshold=outcome.threshold, pairs=pairs, seconds=seconds, causes=causes)


def compare_groups(
    groups: Sequence[tuple[str, Sequence[Run]]],
    threshold: float | None = None,
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
