"""The `pqbench` command line: typer commands that parse, call the domain, render."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="pqbench",
    help="What post-quantum cryptography costs on this machine, and whether the last OS "
         "update changed it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each module registers its commands on `app` when imported.
from pqbench.cli import (  # noqa: E402, F401
    compare,
    exchange,
    files,
    history,
    info,
    report,
    speed,
    verify,
)


def main() -> None:
    app()
