"""What `pqbench publish` shows, decided once: every machine's history, its steps and their
causes, the rows whose latest step is a regression or an improvement, each machine's
post-quantum against classical ratios and its newest two builds compared.

The site (`views.site`) lays this out and decides nothing again: no verdict, step,
grouping or identity is computed there. Everything here is computed per machine, since two
machines never share a history point, a step or a noise model: a machine's runs are read in
one pass (its headers, its rows' rates as numbers, its sessions' sides whole, the two
newest builds' runs whole for the comparison, its newest `speed` run whole for the ratios)
and its part (`MachinePart`) is a plain value that turns into JSON and back. Publishing
again keeps each machine's part whose runs and annotations are those it was made from
(`digest`), so one more run recomputes one machine.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pqbench import __version__
from pqbench.analysis import explain, pairing, ratios, verdict
from pqbench.analysis.history import (
    HistoryStep,
    Point,
    Series,
)
from pqbench.app.compare import compare_sides
from pqbench.app.history import FleetStep, MachineHistory, fleet_steps, machine_series
from pqbench.app.identity import Machine, by_build, machine_of
from pqbench.app.noise import from_inputs
from pqbench.data.record.fingerprint import taken_under_load
from pqbench.data.record.results import RowKey, Run
from pqbench.data.record.runs import group_runs, run_order
from pqbench.data.store.queries import RunFilter
from pqbench.platform.errors import ComparisonError, NothingStored

#: Changes to what a part holds or how it is decided: a part made by another version of
#: this module is made again.
PART_FORMAT = 3
#: What a point is: one OS build of one machine (split further by `by_build`).
BY = "os_build"
#: The ratio kinds the index shows: what the post-quantum schemes cost against the
#: classical ones they replace.
PQ_KINDS = ("exchange", "signature")


@dataclass(frozen=True)
class BuildLine:
    """One build of a machine: its name as the history names its point, its runs, and
    when the first and the last of them started."""

    name: str
    runs: int
    first: str
    last: str


@dataclass(frozen=True)
class LatestRun:
    """A machine's newest run, and whether it was taken under load (other processes took
    `LOAD_THRESHOLD` of the machine, or a hypervisor stole `STEAL_THRESHOLD`)."""

    run_id: str
    kind: str
    started_at: str
    build: str
    under_load: bool
    others_cpu: float | None
    steal: float | None


@dataclass(frozen=True)
class Cause:
    """A fingerprint difference named as a cause of a step or a compared row."""

    field: str
    before: str
    after: str
    why: str


@dataclass(frozen=True)
class StepCauses:
    """The causes named for one step of one row (`series` index, step index)."""

    series: int
    step: int
    causes: tuple[Cause, ...]


@dataclass(frozen=True)
class RatioLine:
    """A post-quantum scheme's cost against a classical one's, paired within one run."""

    name: str
    kind: str
    estimate: float
    ci_low: float | None
    ci_high: float | None
    ci_level: float
    pairs: int
    run_id: str


@dataclass(frozen=True)
class ComparedRow:
    """One row of the comparison of two builds, as `compare` judges it."""

    key: RowKey
    verdict: str
    ratio: float
    ci_low: float | None
    ci_high: float | None
    reason: str
    causes: tuple[Cause, ...] = ()


@dataclass(frozen=True)
class Comparison:
    """A machine's newest build against the build before it, as `compare` judges them."""

    before: str
    after: str
    before_runs: tuple[str, ...]
    after_runs: tuple[str, ...]
    rows: tuple[ComparedRow, ...]
    #: (field, before, after, note: why it may not act here, or "")
    differences: tuple[tuple[str, str, str, str], ...]
    method: str


@dataclass(frozen=True)
class MachinePart:
    """Everything one machine contributes to the site; ``digest`` names the runs and
    annotations it was made from."""

    machine: Machine
    digest: str
    #: Every run of the machine, oldest first.
    runs: tuple[str, ...]
    builds: tuple[BuildLine, ...]  # newest first
    latest: LatestRun
    series: tuple[Series, ...]
    causes: tuple[StepCauses, ...] = ()
    ratios: tuple[RatioLine, ...] = ()
    comparison: Comparison | None = None

    def causes_of(self, series: int, step: int) -> tuple[Cause, ...]:
        for one in self.causes:
            if (one.series, one.step) == (series, step):
                return one.causes
        return ()


