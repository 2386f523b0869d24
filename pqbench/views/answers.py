"""Each use case's answer drawn for the output asked: the terminal, JSON, CSV or Markdown.

A command calls its use case (`pqbench.app`) and hands the answer here; nothing here
decides anything the answer does not already say.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pqbench.views import comparisons, console
from pqbench.views.delimited import csv_text

if TYPE_CHECKING:
    from pqbench.app.compare import Comparisons
    from pqbench.app.gate import Failure
    from pqbench.app.history import FleetStep, MachineHistory


def compared(found: Comparisons, *, only_changed: bool = False, json_output: bool = False,
             csv_output: bool = False, markdown: bool = False) -> None:
    """`pqbench compare`: the notes that say which runs were chosen, then each comparison
    (the news, the rows, the ratios followed across), then every reason a gate failed."""
    for text in found.notes:
        console.note(text)
    results = [step.comparison for step in found.steps]
    shown = [r.only_changed() for r in results] if only_changed else results
    if json_output:
        document = [{**r.as_dict(), "ratios": [f.as_dict() for f in step.followed]}
                    for r, step in zip(shown, found.steps, strict=True)]
        body = document[0] if len(document) == 1 else {"comparisons": document}
        if found.failures:
            body = {**body, "gate": {"failed": True,
                                     "failures": [f.as_dict() for f in found.failures]}}
        console.print_json(body)
    elif csv_output:
        console.write(csv_text(comparisons.COMPARE_CSV, comparisons.compare_csv_rows(shown)))
    elif markdown:
        console.write(comparisons.markdown(shown))
    else:
        for result, full, step in zip(shown, results, found.steps, strict=True):
            console.show_comparison(result, hidden=len(full.rows) - len(result.rows))
            console.show_followed_ratios(step.followed)
    gate_failures(found.failures)


def gate_failures(failures: Sequence[Failure]) -> None:
    """Every reason a gate failed, one line each, on stderr."""
    if not failures:
        return
    console.error(f"--fail-on: the gate failed on {len(failures)} row(s):")
    console.lines([f"  {f.what}: {f.why}" for f in failures], console=console.stderr)


def histories(found: Sequence[MachineHistory], *, algorithm: str, by: str,
              fleet: Sequence[FleetStep] = (), json_output: bool = False,
              csv_output: bool = False) -> None:
    """`pqbench history`: each machine's series of each row, then the steps of a fleet's
    machines gathered by build (`app.history.fleet_steps`)."""
    if json_output:
        console.print_json({"algorithm": algorithm, "by": by,
                            "series": [one.as_dict() for one in found],
                            "fleet_steps": [f.as_dict() for f in fleet]})
    elif csv_output:
        console.write(csv_text(comparisons.HISTORY_CSV, comparisons.history_csv_rows(found)))
    else:
        for one in found:
            console.show_history(one.series, machine=one.machine.name)
        if fleet:
            console.print_table(comparisons.fleet_steps_table(
                fleet, len({one.machine for one in found})))
