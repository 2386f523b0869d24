"""The suite's CliRunner (tests/conftest.py) runs each command line on the command tree the
app registers at that moment, built once for as long as the registrations stay the same."""

from __future__ import annotations

import typer
import typer.testing
from typer.testing import CliRunner


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def first() -> None:
        print("first ran")

    @app.command()
    def second() -> None:
        print("second ran")

    return app


def test_the_tree_is_built_once_while_the_registrations_stay() -> None:
    app = _app()
    tree = typer.testing._get_command(app)
    assert CliRunner().invoke(app, ["first"]).stdout == "first ran\n"
    assert typer.testing._get_command(app) is tree
    assert typer.testing._get_command(_app()) is not tree  # another app, its own tree


def test_a_command_registered_later_is_found() -> None:
    app = _app()
    assert CliRunner().invoke(app, ["first"]).exit_code == 0

    @app.command()
    def third() -> None:
        print("third ran")

    result = CliRunner().invoke(app, ["third"])
    assert (result.exit_code, result.stdout) == (0, "third ran\n")


def test_a_group_registered_later_is_found() -> None:
    app, sub = _app(), _app()
    assert CliRunner().invoke(app, ["second"]).stdout == "second ran\n"
    app.add_typer(sub, name="sub")
    result = CliRunner().invoke(app, ["sub", "second"])
    assert (result.exit_code, result.stdout) == (0, "second ran\n")

    @sub.command()
    def fourth() -> None:
        print("fourth ran")

    result = CliRunner().invoke(app, ["sub", "fourth"])
    assert (result.exit_code, result.stdout) == (0, "fourth ran\n")
