"""Where a database is, and what happens when it cannot be made: a new database on a full
disk, in-memory SQLite forms, names libpq or the file system refuse, a damaged schema
version, pqbench's tables without their meta rows. Nothing measured is lost, no half-made
file is left for later commands to refuse, and every refusal is a clear message."""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pqbench.cli import app
from pqbench.data.store import Store
from tests.helpers.runs import make_run

SPEED = ["speed", "x25519", "-i", "cryptography", "-o", "derive", "--seconds", "0.02",
         "--rounds", "2"]


def _clean(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr + done.stdout, done.stderr


def run_cli(*args: str, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    """The command in this process (a refusal needs no process of its own), as a
    CompletedProcess; an exception that escaped the command fails the test."""
    result = CliRunner().invoke(app, list(args), env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


def _limited(args: list[str], limit: int, env: dict[str, str], cwd: Path
             ) -> subprocess.CompletedProcess[str]:
    """pqbench with a file size limit (RLIMIT_FSIZE) standing in for a full disk: a write
    past `limit` bytes fails as "database or disk is full" (Python ignores SIGXFSZ)."""
    return subprocess.run([sys.executable, "-m", "pqbench", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=300, check=False,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE,
                                                                (limit, limit)))


@pytest.mark.process
@pytest.mark.parametrize("at_default", [False, True], ids=["--db", "default-path"])
def test_a_new_database_on_a_full_disk_keeps_the_run_and_leaves_no_partial_file(
        tmp_path: Path, at_default: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PQBENCH_DB"}
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), XDG_STATE_HOME=str(tmp_path / "state"))
    db = tmp_path / "data" / "pqbench" / "pqbench.db" if at_default else tmp_path / "new.db"
    args = [*SPEED, "--json"] + ([] if at_default else ["--db", str(db)])
    # 30 KiB: too small for the schema (the file is cut short while it is made), large
    # enough for the recovery file of one row.
    done = _limited(args, 30 * 1024, env, tmp_path)
    _clean(done)
    assert done.returncode == 1, done.stderr
    message = " ".join(done.stderr.split())
    assert "the measurement was kept in " in message, message
    kept = Path(message.split("the measurement was kept in ", 1)[1].split(":", 1)[0])
    assert kept.is_relative_to(tmp_path / "state"), kept
    printed = json.loads(done.stdout)  # --json still prints the run
    assert not db.exists() and not Path(f"{db}-journal").exists()
    # Later commands find no database (not a damaged one) and the run imports whole.
    listed = subprocess.run([sys.executable, "-m", "pqbench", "runs"]
                            + ([] if at_default else ["--db", str(db)]),
                            capture_output=True, text=True, env=env, check=False)
    assert listed.returncode == 0 and "no runs stored yet" in listed.stdout, listed.stderr
    imported = subprocess.run([sys.executable, "-m", "pqbench", "import", str(kept)]
                              + ([] if at_default else ["--db", str(db)]),
                              capture_output=True, text=True, env=env, check=False)
    assert imported.returncode == 0, imported.stderr
    (info,) = Store.open(str(db), create=False).list_runs()
    assert info.run_id == printed["run_id"]


@pytest.mark.parametrize("location", ["sqlite://", "sqlite:", "sqlite:///", "sqlite:///:memory:",
                                      "file:x.db?mode=memory", "file::memory:"])
def test_an_in_memory_database_is_refused_before_measuring(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, location: str) -> None:
    monkeypatch.chdir(tmp_path)  # a form taken for a file name would be made here
    for args in (SPEED, ["runs"], ["export", "20260101-a", "-O", str(tmp_path / "x.json")]):
        done = run_cli(*args, "--db", location)
        _clean(done)
        assert done.returncode == 1 and "in-memory" in done.stderr, (args, done.stderr)
        assert "stored as run" not in done.stdout + done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.process
@pytest.mark.parametrize("location, path", [
    ("sqlite:///relative.db", "relative.db"), ("file:plain.db", "plain.db"),
    ("odd?name#with%20marks.db", "odd?name#with%20marks.db"),
    (":memory:", ":memory:"),  # a file of that name, never SQLite's in-memory database
])
def test_what_is_written_is_read_back_by_the_same_location(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, location: str, path: str) -> None:
    monkeypatch.chdir(tmp_path)
    done = run_cli(*SPEED, "--db", location)
    assert done.returncode == 0, done.stderr
    listed = run_cli("runs", "--json", "--db", location)
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)["runs"]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [path]


def test_a_database_name_too_long_for_the_file_system_is_a_clear_error(tmp_path: Path
                                                                       ) -> None:
    for name in ("a" * 5000, str(tmp_path / ("b" * 300 + ".db"))):
        for args in (["runs"], SPEED, ["annotate", "build", "note"]):
            done = run_cli(*args, "--db", name)
            _clean(done)
            assert done.returncode == 1 and "error:" in done.stderr, (args, done.stderr)
            assert "too long" in done.stderr, done.stderr


@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-1", "0", "1e9"])
def test_the_lock_timeout_must_be_a_sane_number_of_seconds(tmp_path: Path,
                                                           value: str) -> None:
    db = tmp_path / "runs.db"
    Store.open(str(db)).close()
    for args in (["runs"], SPEED):
        done = run_cli(*args, "--db", str(db), env={"PQBENCH_DB_TIMEOUT": value})
        _clean(done)
        assert done.returncode == 2, done.stderr
        assert f"PQBENCH_DB_TIMEOUT={value!r} is not a number of seconds" in done.stderr


def _with_runs(db: Path) -> None:
    store = Store.open(str(db))
    store.save_run(make_run("20260101-a", seed=1))
    store.save_run(make_run("20260102-b", seed=2))
    store.close()


@pytest.mark.parametrize("value, said", [
    ("abc", "schema version pqbench does not know"), ("", "schema version pqbench does not"),
    ("-3", "schema version -3 has no upgrade path"), ("0", "schema version 0 has no upgrade"),
])
def test_a_schema_version_pqbench_cannot_read_is_a_clear_refusal(tmp_path: Path, value: str,
                                                                 said: str) -> None:
    db = tmp_path / "runs.db"
    _with_runs(db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE pqbench_meta SET value = ? WHERE key = 'schema_version'",
                     (value,))
    before = db.read_bytes()
    for args in (["runs"], SPEED):
        done = run_cli(*args, "--db", str(db))
        _clean(done)
        assert done.returncode == 1 and said in " ".join(done.stderr.split()), done.stderr
    assert db.read_bytes() == before


@pytest.mark.parametrize("meta", ["dropped", "emptied"])
def test_runs_without_their_meta_rows_are_refused_not_listed_as_none(tmp_path: Path,
                                                                      meta: str) -> None:
    db = tmp_path / "runs.db"
    _with_runs(db)
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE pqbench_meta" if meta == "dropped"
                     else "DELETE FROM pqbench_meta")
    before = db.read_bytes()
    for args in (["runs"], ["runs", "--json"], SPEED, ["annotate", "b", "t"]):
        done = run_cli(*args, "--db", str(db))
        _clean(done)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert "holds pqbench runs but no schema version" in done.stderr, done.stderr
        assert "no runs stored yet" not in done.stdout
    assert db.read_bytes() == before


