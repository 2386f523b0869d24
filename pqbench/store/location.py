"""Where the results database is: --db, then $PQBENCH_DB, then the per-user default."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

ENV_VAR = "PQBENCH_DB"
#: Seconds to wait for a lock held by another writer before giving up with a clear error.
TIMEOUT_VAR = "PQBENCH_DB_TIMEOUT"


def default_path() -> Path:
    return Path(platformdirs.user_data_dir("pqbench")) / "pqbench.db"


def resolve_location(db: str | None) -> str:
    """--db, then $PQBENCH_DB, then the per-user default; a URL or a file path."""
    return db or os.environ.get(ENV_VAR) or str(default_path())


def is_url(location: str) -> bool:
    return "://" in location
