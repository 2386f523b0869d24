"""Reading runs back: what a command asks for, in bulk, with the indexes of schema v2.

`load` serves `Store.load_runs`: the run rows a filter selects (a `--by` group whose field
is a column is chosen in SQL, any other field over the runs' fingerprints in Python), then
their result rows, samples, problems and checks in a few queries per batch of runs; or,
for one row key across every run (history), by that key through its index. A run header
may leave its fingerprint out (`fingerprints=False`): the fingerprint fields that are
columns are enough to group runs by them, and the fingerprints of ten thousand runs are
most of what reading them costs.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import Select, and_, func, or_, select
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from pqbench.record import codec
from pqbench.record.results import RowKey, Run
from pqbench.record.runs import NO_VALUE, group_value
from pqbench.store import schema
from pqbench.store.bulk import IDS_PER_QUERY, chunks
from pqbench.timing.contract import LoopResult


@dataclass(frozen=True)
class RunFilter:
    """Which runs `Store.load_runs` loads: the ones named (ids or unique prefixes), of
    these kinds, whose `--by` group (`record.runs.group_value`) is one of `values`, the
    newest N; empty parts select everything. `algorithms` (names as stored), with
    `implementation` and `operation`, keeps only those result rows (and the problems and
    checks of those algorithms): every selected run is loaded, with only the rows asked.
    `notes` False leaves the problems and checks out (a history draws rates only)."""

    ids: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    by: str | None = None
    values: tuple[str, ...] = ()
    newest: int | None = None
    algorithms: tuple[str, ...] = ()
    implementation: str | None = None
    operation: str | None = None
    notes: bool = True


FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

r = schema.runs
m = schema.measurements
s = schema.samples

#: `--by` fields kept as columns of pqbench_runs, read as `group_value` reads them.
_COLUMNS: dict[str, Any] = {"label": r.c.label, "os_build": r.c.os_build, "kind": r.c.kind,
                            "testbed": r.c.testbed, "hostname": r.c.hostname,
                            "run_id": r.c.run_id}
#: `--by` fields a header without its fingerprint answers.
LIGHT_FIELDS = frozenset({*_COLUMNS, "date"})


def _header_columns(fingerprints: bool) -> list[Any]:
    if fingerprints:
        return [r]
    # A format-1 run kept its label in the fingerprint only (codec.label_of).
    legacy = r.c.environment["label"].as_string().label("legacy_label")
    return [c for c in r.c if c.name != "environment"] + [legacy]


def _group_condition(by: str, values: Sequence[str]) -> ColumnElement[bool] | None:
    """A condition every run of the groups asked meets (more may: `group_value` decides)."""
    if by == "date":
        return func.substr(r.c.started_at, 1, 10).in_(list(values))
    column = _COLUMNS.get(by)
    if column is None:
        return None
    condition = column.in_([v for v in values if v != NO_VALUE])
    if NO_VALUE in values or by == "label":  # a format-1 label lives in the fingerprint
        condition = or_(condition, column.is_(None))
    return condition


def _run_query(wanted: RunFilter, ids: Sequence[str], fingerprints: bool) -> Select[Any]:
    query = select(*_header_columns(fingerprints))
    if ids:
        query = query.where(r.c.run_id.in_(list(ids)))
    if wanted.kinds:
        query = query.where(r.c.kind.in_(list(wanted.kinds)))
    if wanted.by is not None:
        condition = _group_condition(wanted.by, wanted.values)
        if condition is not None:
            query = query.where(condition)
    order = (r.c.started_at, r.c.run_id)
    if wanted.newest is not None:
        return query.order_by(*(c.desc() for c in order)).limit(wanted.newest)
    return query.order_by(*order)


def headers(conn: Connection, wanted: RunFilter, ids: Sequence[str], fingerprints: bool
            ) -> list[Run]:
    """The selected runs without their rows, in the order of `ids` where they name runs,
    else oldest first."""
    rows = list(conn.execute(_run_query(wanted, ids, fingerprints)).all())
    if wanted.newest is not None:
        rows.reverse()
    decode = codec.run_from_columns if fingerprints else codec.run_header_from_columns
    found = {row.run_id: decode(row) for row in rows}
    if wanted.by is not None:
        found = {i: run for i, run in found.items()
                 if group_value(run, wanted.by) in wanted.values}
    return [found[i] for i in ids if i in found] if ids else list(found.values())


@dataclass
class _Parts:
    """What `load` collects per run id besides the run's own row."""

    measurements: dict[str, list[Any]] = field(default_factory=dict)
    problems: dict[str, list[Any]] = field(default_factory=dict)
    verifications: dict[str, list[Any]] = field(default_factory=dict)


