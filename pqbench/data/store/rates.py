"""Many runs' rows as numbers, packed: every per-round rate (a report's history), or each
run's estimate of each row (what the noise model learns from).

Ten thousand runs of 79 rows of 5 rounds are four million rounds: as `Run` objects they
take gigabytes, as packed arrays about 35 MB; their estimates are 790,000 numbers. Apart
from `store.queries` because it needs numpy, which commands that show no figure
(`pqbench runs`) do not load.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import select, text
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from pqbench.data.record.estimates import run_estimate
from pqbench.data.record.results import RowKey
from pqbench.data.store import schema
from pqbench.data.store.bulk import stored_estimates
from pqbench.data.store.queries import IDS_PER_QUERY, RunFilter, chunks

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

m = schema.measurements


class RowRates:
    """Per row key, the per-round rates of every run asked for, packed as arrays rather
    than `Run` objects (ten thousand runs of 79 rows of 5 rounds: about 35 MB instead of
    gigabytes). A rate is what `Measurement.samples` gives: ops * 1e9 / elapsed_ns for
    each round with operations, 0 for a round without elapsed time."""

    def __init__(self, run_ids: Sequence[str]) -> None:
        self._position = {run_id: i for i, run_id in enumerate(run_ids)}
        #: Per key, chunks of (run position of each measurement, its rounds, the rates,
        #: its place among the rows its query read: by id, so a run's rows in their order).
        self._chunks: dict[RowKey, list[tuple[IntArray, IntArray, FloatArray, IntArray]]] = {}
        self._index: tuple[RowKey, dict[int, list[int]], IntArray, FloatArray] | None = None

    def row_keys(self) -> list[RowKey]:
        """The row keys, in the order they were first read."""
        return list(self._chunks)

    def _add(self, key: RowKey, runs: IntArray, rounds: IntArray, rates: FloatArray,
             places: IntArray) -> None:
        self._chunks.setdefault(key, []).append((runs, rounds, rates, places))

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


    def by_run(self, key: RowKey, run_ids: Sequence[str]) -> list[tuple[str, FloatArray]]:
        """(run id, rates) of each of `run_ids` that measured `key`, as `runs` gives the
        rates, in the same order."""
        if key not in self._chunks:
            return []
        by_run, starts, values = self._indexed(key)
        found = []
        for run_id in run_ids:
            for index in by_run.get(self._position.get(run_id, -1), ()):
                start, stop = int(starts[index]), int(starts[index + 1])
                if stop > start:
                    found.append((run_id, values[start:stop]))
        return found

    def covers(self, run_ids: Sequence[str]) -> bool:
        """Whether every one of `run_ids` was asked for (its rows, if any, are here)."""
        return all(run_id in self._position for run_id in run_ids)

    def estimates(self, run_ids: Sequence[str]) -> RowEstimates:
        """The estimates of `run_ids` (all asked for: `covers`) of the rows in hand, as
        `Store.row_estimates` reads them for those runs and rows: each from the row's rates
        by `record.estimates`, as the store worked it out when it wrote the row, so a
        history's noise model learns from the rates it read rather than reading the store
        again. A row without an estimate (no rate, or a rate of 0) is left out, as there;
        a key the runs have rows of but no estimate has none (empty arrays)."""
        rows: list[tuple[Any, ...]] = []
        for key, chunks_ in self._chunks.items():
            measured, starts, values = self._indexed(key)
            places = np.concatenate([c[3] for c in chunks_]).tolist()
            for run_id in dict.fromkeys(run_ids):
                for index in measured.get(self._position[run_id], ()):
                    rates = values[int(starts[index]):int(starts[index + 1])].tolist()
                    rows.append((run_id, places[index], *key, run_estimate(rates), len(rates)))
        # Packed as the store's are (`_packed`), a row's place in its query standing for its
        # place in its run: both follow the rows' ids.
        return _packed(run_ids, rows)


def row_rates(conn: Connection, run_ids: Sequence[str],
              rows: ColumnElement[bool] | None = None) -> RowRates:
    """Every result row's per-round rates of the runs named: one query per batch of runs
    (rows by the run-id index, their rounds in them), the rounds turned into rates and
    sorted by row key as arrays (a loop over four million rounds in Python costs
    seconds). With `rows` (a condition on the result rows' key columns, a history's row),
    the rows meeting it across every run instead: one query through the key's index,
    whatever the number of runs."""
    found = RowRates(run_ids)
    codes: dict[RowKey, int] = {}
    if rows is not None:
        _read(conn, found, codes, rows)
        return found
    for batch in chunks(list(run_ids), IDS_PER_QUERY):
        _read(conn, found, codes, m.c.run_id.in_(list(batch)))
    return found


def _read(conn: Connection, found: RowRates, codes: dict[RowKey, int],
          within: ColumnElement[bool]) -> None:
    """The rows meeting `within` of the runs `found` holds, and their rates."""
    rows = [row for row in conn.execute(
        select(m.c.run_id, m.c.algorithm, m.c.implementation, m.c.operation, m.c.block_size,
               m.c.round_ops, m.c.round_elapsed_ns).where(within).order_by(m.c.id)).all()
        if row[0] in found._position]
    if not rows:
        return
    runs = np.array([found._position[row[0]] for row in rows], dtype=np.int64)
    keys = np.array([codes.setdefault(RowKey(*row[1:5]), len(codes))
                     for row in rows], dtype=np.int64)
    lengths = np.array([len(row[5]) for row in rows], dtype=np.int64)
    if not np.array_equal(lengths, [len(row[6]) for row in rows]):
        raise ValueError("a result row's round arrays differ in length")
    total = int(lengths.sum())
    ops = np.fromiter(itertools.chain.from_iterable(row[5] for row in rows), np.int64, total)
    elapsed = np.fromiter(itertools.chain.from_iterable(row[6] for row in rows), np.int64,
                          total)
    owner = np.repeat(np.arange(len(rows)), lengths)
    # Rounds with operations (Measurement.samples).
    timed_rounds = ops > 0
    owner, ops, elapsed = owner[timed_rounds], ops[timed_rounds], elapsed[timed_rounds]
    # LoopResult.ops_per_sec to the bit: ops * 1e9 / elapsed_ns in float64, 0 without
    # elapsed time.
    timed = elapsed > 0
    rates = np.where(timed, ops * 1e9 / np.where(timed, elapsed, 1), 0.0)
    counts = np.bincount(owner, minlength=len(rows))
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
                       rates[int(round_bounds[first]):int(round_bounds[last])], chosen)


class RowEstimates:
    """Per row key, each estimate (`record.estimates`) of the runs asked for that measured
    it, packed: the run's position among the ids asked for, and the estimate, ordered by
    that position and, within a run, by the row's place in it (a run that measured a key
    twice has two). ``rounds`` gives the rounds each rests on, in the same order. `keys`
    names every row the runs measured, those without an estimate too (a memory row)."""

    def __init__(self, run_ids: Sequence[str],
                 found: dict[RowKey, tuple[IntArray, FloatArray, IntArray]] | None = None
                 ) -> None:
        self.run_ids = list(run_ids)
        self._found = found or {}
        self._at = {run_id: i for i, run_id in enumerate(self.run_ids)}
        self._by_run: dict[RowKey, dict[int, list[float]]] = {}

    def keys(self) -> list[RowKey]:
        """The row keys, in the order of their first estimate (by run position)."""
        return list(self._found)

    def __iter__(self) -> Iterator[RowKey]:
        return iter(self._found)

    def of(self, key: RowKey) -> tuple[IntArray, FloatArray]:
        """(run positions, estimates) of `key`: empty arrays for a key no run measured."""
        found = self._found.get(key)
        if found is None:
            return np.empty(0, np.int64), np.empty(0, np.float64)
        return found[0], found[1]

    def rounds(self, key: RowKey) -> IntArray:
        found = self._found.get(key)
        return found[2] if found is not None else np.empty(0, np.int64)

    def of_runs(self, key: RowKey, run_ids: Sequence[str]) -> list[float]:
        """The estimates of `key` by each of `run_ids` that has one, in their order (a run's
        own in the order of its rows): what `analysis.noise.learn` reads group by group."""
        by_run = self._by_run.get(key)
        if by_run is None:
            by_run = self._by_run[key] = {}
            positions, values = self.of(key)
            for position, value in zip(positions.tolist(), values.tolist(), strict=True):
                by_run.setdefault(position, []).append(value)
        at = self._at
        return [v for run_id in run_ids for v in by_run.get(at.get(run_id, -1), ())]


e = schema.estimates


#: The columns `_packed` reads, in its order.
_ESTIMATE_READ = ("run_id", "position", "algorithm", "implementation", "operation",
                  "block_size", "estimate", "rounds")


def row_estimates(conn: Connection, run_ids: Sequence[str],
                  rows: RunFilter | None = None) -> RowEstimates:
    """The estimates of the runs named, in one statement whatever their number: their ids
    go as one parameter (a JSON list SQLite's json_each unpacks, a PostgreSQL array), and
    the table's key (run_id, position) finds each run's rows. `rows` keeps its row keys,
    in the statement (as a list like the ids), so the rows not asked for are never sent.
    The statement is text, its rows plain tuples: SQLAlchemy's typed columns took twice
    the driver's own time to hand over a machine's 40,000 rows."""
    ids = list(dict.fromkeys(run_ids))
    if not ids:
        return RowEstimates(run_ids)
    postgresql = conn.dialect.name == "postgresql"

    def listed(column: str) -> str:
        return (f"{column} = ANY(:{column})" if postgresql
                else f"{column} IN (SELECT value FROM json_each(:{column}))")

    within, values = [listed("run_id")], {"run_id": ids}
    if rows is not None and rows.algorithms:
        within.append(listed("algorithm"))
        values["algorithm"] = list(rows.algorithms)
        for column in ("implementation", "operation"):
            if getattr(rows, column) is not None:
                within.append(f"{column} = :{column}")
                values[column] = getattr(rows, column)
    statement = text(f"SELECT {', '.join(_ESTIMATE_READ)} FROM {e.name} "
                     f"WHERE {' AND '.join(within)}")
    return _packed(run_ids, conn.execute(statement, {
        name: value if postgresql or isinstance(value, str) else json.dumps(value)
        for name, value in values.items()}).all())


def _kept(row: Sequence[Any], rows: RunFilter) -> bool:
    """Whether an estimate's key is one `rows` asks for, as `Store.load_runs` keeps result
    rows: every row when it names no algorithm, else `queries.row_condition`'s."""
    return not rows.algorithms or (
        row[2] in rows.algorithms and rows.implementation in (None, row[3])
        and rows.operation in (None, row[4]))


def estimates_from_rounds(conn: Connection, run_ids: Sequence[str],
                          rows: RunFilter | None = None) -> RowEstimates:
    """As `row_estimates`, worked out from the stored rounds: a store of schema 3 that this
    user may not upgrade has no pqbench_estimates. The same numbers, read slower."""
    found = [row for batch in chunks(list(dict.fromkeys(run_ids)), IDS_PER_QUERY)
             for row in stored_estimates(conn, batch).rows]
    return _packed(run_ids, [row for row in found if rows is None or _kept(row, rows)])


def _packed(run_ids: Sequence[str], rows: Sequence[Sequence[Any]]) -> RowEstimates:
    """Rows of (run id, position, algorithm, implementation, operation, block size,
    estimate or None, rounds) packed per key, each key's ordered by run position and
    position; the keys in the order of their first row (by run position and position),
    the rows without an estimate left out of the arrays. Column by column: a pass of
    Python per row, not one per field."""
    if not rows:
        return RowEstimates(run_ids)
    ids, places, *key_columns, values, rounds = zip(*rows, strict=True)
    at = {run_id: i for i, run_id in enumerate(run_ids)}
    runs = np.array([at[run_id] for run_id in ids], dtype=np.int64)
    codes: dict[tuple[Any, ...], int] = {}
    keys = np.array([codes.setdefault(key, len(codes)) for key in zip(*key_columns, strict=True)],
                    dtype=np.int64)
    where = runs * (int(max(places)) + 1) + np.array(places, dtype=np.int64)
    first = np.full(len(codes), np.iinfo(np.int64).max)
    np.minimum.at(first, keys, where)
    order = np.lexsort((where, keys))
    found = np.array(values, dtype=np.float64)[order]  # None: NaN
    runs, counted, keys = runs[order], np.array(rounds, dtype=np.int64)[order], keys[order]
    rated = ~np.isnan(found)
    bounds = np.searchsorted(keys, np.arange(len(codes) + 1)).tolist()
    packed = {}
    for key, code in sorted(codes.items(), key=lambda item: first[item[1]]):
        chosen = rated[bounds[code]:bounds[code + 1]]
        packed[RowKey(*key)] = tuple(part[bounds[code]:bounds[code + 1]][chosen]
                                     for part in (runs, found, counted))
    return RowEstimates(run_ids, packed)  # type: ignore[arg-type]
