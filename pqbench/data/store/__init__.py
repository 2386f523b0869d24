"""Results storage: SQLite by default, PostgreSQL for a fleet, one code path for both.

`Store` (store/database.py) holds the only SQL; `schema` defines the tables and their
version history; `location` says where the database is without loading SQLAlchemy, so
commands that only name it (`pqbench env`, every command's --help) start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pqbench.data.store.location import ENV_VAR, TIMEOUT_VAR, default_path, resolve_location

if TYPE_CHECKING:
    from pqbench.data.store.database import LIGHT_FIELDS, RunFilter, RunInfo, Store

__all__ = ["ENV_VAR", "LIGHT_FIELDS", "TIMEOUT_VAR", "RunFilter", "RunInfo", "Store",
           "default_path", "resolve_location"]


def __getattr__(name: str) -> Any:
    """`Store`, `RunInfo`, `RunFilter` and `LIGHT_FIELDS`, imported (with SQLAlchemy) on
    first use."""
    if name in ("Store", "RunInfo", "RunFilter", "LIGHT_FIELDS"):
        from pqbench.data.store import database

        return getattr(database, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
