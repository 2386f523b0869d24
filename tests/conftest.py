"""Shared fixtures: a CLI runner, temporary databases, one small real run, a PostgreSQL
server and a built userland. Helpers that are not fixtures live in `tests.helpers`."""

from __future__ import annotations

import json
import os
import signal
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import typer
import typer.testing
from typer.testing import CliRunner

from tests.helpers import NAME, starts_processes

if TYPE_CHECKING:
    from pqbench.libraries.userland import Userland

# A suite started in the background of a non-interactive shell (`make test &`, nohup)
# inherits SIGINT ignored, and so would every process a test starts: the Ctrl-C tests
# would send a signal nobody receives. A handler, unlike "ignored", is not inherited.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# --- the lanes: a test that starts a process says so ------------------------------------
#
# `make check` runs the tests marked neither `process` nor `slow` (pyproject.toml). A test
# that starts a process without the `process` marker would slow that lane down unseen, so
# Python's own audit events (PEP 578) are watched from each test's set-up to its end, and
# such a test fails, naming the first process it started.

#: The audit events of starting a program or a copy of this one.
_STARTS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty",
                     "os.system", "os.exec", "os.spawn"})
_started: list[str] = []
_watching = [False]


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _watching[0] and event in _STARTS and not _started:
        what = args[1] if event == "subprocess.Popen" and len(args) > 1 else args[:1]
        words = what if isinstance(what, list | tuple) else [what]
        _started.append(f"{event}: {' '.join(map(str, words))[:120]}")


sys.addaudithook(_audit)


# --- the command line, built once per registration --------------------------------------
#
# typer's CliRunner.invoke builds click's command tree from the app's functions on every
# call (each command's signature and annotations read again): a tenth of a second for
# pqbench's app, and the fast lane invokes it some 300 times. A `pqbench` process builds
# the tree once and runs one command line on it; click keeps each command line's state in
# its own Context, never in the tree, so the tests run theirs on one tree as well, built
# again whenever what the app registers changes (a test's own app is a tree of its own).


def _registered(app: typer.Typer) -> tuple[object, ...]:
    """What typer builds the tree from: the app's commands, groups and callback."""
    return (id(app), id(app.registered_callback),
            tuple((id(c), id(c.callback)) for c in app.registered_commands),
            tuple((id(g), id(g.typer_instance),
                   _registered(g.typer_instance) if g.typer_instance else ())
                  for g in app.registered_groups))


_trees: dict[int, tuple[typer.Typer, tuple[object, ...], Any]] = {}
_build_tree = typer.testing._get_command


def _tree_of(typer_instance: typer.Typer) -> Any:  # typer.main.get_command's signature
    app = typer_instance
    kept = _trees.get(id(app))
    if kept is None or kept[0] is not app or kept[1] != _registered(app):
        kept = _trees[id(app)] = (app, _registered(app), _build_tree(app))
    return kept[2]


typer.testing._get_command = _tree_of


def pytest_sessionstart(session: pytest.Session) -> None:
    """What pqbench asks once per process and keeps (liboqs, the system libcrypto and libssl,
    found through ldconfig; the hypervisor, from systemd-detect-virt) is asked here, before
    the first test, so that no test is charged with those helper processes for coming
    first. (Not in the process that hands tests to pytest-xdist's workers: it runs none.)"""
    if session.config.getoption("numprocesses", None) and not hasattr(session.config,
                                                                       "workerinput"):
        return
    from pqbench.libraries.implementations import liboqs_mechanisms
    from pqbench.measure import environment
    from pqbench.measure.tls import registry

    liboqs_mechanisms()
    environment.system_libcrypto()
    environment.virtualization()
    for implementation in registry.select(None):
        implementation.unavailable_reason()


def _starts_processes(item: pytest.Item) -> bool:
    return item.get_closest_marker("process") is not None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    _started.clear()
    _watching[0] = not _starts_processes(item)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    if call.when != "call":
        return
    _watching[0] = False
    report = outcome.get_result()
    if _started and report.passed:
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} starts a process ({_started[0]}) but is not "
                           "marked @pytest.mark.process: mark it, so that `make check` "
                           "leaves it to `make test`")


