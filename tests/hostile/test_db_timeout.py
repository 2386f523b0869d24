"""PQBENCH_DB_TIMEOUT on PostgreSQL: another session holds an ACCESS EXCLUSIVE lock on the
runs table (a migration, a VACUUM FULL, a forgotten transaction) for as long as the test
wants. `runs` ends with a clear error after the timeout instead of waiting for the lock,
and `speed`, locked out as it stores, keeps its run in a recovery file that `import`
stores once the lock is gone. Each command runs with a limit far above the timeout: a
command that waits for the lock fails the test instead of hanging it."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pqbench.data.store import Store
from tests.helpers import run_cli, starts_processes
from tests.helpers.jobs import Job, wait_until
from tests.helpers.postgres import fresh_database, running_server
from tests.helpers.runs import make_runs

pytestmark = [pytest.mark.process, pytest.mark.postgres]

TIMEOUT = {"PQBENCH_DB_TIMEOUT": "3"}


@pytest.fixture(scope="module")
@starts_processes
def server() -> Iterator[str]:
    with running_server() as url:
        yield url


@contextmanager
def locked(location: str) -> Iterator[None]:
    """The runs table locked by another session until the block ends."""
    import psycopg

    with psycopg.connect(location) as holder:
        holder.execute("LOCK TABLE pqbench_runs IN ACCESS EXCLUSIVE MODE")
        yield
        holder.rollback()


def test_the_sessions_of_a_store_carry_the_timeout(server: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from sqlalchemy import text

    monkeypatch.setenv("PQBENCH_DB_TIMEOUT", "2.5")
    store = Store.open(fresh_database(server))
    with store.engine.connect() as conn:
        shown = {name: conn.execute(text(f"SHOW {name}")).scalar()
                 for name in ("lock_timeout", "statement_timeout")}
        conn.rollback()  # a rollback keeps them: they are the session's defaults
        again = conn.execute(text("SHOW lock_timeout")).scalar()
    assert shown == {"lock_timeout": "2500ms", "statement_timeout": "5s"}
    assert again == "2500ms"


def test_runs_ends_with_a_clear_error_after_the_timeout(server: str) -> None:
    location = fresh_database(server)
    Store.open(location).save_runs(make_runs("r", 2, seed=1))
    with locked(location):
        done = run_cli("runs", "--db", location, env=TIMEOUT, timeout=60)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert re.search(r"error: the database .* is locked by another process: waited 3 s "
                     r"\(PQBENCH_DB_TIMEOUT sets how long\)", done.stderr), done.stderr


def _waiting_for_a_lock(location: str) -> bool:
    """A session of the database waits for a lock: speed has measured and is storing."""
    import psycopg

    with psycopg.connect(location, autocommit=True) as watcher:
        found = watcher.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                                "current_database() AND wait_event_type = 'Lock'").fetchone()
    return bool(found and found[0])


@pytest.mark.parametrize("ctrl_c", [False, True], ids=["locked-out", "ctrl-c-while-storing"])
def test_speed_locked_out_as_it_stores_keeps_its_run_in_a_recovery_file(
        server: str, tmp_path: Path, ctrl_c: bool) -> None:
    """With Ctrl-C pressed five times while it waits for the lock, the command ends
    interrupted (130) and says where the run was kept, not a bare "interrupted"."""
    location = fresh_database(server)
    Store.open(location).save_runs(make_runs("r", 1, seed=1))
    state = tmp_path / "state"
    job = Job("speed", "x25519", "-i", "cryptography", "-o", "derive", "--seconds", "0.5",
              "--rounds", "20", "--db", location,
              env={"PQBENCH_DB_TIMEOUT": "8" if ctrl_c else "3", "XDG_STATE_HOME": str(state)})
    try:
        job.wait_for(r"\b[1-9][0-9]*/21 ")  # measuring: the store was opened before
        with locked(location):
            if ctrl_c:
                wait_until(lambda: _waiting_for_a_lock(location), "speed storing its run",
                           seconds=240)
                job.signal(*(signal.SIGINT,) * 5, gap=0.1)
            status, output = job.finish(seconds=180)
    finally:
        job.signal(signal.SIGKILL, group=False)
    assert "Traceback" not in output, output
    (kept,) = (state / "pqbench" / "unsaved").glob("pqbench-unsaved-*.json")
    flat = output.replace("\n", "")
    if ctrl_c:
        assert status == 130, output
        assert re.search(r"error: interrupted; the measurement was kept in .*"
                         f"{kept.name}: `pqbench import` that file", flat), output
    else:
        assert status == 1, output
        assert "is locked by another process: waited 3 s" in output, output
        assert kept.name in flat, output
    done = run_cli("import", str(kept), "--db", location)
    assert done.returncode == 0, done.stderr
    assert len(Store.open(location, create=False).list_runs()) == 2
