"""`pqbench report`: which runs a report tells of, and what it needs to tell it.

The runs named; with none named, every run for `--by`, else what was done last (the newest
run, or both sides of the `pqbench ab` session it is a side of). A report is one machine's:
runs of several machines are refused, naming them, unless `--machine` picks one or
`--cross-machine` asks to mix them. Over more `--by` groups than each-against-the-next can
show, the report reads run headers first and only what each part needs (`Fleet`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pqbench.analysis import pairing
from pqbench.analysis.noise import NoiseModel
from pqbench.app.identity import machines_named, split_by_machine
from pqbench.app.noise import NoiseModels
from pqbench.data.record.results import Run
from pqbench.data.record.runs import run_order
from pqbench.data.store import RunFilter
from pqbench.platform.errors import ComparisonError, NothingStored
from pqbench.platform.untrusted import printable
from pqbench.sessions.bisect import stored

if TYPE_CHECKING:
    from pqbench.data.store import Store
    from pqbench.data.store.rates import RowRates

#: Up to this many groups of a kind, each is compared with the next (the whole story);
#: beyond it the report follows the history's steps (`views.report.fleet`).
FEW_GROUPS = 6


@dataclass(frozen=True)
class Fleet:
    """What a report over many groups reads: every run's header, the rates of runs named
    (as numbers), runs loaded whole on demand, and the runs of its other parts."""

    headers: list[Run]
    rates: Callable[[Sequence[str]], RowRates]
    whole: Callable[[Sequence[Run | str]], list[Run]]
    memory: list[Run] = field(default_factory=list)
    bisected: list[Run] = field(default_factory=list)


@dataclass(frozen=True)
class Build:
    """One build a `--by` report names (a group of one build, as history's points are),
    how many runs measured it, and its newest speed run, whole (None: no speed run)."""

    name: str
    runs: int
    newest: Run | None


@dataclass(frozen=True)
class Inputs:
    """A report's runs (whole: every run, or with `fleet` the newest of each kind), its
    `--by` field, the annotations, the machine's noise model, each build it names, and
    what to tell the user."""

    runs: list[Run]
    by: str | None
    annotations: dict[str, list[str]]
    model: NoiseModel | None
    fleet: Fleet | None = None
    notes: tuple[str, ...] = ()
    builds: tuple[Build, ...] = ()


def one_machine(runs: Sequence[Run], machine: str | None, cross_machine: bool
                ) -> tuple[list[Run], list[str]]:
    """The runs of the machine named, or all of them where they are one machine's (or
    `cross_machine` asks to mix them); a ComparisonError naming the machines otherwise."""
    machines = split_by_machine(runs)
    if machine is not None:
        kept = {m: found for m, found in machines.items() if m.matches(machine)}
        if not kept:
            raise ComparisonError(f"no run on a machine named {printable(machine)!r}; "
                                  f"machines: {machines_named(machines, machine)}")
        machines = kept
    chosen = sorted((r for found in machines.values() for r in found), key=run_order)
    if len(machines) > 1 and not cross_machine:
        raise ComparisonError(
            f"the runs come from {len(machines)} machines "
            f"({machines_named(machines)}): a report tells of one machine; name "
            "one with --machine NAME (its host name or key), or pass --cross-machine to mix "
            "them")
    notes = [f"mixing the runs of {len(machines)} machines, as --cross-machine asks: "
             f"{machines_named(machines)}"] if len(machines) > 1 else []
    return chosen, notes


def inputs(store: Store, run_ids: Sequence[str] = (), by: str | None = None, *,
           machine: str | None = None, cross_machine: bool = False) -> Inputs:
    """Everything `pqbench report` needs of the store (see the module docstring)."""
    annotations: dict[str, list[str]] = {}
    for build, text, _created in store.annotations():
        annotations.setdefault(build, []).append(text)
    if by and not run_ids:
        found = _fleet(store, by, machine, cross_machine, annotations)
        if found is not None:
            return found
    runs, notes = _runs(store, run_ids, by)
    runs, mixed = one_machine(runs, machine, cross_machine)
    return Inputs(runs, by, annotations, NoiseModels(store).for_runs(runs),
                  notes=(*notes, *mixed), builds=builds_of(runs, by, lambda found: found))


def _runs(store: Store, run_ids: Sequence[str], by: str | None) -> tuple[list[Run], list[str]]:
    """The runs named; with none named, all runs for --by, else what was done last."""
    if run_ids:
        return store.load_runs(RunFilter(ids=tuple(run_ids))), []
    found = store.load_runs(RunFilter(newest=None if by else 1))
    if not found:
        raise NothingStored(f"no runs stored yet in {store.location}; `pqbench speed` "
                            "measures and stores one")
    session = pairing.ab_session(found[0]) if not by else None
    other = session.get("other_run") if session else None
    if isinstance(other, str) and store.has_run(other):
        both = store.load_runs(RunFilter(ids=(found[0].run_id, other)))
        return both, [f"reporting the newest `pqbench ab` session: runs {both[0].run_id} "
                      f"and {both[1].run_id}"]
    return found, []


def many_groups(headers: Sequence[Run], by: str) -> bool:
    """Whether some kind of run has more groups than each-against-the-next can show."""
    from pqbench.data.record.runs import group_runs

    kinds = {r.kind for r in headers}
    return any(len(group_runs([r for r in headers if r.kind == kind], by)) > FEW_GROUPS
               for kind in kinds)


def _fleet(store: Store, by: str, machine: str | None, cross_machine: bool,
           annotations: dict[str, list[str]]) -> Inputs | None:
    """Over many groups: headers first, then the newest run of each kind whole; None with
    few groups (the whole story, as for a handful of runs) or nothing stored (`_runs` says
    so, with how to make a run)."""
    from pqbench.data.store.selection import select

    try:
        selection = select(store, by, fingerprints=True)
    except ComparisonError:
        return None
    headers, mixed = one_machine(selection.headers, machine, cross_machine)
    if not many_groups(headers, by):
        return None
    newest = {run.kind: run.run_id for run in headers}
    shown = selection.whole([newest[kind] for kind in ("speed", "files", "tls", "memory")
                             if kind in newest])
    kept = {r.run_id for r in headers}
    memory = [r for r in store.load_runs(RunFilter(kinds=("memory",))) if r.run_id in kept] \
        if "memory" in newest else []
    bisected = selection.whole([r.run_id for r in headers if stored.info(r) is not None])
    return Inputs(shown, by, annotations, NoiseModels(store).for_runs(headers),
                  Fleet(headers, store.row_rates, selection.whole, memory, bisected),
                  notes=tuple(mixed), builds=builds_of(headers, by, selection.whole))


def builds_of(runs: Sequence[Run], by: str | None,
              whole: Callable[[Sequence[Run]], Sequence[Run]]) -> tuple[Build, ...]:
    """Each build a `--by` report names, oldest first, with its newest speed run loaded
    whole (`whole` loads headers; runs in hand are passed through): so that the report
    shows every build it names, not only the newest."""
    from pqbench.app.identity import by_build
    from pqbench.data.record.runs import group_runs

    if by is None:
        return ()
    groups = by_build(group_runs(runs, by))
    newest = {name: max((r for r in members if r.kind == "speed"), key=run_order,
                        default=None) for name, members in groups}
    loaded = {r.run_id: r for r in whole([r for r in newest.values() if r is not None])}
    return tuple(Build(name, len(members), loaded.get(found.run_id) if found else None)
                 for (name, members), found in zip(groups, newest.values(), strict=True))
