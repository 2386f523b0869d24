"""A bisection read back from its stored runs: series positions, sessions, change points.

Each run of a bisection carries ``settings["bisect"]`` (the series and its builds, the
search, the run's own position and its partner's). From those alone, the sessions are
re-judged exactly as `ab` judged them (`compare_runs` of the two runs), so `report` and
`history` need nothing but the runs. A change point is a session whose row changed and
between whose two builds no build was measured for that row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pqbench.analysis import pairing
from pqbench.analysis.compare import compare_runs
from pqbench.analysis.explain import Difference
from pqbench.analysis.rows import Row
from pqbench.analysis.verdict import CHANGED
from pqbench.data.record.results import Measurement, RowKey, Run
from pqbench.platform.errors import ComparisonError


def info(run: Run) -> Mapping[str, Any] | None:
    found = run.settings.get("bisect")
    return found if isinstance(found, Mapping) else None


def position(run: Run) -> int | None:
    """The run's build's position in its series (0 first), None for other runs."""
    found = info(run)
    value = found.get("position") if found else None
    return value if isinstance(value, int) else None


def in_series_order(groups: Sequence[tuple[str, list[Run]]]) -> list[tuple[str, list[Run]]]:
    """Groups (`record.runs.group_runs`) ordered by the earliest series position of their runs;
    groups with no bisection run keep their order, after the others."""
    def key(item: tuple[int, tuple[str, list[Run]]]) -> tuple[int, int]:
        index, (_name, runs) = item
        found = [p for p in map(position, runs) if p is not None]
        return (min(found), index) if found else (1 << 30, index)

    return [group for _index, group in sorted(enumerate(groups), key=key)]


@dataclass(frozen=True)
class Session:
    """One stored session: the positions of its two builds, its two runs (A, B) and its
    rows' verdicts."""

    before: int
    after: int
    runs: tuple[Run, Run]
    rows: Mapping[RowKey, Row]
    differences: tuple[Difference, ...] = ()


@dataclass(frozen=True)
class Level:
    """A build's level for one row: the median of the rates of all its rounds in the
    sessions that measured it (in CPU time, as the pairs are compared), with the 95 %
    order-statistic interval of that median (`record.summary.summarize`)."""

    median: float
    ci_low: float
    ci_high: float
    rounds: int
    unit: str


def _rates(m: Measurement) -> list[float]:
    """Per round, in the row's unit: CPU-time rates where recorded, else wall rates."""
    scale = m.block_size or 1
    return [(cpu or r.ops_per_sec) * scale
            for r, cpu in zip(m.rounds, pairing.cpu_rates(m), strict=True) if r.ops > 0]


def _level(rates: Sequence[float], unit: str) -> Level:
    from pqbench.data.record.summary import summarize

    found = summarize(rates)
    return Level(found.median, found.ci_low, found.ci_high, found.n, unit)


@dataclass(frozen=True)
class Search:
    """One bisection as stored: its series' builds and the sessions it ran, in order."""

    search_id: str
    builds: tuple[str, ...]
    sessions: tuple[Session, ...]

    def row_keys(self) -> list[RowKey]:
        keys = {key for s in self.sessions for key in s.rows}
        return sorted(keys, key=lambda k: (k.algorithm, k.implementation, k.operation,
                                           k.block_size or 0))

    def levels(self, key: RowKey) -> dict[int, Level]:
        """Per position measured for the row, its level over all its rounds there."""
        rates: dict[int, list[float]] = {}
        units: dict[int, str] = {}
        for s in self.sessions:
            row = s.rows.get(key)
            if row is None:
                continue
            for run, position in zip(s.runs, (s.before, s.after), strict=True):
                for m in run.measurements:
                    if m.key == key:
                        rates.setdefault(position, []).extend(_rates(m))
                        units[position] = row.unit
        return {position: _level(found, units[position])
                for position, found in sorted(rates.items()) if found}

    def change_points(self, key: RowKey) -> list[tuple[Session, Row]]:
        """Sessions where the row changed with no build measured for it in between."""
        measured = set(self.levels(key))
        points = []
        for s in self.sessions:
            row = s.rows.get(key)
            low, high = sorted((s.before, s.after))
            if (row is not None and row.verdict in CHANGED
                    and not any(low < p < high for p in measured)):
                points.append((s, row))
        return sorted(points, key=lambda item: min(item[0].before, item[0].after))


def searches(runs: Iterable[Run]) -> list[Search]:
    """Every bisection among `runs`, oldest first; sessions re-judged from their runs."""
    by_search: dict[str, list[Run]] = {}
    for run in sorted(runs, key=lambda r: (r.started_at, r.run_id)):
        found = info(run)
        if found is not None and isinstance(found.get("search"), str):
            by_search.setdefault(found["search"], []).append(run)
    result = []
    for search_id, members in by_search.items():
        first = info(members[0]) or {}
        builds = tuple(str(b) for b in first.get("builds") or ())
        result.append(Search(search_id, builds, tuple(_sessions(members))))
    return result


def _sessions(runs: Sequence[Run]) -> list[Session]:
    by_session: dict[str, dict[str, Run]] = {}
    for run in runs:
        ab = pairing.ab_session(run)
        if ab is not None:
            by_session.setdefault(str(ab["session"]), {})[str(ab["side"])] = run
    sessions = []
    for sides in by_session.values():
        a, b = sides.get("a"), sides.get("b")
        if a is None or b is None or position(a) is None or position(b) is None:
            continue
        rows: dict[RowKey, Row] = {}
        differences: tuple[Difference, ...] = ()
        if a.measurements and b.measurements:
            try:
                band = (pairing.ab_session(a) or {}).get("threshold")
                compared = compare_runs([a], [b], band if isinstance(band, float) else None)
                rows = {row.key: row for row in compared.rows}
                differences = compared.differences
            except ComparisonError:
                pass
        sessions.append(Session(position(a) or 0, position(b) or 0, (a, b), rows,
                                differences))
    return sessions
