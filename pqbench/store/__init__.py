"""Results storage: SQLite by default, PostgreSQL for a fleet, one code path for both.

The only SQL lives here. A run is written in one transaction, so a reader never sees half a
run, and an existing file that is not a pqbench database is refused, never overwritten.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import platformdirs
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
from pqbench.record.results import Measurement, Problem, Run, Verification
from pqbench.store import schema
from pqbench.timing.contract import LoopResult
from pqbench.untrusted import passwords_in, redact

ENV_VAR = "PQBENCH_DB"
#: Seconds to wait for a lock held by another writer before giving up with a clear error.
TIMEOUT_VAR = "PQBENCH_DB_TIMEOUT"
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: pg_advisory_xact_lock key held while creating the schema ("pqbench" as an integer).
_SCHEMA_LOCK_KEY = 0x7071626E6368


def default_path() -> Path:
    return Path(platformdirs.user_data_dir("pqbench")) / "pqbench.db"


def resolve_location(db: str | None) -> str:
    """--db, then $PQBENCH_DB, then the per-user default; a URL or a file path."""
    return db or os.environ.get(ENV_VAR) or str(default_path())


def _is_url(location: str) -> bool:
    return "://" in location


def _engine_url(location: str) -> str:
    if location.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + location.split("://", 1)[1]
    if _is_url(location):
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
        if not _is_url(location):
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
        conn.execute(schema.runs.insert(), [_run_row(run)])
        for m in run.measurements:
            self._insert_measurement(conn, run.run_id, m)
        if run.problems:
            conn.execute(schema.problems.insert(),
                         [_problem_row(run.run_id, p) for p in run.problems])
        if run.verifications:
            conn.execute(schema.verifications.insert(), [
                {"run_id": run.run_id, "algorithm": v.algorithm,
                 "implementation": v.implementation, "checks": list(v.checks)}
                for v in run.verifications])
        return True

    @staticmethod
    def _insert_measurement(conn: Connection, run_id: str, m: Measurement) -> None:
        # A row without rounds (a memory row) has no rate: its NOT NULL rate columns hold
        # 0. They are a convenience for SQL readers; pqbench derives every rate from the
        # samples, and such a row has none.
        timed = bool(m.rounds)
        result = conn.execute(schema.measurements.insert().values(
            run_id=run_id, algorithm=m.algorithm, implementation=m.implementation,
            operation=m.operation, block_size=m.block_size,
            ops_per_sec=m.ops_per_sec if timed else 0.0,
            us_per_op=m.us_per_op if timed else 0.0, cycles_per_op=m.cycles_per_op,
            counter=m.counter, sizes=dict(m.sizes), attributes=dict(m.attributes)))
        primary_key = result.inserted_primary_key
        assert primary_key is not None
        measurement_id = primary_key[0]
        if m.rounds:
            conn.execute(schema.samples.insert(), [
                {"measurement_id": measurement_id, "round_index": i, "ops": r.ops,
                 "elapsed_ns": r.elapsed_ns, "cycles": r.cycles}
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
        run_id = self.resolve_run_id(run_id)
        with self.engine.connect() as conn:
            row = conn.execute(select(schema.runs).where(schema.runs.c.run_id == run_id)).one()
            measurements = self._load_measurements(conn, run_id)
            problems = [Problem(p.algorithm, p.implementation, p.kind, p.reason, p.operation)
                        for p in conn.execute(select(schema.problems)
                                              .where(schema.problems.c.run_id == run_id)
                                              .order_by(schema.problems.c.id))]
            verifications = [Verification(v.algorithm, v.implementation, tuple(v.checks))
                             for v in conn.execute(select(schema.verifications)
                                                   .where(schema.verifications.c.run_id == run_id)
                                                   .order_by(schema.verifications.c.id))]
        return Run(run_id=row.run_id, started_at=row.started_at, finished_at=row.finished_at,
                   status=row.status, command=row.command, label=row.label,
                   settings=row.settings, environment=row.environment,
                   measurements=tuple(measurements), problems=tuple(problems),
                   verifications=tuple(verifications), kind=row.kind)

    @staticmethod
    def _load_measurements(conn: Connection, run_id: str) -> list[Measurement]:
        m, s = schema.measurements, schema.samples
        rows = conn.execute(select(m).where(m.c.run_id == run_id).order_by(m.c.id)).all()
        rounds: dict[int, list[LoopResult]] = {row.id: [] for row in rows}
        if rows:
            for sample in conn.execute(select(s).where(s.c.measurement_id.in_(list(rounds)))
                                       .order_by(s.c.measurement_id, s.c.round_index)):
                rounds[sample.measurement_id].append(
                    LoopResult(sample.ops, sample.elapsed_ns, sample.cycles))
        return [Measurement(algorithm=row.algorithm, implementation=row.implementation,
                            operation=row.operation, rounds=tuple(rounds[row.id]),
                            sizes=row.sizes, block_size=row.block_size,
                            attributes=row.attributes, counter=row.counter)
                for row in rows]

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


def _run_row(run: Run) -> dict[str, Any]:
    env = dict(run.environment)
    return {"run_id": run.run_id, "kind": run.kind, "started_at": run.started_at,
            "finished_at": run.finished_at, "status": run.status, "label": run.label,
            "command": redact(run.command), "os_build": env.get("os_build"),
            "hostname": env.get("hostname"), "testbed": env.get("testbed"),
            "settings": dict(run.settings), "environment": env}


def _problem_row(run_id: str, p: Problem) -> dict[str, Any]:
    return {"run_id": run_id, "algorithm": p.algorithm, "implementation": p.implementation,
            "operation": p.operation, "kind": p.kind, "reason": p.reason}
