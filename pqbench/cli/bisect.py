"""`pqbench bisect`: which build of a series changed a row, by paired sessions between builds."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from pqbench.app import bisect as use_case
from pqbench.cli import paired
from pqbench.cli.common import (
    AlgorithmsArgument,
    DbOption,
    ImplementationsOption,
    JsonOption,
    ThresholdOption,
    end,
    handles_errors,
)
from pqbench.cli.root import app
from pqbench.sessions import sides
from pqbench.views import bisection, console


@app.command()
@handles_errors
def bisect(
    algorithm: AlgorithmsArgument = None,
    series: Annotated[list[str] | None, typer.Option(
        "--series", metavar="BUILD",
        help=f"The builds in order: a side ({' | '.join(sides.SPELLINGS.values())}; "
             "items joined by ' + ') with brace lists, e.g. "
             "'pip:cryptography=={42.0.8,43.0.3}', or @FILE with one build per line; "
             "repeatable, in order.")] = None,
    operation: paired.Operations = None,
    implementation: ImplementationsOption = None,
    block_bytes: paired.Bytes = None,
    max_seconds: Annotated[float, typer.Option(
        "--max-seconds", help="Time budget of each session (as `ab --max-seconds`).")
    ] = 120.0,
    round_seconds: Annotated[float, typer.Option(
        "--round", help="Seconds per round (each pair is one round of each build).")] = 0.05,
    threshold: ThresholdOption = "auto",
    every_pair: Annotated[bool, typer.Option(
        "--every-pair", help="Measure every neighbouring pair instead of bisecting "
                             "(N - 1 sessions; sees changes that are later undone).")] = False,
    cpu: paired.Cpu = None,
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Find the builds of a series where each row changed speed: the two ends in one paired
    session, then bisection with paired sessions between builds, for every row whose ends
    differ beyond the band; each change point with its ratio, interval and the fingerprint
    differences that explain it. Every session is stored as two runs."""
    from pqbench.data.store import Store
    from pqbench.sessions.bisect import series as series_module

    chosen_series = series_module.parse(series or [])
    settings, band = paired.settings(algorithm, implementation, operation, block_bytes,
                                      max_seconds=max_seconds, round_seconds=round_seconds,
                                      threshold=threshold, cpu=cpu)
    store = Store.open(db)  # fail before measuring if the database is unusable
    plan = use_case.plan(chosen_series, settings, band, sys.argv[1:])
    with console.status("starting") as show:
        found = use_case.run(plan, store, every_pair, show, search=not json_output)
    if json_output:
        console.print_json(bisection.bisection_document(found.result, chosen_series,
                                                        store.location))
    else:
        bisection.show_bisection(found.result, chosen_series, found.search)
        bisection.show_stored(len(found.result.sessions), found.runs_stored, store.location)
    end(found.ending)
