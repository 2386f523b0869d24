"""What several test files share: the repository's root, this CPU's flags, pqbench as a
subprocess, and a userland's commands. Synthetic runs are in `runs`, test-only statistics
in `samples`, a throw-away PostgreSQL server in `postgres`, frozen old schemas in
`old_schemas`. Fixtures live in conftest.py; test files import helpers only from here."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pqbench.libraries.userland import Userland

F = TypeVar("F", bound=Callable[..., Any])

REPO = Path(__file__).resolve().parent.parent.parent


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


def starts_processes(fixture: F) -> F:
    """Mark a fixture whose set-up starts processes (a pqbench run, a worker, a server):
    every test that uses it is marked `process` (tests/conftest.py), whichever of them
    happens to set it up first. Put it under `@pytest.fixture`."""
    fixture.starts_processes = True  # type: ignore[attr-defined]
    return fixture


def run_cli(*args: str, env: dict[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """pqbench as a real subprocess (`python -m pqbench`), as a user would run it."""
    merged = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "pqbench", *args], capture_output=True,
                          text=True, env=merged, timeout=timeout, check=False)


def invoke(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """pqbench's command line run in this process (typer's CliRunner), answered as `run_cli`
    answers: for a test of what a command prints and returns that does not need a process
    of its own (signals, start-up, a clean environment), without a second Python's start-up."""
    from typer.testing import CliRunner

    from pqbench.cli import app

    result = CliRunner().invoke(app, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(["pqbench", *args], result.exit_code, result.stdout,
                                       result.stderr)


#: The userland the OS-build tests build and run inside.
NAME = "debian-trixie"


def inside(userland: Userland, *argv: str, timeout: float = 600,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The userland's pqbench (argv[0] == "pqbench") or any command, through its prefix."""
    command = (userland.command_prefix() + list(argv[1:]) if argv[0] == "pqbench"
               else userland.command_prefix()[:-1] + list(argv))
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          check=False, env={**os.environ, **(env or {})})
