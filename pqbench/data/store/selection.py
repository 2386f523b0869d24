"""Which runs a question needs: run headers first, grouped by a `--by` field, whole runs
only for the groups a command actually compares.

`compare`, `history` and `report` all ask the same thing of a store with thousands of runs:
"group every run by this field, then load these two groups whole". Headers (no result
rows; no fingerprints when the field is a column, `LIGHT_FIELDS`) cost little; a group's
runs are loaded whole on demand (`Selection.whole`), so memory grows with the groups
compared, not with the database.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pqbench.data.record.results import RowKey, Run
from pqbench.data.record.runs import group_runs, run_order, without_value
from pqbench.data.store import schema
from pqbench.data.store.database import Store
from pqbench.data.store.queries import LIGHT_FIELDS, RunFilter
from pqbench.platform.errors import ComparisonError, NothingStored
from pqbench.platform.untrusted import named, printable

if TYPE_CHECKING:
    from pqbench.data.store.rates import RowEstimates  # numpy: only commands that judge

__all__ = ["LOOK_BACK", "NoiseInputs", "Selection", "newest_ids", "noise_inputs",
           "run_algorithms", "select"]

#: How many of the newest runs `compare` without arguments looks through for two that
#: share a row (each is loaded whole to see its rows).
LOOK_BACK = 50


@dataclass
class Selection:
    """Every stored run's header (oldest first, `record.runs.run_order`), grouped by `by`.

    ``groups`` leaves out the runs without a value for `by` unless ``missing``;
    ``left_out`` lists those runs.
    """

    store: Store
    by: str | None
    headers: list[Run]
    missing: bool = False
    groups: list[tuple[str, list[Run]]] = field(default_factory=list)
    left_out: list[Run] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.by is not None:
            self.groups = group_runs(self.headers, self.by, missing=self.missing)
            self.left_out = [] if self.missing else without_value(self.headers, self.by)

    def whole(self, runs: Iterable[Run | str]) -> list[Run]:
        """The runs (headers or ids) loaded whole, rows, checks and fingerprints."""
        ids = tuple(r if isinstance(r, str) else r.run_id for r in runs)
        return self.store.load_runs(RunFilter(ids=ids)) if ids else []

    def newest_with_shared_rows(self, look_back: int = LOOK_BACK) -> tuple[Run, Run, bool]:
        """Two runs to compare when none is named: the newest run and the newest earlier
        run of its kind that measured a row it measured (the sides of an `ab` session, when
        the newest is its B side). When no earlier run shares a row with the newest run
        (`speed x25519` then `speed aes-256-gcm`), the next newest run that has such a
        partner, and so on over the `look_back` newest runs; the flag says whether the
        newest run itself was compared. Runs are loaded whole one at a time, each once."""
        keys: dict[str, set[RowKey]] = {}
        loaded: dict[str, Run] = {}

        def rows_of(header: Run) -> set[RowKey]:
            if header.run_id not in keys:
                run = self.whole([header])[0]
                loaded[run.run_id] = run
                keys[run.run_id] = {m.key for m in run.measurements}
            return keys[header.run_id]

        window = self.headers[-look_back:]
        newest = window[-1]
        if not any(r.kind == newest.kind for r in self.headers[:-1]):
            raise ComparisonError(f"the newest run {newest.run_id} is the only {newest.kind} "
                                  "run stored: nothing to compare it with yet")
        for at in range(len(window) - 1, 0, -1):
            after = window[at]
            wanted = rows_of(after)
            for before in reversed(window[:at]):
                if before.kind == after.kind and (not wanted or wanted & rows_of(before)):
                    return loaded[before.run_id], loaded[after.run_id], after is newest
        raise ComparisonError(f"no two of the {len(window)} newest runs measured a row in "
                              "common; name two runs (`pqbench runs` lists them)")

    def group(self, name: str) -> list[Run]:
        """The headers of one group; a ComparisonError naming the groups there are."""
        for found, members in self.groups:
            if found == name:
                return members
        raise ComparisonError(f"no runs with {self.by} = {printable(name)!r}; found: "
                              f"{named([n for n, _ in self.groups], near=name)}")


def select(store: Store, by: str | None = None, *, missing: bool = False,
           kinds: tuple[str, ...] = (), fingerprints: bool = False,
           notes: bool = True) -> Selection:
    """Every stored run's header grouped by `by` (a ComparisonError when none is stored).

    Fingerprints are read when asked, or when `by` is not a column of the runs table;
    `notes` False leaves the runs' problems and checks out (a history draws rates)."""
    fingerprints = fingerprints or (by is not None and by not in LIGHT_FIELDS)
    headers = sorted(store.load_runs(RunFilter(kinds=kinds, notes=notes), rows_too=False,
                                     fingerprints=fingerprints), key=run_order)
    if not headers:
        raise NothingStored(f"no runs stored yet in {store.location}; `pqbench speed` "
                            "measures and stores one")
    return Selection(store, by, headers, missing)


def newest_ids(store: Store, last: int | None) -> list[str]:
    """The ids of the `last` newest runs (every run with None), oldest first."""
    ids = [info.run_id for info in store.list_runs()]
    return ids if last is None else ids[-last:] if last > 0 else []


def run_algorithms(store: Store, run_ids: Sequence[str]) -> dict[str, list[str]]:
    """Per run, the algorithms it has result rows for, in the order first measured: what
    tells two runs of one kind apart in `pqbench runs`. One query for all the ids."""
    from sqlalchemy import func
    from sqlalchemy import select as sql_select

    m = schema.measurements
    found: dict[str, list[str]] = {run_id: [] for run_id in run_ids}
    if not run_ids:
        return found
    query = (sql_select(m.c.run_id, m.c.algorithm).where(m.c.run_id.in_(list(run_ids)))
             .group_by(m.c.run_id, m.c.algorithm).order_by(m.c.run_id, func.min(m.c.id)))
    with store.engine.connect() as conn:
        for run_id, algorithm in conn.execute(query):
            found[run_id].append(algorithm)
    return found


@dataclass(frozen=True)
class NoiseInputs:
    """What the noise model of one testbed is learnt from (`app.noise.from_inputs`): every
    run's header with its fingerprint (a run's build needs it), each run's estimate of each
    row (`Store.row_estimates`), and the sides of `ab` sessions whole (their worker pairs
    are attributes of their rows)."""

    testbed: str
    headers: list[Run]
    estimates: RowEstimates
    sessions: list[Run]


def noise_inputs(store: Store, testbed: str) -> NoiseInputs:
    """Every run of one testbed, as the noise model reads them: three queries whatever
    the testbed's history (headers, estimates, the sessions' sides)."""
    headers = store.load_runs(RunFilter(by="testbed", values=(testbed,)), rows_too=False,
                              fingerprints=True)
    headers.sort(key=run_order)
    sides = [r.run_id for r in headers
             if isinstance(r.settings, Mapping) and isinstance(r.settings.get("ab"), Mapping)]
    paired = set(sides)
    plain = [r.run_id for r in headers if r.run_id not in paired]
    return NoiseInputs(testbed, headers, store.row_estimates(plain),
                       store.load_runs(RunFilter(ids=tuple(sides))) if sides else [])