@dataclass(frozen=True)
class Regression:
    """A row of one machine whose latest step is slower or faster: the step, its causes,
    and when the first run of its build started."""

    machine: Machine
    series: Series
    step: HistoryStep
    causes: tuple[Cause, ...]
    when: str


@dataclass(frozen=True)
class Site:
    """What the site shows: every machine's part (machines by their newest run, newest
    first), the regressions newest first, every row measured, the annotations, and the
    machines' steps gathered by build (`app.history.fleet_steps`: none for one machine)."""

    parts: tuple[MachinePart, ...]
    regressions: tuple[Regression, ...]
    rows: tuple[RowKey, ...]
    made: tuple[str, ...] = field(default=(), compare=False)  # machines computed afresh
    fleet: tuple[FleetStep, ...] = ()


def regressions(parts: Iterable[MachinePart]) -> list[Regression]:
    """Every (machine, row) whose latest step is slower or faster, newest first."""
    found = []
    for part in parts:
        for index, series in enumerate(part.series):
            if not series.steps:
                continue
            step = series.steps[-1]
            if step.verdict not in (verdict.FASTER, verdict.SLOWER):
                continue
            when = series.points[step.index].started_at
            found.append(Regression(part.machine, series, step,
                                    part.causes_of(index, len(series.steps) - 1), when))
    return sorted(found, key=lambda r: (r.when, r.machine.key, r.series.algorithm,
                                        r.series.operation), reverse=True)


def digest_of(runs: Sequence[Run], notes: Sequence[tuple[str, str, str]]) -> str:
    """What a machine's part is made from: its runs (ids, start, status), the annotations,
    this pqbench and this module's format."""
    blob = json.dumps([PART_FORMAT, __version__, [(r.run_id, r.started_at, r.status)
                                                  for r in runs], list(notes)])
    return hashlib.sha256(blob.encode()).hexdigest()


def site_of(store: Any, known: Mapping[str, MachinePart] | None = None) -> Site:
    """The site over every run of `store` (a `data.store.Store`); `known` holds the parts
    published before, by machine key, kept where their digest still matches.

    Runs are read as light headers (no fingerprint) first; a run that a kept part names
    is that part's machine's, and only the others' fingerprints are read to tell their
    machine (`machine_of`): publishing again after one run reads one fingerprint, and the
    fingerprints of the machines it computes again."""
    known = dict(known or {})
    # Oldest first as the store orders them (start, id): a digest needs one order, not
    # `run_order`'s (each machine's runs are put in that order when its part is made).
    headers = store.load_runs(RunFilter(), rows_too=False, fingerprints=False)
    if not headers:
        raise NothingStored(f"no runs stored yet in {store.location}; `pqbench speed` "
                            "measures and stores one")
    notes = store.annotations()
    owner = {run_id: key for key, part in known.items() for run_id in part.runs}
    machines = {key: part.machine for key, part in known.items()}
    new = [r.run_id for r in headers if r.run_id not in owner]
    for run in store.load_runs(RunFilter(ids=tuple(new)), rows_too=False) if new else []:
        machine = machine_of(run)
        owner[run.run_id] = machine.key
        machines.setdefault(machine.key, machine)
    by_machine: dict[str, list[Run]] = {}
    for run in headers:
        by_machine.setdefault(owner[run.run_id], []).append(run)
    parts, made = [], []
    for key, runs in by_machine.items():
        digest = digest_of(runs, notes)
        kept = known.get(key)
        if kept is not None and kept.digest == digest:
            parts.append(kept)
            continue
        whole = sorted(store.load_runs(RunFilter(ids=tuple(r.run_id for r in runs)),
                                       rows_too=False), key=run_order)
        part = machine_part(store, machines[key], whole, notes, digest)
        if part is not None:
            parts.append(part)
            made.append(key)
    parts.sort(key=lambda p: (p.latest.started_at, p.machine.key), reverse=True)
    rows = sorted({(s.algorithm, s.implementation, s.operation, s.block_size)
                   for p in parts for s in p.series}, key=_row_order)
    return Site(tuple(parts), tuple(regressions(parts)),
                tuple(RowKey(*r) for r in rows), tuple(made),
                tuple(fleet_steps([MachineHistory(p.machine, s)
                                   for p in parts for s in p.series])))


