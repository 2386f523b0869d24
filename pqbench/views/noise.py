"""The machine's run-to-run spread per row, as `pqbench calibrate` shows it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pqbench.analysis.noise import Spread, smallest_call
from pqbench.data.record.results import RowKey
from pqbench.views import numbers
from pqbench.views.runs import operation
from pqbench.views.tables import Column, Table


def _source(spread: Spread) -> str:
    if spread.source == "prior" and spread.borrowed is None:
        return "default prior"
    own = {"row": f"{spread.runs} runs", "sessions": f"{spread.sessions} ab sessions",
           "prior": ""}[spread.source]
    borrowed = {None: "", "the default prior": "prior"}.get(
        spread.borrowed, (spread.borrowed or "").split(" (")[0].removeprefix("its "))
    return " + ".join(part for part in (own, borrowed) if part)


def spread_table(spreads: Sequence[tuple[RowKey, Spread | None]]) -> Table:
    """Per row: its spread, degrees of freedom, where it came from, and the smallest change
    one run against one (and five against one) can call."""
    rows: list[tuple[object, ...]] = []
    for key, spread in spreads:
        if spread is None:
            rows.append((key[0], key[1], operation(key[2], key[3]), numbers.MISSING, "",
                         "runs of several machines", numbers.MISSING, numbers.MISSING))
            continue
        rows.append((key[0], key[1], operation(key[2], key[3]), numbers.percent(spread.percent),
                     spread.freedom, _source(spread),
                     f"±{numbers.percent(smallest_call(spread, 1, 1))}",
                     f"±{numbers.percent(smallest_call(spread, 5, 1))}"))
    return Table("this machine's run-to-run spread per row (one run about its build's level)",
                 (Column("algorithm"), Column("implementation", short="impl."),
                  Column("operation"), Column("spread", align="right"),
                  Column("df", "count", priority=2), Column("from", priority=1),
                  Column("1 vs 1 calls", align="right"),
                  Column("5 vs 1 calls", align="right", priority=1)),
                 tuple(rows))


def calibration_document(ids: Sequence[str],
                         spreads: Sequence[tuple[RowKey, Spread | None]]) -> dict[str, Any]:
    """`pqbench calibrate --json`: the runs, and per row its spread and the smallest change
    one run against one can call."""
    return {"runs": list(ids), "rows": [
        {"algorithm": k[0], "implementation": k[1], "operation": k[2], "block_size": k[3],
         "spread": s.as_dict() if s else None,
         "smallest_change_one_against_one": smallest_call(s, 1, 1) if s else None}
        for k, s in spreads]}
