"""The controller of a paired session: workers, rows, pairs of rounds, and two runs.

Per row: prepare (each worker checks the pair first, as `speed` does), warm both up, then
pairs of rounds A/B in random order within each pair, both workers pinned to the same
CPU, until the row is decided at a look (`sequential`) or its share of the time budget is
spent. The share is what is left of ``max_seconds`` over the rows still to come, so time a
quickly decided row did not need goes to the others. A row only one side can measure
(the other does not offer it, say a libcrypto without ML-KEM) is timed on its side alone
for a few rounds, so `compare` lists it as appearing or disappearing.

Both sides are stored as runs: each with its worker's own fingerprint, its label, the
rounds as samples in pair order, and settings["ab"] naming the session, the side and the
pairing, which is how `compare` recognises them.
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pqbench.ab import pairing, sequential
from pqbench.ab.client import Worker, WorkerError
from pqbench.ab.sides import Side
from pqbench.measure import suite
from pqbench.record.results import Measurement, Problem, Run, Verification
from pqbench.record.runs import new_run, new_run_id
from pqbench.timing.contract import LoopResult

Row = tuple[str, str, str, int | None]
#: Rounds a row that only one side offers is timed for.
ONE_SIDED_ROUNDS = 5


@dataclass(frozen=True)
class Settings:
    """What a session measures and how long it may take."""

    algorithms: tuple[str, ...]
    implementations: tuple[str, ...] | None = None
    operations: tuple[str, ...] = ()
    block_sizes: tuple[int, ...] = suite.BLOCK_SIZES
    max_seconds: float = 300.0
    round_seconds: float = 0.05
    warmup: float = 0.1
    threshold: float | None = None
    cpu: int | None = None
    label_a: str | None = None
    label_b: str | None = None
    looks: sequential.Looks = field(default_factory=sequential.Looks)


@dataclass
class _Side:
    """What one side produced, kept as it comes so an interruption loses nothing."""

    name: str
    side: Side
    worker: Worker | None = None
    pinned: list[int] | None = None
    measurements: list[Measurement] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    verifications: dict[tuple[str, str], Verification] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """The two stored runs of a session and what the controller has to say."""

    run_a: Run
    run_b: Run
    status: str
    error: str | None
    notes: tuple[str, ...]


Progress = Callable[[str], None]


@dataclass(frozen=True)
class Timed:
    """One round as a worker reported it: the loop's result and its thread's CPU time."""

    result: LoopResult
    cpu_ns: int | None


def choose_cpu(requested: int | None) -> int | None:
    """The CPU both workers share: the one asked for, else the highest this process may
    use (CPU 0 takes most interrupts); None where affinity is not available."""
    getter = getattr(os, "sched_getaffinity", None)
    if getter is None:
        return None
    allowed = sorted(getter(0))
    if requested is not None:
        return requested
    return allowed[-1] if allowed else None


class Session:
    """One `pqbench ab` session; `run()` measures and returns the two runs."""

    def __init__(self, side_a: Side, side_b: Side, settings: Settings, command: str,
                 progress: Progress | None = None) -> None:
        self.settings = settings
        self.command = command
        self.progress = progress or (lambda _title: None)
        self.sides = (_Side("a", side_a), _Side("b", side_b))
        self.session_id = secrets.token_hex(6)
        self.rng = random.Random(secrets.randbits(64))
        self.cpu = choose_cpu(settings.cpu)
        self.notes: list[str] = []
        self.started = datetime.now(UTC)

    def run(self) -> Outcome:
        status, error = "complete", None
        try:
            self._start()
            self._measure()
        except KeyboardInterrupt:
            status = "interrupted"
        except WorkerError as exc:
            status, error = "interrupted", str(exc)
        finally:
            for side in self.sides:
                if side.worker is not None:
                    side.worker.close()
        return Outcome(*self._runs(status), status, error, tuple(self.notes))

    # --- start-up -------------------------------------------------------------------------

    def _start(self) -> None:
        for side in self.sides:
            side.worker = Worker(side.name.upper(), side.side)
        for side in self.sides:
            assert side.worker is not None
            side.worker.greet()
            side.pinned = self._pin(side)
        if self.cpu is None or any(s.pinned != [self.cpu] for s in self.sides):
            self.notes.append(
                "the workers could not both be pinned to one CPU "
                f"({', '.join(f'{s.name.upper()}: {s.pinned}' for s in self.sides)}); pairs "
                "may then run on different CPUs, which biased A/A pairs by up to 8 % in the "
                "issue #9 measurements")

    def _pin(self, side: _Side) -> list[int] | None:
        worker = side.worker
        assert worker is not None
        if self.cpu is None:
            return None
        # From outside first: this reaches what a prefix such as chroot execs, even where
        # that process could not pin itself; then the worker pins itself (containers).
        with contextlib.suppress(AttributeError, OSError):
            os.sched_setaffinity(worker.pid, {self.cpu})
        reply = worker.request({"type": "pin", "cpu": self.cpu})
        cpus = reply.get("cpus")
        return [int(c) for c in cpus] if isinstance(cpus, list) else None

    # --- rows -----------------------------------------------------------------------------

    def _plan(self) -> list[tuple[Row, bool, bool]]:
        s = self.settings
        request = {"type": "plan", "algorithms": list(s.algorithms),
                   "implementations": list(s.implementations) if s.implementations else None,
                   "operations": list(s.operations), "block_sizes": list(s.block_sizes)}
        planned: list[list[Row]] = []
        for side in self.sides:
            assert side.worker is not None
            reply = side.worker.request(request)
            planned.append([_row(r) for r in reply.get("rows") or []])
            side.problems += [_problem_of(p) for p in reply.get("problems") or []]
        in_a, in_b = set(planned[0]), set(planned[1])
        order = list(dict.fromkeys([*planned[0], *planned[1]]))
        return [(row, row in in_a, row in in_b) for row in order]

    def _measure(self) -> None:
        rows = self._plan()
        started = time.monotonic()
        for index, (row, in_a, in_b) in enumerate(rows):
            self.progress(_title(row))
            left = len([r for r in rows[index:] if r[1] and r[2]]) or 1
            budget = max(0.0, self.settings.max_seconds - (time.monotonic() - started)) / left
            prepared = [self._prepare(side, row) if present else None
                        for side, present in zip(self.sides, (in_a, in_b), strict=True)]
            if prepared[0] is not None and prepared[1] is not None:
                self._pairs(row, prepared[0], prepared[1], budget)
            else:
                for side, ready in zip(self.sides, prepared, strict=True):
                    if ready is not None:
                        self._alone(side, row, ready)

    def _prepare(self, side: _Side, row: Row) -> dict[str, Any] | None:
        assert side.worker is not None
        reply = side.worker.request({"type": "prepare", "row": list(row)})
        if reply["type"] == "problem":
            side.problems.append(_problem_of({**reply, "algorithm": row[0],
                                              "implementation": row[1]}))
            return None
        pair = (row[0], row[1])
        side.verifications.setdefault(pair, Verification(*pair, tuple(reply.get("checks")
                                                                      or ())))
        return reply

    def _round(self, side: _Side, seconds: float) -> Timed:
        assert side.worker is not None
        reply = side.worker.request({"type": "run", "seconds": seconds},
                                    timeout=seconds + side.worker.timeout)
        cpu = reply.get("cpu_ns")
        return Timed(_loop_result(reply, side.name),
                     cpu if isinstance(cpu, int) and cpu > 0 else None)

    def _pairs(self, row: Row, ready_a: dict[str, Any], ready_b: dict[str, Any],
               budget: float) -> None:
        s, looks = self.settings, self.settings.looks
        started = time.monotonic()
        a, b = self.sides
        rounds: dict[str, list[Timed]] = {"a": [], "b": []}
        order: list[str] = []
        stopped, looked = "interrupted", 0
        try:
            for side in (a, b):
                self._round(side, s.warmup)
            while True:
                first, second = (a, b) if self.rng.random() < 0.5 else (b, a)
                got = {first.name: self._round(first, s.round_seconds),
                       second.name: self._round(second, s.round_seconds)}
                for name in ("a", "b"):
                    rounds[name].append(got[name])
                order.append(first.name.upper() + second.name.upper())
                count = len(order)
                spent = time.monotonic() - started >= budget
                if not (looks.due(count) or spent):
                    continue
                looked += 1
                rates = pairing.pair_rates(_measurement(row, ready_a, rounds["a"]),
                                           _measurement(row, ready_b, rounds["b"]))
                outcome = sequential.analyse([r for r, _ in rates], [r for _, r in rates],
                                             looks, s.threshold)
                if sequential.decided(outcome):
                    stopped = f"decided at look {looked}: {outcome.verdict}"
                elif count >= looks.last or looked >= len(looks.counts):
                    stopped = "last look"
                elif spent:
                    stopped = "time share spent"
                else:
                    continue
                break
        finally:
            if order:
                extra = {"ab_seconds": round(time.monotonic() - started, 3),
                         "ab_order": ",".join(order), "ab_stopped": stopped,
                         "ab_looks": looked}
                for side, ready in ((a, ready_a), (b, ready_b)):
                    side.measurements.append(_measurement(
                        row, ready, rounds[side.name], extra,
                        self.cpu if side.pinned == [self.cpu] else None))

    def _alone(self, side: _Side, row: Row, ready: dict[str, Any]) -> None:
        started = time.monotonic()
        self._round(side, self.settings.warmup)
        rounds = [self._round(side, self.settings.round_seconds)
                  for _ in range(ONE_SIDED_ROUNDS)]
        extra = {"ab_seconds": round(time.monotonic() - started, 3), "ab_stopped":
                 "measured on this side only: the other side does not offer it"}
        side.measurements.append(_measurement(
            row, ready, rounds, extra, self.cpu if side.pinned == [self.cpu] else None))

    # --- the two runs ---------------------------------------------------------------------

    def _runs(self, status: str) -> tuple[Run, Run]:
        finished = datetime.now(UTC)
        ids = [new_run_id(self.started) for _ in self.sides]
        while ids[0] == ids[1]:
            ids[1] = new_run_id(self.started)
        # A default label names its session by its start, so that `compare --by label`
        # never pools the sides of two sessions.
        at = f"{self.started.astimezone(UTC):%Y-%m-%d %H:%M:%S}"
        labels = (self.settings.label_a or f"A: {self.sides[0].side.spec}, {at}",
                  self.settings.label_b or f"B: {self.sides[1].side.spec}, {at}")
        runs = [new_run("speed", self.started, settings=self._settings(side, other, other_id),
                        environment=self._environment(side), measurements=side.measurements,
                        problems=side.problems, verifications=side.verifications.values(),
                        status=status, label=label, command=self.command, run_id=run_id,
                        finished=finished)
                for side, other, run_id, other_id, label in zip(
                    self.sides, self.sides[::-1], ids, ids[::-1], labels, strict=True)]
        return runs[0], runs[1]

    def _settings(self, side: _Side, other: _Side, other_run: str) -> dict[str, Any]:
        s = self.settings
        return {
            "seconds": s.round_seconds, "warmup": s.warmup, "operations": list(s.operations),
            "block_sizes": list(s.block_sizes),
            "ab": {"session": self.session_id, "side": side.name, "spec": side.side.spec,
                   "other_run": other_run, "other_spec": other.side.spec,
                   "pairing": "round i of this run and round i of the other run form pair "
                              "i; the order within each pair is random (ab_order)",
                   "looks": list(s.looks.counts), "alpha": s.looks.alpha,
                   "round_seconds": s.round_seconds, "max_seconds": s.max_seconds,
                   "threshold": "auto" if s.threshold is None else s.threshold,
                   "cpu": self.cpu, "pinned": side.pinned == [self.cpu] if self.cpu is not None
                   else False, "env": side.side.shown_env(),
                   "worker": side.worker.command if side.worker else None},
        }

    def _environment(self, side: _Side) -> dict[str, Any]:
        found = dict(side.worker.environment) if side.worker else {}
        found["mask"] = side.side.mask.fingerprint() if side.side.mask else None
        if side.side.env:
            found["ab_env"] = side.side.shown_env()
        return found


def _row(value: Sequence[Any]) -> Row:
    return (str(value[0]), str(value[1]), str(value[2]),
            int(value[3]) if value[3] is not None else None)


def _title(row: Row) -> str:
    block = f" {row[3]}B" if row[3] else ""
    return f"{row[0]} {row[2]}{block} [{row[1]}]"


def _problem_of(found: dict[str, Any]) -> Problem:
    return Problem(str(found.get("algorithm")), str(found.get("implementation")),
                   str(found.get("kind")), str(found.get("reason")),
                   found.get("operation") if isinstance(found.get("operation"), str) else None)


def _loop_result(reply: dict[str, Any], side: str) -> LoopResult:
    ops, elapsed, cycles = reply.get("ops"), reply.get("elapsed_ns"), reply.get("cycles")
    # Every loop completes at least one operation (the timing contract), so 0 is a fault.
    if not (isinstance(ops, int) and isinstance(elapsed, int) and elapsed > 0 and ops >= 1
            and (cycles is None or isinstance(cycles, int))):
        raise WorkerError(f"worker {side.upper()} sent an impossible round: {reply!r}")
    return LoopResult(ops, elapsed, cycles)


def _measurement(row: Row, ready: dict[str, Any], rounds: Sequence[Timed],
                 extra: dict[str, Any] | None = None, cpu: int | None = None) -> Measurement:
    """A row as stored: wall-clock rounds (the timing contract), the CPU time of each in
    the attribute ``ab_cpu_ns`` (what the pairs are compared in), and the session's facts."""
    attributes = {**(ready.get("attributes") or {}), **(extra or {}),
                  "ab_cpu_ns": [t.cpu_ns for t in rounds]}
    if cpu is not None:
        attributes["cpu"] = cpu
    return Measurement(algorithm=row[0], implementation=row[1], operation=row[2],
                       rounds=tuple(t.result for t in rounds),
                       sizes=dict(ready.get("sizes") or {}), block_size=row[3],
                       attributes=attributes, counter=ready.get("counter"))
