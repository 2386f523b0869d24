"""`pqbench verify`: check every implementation before trusting its timings."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.app import verify as use_case
from pqbench.cli.common import JsonOption, end, handles_errors
from pqbench.cli.root import app
from pqbench.views import checks, console


@app.command()
@handles_errors
def verify(
    algorithm: Annotated[list[str] | None, typer.Argument(
        help="Algorithms to check (default: every built-in public-key algorithm).")] = None,
    implementation: Annotated[list[str] | None, typer.Option(
        "--implementation", "-i", help="Only these implementations (repeatable).")] = None,
    every: Annotated[bool, typer.Option(
        "--all", "-v", "--verbose", help="Print every check, not only those that failed.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Run known-answer tests and round-trip/tamper checks of every implementation.

    Prints one summary line and the checks that failed; --all prints every check.
    """
    plan = use_case.plan(algorithm, implementation)
    with console.progress_bar(plan.size, enabled=not json_output) as advance:
        found = use_case.verify(plan, advance)
    checks.show(found, every, json_output)
    end(found.ending)
