"""The results database: the only SQL, for SQLite and PostgreSQL alike.

A run is written in one transaction, so a reader never sees half a run, and an existing
file that is not a pqbench database is refused, never overwritten. Rows become records
and back through `record.codec` alone; reads load many runs in a few queries
(`load_runs`), never one query per run.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event, inspect, select, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import (
    DBAPIError,
    IntegrityError,
    OperationalError,
    ProgrammingError,
    SQLAlchemyError,
)

from pqbench.errors import StoreError
from pqbench.record import codec
from pqbench.record.results import Measurement, Run
from pqbench.record.runs import group_value
from pqbench.store import schema
from pqbench.store.location import TIMEOUT_VAR, is_url, resolve_location
from pqbench.timing.contract import LoopResult
from pqbench.untrusted import passwords_in, redact

_SQLITE_MAGIC = b"SQLite format 3\x00"
#: pg_advisory_xact_lock key held while creating the schema ("pqbench" as an integer).
_SCHEMA_LOCK_KEY = 0x7071626E6368


def _engine_url(location: str) -> str:
    if location.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + location.split("://", 1)[1]
    if is_url(location):
        return location
    return f"sqlite:///{Path(location).expanduser().resolve()}"


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


def _describe(exc: BaseException, location: str, secrets: list[str]) -> str:
    """The driver's message, with any password it quotes redacted (psycopg and SQLAlchemy
    may echo the connection string)."""
    text = redact(str(getattr(exc, "orig", exc)), secrets)
    if "locked" in text:
        return f"the database {location} is locked by another process; try again later"
    if "readonly" in text or "read-only" in text:
        return f"the database {location} is read-only"
    return f"database error on {location}: {text}"


@dataclass(frozen=True)
class RunFilter:
    """Which runs `Store.load_runs` loads: the ones named (ids or unique prefixes), of
    these kinds, whose `--by` group (`record.runs.group_value`) is one of `values`, the
    newest N; empty parts select everything."""

    ids: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    by: str | None = None
    values: tuple[str, ...] = ()
    newest: int | None = None


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

    # --- opening --------------------------------------------------------------------------

    @classmethod
    def open(cls, db: str | None = None, *, create: bool = True) -> Store:
        location = resolve_location(db)
        if not is_url(location):
            _check_sqlite_file(Path(location).expanduser(), for_writing=create)
        elif not location.startswith(("postgresql://", "postgres://", "sqlite://")):
            raise StoreError(f"unsupported database URL {redact(location)!r}: use a file "
                             "path, sqlite:///PATH or postgresql://USER@HOST/DB")
        try:
            engine = cls._engine(location)
        except (SQLAlchemyError, ImportError, ValueError) as exc:
            raise StoreError(f"cannot open the database {redact(location)}: "
                             f"{redact(str(exc), passwords_in(location))}") from None
        store = cls(location, engine)
        store._validate(create)
        return store

    @staticmethod
    def _engine(location: str) -> Engine:
        url = _engine_url(location)
        if url.startswith("sqlite"):
            timeout = float(os.environ.get(TIMEOUT_VAR, "15"))
            engine = create_engine(url, connect_args={"timeout": timeout})

            @event.listens_for(engine, "connect")
            def _pragmas(dbapi_conn: Any, _record: Any) -> None:
                cursor = dbapi_conn.cursor()
                cursor.execute("PRAGMA foreign_keys=ON")
                cursor.close()

            return engine
        return create_engine(url, pool_pre_ping=True)

    def _validate(self, create: bool) -> None:
        try:
            with self.engine.connect() as conn:
                tables = set(inspect(conn).get_table_names())
                # An empty meta table is another process creating the schema right now
                # (SQLite commits DDL before the meta rows); finish it instead of refusing.
                empty = schema.meta.name in tables and create and not conn.execute(
                    select(schema.meta.c.key)).first()
                if schema.meta.name in tables and not empty:
                    self._check_meta(conn)
                    return
                foreign = {t for t in tables if not t.startswith("pqbench_")}
                if foreign and self.engine.dialect.name == "sqlite":
                    raise StoreError(f"{self.location} is an SQLite database but not a pqbench "
                                     "one; it was left untouched")
            if create:
                self._initialize()
        except (SQLAlchemyError, ValueError) as exc:
            raise StoreError(_describe(exc, self.location, self._secrets)) from None

    def _check_meta(self, conn: Connection) -> None:
        rows = dict(conn.execute(select(schema.meta.c.key, schema.meta.c.value)).all())
        if rows.get("application") != schema.APPLICATION:
            raise StoreError(f"{self.location} is not a pqbench database; left untouched")
        version = int(rows.get("schema_version", "0"))
        if version > schema.SCHEMA_VERSION:
            raise StoreError(
                f"{self.location} was written by a newer pqbench (schema {version}; this "
                f"pqbench reads up to {schema.SCHEMA_VERSION}); upgrade pqbench to use it")

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
            except (OperationalError, ProgrammingError, IntegrityError):
                # Another creator made some tables meanwhile; the next pass skips them.
                if time.monotonic() > deadline:
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

    def close(self) -> None:
        self.engine.dispose()

    # --- writing --------------------------------------------------------------------------

    def save_run(self, run: Run) -> bool:
        """Store a run in one transaction; False when a run with this id is already stored."""
        return bool(self.save_runs([run]))

    def save_runs(self, runs: Sequence[Run]) -> list[str]:
        """Store every run not stored yet, all in one transaction: either all of them are
        written or none is. Returns the ids written; runs already stored are skipped."""
        for _attempt in range(3):
            try:
                with self._transaction() as conn:
                    return [run.run_id for run in runs if self._insert_run(conn, run)]
            except IntegrityError:
                continue  # another writer stored one of these meanwhile: skip it next time
        raise StoreError(f"{self.location}: other writers kept storing the same runs; "
                         "nothing was written, try again")

    def _insert_run(self, conn: Connection, run: Run) -> bool:
        if conn.execute(select(schema.runs.c.run_id)
                        .where(schema.runs.c.run_id == run.run_id)).first() is not None:
            return False
        conn.execute(schema.runs.insert(), [codec.run_columns(run)])
        for m in run.measurements:
            self._insert_measurement(conn, run.run_id, m)
        if run.problems:
            conn.execute(schema.problems.insert(),
                         [{"run_id": run.run_id, **codec.problem_fields(p)}
                          for p in run.problems])
        if run.verifications:
            conn.execute(schema.verifications.insert(),
                         [{"run_id": run.run_id, **codec.verification_fields(v)}
                          for v in run.verifications])
        return True

    @staticmethod
    def _insert_measurement(conn: Connection, run_id: str, m: Measurement) -> None:
        result = conn.execute(schema.measurements.insert().values(
            run_id=run_id, **codec.measurement_columns(m)))
        primary_key = result.inserted_primary_key
        assert primary_key is not None
        if m.rounds:
            conn.execute(schema.samples.insert(), [
                {"measurement_id": primary_key[0], "round_index": i, **codec.sample(r)}
                for i, r in enumerate(m.rounds)])

    def annotate(self, build: str, text: str) -> None:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        try:
            with self._transaction() as conn:
                conn.execute(schema.build_notes.insert(),
                             [{"build": build, "text": text, "created_at": now}])
        except IntegrityError:
            pass  # the same note on the same build: stored once

    # --- reading --------------------------------------------------------------------------

    def has_run(self, run_id: str) -> bool:
        with self.engine.connect() as conn:
            found = conn.execute(select(schema.runs.c.run_id)
                                 .where(schema.runs.c.run_id == run_id)).first()
        return found is not None

    def list_runs(self) -> list[RunInfo]:
        from sqlalchemy import func

        m = schema.measurements
        counts = (select(m.c.run_id, func.count().label("n")).group_by(m.c.run_id).subquery())
        r = schema.runs
        query = (select(r.c.run_id, r.c.kind, r.c.started_at, r.c.status, r.c.label,
                        r.c.os_build, r.c.hostname, func.coalesce(counts.c.n, 0))
                 .outerjoin(counts, counts.c.run_id == r.c.run_id)
                 .order_by(r.c.started_at, r.c.run_id))
        with self.engine.connect() as conn:
            return [RunInfo(*row) for row in conn.execute(query).all()]

    def resolve_run_id(self, prefix: str) -> str:
        """A full run id from a unique prefix (ids are long; users type the start)."""
        with self.engine.connect() as conn:
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

    def load_run(self, run_id: str) -> Run:
        """One run by id or unique prefix."""
        return self.load_runs(RunFilter(ids=(run_id,)))[0]

    def load_runs(self, wanted: RunFilter | None = None, *, rows_too: bool = True
                  ) -> list[Run]:
        """The runs a filter selects: in the order of `ids` where it names runs, else
        oldest first; whole, or without their rows, problems and checks (`rows_too`
        False: what grouping needs). A few queries per batch of runs, whatever their
        number."""
        wanted = wanted or RunFilter()
        ids = [self.resolve_run_id(i) for i in dict.fromkeys(wanted.ids)]
        r = schema.runs
        query = select(r)
        if ids:
            query = query.where(r.c.run_id.in_(ids))
        if wanted.kinds:
            query = query.where(r.c.kind.in_(list(wanted.kinds)))
        order = (r.c.started_at, r.c.run_id)
        if wanted.newest is not None:
            query = query.order_by(*(c.desc() for c in order)).limit(wanted.newest)
        else:
            query = query.order_by(*order)
        with self.engine.connect() as conn:
            rows = list(conn.execute(query).all())
            if wanted.newest is not None:
                rows.reverse()
            headers = {row.run_id: codec.run_from_columns(row, (), (), ()) for row in rows}
            if wanted.by is not None:
                headers = {i: run for i, run in headers.items()
                           if group_value(run, wanted.by) in wanted.values}
            chosen = [i for i in ids if i in headers] if ids else list(headers)
            if not rows_too:
                return [headers[i] for i in chosen]
            parts = self._parts(conn, chosen)
        return [replace(headers[i], measurements=tuple(parts.measurements.get(i, ())),
                        problems=tuple(parts.problems.get(i, ())),
                        verifications=tuple(parts.verifications.get(i, ())))
                for i in chosen]

    @staticmethod
    def _parts(conn: Connection, run_ids: Sequence[str]) -> _Parts:
        """Measurements with their samples, problems and verifications of these runs, in
        a few queries per batch of runs."""
        parts = _Parts()
        m, s = schema.measurements, schema.samples
        for batch in _batches(run_ids):
            rows = conn.execute(select(m).where(m.c.run_id.in_(batch))
                                .order_by(m.c.run_id, m.c.id)).all()
            rounds: dict[int, list[LoopResult]] = {row.id: [] for row in rows}
            for measurement_id, ops, elapsed_ns, cycles in conn.execute(
                    select(s.c.measurement_id, s.c.ops, s.c.elapsed_ns, s.c.cycles)
                    .join(m, m.c.id == s.c.measurement_id).where(m.c.run_id.in_(batch))
                    .order_by(s.c.measurement_id, s.c.round_index)):
                rounds[measurement_id].append(LoopResult(ops, elapsed_ns, cycles))
            for row in rows:
                parts.measurements.setdefault(row.run_id, []).append(
                    codec.measurement_from_columns(row, rounds[row.id]))
            for table, found, decode in ((schema.problems, parts.problems, codec.problem),
                                         (schema.verifications, parts.verifications,
                                          codec.verification)):
                for row in conn.execute(select(table).where(table.c.run_id.in_(batch))
                                        .order_by(table.c.id)):
                    found.setdefault(row.run_id, []).append(decode(dict(row._mapping)))
        return parts

    def annotations(self) -> list[tuple[str, str, str]]:
        a = schema.build_notes
        with self.engine.connect() as conn:
            rows = conn.execute(select(a.c.build, a.c.text, a.c.created_at).order_by(a.c.id))
            return [(r.build, r.text, r.created_at) for r in rows]


def _dialect_insert(conn: Connection, table: Any) -> Any:
    """INSERT with the dialect's ON CONFLICT support (both backends have DO NOTHING)."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)


#: Runs per batch of IN (...) queries: far below SQLite's and PostgreSQL's parameter limits.
_BATCH = 500


def _batches(items: Sequence[str]) -> list[Sequence[str]]:
    return [items[i:i + _BATCH] for i in range(0, len(items), _BATCH)]


@dataclass
class _Parts:
    """What `load_runs` collects per run id besides the run's own row."""

    measurements: dict[str, list[Any]] = field(default_factory=dict)
    problems: dict[str, list[Any]] = field(default_factory=dict)
    verifications: dict[str, list[Any]] = field(default_factory=dict)
