"""Signals pressed again and again while a measuring command runs: the first one stops the
measuring, and no later one (Ctrl-C five times, or INT, TERM, INT) cuts short the storing
of what finished. The command exits with the first signal's status and names the run it
stored. Each job runs on a terminal and is signalled once its progress names a row."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pqbench.data.store import Store
from tests.helpers.jobs import Job, wait_until
from tests.helpers.postgres import fresh_database

pytestmark = pytest.mark.process

INT, TERM = signal.SIGINT, signal.SIGTERM


@pytest.mark.parametrize("signals, code", [((INT,) * 5, 130), ((INT, TERM, INT), 130),
                                           ((TERM, INT, INT), 143)],
                         ids=["five-ctrl-c", "int-term-int", "term-int-int"])
def test_repeated_signals_during_speed_store_what_finished(tmp_path, signals, code) -> None:
    db = tmp_path / "speed.db"
    job = Job("speed", "x25519", "ecdh-p-256", "-i", "cryptography", "--seconds", "1",
              "--rounds", "30", db=db)
    job.wait_for(r"\b[1-9][0-9]/[0-9]+ ")  # ten steps: the checks done, rounds under way
    job.signal(*signals, gap=0.1, group=signals[0] == INT)
    status, output = job.finish()
    assert "Traceback" not in output, output
    assert status == code, output
    (info,) = Store.open(str(db), create=False).list_runs()
    assert info.status == "interrupted", output
    assert re.search(rf"stored as run {info.run_id}\b", output), output


def test_three_ctrl_c_during_ab_store_the_finished_pairs(tmp_path) -> None:
    db = tmp_path / "ab.db"
    job = Job("ab", "x25519", "-i", "cryptography", "-o", "derive", "--a", "here",
              "--b", "here", "--max-seconds", "120", "--round", "0.05",
              "--threshold", "0", db=db)  # a band of 0: never decided, so it runs on
    job.wait_for(r"row 1 of 1, [1-9][0-9]* pairs")  # some pairs finished
    job.signal(INT, INT, INT, gap=0.1)
    status, output = job.finish()
    assert "Traceback" not in output, output
    assert status == 130, output
    runs = Store.open(str(db), create=False).list_runs()
    assert len(runs) == 2 and {r.status for r in runs} == {"interrupted"}, output
    assert all(r.run_id in output for r in runs), output


def test_five_ctrl_c_while_speed_stores_say_where_the_run_is(postgres_base: str) -> None:
    """The signals land while the run is being stored (another session holds a lock on
    the runs table until they are sent): the storing ends, and the command says where the
    run is instead of a bare "interrupted"."""
    import psycopg

    location = fresh_database(postgres_base)
    Store.open(location).close()
    job = Job("speed", "x25519", "-i", "cryptography", "-o", "derive", "--seconds", "1",
              "--rounds", "5", "--db", location, env={"PQBENCH_DB_TIMEOUT": "600"})
    job.wait_for(r"\b[1-9]/6 ")  # measuring: the store is open, the storing seconds away
    with psycopg.connect(location) as holder, \
            psycopg.connect(location, autocommit=True) as watcher:
        holder.execute("LOCK TABLE pqbench_runs IN ACCESS EXCLUSIVE MODE")

        def storing() -> bool:  # speed's session waits for the lock: the run is measured
            waiting = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'").fetchone()
            return bool(waiting and waiting[0])

        wait_until(storing, "speed waiting to store its run", seconds=240)
        job.signal(*(INT,) * 5, gap=0.1)
        holder.rollback()  # the lock goes: the run is stored
    status, output = job.finish()
    assert "Traceback" not in output, output
    assert status == 130, output
    (info,) = Store.open(location, create=False).list_runs()
    assert info.status == "complete" and info.measurements == 1, output
    assert re.search(rf"error: interrupted; stored as run {info.run_id} in ", output), output


def test_ctrl_c_before_any_ab_pair_finished_says_nothing_was_stored(tmp_path) -> None:
    """ab said "nothing was measured, so nothing was stored" and then "interrupted; the
    completed pairs were stored"."""
    db = tmp_path / "ab.db"
    job = Job("ab", "x25519", "-i", "cryptography", "-o", "derive", "--a", "here",
              "--b", "here", "--max-seconds", "120", "--round", "10", db=db)
    job.wait_for(r"row 1 of 1 +\d")  # measuring, no pair counted: a pair takes two 10 s rounds
    job.signal(INT, INT, INT, gap=0.1)
    status, output = job.finish()
    assert "Traceback" not in output, output
    assert status == 130, output
    assert "nothing was measured, so nothing was stored" in output, output
    assert "error: interrupted before any pair finished" in output, output
    assert "pairs were stored" not in output, output
    assert not db.exists() or Store.open(str(db), create=False).list_runs() == []


@pytest.mark.parametrize("command, loaded", [("runs --db DB", "_csv"), ("runs --db DB", "_ctypes"),
                                             ("--help", "_cffi_backend")])
def test_ctrl_c_while_the_commands_load_exits_130_without_a_traceback(tmp_path, command,
                                                                      loaded) -> None:
    """The signal lands while Python imports pqbench's commands (`runs` loads its own,
    `--help` every one): the moment the process maps an extension module those imports
    load (`loaded`), well before the last one."""
    args = [str(tmp_path / "x.db") if word == "DB" else word for word in command.split()]
    process = subprocess.Popen([sys.executable, "-m", "pqbench", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    maps = Path(f"/proc/{process.pid}/maps")
    deadline = time.monotonic() + 60
    while loaded not in maps.read_text() and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.001)
    process.send_signal(INT)
    _, stderr = process.communicate(timeout=60)
    assert "Traceback" not in stderr, stderr
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr, stderr
