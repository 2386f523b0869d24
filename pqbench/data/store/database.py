"""The results database: the only SQL, for SQLite and PostgreSQL alike.

A run is written in one transaction, so a reader never sees half a run, and an existing
file that is not a pqbench database is refused, never overwritten, and one written by an
older pqbench is upgraded in place (`store.migrate`). Rows become records and back through
`record.codec` alone; writes go table by table (`store.bulk`) and reads ask for what a
command needs (`store.queries`), never one query per run or per row.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from sqlalchemy import Text, cast, create_engine, event, inspect, select, text
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.exc import (
    DBAPIError,
    IntegrityError,
    OperationalError,
    ProgrammingError,
    SQLAlchemyError,
)

from pqbench.data.record import codec
from pqbench.data.record.results import Run
from pqbench.data.store import queries, schema
from pqbench.data.store.location import (
    TIMEOUT_VAR,
    is_postgresql,
    is_sqlite_uri,
    is_url,
    lock_timeout,
    resolve_location,
    sqlite_path,
)
from pqbench.data.store.queries import LIGHT_FIELDS, RunFilter
from pqbench.platform.errors import StoreError, UsageError
from pqbench.platform.untrusted import passwords_in, redact, split_userinfo

if TYPE_CHECKING:
    from pqbench.data.store.rates import RowEstimates, RowRates

__all__ = ["LIGHT_FIELDS", "RunFilter", "RunInfo", "Store"]

_SQLITE_MAGIC = b"SQLite format 3\x00"
#: A statement may run this many times PQBENCH_DB_TIMEOUT on PostgreSQL (a lock wait ends
#: after PQBENCH_DB_TIMEOUT).
STATEMENT_TIMEOUTS = 2
#: pg_advisory_xact_lock key held while creating the schema ("pqbench" as an integer).
_SCHEMA_LOCK_KEY = 0x7071626E6368


def _libpq_location(location: str) -> str:
    """What libpq is given: a keyword string as it is; a URL with its user and password
    percent-encoded as `untrusted.split_userinfo` reads them (a password typed with a raw
    "@", "/", "?", "#" or space reaches the server whole, and the driver never quotes a
    piece of it as a host name). Hosts, ports (several, comma-separated), the database
    and the query go to libpq as typed: its URI grammar is the one that connects."""
    scheme, found, rest = location.partition("://")
    parts = split_userinfo(rest) if found else None
    if parts is None:
        return location
    user, password, after = parts
    encoded = quote(unquote(user), safe="")
    if password is not None:
        encoded += ":" + quote(unquote(password), safe="")
    return f"{scheme}://{encoded}@{after}"


def _check_sqlite_file(path: Path, for_writing: bool) -> None:
    """Refuse anything that is not a pqbench (or empty) SQLite file, before SQLite opens it."""
    try:
        exists = path.exists()
    except OSError as exc:
        raise StoreError(f"cannot reach {path}: {exc.strerror}") from None
    if exists:
        if not path.is_file():
            raise StoreError(f"{path} is not a regular file; choose a database file with --db")
        try:
            with path.open("rb") as handle:
                head = handle.read(len(_SQLITE_MAGIC))
        except PermissionError:
            raise StoreError(f"cannot read {path}: permission denied") from None
        except OSError as exc:  # /proc/self/mem: a file whose reads fail
            raise StoreError(f"cannot read {path}: {exc.strerror or exc}; choose a database "
                             "file with --db") from None
        if head and head != _SQLITE_MAGIC:
            raise StoreError(f"{path} is not a pqbench database (not an SQLite file); "
                             "it was left untouched")
        if for_writing and not os.access(path, os.W_OK):
            raise StoreError(f"cannot write to {path}: permission denied")
    elif not for_writing:
        raise StoreError(f"no pqbench database at {path} yet; `pqbench speed` creates it")
    else:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the database directory {path.parent}: "
                             f"{exc.strerror}") from None
        if not os.access(path.parent, os.W_OK):
            raise StoreError(f"cannot create {path}: directory {path.parent} is not writable")


#: The JSON columns a read decodes, and how a message names a value of each.
_JSON_COLUMNS = (
    *((schema.runs, name, f"the {name}") for name in
      ("settings", "environment", "machine_state", *schema.NOTE_COLUMNS)),
    *((schema.measurements, name, f"the {name} of a result row") for name in
      ("sizes", "attributes", *schema.ROUND_COLUMNS)),
)


def _unbounded_statements(conn: Connection) -> None:
    """Lift the statement timeout for this transaction (PostgreSQL): an upgrade or an
    import's COPY runs as long as the data is large; every wait for a lock in it still
    ends after PQBENCH_DB_TIMEOUT (lock_timeout)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SET LOCAL statement_timeout = 0"))