def test_annotate_on_an_empty_file_says_there_is_no_database_yet(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    db.write_bytes(b"")
    done = run_cli("annotate", "build", "note", "--db", str(db))
    _clean(done)
    assert done.returncode == 1 and "no pqbench database in" in done.stderr, done.stderr
    assert "no such table" not in done.stderr


@pytest.mark.process
@pytest.mark.parametrize("location", ["sqlite:///folder/", "folder/", "file:folder/",
                                      "/proc/self/mem"])
def test_a_folder_or_a_file_that_cannot_be_read_is_refused_before_measuring(
        tmp_path: Path, location: str) -> None:
    """`sqlite:///dir/` made a file named `dir`; /proc/self/mem ended in an OSError's
    traceback (EIO) from the check of the file's first bytes."""
    for args in (SPEED, ["runs"]):
        done = subprocess.run([sys.executable, "-m", "pqbench", *args, "--db", location],
                              capture_output=True, text=True, cwd=tmp_path, timeout=300,
                              check=False)
        _clean(done)
        assert done.returncode == 1, (args, done.stderr)
        said = ("cannot read /proc/self/mem: Input/output error" if location.startswith("/")
                else "names a folder (it ends with a slash)")
        assert said in done.stderr and "stored as run" not in done.stdout, done.stderr
    assert list(tmp_path.iterdir()) == []
