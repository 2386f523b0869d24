"""Runs -> comparison rows with verdicts: is the after group faster, slower, or the same?

Pure domain code over frozen Runs (no printing, no storage). Rows are keyed by
(algorithm, implementation, operation, block size). The run is the unit of replication
(`replicates.compare_replicates`: one estimate per run, a two-level bootstrap interval, an exact
rank test over runs), because rounds of one run share its phase of a drifting machine.
When the two groups are the two sides of `pqbench ab` sessions, rows are compared pair by
pair instead (`signedrank.compare_pairs`), at the per-look alpha the session used, so
`compare` gives the verdict `ab` gave; when the groups hold other runs besides such sides
(`compare --by os_build` after an `ab` session), the rows a session measured are still
judged by its pairs, the session being the stronger evidence, and the others by runs.
Which runs a side holds (one build, one machine) is the caller's decision (`app.compare`).
Where a row has too few runs for the exact test over runs, it is judged against the
machine's run-to-run spread of that row (`noise`), when the caller has a noise model. Each
changed row carries the fingerprint differences that can explain it (`explain`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from pqbench.analysis import explain, pairing, replicates, signedrank, verdict
from pqbench.analysis.memory import compare_memory
from pqbench.analysis.news import News, summarize
from pqbench.analysis.noise import NoiseModel, timed_in_wall_time
from pqbench.analysis.rows import ALPHA, Row, RowComparison, RowKey
from pqbench.data.record.results import Run
from pqbench.platform.errors import ComparisonError


@dataclass(frozen=True, kw_only=True)
class RunComparison(RowComparison):
    """Everything `pqbench compare` reports for one before/after pair of run groups: the
    rows (`rows.RowComparison`) and the news told from them (`analysis.news`), each made
    once, so a reader asks ``comparison.rows`` or ``comparison.news`` alike.
    """

    news: News

    @classmethod
    def told(cls, compared: RowComparison, news: News) -> RunComparison:
        """The rows of `compared` with the news told from them."""
        return cls(**{f.name: getattr(compared, f.name) for f in fields(compared)}, news=news)

    def only_changed(self) -> RunComparison:
        """The same comparison showing only the rows judged faster or slower (the news,
        told from every row, stays as it was)."""
        return replace(self, rows=tuple(r for r in self.rows if r.changed))

    def as_dict(self) -> dict[str, Any]:
        """The document of `pqbench compare --json` (docs/compare.schema.json)."""
        return {"news": self.news.as_dict(), **super().as_dict()}


class NoCommonRows(ComparisonError):
    """Two sides that share no row: the runs are kept, for a gate to name what is gone."""

    def __init__(self, message: str, before: Sequence[Run], after: Sequence[Run]) -> None:
        super().__init__(message)
        self.before = list(before)
        self.after = list(after)


def run_samples(runs: Sequence[Run]) -> dict[RowKey, list[list[float]]]:
    """Per row key, per run that measured it, that run's per-round ops/s (in run order)."""
    found: dict[RowKey, list[list[float]]] = {}
    for run in runs:
        for m in run.measurements:
            samples = m.samples
            if samples:
                found.setdefault(m.key, []).append(samples)
    return found


def _byte_rows(runs: Sequence[Run]) -> set[RowKey]:
    """The rows whose rounds count bytes (`files` rows), so their levels read bytes/s."""
    return {m.key for run in runs for m in run.measurements if m.unit == "byte"}


def row_libraries(runs: Sequence[Run]) -> dict[RowKey, str]:
    """The library an implementation used for a row, where it says (python -> hashlib)."""
    found: dict[RowKey, str] = {}
    for run in runs:
        for m in run.measurements:
            library = m.attributes.get("library")
            if isinstance(library, str):
                found.setdefault(m.key, library)
    return found


