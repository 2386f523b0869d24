"""`pqbench show`: a stored run printed again as the command that made it printed it (as
`pyperf show` and asv's `show` do)."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.cli.common import CsvOption, DbOption, handles_errors
from pqbench.cli.root import app
from pqbench.views import console, delimited, runs


@app.command()
@handles_errors
def show(
    run: Annotated[str | None, typer.Argument(
        metavar="RUN", help="Run id (or unique prefix); default: the newest run.")] = None,
    csv_output: CsvOption = False,
    db: DbOption = None,
) -> None:
    """Print a stored run again: its table, its paired ratios, what was not measured
    (--csv: its rows, as the command's --csv printed them)."""
    from pqbench.app import show as use_case
    from pqbench.data.store import Store
    from pqbench.views import memory, tls

    store = Store.open(db, create=False)
    shown = use_case.show(store, run, figures=not csv_output)
    loaded = shown.run
    if csv_output:
        console.write(delimited.run_csv(loaded))
        return
    console.note(runs.run_header(loaded))
    if loaded.kind in ("tls", "memory"):
        (tls.show if loaded.kind == "tls" else memory.show)(loaded, store)
    elif shown.figures is None:
        console.show_files_run(loaded, shown.ratios)
    else:
        console.show_run(loaded, shown.figures)
        if shown.note is not None:
            console.note(shown.note)
        console.show_ratios(shown.ratios)
