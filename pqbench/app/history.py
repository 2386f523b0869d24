"""`pqbench history`: one algorithm's rate over builds, per machine, with its steps.

The decisions are here, once, for `history`, `report` and `publish`:

* **one machine a series**: every series is one machine's (`identity.machine_of`); a store
  of many machines gives each its own series, never a point or a step pooled across two;
* **one build a point**: runs are grouped by the `--by` field (default `os_build`) and a
  group whose runs measured different builds is split into one point per build, named by
  what sets it apart ("debian-12/6.18 (cryptography 42.0.8)"; `identity.by_build`); a foreign
  stack's own libraries split the points of that stack's rows only. `--pool` keeps each
  group whole;
* **the noise model** is the machine's own (`noise.NoiseModels`).

The series themselves (levels, intervals, steps judged as `compare` judges) are
`analysis.history`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pqbench.analysis import pairing
from pqbench.analysis.history import (
    Series,
    names_algorithm,
    not_measured,
    run_samples_by_id,
    series_from_rates,
    session_judge,
)
from pqbench.analysis.noise import NoiseModel
from pqbench.app.identity import (
    Machine,
    by_build,
    has_own_libraries,
    machines_named,
    split_by_machine,
)
from pqbench.app.noise import model_from_runs
from pqbench.data.record.results import RowKey, Run
from pqbench.data.record.runs import group_runs
from pqbench.platform.errors import ComparisonError
from pqbench.platform.untrusted import printable

if TYPE_CHECKING:
    from pqbench.data.store import Store

Groups = Sequence[tuple[str, Sequence[Run]]]


@dataclass(frozen=True)
class MachineHistory:
    """One row's history on one machine."""

    machine: Machine
    series: Series

    def as_dict(self) -> dict[str, Any]:
        return {"machine": {"name": self.machine.name, "key": self.machine.key,
                            "host": self.machine.host, "cpu_model": self.machine.cpu_model,
                            "cores": self.machine.cores,
                            "hypervisor": self.machine.hypervisor},
                **self.series.as_dict()}


@dataclass(frozen=True)
class FleetStep:
    """One row's steps at one build across a fleet: the machines whose own series stepped
    there, one way, and how many machines measured that build of the row at all. Each
    step was judged on its machine alone (`MachineHistory`); this only gathers them, so a
    build that moved most of a fleet reads as one line. ``low`` and ``high`` are the
    smallest and largest of those machines' step ratios (after / before): the machines'
    own estimates, not an interval."""

    algorithm: str
    implementation: str
    operation: str
    block_size: int | None
    build: str
    verdict: str
    machines: tuple[str, ...]
    measured: int
    low: float
    high: float
    #: The machines by their host names, as a table names them (their names where unknown).
    hosts: tuple[str, ...] = ()

    @property
    def key(self) -> RowKey:
        return RowKey(self.algorithm, self.implementation, self.operation, self.block_size)

    def as_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "implementation": self.implementation,
                "operation": self.operation, "block_size": self.block_size,
                "build": self.build, "verdict": self.verdict,
                "machines": list(self.machines), "measured": self.measured,
                "ratio_low": self.low, "ratio_high": self.high}


def fleet_steps(found: Sequence[MachineHistory]) -> list[FleetStep]:
    """Each row's steps gathered by build and direction over the machines of `found`;
    empty where they hold fewer than two machines (one machine's steps are its series').
    In the order each build's first point was measured, then the row's."""
    if len({one.machine for one in found}) < 2:
        return []
    measured: dict[tuple[RowKey, str], set[Machine]] = {}
    stepped: dict[tuple[RowKey, str, str], list[tuple[Machine, float]]] = {}
    first: dict[str, str] = {}
    for one in found:
        s = one.series
        row = RowKey(s.algorithm, s.implementation, s.operation, s.block_size)
        for point in s.points:
            measured.setdefault((row, point.build), set()).add(one.machine)
            if point.started_at and (point.build not in first
                                     or point.started_at < first[point.build]):
                first[point.build] = point.started_at
        for step in s.steps:
            stepped.setdefault((row, step.build, step.verdict), []).append(
                (one.machine, step.ratio))
    gathered = [FleetStep(*row, build=build, verdict=way,
                          machines=tuple(m.name for m, _ in members),
                          measured=len(measured.get((row, build), ())),
                          low=min(r for _, r in members), high=max(r for _, r in members),
                          hosts=tuple(m.host or m.name for m, _ in members))
                for (row, build, way), members in stepped.items()]
    return sorted(gathered, key=lambda f: (first.get(f.build, ""), f.build, f.algorithm,
                                           f.implementation, f.operation,
                                           f.block_size or 0, f.verdict))


def points(groups: Groups, keys: Iterable[RowKey], *, pool: bool = False
           ) -> dict[str | None, list[tuple[str, list[Run]]]]:
    """The points of the rows of `keys` over `groups` of one machine's runs: per
    implementation that has a foreign stack's libraries, its own split; every other row
    shares the split of None."""
    implementations = {key.implementation for key in keys}
    if pool:
        whole = [(name, list(members)) for name, members in groups]
        return {None: whole, **{impl: whole for impl in implementations}}
    found: dict[str | None, list[tuple[str, list[Run]]]] = {None: by_build(groups)}
    for implementation in implementations:
        if has_own_libraries((r for _, members in groups for r in members), implementation):
            found[implementation] = by_build(groups, implementation)
    return found


