"""Upgrading a database written by an older pqbench, in place (schema.py keeps the history).

One step per version, run in order inside one transaction with the version bump, so a
reader sees the old schema or the new one, never half of it. The bump comes first: it is
the write that takes the database's write lock (SQLite opens its transaction on the first
write, and DDL issued after it stays inside), and it only matches the version it found,
so a second process upgrading at the same moment waits, then finds nothing left to do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import JSON, Text, bindparam, cast, inspect, select, text, update
from sqlalchemy.engine import Connection

from pqbench.data.record import codec
from pqbench.data.record.fingerprint import Fingerprint
from pqbench.data.store import bulk, schema
from pqbench.data.store.queries import IDS_PER_QUERY, chunks


def _indexes_for_fleet_queries(conn: Connection) -> None:
    """Version 1 -> 2: the indexes of `schema.RUN_INDEXES` and `schema.ROW_KEY_INDEX`."""
    for index in (*schema.RUN_INDEXES, schema.ROW_KEY_INDEX):
        index.create(conn, checkfirst=True)


#: Version 2's tables that version 3 folds into rows: per round, and per problem and check.
_SAMPLES = "pqbench_samples"
_NOTES = {"problems": ("pqbench_problems",
                       ("algorithm", "implementation", "operation", "kind", "reason")),
          "verifications": ("pqbench_verifications", ("algorithm", "implementation", "checks"))}
_ROWS = schema.measurements.name
_RUNS = schema.runs.name


def _to_version_3(conn: Connection) -> None:
    """Version 2 -> 3: rounds into their result rows, problems and checks into their runs,
    every run's label in the label column, and the result rows' foreign key replaced by
    `schema.CASCADE` (SQLite rebuilds the table, which makes the trigger)."""
    _rounds_into_rows(conn)
    _notes_into_runs(conn)
    _labels_into_their_column(conn)
    if conn.dialect.name == "postgresql":
        for key in inspect(conn).get_foreign_keys(_ROWS):
            conn.execute(text(f'ALTER TABLE {_ROWS} DROP CONSTRAINT "{key["name"]}"'))
        for statement in schema.CASCADE["postgresql"]:
            conn.execute(text(statement))


def _labels_into_their_column(conn: Connection) -> None:
    """A run stored before the label had its column (format 1) kept it in the fingerprint
    alone, so every reader of run headers read each fingerprint for it (a tenth of a
    history over 10,000 runs). It moves to the column, by the same
    definition (`Fingerprint.legacy_label`); only runs without a label are read."""
    runs = schema.runs
    moved = [{"id": run_id, "label": label} for run_id, environment in conn.execute(
                 select(runs.c.run_id, runs.c.environment).where(runs.c.label.is_(None)))
             if (label := Fingerprint(environment).legacy_label) is not None]
    if moved:
        conn.execute(update(runs).where(runs.c.run_id == bindparam("id"))
                     .values(label=bindparam("label")), moved)


def _notes_into_runs(conn: Connection) -> None:
    """Each run's problems and checks become its `schema.NOTE_COLUMNS`: JSON lists of the
    objects `codec.problem_fields` and `codec.verification_fields` make, in the order they
    were stored (by id), and the two tables go. SQLite aggregates them in that order as
    `_rounds_into_rows` says; a JSON column's text is parsed (json()) to nest it."""
    postgresql = conn.dialect.name == "postgresql"
    for column, (table, fields) in _NOTES.items():
        conn.execute(text(f"ALTER TABLE {_RUNS} ADD COLUMN {column} JSON NOT NULL "
                          "DEFAULT '[]'"))
        if postgresql:
            pairs = ", ".join(f"'{f}', {f}" for f in fields)
            notes, source = f"json_agg(json_build_object({pairs}) ORDER BY id)", table
        else:
            pairs = ", ".join(f"'{f}', {'json(checks)' if f == 'checks' else f}"
                              for f in fields)
            notes = f"json_group_array(json_object({pairs}))"
            source = f"(SELECT * FROM {table} ORDER BY run_id, id)"
        conn.execute(text(f"UPDATE {_RUNS} SET {column} = n.list FROM (SELECT run_id, "
                          f"{notes} AS list FROM {source} GROUP BY run_id) AS n "
                          f"WHERE n.run_id = {_RUNS}.run_id"))
        conn.execute(text(f"DROP TABLE {table}"))


