"""A `pqbench speed` run on the terminal: what is said before measuring, then the run as
--json, --csv or its tables, with its paired ratios and the rows worth a second look."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pqbench.views import console, delimited

if TYPE_CHECKING:
    from pqbench.app.speed import Answer, Plan


def before(plan: Plan) -> None:
    """The notes and warnings about what is about to be measured (stderr)."""
    for line in plan.notes:
        console.note(line)
    for line in plan.warnings:
        console.warning(line)


def show(answer: Answer, location: str, *, json_output: bool, csv_output: bool) -> None:
    """The rows too unsteady to trust (stderr), then the run: its document with every ratio
    (--json), its rows (--csv), or its tables, the rows worth a second look, its ratios and
    where it was stored."""
    run = answer.run
    console.warn_unstable(answer.figures)
    if json_output:
        console.print_json(answer.document())
    elif csv_output:
        console.write(delimited.run_csv(run))
    else:
        console.show_run(run, answer.figures)
        for line in answer.second_looks:
            console.note(line)
        console.show_ratios(answer.figures.mission, answer.asked)
        console.note(f"stored as run {run.run_id} in {location}")
