"""Writing many runs at once: each table in a few statements, not one per row (issue #16).

Every table is written straight through the driver, the statements built from the
table definitions in store/schema.py: on SQLite one executemany of plain tuples per
table, on PostgreSQL COPY (psycopg 3), which a row-by-row executemany is many times
slower than (each row a statement in the pipeline). Result rows get their ids
before they are written, so their samples need no round trip: on PostgreSQL from the
table's own sequence (ids reserved there are never handed out twice), on SQLite after
the largest id stored, read once the transaction holds the write lock (taken by the
first insert, the runs), which no other writer can take before this one commits.

Every result row is written from a run document's row (`codec.row_columns`): an import's
as `record.exchange` validated them, never made into Measurements first; a measured
Run's as its Measurements give them (`codec.stored_row`). One definition of the columns.

Everything happens in the caller's transaction: all runs or none.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from pqbench.record import codec
from pqbench.record.results import Run
from pqbench.store import schema

#: Runs per write batch: bounds the memory the parameter lists take, whatever the import.
RUNS_PER_BATCH = 200
#: Run ids per IN (...) query: far below SQLite's and PostgreSQL's parameter limits.
IDS_PER_QUERY = 500

_MEASUREMENT_COLUMNS = ("id", "run_id", "algorithm", "implementation", "operation",
                        "block_size", "ops_per_sec", "us_per_op", "cycles_per_op", "counter",
                        "sizes", "attributes")
_measurement_values = operator.itemgetter(*_MEASUREMENT_COLUMNS[2:])
_SAMPLE_COLUMNS = ("measurement_id", "round_index", "ops", "elapsed_ns", "cycles")
_RUN_COLUMNS = tuple(c.name for c in schema.runs.c)
_PROBLEM_COLUMNS = tuple(c.name for c in schema.problems.c if c.name != "id")
_CHECK_COLUMNS = tuple(c.name for c in schema.verifications.c if c.name != "id")


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


@dataclass(frozen=True)
class _Pending:
    """A run to write: its own row, problems and checks from `run`, and its result rows
    as a run document holds them (`codec.row_columns` makes their columns)."""

    run: Run
    results: Sequence[Any]

    @property
    def run_id(self) -> str:
        return self.run.run_id


def insert_runs(conn: Connection, runs: Sequence[Run]) -> list[str]:
    """Write every run not stored yet (the first of several with one id); their ids, in
    the order given."""
    return _insert(conn, [_Pending(run, [codec.stored_row(m) for m in run.measurements])
                          for run in runs])


def insert_documents(conn: Connection, documents: Sequence[Mapping[str, Any]]) -> list[str]:
    """As insert_runs, for run documents `record.exchange` has validated."""
    return _insert(conn, [_Pending(codec.run_from_document(doc, results=False),
                                   doc["results"]) for doc in documents])


def _insert(conn: Connection, pending: Sequence[_Pending]) -> list[str]:
    """The run rows first (on SQLite the first write takes the lock that makes the ids
    ours), then the result rows and samples batch by batch, then problems and checks:
    a handful of statements per table, whatever the number of runs."""
    fresh = _not_stored(conn, pending)
    batches = list(chunks(fresh, RUNS_PER_BATCH))
    for batch in batches:
        _write(conn, schema.runs.name, _RUN_COLUMNS,
               [_row(codec.run_columns(p.run), _RUN_COLUMNS) for p in batch])
    for batch in batches:
        _insert_rows(conn, batch)
    for batch in batches:
        problems = [_row({"run_id": p.run_id, **codec.problem_fields(problem)},
                         _PROBLEM_COLUMNS) for p in batch for problem in p.run.problems]
        if problems:
            _write(conn, schema.problems.name, _PROBLEM_COLUMNS, problems)
        checks = [_row({"run_id": p.run_id, **codec.verification_fields(v)},
                       _CHECK_COLUMNS) for p in batch for v in p.run.verifications]
        if checks:
            _write(conn, schema.verifications.name, _CHECK_COLUMNS, checks)
    return [p.run_id for p in fresh]


def _row(columns: dict[str, Any], names: Sequence[str]) -> tuple[Any, ...]:
    """A table row as a tuple in `names` order, JSON columns as their text (json.dumps,
    as SQLAlchemy's JSON type writes them)."""
    return tuple(json.dumps(columns[n]) if isinstance(columns[n], dict | list) else columns[n]
                 for n in names)


def _not_stored(conn: Connection, pending: Sequence[_Pending]) -> list[_Pending]:
    unique: dict[str, _Pending] = {}
    for p in pending:
        unique.setdefault(p.run_id, p)
    column = schema.runs.c.run_id
    stored: set[str] = set()
    for batch in chunks(list(unique), IDS_PER_QUERY):
        stored.update(conn.execute(select(column).where(column.in_(batch))).scalars())
    return [p for run_id, p in unique.items() if run_id not in stored]


def _insert_rows(conn: Connection, batch: Sequence[_Pending]) -> None:
    """A batch's result rows and their samples."""
    ids = _reserve_ids(conn, sum(len(p.results) for p in batch))
    rows, samples = _rows(batch, ids, copy_text=conn.dialect.name == "postgresql")
    if rows:
        _write(conn, schema.measurements.name, _MEASUREMENT_COLUMNS, rows)
    if samples:
        _write(conn, schema.samples.name, _SAMPLE_COLUMNS, samples)


_Rows = list[tuple[Any, ...]] | str


def _rows(batch: Sequence[_Pending], ids: list[int], copy_text: bool) -> tuple[_Rows, _Rows]:
    """The rows of pqbench_measurements and pqbench_samples for a batch's results, as
    tuples; with `copy_text` (PostgreSQL) the samples as the text of their COPY, one
    string psycopg sends as it is, instead of a call per sample."""
    rows: list[tuple[Any, ...]] = []
    samples: list[tuple[Any, ...]] = []
    texts = _JsonTexts()
    row_ids = iter(ids)
    for p in batch:
        for result in p.results:
            row_id = next(row_ids)
            columns = codec.row_columns(result)
            samples += [(row_id, i, s["ops"], s["elapsed_ns"], s.get("cycles"))
                        for i, s in enumerate(result["samples"])]
            columns["sizes"] = texts.of(columns["sizes"])
            columns["attributes"] = texts.of(columns["attributes"])
            rows.append((row_id, p.run_id, *_measurement_values(columns)))
    if not copy_text:
        return rows, samples
    # Samples are whole numbers (or no cycles): their COPY text needs no escaping.
    return rows, "".join(f"{m}\t{i}\t{ops}\t{ns}\t{_NULL if cycles is None else cycles}\n"
                         for m, i, ops, ns, cycles in samples)


#: NULL in COPY's text format (PostgreSQL, "COPY ... FROM STDIN").
_NULL = "\\N"


class _JsonTexts:
    """JSON columns' texts, as SQLAlchemy's JSON type writes them (json.dumps), each
    distinct value encoded once: a fleet's result rows repeat a few sizes and attributes
    (one set per algorithm), and encoding each again took a tenth of an import. A value
    is known by its items and their types (True == 1, but they encode differently);
    objects holding floats, lists or objects are encoded each time."""

    def __init__(self) -> None:
        self._known: dict[tuple[Any, ...], str] = {}

    def of(self, value: dict[str, Any]) -> str:
        if not value:
            return "{}"
        kinds = tuple(map(type, value.values()))
        if float in kinds:  # 0.0 == -0.0, but they encode differently
            return json.dumps(value)
        try:
            key = (tuple(value.items()), kinds)  # in order: json.dumps keeps the order too
            text = self._known.get(key)
        except TypeError:  # a list or an object inside: not hashable, encode it
            return json.dumps(value)
        if text is None:
            text = self._known[key] = json.dumps(value)
        return text


def _reserve_ids(conn: Connection, count: int) -> list[int]:
    if not count:
        return []
    if conn.dialect.name == "postgresql":  # one row: the ids as an array
        return list(conn.execute(
            text("SELECT array_agg(nextval(pg_get_serial_sequence(:table, 'id'))) "
                 "FROM generate_series(1, :count)"),
            {"table": schema.measurements.name, "count": count}).scalar_one())
    largest = conn.execute(select(func.max(schema.measurements.c.id))).scalar() or 0
    return list(range(largest + 1, largest + 1 + count))


def _write(conn: Connection, table: str, columns: Sequence[str], rows: _Rows) -> None:
    """`rows` into `table`: tuples, or (PostgreSQL) their COPY text (`_rows`)."""
    names = ", ".join(columns)
    if conn.dialect.name != "postgresql":
        marks = ", ".join("?" for _ in columns)
        conn.exec_driver_sql(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)
        return
    import psycopg

    driver = conn.connection.driver_connection
    statement = f"COPY {table} ({names}) FROM STDIN"
    try:
        with driver.cursor() as cursor, cursor.copy(statement) as copy:  # type: ignore[union-attr]
            if isinstance(rows, str):
                copy.write(rows)
            else:
                for row in rows:
                    copy.write_row(row)
    except psycopg.Error as exc:
        # As SQLAlchemy reports driver errors: a unique or NOT NULL violation becomes an
        # IntegrityError, the rest a DBAPIError, so the store's error handling applies.
        raise DBAPIError.instance(statement, None, exc, psycopg.Error) from None
