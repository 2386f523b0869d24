"""Stores as older pqbench versions left them, for the upgrade tests (`store.migrate`).

`as_version` turns a store the current pqbench wrote into the one schema 1, 2, 3 or 4
would have written for the same runs: version 4 with each fingerprint whole in its
environment column (its state in its `run` part); version 3 also without
pqbench_estimates (and its delete trigger); versions 1 and 2 also with the tables as
version 2 defined them, frozen here: each result row's rounds one row apiece in
pqbench_samples, each run's problems and checks one row apiece in pqbench_problems and
pqbench_verifications, the arrays and lists gone, the result rows' foreign key to their
run instead of version 3's trigger (PostgreSQL), and for version 1 without the indexes
version 2 added. The samples go in shuffled, so only their round_index says which round
each one was; problems and checks go turn by turn across runs and the last first, so only
their ids give each run's order.
"""

from __future__ import annotations

import random
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    func,
    select,
    text,
    update,
)

from pqbench.data.store import schema

_frozen = MetaData()
Table("pqbench_runs", _frozen, Column("run_id", String(64), primary_key=True))
Table("pqbench_measurements", _frozen, Column("id", Integer, primary_key=True))
#: pqbench_samples as schema versions 1 and 2 defined it.
SAMPLES = Table(
    "pqbench_samples", _frozen,
    Column("measurement_id", Integer, ForeignKey("pqbench_measurements.id", ondelete="CASCADE"),
           primary_key=True),
    Column("round_index", Integer, primary_key=True),
    Column("ops", BigInteger, nullable=False),
    Column("elapsed_ns", BigInteger, nullable=False),
    Column("cycles", BigInteger),
)


def _notes_table(name: str, *columns: Column[Any]) -> Table:
    """pqbench_problems or pqbench_verifications as schema versions 1 and 2 defined it:
    a row per problem or check of a run's algorithm and implementation."""
    return Table(
        name, _frozen,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("run_id", String(64), ForeignKey("pqbench_runs.run_id", ondelete="CASCADE"),
               nullable=False, index=True),
        Column("algorithm", Text, nullable=False),
        Column("implementation", Text, nullable=False),
        *columns)


NOTES = {
    "problems": _notes_table("pqbench_problems", Column("operation", Text),
                             Column("kind", String(32), nullable=False),
                             Column("reason", Text, nullable=False)),
    "verifications": _notes_table("pqbench_verifications",
                                  Column("checks", JSON, nullable=False)),
}


def url(location: str) -> str:
    if "://" not in location:
        return f"sqlite:///{location}"
    return location.replace("postgresql://", "postgresql+psycopg://")


