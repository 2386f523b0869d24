"""Writing many runs at once: each table in a few statements, not one per row.

Every table is written straight through the driver, the statements built from the
table definitions in store/schema.py, rows made as they are sent (`_write`): on SQLite
executemany of plain tuples, on PostgreSQL COPY (psycopg 3), which a row-by-row
executemany is many times slower than (each row a statement in the pipeline). A result
row carries its rounds as arrays (schema version 3), so nothing refers to a result row's
id, and the database gives it (its sequence, SQLite's rowid) as it writes the row.

Every result row is written from a run document's row (`codec.row_columns`): an import's
as `record.transfer` validated them, never made into Measurements first; a measured
Run's as its Measurements give them (`codec.stored_row`). One definition of the columns.
Each row's estimate (`record.estimates`, which `codec.row_columns` gives beside the
columns) goes to pqbench_estimates after the result rows (`EstimateRows`).

Everything happens in the caller's transaction: all runs or none.
"""

from __future__ import annotations

import itertools
import json
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from pqbench.data.record import codec
from pqbench.data.record.estimates import of_rounds
from pqbench.data.record.results import Run
from pqbench.data.store import schema
from pqbench.data.store.queries import IDS_PER_QUERY, chunks

#: Rows per SQLite executemany: bounds the memory its parameter lists take, whatever the
#: import (PostgreSQL's COPY sends rows as they are made).
ROWS_PER_STATEMENT = 10_000

_MEASUREMENT_COLUMNS = ("run_id", "algorithm", "implementation", "operation",
                        "block_size", "ops_per_sec", "us_per_op", "cycles_per_op", "counter",
                        "sizes", "attributes", *schema.ROUND_COLUMNS)
_measurement_values = operator.itemgetter(*_MEASUREMENT_COLUMNS[1:-3])
_round_values = operator.itemgetter(*schema.ROUND_COLUMNS)
_RUN_COLUMNS = tuple(c.name for c in schema.runs.c)


@dataclass(frozen=True)
class _Pending:
    """A run to write: its own row (its problems and checks in it) from `run`, or made
    already, and its result rows as a run document holds them (`codec.row_columns`
    makes their columns) or made already (`MadeRows`)."""

    run_id: str
    run: Run | tuple[Any, ...]
    results: Sequence[Any] | MadeRows

    def run_row(self) -> tuple[Any, ...]:
        return self.run if isinstance(self.run, tuple) else _run_row(self.run)


def insert_runs(conn: Connection, runs: Sequence[Run]) -> list[str]:
    """Write every run not stored yet (the first of several with one id); their ids, in
    the order given."""
    return _insert(conn, [_Pending(run.run_id, run,
                                   [codec.stored_row(m) for m in run.measurements])
                          for run in runs])


def insert_documents(conn: Connection, documents: Sequence[Mapping[str, Any]]) -> list[str]:
    """As insert_runs, for run documents `record.transfer` has validated, or their rows
    made already (`with_made_rows`)."""
    return _insert(conn, [_pending(doc) for doc in documents])


def _pending(doc: Mapping[str, Any]) -> _Pending:
    made = doc["results"]
    if isinstance(made, MadeRows):
        return _Pending(doc["run_id"], made.run, made)
    return _Pending(doc["run_id"], codec.run_from_document(doc, results=False), made)


def _insert(conn: Connection, pending: Sequence[_Pending]) -> list[str]:
    """The run rows (their problems and checks in them), the result rows, then their
    estimates: one COPY per table on PostgreSQL, an executemany per ROWS_PER_STATEMENT
    rows on SQLite."""
    fresh = _not_stored(conn, pending)
    _write(conn, schema.runs.name, _RUN_COLUMNS, (p.run_row() for p in fresh))
    estimates = EstimateRows()
    _write(conn, schema.measurements.name, _MEASUREMENT_COLUMNS,
           _rows(fresh, estimates, postgresql=conn.dialect.name == "postgresql"))
    write_estimates(conn, estimates)
    return [p.run_id for p in fresh]


def _run_row(run: Run) -> tuple[Any, ...]:
    return _row(codec.run_columns(run), _RUN_COLUMNS)


