"""`pqbench ratios`: a stored run's paired cost ratios, as lines, JSON or CSV."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from pqbench.catalog.algorithms.base import normalize
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
from pqbench.platform.errors import UsageError
from pqbench.views import console
from pqbench.views import ratios as ratio_views

if TYPE_CHECKING:
    from pqbench.analysis.ratios import Ratio


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
    from pqbench.analysis import ratios as paired
    from pqbench.data.store import Store

    one_output(json=json_output, csv=csv_output)
    store = Store.open(db, create=False)
    if run is None:
        from pqbench.data.record.runs import run_order

        # Headers only: a run whose rounds were taken in cycles says so in its settings.
        paired_runs = sorted((r for r in store.load_runs(rows_too=False, fingerprints=False)
                              if r.kind == "speed" and r.settings.get("interleaved")),
                             key=run_order)
        if not paired_runs:
            console.note(f"no speed run with paired rows stored in {store.location} yet; "
                         "`pqbench speed` makes one")
            return
        run = paired_runs[-1].run_id
    loaded = store.load_run(run)
    if loaded.kind not in ("speed", "files"):
        raise UsageError(f"run {loaded.run_id} is a {loaded.kind} run; ratios pair the rows "
                         "of a speed run or a `files hash` run")
    found = paired.run_ratios(loaded)
    asked: list[Ratio] = []
    if relative_to is not None and loaded.kind == "files":
        raise UsageError(f"--relative-to: run {loaded.run_id} is a `files hash` run, whose "
                         "hashes are set against the first one it measured")
    if relative_to is not None:
        names = {normalize(m.algorithm): m.algorithm for m in loaded.measurements}
        if normalize(relative_to) not in names:
            raise UsageError(f"--relative-to {relative_to}: run {loaded.run_id} has no rows "
                             f"of it ({', '.join(sorted(set(names.values())))})")
        asked = paired.relative_to(loaded, names[normalize(relative_to)])
        found += asked
    if loaded.settings.get("ab"):
        console.note(f"run {loaded.run_id} is one side of a `pqbench ab` session: its rows "
                     "are paired with the other side's, not with each other (`pqbench "
                     "compare` shows that session)")
    elif loaded.kind == "files" and not found:
        console.note(f"run {loaded.run_id} took one pass per file: a ratio needs two pairs "
                     "(`files hash` without --runs takes what its answers need)")
    elif loaded.kind == "speed" and not paired.cycles_of(loaded):
        console.note(f"run {loaded.run_id} took its rounds one row after another, not in "
                     "cycles: its rows are not paired, so it has no ratio to show")
    if json_output:
        print_json({"run_id": loaded.run_id, "ratios": [r.as_dict() for r in found]})
    elif csv_output:
        console.write(ratio_views.csv_text([paired.as_row(r, loaded.run_id) for r in found]))
    elif found:
        # --relative-to shows what it asked for, --all everything; either way a pairing
        # two kinds of ratio hold alike (the mission's and --relative-to's) is one line.
        shown = found if every or loaded.kind == "files" else \
            asked if relative_to is not None else paired.mission(found)
        shown = list({r.name: r for r in shown}.values())
        console.print_table(ratio_views.table(shown, f"run {loaded.run_id}: what it costs, "
                                                     "paired by cycle"))
        console.lines(ratio_views.notes(shown))
        if len(shown) < len(found):
            console.note(f"{len(found) - len(shown)} more with --all")
