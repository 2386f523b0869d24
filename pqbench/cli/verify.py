"""`pqbench verify`: check every implementation before trusting its timings."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench import algorithms
from pqbench.checks.verify import verify_all
from pqbench.cli.common import JsonOption, handles_errors, print_json
from pqbench.cli.root import app
from pqbench.implementations import liboqs_mechanisms, select
from pqbench.presentation import console


@app.command()
@handles_errors
def verify(
    algorithm: Annotated[list[str] | None, typer.Argument(
        help="Algorithms to check (default: every built-in public-key algorithm).")] = None,
    implementation: Annotated[list[str] | None, typer.Option(
        "--implementation", "-i", help="Only these implementations (repeatable).")] = None,
    json_output: JsonOption = False,
) -> None:
    """Run known-answer tests and round-trip/tamper checks of every implementation."""
    kems, sigs = liboqs_mechanisms()
    names = algorithm or [a.name for a in algorithms.all_algorithms()
                          if a.kind in ("kem", "signature", "key-agreement", "rsa")]
    chosen = algorithms.resolve(names, kems, sigs)
    outcomes = verify_all(chosen, select(implementation))
    failed = [o for o in outcomes if o.status == "failed"]
    if json_output:
        print_json({"results": [o.as_dict() for o in outcomes], "failed": len(failed)})
    else:
        console.stdout.print(console.rows_table(
            "verification", ("algorithm", "implementation", "check", "status", "detail"),
            [(o.algorithm, o.implementation, o.check, o.status, o.detail) for o in outcomes]))
    if failed:
        console.error(f"{len(failed)} check(s) failed")
        raise typer.Exit(1)