def compare_runs(
    before: Sequence[Run],
    after: Sequence[Run],
    threshold: float | None = None,
    *,
    before_name: str | None = None,
    after_name: str | None = None,
    noise: NoiseModel | None = None,
    warnings: Sequence[str] = (),
) -> RunComparison:
    """Compare two groups of runs row by row, rows sorted by |ln ratio|, largest first, and
    tell the news of it (`news.summarize`): what every command that shows a comparison shows.

    ``threshold`` None is auto: each row is judged against max(5 %, its noise floor).
    ``noise`` (the machine's run-to-run spread per row) judges the rows that have too few
    runs for the exact test. ``warnings`` are the caller's (runs it left out, machines it
    mixed), shown first. Raises ComparisonError when a group is empty or when the groups
    share no row.
    """
    if not before or not after:
        raise ComparisonError("need at least one run on each side to compare")
    if threshold is not None and threshold < 0:
        raise ComparisonError("--threshold must not be negative")
    warnings = list(warnings)
    before_name = before_name or _group_name(before)
    after_name = after_name or _group_name(after)
    pairs = pairing.session_pairs(before, after)
    if pairs is None:
        sessions, rest_before, rest_after = pairing.sessions_between(before, after)
        outcomes, only_before, only_after = _by_runs(rest_before, rest_after, threshold, noise)
        if outcomes and noise is None:  # memory runs carry no rounds: no run count to warn of
            warnings += _run_count_warning(len(rest_before), len(rest_after))
        methods = sorted({row.outcome.method for row in outcomes.values()}) or [
            replicates.METHOD]
        if sessions:
            by_session, session_before, session_after = _by_pairs(sessions, threshold)
            ids = ", ".join(sorted({str(pairing.session_of(b)) for b, _ in sessions}))
            basis = session_basis(sessions)
            for key, row in by_session.items():
                outcomes[key] = replace(row, outcome=replace(row.outcome, basis=basis))
            only_before = tuple(k for k in (*only_before, *session_before) if k not in outcomes)
            only_after = tuple(k for k in (*only_after, *session_after) if k not in outcomes)
            only_before, only_after = tuple(dict.fromkeys(only_before)), tuple(
                dict.fromkeys(only_after))
            methods.append(f"rows an ab session measured: {signedrank.WORKER_METHOD}, alpha "
                           f"{pairing.paired_alpha(sessions):.3g} per look")
            warnings.append(f"{len(by_session)} row(s) judged by ab session {ids} (its worker "
                            f"pairs), which measured {before_name} against {after_name}")
        method = "; ".join(dict.fromkeys(methods))
        kept_before = [*(b for b, _ in sessions), *rest_before]
        kept_after = [*(a for _, a in sessions), *rest_after]
        alpha = ALPHA
    else:
        outcomes, only_before, only_after = _by_pairs(pairs, threshold)
        methods = sorted({row.outcome.method for row in outcomes.values()})
        method = (f"{'; '.join(methods) or signedrank.METHOD}; alpha "
                  f"{pairing.paired_alpha(pairs):.3g} per look "
                  f"({ALPHA:g} over the session's looks, Bonferroni)")
        kept_before, kept_after = list(before), list(after)
        alpha = pairing.paired_alpha(pairs)
    return told(kept_before, kept_after, outcomes, Sides(before_name, after_name, threshold),
                only_before, only_after, warnings=warnings, method=method,
                paired=pairs is not None, alpha=alpha)


@dataclass(frozen=True)
class Sides:
    """The names of a comparison's two sides and its band (None: auto)."""

    before: str
    after: str
    threshold: float | None


def told(before: Sequence[Run], after: Sequence[Run], outcomes: dict[RowKey, Row],
         sides: Sides, only_before: tuple[RowKey, ...], only_after: tuple[RowKey, ...], *,
         warnings: Sequence[str], method: str, paired: bool, alpha: float) -> RunComparison:
    """The comparison of rows judged (`outcomes`), with the memory figures compared, each
    changed row's causes from the fingerprint differences, and the news told of it."""
    memory = tuple(compare_memory(before, after))
    if not outcomes and not memory:
        raise NoCommonRows(
            "the runs have no row in common (algorithm, implementation, operation and block "
            "size must match); `pqbench runs` and `pqbench export` show what each holds",
            before, after)
    context = explain.context_of(r.environment for r in [*before, *after])
    differences = explain.annotate(
        explain.differences([r.environment for r in before],
                            [r.environment for r in after]),
        context, {key.algorithm for key in outcomes})
    backends = row_libraries([*before, *after])
    rows = [_with_causes(row, differences, context, backends.get(key))
            for key, row in outcomes.items()]
    rows.sort(key=lambda r: (-abs(math.log(r.ratio)), r.key[:3], r.block_size or 0))
    compared = RowComparison(
        before_name=sides.before,
        after_name=sides.after,
        before_runs=tuple(r.run_id for r in before),
        after_runs=tuple(r.run_id for r in after),
        threshold=sides.threshold,
        rows=tuple(rows),
        differences=tuple(differences),
        only_before=only_before,
        only_after=only_after,
        warnings=tuple(warnings),
        method=method,
        paired=paired,
        alpha=alpha,
        memory=memory,
    )
    return RunComparison.told(compared, summarize(compared, before, after))


