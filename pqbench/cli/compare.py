"""`pqbench compare`: did an OS build (or a library, or a mask) change the speed?"""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.app.gate import EXIT, VERDICTS
from pqbench.cli.common import (
    CrossMachineOption,
    CsvOption,
    DbOption,
    JsonOption,
    ThresholdOption,
    handles_errors,
    many_records,
    one_output,
    parse_threshold,
)
from pqbench.cli.root import app
from pqbench.views import answers

# The statistics (numpy, scipy) are imported inside the command: `pqbench --help` and the
# other commands start without them.


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
        help=f"A gate for CI jobs and fleets: exit with status {EXIT} when a row's verdict "
             f"is one named ({', '.join(VERDICTS)}; undecided is inconclusive or too few "
             "runs; several joined by commas), and, whatever is named, when a row the "
             "baseline measured is gone, failed its checks, or was asked for and "
             "unavailable, or the candidate measured nothing.")] = None,
    json_output: JsonOption = False,
    csv_output: CsvOption = False,
    db: DbOption = None,
) -> None:
    """Compare runs row by row: before, after, ratio, CI, p-value, verdict and causes.

    The run is the unit: each run gives one estimate per row. With several runs a side (5
    a side, or 4 and 6, at alpha 0.01) the exact test over runs decides; with fewer (1
    against 1, 5 against 1) each row is judged against this machine's run-to-run spread of
    that row, learnt from every run stored (`pqbench calibrate` sharpens it). The two runs
    of one `pqbench ab` session are compared pair by pair instead, and a build measured by
    several machines is judged by each machine's own before and after.
    """
    from pqbench.app import compare as use_case
    from pqbench.app.gate import Gate

    one_output(json=json_output, csv=csv_output, markdown=markdown)
    band, gate = parse_threshold(threshold), Gate.parse(fail_on)
    with many_records():
        found = use_case.compare(db, runs or [], by=by, every=every, missing=missing,
                                 threshold=band, cross_machine=cross_machine, fail_on=gate)
    answers.compared(found, only_changed=only_changed, json_output=json_output,
                     csv_output=csv_output, markdown=markdown)
    if found.failures:
        raise typer.Exit(EXIT)