def _row_order(row: tuple[str, str, str, int | None]) -> tuple[str, str, str, int]:
    return (row[0], row[1], row[2], row[3] or 0)


def machine_part(store: Any, machine: Machine, runs: Sequence[Run],
                 notes: Sequence[tuple[str, str, str]], digest: str) -> MachinePart | None:
    """One machine's part from its run headers (oldest first); None for a machine whose
    runs carry no OS build."""
    from pqbench.data.store.selection import NoiseInputs

    groups = by_build(group_runs(runs, BY))
    if not groups:
        return None
    sides = [r.run_id for r in runs if pairing.ab_session(r) is not None]
    plain = [r.run_id for r in runs if pairing.ab_session(r) is None]
    whole_sides = store.load_runs(RunFilter(ids=tuple(sides))) if sides else []
    rates = store.row_rates([r.run_id for r in runs])
    model = from_inputs(NoiseInputs(machine.key, list(runs), store.row_estimates(plain),
                                    whole_sides))
    annotations: dict[str, list[str]] = {}
    for build, text, _created in notes:
        annotations.setdefault(build, []).append(text)
    # The series as `history` decides them: each row over its own points (a foreign
    # stack's libraries split that stack's rows only), judged by this machine's model.
    found = machine_series(group_runs(runs, BY), rates.row_keys(), rates.by_run, annotations,
                           model=model, sessions=whole_sides)
    order = [name for name, _ in groups]
    series = sorted(found, key=lambda s: (
        order.index(s.points[0].build) if s.points[0].build in order else len(order),
        s.algorithm, s.implementation, s.operation, s.block_size or 0))
    members = dict(groups)
    newest = max(runs, key=run_order)
    home = next(name for name, group in groups if newest in group)
    return MachinePart(
        machine, digest, tuple(r.run_id for r in runs),
        tuple(BuildLine(name, len(group), group[0].started_at, group[-1].started_at)
              for name, group in reversed(groups)),
        LatestRun(newest.run_id, newest.kind, newest.started_at, home,
                  taken_under_load(newest.environment), newest.environment.others_cpu,
                  newest.environment.steal),
        tuple(series), tuple(_step_causes(series, members)),
        tuple(_ratios(store, runs)), _comparison(store, groups, model))


def _step_causes(series: Sequence[Series], members: Mapping[str, Sequence[Run]]
                 ) -> list[StepCauses]:
    """Per step, the fingerprint differences between the builds either side of it that
    plausibly explain that row (`explain.causes_for`)."""
    found = []
    cache: dict[tuple[str, str], list[explain.Difference]] = {}
    for index, one in enumerate(series):
        for number, step in enumerate(one.steps):
            before = one.points[step.index - 1].build
            after = one.points[step.index].build
            if (before, after) not in cache:
                cache[(before, after)] = explain.differences(
                    [r.environment for r in members[before]],
                    [r.environment for r in members[after]])
            context = explain.context_of(r.environment for r in
                                         (*members[before], *members[after]))
            causes = explain.causes_for(one.algorithm, one.implementation,
                                        cache[(before, after)], context=context,
                                        operation=one.operation)
            found.append(StepCauses(index, number, tuple(_cause(c) for c in causes)))
    return found


def _cause(cause: explain.Cause) -> Cause:
    return Cause(cause.field, _text(cause.before), _text(cause.after), cause.why)


