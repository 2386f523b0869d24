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
    print_json,
)
from pqbench.cli.root import app
from pqbench.platform.errors import UsageError
from pqbench.views import console


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
    """Rate per build, oldest first, with its steps and annotations.

    A step is where `compare` judges the runs before it against the runs after it faster
    or slower, with one run per build judged against this machine's run-to-run spread.
    """
    one_output(json=json_output, csv=csv_output)
    # The statistics (numpy, scipy) load here, not when `pqbench --help` starts.
    from pqbench.analysis import pairing
    from pqbench.analysis.history import (
        by_build,
        names_algorithm,
        not_measured,
        series_from_rates,
        session_judge,
    )
    from pqbench.analysis.noise import NoiseModels
    from pqbench.data.store import RunFilter, Store
    from pqbench.data.store.selection import select

    store = Store.open(db, create=False)
    # Every run's header (a point lists its group's runs; no fingerprints when the groups
    # are columns), then this algorithm's rates alone, as numbers, through the row key's
    # index: one row across ten thousand runs.
    names = tuple(n for n in store.algorithms() if names_algorithm(n, algorithm))
    with many_records():
        # Telling one build from another needs the runs' fingerprints.
        selection = select(store, by, fingerprints=not pool)
        headers = selection.headers
        groups = selection.groups if pool else by_build(selection.groups)
        if series_order:
            from pqbench.sessions.bisect.stored import in_series_order

            groups = in_series_order(groups)
        rates = store.row_rates([r.run_id for r in headers], RunFilter(
            algorithms=names or (algorithm,), implementation=implementation,
            operation=operation))
        notes: dict[str, list[str]] = {}
        for build, text, _created in store.annotations():
            notes.setdefault(build, []).append(text)
        grouped = [r for _, members in groups for r in members]
        model = NoiseModels(store).for_runs(grouped)
        sides = selection.whole(r for r in grouped if pairing.ab_session(r) is not None)
        found = series_from_rates(rates.row_keys(), groups, rates.by_run, notes, model=model,
                                  sessions=session_judge(sides))
        if not found:
            raise not_measured(algorithm, implementation, operation,
                               store.algorithms(timed_only=True))
        # Series in the order their rows first appear over the builds, as runs list them.
        order = [name for name, _ in groups]
        series = sorted(found, key=lambda one: order.index(one.points[0].build))
    if json_output:
        print_json({"algorithm": algorithm, "by": by, "series": [s.as_dict() for s in series]})
        return
    if csv_output:
        from pqbench.views import comparisons
        from pqbench.views.delimited import csv_text

        console.write(csv_text(comparisons.HISTORY_CSV,
                                comparisons.history_csv_rows(series)))
        return
    for one in series:
        console.show_history(one)


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
