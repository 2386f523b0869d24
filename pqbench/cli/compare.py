"""`pqbench compare`: did an OS build (or a library, or a mask) change the speed?"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

import typer

from pqbench.cli.common import (
    FAIL_ON,
    FAIL_ON_EXIT,
    DbOption,
    JsonOption,
    ThresholdOption,
    handles_errors,
    many_records,
    parse_threshold,
    print_json,
)
from pqbench.cli.root import app
from pqbench.errors import ComparisonError, UsageError
from pqbench.presentation import comparisons, console

# The statistics (numpy, scipy) are imported inside the command: `pqbench --help` and the
# other commands start without them.
if TYPE_CHECKING:
    from pqbench.analysis.compare import RunComparison
    from pqbench.record.results import Run
    from pqbench.store import Store


@app.command()
@handles_errors
def compare(
    runs: Annotated[list[str] | None, typer.Argument(
        help="Two run ids (or unique prefixes): before, then after. None: the newest run "
             "against the one before it. With --by: the two group values to compare "
             "(default: the newest group against the one before it).")] = None,
    by: Annotated[str | None, typer.Option(
        help="Group the stored runs by a fingerprint field: label, os_build, "
             "libraries.cryptography, knobs.OPENSSL_ia32cap, date ...")] = None,
    every: Annotated[bool, typer.Option(
        "--all", help="With --by: every group against the next, not only the newest two.")
    ] = False,
    missing: Annotated[bool, typer.Option(
        "--include-missing", help="With --by: compare the runs without the field too, as a "
                                  "group named '(none)'.")] = False,
    only_changed: Annotated[bool, typer.Option(
        "--only-changed", help="Show only the rows that are faster or slower.")] = False,
    threshold: ThresholdOption = "auto",
    cross_machine: Annotated[bool, typer.Option(
        "--cross-machine", help="Allow runs from different testbeds (CPU model, flags, "
                                "architecture), with a warning.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print Markdown tables.")
    ] = False,
    fail_on: Annotated[str | None, typer.Option(
        "--fail-on", help=f"Exit with status {FAIL_ON_EXIT} when a row's verdict is slower, "
                          "faster, or either (any): a gate for CI jobs and fleets.")] = None,
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Compare runs row by row: before, after, ratio, CI, p-value, verdict and causes.

    The run is the unit: each run gives one estimate per row, so a verdict needs several
    runs a side (5 a side, or 4 and 6, at alpha 0.01); the two runs of one `pqbench ab`
    session are compared pair by pair instead.
    """
    from pqbench.store import Store

    if json_output and markdown:
        raise UsageError("choose one of --json and --markdown")
    band = parse_threshold(threshold)
    if fail_on is not None and fail_on not in FAIL_ON:
        raise UsageError(f"--fail-on takes one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    if by is None and (every or missing):
        raise UsageError("--all and --include-missing group runs: give --by FIELD too")
    from pqbench.analysis.compare import compare_runs

    store = Store.open(db, create=False)
    with many_records():
        if by is None:
            before, after = _two_runs(store, runs or [])
            results = [compare_runs([before], [after], band, cross_machine=cross_machine)]
        else:
            results = _by_groups(store, by, runs or [], band, cross_machine, every=every,
                                 missing=missing)
    # --fail-on judges every row, whatever --only-changed shows.
    failing = [r for result in results for r in result.rows
               if fail_on is not None and r.verdict in FAIL_ON[fail_on]]
    shown = [r.only_changed() for r in results] if only_changed else results
    if json_output:
        document = [r.as_dict() for r in shown]
        print_json(document[0] if len(document) == 1 else {"comparisons": document})
    elif markdown:
        print(comparisons.markdown(shown), end="")
    else:
        for result, full in zip(shown, results, strict=True):
            console.show_comparison(result, hidden=len(full.rows) - len(result.rows))
    if failing:
        console.error(f"--fail-on {fail_on}: {len(failing)} row(s) "
                      f"{' or '.join(FAIL_ON[fail_on or 'any'])}")
        raise typer.Exit(FAIL_ON_EXIT)


def _two_runs(store: Store, ids: list[str]) -> tuple[Run, Run]:
    """The two runs named, or with none named the newest run and the one before it of the
    same kind (the sides of an `ab` session, when the newest is its B side)."""
    from pqbench.store import RunFilter

    if ids and len(ids) != 2:
        raise UsageError("give two runs (before, after), none to compare the newest run with "
                         "the one before it, or --by FIELD")
    if not ids:
        from pqbench.analysis.compare import run_order

        # Headers only: kind, start time and the ab side are columns, not fingerprint.
        stored = sorted(store.load_runs(rows_too=False, fingerprints=False), key=run_order)
        if not stored:
            raise ComparisonError(f"no runs stored in {store.location}; `pqbench speed` "
                                  "makes one")
        newest = stored[-1]
        earlier = [r for r in stored[:-1] if r.kind == newest.kind]
        if not earlier:
            raise ComparisonError(f"the newest run {newest.run_id} is the only {newest.kind} "
                                  "run stored: nothing to compare it with yet")
        ids = [earlier[-1].run_id, newest.run_id]
        console.note(f"comparing the newest run {ids[1]} with the one before it, {ids[0]} "
                     "(name two runs, or --by FIELD, to compare others)")
    before, after = store.load_runs(RunFilter(ids=tuple(ids)))
    return before, after


def _by_groups(store: Store, by: str, values: list[str], threshold: float | None,
               cross_machine: bool, *, every: bool, missing: bool) -> list[RunComparison]:
    """The newest group against the one before it (every group against the next with
    `every`), or the two groups named; only their runs are loaded whole."""
    from pqbench.analysis.compare import compare_groups, group_runs, run_order, without_value
    from pqbench.store import LIGHT_FIELDS, RunFilter

    if values and len(values) != 2:
        raise UsageError("with --by, give no values or exactly two (before, after)")
    # Groups are chosen from run headers (without rows; without fingerprints when the
    # field is a column); only the groups compared are then loaded whole.
    light = by in LIGHT_FIELDS
    if not values:
        stored = store.load_runs(rows_too=False, fingerprints=not light)
        if not stored:
            raise ComparisonError(f"no runs stored in {store.location}")
        groups = group_runs(stored, by, missing=missing)
        left_out = without_value(stored, by)
        if left_out and not missing:
            console.note(f"{len(left_out)} run(s) without a value for {by} left out "
                         "(--include-missing compares them as a group '(none)')")
        if len(groups) > 2 and not every:
            newest = sorted(groups, key=lambda group: run_order(group[1][-1]))[-2:]
            groups = [group for group in groups if group in newest]  # in group_runs' order
        if len(groups) < 2:
            return compare_groups(groups, threshold, cross_machine=cross_machine)
        return list(_each_against_the_next(store, groups, threshold, cross_machine))
    found = dict(group_runs(store.load_runs(RunFilter(by=by, values=tuple(values))), by,
                            missing=True))
    missing_values = [v for v in values if v not in found]
    if missing_values:
        known = [name for name, _ in group_runs(
            store.load_runs(rows_too=False, fingerprints=not light), by, missing=True)]
        raise ComparisonError(f"no runs with {by} = {', '.join(map(repr, missing_values))}; "
                              f"found: {', '.join(map(repr, known))}")
    return compare_groups([(v, found[v]) for v in values], threshold,
                          cross_machine=cross_machine)


def _each_against_the_next(store: Store, groups: list[tuple[str, list[Run]]],
                           threshold: float | None, cross_machine: bool
                           ) -> Iterator[RunComparison]:
    """`compare_groups` over the groups of run headers, loading two groups whole at a
    time: memory grows with the largest groups, not with the database."""
    from pqbench.analysis.compare import compare_runs
    from pqbench.store import RunFilter

    def whole(members: list[Run]) -> list[Run]:
        return store.load_runs(RunFilter(ids=tuple(r.run_id for r in members)))

    (before_name, before_headers), *rest = groups
    before = whole(before_headers)
    for after_name, after_headers in rest:
        after = whole(after_headers)
        yield compare_runs(before, after, threshold, cross_machine=cross_machine,
                           before_name=before_name, after_name=after_name)
        before, before_name = after, after_name
