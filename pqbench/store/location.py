"""Where the results database is: --db, then $PQBENCH_DB, then the per-user default."""

from __future__ import annotations

import os
import re
from pathlib import Path

import platformdirs

from pqbench.errors import UsageError

ENV_VAR = "PQBENCH_DB"
#: Seconds to wait for a lock held by another writer before giving up with a clear error.
TIMEOUT_VAR = "PQBENCH_DB_TIMEOUT"


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
