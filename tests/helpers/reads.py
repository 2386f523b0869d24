"""What a store is asked and what it answers, counted at the driver: every statement sent
(SQLAlchemy's `before_cursor_execute`) and every row the driver hands back (its cursor's
fetches), on SQLite and PostgreSQL alike.

`counting_store` opens a second `Store` on the same database whose driver connections
make counting cursors (sqlite3's `factory`, psycopg's `cursor_factory`): what is counted
is what crossed from the database to pqbench, whatever pqbench's own code says it read.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import create_engine, event

from pqbench.data.store import Store
from tests.helpers.old_schemas import url

if TYPE_CHECKING:
    import psycopg


@dataclass
class Reads:
    """Statements sent (their text) and rows fetched, since `clear`."""

    statements: list[str] = field(default_factory=list)
    rows: int = 0

    def clear(self) -> None:
        self.statements.clear()
        self.rows = 0

    def fetched(self, rows: Any) -> Any:
        self.rows += len(rows) if isinstance(rows, list) else rows is not None
        return rows


def _sqlite_factory(reads: Reads) -> type[sqlite3.Connection]:
    class Cursor(sqlite3.Cursor):
        def fetchone(self) -> Any:
            return reads.fetched(super().fetchone())

        def fetchmany(self, size: int = 1) -> list[Any]:
            return reads.fetched(super().fetchmany(size))  # type: ignore[no-any-return]

        def fetchall(self) -> list[Any]:
            return reads.fetched(super().fetchall())  # type: ignore[no-any-return]

        def __next__(self) -> Any:
            return reads.fetched(super().__next__())

    class Connection(sqlite3.Connection):
        def cursor(self, factory: Any = Cursor) -> Any:
            return super().cursor(factory)

    return Connection


def _psycopg_cursor(reads: Reads) -> type[psycopg.Cursor[Any]]:
    import psycopg  # only a PostgreSQL store needs it: not loaded by the SQLite tests

    class Cursor(psycopg.Cursor[Any]):
        def fetchone(self) -> Any:
            return reads.fetched(super().fetchone())

        def fetchmany(self, size: int = 0) -> list[Any]:
            return reads.fetched(super().fetchmany(size))  # type: ignore[no-any-return]

        def fetchall(self) -> list[Any]:
            return reads.fetched(super().fetchall())  # type: ignore[no-any-return]

    return Cursor


def counting_store(location: str) -> tuple[Store, Reads]:
    """A `Store` on the database at `location` (one pqbench made), and what it reads."""
    reads = Reads()
    args: dict[str, Any] = ({"cursor_factory": _psycopg_cursor(reads)} if "://" in location
                            else {"factory": _sqlite_factory(reads)})
    engine = create_engine(url(location), connect_args=args)
    event.listen(engine, "before_cursor_execute",
                 lambda _c, _cur, statement, *_: reads.statements.append(statement))
    return Store(location, engine), reads
