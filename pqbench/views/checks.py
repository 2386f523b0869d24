"""`pqbench verify`'s answer: the checks that failed (or every check), one summary line,
or one JSON document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pqbench.measure.checks.verify import Outcome, tally
from pqbench.views import console, numbers
from pqbench.views.tables import Column, Table

if TYPE_CHECKING:
    from pqbench.app.verify import Verified


def table(outcomes: Sequence[Outcome], every: bool) -> Table:
    return Table(
        "verification" if every else "failed checks",
        (Column("algorithm"), Column("implementation", short="impl."),
         Column("check", wrap=True), Column("status"),
         Column("detail", wrap=True, notes=True)),
        tuple((o.algorithm, o.implementation, o.check, o.status, o.detail) for o in outcomes),
        tuple("failed" if o.status == "failed" else None for o in outcomes))


def summary(outcomes: Sequence[Outcome], elapsed: float, every: bool) -> str:
    """"verify: 167 checks of 42 pairs in 7.1 s: 129 passed, 38 not offered, 0 failed"."""
    pairs_checked = len({(o.algorithm, o.implementation) for o in outcomes})
    counts = ", ".join(f"{n} {status}" for status, n in tally(outcomes).items())
    hint = "" if every else " (--all lists every check)"
    return (f"verify: {len(outcomes)} checks of {pairs_checked} pairs in "
            f"{numbers.number(elapsed, 2)} s: {counts}{hint}")


def show(found: Verified, every: bool, json_output: bool) -> None:
    if json_output:
        console.print_json({"results": [o.as_dict() for o in found.outcomes],
                            "failed": len(found.failed)})
        return
    shown = found.outcomes if every else found.failed
    if shown:
        console.print_table(table(shown, every))
    console.lines([summary(found.outcomes, found.seconds, every)])
