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
A side stands for one build (`record.builds`): its runs of another build (a `bisect` run
with an older wheel, a masked run among unmasked ones) are left out, and a warning names
them. Where a row has too few runs for the exact test over runs, it is judged against the
machine's run-to-run spread of that row (`noise`), when the caller has a noise model. Each
changed row carries the fingerprint differences that can explain it (`explain`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from pqbench.analysis import explain, pairing, replicates, signedrank, verdict
from pqbench.analysis.memory import compare_memory
from pqbench.analysis.news import News, summarize
from pqbench.analysis.noise import NoiseModel, timed_in_wall_time
from pqbench.analysis.rows import ALPHA, Row, RowComparison, RowKey
from pqbench.data.record.builds import Build, principal, split_by_build
from pqbench.data.record.results import Run
from pqbench.data.record.runs import run_order
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
    noise: NoiseModel | None = None,
) -> RunComparison:
    """Compare two groups of runs row by row, rows sorted by |ln ratio|, largest first, and
    tell the news of it (`news.summarize`): what every command that shows a comparison shows.

    ``threshold`` None is auto: each row is judged against max(5 %, its noise floor).
    ``noise`` (the machine's run-to-run spread per row) judges the rows that have too few
    runs for the exact test. Raises ComparisonError when a group is empty, when the runs
    come from different testbeds (unless ``cross_machine``), or when the groups share no
    row.
    """
    if not before or not after:
        raise ComparisonError("need at least one run on each side to compare")
    if threshold is not None and threshold < 0:
        raise ComparisonError("--threshold must not be negative")
    warnings = check_testbeds([*before, *after], cross_machine)
    before_name = before_name or _group_name(before)
    after_name = after_name or _group_name(after)
    pairs = pairing.session_pairs(before, after)
    if pairs is None:
        sessions, rest_before, rest_after = pairing.sessions_between(before, after)
        rest_before = _one_build(rest_before, before_name, warnings)
        rest_after = _one_build(rest_after, after_name, warnings)
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
    memory = tuple(compare_memory(before, after))
    if not outcomes and not memory:
        raise ComparisonError(
            "the runs have no row in common (algorithm, implementation, operation and block "
            "size must match); `pqbench runs` and `pqbench export` show what each holds")
    context = explain.context_of(r.environment for r in [*kept_before, *kept_after])
    differences = explain.annotate(
        explain.differences([r.environment for r in kept_before],
                            [r.environment for r in kept_after]),
        context, {key.algorithm for key in outcomes})
    backends = row_libraries([*kept_before, *kept_after])
    rows = [_with_causes(row, differences, context, backends.get(key))
            for key, row in outcomes.items()]
    rows.sort(key=lambda r: (-abs(math.log(r.ratio)), r.key[:3], r.block_size or 0))
    compared = RowComparison(
        before_name=before_name,
        after_name=after_name,
        before_runs=tuple(r.run_id for r in kept_before),
        after_runs=tuple(r.run_id for r in kept_after),
        threshold=threshold,
        rows=tuple(rows),
        differences=tuple(differences),
        only_before=only_before,
        only_after=only_after,
        warnings=tuple(warnings),
        method=method,
        paired=pairs is not None,
        alpha=alpha,
        memory=memory,
    )
    return RunComparison.told(compared, summarize(compared, kept_before, kept_after))


def _one_build(runs: Sequence[Run], name: str, warnings: list[str]) -> list[Run]:
    """The runs of the build the side stands for (`record.builds.principal`); the others
    are left out, and a warning names them and what sets them apart."""
    if len(runs) < 2:
        return list(runs)
    split = split_by_build(runs)
    if len(split) == 1:
        return list(runs)
    main = principal(runs)
    kept = split[main]
    for build, members in split.items():
        if build != main:
            ids = ", ".join(r.run_id for r in members)
            warnings.append(f"{name}: {len(members)} run(s) of another build left out "
                            f"({build_words(build, main)}: {ids}); a side is one build")
    return kept


