"""The storage schema, one definition for SQLite and PostgreSQL.

The schema carries a version; a database written by a newer pqbench is refused, never
altered. History of versions:

1. runs, measurements with their per-round samples, problems, verifications, annotations.
2. indexes for the questions commands ask at fleet scale: runs by kind, start,
   label, OS build and testbed (the `--by` fields that are columns), result rows by their
   key (history: one row across every run). No column changed, so a version 1 database
   reads the same; `store.migrate` adds the indexes in place.
3. fewer rows for the server to write and check: a result row's rounds in the
   row itself, as three arrays (`ROUND_COLUMNS`), instead of one pqbench_samples row per
   round; and a run's problems and checks in its own row, as JSON lists the way its
   document holds them, instead of a row each in pqbench_problems and
   pqbench_verifications (a quick-suite run has 34). Each of those rows was a foreign key
   the server checked one at a time, and those checks held a PostgreSQL import to 12,000
   result rows a second. The result rows' own foreign key to their run goes too, for the
   same reason (`CASCADE`). Also, a format-1 run's label moves from its fingerprint to
   the label column, so run headers are read without parsing fingerprints.
   `store.migrate` moves them all and drops the three tables, in one transaction.
4. each run's estimate of each of its rows (`record.estimates`: the median of the row's
   ln per-round rates) in a table of its own, `pqbench_estimates`, written with the run:
   what the noise model learns a machine's spread from, read for a machine's runs in one
   query instead of every round of every row. `store.migrate` makes it and fills it from
   the rounds stored.
5. a run's fingerprint in two parts: `environment` holds what every run of a build on a
   machine shares, `machine_state` the machine's state over the run alone (the
   fingerprint's `run` part: load, others' CPU share, steal; NULL for a run without one),
   and `environment_key` names the shared part (the SHA-256 of its JSON text as stored).
   A history of 10,000 runs then reads each distinct fingerprint once, a few hundred, and
   each run's key and state. `store.migrate` splits every stored fingerprint.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    ARRAY,
    DDL,
    JSON,
    BigInteger,
    Column,
    Double,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
    event,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.schema import CreateIndex

SCHEMA_VERSION = 5
#: Version 3: a run's problems and checks, as lists in its row.
NOTE_COLUMNS = ("problems", "verifications")
#: The oldest version this pqbench reads without upgrading it first (a reader that may not
#: write cannot upgrade): version 3 moved the rounds.
READABLE_FROM = 3
APPLICATION = "pqbench"

metadata = MetaData()

meta = Table(
    "pqbench_meta", metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

runs = Table(
    "pqbench_runs", metadata,
    Column("run_id", String(64), primary_key=True),
    Column("kind", String(16), nullable=False),
    Column("started_at", String(40), nullable=False),
    Column("finished_at", String(40), nullable=False),
    Column("status", String(16), nullable=False),
    Column("label", Text),
    Column("command", Text, nullable=False),
    Column("os_build", Text),
    Column("hostname", Text),
    Column("testbed", String(64)),
    Column("settings", JSON, nullable=False),
    Column("environment", JSON, nullable=False),
    # Version 3: `codec.problem_fields` and `codec.verification_fields` of each, in order.
    # The default lets SQLite add them to a version 2 table (`store.migrate`).
    *(Column(name, JSON, nullable=False, server_default=text("'[]'"))
      for name in NOTE_COLUMNS),
    # Version 5 (`codec.run_columns`): the shared part's key, and the run's own state.
    Column("environment_key", String(64)),
    Column("machine_state", JSON),
)

# Version 2. Labels and OS builds are free text up to 1,000 and 10,000 characters, longer
# than a PostgreSQL B-tree entry may be (about 2,700 bytes): there they get hash indexes,
# which hold a 4-byte hash and serve the equality and IN (...) filters `--by` asks.
# (`USING`, in each index's info: `_using_on_postgresql` gives it.)
USING = "postgresql_using"
RUN_INDEXES = (
    Index("ix_pqbench_runs_kind", runs.c.kind),
    Index("ix_pqbench_runs_started_at", runs.c.started_at),
    Index("ix_pqbench_runs_testbed", runs.c.testbed),
    Index("ix_pqbench_runs_label", runs.c.label, info={USING: "hash"}),
    Index("ix_pqbench_runs_os_build", runs.c.os_build, info={USING: "hash"}),
)


@compiles(CreateIndex, "postgresql")
def _using_on_postgresql(create: CreateIndex, compiler: Any, **kw: Any) -> str:
    """An index's CREATE INDEX on PostgreSQL, with the access method its info names
    (`USING`). Given here, as the statement is made for PostgreSQL, not as the index's
    `postgresql_using` where it is declared: SQLAlchemy checks a dialect's option against
    that dialect, so declaring one loads PostgreSQL's dialect into every process that
    imports the schema, one that reads a SQLite store too."""
    index = create.element
    if USING in index.info:
        index.dialect_options["postgresql"]["using"] = index.info[USING]
    return str(compiler.visit_create_index(create, **kw))


class _RoundArray(TypeDecorator[list[int | None]]):
    """BIGINT[] read as psycopg gives it: a list of ints and None, as written. SQLAlchemy's
    ARRAY would walk every array again to apply its elements' conversion, which BIGINT does
    not have: a third of a second of a history's rates over 10,000 runs."""

    impl = ARRAY(BigInteger)
    cache_ok = True

    def result_processor(self, dialect: Dialect, coltype: object) -> None:
        return None


