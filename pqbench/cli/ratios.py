"""`pqbench ratios`: a stored run's paired cost ratios, as lines, JSON or CSV."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.cli.common import (
    CsvOption,
    DbOption,
    JsonOption,
    RelativeToOption,
    handles_errors,
    one_output,
    print_json,
)
from pqbench.cli.root import app
from pqbench.views import console
from pqbench.views import ratios as ratio_views


@app.command()
@handles_errors
def ratios(
    run: Annotated[str | None, typer.Argument(
        metavar="RUN", help="Run id (or unique prefix); default: the newest speed run.")] = None,
    relative_to: RelativeToOption = None,
    every: Annotated[bool, typer.Option(
        "--all", help="Every ratio the run's rows allow (PQ against every classical "
                      "scheme through every implementation, every block size), not only "
                      "the mission's; --json and --csv always carry every one.")] = False,
    json_output: JsonOption = False,
    csv_output: CsvOption = False,
    db: DbOption = None,
) -> None:
    """What the rows of one run cost against each other, paired by cycle, with intervals."""
    from pqbench.analysis.ratios import as_row
    from pqbench.app import ratios as use_case
    from pqbench.data.store import Store

    one_output(json=json_output, csv=csv_output)
    answer = use_case.ratios(Store.open(db, create=False), run, relative_to, every)
    run_id = answer.run.run_id
    if answer.note is not None:
        console.note(answer.note)
    if json_output:
        print_json({"run_id": run_id, "ratios": [r.as_dict() for r in answer.found]})
    elif csv_output:
        console.write(ratio_views.csv_text([as_row(r, run_id) for r in answer.found]))
    elif answer.shown:
        console.print_table(ratio_views.table(answer.shown, ratio_views.run_title(answer.run)))
        console.lines(ratio_views.notes(answer.shown))
        if answer.more:
            console.note(f"{answer.more} more with --all")
