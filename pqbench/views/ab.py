"""A `pqbench ab` session's answer (`app.ab.Answer`) on the terminal or as one JSON
document: the controller's notes, the comparison of the rows both sides measured, what was
not measured, and where the runs were stored."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pqbench.views import console

if TYPE_CHECKING:
    from pqbench.app.ab import Answer


def document(found: Answer) -> dict[str, Any]:
    """--json: the comparison's rows (none when no row was measured on both sides) and the
    session's own figures."""
    shown: dict[str, Any] = found.comparison.as_dict() if found.comparison else {"rows": []}
    return {**shown, "session": found.session}


def show(found: Answer, json_output: bool) -> None:
    for note in found.outcome.notes:
        console.warning(note)
    if json_output:
        console.print_json(document(found))
    elif found.comparison is not None:
        console.show_comparison(found.comparison)
        console.show_load(found.outcome.run_a)  # one window for the session: both sides share it
    else:
        console.note("no row was measured on both sides")
    for problems, whose in found.problems:
        console.stderr.print(console.problems_table(problems), markup=False)
        console.note(f"({whose})")
    console.note(found.stored)
