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
from pqbench.platform.errors import UsageError
from pqbench.platform.untrusted import printable
from pqbench.views import comparisons, console
from pqbench.views.delimited import csv_text

# The statistics (numpy, scipy) are imported inside the command: `pqbench --help` and the
# other commands start without them.
if TYPE_CHECKING:
    from pqbench.analysis.compare import Compared
    from pqbench.analysis.noise import NoiseModels
    from pqbench.data.record.results import Run
    from pqbench.data.store import Store


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
        help=f"Exit with status {FAIL_ON_EXIT} when a row's verdict is slower, faster, "
             "either (any), or undecided (inconclusive or too few runs: a gate that fails "
             "closed); several joined by commas (slower,undecided): a gate for CI jobs and "
             "fleets.")] = None,
    json_output: JsonOption = False,
    csv_output: CsvOption = False,
    db: DbOption = None,
) -> None:
    """Compare runs row by row: before, after, ratio, CI, p-value, verdict and causes.

    The run is the unit: each run gives one estimate per row. With several runs a side (5
    a side, or 4 and 6, at alpha 0.01) the exact test over runs decides; with fewer (1
    against 1, 5 against 1) each row is judged against this machine's run-to-run spread of
    that row, learnt from every run stored (`pqbench calibrate` sharpens it). The two runs
    of one `pqbench ab` session are compared pair by pair instead.
    """
    from pqbench.data.store import Store

    one_output(json=json_output, csv=csv_output, markdown=markdown)
    band = parse_threshold(threshold)
    gate = _fail_on_verdicts(fail_on)
    if by is None and (every or missing):
        raise UsageError("--all and --include-missing group runs: give --by FIELD too")
    from pqbench.analysis import ratios
    from pqbench.analysis.compare import Compared, compare_runs
    from pqbench.analysis.noise import NoiseModels

    store = Store.open(db, create=False)
    models = NoiseModels(store)
    with many_records():
        if by is None:
            before, after = _two_runs(store, runs or [])
            steps = [Compared(compare_runs([before], [after], band, cross_machine=cross_machine,
                                           noise=models.for_runs([before, after])),
                              [before], [after])]
        else:
            steps = _by_groups(store, by, runs or [], band, cross_machine, every=every,
                               missing=missing, models=models)
    results = [step.comparison for step in steps]
    # Each run's paired cost ratios (PQ against classical, ...) followed across the sides.
    followed = [ratios.across(step.before, step.after, band) for step in steps]
    # --fail-on judges every row, whatever --only-changed shows.
    failing = [r for result in results for r in result.rows
               if r.verdict in gate]
    shown = [r.only_changed() for r in results] if only_changed else results
    if json_output:
        document = [{**r.as_dict(), "ratios": [f.as_dict() for f in found]}
                    for r, found in zip(shown, followed, strict=True)]
        print_json(document[0] if len(document) == 1 else {"comparisons": document})
    elif csv_output:
        console.write(csv_text(comparisons.COMPARE_CSV, comparisons.compare_csv_rows(shown)))
    elif markdown:
        console.write(comparisons.markdown(shown))
    else:
        for result, full, found in zip(shown, results, followed, strict=True):
            console.show_comparison(result, hidden=len(full.rows) - len(result.rows))
            console.show_followed_ratios(found)
    if failing:
        console.error(f"--fail-on {fail_on}: {len(failing)} row(s) "
                      f"{' or '.join(sorted({r.verdict for r in failing}))}")
        raise typer.Exit(FAIL_ON_EXIT)


def _fail_on_verdicts(text: str | None) -> frozenset[str]:
    """The verdicts `--fail-on` fails on: the union of the comma-separated names."""
    if text is None:
        return frozenset()
    names = [name.strip() for name in text.split(",")]
    unknown = [name for name in names if name not in FAIL_ON]
    if unknown or not names:
        raise UsageError(f"--fail-on takes one or more of {', '.join(FAIL_ON)} joined by "
                         f"commas, not {printable(text)!r}")
    return frozenset(v for name in names for v in FAIL_ON[name])


def _two_runs(store: Store, ids: list[str]) -> tuple[Run, Run]:
    """The two runs named, or with none named the newest run and the newest earlier run
    of its kind that shares a row with it (the sides of an `ab` session, when the newest
    is its B side)."""
    from pqbench.data.store import RunFilter
    from pqbench.data.store.selection import select

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
               cross_machine: bool, *, every: bool, missing: bool, models: NoiseModels
               ) -> list[Compared]:
    """The two groups named, or the newest group against the one before it (every group
    against the next with `every`), each group of one build (a masked run beside unmasked
    ones is a group of its own, "debian-12/6.18 (AES-NI hidden)", as in history); only the
    runs compared are loaded whole."""
    from pqbench.analysis.compare import Compared, compare_groups, compare_steps
    from pqbench.analysis.history import by_build
    from pqbench.data.store.selection import select

    if values and len(values) != 2:
        raise UsageError("with --by, give no values or exactly two (before, after)")
    # A run's build needs its fingerprint.
    selection = select(store, by, missing=missing or bool(values), fingerprints=True)
    groups = by_build(selection.groups)
    if values:
        # A group named as stored is taken whole (runs of other builds in it are then left
        # out with a warning); a build's own name ("... (AES-NI hidden)") as history shows it.
        split = dict(groups)
        stored = {name for name, _ in selection.groups}
        before, after = (selection.whole(selection.group(v) if v in stored or v not in split
                                         else split[v]) for v in values)
        (comparison,) = compare_groups([(values[0], before), (values[1], after)], threshold,
                                       cross_machine=cross_machine,
                                       noise=models.for_runs([*before, *after]))
        return [Compared(comparison, before, after)]
    if selection.left_out:
        console.note(f"{len(selection.left_out)} run(s) without a value for {by} left out "
                     "(--include-missing compares them as a group '(none)')")
    return compare_steps(groups, selection.whole, threshold,
                         cross_machine=cross_machine, every=every, noise=models.for_runs)