def _uses_a_process_fixture(item: pytest.Item) -> bool:
    """Whether a fixture the test uses is marked `tests.helpers.starts_processes`."""
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(
        getattr(definitions[-1].func, "starts_processes", False)
        for name in getattr(item, "fixturenames", ())
        if (definitions := info.name2fixturedefs.get(name)))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test on the PostgreSQL server is marked `postgres`; one that uses a fixture that
    starts processes is marked `process`, wherever the fixture first happens to be set up."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        callspec = getattr(item, "callspec", None)
        on_postgres = "postgres_base" in names or (
            "location" in names and callspec is not None
            and callspec.params.get("location") == "postgresql")
        if on_postgres:
            item.add_marker(pytest.mark.postgres)
        if on_postgres or _uses_a_process_fixture(item):
            item.add_marker(pytest.mark.process)


# --- make test's workers: whole files, the longest first ----------------------------------
#
# `make test` runs the suite in two pytest-xdist workers. Each takes whole test files, so a
# module's fixtures (a PostgreSQL server, a bisection measured once) are set up once; the
# tests named in SPREAD are independent cases of one sweep, which either worker may take
# one by one. Files are handed out longest first and the short ones last, so that neither
# worker is left alone with a long file at the end (the 25 slowest tests, printed by every
# `make test`, say which files belong in LONGEST).

#: Test functions whose parametrized cases share nothing and may go to either worker.
SPREAD = frozenset({"tests/hostile/test_cli.py::test_every_command_survives_hostile_values"})
#: The longest test files, longest first (from `make test`'s slowest durations); the rest
#: follow, the files with the most tests first.
LONGEST = tuple(f"tests/{name}.py" for name in (
    "speed/test_mask_e2e", "bisect/test_cli", "project/test_story", "liboqs/test_provision",
    "bisect/test_pip", "store/test_secrets", "project/test_wheel", "userland/test_userland",
    "hostile/test_build_secrets", "report/test_report", "hostile/test_store",
    "hostile/test_hangs", "hostile/test_secrets", "hostile/test_import",
    "stacks/test_pipeline", "cli/test_one_run_per_build"))


def _scope(nodeid: str) -> str:
    path, _, name = nodeid.partition("::")
    return nodeid if f"{path}::{name.split('[', 1)[0]}" in SPREAD else path


def _rank(scope: str, tests: int) -> tuple[int, int]:
    if scope in LONGEST:
        return 0, LONGEST.index(scope)
    return (1, 0) if "::" in scope else (2, -tests)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """`--dist loadfile` (make test) as described above; any other `--dist` as xdist has it."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class WholeFilesLongestFirst(LoadScopeScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return _scope(nodeid)

        def _assign_work_unit(self, node: object) -> None:
            if not self.ordered:
                self.ordered = True
                units = sorted(self.workqueue.items(), key=lambda u: _rank(u[0], len(u[1])))
                self.workqueue.clear()
                self.workqueue.update(units)
            super()._assign_work_unit(node)  # type: ignore[arg-type]

    return WholeFilesLongestFirst(config, log)  # type: ignore[arg-type]


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
@starts_processes
def small_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """One real `pqbench speed` run over the headline pairs, shared by read-only tests."""
    from pqbench.cli import app

    db = tmp_path_factory.mktemp("small-run") / "results.db"
    result = CliRunner().invoke(app, ["speed", "ml-kem-768", "ml-dsa-65", "x25519", "rsa2048",
                                      "--seconds", "0.1", "--rounds", "5", "--json",
                                      "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    return db, json.loads(result.stdout)


@pytest.fixture(scope="module")
@starts_processes
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
@starts_processes
def trixie() -> Userland:
    """The Debian 13 userland (`tests.helpers.NAME`), built once per session."""
    from pqbench.libraries.userland import ensure

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
    from pqbench.data.store import Store
    from tests.helpers.runs import make_run

    db = tmp_path / "runs.db"
    store = Store.open(str(db))
    store.save_run(make_run("20260101-a", seed=1, label="a"))
    store.save_run(make_run("20260102-b", seed=2, label="b", factor=2.0))
    store.close()
    return db
