"""The comparison part of a report over many groups (a fleet's OS builds).

Each group against the next does not scale: a hundred builds make 99 comparisons (each a
bootstrap of every row), 99 ratio charts nobody reads, and every run held whole. Over more
than `FEW_GROUPS` groups the report instead

* draws the history from every run's per-round rates read as numbers (`RowRates`), one
  row key at a time, each point with its Student t interval over its runs
  (`replicates.level_interval`, as `pqbench history` draws it);
* compares only where the history steps: for each of the `STEP_COMPARISONS` builds with
  the largest steps, the group before it against it, and the oldest group against the
  newest; two groups are loaded whole at a time, and the report names every other pair's
  command.

Pure like the rest of `pqbench.views.report`: the runs and rates come through the callables the
command passes in.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence

from pqbench.analysis import history
from pqbench.analysis.compare import RunComparison
from pqbench.analysis.noise import NoiseModel
from pqbench.app.compare import compare_sides
from pqbench.app.history import machine_series
from pqbench.app.report import FEW_GROUPS
from pqbench.data.record.results import Run
from pqbench.data.record.runs import group_runs
from pqbench.data.store.rates import RowRates
from pqbench.platform.errors import ComparisonError
from pqbench.views import markdown as md
from pqbench.views.report.base import Section
from pqbench.views.report.comparison import KINDS, comparison, each_against_the_next, history_of

#: Step builds compared at most (largest steps first), besides the oldest and newest.
STEP_COMPARISONS = 3
Groups = Sequence[tuple[str, Sequence[Run]]]


def history_series(groups: Groups, rates: RowRates, annotations: Mapping[str, Sequence[str]],
                   model: NoiseModel | None = None) -> dict[str, list[history.Series]]:
    """Per algorithm (in the order first stored), its series of two points or more."""
    found: dict[str, list[history.Series]] = {}
    for series in machine_series(groups, rates.row_keys(), rates.by_run, annotations,
                                 model=model, pool=True):
        found.setdefault(series.algorithm, [])
        if len(series.points) >= 2:  # measured in one group only: no history to show
            found[series.algorithm].append(series)
    return found


def step_builds(names: Sequence[str], per_algorithm: Mapping[str, Sequence[history.Series]]
                ) -> list[int]:
    """The indexes of the groups where some series steps (its first point at the new
    level), the largest step first (by the largest |ln ratio| of a series stepping
    there), then oldest first."""
    largest: dict[int, float] = {}
    for series in per_algorithm.values():
        for one in series:
            for step in one.steps:
                at = names.index(step.build)
                largest[at] = max(largest.get(at, 0.0), abs(math.log(step.ratio)))
    return sorted(largest, key=lambda at: (-largest[at], at))


def _introduction(by: str, names: Sequence[str], pairs: Sequence[tuple[int, int]],
                  stepped: int, title: str, method: str) -> Section:
    """Which comparisons the report shows, why, and how to get any other."""
    shown = ", ".join(f"{md.text(names[b])} → {md.text(names[a])}" for b, a in pairs)
    if stepped:
        found = (f"{stepped} found" if stepped <= STEP_COMPARISONS
                 else f"{stepped} found, the {STEP_COMPARISONS} with the largest steps shown")
        why = (f"for each build where the history steps ({found}), the group before it "
               "against it; then the oldest group against the newest")
    else:
        why = "the oldest group against the newest (the history found no step)"
    return Section("\n\n".join([
        md.heading(2, title),
        f"Runs grouped by {md.inline_code(by)}: {len(names)} groups, too many to compare "
        f"each with the next ({len(names) - 1} comparisons). Compared here, {why}: {shown}. "
        f"Any other two groups: {md.inline_code(f'pqbench compare --by {by} BEFORE AFTER')}.",
        f"Method: {md.text(method)}."]))


def sections(headers: Sequence[Run], by: str, rates: Callable[[Sequence[str]], RowRates],
             load: Callable[[Sequence[str]], list[Run]], threshold: float | None,
             cross_machine: bool, annotations: Mapping[str, Sequence[str]],
             model: NoiseModel | None = None) -> list[Section]:
    """The comparison and history sections over run headers (no rows needed): `rates`
    reads the per-round rates of the runs named, `load` the runs named whole; ``model``
    is the machine's noise model."""
    found: list[Section] = []
    for kind, prefix, title in KINDS:
        of_kind = [r for r in headers if r.kind == kind]
        groups = group_runs(of_kind, by) if of_kind else []
        if len(groups) < 2:
            continue
        names = [name for name, _ in groups]
        many = len(groups) > FEW_GROUPS
        per_algorithm = history_series(
            groups, rates([r.run_id for _, members in groups for r in members]), annotations,
            model) if len(groups) >= 3 else {}
        stepped: list[int] = []
        if many:
            stepped = step_builds(names, per_algorithm)
            pairs = [(at - 1, at) for at in sorted(stepped[:STEP_COMPARISONS])]
            ends = (0, len(names) - 1)
            pairs += [] if ends in pairs else [ends]
        else:
            pairs = list(itertools.pairwise(range(len(names))))
        results = []
        for b, a in pairs:
            try:
                results.append(_compare(groups[b], groups[a], load, threshold,
                                        cross_machine, model))
            except ComparisonError:  # two series that share no row (speed and a bisection)
                continue
        if not results:
            continue
        found.append(_introduction(by, names, pairs, len(stepped), title, results[0].method)
                     if many else each_against_the_next(title, by, results[0].method))
        found += [comparison(r, i + 1, prefix, changed_only=len(results) > 1)
                  for i, r in enumerate(results)]
        if per_algorithm:
            found.append(history_of(per_algorithm, names, by, prefix))
    return found


def _compare(before: tuple[str, Sequence[Run]], after: tuple[str, Sequence[Run]],
             load: Callable[[Sequence[str]], list[Run]], threshold: float | None,
             cross_machine: bool, model: NoiseModel | None = None) -> RunComparison:
    """Two groups loaded whole (only these two are held at a time) and compared."""
    return compare_sides(load([r.run_id for r in before[1]]),
                         load([r.run_id for r in after[1]]), threshold,
                         cross_machine=cross_machine, before_name=before[0],
                         after_name=after[0], noise=lambda _runs: model)
