"""The schema's definition: the label and OS build indexes are hash indexes on PostgreSQL
(and plain on SQLite), and a process that reads a SQLite store never loads PostgreSQL's
dialect."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.schema import CreateIndex

from pqbench.data.store import Store, schema
from tests.helpers.runs import make_run

HASHED = {"ix_pqbench_runs_label", "ix_pqbench_runs_os_build"}


def test_label_and_os_build_are_hash_indexes_on_postgresql_alone() -> None:
    made = {index.name: (str(CreateIndex(index).compile(dialect=postgresql.dialect())),
                         str(CreateIndex(index).compile(dialect=sqlite.dialect())))
            for index in schema.runs.indexes}
    assert set(made) > HASHED and "ix_pqbench_runs_kind" in made
    for name, (on_postgresql, on_sqlite) in made.items():
        assert "USING" not in on_sqlite, on_sqlite
        assert ("USING hash" in on_postgresql) == (name in HASHED), on_postgresql
    assert made["ix_pqbench_runs_label"][0] == (
        "CREATE INDEX ix_pqbench_runs_label ON pqbench_runs USING hash (label)")


@pytest.mark.process
def test_a_new_postgresql_store_has_the_hash_indexes(postgres_base: str) -> None:
    from tests.helpers.postgres import fresh_database

    url = fresh_database(postgres_base)
    Store.open(url).close()
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.connect() as conn:
        found = dict(tuple(row) for row in conn.execute(text(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'pqbench_runs'")
        ).all())
    engine.dispose()
    assert set(found) > HASHED
    for name, definition in found.items():
        assert ("USING hash" in definition) == (name in HASHED), definition


# Reads a run back from the SQLite store named, then prints the SQLAlchemy dialects loaded.
_READS = ("import sys\nfrom pqbench.data.store import Store\n"
          "store = Store.open(sys.argv[1], create=False)\nstore.load_run(sys.argv[2])\n"
          "print(' '.join(sorted(m for m in sys.modules "
          "if m.startswith('sqlalchemy.dialects.'))))")


@pytest.mark.process
def test_reading_a_sqlite_store_loads_no_postgresql_dialect(tmp_path: Path) -> None:
    db = str(tmp_path / "results.db")
    run = make_run("r1", seed=1)
    Store.open(db).save_runs([run])
    done = subprocess.run([sys.executable, "-c", _READS, db, run.run_id], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    assert "sqlalchemy.dialects.sqlite" in loaded
    assert not [m for m in loaded if m.startswith("sqlalchemy.dialects.postgresql")], loaded