class EstimateRows:
    """The rows of pqbench_estimates (`schema.ESTIMATE_COLUMNS`) of result rows as they
    are written, kept to be written after them (one COPY a table)."""

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []

    def add(self, run_id: str, position: int, key: Sequence[Any], estimate: float | None,
            rounds: int) -> None:
        """Row `position` of run `run_id` (its place among the run's result rows), its key
        (algorithm, implementation, operation, block size), estimate and rounds counted."""
        self.rows.append((run_id, position, *key, estimate, rounds))


def write_estimates(conn: Connection, estimates: EstimateRows) -> None:
    _write(conn, schema.estimates.name, schema.ESTIMATE_COLUMNS, estimates.rows)


def stored_estimates(conn: Connection, run_ids: Sequence[str]) -> EstimateRows:
    """The estimates of stored runs (at most IDS_PER_QUERY) worked out from their stored
    rounds by the writer's definition (`record.estimates`): each run's result rows in the
    order stored (by id) give their positions."""
    m = schema.measurements
    found = EstimateRows()
    position, previous = -1, None
    for run_id, *key, ops, elapsed in conn.execute(
            select(m.c.run_id, m.c.algorithm, m.c.implementation, m.c.operation,
                   m.c.block_size, m.c.round_ops, m.c.round_elapsed_ns)
            .where(m.c.run_id.in_(list(run_ids))).order_by(m.c.run_id, m.c.id)):
        position = position + 1 if run_id == previous else 0
        previous = run_id
        found.add(run_id, position, key, *of_rounds(ops, elapsed))
    return found


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


@dataclass(frozen=True)
class MadeRows:
    """A run's rows as the store writes them (`with_made_rows`): its row of pqbench_runs,
    its rows of pqbench_measurements (the round arrays as JSON text, or as PostgreSQL's
    array literals where `postgresql`) and of pqbench_estimates. An import makes them in
    the processes that validate its files."""

    run: tuple[Any, ...]
    rows: list[tuple[Any, ...]]
    estimates: EstimateRows
    postgresql: bool = False


def with_made_rows(documents: Sequence[Mapping[str, Any]], postgresql: bool = False
                   ) -> list[dict[str, Any]]:
    """Run documents (validated) reduced to their run ids and their rows made
    (`MadeRows`, as `results`), which `insert_documents` writes as they are: the round
    arrays in the form the backend that will most likely store them takes (`postgresql`),
    so that the one process writing them does not rewrite each; the other form is
    rewritten as it is written."""
    texts = _JsonTexts()
    array = _array_literal if postgresql else _json_array
    return [{"run_id": doc["run_id"],
             "results": _made(doc["run_id"], doc["results"], texts,
                              _run_row(codec.run_from_document(doc, results=False)),
                              array=array)}
            for doc in documents]


def _made(run_id: str, results: Sequence[Any], texts: _JsonTexts, run: tuple[Any, ...] = (),
          array: Callable[[list[int | None]], str] | None = None) -> MadeRows:
    """A run's rows from its document's result rows (`codec.row_columns`): JSON columns
    as their text, the round arrays as `array` writes them (JSON text by default); each
    row's estimate beside it, at its place among the run's rows."""
    array = array or _json_array
    made = MadeRows(run, [], EstimateRows(), postgresql=array is _array_literal)
    for position, result in enumerate(results):
        columns = codec.row_columns(result)
        columns["sizes"] = texts.of(columns["sizes"])
        columns["attributes"] = texts.of(columns["attributes"])
        values = _measurement_values(columns)
        made.estimates.add(run_id, position, values[:4], columns["estimate"],
                           columns["estimate_rounds"])
        made.rows.append((run_id, *values, *map(array, _round_values(columns))))
    return made


def _rows(pending: Sequence[_Pending], estimates: EstimateRows, postgresql: bool
          ) -> Iterator[tuple[Any, ...]]:
    """The rows of pqbench_measurements for the runs' results, as tuples (made here,
    or before: `MadeRows`), the round arrays as JSON text or (PostgreSQL) its array
    literal. Each row's estimate goes to `estimates` as well."""
    texts = _JsonTexts()
    array = _array_literal if postgresql else _json_array
    for p in pending:
        if isinstance(p.results, MadeRows):
            made = p.results
            rows = (made.rows if made.postgresql == postgresql
                    else map(_with_array_literals if postgresql else _with_json_arrays,
                             made.rows))
        else:
            made = _made(p.run_id, p.results, texts, array=array)
            rows = made.rows
        estimates.rows += made.estimates.rows
        yield from rows


