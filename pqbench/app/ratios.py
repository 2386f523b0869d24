"""`pqbench ratios`: which run's paired cost ratios are shown, which of them, and what is
said when a run has none to show.

The ratios themselves are `analysis.ratios`' (pairs of rows taken in one cycle, with
intervals); what is decided here is checked without a process: the run meant when none
is named, the row --relative-to names, the ratios the table shows, and the note.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pqbench.app.stored import newest
from pqbench.catalog.algorithms.base import normalize
from pqbench.platform.errors import UsageError

if TYPE_CHECKING:
    from pqbench.analysis.ratios import Ratio
    from pqbench.data.record.results import Run
    from pqbench.data.store import Store


@dataclass(frozen=True)
class Answer:
    """A run's ratios: every one (--json and --csv), those the table shows, and the note
    that says why there are none where a run has none to pair."""

    run: Run
    found: list[Ratio]
    shown: list[Ratio]
    note: str | None = None

    @property
    def more(self) -> int:
        """The ratios --all would add to the table."""
        return len(self.found) - len(self.shown)


def paired_speed_run(run: Run) -> bool:
    """A speed run whose rounds were taken in cycles (its settings say so): its rows pair."""
    return run.kind == "speed" and bool(run.settings.get("interleaved"))


def ratios(store: Store, run_id: str | None, relative_to: str | None, every: bool) -> Answer:
    """The ratios of the run named, else of the newest speed run with paired rows."""
    from pqbench.analysis import ratios as paired

    if run_id is None:
        run_id = newest(store, paired_speed_run, "no speed run with paired rows stored in "
                                                 "{location} yet; `pqbench speed` makes one")
    run = store.load_run(run_id)
    if run.kind not in ("speed", "files"):
        raise UsageError(f"run {run.run_id} is a {run.kind} run; ratios pair the rows "
                         "of a speed run or a `files hash` run")
    found = paired.run_ratios(run)
    asked = paired.relative_to(run, reference(run, relative_to)) if relative_to else []
    found += asked
    # --relative-to shows what it asked for, --all everything; either way a pairing two
    # kinds of ratio hold alike (the mission's and --relative-to's) is one line.
    shown = found if every or run.kind == "files" else \
        asked if relative_to is not None else paired.mission(found)
    return Answer(run, found, list({r.name: r for r in shown}.values()),
                  none_paired(run, found, paired.cycles_of(run)))


def reference(run: Run, relative_to: str) -> str:
    """The algorithm --relative-to names, as the run's rows spell it; a `files hash` run's
    hashes are set against its first one, and no other."""
    if run.kind == "files":
        raise UsageError(f"--relative-to: run {run.run_id} is a `files hash` run, whose "
                         "hashes are set against the first one it measured")
    names = {normalize(m.algorithm): m.algorithm for m in run.measurements}
    if normalize(relative_to) not in names:
        raise UsageError(f"--relative-to {relative_to}: run {run.run_id} has no rows "
                         f"of it ({', '.join(sorted(set(names.values())))})")
    return names[normalize(relative_to)]


def none_paired(run: Run, found: list[Ratio], cycles: int) -> str | None:
    """Why a run's rows pair with nothing here: one side of an `ab` session (paired with
    the other side), a `files hash` run of one pass per file, a speed run taken row after
    row; None for a run whose ratios are shown."""
    if run.settings.get("ab"):
        return (f"run {run.run_id} is one side of a `pqbench ab` session: its rows are "
                "paired with the other side's, not with each other (`pqbench compare` "
                "shows that session)")
    if run.kind == "files" and not found:
        return (f"run {run.run_id} took one pass per file: a ratio needs two pairs "
                "(`files hash` without --runs takes what its answers need)")
    if run.kind == "speed" and not cycles:
        return (f"run {run.run_id} took its rounds one row after another, not in cycles: "
                "its rows are not paired, so it has no ratio to show")
    return None
