"""`pqbench compare`: did an OS build (or a library, or a mask) change the speed?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from pqbench.cli.common import (
    FAIL_ON,
    FAIL_ON_EXIT,
    CrossMachineOption,
    CsvOption,
    DbOption,
    JsonOption,
    ThresholdOption,
    handles_errors,
    many_records,
    one_output,
    parse_threshold,
    print_json,
)
from pqbench.cli.root import app
from pqbench.errors import UsageError
from pqbench.presentation import comparisons, console
from pqbench.presentation.delimited import csv_text
from pqbench.untrusted import printable

# The statistics (numpy, scipy) are imported inside the command: `pqbench --help` and the
# other commands start without them.
if TYPE_CHECKING:
    from pqbench.analysis.compare import Compared
    from pqbench.record.results import Run
    from pqbench.store import Store


@app.command()
@handles_errors
def compare(
    runs: Annotated[list[str] | None, typer.Argument(
        metavar="RUN",
        help="Two run ids (or unique prefixes): before, then after. None: the newest run "
             "against the one before it. With --by: the two group values to compare "
             "(default: the newest group against the one before it).")] = None,
    by: Annotated[str | None, typer.Option(
        metavar="FIELD",
        help="Group the stored runs by a fingerprint field: label, os_build, "
             "libraries.cryptography, knobs.OPENSSL_ia32cap, date ...")] = None,
    every: Annotated[bool, typer.Option(
        "--all", metavar="",
        help="With --by: every group against the next, not only the newest two.")] = False,
    missing: Annotated[bool, typer.Option(
        "--include-missing", metavar="",
        help="With --by: compare the runs without the field too, as a group named "
             "'(none)'.")] = False,
    only_changed: Annotated[bool, typer.Option(
        "--only-changed", metavar="",
        help="Show only the rows that are faster or slower.")] = False,
    threshold: ThresholdOption = "auto",
    cross_machine: CrossMachineOption = False,
    markdown: Annotated[bool, typer.Option("--markdown", metavar="", help="Print Markdown tables.")
    ] = False,
    fail_on: Annotated[str | None, typer.Option(
        "--fail-on", metavar="VERDICT",
        help=f"Exit with status {FAIL_ON_EXIT} when a row's verdict is slower, faster, or "
             "either (any): a gate for CI jobs and fleets.")] = None,
    json_output: JsonOption = False,
    csv_output: CsvOption = False,
    db: DbOption = None,
) -> None:
    """Compare runs row by row: before, after, ratio, CI, p-value, verdict and causes.

    The run is the unit: each run gives one estimate per row, so a verdict needs several
    runs a side (5 a side, or 4 and 6, at alpha 0.01); the two runs of one `pqbench ab`
    session are compared pair by pair instead.
    """
    from pqbench.store import Store

    one_output(json=json_output, csv=csv_output, markdown=markdown)
    band = parse_threshold(threshold)
    if fail_on is not None and fail_on not in FAIL_ON:
        raise UsageError(f"--fail-on takes one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    if by is None and (every or missing):
        raise UsageError("--all and --include-missing group runs: give --by FIELD too")
    from pqbench.analysis import ratios
    from pqbench.analysis.compare import Compared, compare_runs

    store = Store.open(db, create=False)
    with many_records():
        if by is None:
            before, after = _two_runs(store, runs or [])
            steps = [Compared(compare_runs([before], [after], band, cross_machine=cross_machine),
                              [before], [after])]
        else:
            steps = _by_groups(store, by, runs or [], band, cross_machine, every=every,
                               missing=missing)
    results = [step.comparison for step in steps]
    # Each run's paired cost ratios (PQ against classical, ...) followed across the sides.
    followed = [ratios.across(step.before, step.after, band) for step in steps]
    # --fail-on judges every row, whatever --only-changed shows.
    failing = [r for result in results for r in result.rows
               if fail_on is not None and r.verdict in FAIL_ON[fail_on]]
    shown = [r.only_changed() for r in results] if only_changed else results
    if json_output:
        document = [{**r.as_dict(), "ratios": [f.as_dict() for f in found]}
                    for r, found in zip(shown, followed, strict=True)]
        print_json(document[0] if len(document) == 1 else {"comparisons": document})
    elif csv_output:
        print(csv_text(comparisons.COMPARE_CSV, comparisons.compare_csv_rows(shown)), end="")
    elif markdown:
        print(comparisons.markdown(shown), end="")
    else:
        for result, full, found in zip(shown, results, followed, strict=True):
            console.show_comparison(result, hidden=len(full.rows) - len(result.rows))
            console.show_followed_ratios(found)
    if failing:
        console.error(f"--fail-on {fail_on}: {len(failing)} row(s) "
                      f"{' or '.join(FAIL_ON[fail_on or 'any'])}")
        raise typer.Exit(FAIL_ON_EXIT)


def _two_runs(store: Store, ids: list[str]) -> tuple[Run, Run]:
    """The two runs named, or with none named the newest run and the newest earlier run
    of its kind that shares a row with it (the sides of an `ab` session, when the newest
    is its B side)."""
    from pqbench.store import RunFilter
    from pqbench.store.selection import select

    if ids and len(ids) != 2:
        raise UsageError("give two runs (before, after), none to compare the newest run with "
                         "the one before it, or --by FIELD")
    if not ids:
        # Headers only, then whole runs one at a time, newest first, until rows are shared.
        selection = select(store)
        before, after, newest = selection.newest_with_shared_rows()
        if not newest:
            latest = selection.headers[-1]
            console.note(f"the newest run {latest.run_id} shares no row with an earlier "
                         "run; comparing the newest two runs that do")
        which = "the newest run" if newest else "run"
        console.note(f"comparing {which} {after.run_id} ({_what(after)}) with {before.run_id} "
                     f"({_what(before)}), the newest earlier run sharing rows with it (name "
                     "two runs, or --by FIELD, to compare others)")
        return before, after
    found = store.load_runs(RunFilter(ids=tuple(ids)))
    if len(found) != 2 or found[0].run_id == found[1].run_id:  # one run named twice
        raise UsageError(f"{printable(ids[0])!r} and {printable(ids[1])!r} are the same run "
                         f"{found[0].run_id}: give two different runs")
    before, after = found
    return before, after


def _what(run: Run) -> str:
    """A run's label, else the algorithms it measured: enough to tell two runs apart."""
    if run.label:
        return str(run.label)
    names = list(dict.fromkeys(m.algorithm for m in run.measurements))
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _by_groups(store: Store, by: str, values: list[str], threshold: float | None,
               cross_machine: bool, *, every: bool, missing: bool) -> list[Compared]:
    """The two groups named, or the newest group against the one before it (every group
    against the next with `every`); only the runs compared are loaded whole."""
    from pqbench.analysis.compare import Compared, compare_groups, compare_steps
    from pqbench.store.selection import select

    if values and len(values) != 2:
        raise UsageError("with --by, give no values or exactly two (before, after)")
    selection = select(store, by, missing=missing or bool(values))
    if values:
        before, after = (selection.whole(selection.group(v)) for v in values)
        (comparison,) = compare_groups([(values[0], before), (values[1], after)], threshold,
                                       cross_machine=cross_machine)
        return [Compared(comparison, before, after)]
    if selection.left_out:
        console.note(f"{len(selection.left_out)} run(s) without a value for {by} left out "
                     "(--include-missing compares them as a group '(none)')")
    return compare_steps(selection.groups, selection.whole, threshold,
                         cross_machine=cross_machine, every=every)