def as_version(location: str, version: int, seed: int = 0) -> list[dict[str, Any]]:
    """The store at `location` as schema `version` (1 to 4) holds it; the samples
    written (none for versions 3 and 4), as (measurement_id, round_index, ops, elapsed_ns,
    cycles) mappings."""
    m = schema.measurements
    engine = create_engine(url(location))
    with engine.begin() as conn:
        _fingerprints_whole(conn)
        if version == 4:
            conn.execute(update(schema.meta).where(schema.meta.c.key == "schema_version")
                         .values(value="4"))
            engine.dispose()
            return []
        if conn.dialect.name == "postgresql":
            conn.execute(text("DROP TRIGGER pqbench_runs_delete_estimates ON pqbench_runs"))
            conn.execute(text("DROP FUNCTION pqbench_delete_estimates()"))
        else:
            conn.execute(text("DROP TRIGGER pqbench_runs_delete_estimates"))
        conn.execute(text(f"DROP TABLE {schema.estimates.name}"))
        if version == 3:
            conn.execute(update(schema.meta).where(schema.meta.c.key == "schema_version")
                         .values(value="3"))
            engine.dispose()
            return []
        rows = conn.execute(select(m.c.id, *(m.c[name] for name in schema.ROUND_COLUMNS))).all()
        samples = [{"measurement_id": row_id, "round_index": i, "ops": ops,
                    "elapsed_ns": ns, "cycles": cycles}
                   for row_id, *arrays in rows
                   for i, (ops, ns, cycles) in enumerate(zip(*arrays, strict=True))]
        random.Random(seed).shuffle(samples)
        SAMPLES.create(conn)
        if samples:
            conn.execute(SAMPLES.insert(), samples)
        for name in schema.ROUND_COLUMNS:
            conn.execute(text(f"ALTER TABLE {m.name} DROP COLUMN {name}"))
        # The result rows' foreign key instead of version 3's trigger (SQLite cannot add
        # a key to a table; the upgrade rebuilds that table anyway).
        if conn.dialect.name == "postgresql":
            conn.execute(text("DROP TRIGGER pqbench_runs_delete_result_rows ON pqbench_runs"))
            conn.execute(text("DROP FUNCTION pqbench_delete_result_rows()"))
            conn.execute(text(f"ALTER TABLE {m.name} ADD FOREIGN KEY (run_id) REFERENCES "
                              "pqbench_runs (run_id) ON DELETE CASCADE"))
        else:
            conn.execute(text("DROP TRIGGER pqbench_runs_delete_result_rows"))
        for name, table in NOTES.items():
            lists = [notes for (notes,) in conn.execute(select(schema.runs.c[name])
                                                        .order_by(schema.runs.c.run_id))]
            ids = list(conn.execute(select(schema.runs.c.run_id)
                                    .order_by(schema.runs.c.run_id)).scalars())
            table.create(conn)
            turns = [{"run_id": run_id, **notes[turn]}
                     for turn in range(max(map(len, lists), default=0))
                     for run_id, notes in zip(ids, lists, strict=True) if turn < len(notes)]
            if turns:  # the last first: the rows lie against the order of their ids
                conn.execute(table.insert(), [{"id": n, **row} for n, row in
                                              reversed(list(enumerate(turns, start=1)))])
            conn.execute(text(f"ALTER TABLE {schema.runs.name} DROP COLUMN {name}"))
        if version < 2:
            for index in (*schema.RUN_INDEXES, schema.ROW_KEY_INDEX):
                index.drop(conn)
        conn.execute(update(schema.meta).where(schema.meta.c.key == "schema_version")
                     .values(value=str(version)))
    engine.dispose()
    return samples


def _fingerprints_whole(conn: Any) -> None:
    """Each run's fingerprint in its environment column, its state (`machine_state`) back
    in its `run` part, and version 5's two columns gone."""
    runs = schema.runs
    for run_id, environment, state in conn.execute(
            select(runs.c.run_id, runs.c.environment, runs.c.machine_state)).all():
        whole = {**environment, **({"run": state} if state is not None else {})}
        conn.execute(update(runs).where(runs.c.run_id == run_id).values(environment=whole))
    for name in ("environment_key", "machine_state"):
        conn.execute(text(f"ALTER TABLE {runs.name} DROP COLUMN {name}"))


def layout(location: str) -> dict[str, Any]:
    """The tables, each one's columns (name, nullable), indexes and foreign keys, the
    triggers, and the version."""
    from sqlalchemy import inspect

    engine = create_engine(url(location))
    with engine.connect() as conn:
        found = inspect(conn)
        tables = {name: {"columns": [(c["name"], c["nullable"]) for c in found.get_columns(name)],
                         "indexes": sorted(i["name"] for i in found.get_indexes(name)),
                         "keys": sorted((k["constrained_columns"][0], k["referred_table"])
                                        for k in found.get_foreign_keys(name))}
                  for name in sorted(found.get_table_names())}
        triggers = sorted(conn.execute(text(
            "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"
            if conn.dialect.name == "postgresql" else
            "SELECT name FROM sqlite_master WHERE type = 'trigger'")).scalars())
        version = conn.execute(select(schema.meta.c.value)
                               .where(schema.meta.c.key == "schema_version")).scalar()
    engine.dispose()
    return {"tables": tables, "triggers": triggers, "version": version}


def delete_run(location: str, run_id: str) -> dict[str, int]:
    """Delete a run with SQL, as a user might; the rows left of it, per table."""
    engine = create_engine(url(location))
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM pqbench_runs WHERE run_id = :id"), {"id": run_id})
        left = {table.name: conn.execute(select(func.count()).select_from(table)
                                         .where(table.c.run_id == run_id)).scalar_one()
                for table in (schema.runs, schema.measurements, schema.estimates)}
    engine.dispose()
    return left
