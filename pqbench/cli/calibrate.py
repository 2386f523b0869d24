"""`pqbench calibrate`: measure this machine's run-to-run spread for the rows you care about."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.app import calibrate as use_case
from pqbench.cli.common import (
    AlgorithmsArgument,
    DbOption,
    ImplementationsOption,
    JsonOption,
    LabelOption,
    handles_errors,
)
from pqbench.cli.root import app
from pqbench.views import console


@app.command()
@handles_errors
def calibrate(
    algorithm: AlgorithmsArgument = None,
    runs: Annotated[int, typer.Option(
        "--runs", "-n", min=2, max=50, metavar="N",
        help="Separate runs of the suite, each its own process.")] = 5,
    implementation: ImplementationsOption = None,
    operation: Annotated[list[str] | None, typer.Option(
        "--operation", "-o", metavar="OP", help="Only these operations.")] = None,
    block_bytes: Annotated[list[int] | None, typer.Option(
        "--bytes", min=1, metavar="BYTES",
        help="Ciphers and hashes: bytes per operation (repeatable).")] = None,
    seconds: Annotated[float | None, typer.Option(
        metavar="SECONDS", min=0.001, max=3600.0,
        help="Timed seconds per operation, as `pqbench speed --seconds`.")] = None,
    rounds: Annotated[int | None, typer.Option(
        min=1, max=1000, metavar="N", help="Rounds per operation, as `pqbench speed`.")
    ] = None,
    pause: Annotated[float, typer.Option(
        "--pause", min=0.0, max=3600.0, metavar="SECONDS",
        help="Wait between runs, so they see more of the machine's drift.")] = 0.0,
    label: LabelOption = "calibration",
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Take a few runs of a suite, each in its own process, and store them as calibration.

    `compare` and `history` judge a build with one or few runs against this machine's
    run-to-run spread of each row; these runs measure it (one build, run after run), and
    the table says how large a change one run against one can now call.
    """
    from pqbench.views.noise import calibration_document, spread_table

    argv = use_case.speed_arguments(algorithm, implementation, operation, block_bytes,
                                    seconds, rounds, label)
    with console.status(f"calibrating: {runs} runs of the suite, one process each"):
        found = use_case.calibrate(
            argv, runs, db, pause,
            done=lambda i, run_id: console.note(f"run {i} of {runs}: {run_id}"))
    if json_output:
        console.print_json(calibration_document(found.ids, found.spreads))
        return
    console.print_table(spread_table(found.spreads))
    console.note(f"stored {len(found.ids)} calibration runs ({', '.join(found.ids)}); "
                 "compare and history judge one run per build against these spreads")
