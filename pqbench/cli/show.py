"""`pqbench show`: a stored run printed again as the command that made it printed it (as
`pyperf show` and asv's `show` do)."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.cli.common import CsvOption, DbOption, handles_errors
from pqbench.cli.root import app
from pqbench.views import console, delimited


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
    from pqbench.analysis import ratios
    from pqbench.data.store import Store
    from pqbench.views import memory, tls

    store = Store.open(db, create=False)
    if run is None:
        from pqbench.analysis.compare import run_order

        every = sorted(store.load_runs(rows_too=False, fingerprints=False), key=run_order)
        if not every:
            console.note(f"no run stored in {store.location} yet; `pqbench speed` makes one")
            return
        run = every[-1].run_id
    loaded = store.load_run(run)
    if csv_output:
        console.write(delimited.run_csv(loaded))
        return
    console.note(f"run {loaded.run_id}: {loaded.kind}, {loaded.status}, started "
                 f"{loaded.started_at}" + (f", label {loaded.label}" if loaded.label else ""))
    if loaded.kind == "tls":
        tls.show(loaded, store)
    elif loaded.kind == "memory":
        memory.show(loaded, store)
    elif loaded.kind == "files":
        console.show_files_run(loaded, ratios.file_ratios(loaded))
    else:
        from pqbench.analysis.figures import run_figures

        figures = run_figures(loaded)
        console.show_run(loaded, figures)
        if loaded.settings.get("ab"):
            console.note(f"run {loaded.run_id} is one side of a `pqbench ab` session: its "
                         "rows are paired with the other side's (`pqbench compare` shows "
                         "the session)")
        else:
            console.show_ratios(figures.mission)
