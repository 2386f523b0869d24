"""The `pqbench` entry point itself: --version, and -h as --help everywhere."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest
import typer
from typer.testing import CliRunner

from pqbench.cli import app
from tests.helpers import REPO

PROJECT_VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
_GROUP = typer.main.get_command(app)
# Every command, and the subcommands of groups (`files hash`), as argument lists.
COMMANDS = sorted(
    [name, *sub]
    for name, command in _GROUP.commands.items()  # type: ignore[attr-defined]
    for sub in ([[]] + [[s] for s in getattr(command, "commands", {})])
)


@pytest.mark.process
def test_version_prints_the_project_version() -> None:
    result = subprocess.run([sys.executable, "-m", "pqbench", "--version"], cwd=REPO,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"pqbench {PROJECT_VERSION}\n"


def test_version_wins_over_a_command(runner: CliRunner) -> None:
    result = runner.invoke(app, ["--version", "runs"])
    assert result.exit_code == 0
    assert result.stdout == f"pqbench {PROJECT_VERSION}\n"


def test_commands_are_listed() -> None:
    names = {" ".join(command) for command in COMMANDS}
    assert {"speed", "verify", "env", "runs", "compare", "files", "files hash"} <= names


def test_short_help_is_the_top_level_help(runner: CliRunner) -> None:
    short, long = runner.invoke(app, ["-h"]), runner.invoke(app, ["--help"])
    assert short.exit_code == long.exit_code == 0
    assert short.stdout == long.stdout
    assert "Usage: pqbench" in short.stdout and "--version" in short.stdout


@pytest.mark.parametrize("command", [pytest.param(c, id=" ".join(c)) for c in COMMANDS])
def test_short_help_works_on_every_command(runner: CliRunner, command: list[str]) -> None:
    short = runner.invoke(app, [*command, "-h"])
    long = runner.invoke(app, [*command, "--help"])
    assert short.exit_code == long.exit_code == 0, short.stderr
    assert short.stdout == long.stdout
    assert f"Usage: pqbench {' '.join(command)}" in short.stdout


def test_unknown_option_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(app, ["--verison"])
    assert result.exit_code == 2
    assert "No such option" in result.stderr