def _write_failed(exc: BaseException) -> bool:
    """SQLite could not write: the disk (or the file size limit) is full, or I/O failed."""
    text = str(getattr(exc, "orig", exc))
    return "disk is full" in text or "disk I/O error" in text


def _describe(exc: BaseException, location: str, secrets: list[str]) -> str:
    """The driver's message, with any password it quotes redacted (psycopg and SQLAlchemy
    may echo the connection string)."""
    text = redact(str(getattr(exc, "orig", exc)), secrets)
    state = getattr(getattr(exc, "orig", None), "sqlstate", None)
    if "locked" in text or state == "55P03":  # SQLite's busy timeout, PostgreSQL's lock_timeout
        return (f"the database {location} is locked by another process: waited "
                f"{lock_timeout():g} s ({TIMEOUT_VAR} sets how long); try again later")
    if state == "57014" and "statement timeout" in text:
        return (f"the database {location} did not answer within "
                f"{STATEMENT_TIMEOUTS * lock_timeout():g} s "
                f"({TIMEOUT_VAR} sets how long); try again later")
    if "readonly" in text or "read-only" in text:
        return f"the database {location} is read-only"
    if "malformed" in text or "file is not a database" in text:
        return (f"the database {location} is damaged ({text}); pqbench left it as it is: "
                "restore it from a backup or an export")
    return f"database error on {location}: {text}"


@dataclass(frozen=True)
class RunInfo:
    """One line of `pqbench runs`."""

    run_id: str
    kind: str
    started_at: str
    status: str
    label: str | None
    os_build: str | None
    hostname: str | None
    measurements: int



