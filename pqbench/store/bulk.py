"""Writing many runs at once: each table in a few statements, not one per row (issue #16).

Every table is written straight through the driver, the statements built from the
table definitions in store/schema.py: on SQLite one executemany of plain tuples per
table, on PostgreSQL COPY (psycopg 3), which a row-by-row executemany is many times
slower than (each row a statement in the pipeline). Result rows get their ids
before they are written, so their samples need no round trip: on PostgreSQL from the
table's own sequence (ids reserved there are never handed out twice), on SQLite after
the largest id stored, read once the transaction holds the write lock (taken by the
first insert, the runs), which no other writer can take before this one commits.

Everything happens in the caller's transaction: all runs or none.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from pqbench.record import codec
from pqbench.record.results import Measurement, Run
from pqbench.store import schema

#: Runs per write batch: bounds the memory the parameter lists take, whatever the import.
RUNS_PER_BATCH = 200
#: Run ids per IN (...) query: far below SQLite's and PostgreSQL's parameter limits.
IDS_PER_QUERY = 500

_MEASUREMENT_COLUMNS = ("id", "run_id", "algorithm", "implementation", "operation",
                        "block_size", "ops_per_sec", "us_per_op", "cycles_per_op", "counter",
                        "sizes", "attributes")
_SAMPLE_COLUMNS = ("measurement_id", "round_index", "ops", "elapsed_ns", "cycles")
_RUN_COLUMNS = tuple(c.name for c in schema.runs.c)
_PROBLEM_COLUMNS = tuple(c.name for c in schema.problems.c if c.name != "id")
_CHECK_COLUMNS = tuple(c.name for c in schema.verifications.c if c.name != "id")


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


@dataclass(frozen=True)
class _Pending:
    """A run to write: its own row, problems and checks from `run`, and its result rows,
    Measurements or the rows of a validated run document (written without making
    Measurements first: `codec.row_columns`)."""

    run: Run
    results: Sequence[Any]

    @property
    def run_id(self) -> str:
        return self.run.run_id


def insert_runs(conn: Connection, runs: Sequence[Run]) -> list[str]:
    """Write every run not stored yet (the first of several with one id); their ids, in
    the order given."""
    return _insert(conn, [_Pending(run, run.measurements) for run in runs])


def insert_documents(conn: Connection, documents: Sequence[Mapping[str, Any]]) -> list[str]:
    """As insert_runs, for run documents `record.exchange` has validated."""
    return _insert(conn, [_Pending(codec.run_from_document(doc, results=False),
                                   doc["results"]) for doc in documents])


def _insert(conn: Connection, pending: Sequence[_Pending]) -> list[str]:
    fresh = _not_stored(conn, pending)
    for batch in chunks(fresh, RUNS_PER_BATCH):
        _write(conn, schema.runs.name, _RUN_COLUMNS,
               [_row(codec.run_columns(p.run), _RUN_COLUMNS) for p in batch])
        _insert_rows(conn, batch)
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


def _insert_rows(conn: Connection, pending: Sequence[_Pending]) -> None:
    """The runs' result rows and their samples."""
    count = sum(len(p.results) for p in pending)
    if not count:
        return
    ids = iter(_reserve_ids(conn, count))
    rows: list[tuple[Any, ...]] = []
    samples: list[tuple[Any, ...]] = []
    for p in pending:
        for result in p.results:
            row_id = next(ids)
            if isinstance(result, Measurement):
                columns = codec.measurement_columns(result)
                samples += [(row_id, i, r.ops, r.elapsed_ns, r.cycles)
                            for i, r in enumerate(result.rounds)]
            else:
                columns = codec.row_columns(result)
                samples += [(row_id, i, s["ops"], s["elapsed_ns"], s.get("cycles"))
                            for i, s in enumerate(result["samples"])]
            columns["sizes"] = _json(columns["sizes"])
            columns["attributes"] = _json(columns["attributes"])
            rows.append((row_id, p.run_id, *(columns[name]
                                             for name in _MEASUREMENT_COLUMNS[2:])))
    _write(conn, schema.measurements.name, _MEASUREMENT_COLUMNS, rows)
    if samples:
        _write(conn, schema.samples.name, _SAMPLE_COLUMNS, samples, numbers_only=True)


def _json(value: dict[str, Any]) -> str:
    """A JSON column's text, as SQLAlchemy's JSON type writes it (json.dumps)."""
    return json.dumps(value) if value else "{}"


def _reserve_ids(conn: Connection, count: int) -> list[int]:
    if conn.dialect.name == "postgresql":
        return list(conn.execute(
            text("SELECT nextval(pg_get_serial_sequence(:table, 'id')) "
                 "FROM generate_series(1, :count)"),
            {"table": schema.measurements.name, "count": count}).scalars())
    largest = conn.execute(select(func.max(schema.measurements.c.id))).scalar() or 0
    return list(range(largest + 1, largest + 1 + count))


def _write(conn: Connection, table: str, columns: Sequence[str],
           rows: list[tuple[Any, ...]], numbers_only: bool = False) -> None:
    """`rows` into `table`; `numbers_only` rows (integers or None) are written to COPY
    as text directly, which needs no escaping and saves psycopg a call per row."""
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
            if numbers_only:
                copy.write("".join("\t".join("\\N" if v is None else str(int(v)) for v in row)
                                   + "\n" for row in rows))
            else:
                for row in rows:
                    copy.write_row(row)
    except psycopg.Error as exc:
        # As SQLAlchemy reports driver errors: a unique or NOT NULL violation becomes an
        # IntegrityError, the rest a DBAPIError, so the store's error handling applies.
        raise DBAPIError.instance(statement, None, exc, psycopg.Error) from None