def machine_series(groups: Groups, keys: Sequence[RowKey], rates: Any,
                   notes: Mapping[str, Sequence[str]], *, model: NoiseModel | None,
                   sessions: Sequence[Run] = (), pool: bool = False) -> list[Series]:
    """The series of `keys` over one machine's `groups`, each row over its own points;
    `rates(key, ids)` gives (run id, rates) of the runs named that measured a row."""
    split = points(groups, keys, pool=pool)
    judge = session_judge(sessions)
    found: list[Series] = []
    for key in keys:
        own = split.get(key.implementation, split[None])
        found += series_from_rates([key], own, rates, notes, model=model, sessions=judge)
    # Series in the order their rows first appear over the builds, as runs list them.
    order = [name for name, _ in split[None]]
    return sorted(found, key=lambda one: order.index(one.points[0].build)
                  if one.points[0].build in order else len(order))


def histories(store: Store, algorithm: str, *, implementation: str | None = None,
              operation: str | None = None, by: str = "os_build", pool: bool = False,
              series_order: bool = False, machine: str | None = None
              ) -> list[MachineHistory]:
    """`pqbench history`: the series of the algorithm's rows on each machine (or the one
    `machine` names), oldest build first. Every run's header is read once (a point lists
    its runs), then this algorithm's rates alone, as numbers, through the row key's index."""
    from pqbench.app.noise import NoiseModels
    from pqbench.data.store import RunFilter
    from pqbench.data.store.selection import select

    names = tuple(n for n in store.algorithms() if names_algorithm(n, algorithm))
    selection = select(store, by, fingerprints=True, notes=False)
    machines = split_by_machine(r for _, members in selection.groups for r in members)
    if machine is not None:
        machines = {m: runs for m, runs in machines.items() if m.matches(machine)}
        if not machines:
            every = split_by_machine(selection.headers)
            raise ComparisonError(f"no stored run of {algorithm} on a machine named "
                                  f"{printable(machine)!r}; machines: "
                                  f"{machines_named(every, machine)}")
    asked = RunFilter(algorithms=names or (algorithm,), implementation=implementation,
                      operation=operation)
    # Every run's, not only the grouped ones': the row key's index reads them all anyway,
    # and the noise model learns from every run of a machine (`NoiseModels`' rates).
    rates = store.row_rates([r.run_id for r in selection.headers], asked)
    notes: dict[str, list[str]] = {}
    for build, text, _created in store.annotations():
        notes.setdefault(build, []).append(text)
    models = NoiseModels(store, asked=asked, headers=selection.headers, rates=rates)
    found: list[MachineHistory] = []
    for one, runs in machines.items():
        groups = group_runs(runs, by)
        if series_order:
            from pqbench.sessions.bisect.stored import in_series_order

            groups = in_series_order(groups)
        sides = selection.whole(r for r in runs if pairing.ab_session(r) is not None)
        found += [MachineHistory(one, series) for series in machine_series(
            groups, rates.row_keys(), rates.by_run, notes, model=models.for_runs(runs),
            sessions=sides, pool=pool)]
    if not found:
        raise not_measured(algorithm, implementation, operation,
                           store.algorithms(timed_only=True))
    return found


def history_of_runs(runs: Iterable[Run], algorithm: str, *, implementation: str | None = None,
                    operation: str | None = None, by: str = "os_build",
                    annotations: Mapping[str, Sequence[str]] | None = None,
                    model: NoiseModel | None = None) -> list[MachineHistory]:
    """The history of whole runs in hand (a report's), one machine at a time: series per
    matching row key, points in build order, steps judged. ``model`` is the noise model
    of the runs' one machine; None learns each machine's from its runs. Raises
    ComparisonError when no run measured the algorithm (with the ones that were)."""
    runs = list(runs)
    found: list[MachineHistory] = []
    seen: set[str] = set()
    for machine, members in split_by_machine(runs).items():
        groups = group_runs(members, by)
        samples = run_samples_by_id(members)
        seen.update(key.algorithm for key in samples)
        keys = [key for key in samples if names_algorithm(key.algorithm, algorithm)
                and (not implementation or key.implementation == implementation)
                and (not operation or key.operation == operation)]
        if not keys:
            continue
        own = model if model is not None else model_from_runs(members, keys)

        def rates(key: RowKey, ids: Sequence[str], samples: Mapping[RowKey, Any] = samples
                  ) -> list[tuple[str, Sequence[float]]]:
            wanted = set(ids)
            return [(i, one) for i, one in samples.get(key, []) if i in wanted]

        sides = [r for r in members if pairing.ab_session(r) is not None]
        found += [MachineHistory(machine, series) for series in machine_series(
            groups, keys, rates, annotations or {}, model=own, sessions=sides)]
    if not found:
        raise not_measured(algorithm, implementation, operation, seen)
    return found
