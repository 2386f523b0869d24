"""Where the results database is: --db, then $PQBENCH_DB, then the per-user default."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import platformdirs

from pqbench.platform.errors import StoreError, UsageError

ENV_VAR = "PQBENCH_DB"
#: Seconds to wait for a lock held by another writer before giving up with a clear error.
TIMEOUT_VAR = "PQBENCH_DB_TIMEOUT"
_DEFAULT_TIMEOUT = 15.0
_MAX_TIMEOUT = 86_400.0


def default_path() -> Path:
    return Path(platformdirs.user_data_dir("pqbench")) / "pqbench.db"


#: A libpq keyword/value connection string ("host=db user=me dbname=pqbench"): it starts
#: with one of libpq's own parameter names, which no database file is named after.
_KEYWORD_DSN = re.compile(
    r"\s*(host|hostaddr|port|dbname|user|password|passfile|service|sslmode|sslpassword"
    r"|sslcert|sslkey|sslrootcert|connect_timeout|options|application_name"
    r"|target_session_attrs|gssencmode|require_auth)\s*=", re.IGNORECASE)


class EmptyLocation(UsageError):
    """--db '' or PQBENCH_DB='' (an unset shell variable): not the default database."""


def resolve_location(db: str | None) -> str:
    """--db, then $PQBENCH_DB, then the per-user default; a URL, a libpq keyword string or
    a file path. An empty --db or $PQBENCH_DB is refused (EmptyLocation): it is most often
    a shell variable that was not set, and silently using the default database would put
    runs where the user does not look."""
    if db is not None and not db.strip():
        raise EmptyLocation("--db is empty: give a database file path or postgresql:// URL, "
                            "or leave --db out for the default database")
    if db is None:
        env = os.environ.get(ENV_VAR)
        if env is not None and not env.strip():
            raise EmptyLocation(f"{ENV_VAR} is set but empty: give it a database file path "
                                f"or postgresql:// URL, or unset it for the default database")
        db = env
    return db or str(default_path())


def is_keyword_dsn(location: str) -> bool:
    """A libpq keyword/value string (`host=... password=...`), a PostgreSQL location."""
    return _KEYWORD_DSN.match(location) is not None


def is_url(location: str) -> bool:
    """A URL or a libpq keyword string: anything but a file path."""
    return "://" in location or is_keyword_dsn(location)


def is_postgresql(location: str) -> bool:
    """A PostgreSQL location: a postgresql:// (or postgres://) URL or a libpq keyword
    string; anything else is SQLite's."""
    return location.startswith(("postgresql://", "postgres://")) or is_keyword_dsn(location)


def is_missing_file(location: str) -> bool:
    """A file location with no file there yet (the first day's state). False for a
    PostgreSQL location and for a path that cannot be looked at (a name too long, a
    folder not searchable): opening it says why."""
    if is_url(location) and not location.startswith(("sqlite:", "file:")):
        return False
    try:
        return not sqlite_path(location).exists()
    except (OSError, StoreError):
        return False


def sqlite_path(location: str) -> Path:
    """The SQLite file a location names: a path as it is (`?`, `#` and `%` are part of
    the name), or the path of `sqlite:///PATH` (relative; `sqlite:////PATH` absolute) or
    of `file:PATH`. An in-memory database (`sqlite://`, `sqlite:///`, `sqlite:`,
    `file:...?mode=memory`) is refused: nothing stored there outlives the command, yet
    it would be reported stored."""
    memory = (f"{location!r} is an in-memory SQLite database: nothing stored in it would "
              "outlive this command; give a file path or sqlite:///PATH")
    if location.startswith("sqlite:"):
        rest = location.removeprefix("sqlite:")
        if not rest.startswith("//"):
            if rest in ("", ":memory:"):
                raise StoreError(memory)
            raise StoreError(f"{location!r} is not an SQLite URL: give sqlite:///PATH (a "
                             "relative path; sqlite:////PATH an absolute one) or the path")
        host, _, path = rest[2:].partition("/")
        if host:
            raise StoreError(f"{location!r}: an SQLite URL names no host; give "
                             "sqlite:///PATH or the path")
        path, _, query = path.partition("?")
        if is_sqlite_uri(location):  # SQLite's own URI (sqlite:///file:PATH?mode=ro&uri=true)
            path = path.removeprefix("file:")
        if path in ("", ":memory:") or "mode=memory" in query:
            raise StoreError(memory)
        if query and not is_sqlite_uri(location):
            raise StoreError(f"{location!r}: SQLite URL parameters ({query}) are not "
                             "supported; give sqlite:///PATH or the path")
        return _file(location, path)
    if location.startswith("file:"):
        path, _, query = location.removeprefix("file:").partition("?")
        if "mode=memory" in query or path in ("", ":memory:"):
            raise StoreError(memory)
        if query:
            raise StoreError(f"{location!r}: SQLite URI parameters ({query}) are not "
                             "supported; give the file path")
        return _file(location, path.removeprefix("//"))
    return _file(location, location)


def _file(location: str, path: str) -> Path:
    """The file `path` names; a path that ends with a slash names a folder, whose last
    part `Path` would silently take for a file's name."""
    if path.endswith(("/", os.sep)):
        raise StoreError(f"{location!r} names a folder (it ends with a slash), not a "
                         "database file: give the file's path, e.g. "
                         f"{location.rstrip('/' + os.sep)}/pqbench.db")
    return Path(path).expanduser()


def is_sqlite_uri(location: str) -> bool:
    """`sqlite:///file:PATH?...&uri=true`: SQLAlchemy hands SQLite the URI itself (to
    open a file read-only, say), and pqbench hands SQLAlchemy the URL as it is."""
    query = location.partition("?")[2]
    return location.startswith("sqlite:///file:") and "uri=true" in query.split("&")


def lock_timeout() -> float:
    """Seconds a writer waits for a lock another one holds ($PQBENCH_DB_TIMEOUT, 15 by
    default): a finite number above 0, at most a day."""
    text = os.environ.get(TIMEOUT_VAR)
    if text is None or not text.strip():
        return _DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= _MAX_TIMEOUT):
        raise UsageError(f"{TIMEOUT_VAR}={text[:50]!r} is not a number of seconds above 0 "
                         f"and at most {_MAX_TIMEOUT:g}")
    return value
