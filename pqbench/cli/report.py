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
from pqbench.views import console

if TYPE_CHECKING:
    from pqbench.views.report import Report


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
    machine: Annotated[str | None, typer.Option(
        "--machine", "-m", metavar="NAME",
        help="The machine to report on (its host name or key) where the runs come from "
             "several; a report tells of one machine.")] = None,
    cross_machine: CrossMachineOption = False,
    db: DbOption = None,
) -> None:
    """Write a Markdown report with charts: PQ against classical, the implementation gap,
    symmetric throughput, comparisons and history, and how it was measured."""
    # matplotlib and the statistics load here, not when `pqbench --help` starts.
    from pqbench.app.report import inputs
    from pqbench.data.store import Store
    from pqbench.views import report

    band = parse_threshold(threshold)
    with many_records():
        found = inputs(Store.open(db, create=False), run or (), by, machine=machine,
                       cross_machine=cross_machine)
        console.notes(found.notes)
        with console.status(f"comparing {len(found.runs)} run(s)"):
            built, warnings = report.of_inputs(found, band, cross_machine)
    console.warnings(warnings)
    _write(built, report.resolve_out(out, found.runs, by, Path.cwd()), force)


def _write(built: Report, path: Path, force: bool) -> None:
    from pqbench.views import report

    with console.status(f"drawing {len(built.charts)} chart(s) and writing {path}"):
        written = report.write(built, path, overwrite=force)
    console.note(f"wrote {path} and {len(written) - 1} chart(s) beside it")
