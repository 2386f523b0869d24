"""Upgrading a database written by an older pqbench, in place (schema.py keeps the history).

One step per version, run in order inside one transaction with the version bump, so a
reader sees the old schema or the new one, never half of it. The bump comes first: it is
the write that takes the database's write lock (SQLite opens its transaction on the first
write, and DDL issued after it stays inside), and it only matches the version it found,
so a second process upgrading at the same moment waits, then finds nothing left to do.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import update
from sqlalchemy.engine import Connection

from pqbench.store import schema


def _indexes_for_fleet_queries(conn: Connection) -> None:
    """Version 1 -> 2: the indexes of `schema.RUN_INDEXES` and `schema.ROW_KEY_INDEX`."""
    for index in (*schema.RUN_INDEXES, schema.ROW_KEY_INDEX):
        index.create(conn, checkfirst=True)


#: The step that brings a database from version N to N + 1, by N.
STEPS: dict[int, Callable[[Connection], None]] = {1: _indexes_for_fleet_queries}


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