def _text(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    return str(value)


def _ratios(store: Any, runs: Sequence[Run]) -> list[RatioLine]:
    """The newest `speed` run's post-quantum against classical ratios (`ratios.mission`)."""
    speed = [r for r in runs if r.kind == "speed" and pairing.ab_session(r) is None]
    if not speed:
        return []
    run = store.load_runs(RunFilter(ids=(speed[-1].run_id,)))[0]
    return [RatioLine(r.name, r.kind, r.estimate, _finite(r.ci_low), _finite(r.ci_high),
                      r.ci_level, r.pairs, run.run_id)
            for r in ratios.mission(ratios.run_ratios(run)) if r.kind in PQ_KINDS]


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _comparison(store: Any, groups: Sequence[tuple[str, Sequence[Run]]], model: Any
                ) -> Comparison | None:
    """The newest build against the one before it, as `compare` judges them; None with
    one build, or two that share no row."""
    if len(groups) < 2:
        return None
    (before, old), (after, new) = groups[-2], groups[-1]
    whole = store.load_runs(RunFilter(ids=tuple(r.run_id for r in (*old, *new))))
    by_id = {r.run_id: r for r in whole}
    try:
        result = compare_sides([by_id[r.run_id] for r in old],
                               [by_id[r.run_id] for r in new], before_name=before,
                               after_name=after, noise=lambda _runs: model)
    except ComparisonError:
        return None
    rows = tuple(ComparedRow(
        r.key, r.outcome.verdict, r.outcome.ratio, _finite(r.outcome.ci_low),
        _finite(r.outcome.ci_high), r.outcome.reason, tuple(_cause(c) for c in r.causes))
        for r in result.rows)
    return Comparison(before, after, result.before_runs, result.after_runs, rows,
                      tuple((d.field, _text(d.before), _text(d.after), d.note or "")
                            for d in result.differences),
                      result.method)


# -- a part as JSON and back: what a publish keeps for the next one ---------------------

def part_as_dict(part: MachinePart) -> dict[str, Any]:
    """A part as JSON-ready data (`part_from_dict` reads it back)."""
    def plain(value: Any) -> Any:
        if isinstance(value, Series):
            return {"__series__": value.as_dict()}
        if hasattr(value, "__dataclass_fields__"):
            return {name: plain(getattr(value, name)) for name in value.__dataclass_fields__}
        if isinstance(value, tuple | list):
            return [plain(v) for v in value]
        if isinstance(value, float) and not math.isfinite(value):
            return {"__float__": repr(value)}
        return value

    return {"format": PART_FORMAT, **plain(part)}


def part_from_dict(data: Mapping[str, Any]) -> MachinePart:
    """A part `part_as_dict` wrote; a KeyError, TypeError or ValueError where it is not one."""
    if data.get("format") != PART_FORMAT:
        raise ValueError("a part of another format")

    def number(value: Any) -> Any:
        return float(value["__float__"]) if isinstance(value, Mapping) else value

    def series(d: Mapping[str, Any]) -> Series:
        s = d["__series__"]
        points = tuple(Point(p["build"], p["started_at"], tuple(p["runs"]), p["n"],
                             number(p["median"]), number(p["ci_low"]), number(p["ci_high"]),
                             tuple(p["notes"])) for p in s["points"])
        steps = tuple(HistoryStep(st["index"], st["build"], number(st["before"]),
                                  number(st["after"]), number(st["ratio"]), st["verdict"],
                                  st["ci_low"], st["ci_high"], st["p_value"], st["reason"],
                                  st["basis"]) for st in s["steps"])
        return Series(s["algorithm"], s["implementation"], s["operation"], s["block_size"],
                      s["unit"], points, steps, s["noise_floor"], s["threshold"], s["basis"])

    def causes(items: Sequence[Mapping[str, Any]]) -> tuple[Cause, ...]:
        return tuple(Cause(**c) for c in items)

    comparison = data["comparison"]
    return MachinePart(
        Machine(**data["machine"]), data["digest"], tuple(data["runs"]),
        tuple(BuildLine(**b) for b in data["builds"]), LatestRun(**data["latest"]),
        tuple(series(s) for s in data["series"]),
        tuple(StepCauses(c["series"], c["step"], causes(c["causes"]))
              for c in data["causes"]),
        tuple(RatioLine(**{**r, "estimate": number(r["estimate"])}) for r in data["ratios"]),
        None if comparison is None else Comparison(
            comparison["before"], comparison["after"], tuple(comparison["before_runs"]),
            tuple(comparison["after_runs"]),
            tuple(ComparedRow(RowKey(*r["key"]), r["verdict"], number(r["ratio"]),
                              r["ci_low"], r["ci_high"], r["reason"], causes(r["causes"]))
                  for r in comparison["rows"]),
            tuple((a, b, c, d) for a, b, c, d in comparison["differences"]),
            comparison["method"]))
