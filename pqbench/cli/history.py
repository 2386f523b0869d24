"""`pqbench history` and `pqbench annotate`: one algorithm over OS builds, with its steps."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.cli.common import (
    CsvOption,
    DbOption,
    JsonOption,
    check_text,
    handles_errors,
    many_records,
    one_output,
)
from pqbench.cli.root import app
from pqbench.platform.errors import UsageError
from pqbench.views import answers, console


@app.command()
@handles_errors
def history(
    algorithm: Annotated[str, typer.Argument(metavar="NAME",
        help="Algorithm name, e.g. ML-KEM-768.")],
    implementation: Annotated[str | None, typer.Option(
        "--implementation", "-i", metavar="NAME", help="Only this implementation.")] = None,
    operation: Annotated[str | None, typer.Option(
        "--operation", "-o", metavar="NAME", help="Only this operation.")] = None,
    by: Annotated[str, typer.Option(
        metavar="FIELD",
        help="What a point is: os_build (default), label, date, or any fingerprint field.")
    ] = "os_build",
    machine: Annotated[str | None, typer.Option(
        "--machine", "-m", metavar="NAME",
        help="Only this machine: its host name, or its key as history and show print it. "
             "By default each machine has series of its own.")] = None,
    pool: Annotated[bool, typer.Option(
        "--pool", metavar="", help="Pool the runs of a group whatever build each measured "
                       "(masked and unmasked runs, a bisect's older wheels); by default "
                       "each build is a point of its own.")] = False,
    series_order: Annotated[bool, typer.Option(
        "--series-order", metavar="", help="Points in the order of a `pqbench bisect` series (its "
                               "runs' positions), not by date; e.g. with --by label.")
    ] = False,
    json_output: JsonOption = False,
    csv_output: CsvOption = False,
    db: DbOption = None,
) -> None:
    """Rate per build, oldest first, per machine, with its steps and annotations.

    A step is where `compare` judges the runs before it against the runs after it faster
    or slower, with one run per build judged against this machine's run-to-run spread.
    Two machines never share a point or a step: each has series of its own.
    """
    from pqbench.app.history import fleet_steps, histories
    from pqbench.data.store import Store

    one_output(json=json_output, csv=csv_output)
    with many_records():
        found = histories(Store.open(db, create=False), algorithm,
                          implementation=implementation, operation=operation, by=by,
                          pool=pool, series_order=series_order, machine=machine)
    answers.histories(found, algorithm=algorithm, by=by, fleet=fleet_steps(found),
                      json_output=json_output, csv_output=csv_output)


@app.command()
@handles_errors
def annotate(
    build: Annotated[str, typer.Argument(metavar="BUILD",
        help="The build (or label) the note belongs to.")],
    text: Annotated[str, typer.Argument(metavar="TEXT",
        help="The explanation, e.g. 'AES-NI enabled'.")],
    db: DbOption = None,
) -> None:
    """Attach an explanation to a build; `history` and reports show it."""
    from pqbench.app import annotations
    from pqbench.data.store import Store

    if not build.strip() or not text.strip():
        raise UsageError("both BUILD and TEXT must be non-empty")
    check_text(build, "BUILD")
    check_text(text, "TEXT")
    store = Store.open(db, create=False)
    runs = store.list_runs()
    if runs:  # an empty store says so itself (`Store.annotate`)
        annotations.check_build(build, runs)
    store.annotate(build, text)
    console.note(f"noted for {build}: {text}")
