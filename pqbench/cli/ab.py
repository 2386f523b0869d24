"""`pqbench ab`: two configurations in one paired, interleaved session; `pqbench worker`."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from pqbench.app import ab as use_case
from pqbench.cli import paired
from pqbench.cli.common import (
    AlgorithmsArgument,
    DbOption,
    ImplementationsOption,
    JsonOption,
    ThresholdOption,
    check_text,
    end,
    handles_errors,
    store_or_keep,
)
from pqbench.cli.root import app
from pqbench.data.record import codec
from pqbench.data.record.format import LABEL_CHARS
from pqbench.sessions import sides
from pqbench.views import ab as ab_views
from pqbench.views import console


@app.command()
@handles_errors
def ab(
    algorithm: AlgorithmsArgument = None,
    side_a: Annotated[list[str] | None, typer.Option(
        "--a", metavar="SIDE",
        help=f"Side A (before): {' | '.join(sides.SPELLINGS.values())}; repeatable.")] = None,
    side_b: Annotated[list[str] | None, typer.Option(
        "--b", metavar="SIDE", help="Side B (after), as --a.")] = None,
    operation: paired.Operations = None,
    implementation: ImplementationsOption = None,
    block_bytes: paired.Bytes = None,
    max_seconds: Annotated[float, typer.Option(
        "--max-seconds", help="Time budget of the whole session; each row gets what is left "
                              "over the rows still to come.")] = 300.0,
    round_seconds: Annotated[float, typer.Option(
        "--round", help="Seconds per round (each pair is one round of A and one of B).")
    ] = 0.05,
    threshold: ThresholdOption = "auto",
    cpu: paired.Cpu = None,
    worker_pairs: Annotated[int, typer.Option(
        "--worker-pairs", help="Worker pairs (an A and a B process each) the rounds rotate "
                               "over; at least 3.")] = 6,
    label_a: Annotated[str | None, typer.Option(
        "--label-a", help=f"Label of side A's run (up to {LABEL_CHARS} characters).",
        callback=lambda value: check_text(value, "--label-a"))] = None,
    label_b: Annotated[str | None, typer.Option(
        "--label-b", help=f"Label of side B's run (up to {LABEL_CHARS} characters).",
        callback=lambda value: check_text(value, "--label-b"))] = None,
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Measure two configurations in alternation on one CPU and say, row by row, whether B
    is faster or slower than A; both sides are stored as runs."""
    from pqbench.data.store import Store

    a, b = sides.parse(side_a or [], "a"), sides.parse(side_b or [], "b")
    settings, band = paired.settings(
        algorithm, implementation, operation, block_bytes, max_seconds=max_seconds,
        round_seconds=round_seconds, threshold=threshold, cpu=cpu, worker_pairs=worker_pairs,
        label_a=label_a, label_b=label_b)
    store = Store.open(db)  # fail before measuring if the database is unusable
    use_case.provision(a, b, settings)
    with console.session_status("starting the workers", max_seconds) as show:
        outcome = use_case.run(a, b, settings, sys.argv[1:], show)
    runs = use_case.kept(outcome, settings)
    if runs:  # a second signal waits until both runs are stored (or kept in a file)
        store_or_keep(store, runs, {"runs": [codec.run_document(run) for run in runs]}
                      if json_output else None)
    found = use_case.answer(outcome, band, store.location)
    ab_views.show(found, json_output)
    end(found.ending)


@app.command(hidden=True)
def worker() -> None:
    """Serve one side of a `pqbench ab` session on stdin/stdout (JSON lines)."""
    from pqbench.sessions.ab.worker import serve

    raise typer.Exit(serve())
