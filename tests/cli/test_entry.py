"""The `pqbench` entry point itself: --version, and -h as --help everywhere."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib

import pytest
import typer
from typer.testing import CliRunner

from pqbench.cli import BODY_MODULES, COMMAND_MODULES, app
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


def test_each_command_names_the_module_that_registers_it() -> None:
    """`main` loads only the module its first word names (COMMAND_MODULES): the map must
    hold every command and group the modules register, each with its own module."""
    registered = {command.name or command.callback.__name__: command.callback.__module__
                  for command in app.registered_commands if command.callback is not None}
    for group in app.registered_groups:
        instance = group.typer_instance
        assert instance is not None
        modules = {c.callback.__module__ for c in instance.registered_commands if c.callback}
        assert len(modules) == 1, modules
        registered[group.name or instance.info.name] = modules.pop()
    assert {name: f"pqbench.cli.{module}" for name, module in COMMAND_MODULES.items()} \
        == registered


# Runs main as `pqbench ARGS...` would, then says on stderr which command modules and
# whether typer were loaded.
_LOADED = ("import sys\nsys.argv = ['pqbench', *sys.argv[1:]]\nfrom pqbench.__main__ import main\n"
           "try:\n    main()\nexcept SystemExit:\n    pass\n"
           "cli = sorted(m for m in sys.modules if m.startswith('pqbench.cli.'))\n"
           "print('LOADED', ' '.join(cli), 'typer' in sys.modules, file=sys.stderr)")


def _loaded(*args: str, stdin: str = "") -> tuple[set[str], bool]:
    done = subprocess.run([sys.executable, "-c", _LOADED, *args], cwd=REPO, input=stdin,
                          capture_output=True, text=True, timeout=120, check=False)
    line = done.stderr.strip().splitlines()[-1].split()
    assert line[0] == "LOADED", done.stderr
    return set(line[1:-1]), line[-1] == "True"


@pytest.mark.process
def test_a_command_line_loads_its_own_command_and_help_loads_them_all() -> None:
    modules, typer_loaded = _loaded("list")
    assert typer_loaded and "pqbench.cli.list" in modules
    assert not modules & {"pqbench.cli.ab", "pqbench.cli.bisect", "pqbench.cli.speed"}
    modules, _ = _loaded("--help")
    assert {f"pqbench.cli.{m}" for m in COMMAND_MODULES.values()} <= modules


@pytest.mark.process
def test_a_worker_is_served_without_the_command_line() -> None:
    """`pqbench worker`, as `ab` starts it, answers hello without loading typer or a
    command; with any other argument it is the typer command (`worker --help`)."""
    modules, typer_loaded = _loaded("worker", stdin='{"type": "quit"}\n')
    assert not typer_loaded and modules == set()
    modules, typer_loaded = _loaded("worker", "--help")
    assert typer_loaded and "pqbench.cli.ab" in modules


# Runs main as `pqbench ARGS...` would, then says whether the collector is on and how many
# objects loading froze.
_COLLECTOR = ("import gc, sys\nsys.argv = ['pqbench', *sys.argv[1:]]\n"
              "from pqbench.__main__ import main\n"
              "try:\n    main()\nexcept SystemExit:\n    pass\n"
              "print('GC', gc.isenabled(), gc.get_freeze_count(), file=sys.stderr)")


@pytest.mark.process
def test_the_commands_load_frozen_and_the_collector_is_on_again() -> None:
    """What loading the commands made is out of every later collection (`_loaded`), and
    the collector runs again for the command: a command that left it off would keep every
    cycle it makes."""
    done = subprocess.run([sys.executable, "-c", _COLLECTOR, "list"], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)
    words = done.stderr.strip().splitlines()[-1].split()
    assert words[:2] == ["GC", "True"], done.stderr
    assert int(words[2]) > 10_000  # typer, rich and the command's modules


def test_what_a_command_body_imports_is_named_by_modules_that_exist() -> None:
    """`load` imports each of BODY_MODULES with its command: a name that no module has
    would end that command before it starts."""
    assert set(BODY_MODULES) <= set(COMMAND_MODULES)
    for names in BODY_MODULES.values():
        for name in names:
            assert importlib.util.find_spec(name) is not None, name
