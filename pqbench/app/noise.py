"""What the noise model of one machine learns from: the machine's own runs, grouped into
replicates of one build, with the runs that say nothing of the machine's spread left out.

The statistics are `analysis.noise`'s; the decisions are here, once, for every command:

* **one machine**: a model learns from the runs of the machine whose runs it judges
  (`identity.machine_of`); runs of several machines get no model (each machine has its own
  spread; `compare` refuses or pairs them by machine first);
* **replicates**: runs of one build (`identity.split_by_build`) under one label where the
  label holds several runs (a label a user gave to several runs names what they took for one
  configuration, and a difference the fingerprint does not see must not count as noise),
  and the build's runs whose labels hold one run each together (single runs labelled as
  builds of their own, an A/A series: one build by every fact recorded);
* **left out**: the sides of `ab` sessions (their evidence is their worker pairs) and, where
  the caller says so (`LeaveOut`), runs taken under load; the model counts them by reason.

The store is read in three statements whatever the machine's history: the machine's run
headers, one estimate per (run, row) (`Store.row_estimates`, kept when each run was
written), and the sides of its sessions. A caller that read the headers and the rows'
rates already (a history) gives them, and the estimates come from those rates.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from pqbench.analysis import pairing
from pqbench.analysis.noise import (
    EstimatesOf,
    NoiseModel,
    Replicates,
    calibration_of,
    kind_of,
    learn,
)
from pqbench.app.identity import (
    Machine,
    has_own_libraries,
    machine_of,
    split_by_build,
    split_by_machine,
)
from pqbench.data.record.estimates import run_estimate
from pqbench.data.record.results import RowKey, Run
from pqbench.data.record.runs import run_order
from pqbench.data.store.queries import RunFilter

if TYPE_CHECKING:
    from pqbench.data.store import Store
    from pqbench.data.store.rates import RowRates
    from pqbench.data.store.selection import NoiseInputs

#: Why a run is left out of the model (taken under load ...), or None to keep it.
LeaveOut = Callable[[Run], str | None]


def replicate_groups(runs: Iterable[Run], implementation: str | None = None
                     ) -> list[list[Run]]:
    """The groups of runs each centred on its own level (see the module docstring); with
    an `implementation`, of its rows (a foreign stack's own libraries split its builds)."""
    found: list[list[Run]] = []
    for members in split_by_build(runs, implementation).values():
        by_label: dict[str | None, list[Run]] = {}
        for run in members:
            by_label.setdefault(run.label, []).append(run)
        singles = [group[0] for group in by_label.values() if len(group) == 1]
        found += [group for group in by_label.values() if len(group) > 1]
        if len(singles) > 1:
            found.append(singles)
    return found


def kept(runs: Iterable[Run], leave_out: LeaveOut | None = None
         ) -> tuple[list[Run], dict[str, int]]:
    """The runs the model learns run-to-run spread from, and the others counted by why:
    sessions' sides are evidence through their worker pairs, not as runs."""
    found: list[Run] = []
    left: dict[str, int] = {}
    for run in runs:
        if pairing.ab_session(run) is not None:
            continue
        why = leave_out(run) if leave_out is not None else None
        if why is not None:
            left[why] = left.get(why, 0) + 1
            continue
        found.append(run)
    return found, left


def model_from_runs(runs: Sequence[Run], keys: Iterable[RowKey], *,
                    leave_out: LeaveOut | None = None) -> NoiseModel:
    """The model learnt from whole runs in hand (a history or report over runs already
    loaded), their sessions included; the runs should be one machine's."""
    plain, left = kept(runs, leave_out)
    table: dict[RowKey, dict[str, list[float]]] = {}
    for run in plain:
        for m in run.measurements:
            value = run_estimate(m.samples)
            if value is not None:
                table.setdefault(m.key, {}).setdefault(run.run_id, []).append(value)
    sides = [r for r in runs if pairing.ab_session(r) is not None]
    return _learn(plain, keys, _reader(table), sides, left)


def _learn(plain: Sequence[Run], keys: Iterable[RowKey], estimates: EstimatesOf,
           sides: Sequence[Run], left: Mapping[str, int], machine: str | None = None
           ) -> NoiseModel:
    """The model of the rows of `keys`: each foreign stack's rows over the replicate groups
    of its own builds, every other row over the groups of the machine's builds."""
    keys = list(keys)
    # Asked once an implementation, not once a row: each asking reads every run's libraries.
    owners = {implementation for implementation in {key.implementation for key in keys}
              if has_own_libraries(plain, implementation)}
    model = learn(_replicates(plain), [k for k in keys if k.implementation not in owners],
                  estimates, sessions=pairing.all_sessions(sides), left_out=left,
                  machine=machine)
    for implementation in sorted(owners):
        own = learn(_replicates(plain, implementation),
                    [k for k in keys if k.implementation == implementation], estimates)
        model.rows.update(own.rows)
    return model


def _replicates(runs: Iterable[Run], implementation: str | None = None) -> list[Replicates]:
    return [Replicates(tuple(r.run_id for r in group),
                       sum(1 for r in group if calibration_of(r) is not None))
            for group in replicate_groups(runs, implementation)]


def learn_machine(store: Store, machine: Machine, leave_out: LeaveOut | None = None,
                  rows: RunFilter | None = None, headers: Iterable[Run] | None = None,
                  rates: RowRates | None = None) -> NoiseModel:
    """The model of one machine, learnt from every run of it in the store; with `rows`
    (`kin_rows`), of those rows only. `headers`: every stored run's header with its
    fingerprint, where the caller has read them already (a history's). `rates`: the rates
    of those rows (`rows`), where the caller has read them for every run learnt from; the
    estimates are then worked out from them (`RowRates.estimates`, the numbers the store
    keeps) instead of read again."""
    if headers is None:
        headers = store.load_runs(RunFilter(by="hostname", values=(machine.host,))
                                  if machine.host is not None else RunFilter(),
                                  rows_too=False, fingerprints=True)
    mine = sorted((h for h in headers if machine_of(h) == machine), key=run_order)
    plain, left = kept(mine, leave_out)
    side_ids = tuple(h.run_id for h in mine if pairing.ab_session(h) is not None)
    # One number per (run, row), kept by the store when it wrote each run.
    ids = [r.run_id for r in plain]
    estimates = (rates.estimates(ids) if rates is not None and rates.covers(ids)
                 else store.row_estimates(ids, rows))
    sides = store.load_runs(RunFilter(ids=side_ids)) if side_ids else []
    return _learn(plain, estimates.keys(), estimates.of_runs, sides, left, machine.name)


def kin_rows(store: Store, algorithms: Collection[str]) -> RunFilter | None:
    """The rows whose evidence the spread of a row of `algorithms` rests on: those of the
    algorithms of the same kind (`NoiseModel.spread` reads a row's own runs, then its
    family's, then its kind's, never another kind's); None (every row) where the store
    holds none of them."""
    kinds = {kind_of(name) for name in algorithms}
    kin = tuple(name for name in store.algorithms() if kind_of(name) in kinds)
    return RunFilter(algorithms=kin) if kin else None


def _reader(table: dict[RowKey, dict[str, list[float]]]
            ) -> Callable[[RowKey, Sequence[str]], list[float]]:
    def estimates(key: RowKey, ids: Sequence[str]) -> list[float]:
        per_run = table.get(key, {})
        return [v for run_id in ids for v in per_run.get(run_id, ())]

    return estimates


def from_inputs(inputs: NoiseInputs, leave_out: LeaveOut | None = None) -> NoiseModel:
    """The model of the runs `store.selection.noise_inputs` read (headers, their stored
    estimates, their sessions' sides), grouped and left out as above."""
    plain, left = kept(inputs.headers, leave_out)
    return _learn(plain, inputs.estimates.keys(), inputs.estimates.of_runs, inputs.sessions,
                  left, inputs.testbed)


class NoiseModels:
    """The model of each machine a command meets, learnt once from the store on first use;
    None for runs of several machines."""

    def __init__(self, store: Store, leave_out: LeaveOut | None = None,
                 asked: RunFilter | None = None,
                 headers: Iterable[Run] | None = None,
                 rates: RowRates | None = None) -> None:
        """`asked`: the models are asked about these rows alone (a history's: its
        algorithms, implementation and operation). Each machine's model then learns those
        rows first, and where every one of them stands alone (`NoiseModel.stands_alone`:
        enough replicated runs of its own) that is the model; else it learns the rows of
        their kinds (`kin_rows`), which is what a row borrows from. The same spreads
        either way, for a fraction of the reading. `headers`: every stored run's header
        with its fingerprint, where the caller has read them (each machine's are then not
        read again); `rates`: the rates of the asked rows of those runs, where the caller
        has read them (a history's), which the asked rows' estimates are worked out from
        (`learn_machine`)."""
        self.store = store
        self.leave_out = leave_out
        self.asked = asked
        self._by_machine = None if headers is None else split_by_machine(headers)
        self.rates = rates if asked is not None else None
        self._kin: RunFilter | None = None
        self._found: dict[Machine, NoiseModel] = {}

    def for_runs(self, runs: Iterable[Run]) -> NoiseModel | None:
        machines = {machine_of(r) for r in runs}
        if len(machines) != 1:
            return None
        machine = machines.pop()
        if machine not in self._found:
            self._found[machine] = self._learn(machine)
        return self._found[machine]

    def _learn(self, machine: Machine) -> NoiseModel:
        headers = None if self._by_machine is None else self._by_machine.get(machine, [])
        if self.asked is None:
            return learn_machine(self.store, machine, self.leave_out, None, headers)
        alone = learn_machine(self.store, machine, self.leave_out, self.asked, headers,
                              self.rates)
        if alone.rows and all(alone.stands_alone(key) for key in alone.rows):
            return alone
        if self._kin is None:
            self._kin = kin_rows(self.store, self.asked.algorithms)
        return learn_machine(self.store, machine, self.leave_out, self._kin, headers)
