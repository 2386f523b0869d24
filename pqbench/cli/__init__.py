"""The `pqbench` command line: typer commands that parse, call the domain, render.

Loading the commands (typer, rich, the domain) takes about a second; `main` loads them
itself, so a Ctrl-C in that second ends pqbench as it ends a running command: one line,
status 130, no traceback of the import machinery. `app` is loaded on first use.
"""

from __future__ import annotations

import sys
from typing import Any


def main() -> None:
    try:
        try:
            from pqbench.cli.commands import app
        except KeyboardInterrupt:
            from pqbench import interrupts

            interrupts.ignore_later()  # as once a command was interrupted
            sys.stderr.write("error: interrupted\n")
            raise SystemExit(interrupts.SIGINT_EXIT) from None
        app()
    except SystemExit as done:
        from pqbench import interrupts

        if done.code in (interrupts.SIGINT_EXIT, interrupts.SIGTERM_EXIT):
            interrupts.forget_caught_interruption()
        raise


def __getattr__(name: str) -> Any:
    if name == "app":
        from pqbench.cli.commands import app

        return app
    raise AttributeError(f"module 'pqbench.cli' has no attribute {name!r}")
