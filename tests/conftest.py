"""Shared fixtures: a CLI runner, temporary databases, and one small real run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pqbench.cli import app

# A suite started in the background of a non-interactive shell (`make test &`, nohup)
# inherits SIGINT ignored, and so would every process a test starts: the Ctrl-C tests
# would send a signal nobody receives. A handler, unlike "ignored", is not inherited.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parent.parent



def _cpu_flags() -> frozenset[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return frozenset(line.split(":", 1)[1].split())
    return frozenset()


#: This CPU's flags: tests assert a capability's effect only where the CPU has it.
CPU_FLAGS = _cpu_flags()


@pytest.fixture(autouse=True)
def _wide_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables lay themselves out for the terminal they are printed on (COLUMNS, else the
    width of a terminal on stdin, stdout or stderr): a test started from an 80-column
    terminal sees what one started by CI sees. Tests of the layout set their own width.
    (Per test, so pytest's own report keeps the real width.)"""
    monkeypatch.setenv("COLUMNS", "1000")


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "results.db"


def run_cli(*args: str, env: dict[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """pqbench as a real subprocess (`python -m pqbench`), as a user would run it."""
    merged = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "pqbench", *args], capture_output=True,
                          text=True, env=merged, timeout=timeout, check=False)


@pytest.fixture(scope="session")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """One real `pqbench speed` run over the headline pairs, shared by read-only tests."""
    db = tmp_path_factory.mktemp("small-run") / "results.db"
    result = CliRunner().invoke(app, ["speed", "ml-kem-768", "ml-dsa-65", "x25519", "rsa2048",
                                      "--seconds", "0.1", "--rounds", "5", "--json",
                                      "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    return db, json.loads(result.stdout)


@pytest.fixture(scope="module")
def postgres_base() -> Iterator[str]:
    """A real PostgreSQL server (tests/postgres_server.py) for the tests of one module."""
    from tests.postgres_server import running_server

    with running_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store on each backend: a SQLite file, and a database of its own on the
    module's PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "fleet.db")
    from tests.postgres_server import fresh_database

    return fresh_database(request.getfixturevalue("postgres_base"))
