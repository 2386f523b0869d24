"""`pqbench show`: which stored run is shown, and the figures it is shown with, worked out
as the command that made it worked them out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pqbench.app.stored import stored_run

if TYPE_CHECKING:
    from pqbench.analysis.figures import RunFigures
    from pqbench.analysis.ratios import Ratio
    from pqbench.data.record.results import Run
    from pqbench.data.store import Store


@dataclass(frozen=True)
class Shown:
    """A stored run and what its kind is shown with: a speed run's figures (None for other
    kinds) and the ratios shown under its tables (the mission's), a `files hash` run's
    paired answers; `note` where a run's rows pair with another run's, not its own."""

    run: Run
    figures: RunFigures | None = None
    ratios: list[Ratio] = field(default_factory=list)
    note: str | None = None


def show(store: Store, run_id: str | None, *, figures: bool = True) -> Shown:
    """The run named (id or unique prefix), else the newest stored, with its figures (none
    worked out when `figures` is False: --csv prints the rows as stored)."""
    from pqbench.analysis import ratios

    run = stored_run(store, run_id)
    if not figures or run.kind in ("tls", "memory"):
        return Shown(run)
    if run.kind == "files":
        return Shown(run, None, ratios.file_ratios(run))
    return speed_figures(run)


def speed_figures(run: Run) -> Shown:
    """A speed run's figures, and the ratios its tables are followed by: the mission's, or
    for one side of an `ab` session none but a note (its rows pair with the other side's)."""
    from pqbench.analysis.figures import run_figures

    found = run_figures(run)
    if run.settings.get("ab"):
        return Shown(run, found, [], f"run {run.run_id} is one side of a `pqbench ab` "
                     "session: its rows are paired with the other side's (`pqbench compare` "
                     "shows the session)")
    return Shown(run, found, list(found.mission))