def _row_condition(wanted: RunFilter) -> ColumnElement[bool]:
    parts: list[ColumnElement[bool]] = [m.c.algorithm.in_(list(wanted.algorithms))]
    if wanted.implementation is not None:
        parts.append(m.c.implementation == wanted.implementation)
    if wanted.operation is not None:
        parts.append(m.c.operation == wanted.operation)
    return and_(*parts)


def _add_rows(conn: Connection, parts: _Parts, condition: ColumnElement[bool],
              wanted_ids: set[str] | None) -> None:
    """Result rows meeting `condition` with their samples: two queries."""
    rows = [row for row in conn.execute(select(m).where(condition).order_by(m.c.run_id, m.c.id))
            if wanted_ids is None or row.run_id in wanted_ids]
    rounds: dict[int, list[LoopResult]] = {row.id: [] for row in rows}
    for measurement_id, ops, elapsed_ns, cycles in conn.execute(
            select(s.c.measurement_id, s.c.ops, s.c.elapsed_ns, s.c.cycles)
            .join(m, m.c.id == s.c.measurement_id).where(condition)
            .order_by(s.c.measurement_id, s.c.round_index)):
        found = rounds.get(measurement_id)
        if found is not None:
            found.append(LoopResult(ops, elapsed_ns, cycles))
    for row in rows:
        parts.measurements.setdefault(row.run_id, []).append(
            codec.measurement_from_columns(row, rounds[row.id]))


def _add_notes(conn: Connection, parts: _Parts, run_ids: Sequence[str],
               wanted: RunFilter) -> None:
    for table, found, decode in ((schema.problems, parts.problems, codec.problem),
                                 (schema.verifications, parts.verifications,
                                  codec.verification)):
        query = select(table).where(table.c.run_id.in_(list(run_ids))).order_by(table.c.id)
        if wanted.algorithms:
            query = query.where(table.c.algorithm.in_(list(wanted.algorithms)))
            if wanted.implementation is not None:
                query = query.where(table.c.implementation == wanted.implementation)
        for row in conn.execute(query):
            found.setdefault(row.run_id, []).append(decode(dict(row._mapping)))


def load(conn: Connection, wanted: RunFilter, ids: Sequence[str], *, rows_too: bool,
         fingerprints: bool) -> list[Run]:
    chosen = headers(conn, wanted, ids, fingerprints)
    if not rows_too or not chosen:
        return chosen
    run_ids = [run.run_id for run in chosen]
    parts = _Parts()
    if wanted.algorithms:
        # One row key across every run: by the key's index, not by lists of run ids.
        _add_rows(conn, parts, _row_condition(wanted), set(run_ids))
    for batch in chunks(run_ids, IDS_PER_QUERY):
        if not wanted.algorithms:
            _add_rows(conn, parts, m.c.run_id.in_(list(batch)), None)
        if wanted.notes:
            _add_notes(conn, parts, batch, wanted)
    return [replace(run, measurements=tuple(parts.measurements.get(run.run_id, ())),
                    problems=tuple(parts.problems.get(run.run_id, ())),
                    verifications=tuple(parts.verifications.get(run.run_id, ())))
            for run in chosen]


def algorithms(conn: Connection, timed_only: bool = False) -> list[str]:
    """Every algorithm name stored, read from the row-key index alone; `timed_only`:
    those a timed run has rows for (memory runs have no rates), which reads every row."""
    query = select(m.c.algorithm).distinct().order_by(m.c.algorithm)
    if timed_only:
        query = query.join(r, r.c.run_id == m.c.run_id).where(r.c.kind != "memory")
    return list(conn.execute(query).scalars())


# --- per-round rates as numbers (a report's history) ----------------------------------------