def _array_literal(values: list[int | None]) -> str:
    """A BIGINT[] in PostgreSQL's text form: whole numbers and NULL, nothing to quote.
    A list of whole numbers and None prints as one, but for NULL ("[1, None]": the
    spaces are allowed there)."""
    return f"{{{str(values)[1:-1].replace('None', 'NULL')}}}"


def _with_array_literals(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A row whose round arrays (its last three columns) are JSON text, with them as
    PostgreSQL's BIGINT[] literals (`_array_literal`)."""
    return (*row[:-3], *(f"{{{text[1:-1].replace('null', 'NULL')}}}" for text in row[-3:]))


def _with_json_arrays(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A row whose round arrays are PostgreSQL's literals (made for a PostgreSQL store
    that turned out to be SQLite), with them as JSON text (`_json_array`)."""
    return (*row[:-3], *(f"[{text[1:-1].replace(' ', '').replace('NULL', 'null')}]"
                         for text in row[-3:]))


def _json_array(values: list[int | None]) -> str:
    """A round array as JSON text, as json.dumps(values, separators=(",", ":")) writes it:
    a list of whole numbers and None prints as one but for the spaces and null, and
    three times as fast (a tenth of an import's writing went to json.dumps here)."""
    return str(values).replace(" ", "").replace("None", "null")


class _JsonTexts:
    """JSON columns' texts, as SQLAlchemy's JSON type writes them (json.dumps), each
    distinct value encoded once: a fleet's result rows repeat a few sizes and attributes
    (one set per algorithm), and encoding each again took a tenth of an import. A value
    is known by its items and their types (True == 1, but they encode differently); one
    holding a float (0.0 == -0.0, but they encode differently), a list or an object is
    encoded each time."""

    def __init__(self) -> None:
        self._known: dict[tuple[Any, ...], str] = {}

    def of(self, value: dict[str, Any]) -> str:
        if not value:
            return "{}"
        kinds = tuple(map(type, value.values()))
        if not _ONE_TEXT.issuperset(kinds):
            return json.dumps(value)
        key = (tuple(value.items()), kinds)  # in order: json.dumps keeps the order too
        text = self._known.get(key)
        if text is None:
            text = self._known[key] = json.dumps(value)
        return text


#: The values whose JSON text their type and value decide.
_ONE_TEXT = frozenset({str, int, bool, type(None)})


def _write(conn: Connection, table: str, columns: Sequence[str],
           rows: Iterable[tuple[Any, ...]]) -> None:
    """`rows` into `table` as they are made: on SQLite an executemany per
    ROWS_PER_STATEMENT rows; on PostgreSQL one COPY, whose rows a thread of psycopg's
    sends while the next are made, so the server checks and indexes them on the other
    core meanwhile (one COPY per table: a COPY's end waits for the server)."""
    names = ", ".join(columns)
    found = iter(rows)
    if conn.dialect.name != "postgresql":
        marks = ", ".join("?" for _ in columns)
        while chunk := list(itertools.islice(found, ROWS_PER_STATEMENT)):
            conn.exec_driver_sql(f"INSERT INTO {table} ({names}) VALUES ({marks})", chunk)
        return
    first = next(found, None)
    if first is None:
        return
    import psycopg
    from psycopg.copy import QueuedLibpqWriter

    driver = conn.connection.driver_connection
    statement = f"COPY {table} ({names}) FROM STDIN"
    try:
        with driver.cursor() as cursor, cursor.copy(  # type: ignore[union-attr]
                statement, writer=QueuedLibpqWriter(cursor)) as copy:
            for row in itertools.chain((first,), found):
                copy.write_row(row)
    except psycopg.Error as exc:
        # As SQLAlchemy reports driver errors: a unique or NOT NULL violation becomes an
        # IntegrityError, the rest a DBAPIError, so the store's error handling applies.
        raise DBAPIError.instance(statement, None, exc, psycopg.Error) from None
