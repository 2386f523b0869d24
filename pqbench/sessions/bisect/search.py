"""Where a row changed along a series: bisection with paired sessions between builds.

The search only ever compares two builds in one paired session (`ab`), so every verdict it
uses is one a session gave, with the session's interval, and none is chained from others.

1. The two ends are measured. A row whose ends are ``faster`` or ``slower`` has at least
   one change point between them; any other row is not searched (one session for a flat
   row).
2. An interval (i, j) known to hold a change is split at a usable build m in its middle,
   and (i, m) is measured. If (i, m) changed, it holds a change point, and (m, j) is
   measured too, since the series may step again, in either direction. If (i, m) did not
   change, the change is in (m, j), which is searched without a session of its own.
3. An interval of two neighbouring usable builds is a change point once a session of
   exactly those two builds says ``faster`` or ``slower``; that session's ratio, interval
   and fingerprint differences are what is reported. A neighbouring pair reached by
   inference whose own session does not confirm a change is reported as a change spread
   over several builds (each step inside the band), never as a change point.

So one change point costs about log2(N) + 1 sessions, and k of them at most about
2k log2(N). What it cannot promise: a change that is undone within an interval whose ends
agree (a bump that returns to its level between two builds that are measured "no change")
is not seen, and neither is a step smaller than the band. Measuring every neighbouring
pair (`exhaustive`) sees the first, at N - 1 sessions.

A build whose worker cannot start, or fails its correctness checks, is unusable: it is
reported with its reason and the search goes on around it (a change next to it is placed
between the nearest usable builds, and says so).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from pqbench.analysis.explain import Difference
from pqbench.analysis.rows import Row
from pqbench.analysis.verdict import CHANGED
from pqbench.data.record.results import RowKey


@dataclass(frozen=True)
class Measured:
    """One paired session between builds ``before`` and ``after`` (positions)."""

    before: int
    after: int
    rows: dict[RowKey, Row]
    run_ids: tuple[str, str] = ("", "")
    seconds: float = 0.0
    status: str = "complete"
    #: Builds (positions) found unusable by this session, with the reason.
    unusable: dict[int, str] = field(default_factory=dict)
    #: What differs between the two builds' fingerprints (`explain.differences`).
    differences: tuple[Difference, ...] = ()


#: Measure builds i and j (positions) for these rows (None: every row asked for).
Measure = Callable[[int, int, frozenset[RowKey] | None], Measured]


class Stopped(Exception):
    """The search was interrupted; what it found so far is kept."""


@dataclass(frozen=True)
class ChangePoint:
    """A row changed between two neighbouring usable builds, as one session measured it."""

    key: RowKey
    before: int
    after: int
    row: Row
    #: Builds between the two that could not be measured (their change is placed here).
    skipped: tuple[int, ...] = ()
    #: Everything that differs between the two builds' fingerprints; ``row.causes`` are
    #: those the comparison ranks as able to explain this row.
    differences: tuple[Difference, ...] = ()


@dataclass(frozen=True)
class Spread:
    """A change between ``before`` and ``after`` that no single step of two neighbouring
    usable builds carries beyond the band: it accumulates over several builds."""

    key: RowKey
    before: int
    after: int


@dataclass(frozen=True)
class RowResult:
    """What the search says of one row."""

    key: RowKey
    #: The session of the series' two ends (bisection), or of the first pair (exhaustive).
    ends: Row
    change_points: tuple[ChangePoint, ...]
    spreads: tuple[Spread, ...] = ()
    #: Whether builds between the ends were measured for this row.
    searched: bool = True


@dataclass(frozen=True)
class Result:
    """Every row's change points, the sessions they cost, and the unusable builds."""

    size: int
    rows: tuple[RowResult, ...]
    sessions: tuple[Measured, ...]
    unusable: dict[int, str]
    ends: tuple[int, int] | None
    status: str = "complete"


@dataclass
class _Work:
    """An interval known (measured or inferred) to hold a change, and for which rows; or,
    `known` False, one where it is not known yet whether those rows change (a build
    failed on one side of a session that changed): measured first (`_confirm`)."""

    before: int
    after: int
    rows: set[RowKey]
    known: bool = True


