"""`pqbench report`: stored runs -> Markdown with PNG charts, ready to paste or link."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from pqbench.cli.common import (
    CrossMachineOption,
    DbOption,
    ThresholdOption,
    handles_errors,
    many_records,
    parse_threshold,
)
from pqbench.cli.root import app
from pqbench.data.record.results import Run
from pqbench.platform.errors import ComparisonError, NothingStored
from pqbench.views import console

if TYPE_CHECKING:
    from pqbench.data.store import Store
    from pqbench.views.report import Report


def _runs(store: Store, run_ids: list[str] | None, by: str | None) -> list[Run]:
    """The runs named; with none named, all runs for --by, else what was done last: the
    newest run, or both sides of the `pqbench ab` session it is a side of."""
    from pqbench.analysis import pairing
    from pqbench.data.store import RunFilter

    if run_ids:
        return store.load_runs(RunFilter(ids=tuple(run_ids)))
    found = store.load_runs(RunFilter(newest=None if by else 1))
    if not found:
        raise NothingStored(f"no runs stored yet in {store.location}; `pqbench speed` "
                            "measures and stores one")
    session = pairing.ab_session(found[0]) if not by else None
    other = session.get("other_run") if session else None
    if isinstance(other, str) and store.has_run(other):
        both = store.load_runs(RunFilter(ids=(found[0].run_id, other)))
        console.note(f"reporting the newest `pqbench ab` session: runs {both[0].run_id} and "
                     f"{both[1].run_id}")
        return both
    return found


@app.command("report")
@handles_errors
def report_command(
    run: Annotated[list[str] | None, typer.Argument(
        metavar="RUN",
        help="Run ids or unique prefixes (`pqbench runs` lists them). None: the newest run, "
             "or every run with --by.")] = None,
    by: Annotated[str | None, typer.Option(
        metavar="FIELD",
        help="Compare runs grouped by this field (os_build, label, testbed, a library such "
             "as libraries.system_libcrypto); adds the history chart.")] = None,
    out: Annotated[Path | None, typer.Option(
        metavar="PATH",
        help="Markdown file to write (charts go beside it), or a directory for report.md. "
             "Default: reports/RUN-OR-GROUP/report.md under the current directory.")]
    = None,
    threshold: ThresholdOption = "auto",
    force: Annotated[bool, typer.Option(
        "--force", metavar="",
        help="Replace an existing report (and its charts) at the same place.")] = False,
    cross_machine: CrossMachineOption = False,
    db: DbOption = None,
) -> None:
    """Write a Markdown report with charts: PQ against classical, the implementation gap,
    symmetric throughput, comparisons and history, and how it was measured."""
    # matplotlib and the statistics load here, not when `pqbench --help` starts.
    from pqbench.data.record.runs import group_runs
    from pqbench.data.store import Store
    from pqbench.views import report

    band = parse_threshold(threshold)
    store = Store.open(db, create=False)
    with many_records():
        notes: dict[str, list[str]] = {}
        for build, text, _created in store.annotations():
            notes.setdefault(build, []).append(text)
        if by and not run:
            made = _fleet_report(store, by, band, cross_machine, notes)
            if made is not None:
                _write(made[0], report.resolve_out(out, made[1], by, Path.cwd()), force)
                return
        runs = _runs(store, run, by)
        from pqbench.app.noise import NoiseModels

        with console.status(f"comparing {len(runs)} run(s)"):
            comparison = report.comparison_sections(runs, by, band, cross_machine, notes,
                                                    NoiseModels(store).for_runs(runs))
        if by and not comparison:
            values = sorted({name for name, _ in group_runs(runs, by)})
            console.warning(
                f"every run has the same --by {by} ({values[0]}); the report has no "
                "comparison" if len(values) == 1 else
                f"the --by {by} groups ({', '.join(values)}) share no row to compare (each "
                "kind of run measures other things); the report has no comparison"
                if values else
                f"no run has a value for --by {by}; the report has no comparison")
        built = report.build(runs, comparison)
    _write(built, report.resolve_out(out, runs, by, Path.cwd()), force)


def _write(built: Report, path: Path, force: bool) -> None:
    from pqbench.views import report

    with console.status(f"drawing {len(built.charts)} chart(s) and writing {path}"):
        written = report.write(built, path, overwrite=force)
    console.note(f"wrote {path} and {len(written) - 1} chart(s) beside it")


def _fleet_report(store: Store, by: str, band: float | None, cross_machine: bool,
                  notes: dict[str, list[str]]) -> tuple[Report, list[Run]] | None:
    """Over more groups than each-against-the-next can show (`report.fleet`): run headers
    first, then only what each part needs (the newest run of each kind whole, the rates
    of the history as numbers, two compared groups whole at a time). None with few
    groups: the whole story, as for a handful of runs."""
    from pqbench.data.record.runs import run_order
    from pqbench.data.store import RunFilter
    from pqbench.data.store.selection import select
    from pqbench.views import report
    from pqbench.views.report import fleet, memory, series

    try:
        selection = select(store, by)
    except ComparisonError:  # nothing stored: `_runs` says so, with how to make a run
        return None
    headers = selection.headers
    if not fleet.many_groups(headers, by):
        return None
    newest = {run.kind: run.run_id for run in sorted(headers, key=run_order)}
    whole = selection.whole
    shown = whole([newest[kind] for kind in ("speed", "files", "tls", "memory")
                   if kind in newest])
    from pqbench.app.noise import NoiseModels

    sections = fleet.sections(headers, by, store.row_rates, whole, band, cross_machine, notes,
                              NoiseModels(store).for_runs(headers))
    bisected = [run.run_id for run in headers if series.is_bisection(run)]
    where = series.section(whole(bisected)) if bisected else None
    sections += [where] if where is not None else []
    if "memory" in newest:
        sections += memory.comparison_sections(
            store.load_runs(RunFilter(kinds=("memory",))), by)
    return report.build(shown, sections, fleet=(len(headers), by)), shown