def build_words(build: Build, main: Build) -> str:
    """What sets `build` apart from `main`, in words: "cryptography 42.0.8", "AES-NI
    hidden", "timed in wall time"."""
    said: list[str] = []
    for name, mine, _ in build.differences(main):
        if name.startswith("knobs."):
            text = explain.knob_text(name.split(".", 1)[1], mine)
            said.append(text or f"{name.split('.', 1)[1]} unset")
        elif name == "mask":
            continue  # the knob it sets says it in words
        elif name == "time_base":
            said.append(f"timed in {mine or 'wall'} time")
        else:
            shown = mine if mine is not None else "(none)"
            said.append(f"{name.removeprefix('libraries.')} {shown}")
    return ", ".join(dict.fromkeys(said)) or "another configuration"


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


def compare_groups(
    groups: Sequence[tuple[str, Sequence[Run]]],
    threshold: float | None = None,
    *,
    cross_machine: bool = False,
    noise: NoiseModel | None = None,
) -> list[RunComparison]:
    """Each group against the next (in the given order): one comparison per step."""
    if len(groups) < 2:
        names = ", ".join(name for name, _ in groups) or "none"
        raise ComparisonError(f"need at least two groups to compare; found {names}")
    return [compare_runs(list(b), list(a), threshold, cross_machine=cross_machine,
                         before_name=bn, after_name=an, noise=noise)
            for (bn, b), (an, a) in itertools.pairwise(groups)]


def comparable_steps(groups: Sequence[tuple[str, Sequence[Run]]]
                     ) -> tuple[list[tuple[int, int]], list[int]]:
    """Which groups can be compared, in the given order: each group against the latest
    earlier group that shares a row with it (a store holding speed runs and a bisection's
    sessions of other rows is two series that never meet), and the groups that share no
    row with any other. A comparison of groups with no common row could only fail."""
    keys = [{m.key for run in runs for m in run.measurements if m.samples}
            for _, runs in groups]
    steps: list[tuple[int, int]] = []
    for after in range(1, len(groups)):
        before = next((i for i in range(after - 1, -1, -1) if keys[i] & keys[after]), None)
        if before is not None:
            steps.append((before, after))
    joined = {i for step in steps for i in step}
    return steps, [i for i in range(len(groups)) if i not in joined]


@dataclass(frozen=True)
class Compared:
    """One comparison and the runs each side held, in order (what a caller follows further,
    such as each run's paired cost ratios)."""

    comparison: RunComparison
    before: Sequence[Run]
    after: Sequence[Run]


def compare_steps(
    groups: Sequence[tuple[str, Sequence[Run]]],
    whole: Callable[[Sequence[Run]], Sequence[Run]],
    threshold: float | None = None,
    *,
    cross_machine: bool = False,
    every: bool = False,
    noise: Callable[[Sequence[Run]], NoiseModel | None] | None = None,
) -> list[Compared]:
    """The newest group against the one before it (by each group's newest run), or with
    `every` each group against the next, in the given order. The groups may hold run
    headers only: `whole` loads a group's runs whole, two groups at a time, so memory grows
    with the largest groups, not with every run stored. `noise` gives the noise model of
    the runs compared (`noise.NoiseModels.for_runs`)."""
    if len(groups) > 2 and not every:
        newest = sorted(groups, key=lambda group: run_order(group[1][-1]))[-2:]
        groups = [group for group in groups if group in newest]  # in the given order
    if len(groups) < 2:
        compare_groups(groups, threshold, cross_machine=cross_machine)  # says why not
    steps = []
    (before_name, before_runs), *rest = groups
    before = whole(before_runs)
    for after_name, after_runs in rest:
        after = whole(after_runs)
        model = noise([*before, *after]) if noise is not None else None
        steps.append(Compared(compare_runs(before, after, threshold, cross_machine=cross_machine,
                                           before_name=before_name, after_name=after_name,
                                           noise=model),
                              before, after))
        before, before_name = after, after_name
    return steps
