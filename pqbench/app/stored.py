"""What is stored, as `pqbench runs` lists it, and which stored run a command means when
none is named (`show`, `ratios`): the newest, oldest first as `run_order` sorts them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pqbench.data.record.runs import run_order
from pqbench.data.store import resolve_location
from pqbench.data.store.location import is_missing_file
from pqbench.platform.errors import NothingStored, UsageError
from pqbench.platform.untrusted import redact

if TYPE_CHECKING:
    from pqbench.data.record.results import Run
    from pqbench.data.store import RunInfo, Store

#: Runs `pqbench runs` shows by default, newest first (as `git log` pages).
RUNS_SHOWN = 20


#: How many of the newest runs `newest` reads first: every run only where none of these
#: is surely the answer (a fleet's store holds 10,000, and `show` means the newest).
NEWEST_FIRST = 50


def newest(store: Store, wanted: Callable[[Run], bool] = lambda _run: True,
           none: str = "no run stored in {location} yet; `pqbench speed` makes one") -> str:
    """The id of the newest stored run `wanted` keeps (read as headers, without rows or
    fingerprints); none such is no failure: NothingStored says `none`. The NEWEST_FIRST
    newest runs by start time are read first, and they answer where the newest they keep
    started after the oldest of them (a run not read started no later than that one, and
    `run_order` orders by start time first); else every run is read."""
    from pqbench.data.store import RunFilter

    recent = store.load_runs(RunFilter(newest=NEWEST_FIRST), rows_too=False,
                             fingerprints=False)
    kept = sorted((r for r in recent if wanted(r)), key=run_order)
    if len(recent) >= NEWEST_FIRST and not (
            kept and kept[-1].started_at > min(r.started_at for r in recent)):
        kept = sorted((r for r in store.load_runs(rows_too=False, fingerprints=False)
                       if wanted(r)), key=run_order)
    if not kept:
        raise NothingStored(none.format(location=store.location))
    return kept[-1].run_id


def stored_run(store: Store, run_id: str | None) -> Run:
    """The run named (by id or unique prefix), else the newest of any kind."""
    return store.load_run(run_id if run_id is not None else newest(store))


@dataclass(frozen=True)
class Inventory:
    """Every stored run, oldest first, and where they are stored (redacted)."""

    location: str
    runs: list[RunInfo]
    store: Store | None = field(default=None, compare=False)

    def newest(self, last: int | None, every: bool) -> tuple[list[RunInfo], int]:
        """The runs shown, newest first (every one, the `last` N, else RUNS_SHOWN), and how
        many older ones are not."""
        count = len(self.runs) if every else (last or RUNS_SHOWN)
        shown = self.runs[::-1][:count]
        return shown, len(self.runs) - len(shown)

    def algorithms(self, runs: list[RunInfo]) -> dict[str, list[str]]:
        """Per run, the algorithms it measured, in the order first measured."""
        from pqbench.data.store.selection import run_algorithms

        return run_algorithms(self.store, [r.run_id for r in runs]) if self.store else {}


def inventory(db: str | None, last: int | None = None, every: bool = False) -> Inventory:
    """What the store at `db` holds; no database file yet is the first-day state, not an
    error: nothing is stored (and nothing is created)."""
    from pqbench.data.store import Store

    if last is not None and every:
        raise UsageError("choose one of --last N and --all")
    location = resolve_location(db)
    if is_missing_file(location):
        return Inventory(redact(location), [])
    store = Store.open(db, create=False)
    return Inventory(store.location, store.list_runs(), store)