class Store:
    """A results database at a path or URL.

    `location` is what may be shown: the URL with its password redacted. The URL itself
    stays inside the engine.
    """

    def __init__(self, location: str, engine: Engine) -> None:
        self.location = redact(location)
        self._secrets = passwords_in(location)
        self.engine = engine
        # A database without pqbench's tables opened only to read (an empty PostgreSQL
        # database, an SQLite file with no tables): it holds no runs, and reads say so.
        self._empty = False
        # A new SQLite file this process makes (removed again when making it fails), and
        # whether its schema still waits to be made (`_create_later`).
        self._new_file: Path | None = None
        self._pending = False
        # The schema version read as it is: older than `schema.SCHEMA_VERSION` only where
        # this user may not upgrade it (`_upgrade`).
        self._version = schema.SCHEMA_VERSION

    # --- opening --------------------------------------------------------------------------

    @classmethod
    def open(cls, db: str | None = None, *, create: bool = True) -> Store:
        location = resolve_location(db)
        path = None
        if not is_postgresql(location):
            if is_url(location) and not location.startswith("sqlite:"):
                raise StoreError(f"unsupported database URL {redact(location)!r}: use a "
                                 "file path, sqlite:///PATH or postgresql://USER@HOST/DB")
            path = sqlite_path(location)
            _check_sqlite_file(path, for_writing=create)
        new_file = path if path is not None and create and not path.exists() else None
        timeout = lock_timeout()
        try:
            engine = cls._engine(location, path, timeout)
        except (SQLAlchemyError, ImportError, ValueError) as exc:
            raise StoreError(f"cannot open the database {redact(location)}: "
                             f"{redact(str(exc), passwords_in(location))}") from None
        store = cls(location, engine)
        store._new_file = new_file
        store._validate(create)
        return store

    @staticmethod
    def _engine(location: str, path: Path | None, timeout: float) -> Engine:
        if path is not None:
            # The path as a URL's database field, never parsed: "?", "#" and "%" in a
            # file name stay part of it. SQLite's own URI form goes as it is.
            url = (location if is_sqlite_uri(location)
                   else URL.create("sqlite", database=str(path.resolve())))
            engine = create_engine(url, connect_args={"timeout": timeout},
                                   json_deserializer=codec.json_value)

            @event.listens_for(engine, "connect")
            def _pragmas(dbapi_conn: Any, _record: Any) -> None:
                cursor = dbapi_conn.cursor()
                cursor.execute("PRAGMA foreign_keys=ON")
                # 64 MiB of page cache (the default is 2 MiB): the result-row indexes of a
                # fleet's history are larger than that, and imports update them in key order.
                cursor.execute("PRAGMA cache_size=-65536")
                cursor.close()

            return engine
        import psycopg
        from psycopg.conninfo import conninfo_to_dict

        try:  # a malformed location (an unbalanced quote) fails here, not at connect
            params = conninfo_to_dict(_libpq_location(location))
        except psycopg.Error as exc:
            raise ValueError(f"not a valid libpq connection string: {exc}") from None
        # libpq reads the location (`_libpq_location`): several hosts, its URI grammar.
        engine = create_engine("postgresql+psycopg://", pool_pre_ping=True,
                               connect_args=params, json_deserializer=codec.json_value)
        milliseconds = max(1, math.ceil(timeout * 1000))

        @event.listens_for(engine, "connect")
        def _timeouts(dbapi_conn: Any, _record: Any) -> None:
            # PQBENCH_DB_TIMEOUT bounds the session's waits as SQLite's busy timeout does:
            # a lock another session holds is waited for that long (lock_timeout), any
            # one statement runs at most twice that (statement_timeout: a lock wait ends
            # first, and is said as one), so a command ends with a clear error, not a
            # hang. Set as session defaults, committed, so no rollback takes them back.
            with dbapi_conn.cursor() as cursor:
                cursor.execute(f"SET lock_timeout = {milliseconds}")
                cursor.execute(f"SET statement_timeout = {STATEMENT_TIMEOUTS * milliseconds}")
            dbapi_conn.commit()

        return engine

    def _validate(self, create: bool) -> None:
        try:
            with self.engine.connect() as conn:
                tables = set(inspect(conn).get_table_names())
                # Tables without meta rows: another process creating the schema right now
                # (SQLite commits DDL before the meta rows), or a creation cut short; it
                # holds no runs, so a writer finishes it and a reader finds nothing.
                # The runs are read first and the meta rows after: each read sees what
                # was committed when it ran, and a creator commits the meta rows before
                # any run is stored, so a run seen means its meta rows are seen next
                # (read the other way round, a creator's meta rows and first run
                # committed between the two reads looked like a damaged database).
                has_runs = schema.runs.name in tables and conn.execute(
                    select(schema.runs.c.run_id).limit(1)).first() is not None
                if has_runs:
                    tables = set(inspect(conn).get_table_names())
                stamped = schema.meta.name in tables and conn.execute(
                    select(schema.meta.c.key)).first() is not None
                if not stamped and has_runs:
                    raise StoreError(
                        f"{self.location} holds pqbench runs but no schema version (its "
                        f"{schema.meta.name} table is "
                        f"{'empty' if schema.meta.name in tables else 'missing'}): pqbench "
                        "cannot tell how to read it, so it left it untouched; restore it "
                        "from a backup or an export")
                version = self._check_meta(conn) if stamped else None
            if version is not None:
                if version < schema.SCHEMA_VERSION:
                    self._version = version
                    self._upgrade(version, create)
                return
            foreign = {t for t in tables if not t.startswith("pqbench_")}
            if foreign and self.engine.dialect.name == "sqlite":
                raise StoreError(f"{self.location} is an SQLite database but not a pqbench "
                                 "one; it was left untouched")
            if create:
                self._create_new()
            else:
                self._empty = True
        except (SQLAlchemyError, ValueError) as exc:
            raise StoreError(_describe(exc, self.location, self._secrets)) from None

    def _create_new(self) -> None:
        """Create the schema. A new file that cannot be written (a full disk, a file size
        limit) is removed again, never left half made for every later command to refuse;
        the schema is then made when the first run is stored (`_create_later`), and a run
        that cannot be stored either goes to a recovery file (`store_or_keep`)."""
        try:
            self._initialize()
        except OperationalError as exc:
            if self._new_file is None or not _write_failed(exc):
                raise
            self._remove_new_file()
            self._pending = self._empty = True

    def _create_later(self) -> None:
        if not self._pending:
            return
        try:
            self._initialize()
        except (OperationalError, ProgrammingError, IntegrityError) as exc:
            self._remove_new_file()
            raise StoreError(_describe(exc, self.location, self._secrets)) from None
        self._pending = self._empty = False

    def _remove_new_file(self) -> None:
        self.engine.dispose()
        if self._new_file is not None:
            for suffix in ("", "-journal", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.unlink(f"{self._new_file}{suffix}")

    def _check_meta(self, conn: Connection) -> int:
        rows = dict(conn.execute(select(schema.meta.c.key, schema.meta.c.value)).all())
        if rows.get("application") != schema.APPLICATION:
            raise StoreError(f"{self.location} is not a pqbench database; left untouched")
        found = rows.get("schema_version")
        try:
            version = int(str(found).strip())
        except ValueError:
            raise StoreError(f"{self.location} names a schema version pqbench does not know "
                             f"({str(found)[:40]!r}); it was left untouched: restore it from "
                             "a backup or an export") from None
        if version > schema.SCHEMA_VERSION:
            raise StoreError(
                f"{self.location} was written by a newer pqbench (schema {version}; this "
                f"pqbench reads up to {schema.SCHEMA_VERSION}); upgrade pqbench to use it")
        return version

    def _upgrade(self, found: int, create: bool) -> None:
        """Upgrade an older schema in one transaction (`store.migrate`). A reader that may
        not write (a read-only file, a role without DDL rights) reads a schema from
        `schema.READABLE_FROM` on as it is (what the later upgrades changed is how fast);
        an older one it cannot read, and is told who can upgrade it."""
        try:
            with self.engine.begin() as conn:
                _unbounded_statements(conn)
                from pqbench.data.store import migrate  # only an older store's

                migrate.upgrade(conn, found)
            self._version = schema.SCHEMA_VERSION
        except (OperationalError, ProgrammingError, DBAPIError):
            if create:
                raise
            if found < schema.READABLE_FROM:
                raise StoreError(
                    f"{self.location} was written by an older pqbench (schema {found}) and "
                    f"needs a one-time upgrade to schema {schema.SCHEMA_VERSION}, which this "
                    "user may not make; any pqbench command (`pqbench runs`, say) run once "
                    "by a user who may write to it upgrades it") from None
        except ValueError as exc:
            raise StoreError(f"{self.location}: {exc}; it was left untouched") from None

    def _initialize(self) -> None:
        """Create the schema; safe when several processes open a new database at once.

        PostgreSQL: a transaction-scoped advisory lock serialises the creators, and DDL is
        transactional, so the second creator finds the tables made. SQLite runs DDL outside
        the transaction; a creator that loses the race sees "already exists" and retries.
        """
        deadline = time.monotonic() + 30
        while True:
            try:
                self._create_schema()
                return
            except (OperationalError, ProgrammingError, IntegrityError) as exc:
                # Another creator made some tables meanwhile; the next pass skips them.
                # A write that failed (a full disk) is no race: waiting will not help.
                if time.monotonic() > deadline or _write_failed(exc):
                    raise
                time.sleep(0.02 + random.random() * 0.05)

    def _create_schema(self) -> None:
        with self.engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                             {"key": _SCHEMA_LOCK_KEY})
            schema.metadata.create_all(conn)
            rows = [{"key": "application", "value": schema.APPLICATION},
                    {"key": "schema_version", "value": str(schema.SCHEMA_VERSION)}]
            # Two creators may both get here on SQLite: the second one's rows are no-ops.
            conn.execute(_dialect_insert(conn, schema.meta).on_conflict_do_nothing(), rows)

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        try:
            with self.engine.begin() as conn:
                yield conn
        except (DBAPIError, SQLAlchemyError) as exc:
            if isinstance(exc, IntegrityError):
                raise
            raise StoreError(_describe(exc, self.location, self._secrets)) from None
        except UnicodeEncodeError:  # a text that is not UTF-8: nothing was written
            raise StoreError(f"a text of the run is not valid UTF-8, which {self.location} "
                             "cannot hold; nothing was written") from None

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        """A connection to read with: a driver error, or a stored value that does not
        decode (a damaged file), becomes a StoreError that names the database."""
        try:
            with self.engine.connect() as conn:
                yield conn
        except (DBAPIError, SQLAlchemyError) as exc:
            raise StoreError(_describe(exc, self.location, self._secrets)) from None
        except (ValueError, KeyError, TypeError) as exc:
            raise self._unreadable(exc) from None

    def _unreadable(self, exc: Exception) -> StoreError:
        """The error for a stored value that does not decode (the driver decodes JSON
        columns as it fetches, so the row is not known there): the value found again,
        named by its run and column, as `codec.unreadable` words it everywhere."""
        for table, name, owner in _JSON_COLUMNS:
            if name in schema.ROUND_COLUMNS and self.engine.dialect.name != "sqlite":
                continue  # PostgreSQL keeps rounds as BIGINT[], not JSON
            query = select(table.c.run_id, cast(table.c[name], Text))
            with contextlib.suppress(DBAPIError, SQLAlchemyError), self.engine.connect() as conn:
                for run_id, value in conn.execute(query):
                    if value is None:
                        continue  # a column that may be empty (`machine_state`)
                    try:
                        json.loads(value)
                    except (TypeError, ValueError) as found:
                        return codec.unreadable(f"{owner} of run {run_id}", str(found))
        return codec.unreadable(f"a value stored in {self.location}", str(exc))

    def close(self) -> None:
        self.engine.dispose()

    # --- writing --------------------------------------------------------------------------

    def save_run(self, run: Run) -> bool:
        """Store a run in one transaction; False when a run with this id is already stored."""
        return bool(self.save_runs([run]))

    def save_runs(self, runs: Sequence[Run]) -> list[str]:
        """Store every run not stored yet, all in one transaction: either all of them are
        written or none is. Returns the ids written; runs already stored are skipped."""
        from pqbench.data.store import bulk  # writers' alone: a reader starts without it

        return self._save(lambda conn: bulk.insert_runs(conn, runs),
                          lambda: [run.run_id for run in runs])

    def save_documents(self, documents: Sequence[Mapping[str, Any]]) -> list[str]:
        """As save_runs, for run documents `record.transfer.read_documents` validated: the
        rows are written straight from them (an import of a fleet's runs)."""
        from pqbench.data.store import bulk

        return self._save(lambda conn: bulk.insert_documents(conn, documents),
                          lambda: [doc["run_id"] for doc in documents])

    def save_batches(self, batches: Iterable[Sequence[Mapping[str, Any]]]) -> list[str]:
        """As save_documents, for documents that arrive in batches (an import's files,
        made in other processes): each batch written as it arrives, so the store writes
        one file's rows while the next are made, all of them in one transaction. An
        exception from `batches` rolls back what was written, and goes on up."""
        from pqbench.data.store import bulk

        source, had = iter(batches), list[Sequence[Mapping[str, Any]]]()

        def arriving() -> Iterator[Sequence[Mapping[str, Any]]]:
            yield from had  # a second attempt writes the batches had again
            for batch in source:
                had.append(batch)
                yield batch

        def insert(conn: Connection) -> list[str]:
            return [run_id for batch in arriving()
                    for run_id in bulk.insert_documents(conn, batch)]

        return self._save(insert, lambda: [doc["run_id"] for batch in had for doc in batch])

    def discard_if_unused(self) -> None:
        """The SQLite file this process made, removed again where it holds no run (an
        import whose files were refused after it began writing), as a creation that
        failed is (`_create_later`); any other store is left as it is."""
        if self._new_file is None:
            return
        with self._reading() as conn:
            if conn.execute(select(schema.runs.c.run_id).limit(1)).first() is not None:
                return
        self._remove_new_file()

    def _save(self, insert: Callable[[Connection], list[str]],
              run_ids: Callable[[], list[str]]) -> list[str]:
        self._create_later()
        problem = ""
        for _attempt in range(3):
            try:
                with self._transaction() as conn:
                    _unbounded_statements(conn)
                    return insert(conn)
            except IntegrityError as exc:
                problem = _describe(exc, self.location, self._secrets)
                if not self._stored_meanwhile(run_ids()):
                    break  # not a race with another writer: a row the table refuses
                # another writer stored one of these meanwhile: skip it next time
        raise StoreError(f"nothing was written ({problem}); if other writers are storing "
                         "the same runs, try again")

    def stored_otherwise(self, documents: Sequence[Mapping[str, Any]]) -> list[str]:
        """The ids of the run documents (validated) whose run is stored with other
        contents: the stored run's document differs from theirs. An import skips a run
        already stored; one that differs is a conflict to report, not a copy."""
        if not documents:
            return []
        ids = tuple(doc["run_id"] for doc in documents)
        stored = {run.run_id: codec.run_document(run)
                  for run in self.load_runs(RunFilter(ids=ids))}
        return [doc["run_id"] for doc in documents
                if stored.get(doc["run_id"]) != codec.run_document(codec.run_from_document(doc))]

    def _stored_meanwhile(self, run_ids: list[str]) -> bool:
        column = schema.runs.c.run_id
        with self.engine.connect() as conn:
            return any(conn.execute(select(column).where(column.in_(list(batch)))).first()
                       for batch in queries.chunks(run_ids, queries.IDS_PER_QUERY))

    def annotate(self, build: str, text: str) -> None:
        if self._empty and not self._pending:
            raise StoreError(f"no pqbench database in {self.location} yet (no runs); "
                             "`pqbench speed` creates it")
        self._create_later()
        now = datetime.now(UTC).isoformat(timespec="seconds")
        try:
            with self._transaction() as conn:
                conn.execute(schema.build_notes.insert(),
                             [{"build": build, "text": text, "created_at": now}])
        except IntegrityError:
            pass  # the same note on the same build: stored once

    # --- reading --------------------------------------------------------------------------

    def has_run(self, run_id: str) -> bool:
        if self._empty:
            return False
        with self._reading() as conn:
            found = conn.execute(select(schema.runs.c.run_id)
                                 .where(schema.runs.c.run_id == run_id)).first()
        return found is not None

    def list_runs(self) -> list[RunInfo]:
        from sqlalchemy import func

        if self._empty:
            return []
        m = schema.measurements
        counts = (select(m.c.run_id, func.count().label("n")).group_by(m.c.run_id).subquery())
        r = schema.runs
        query = (select(r.c.run_id, r.c.kind, r.c.started_at, r.c.status, r.c.label,
                        r.c.os_build, r.c.hostname, func.coalesce(counts.c.n, 0))
                 .outerjoin(counts, counts.c.run_id == r.c.run_id)
                 .order_by(r.c.started_at, r.c.run_id))
        with self._reading() as conn:
            return [RunInfo(*row) for row in conn.execute(query).all()]

    def resolve_run_id(self, prefix: str) -> str:
        """A full run id from a unique prefix (ids are long; users type the start). An
        empty prefix names no run: every id starts with it."""
        if not prefix.strip():
            raise UsageError("a run id is empty: give a run id or its first characters "
                             "(`pqbench runs` lists them)")
        if self._empty:
            raise StoreError(f"no run {prefix!r} in {self.location}: no runs stored yet")
        with self._reading() as conn:
            column = schema.runs.c.run_id
            query = select(column).where(column.startswith(prefix, autoescape=True))
            ids = list(conn.execute(query).scalars())
        if prefix in ids:
            return prefix
        if not ids:
            raise StoreError(f"no run {prefix!r} in {self.location}; `pqbench runs` lists them")
        if len(ids) > 1:
            raise StoreError(f"run id {prefix!r} is ambiguous: {', '.join(sorted(ids)[:5])}")
        return ids[0]

    def _resolve(self, wanted: Sequence[str]) -> list[str]:
        """Full run ids: those stored as given in a query per batch, the rest as prefixes."""
        if self._empty:
            return [self.resolve_run_id(i) for i in wanted]
        column = schema.runs.c.run_id
        exact: set[str] = set()
        with self._reading() as conn:
            for batch in queries.chunks(wanted, queries.IDS_PER_QUERY):
                exact.update(conn.execute(select(column).where(column.in_(list(batch))))
                             .scalars())
        return [i if i in exact else self.resolve_run_id(i) for i in wanted]

    def load_run(self, run_id: str) -> Run:
        """One run by id or unique prefix."""
        return self.load_runs(RunFilter(ids=(run_id,)))[0]

    def load_runs(self, wanted: RunFilter | None = None, *, rows_too: bool = True,
                  fingerprints: bool = True) -> list[Run]:
        """The runs a filter selects: in the order of `ids` where it names runs, else
        oldest first; whole, or without their rows, problems and checks (`rows_too`
        False: what grouping needs), or without their fingerprints (`fingerprints`
        False: only the fields kept as columns, `LIGHT_FIELDS` group by them). A few
        queries per batch of runs, whatever their number (`store.queries`)."""
        wanted = wanted or RunFilter()
        ids = self._resolve(list(dict.fromkeys(wanted.ids)))
        if self._empty:
            return []
        with self._reading() as conn:
            return queries.load(conn, wanted, ids, rows_too=rows_too,
                                fingerprints=fingerprints, version=self._version)

    def algorithms(self, timed_only: bool = False) -> list[str]:
        """The algorithms stored runs have rows for, by name as stored; `timed_only`:
        rows with rates (not a memory run's), which reads every row."""
        if self._empty:
            return []
        with self._reading() as conn:
            return queries.algorithms(conn, timed_only)

    def annotations(self) -> list[tuple[str, str, str]]:
        if self._empty:
            return []
        a = schema.build_notes
        with self._reading() as conn:
            rows = conn.execute(select(a.c.build, a.c.text, a.c.created_at).order_by(a.c.id))
            return [(r.build, r.text, r.created_at) for r in rows]

    def row_rates(self, run_ids: Sequence[str], rows: RunFilter | None = None) -> RowRates:
        """Every result row's per-round rates of the runs named (full ids), as numbers:
        what a history over thousands of runs needs, without building their `Run`s.
        `rows` (its algorithms, implementation and operation) keeps one row key's rows,
        read through the key's index; one naming no algorithm keeps every row, as
        `load_runs` and `row_estimates` read it."""
        from pqbench.data.store import rates  # numpy: only for the commands that draw figures

        if self._empty:
            return rates.RowRates(run_ids)
        condition = queries.row_condition(rows) if rows is not None and rows.algorithms \
            else None
        with self._reading() as conn:
            return rates.row_rates(conn, run_ids, condition)

    def row_estimates(self, run_ids: Sequence[str], rows: RunFilter | None = None
                      ) -> RowEstimates:
        """Each run's estimate of each of its rows (`record.estimates`), for the runs named
        (full ids), packed per row key: what the noise model learns from, in one query
        whatever the number of runs (`rates.row_estimates`). `rows` (its algorithms, with
        implementation and operation) keeps those row keys. A store of schema 3 this user
        may not upgrade has them worked out from its rounds instead, the same numbers."""
        from pqbench.data.store import rates  # numpy: only for the commands that judge

        if self._empty:
            return rates.RowEstimates(run_ids)
        read = rates.row_estimates if self._version >= 4 else rates.estimates_from_rounds
        with self._reading() as conn:
            return read(conn, run_ids, rows)


def _dialect_insert(conn: Connection, table: Any) -> Any:
    """INSERT with the dialect's ON CONFLICT support (both backends have DO NOTHING)."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)