class RowRates:
    """Per row key, the per-round rates of every run asked for, packed as arrays rather
    than `Run` objects (ten thousand runs of 79 rows of 5 rounds: about 35 MB instead of
    gigabytes). A rate is what `Measurement.samples` gives: ops * 1e9 / elapsed_ns for
    each round with operations, 0 for a round without elapsed time."""

    def __init__(self, run_ids: Sequence[str]) -> None:
        self._position = {run_id: i for i, run_id in enumerate(run_ids)}
        #: Per key, chunks of (run position of each measurement, its rounds, the rates).
        self._chunks: dict[RowKey, list[tuple[IntArray, IntArray, FloatArray]]] = {}
        self._index: tuple[RowKey, dict[int, list[int]], IntArray, FloatArray] | None = None

    def row_keys(self) -> list[RowKey]:
        """The row keys, in the order they were first read."""
        return list(self._chunks)

    def _add(self, key: RowKey, runs: IntArray, rounds: IntArray, rates: FloatArray) -> None:
        self._chunks.setdefault(key, []).append((runs, rounds, rates))

    def _indexed(self, key: RowKey) -> tuple[dict[int, list[int]], IntArray, FloatArray]:
        """Per run position its measurements, where each one's rates start, the rates: one
        key at a time (a history reads key by key)."""
        if self._index is None or self._index[0] != key:
            chunks_ = self._chunks[key]
            runs = np.concatenate([c[0] for c in chunks_])
            starts = np.concatenate([[0], np.cumsum(np.concatenate([c[1] for c in chunks_]))])
            by_run: dict[int, list[int]] = {}
            for index, run in enumerate(runs.tolist()):
                by_run.setdefault(run, []).append(index)
            self._index = (key, by_run, starts, np.concatenate([c[2] for c in chunks_]))
        return self._index[1:]

    def runs(self, key: RowKey, run_ids: Sequence[str]) -> list[FloatArray]:
        """The rates of each of `run_ids` that measured `key` (a run measuring it twice
        gives two arrays), in the order of `run_ids`, as `compare.run_samples` gives them
        (as arrays: views of the packed rates, not copies)."""
        if key not in self._chunks:
            return []
        by_run, starts, values = self._indexed(key)
        found = np.array([index for run_id in run_ids
                          for index in by_run.get(self._position.get(run_id, -1), ())],
                         dtype=np.int64)
        bounds = zip(starts[found].tolist(), starts[found + 1].tolist(), strict=True)
        return [values[start:stop] for start, stop in bounds if stop > start]


def row_rates(conn: Connection, run_ids: Sequence[str]) -> RowRates:
    """Every result row's per-round rates of the runs named: two queries per batch of
    runs (rows by the run-id index, then their samples by the samples' key), the samples
    turned into rates and sorted by row key as arrays (a loop over four million rounds
    in Python costs seconds)."""
    found = RowRates(run_ids)
    codes: dict[RowKey, int] = {}
    for batch in chunks(list(run_ids), IDS_PER_QUERY):
        within = m.c.run_id.in_(list(batch))
        rows = conn.execute(select(m.c.id, m.c.run_id, m.c.algorithm, m.c.implementation,
                                   m.c.operation, m.c.block_size)
                            .where(within).order_by(m.c.id)).all()
        if not rows:
            continue
        ids = np.array([row[0] for row in rows], dtype=np.int64)
        runs = np.array([found._position[row[1]] for row in rows], dtype=np.int64)
        keys = np.array([codes.setdefault((row[2], row[3], row[4], row[5]), len(codes))
                         for row in rows], dtype=np.int64)
        rounds = np.fromiter(itertools.chain.from_iterable(conn.execute(
            select(s.c.measurement_id, s.c.ops, s.c.elapsed_ns)
            .join(m, m.c.id == s.c.measurement_id).where(within)
            .order_by(s.c.measurement_id, s.c.round_index)).all()), dtype=np.int64
        ).reshape(-1, 3)
        rounds = rounds[rounds[:, 1] > 0]  # Measurement.samples: rounds with operations
        owner, ops, elapsed = np.searchsorted(ids, rounds[:, 0]), rounds[:, 1], rounds[:, 2]
        # LoopResult.ops_per_sec to the bit: ops * 1e9 / elapsed_ns in float64, 0 without
        # elapsed time.
        timed = elapsed > 0
        rates = np.where(timed, ops * 1e9 / np.where(timed, elapsed, 1), 0.0)
        counts = np.bincount(owner, minlength=ids.size)
        # Measurements and their rounds grouped by key, in id order within a key.
        by_key = np.argsort(keys, kind="stable")
        rates = rates[np.argsort(keys[owner], kind="stable")]
        key_bounds = np.searchsorted(keys[by_key], np.arange(len(codes) + 1))
        round_bounds = np.concatenate([[0], np.cumsum(counts[by_key])])
        for key, code in codes.items():
            first, last = int(key_bounds[code]), int(key_bounds[code + 1])
            if last > first:
                chosen = by_key[first:last]
                found._add(key, runs[chosen], counts[chosen],
                           rates[int(round_bounds[first]):int(round_bounds[last])])
    return found
