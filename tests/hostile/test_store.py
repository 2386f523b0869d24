"""Databases that are empty, table-less, damaged or not named at all: a clear message and
an exit status, never a traceback, and the database left as it was."""

from __future__ import annotations

import hashlib
import json
import os
import random
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pqbench.data.store import Store
from tests.helpers import run_cli
from tests.helpers.runs import make_run

pytestmark = pytest.mark.process

#: Commands that name runs: there is no such run, a clear error.
READERS = [["compare", "20260101-a", "20260102-b"], ["report", "20260101-a", "--out", "REPORT"],
           ["export", "20260101-a"]]
#: Commands over whatever is stored: nothing is, which is said as `runs` says it, exit 0.
BROWSERS = [["history", "ML-KEM-768"], ["compare"], ["report", "--out", "REPORT"],
            ["report", "--by", "label", "--out", "REPORT"]]


def _clean(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr + done.stdout, done.stderr


def _readers(location: str, tmp_path: Path, commands: list[list[str]] = READERS
             ) -> list[subprocess.CompletedProcess[str]]:
    return [run_cli(*[str(tmp_path / "r") if a == "REPORT" else a for a in args],
                    "--db", location) for args in commands]


def _no_pqbench_tables(tmp_path: Path) -> list[str]:
    zero = tmp_path / "zero.db"
    zero.write_bytes(b"")
    other = tmp_path / "tables.db"
    with sqlite3.connect(other) as conn:  # an SQLite database with no tables at all
        conn.execute("CREATE TABLE t(x)")
        conn.execute("DROP TABLE t")
    return [str(zero), str(other)]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_database_without_tables_has_no_runs_stored_yet(backend: str, tmp_path: Path,
                                                          request: pytest.FixtureRequest
                                                          ) -> None:
    if backend == "sqlite":
        locations = _no_pqbench_tables(tmp_path)
    else:
        from tests.helpers.postgres import fresh_database

        locations = [fresh_database(request.getfixturevalue("postgres_base"))]
    for location in locations:
        before = Path(location).read_bytes() if backend == "sqlite" else b""
        listed = run_cli("runs", "--db", location)
        _clean(listed)
        assert listed.returncode == 0 and "no runs stored yet" in listed.stdout, listed.stderr
        for done in _readers(location, tmp_path):
            _clean(done)
            assert done.returncode in (1, 2) and "error:" in done.stderr, done.stderr
            assert "no run" in done.stderr, done.stderr
        for done in _readers(location, tmp_path, BROWSERS):
            _clean(done)
            assert done.returncode == 0, done.stderr
            assert "no runs stored yet in" in done.stderr and "error" not in done.stderr
        if backend == "sqlite":
            assert Path(location).read_bytes() == before  # read, never written
        assert not (tmp_path / "r").exists()


def test_a_damaged_database_is_a_clear_error_and_left_as_it_is(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    store = Store.open(str(db))
    for i in range(40):
        store.save_run(make_run(f"2026010{i % 9 + 1}-{i:02d}", seed=i, label=f"l{i % 3}"))
    store.close()
    with sqlite3.connect(db) as conn:
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(db.read_bytes())
    assert len(data) >= 8 * page
    rng = random.Random(7)
    for index in range(2, 7):  # pages 3 to 7 (SQLite numbers pages from 1)
        data[index * page:(index + 1) * page] = rng.randbytes(page)
    db.write_bytes(bytes(data))
    digest = hashlib.sha256(data).hexdigest()
    for args in (["runs"], ["history", "ML-KEM-768"], ["report", "20260101-00", "--out",
                                                      str(tmp_path / "r")],
                 ["report", "--by", "label", "--out", str(tmp_path / "r")],
                 ["export", "20260101-00"]):
        done = run_cli(*args, "--db", str(db))
        _clean(done)
        assert done.returncode == 1 and "damaged" in done.stderr, (args, done.stderr)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest


def test_comparing_a_run_with_itself_is_a_usage_error(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    store = Store.open(str(db))
    store.save_run(make_run("20260101-a", seed=1))
    store.close()
    for pair in (["20260101-a", "20260101-a"], ["20260101", "20260101-a"]):
        done = run_cli("compare", *pair, "--db", str(db))
        _clean(done)
        assert done.returncode == 2 and "the same run 20260101-a" in done.stderr, done.stderr
    # A group named twice, gate or not: a usage error, never a comparison that cannot fail.
    store = Store.open(str(db))
    store.save_run(make_run("20260102-b", seed=2, label="base"))
    store.close()
    for gate in ([], ["--fail-on", "slower"]):
        done = run_cli("compare", "--by", "label", "base", "base", *gate, "--db", str(db))
        _clean(done)
        assert done.returncode == 2 and "'base' is named twice" in done.stderr, done.stderr


def test_an_empty_database_location_is_refused_not_the_default(tmp_path: Path) -> None:
    """`--db ''` and PQBENCH_DB='' (an unset shell variable): refused, and the default
    database (under XDG_DATA_HOME here) neither created nor written."""
    home = tmp_path / "data"
    env = {"XDG_DATA_HOME": str(home), "PQBENCH_DB": ""}
    for args, shown in ((["--db", ""], "--db is empty"), (["--db", "  "], "--db is empty"),
                        ([], "PQBENCH_DB is set but empty")):
        for command in (["speed", "x25519", "-i", "cryptography", "--seconds", "0.02",
                         "--rounds", "1"], ["runs"], ["env"]):
            done = run_cli(*command, *args, env=env)
            _clean(done)
            assert done.returncode == 2 and shown in done.stderr, (command, done.stderr)
    assert not home.exists()


# --- a database that refuses the run: the measurement is kept ---------------------------

SPEED = ["speed", "x25519", "-i", "cryptography", "-o", "derive", "--seconds", "0.02",
         "--rounds", "2"]


def _recovered(done: subprocess.CompletedProcess[str], tmp_path: Path) -> Path:
    """The recovery file the error names: it is in the state folder given, whole."""
    _clean(done)
    assert done.returncode == 1, done.stderr
    message = " ".join(done.stderr.split())
    assert "the measurement was kept in " in message, message
    path = Path(message.split("the measurement was kept in ", 1)[1].split(":", 1)[0])
    assert path.is_file() and path.is_relative_to(tmp_path / "state"), path
    return path


def test_a_locked_database_keeps_the_measurement_in_a_file_import_accepts(
        tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    Store.open(str(db)).close()
    env = {"PQBENCH_DB_TIMEOUT": "1", "XDG_STATE_HOME": str(tmp_path / "state")}
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # readers may read, no other writer may write
    try:
        done = run_cli(*SPEED, "--json", "--db", str(db), env=env)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "locked" in done.stderr, done.stderr
    printed = json.loads(done.stdout)  # --json prints the run anyway
    path = _recovered(done, tmp_path)
    kept = json.loads(path.read_text())
    assert [r["run_id"] for r in kept["runs"]] == [printed["run_id"]]
    assert kept["runs"][0]["results"] == printed["results"]
    assert Store.open(str(db), create=False).list_runs() == []
    imported = run_cli("import", str(path), "--db", str(db))
    assert imported.returncode == 0, imported.stderr
    (info,) = Store.open(str(db), create=False).list_runs()
    assert info.run_id == printed["run_id"] and info.measurements == 1


def test_a_full_disk_keeps_the_measurement_in_a_file_import_accepts(tmp_path: Path) -> None:
    """A file size limit (RLIMIT_FSIZE) stands in for a full disk: SQLite's write fails
    with "database or disk is full" once the database would grow."""
    db = tmp_path / "runs.db"
    Store.open(str(db)).close()
    limit = db.stat().st_size
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    done = subprocess.run(
        [sys.executable, "-m", "pqbench", *SPEED, "--db", str(db)], capture_output=True,
        text=True, env=env, timeout=300, check=False,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    assert "full" in done.stderr, done.stderr
    path = _recovered(done, tmp_path)
    assert db.stat().st_size == limit
    imported = run_cli("import", str(path), "--db", str(db))
    assert imported.returncode == 0, imported.stderr
    (info,) = Store.open(str(db), create=False).list_runs()
    assert info.measurements == 1