#: Version 3: a result row's rounds (`round_ops`, `round_elapsed_ns`, `round_cycles`), one
#: element per round in round order: on PostgreSQL a BIGINT[] (SQL reads `round_ops[1]`,
#: `unnest(...)`), on SQLite a JSON array (`json_each(...)`). A round that counted no
#: cycles has NULL there; a row without rounds (a memory run's) has empty arrays.
ROUND_ARRAY = JSON().with_variant(_RoundArray(), "postgresql")
#: The columns holding a result row's rounds, in `codec.row_columns`' order.
ROUND_COLUMNS = ("round_ops", "round_elapsed_ns", "round_cycles")

measurements = Table(
    "pqbench_measurements", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), nullable=False, index=True),  # `CASCADE`, not a key
    Column("algorithm", Text, nullable=False),
    Column("implementation", Text, nullable=False),
    Column("operation", Text, nullable=False),
    Column("block_size", Integer),
    Column("ops_per_sec", Float, nullable=False),
    Column("us_per_op", Float, nullable=False),
    Column("cycles_per_op", Float),
    Column("counter", Text),
    Column("sizes", JSON, nullable=False),
    Column("attributes", JSON, nullable=False),
    *(Column(name, ROUND_ARRAY, nullable=False) for name in ROUND_COLUMNS),
)

def _deleted_with_their_run(table: Table, what: str) -> dict[str, tuple[str, ...]]:
    """The trigger (on PostgreSQL with its function) that deletes a run's rows of `table`
    when the run is deleted, per dialect; made with the table."""
    function, trigger = f"pqbench_delete_{what}", f"pqbench_runs_delete_{what}"
    delete = f"DELETE FROM {table.name} WHERE run_id = OLD.run_id;"
    statements = {
        "postgresql": (
            f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN {delete} RETURN OLD; END $$",
            f"CREATE TRIGGER {trigger} AFTER DELETE ON pqbench_runs "
            f"FOR EACH ROW EXECUTE FUNCTION {function}()"),
        "sqlite": (f"CREATE TRIGGER IF NOT EXISTS {trigger} AFTER DELETE ON pqbench_runs "
                   f"FOR EACH ROW BEGIN {delete} END",),
    }
    for dialect, made in statements.items():
        for statement in made:
            event.listen(table, "after_create", DDL(statement).execute_if(dialect=dialect))
    return statements


#: Version 3: deleting a run deletes its result rows (what ON DELETE CASCADE did), by a
#: trigger instead of a foreign key. The key's check ran once per row as COPY wrote them,
#: an eighth of a PostgreSQL import; pqbench writes a run and its rows in one transaction,
#: the run first, so the check found nothing to refuse. Made with the table (and by
#: `store.migrate`), per dialect.
CASCADE = _deleted_with_their_run(measurements, "result_rows")

#: Version 2: a row key across every run (history), the algorithm alone (the names stored).
#: Names are at most 200 characters, so the three fit one B-tree entry on PostgreSQL.
ROW_KEY_INDEX = Index("ix_pqbench_measurements_key", measurements.c.algorithm,
                      measurements.c.implementation, measurements.c.operation)


#: Version 4: per run, its estimate of each of its result rows (`record.estimates`), the
#: row's key, and how many rounds the estimate rests on (those with operations). NULL for
#: a row without one (no timed round, as a memory run's rows; or a round without elapsed
#: time): the run measured the row, and the model knows the row. `position` is the row's
#: place in its run (its result rows in the order stored), so a run that measured one key
#: twice keeps two estimates in that order. The key (run_id, position) is the table's
#: order on SQLite (WITHOUT ROWID: a run's estimates lie together) and the index that
#: finds a machine's runs on PostgreSQL.
estimates = Table(
    "pqbench_estimates", metadata,
    Column("run_id", String(64), primary_key=True),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("algorithm", Text, nullable=False),
    Column("implementation", Text, nullable=False),
    Column("operation", Text, nullable=False),
    Column("block_size", Integer),
    Column("estimate", Double),
    Column("rounds", Integer, nullable=False),
    sqlite_with_rowid=False,
)
#: The columns `store.bulk` writes, in order.
ESTIMATE_COLUMNS = tuple(c.name for c in estimates.c)

#: Version 4: deleting a run deletes its estimates, as `CASCADE` does its result rows.
ESTIMATES_CASCADE = _deleted_with_their_run(estimates, "estimates")


build_notes = Table(
    "pqbench_annotations", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("build", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("created_at", String(40), nullable=False),
    UniqueConstraint("build", "text"),
)
