"""The sessions of a bisection: start two builds' workers, pair them, store both runs.

Each session is a `pqbench ab` session (`ab.session.Session`) between two builds of the
series, judged row by row exactly as `pqbench ab` judges it
(`analysis.compare.compare_runs` of its two runs), and stored at once as two runs whose
``settings["bisect"]`` names the series, the search, and each run's build and position.
A build is made (``pip:`` provisioning) and its worker started once before its first
session; a build that cannot be made or started, or whose worker fails a correctness
check, is unusable and reported with its reason.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from pqbench.analysis.compare import RunComparison, compare_runs
from pqbench.data.record.results import RowKey, Run
from pqbench.data.store import Store
from pqbench.platform import interrupts
from pqbench.platform.errors import ComparisonError, PqbenchError
from pqbench.sessions import sides
from pqbench.sessions.ab.client import Worker, WorkerError
from pqbench.sessions.ab.session import Session, Settings
from pqbench.sessions.bisect.search import Bisection, Measured, Result, exhaustive
from pqbench.sessions.bisect.series import Series

Progress = Callable[[str], None]
_WORKER = re.compile(r"\bworker ([AB])\b")


@dataclass(frozen=True)
class Plan:
    """A bisection's series, what each session measures, and how it is judged."""

    series: Series
    settings: Settings  # algorithms, implementations, operations, max_seconds per session
    band: float | None
    command: str


class Runner:
    """Measures pairs of builds for `search.Bisection`; `bisect()` or `exhaustive()`."""

    def __init__(self, plan: Plan, store: Store, progress: Progress | None = None) -> None:
        self.plan = plan
        self.store = store
        self.progress = progress or (lambda _text: None)
        self.search_id = secrets.token_hex(6)
        self.sides: dict[int, sides.Side] = {}
        self.unusable: dict[int, str] = {}
        self.started = time.monotonic()
        self.session_seconds: list[float] = []
        self.left = 1
        self.stored: list[str] = []

    def bisect(self) -> Result:
        return Bisection(len(self.plan.series), self.measure, self._done).run()

    def exhaustive(self) -> Result:
        return exhaustive(len(self.plan.series), self.measure)

    # --- one session ----------------------------------------------------------------------

    def measure(self, i: int, j: int, rows: frozenset[RowKey] | None) -> Measured:
        builds = self.plan.series.builds
        self._say(i, j, "starting")
        try:
            found = {pos: self._side(pos) for pos in (i, j)}
        except KeyboardInterrupt:
            return Measured(i, j, {}, status="interrupted")
        side_a, side_b = found[i], found[j]
        if side_a is None or side_b is None:
            return Measured(i, j, {}, unusable={pos: reason for pos, reason
                                                in self.unusable.items() if pos in (i, j)})
        settings = replace(self._restricted(rows), label_a=builds[i].spec,
                           label_b=builds[j].spec)
        started = time.monotonic()
        outcome = Session(side_a, side_b, settings, self.plan.command,
                          lambda title, _where: self._say(i, j, title)).run()
        seconds = time.monotonic() - started
        a, b = (self._tagged(outcome.run_a, i, j), self._tagged(outcome.run_b, j, i))
        kept = [run for run in (a, b) if run.measurements or run.problems]
        if kept:
            with interrupts.deferred():  # a second signal waits until both runs are stored
                for run in (a, b):
                    self.store.save_run(run)
                self.stored += [a.run_id, b.run_id]
        unusable = self._failures(outcome.error, (a, b), (i, j))
        if outcome.error and not unusable:  # neither build is to blame: say so, stop
            raise WorkerError(f"session {builds[i].spec} / {builds[j].spec}: {outcome.error}")
        self.unusable.update(unusable)
        self.session_seconds.append(seconds)
        status = outcome.status if not (outcome.error and unusable) else "complete"
        compared = self._compared(a, b) if not unusable else None
        return Measured(i, j, {row.key: row for row in compared.rows} if compared else {},
                        (a.run_id, b.run_id) if kept else ("", ""), seconds, status, unusable,
                        compared.differences if compared else ())

    def _side(self, position: int) -> sides.Side | None:
        """The build's side, made and started once; None (and a reason) when unusable."""
        if position in self.unusable:
            return None
        if position not in self.sides:
            build = self.plan.series.builds[position]
            try:
                side = sides.parse(list(build.items), f"series[{position + 1}]")
                sides.provision_stacks(side, self.plan.settings.implementations)
                worker = Worker(build.spec, side)
                try:
                    worker.greet()
                finally:
                    worker.close()
            except PqbenchError as exc:
                self.unusable[position] = str(exc)
                return None
            self.sides[position] = side
        return self.sides[position]

    def _restricted(self, rows: frozenset[RowKey] | None) -> Settings:
        s = self.plan.settings
        if rows is None:
            return s
        blocks = tuple(sorted({k.block_size for k in rows if k.block_size is not None}))
        return replace(s, algorithms=tuple(sorted({k.algorithm for k in rows})),
                       implementations=tuple(sorted({k.implementation for k in rows})),
                       operations=tuple(sorted({k.operation for k in rows})),
                       block_sizes=blocks or s.block_sizes)

    def _tagged(self, run: Run, position: int, other: int) -> Run:
        series = self.plan.series
        found = {"series": series.series_id, "search": self.search_id,
                 "builds": series.specs(), "position": position,
                 "build": series.builds[position].spec, "other_position": other}
        return replace(run, settings={**run.settings, "bisect": found})

    def _failures(self, error: str | None, runs: tuple[Run, Run],
                  positions: tuple[int, int]) -> dict[int, str]:
        """Builds this session showed unusable: a worker that died, checks that failed."""
        found: dict[int, str] = {}
        for run, position in zip(runs, positions, strict=True):
            failed = [p for p in run.problems if p.kind == "failed verification"]
            if failed:
                found[position] = (f"fails its correctness checks: {failed[0].algorithm} "
                                   f"[{failed[0].implementation}]: {failed[0].reason}")
        if error:
            named = _WORKER.search(error)
            if named is not None:
                found[positions["AB".index(named.group(1))]] = error
        return found

    def _compared(self, a: Run, b: Run) -> RunComparison | None:
        """The session judged as `ab` judges it; None when no row was measured by both."""
        if not (a.measurements and b.measurements):
            return None
        try:
            return compare_runs([a], [b], self.plan.band,
                                before_name=a.label, after_name=b.label)
        except ComparisonError:
            return None

    # --- progress -------------------------------------------------------------------------

    def _done(self, _measured: Measured, left: int) -> None:
        self.left = left

    def _say(self, i: int, j: int, what: str) -> None:
        builds = self.plan.series.builds
        done = len(self.session_seconds)
        eta = ""
        if self.session_seconds:
            mean = sum(self.session_seconds) / done
            eta = f", ETA ~{_duration(mean * max(1, self.left))}"
        self.progress(f"session {done + 1} ({done} done{eta}): builds {builds[i].name} .. "
                      f"{builds[j].name} (positions {i + 1}-{j + 1} of {len(builds)}): {what}")


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"
