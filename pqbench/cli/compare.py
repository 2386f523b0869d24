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
from pqbench.record.results import Run
from pqbench.store import LIGHT_FIELDS, RunFilter, Store

# The statistics (numpy, scipy) are imported inside the command: `pqbench --help` and the
# other commands start without them.
if TYPE_CHECKING:
    from pqbench.analysis.compare import RunComparison


@app.command()
@handles_errors
def compare(
    runs: Annotated[list[str] | None, typer.Argument(
        help="Two run ids (or unique prefixes): before, then after. With --by: the two "
             "group values to compare (default: every group against the next).")] = None,
    by: Annotated[str | None, typer.Option(
        help="Group the stored runs by a fingerprint field: label, os_build, "
             "libraries.cryptography, knobs.OPENSSL_ia32cap, date ...")] = None,
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
    if json_output and markdown:
        raise UsageError("choose one of --json and --markdown")
    band = parse_threshold(threshold)
    if fail_on is not None and fail_on not in FAIL_ON:
        raise UsageError(f"--fail-on takes one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    from pqbench.analysis.compare import compare_runs

    store = Store.open(db, create=False)
    with many_records():
        if by is None:
            if not runs or len(runs) != 2:
                raise UsageError("give two runs (before, after) or --by FIELD")
            before, after = store.load_runs(RunFilter(ids=tuple(runs)))
            results = [compare_runs([before], [after], band, cross_machine=cross_machine)]
        else:
            results = _by_groups(store, by, runs or [], band, cross_machine)
    if json_output:
        document = [r.as_dict() for r in results]
        print_json(document[0] if len(document) == 1 else {"comparisons": document})
    elif markdown:
        print(comparisons.markdown(results), end="")
    else:
        for result in results:
            console.show_comparison(result)
    if fail_on is not None:
        failing = [r for result in results for r in result.rows
                   if r.verdict in FAIL_ON[fail_on]]
        if failing:
            console.error(f"--fail-on {fail_on}: {len(failing)} row(s) "
                          f"{' or '.join(FAIL_ON[fail_on])}")
            raise typer.Exit(FAIL_ON_EXIT)


def _by_groups(store: Store, by: str, values: list[str], threshold: float | None,
               cross_machine: bool) -> list[RunComparison]:
    """Every group against the next, or the two groups named; only their runs are loaded
    whole."""
    from pqbench.analysis.compare import compare_groups, group_runs

    if values and len(values) != 2:
        raise UsageError("with --by, give no values or exactly two (before, after)")
    light = by in LIGHT_FIELDS
    if not values:
        groups = group_runs(store.load_runs(rows_too=False, fingerprints=not light), by)
        if not groups:
            raise ComparisonError(f"no runs stored in {store.location}")
        if len(groups) < 2:
            return compare_groups(groups, threshold, cross_machine=cross_machine)
        return list(_each_against_the_next(store, groups, threshold, cross_machine))
    found = dict(group_runs(store.load_runs(RunFilter(by=by, values=tuple(values))), by))
    missing = [v for v in values if v not in found]
    if missing:
        known = [name for name, _ in group_runs(
            store.load_runs(rows_too=False, fingerprints=not light), by)]
        raise ComparisonError(f"no runs with {by} = {', '.join(map(repr, missing))}; "
                              f"found: {', '.join(map(repr, known))}")
    return compare_groups([(v, found[v]) for v in values], threshold,
                          cross_machine=cross_machine)


def _each_against_the_next(store: Store, groups: list[tuple[str, list[Run]]],
                           threshold: float | None, cross_machine: bool
                           ) -> Iterator[RunComparison]:
    """`compare_groups` over the groups of run headers, loading two groups whole at a
    time: memory grows with the largest groups, not with the database."""
    from pqbench.analysis.compare import compare_runs

    def whole(members: list[Run]) -> list[Run]:
        return store.load_runs(RunFilter(ids=tuple(r.run_id for r in members)))

    (before_name, before_headers), *rest = groups
    before = whole(before_headers)
    for after_name, after_headers in rest:
        after = whole(after_headers)
        yield compare_runs(before, after, threshold, cross_machine=cross_machine,
                           before_name=before_name, after_name=after_name)
        before, before_name = after, after_name