class Bisection:
    """One search over a series of ``size`` builds; `run()` returns the Result."""

    def __init__(self, size: int, measure: Measure,
                 on_session: Callable[[Measured, int], None] | None = None) -> None:
        self.size = size
        self.measure = measure
        self.on_session = on_session or (lambda _m, _left: None)
        self.sessions: list[Measured] = []
        self.unusable: dict[int, str] = {}
        self.found: dict[RowKey, list[ChangePoint]] = {}
        self.spreads: dict[RowKey, list[Spread]] = {}
        self.work: list[_Work] = []

    # --- sessions -------------------------------------------------------------------------

    def session(self, i: int, j: int, rows: frozenset[RowKey] | None) -> Measured | None:
        """Measure (i, j); None when one of them turned out unusable (recorded)."""
        measured = self.measure(i, j, rows)
        self.unusable.update(measured.unusable)
        if measured.rows or measured.run_ids != ("", ""):
            self.sessions.append(measured)
            self.on_session(measured, self.estimate_left())
        if measured.status == "interrupted":
            raise Stopped
        if i in self.unusable or j in self.unusable:
            return None
        return measured

    def estimate_left(self) -> int:
        """Sessions still expected: about log2 of each open interval, plus one."""
        return sum(max(1, (w.after - w.before).bit_length()) for w in self.work)

    def usable_between(self, i: int, j: int) -> list[int]:
        return [k for k in range(i + 1, j) if k not in self.unusable]

    # --- the search -----------------------------------------------------------------------

    def run(self) -> Result:
        ends: Measured | None = None
        lo, hi = 0, self.size - 1
        status = "complete"
        try:
            while lo < hi:
                ends = self.session(lo, hi, None)
                if ends is not None:
                    break
                lo = lo if lo not in self.unusable else lo + 1
                hi = hi if hi not in self.unusable else hi - 1
                while lo < hi and lo in self.unusable:
                    lo += 1
                while lo < hi and hi in self.unusable:
                    hi -= 1
            if ends is None:
                return self._result(None, None, status)
            changed = {key for key, row in ends.rows.items() if row.verdict in CHANGED}
            if changed:
                self.work.append(_Work(lo, hi, changed))
            while self.work:
                self._step(self.work.pop(0))
        except (Stopped, KeyboardInterrupt):  # Ctrl-C or SIGTERM between two sessions too
            status = "interrupted"
        return self._result(ends, (lo, hi) if ends is not None else None, status)

    def _step(self, work: _Work) -> None:
        if not work.known:
            self._confirm(work)
            return
        middle = self.usable_between(work.before, work.after)
        if not middle:
            self._neighbours(work)
            return
        m = middle[(len(middle) - 1) // 2]
        left = self.session(work.before, m, frozenset(work.rows))
        if left is None:  # m (or an end, which is then reported) is unusable: try again
            if work.before in self.unusable or work.after in self.unusable:
                self._lost(work)
            else:
                self.work.insert(0, work)
            return
        left_changed = {k for k in work.rows if _changed(left, k)}
        if left_changed:
            self.work.append(_Work(work.before, m, left_changed))
        inferred = work.rows - left_changed
        check = work.rows & left_changed
        if check:
            right = self.session(m, work.after, frozenset(check))
            if right is None:  # whether these rows also change on the right is unknown
                if work.after in self.unusable:
                    self._lost(_Work(m, work.after, check, known=False))
                else:  # m failed on the right only: its left verdicts still stand
                    self.work.insert(0, _Work(m, work.after, check, known=False))
            else:
                right_changed = {k for k in check if _changed(right, k)}
                if right_changed:
                    self.work.append(_Work(m, work.after, right_changed))
        if inferred:
            self.work.append(_Work(m, work.after, inferred))

    def _confirm(self, work: _Work) -> None:
        """An interval not known to change: its own session says which rows do, and only
        those are searched (inferring a change there would report one in a flat span)."""
        session = self.session(work.before, work.after, frozenset(work.rows))
        if session is None:
            if work.before in self.unusable or work.after in self.unusable:
                self._lost(work)
            return
        changed = {key for key in work.rows if _changed(session, key)}
        if changed:
            self.work.insert(0, _Work(work.before, work.after, changed))

    def _neighbours(self, work: _Work) -> None:
        """An interval with no usable build inside: confirm with its own session."""
        session = self._find(work.before, work.after, work.rows)
        missing = work.rows - set(session.rows if session else ())
        if missing:
            fresh = self.session(work.before, work.after, frozenset(missing))
            if fresh is None:
                self._lost(work)
                return
            session = fresh
        assert session is not None
        skipped = tuple(range(work.before + 1, work.after))
        for key in sorted(work.rows, key=_order):
            if _changed(session, key):
                self.found.setdefault(key, []).append(
                    ChangePoint(key, work.before, work.after, session.rows[key], skipped,
                                session.differences))
            else:
                self.spreads.setdefault(key, []).append(Spread(key, work.before, work.after))

    def _find(self, i: int, j: int, rows: Iterable[RowKey]) -> Measured | None:
        wanted = set(rows)
        for session in reversed(self.sessions):
            if (session.before, session.after) == (i, j) and wanted <= set(session.rows):
                return session
        return None

    def _lost(self, work: _Work) -> None:
        """An end of the interval is unusable: search the interval between usable ones."""
        lo, hi = work.before, work.after
        while lo in self.unusable and lo > 0:
            lo -= 1
        while hi in self.unusable and hi < self.size - 1:
            hi += 1
        if lo in self.unusable or hi in self.unusable or lo >= hi:
            if work.known:  # nothing usable around a change: say so, never guess
                for key in work.rows:
                    self.spreads.setdefault(key, []).append(
                        Spread(key, work.before, work.after))
            return
        self.work.insert(0, _Work(lo, hi, set(work.rows), work.known))

    def _result(self, ends: Measured | None, span: tuple[int, int] | None,
                status: str) -> Result:
        rows = []
        if ends is not None:
            for key in sorted(ends.rows, key=_order):
                # A build that failed after it had worked can lead two intervals to the
                # same pair of usable builds: each pair is reported once.
                points = {(c.before, c.after): c for c in self.found.get(key, ())}
                spreads = {(w.before, w.after): w for w in self.spreads.get(key, ())}
                rows.append(RowResult(
                    key, ends.rows[key], tuple(points[k] for k in sorted(points)),
                    tuple(spreads[k] for k in sorted(spreads) if k not in points),
                    ends.rows[key].verdict in CHANGED))
        return Result(self.size, tuple(rows), tuple(self.sessions), dict(self.unusable),
                      span, status)


def exhaustive(size: int, measure: Measure) -> Result:
    """Every neighbouring pair measured (N - 1 sessions): the reference the bisection is
    judged against; a change point is any pair whose session changed."""
    search = Bisection(size, measure)
    status = "complete"
    pairs: list[Measured] = []
    try:
        for i in range(size - 1):
            found = search.session(i, i + 1, None)
            if found is not None:
                pairs.append(found)
    except (Stopped, KeyboardInterrupt):
        status = "interrupted"
    rows: dict[RowKey, list[ChangePoint]] = {}
    for session in pairs:
        for key, row in session.rows.items():
            points = rows.setdefault(key, [])
            if row.verdict in CHANGED:
                points.append(ChangePoint(key, session.before, session.after, row,
                                          differences=session.differences))
    results = tuple(RowResult(key, pairs[0].rows.get(key) or next(
        s.rows[key] for s in pairs if key in s.rows), tuple(points))
        for key, points in sorted(rows.items(), key=lambda item: _order(item[0])))
    return Result(size, results, tuple(search.sessions), dict(search.unusable),
                  (0, size - 1), status)


def _changed(session: Measured, key: RowKey) -> bool:
    row = session.rows.get(key)
    return row is not None and row.verdict in CHANGED


def _order(key: RowKey) -> tuple[str, str, str, int]:
    return key.algorithm, key.implementation, key.operation, key.block_size or 0


def change_points(result: Result) -> set[tuple[RowKey, int, int]]:
    """(row, before, after) of every change point: how two searches are compared."""
    return {(c.key, c.before, c.after) for row in result.rows for c in row.change_points}


def positions(sessions: Sequence[Measured]) -> list[tuple[int, int]]:
    return [(s.before, s.after) for s in sessions]