def _rounds_into_rows(conn: Connection) -> None:
    """Each result row's samples become its round arrays (`schema.ROUND_COLUMNS`, in round
    order), and pqbench_samples goes.

    PostgreSQL alters the table in place: array_agg(... ORDER BY round_index). SQLite can
    neither add a NOT NULL column without a default nor order an aggregate (before 3.44),
    so the table is rebuilt as `schema.measurements` defines it, ids kept, and the arrays
    are json_group_array over the samples read in round order: SQLite does not flatten an
    ordered subquery into an aggregate query (the query flattener's rule 16), so the
    aggregate meets the rounds in that order."""
    arrays = ", ".join(schema.ROUND_COLUMNS)
    sources = ("ops", "elapsed_ns", "cycles")
    if conn.dialect.name == "postgresql":
        conn.execute(text(f"ALTER TABLE {_ROWS} " + ", ".join(
            f"ADD COLUMN {name} BIGINT[]" for name in schema.ROUND_COLUMNS)))
        conn.execute(text(
            f"UPDATE {_ROWS} AS m SET ({arrays}) = ("
            + ", ".join(f"s.{c}" for c in sources) + ") FROM (SELECT measurement_id, "
            + ", ".join(f"array_agg({c} ORDER BY round_index) AS {c}" for c in sources)
            + f" FROM {_SAMPLES} GROUP BY measurement_id) AS s WHERE s.measurement_id = m.id"))
        conn.execute(text(f"UPDATE {_ROWS} SET ({arrays}) = ('{{}}', '{{}}', '{{}}') "
                          "WHERE round_ops IS NULL"))
        conn.execute(text(f"ALTER TABLE {_ROWS} " + ", ".join(
            f"ALTER COLUMN {name} SET NOT NULL" for name in schema.ROUND_COLUMNS)))
        conn.execute(text(f"DROP TABLE {_SAMPLES}"))
        return
    old = f"{_ROWS}_v2"
    for index in schema.measurements.indexes:  # index names are per database in SQLite
        conn.execute(text(f"DROP INDEX IF EXISTS {index.name}"))
    # A trigger naming the table would follow it to its new name (and its end).
    conn.execute(text("DROP TRIGGER IF EXISTS pqbench_runs_delete_result_rows"))
    conn.execute(text(f"ALTER TABLE {_ROWS} RENAME TO {old}"))
    schema.measurements.create(conn)
    kept = [c.name for c in schema.measurements.c if c.name not in schema.ROUND_COLUMNS]
    conn.execute(text(
        f"INSERT INTO {_ROWS} ({', '.join(kept)}, {arrays}) SELECT "
        + ", ".join(f"m.{name}" for name in kept) + ", "
        + ", ".join(f"coalesce(s.{c}, '[]')" for c in sources)
        + " FROM " + old + " AS m LEFT JOIN (SELECT measurement_id, "
        + ", ".join(f"json_group_array({c}) AS {c}" for c in sources)
        + f" FROM (SELECT * FROM {_SAMPLES} ORDER BY measurement_id, round_index)"
        " GROUP BY measurement_id) AS s ON s.measurement_id = m.id"))
    conn.execute(text(f"DROP TABLE {_SAMPLES}"))
    conn.execute(text(f"DROP TABLE {old}"))


def _estimates_of_stored_rows(conn: Connection) -> None:
    """Version 3 -> 4: `schema.estimates` (with its delete trigger), filled from the rounds
    stored, a batch of runs at a time, by the writer's definition (`bulk.stored_estimates`)."""
    schema.estimates.create(conn)
    ids = list(conn.execute(select(schema.runs.c.run_id)).scalars())
    for batch in chunks(ids, IDS_PER_QUERY):
        bulk.write_estimates(conn, bulk.stored_estimates(conn, batch))


def _fingerprints_in_two_parts(conn: Connection) -> None:
    """Version 4 -> 5: every stored fingerprint split as the writer splits it
    (`codec.fingerprint_columns`): its shared part in `environment`, with its key, and the
    run's state in `machine_state`; a batch of runs at a time."""
    for column in ("environment_key VARCHAR(64)", "machine_state JSON"):
        conn.execute(text(f"ALTER TABLE {_RUNS} ADD COLUMN {column}"))
    runs = schema.runs
    ids = list(conn.execute(select(runs.c.run_id)).scalars())

    def json_text(name: str) -> Any:
        """A JSON value's text as written (PostgreSQL casts it; SQLite keeps text)."""
        value = bindparam(name, type_=Text)
        return cast(value, JSON) if conn.dialect.name == "postgresql" else value

    write = (update(runs).where(runs.c.run_id == bindparam("id"))
             .values(environment=json_text("environment"), environment_key=bindparam("key"),
                     machine_state=json_text("state")))
    for batch in chunks(ids, IDS_PER_QUERY):
        split = []
        for run_id, environment in conn.execute(
                select(runs.c.run_id, runs.c.environment).where(runs.c.run_id.in_(batch))):
            columns = codec.fingerprint_columns(environment)
            split.append({"id": run_id, "environment": columns["environment"],
                          "key": columns["environment_key"],
                          "state": columns["machine_state"]})
        conn.execute(write, split)


#: The step that brings a database from version N to N + 1, by N.
STEPS: dict[int, Callable[[Connection], None]] = {1: _indexes_for_fleet_queries,
                                                  2: _to_version_3,
                                                  3: _estimates_of_stored_rows,
                                                  4: _fingerprints_in_two_parts}


def upgrade(conn: Connection, found: int) -> bool:
    """Bring a database at version `found` to `schema.SCHEMA_VERSION` in the caller's
    transaction; False when another process upgraded it meanwhile (nothing done)."""
    missing = [v for v in range(found, schema.SCHEMA_VERSION) if v not in STEPS]
    if found < 1 or missing:
        raise ValueError(f"schema version {found} has no upgrade path")
    meta = schema.meta
    bumped = conn.execute(update(meta).where(meta.c.key == "schema_version",
                                             meta.c.value == str(found))
                          .values(value=str(schema.SCHEMA_VERSION)))
    if bumped.rowcount != 1:
        return False
    for version in range(found, schema.SCHEMA_VERSION):
        STEPS[version](conn)
    return True
