"""Shared fixtures: a CLI runner, temporary databases, one small real run, a PostgreSQL
server and a built userland. Helpers that are not fixtures live in `tests.helpers`."""

from __future__ import annotations

import json
import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from pqbench.cli import app
from tests.helpers import NAME

if TYPE_CHECKING:
    from pqbench.userland import Userland

# A suite started in the background of a non-interactive shell (`make test &`, nohup)
# inherits SIGINT ignored, and so would every process a test starts: the Ctrl-C tests
# would send a signal nobody receives. A handler, unlike "ignored", is not inherited.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


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
    """A real PostgreSQL server (tests/helpers/postgres.py) for the tests of one module."""
    from tests.helpers.postgres import running_server

    with running_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store on each backend: a SQLite file, and a database of its own on the
    module's PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "fleet.db")
    from tests.helpers.postgres import fresh_database

    return fresh_database(request.getfixturevalue("postgres_base"))


@pytest.fixture(scope="session")
def trixie() -> Userland:
    """The Debian 13 userland (`tests.helpers.NAME`), built once per session."""
    from pqbench.userland import ensure

    assert os.geteuid() == 0, "building a userland needs root (CI runs the suite as root)"
    return ensure(NAME)


@pytest.fixture
def db_inside(trixie: Userland) -> Iterator[str]:
    """A database path inside the userland, removed afterwards."""
    name = f"/tmp/pqbench-test-{uuid.uuid4().hex[:8]}.db"
    yield name
    (trixie.root / name.lstrip("/")).unlink(missing_ok=True)


@pytest.fixture
def two_runs(tmp_path: Path) -> Path:
    """A database of two small runs, "a" and "b" (b twice as fast)."""
    from pqbench.store import Store
    from tests.helpers.runs import make_run

    db = tmp_path / "runs.db"
    store = Store.open(str(db))
    store.save_run(make_run("20260101-a", seed=1, label="a"))
    store.save_run(make_run("20260102-b", seed=2, label="b", factor=2.0))
    store.close()
    return db
