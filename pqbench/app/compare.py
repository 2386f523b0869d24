"""`pqbench compare`: which runs a comparison uses, and the comparisons themselves.

The decisions are here, once, for `compare`, `report` and `publish`:

* **what is compared**: two runs named, the newest run against the newest earlier run that
  shares a row with it, or `--by` groups (the newest two, every group against the next, or
  two named);
* **one build a side**: a side's runs of another build are left out, and a warning says
  which (`identity.one_build_side`);
* **one machine**: runs of several machines are never pooled. Where every machine measured
  both sides, each machine is its own control and the build is judged by the machines'
  pairs (`fleet.compare_fleet`); where one machine did, that machine's runs are compared
  and the others named; otherwise the comparison is refused unless `--cross-machine` asks
  to pool them anyway, with a warning.

The statistics of one comparison are `analysis.compare`'s.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pqbench.analysis import pairing, ratios
from pqbench.analysis.compare import NoCommonRows, RunComparison, compare_runs
from pqbench.analysis.noise import NoiseModel
from pqbench.app import fleet, gate
from pqbench.app.identity import Machine, machines_named, one_build_side, split_by_machine
from pqbench.data.record.results import Run
from pqbench.data.record.runs import run_order
from pqbench.platform.errors import ComparisonError, UsageError
from pqbench.platform.untrusted import first_few, printable

if TYPE_CHECKING:
    from pqbench.data.store import Store

#: The noise model of the runs compared (`noise.NoiseModels.for_runs`).
NoiseOf = Callable[[Sequence[Run]], NoiseModel | None]


@dataclass(frozen=True)
class Compared:
    """One comparison, the runs each side held (what a caller follows further, such as
    each run's paired cost ratios), and those ratios followed across the sides."""

    comparison: RunComparison
    before: Sequence[Run]
    after: Sequence[Run]
    followed: tuple[ratios.Across, ...] = ()


@dataclass(frozen=True)
class Comparisons:
    """What `compare` answers: the comparisons, the notes that say which runs they are, and
    with a gate every reason it fails (`gate.judge`)."""

    steps: tuple[Compared, ...]
    notes: tuple[str, ...] = field(default=())
    failures: tuple[gate.Failure, ...] = ()


def machines_of(before: Sequence[Run], after: Sequence[Run]
                ) -> tuple[dict[Machine, list[Run]], dict[Machine, list[Run]]]:
    return split_by_machine(before), split_by_machine(after)


def compare_sides(before: Sequence[Run], after: Sequence[Run], threshold: float | None = None,
                  *, cross_machine: bool = False, before_name: str | None = None,
                  after_name: str | None = None, noise: NoiseOf | None = None
                  ) -> RunComparison:
    """The comparison of two sides, each one build, never two machines pooled unasked (see
    the module docstring)."""
    if not before or not after:
        raise ComparisonError("need at least one run on each side to compare")
    warnings: list[str] = []
    on_before, on_after = machines_of(before, after)
    machines = list(dict.fromkeys([*on_before, *on_after]))
    if len(machines) > 1:
        both = [m for m in machines if m in on_before and m in on_after]
        if len(both) >= fleet.FEWEST_MACHINES and not cross_machine:
            return fleet.compare_fleet(
                {m: on_before[m] for m in both}, {m: on_after[m] for m in both}, threshold,
                before_name=before_name, after_name=after_name,
                left_out=[m for m in machines if m not in both])
        if cross_machine:
            warnings.append(f"the runs come from {len(machines)} machines "
                            f"({machines_named(machines)}), pooled as --cross-machine asks: "
                            "differences may be the machines, not the builds")
        elif len(both) == 1:
            (machine,) = both
            others = [m for m in machines if m != machine]
            warnings.append(f"only {machine.name} measured both sides: compared there; left "
                            f"out {machines_named(others)}")
            before, after = on_before[machine], on_after[machine]
        else:
            raise ComparisonError(
                f"the runs come from {len(machines)} machines ({machines_named(machines)}) "
                f"and {_too_few_pairs(len(both))}: a machine's runs are judged only against "
                "its own (name runs of one machine, let each machine measure both sides, or "
                "pass --cross-machine to pool them anyway)")
    if pairing.session_pairs(before, after) is None:
        before_name = before_name or _name(before)
        after_name = after_name or _name(after)
        sides, rest_before, rest_after = pairing.sessions_between(before, after)
        before = [*(b for b, _ in sides), *one_build_side(rest_before, before_name, warnings)]
        after = [*(a for _, a in sides), *one_build_side(rest_after, after_name, warnings)]
    model = noise([*before, *after]) if noise is not None else None
    return compare_runs(before, after, threshold, before_name=before_name,
                        after_name=after_name, noise=model, warnings=warnings)


def _too_few_pairs(both: int) -> str:
    if both == 0:
        return "no machine measured both sides"
    return (f"only {both} measured both sides (a build is judged across machines by at "
            f"least {fleet.FEWEST_MACHINES} machines' pairs)")


def _name(runs: Sequence[Run]) -> str:
    """The runs' shared label (an `ab` side's, say), else the run id or the count."""
    labels = {run.label for run in runs}
    if len(labels) == 1 and None not in labels:
        return str(labels.pop())
    return runs[0].run_id if len(runs) == 1 else f"{len(runs)} runs"


def compare_groups(groups: Sequence[tuple[str, Sequence[Run]]], threshold: float | None = None,
                   *, cross_machine: bool = False, noise: NoiseOf | None = None
                   ) -> list[RunComparison]:
    """Each group against the next (in the given order): one comparison per step."""
    if len(groups) < 2:
        names = ", ".join(name for name, _ in groups) or "none"
        raise ComparisonError(f"need at least two groups to compare; found {names}")
    return [compare_sides(list(b), list(a), threshold, cross_machine=cross_machine,
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


def followed(comparison: RunComparison, before: Sequence[Run], after: Sequence[Run],
             threshold: float | None) -> Compared:
    """A comparison with each run's paired cost ratios followed across its sides (one
    machine's runs only: a ratio of one machine is never set against another's)."""
    if len(split_by_machine([*before, *after])) > 1:
        return Compared(comparison, before, after)
    return Compared(comparison, before, after,
                    tuple(ratios.across(before, after, threshold)))


def compare_steps(groups: Sequence[tuple[str, Sequence[Run]]],
                  whole: Callable[[Sequence[Run]], Sequence[Run]],
                  threshold: float | None = None, *, cross_machine: bool = False,
                  every: bool = False, noise: NoiseOf | None = None) -> list[Compared]:
    """The newest group against the one before it (by each group's newest run), or with
    `every` each group against the next, in the given order. The groups may hold run
    headers only: `whole` loads a group's runs whole, two groups at a time, so memory grows
    with the largest groups, not with every run stored."""
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
        comparison = compare_sides(before, after, threshold, cross_machine=cross_machine,
                                   before_name=before_name, after_name=after_name,
                                   noise=noise)
        steps.append(followed(comparison, before, after, threshold))
        before, before_name = after, after_name
    return steps


# --- the use case -----------------------------------------------------------------------


def compare(db: str | None, names: Sequence[str] = (), *, by: str | None = None,
            every: bool = False, missing: bool = False, threshold: float | None = None,
            cross_machine: bool = False, fail_on: gate.Gate | None = None) -> Comparisons:
    """`pqbench compare` on the store at `db` (None: the default one): two runs named, the
    newest run against the one before it, or `--by` groups (see `by_groups`); with a gate,
    every reason it fails, judged on every row whatever is shown."""
    from pqbench.app.noise import NoiseModels
    from pqbench.data.store import Store

    if by is None and (every or missing):
        raise UsageError("--all and --include-missing group runs: give --by FIELD too")
    store = Store.open(db, create=False)
    models = NoiseModels(store)
    try:
        if by is not None:
            found = by_groups(store, by, names, threshold, cross_machine, every=every,
                              missing=missing, noise=models.for_runs)
        else:
            before, after, notes = two_runs(store, names)
            comparison = compare_sides([before], [after], threshold,
                                       cross_machine=cross_machine, noise=models.for_runs)
            found = Comparisons((followed(comparison, [before], [after], threshold),),
                                tuple(notes))
    except NoCommonRows as exc:
        if fail_on is None:
            raise
        # Nothing to judge is what a gate that fails closed fails on: every row gone.
        return Comparisons((), (str(exc),), tuple(gate.nothing_in_common(exc.before,
                                                                         exc.after)))
    if fail_on is None:
        return found
    failures = [f for step in found.steps
                for f in gate.judge(fail_on, step.comparison, step.after)]
    return replace(found, failures=tuple(failures))


def two_runs(store: Store, ids: Sequence[str]) -> tuple[Run, Run, list[str]]:
    """The two runs named, or with none named the newest run and the newest earlier run
    of its kind that shares a row with it (the sides of an `ab` session, when the newest
    is its B side), and the notes that say which were chosen."""
    from pqbench.data.store import RunFilter
    from pqbench.data.store.selection import select

    if ids and len(ids) != 2:
        raise UsageError("give two runs (before, after), none to compare the newest run with "
                         "the one before it, or --by FIELD")
    if not ids:
        # Headers only, then whole runs one at a time, newest first, until rows are shared.
        selection = select(store)
        before, after, newest = selection.newest_with_shared_rows()
        notes = []
        if not newest:
            latest = selection.headers[-1]
            notes.append(f"the newest run {latest.run_id} shares no row with an earlier "
                         "run; comparing the newest two runs that do")
        which = "the newest run" if newest else "run"
        notes.append(f"comparing {which} {after.run_id} ({_what(after)}) with "
                     f"{before.run_id} ({_what(before)}), the newest earlier run sharing "
                     "rows with it (name two runs, or --by FIELD, to compare others)")
        return before, after, notes
    found = store.load_runs(RunFilter(ids=tuple(ids)))
    if len(found) != 2 or found[0].run_id == found[1].run_id:  # one run named twice
        raise UsageError(f"{printable(ids[0])!r} and {printable(ids[1])!r} are the same run "
                         f"{found[0].run_id}: give two different runs")
    before, after = found
    return before, after, []


def _what(run: Run) -> str:
    """A run's label, else the algorithms it measured: enough to tell two runs apart."""
    if run.label:
        return str(run.label)
    names = list(dict.fromkeys(m.algorithm for m in run.measurements))
    return first_few(names, 3)


def by_groups(store: Store, by: str, values: Sequence[str], threshold: float | None,
              cross_machine: bool, *, every: bool, missing: bool, noise: NoiseOf | None
              ) -> Comparisons:
    """The two groups named, or the newest group against the one before it (every group
    against the next with `every`), each group of one build (a masked run beside unmasked
    ones is a group of its own, "debian-12/6.18 (AES-NI hidden)", as in history); only the
    runs compared are loaded whole."""
    from pqbench.app.identity import by_build
    from pqbench.data.store.selection import select

    if values and len(values) != 2:
        raise UsageError("with --by, give no values or exactly two (before, after)")
    if values and values[0] == values[1]:
        # A group against itself can never differ: a gate so named (two CI variables that
        # resolved to one label) would pass whatever the candidate measured.
        raise UsageError(f"{printable(values[0])!r} is named twice: give two different "
                         f"values of {by} (before, after)")
    # A run's build needs its fingerprint: every header's, unless two groups are named
    # (then only theirs, which are loaded whole anyway).
    selection = select(store, by, missing=missing or bool(values), fingerprints=not values,
                       notes=not values)
    if values:
        # A group named as stored is taken whole (runs of other builds in it are then left
        # out with a warning); a build's own name ("... (AES-NI hidden)") as history shows it.
        # Only the groups a name can come from are split: "NAME" or "NAME (...)".
        loaded = {name: selection.whole(runs) for name, runs in selection.groups
                  if any(v == name or v.startswith(f"{name} (") for v in values)}
        split = dict(by_build(list(loaded.items())))
        before, after = (loaded[v] if v in loaded else selection.group(v) if v not in split
                         else selection.whole(split[v]) for v in values)
        (comparison,) = compare_groups([(values[0], before), (values[1], after)], threshold,
                                       cross_machine=cross_machine, noise=noise)
        return Comparisons((followed(comparison, before, after, threshold),))
    notes = []
    if selection.left_out:
        notes.append(f"{len(selection.left_out)} run(s) without a value for {by} left out "
                     "(--include-missing compares them as a group '(none)')")
    steps = compare_steps(by_build(selection.groups), selection.whole, threshold,
                          cross_machine=cross_machine, every=every, noise=noise)
    return Comparisons(tuple(steps), tuple(notes))