def _by_runs(before: Sequence[Run], after: Sequence[Run], threshold: float | None,
             noise: NoiseModel | None = None
             ) -> tuple[dict[RowKey, Row], tuple[RowKey, ...], tuple[RowKey, ...]]:
    samples_before, samples_after = run_samples(before), run_samples(after)
    in_bytes = _byte_rows([*before, *after])
    # The default prior is for CPU-time rates: a side timed in wall time is judged only
    # against what was measured of its own rows (`NoiseModel.spread_for`).
    wall_time = any(timed_in_wall_time(run) for run in [*before, *after])
    found: dict[RowKey, Row] = {}
    for key, runs_before in samples_before.items():
        runs_after = samples_after.get(key)
        if runs_after:
            outcome = replicates.compare_replicates(
                runs_before, runs_after, threshold=threshold, alpha=ALPHA,
                spread=noise.spread_for(key, wall_time) if noise is not None else None)
            found[key] = Row(key, outcome, sum(map(len, runs_before)),
                             sum(map(len, runs_after)), counts_bytes=key in in_bytes)
    return (found, tuple(k for k in samples_before if k not in samples_after),
            tuple(k for k in samples_after if k not in samples_before))


def _by_pairs(pairs: Sequence[tuple[Run, Run]], threshold: float | None
              ) -> tuple[dict[RowKey, Row], tuple[RowKey, ...], tuple[RowKey, ...]]:
    alpha = pairing.paired_alpha(pairs)
    found: dict[RowKey, Row] = {}
    for key, (before, after, workers, seconds) in pairing.paired_rows(pairs).items():
        # Sessions that replicated their workers: the worker pair is the unit (as in `ab`).
        outcome = (signedrank.compare_pairs(before, after, threshold=threshold, alpha=alpha)
                   if workers is None else signedrank.compare_worker_pairs(
                       before, after, workers, threshold=threshold, alpha=alpha))
        found[key] = Row(key, replace(outcome, units_before=len(pairs),
                                      units_after=len(pairs)),
                         len(before), len(after), pairs=len(before), seconds=seconds)
    keys_before = {m.key for run, _ in pairs for m in run.measurements if m.samples}
    keys_after = {m.key for _, run in pairs for m in run.measurements if m.samples}
    return (found, tuple(sorted(keys_before - set(found), key=str)),
            tuple(sorted(keys_after - set(found), key=str)))


def session_rows(pairs: Sequence[tuple[Run, Run]], threshold: float | None = None
                 ) -> dict[RowKey, Row]:
    """Per row the sessions' pairs measured, its row judged by them as `ab` judged it,
    saying so (`Outcome.basis`)."""
    basis = session_basis(pairs)
    return {key: replace(row, outcome=replace(row.outcome, basis=basis))
            for key, row in _by_pairs(pairs, threshold)[0].items()}


def session_basis(pairs: Sequence[tuple[Run, Run]]) -> str:
    """What a verdict from `ab` sessions rests on, in words."""
    ids = ", ".join(sorted({str(pairing.session_of(b)) for b, _ in pairs}))
    return f"ab session {ids}: its worker pairs measured both builds side by side"


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


def _with_causes(row: Row, differences: Sequence[explain.Difference],
                 context: explain.Context, library: str | None = None) -> Row:
    """A changed row with the fingerprint differences that can explain it."""
    if not row.changed:
        return row
    return replace(row, causes=tuple(explain.causes_for(
        row.algorithm, row.implementation, differences, library=library, context=context,
        operation=row.operation)))
