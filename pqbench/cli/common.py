"""What every command shares: the --db option and turning errors into exit codes."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from pqbench import console
from pqbench.errors import PqbenchError
from pqbench.store import ENV_VAR

F = TypeVar("F", bound=Callable[..., Any])

DbOption = Annotated[
    str | None,
    typer.Option("--db", envvar=ENV_VAR, show_envvar=True,
                 help="Results database: a file path or postgresql://... URL "
                      "(default: a per-user file, see `pqbench env`)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


def handles_errors(command: F) -> F:
    """Map PqbenchError to a clear message and its exit code; Ctrl-C to 130."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except PqbenchError as exc:
            console.error(str(exc))
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            console.error("interrupted")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def print_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=2, default=str) + "\n")
    sys.stdout.flush()
