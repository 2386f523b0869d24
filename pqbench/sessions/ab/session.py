"""The controller of a paired session: workers, rows, pairs of rounds, and two runs.

A session starts J worker pairs (`Settings.worker_pairs`, at least three): A_j and B_j,
j = 0..J-1. Two processes running identical code differ by a few percent from memory
layout alone (Mytkowicz et al., ASPLOS 2009; Curtsinger & Berger, ASPLOS 2013), so one
pair of processes is one draw of that layout, however many rounds it runs. Each worker
pair therefore gets an environment of its own size (`PADDING_VARIABLE`, a random length
per pair, the same for both sides of a pair so that A_j and B_j differ only by their
configuration), which moves the initial stack within its page (ASLR moves it by whole
pages only); each process also gets its own address-space randomisation. Round pair i of
a row runs on worker pair i mod J, and the analysis takes the worker pair as the unit
above the round pairs (`signedrank.compare_worker_pairs`).

Per row: prepare (every worker checks the pair first, as `speed` does), warm every worker
up, then pairs of rounds A_j/B_j in random order within each pair, all workers pinned to
the same CPU, until the row is decided at a look (`sequential`) or its share of the time
budget is spent. The share is what is left of ``max_seconds`` over the rows still to
come, so time a quickly decided row did not need goes to the others. A row only one side
can measure (the other does not offer it, say a libcrypto without ML-KEM) is timed on its
side alone for a few rounds (by its first worker), so `compare` lists it as appearing or
disappearing.

Both sides are stored as runs: each with its first worker's fingerprint, its label, the
rounds as samples in pair order, and settings["ab"] naming the session, the side, the
pairing and the worker pairs (their paddings and this side's process ids), which is how
`compare` recognises them. A round's time is the CPU time its worker's thread got
(``time_base`` "cpu"; ``wall_ns`` keeps each round's wall time, ``ab_worker`` its worker
pair).
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from pqbench.analysis import pairing
from pqbench.data.record.results import Measurement, Problem, Run, Verification
from pqbench.data.record.rounds import LoopResult
from pqbench.data.record.runs import new_run, new_run_id
from pqbench.measure.environment import load
from pqbench.measure.speed import suite
from pqbench.sessions.ab import sequential
from pqbench.sessions.ab.client import START_TIMEOUT, Worker, WorkerError
from pqbench.sessions.sides import Side

Row = tuple[str, str, str, int | None]
#: Rounds a row that only one side offers is timed for.
ONE_SIDED_ROUNDS = 5
#: Worker pairs a session starts by default, and the fewest it may start. Six: every look
#: (a multiple of 12 pairs) splits evenly over them, and the t quantile with 5 degrees of
#: freedom at a look's level (alpha 0.01 / 6: 6.1) is under twice the normal one (3.1),
#: where with 4 worker pairs it is 10.9.
WORKER_PAIRS = 6
MIN_WORKER_PAIRS = 3
#: The environment variable whose length differs between worker pairs.
PADDING_VARIABLE = "PQBENCH_AB_PADDING"
#: Paddings are drawn from 0, 16, ... below this many bytes: the kernel aligns the initial
#: stack pointer to 16 bytes, and a page (4096) holds every offset within it.
PADDING_RANGE, PADDING_STEP = 4096, 16


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
    worker_pairs: int = WORKER_PAIRS


@dataclass
class _Side:
    """What one side produced, kept as it comes so an interruption loses nothing."""

    name: str
    side: Side
    workers: list[Worker] = field(default_factory=list)
    pinned: list[list[int] | None] = field(default_factory=list)
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


#: Told what a session does: the row's title, and how far it is ("row 2 of 5, 24 pairs").
Progress = Callable[[str, str], None]


@dataclass(frozen=True)
class Timed:
    """One round as a worker reported it: the loop's result (wall time), its thread's CPU
    time, and the worker pair that took it."""

    result: LoopResult
    cpu_ns: int | None
    worker: int = 0


#: Where a paired session claims the CPU its workers share (`claim_cpu`): a file per CPU
#: in the temporary folder, for every user's sessions alike.
CLAIM_NAME = "pqbench-cpu-{cpu}.lock"


def claim_cpu(cpu: int, folder: str | None = None) -> int | None:
    """An advisory lock (flock) on CPU `cpu`'s claim file, held by the descriptor returned
    until it is closed or the process ends, however it ends; None where another process
    holds it or the file cannot be used (then nothing is claimed: the session still runs).
    The file is opened read-only, never followed through a symbolic link and never
    written, so that a file another user made there can neither be harmed nor harm."""
    import fcntl
    import stat
    import tempfile

    path = os.path.join(folder or tempfile.gettempdir(), CLAIM_NAME.format(cpu=cpu))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                     | os.O_CLOEXEC, 0o644)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def choose_cpu(requested: int | None, *, folder: str | None = None,
               allowed: Sequence[int] | None = None) -> tuple[int | None, int | None]:
    """The CPU both workers share, and the claim on it (`claim_cpu`, a descriptor to close
    when the session ends, or None): the one asked for, else the highest this process may
    use that no other paired session has claimed (CPU 0 takes most interrupts; two
    sessions at once on one CPU would time-slice it while another idles), else, where
    every one is claimed, the highest. None where affinity is not available."""
    if allowed is None:
        getter = getattr(os, "sched_getaffinity", None)
        if getter is None:
            return None, None
        allowed = list(getter(0))
    if requested is not None:
        return requested, claim_cpu(requested, folder)
    for cpu in sorted(allowed, reverse=True):
        claim = claim_cpu(cpu, folder)
        if claim is not None:
            return cpu, claim
    return (max(allowed), None) if allowed else (None, None)


class Session:
    """One `pqbench ab` session; `run()` measures and returns the two runs."""

    def __init__(self, side_a: Side, side_b: Side, settings: Settings, command: str,
                 progress: Progress | None = None) -> None:
        self.settings = settings
        self.command = command
        self.progress = progress or (lambda _title, _detail: None)
        self.sides = (_Side("a", side_a), _Side("b", side_b))
        self.session_id = secrets.token_hex(6)
        self.rng = random.Random(secrets.randbits(64))
        #: Chosen, and claimed, when the session runs (`run`).
        self.cpu: int | None = settings.cpu
        self.paddings = choose_paddings(self.rng, settings.worker_pairs)
        self.notes: list[str] = []
        self.started = datetime.now(UTC)
        # The machine over the whole session, the workers' CPU time counted as its own.
        self.watch = load.Watch()
        self.machine_state: dict[str, Any] | None = None

    def run(self) -> Outcome:
        status, error = "complete", None
        self.cpu, claim = choose_cpu(self.settings.cpu)
        try:
            self._start()
            self._measure()
        except KeyboardInterrupt:
            status = "interrupted"
        except WorkerError as exc:
            status, error = "interrupted", str(exc)
        finally:
            # Together: a worker that ignores "quit" is waited for a few seconds before it
            # is stopped, and 2J of them one after another would add up.
            workers = [worker for side in self.sides for worker in side.workers]
            if workers:
                with ThreadPoolExecutor(max_workers=len(workers)) as pool:
                    list(pool.map(Worker.close, workers))
            if claim is not None:  # the CPU is free for another session once they are gone
                os.close(claim)
        return Outcome(*self._runs(status), status, error, tuple(self.notes))

    # --- start-up -------------------------------------------------------------------------

    def _start(self) -> None:
        # All started before any is greeted, so they start up together.
        for pair, padding in enumerate(self.paddings):
            for side in self.sides:
                padded = replace(side.side, env={**side.side.env,
                                                 PADDING_VARIABLE: "x" * padding})
                side.workers.append(Worker(f"{side.name.upper()}{pair + 1}", padded))
        for side in self.sides:
            for worker in side.workers:
                worker.greet()
                side.pinned.append(self._pin(worker))
        if self.cpu is None or not all(self._pinned(s) for s in self.sides):
            found = ", ".join(f"{worker.name}: {cpus}" for side in self.sides
                              for worker, cpus in zip(side.workers, side.pinned, strict=True))
            self.notes.append(
                f"the workers could not all be pinned to one CPU ({found}); pairs may then "
                "run on different CPUs, which biased A/A pairs by up to 8 % when this "
                "was measured (docs/measurements.md)")

    def _pinned(self, side: _Side) -> bool:
        return self.cpu is not None and all(p == [self.cpu] for p in side.pinned)

    def _pin(self, worker: Worker) -> list[int] | None:
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
            # Every worker plans (a worker prepares only rows it planned); the workers of a
            # side run one configuration, so the first one's answer stands for them all.
            replies = [worker.request(request) for worker in side.workers]
            planned.append([_row(r) for r in replies[0].get("rows") or []])
            _add_libraries(side.workers[0].environment, replies[0])
            side.problems += [_problem_of(p) for p in replies[0].get("problems") or []]
        in_a, in_b = set(planned[0]), set(planned[1])
        order = list(dict.fromkeys([*planned[0], *planned[1]]))
        return [(row, row in in_a, row in in_b) for row in order]

    def _measure(self) -> None:
        rows = self._plan()
        started = time.monotonic()
        for index, (row, in_a, in_b) in enumerate(rows):
            where = f"row {index + 1} of {len(rows)}"
            self.progress(_title(row), where)
            left = len([r for r in rows[index:] if r[1] and r[2]]) or 1
            budget = max(0.0, self.settings.max_seconds - (time.monotonic() - started)) / left
            prepared = [self._prepare(side, row) if present else None
                        for side, present in zip(self.sides, (in_a, in_b), strict=True)]
            if prepared[0] is not None and prepared[1] is not None:
                self._pairs(row, prepared[0], prepared[1], budget, where)
            else:
                for side, ready in zip(self.sides, prepared, strict=True):
                    if ready is not None:
                        self._alone(side, row, ready)

    def _prepare(self, side: _Side, row: Row) -> dict[str, Any] | None:
        """Every worker of the side prepares the row (and checks the pair first); the
        first worker's answer, or the first problem any of them met."""
        replies = []
        for worker in side.workers:
            reply = worker.request({"type": "prepare", "row": list(row)})
            if reply["type"] == "problem":
                side.problems.append(_problem_of({**reply, "algorithm": row[0],
                                                  "implementation": row[1]}))
                return None
            replies.append(reply)
        reply = replies[0]
        pair = (row[0], row[1])
        side.verifications.setdefault(pair, Verification(*pair, tuple(reply.get("checks")
                                                                      or ())))
        return reply

    def _round(self, side: _Side, seconds: float, pair: int = 0) -> Timed:
        worker = side.workers[pair]
        # A round that hangs is stopped after the session's budget (at least the start-up
        # limit), not after the time a check may take.
        waited = min(worker.timeout, max(self.settings.max_seconds, START_TIMEOUT))
        reply = worker.request({"type": "run", "seconds": seconds}, timeout=seconds + waited)
        cpu = reply.get("cpu_ns")
        return Timed(_loop_result(reply, worker.name),
                     cpu if isinstance(cpu, int) and cpu > 0 else None, pair)

    def _pairs(self, row: Row, ready_a: dict[str, Any], ready_b: dict[str, Any],
               budget: float, where: str = "") -> None:
        s, looks = self.settings, self.settings.looks
        started = time.monotonic()
        a, b = self.sides
        rounds: dict[str, list[Timed]] = {"a": [], "b": []}
        order: list[str] = []
        stopped, looked = "interrupted", 0
        try:
            for pair in range(len(self.paddings)):
                for side in (a, b):
                    self._round(side, s.warmup, pair)
            while True:
                pair = len(order) % len(self.paddings)
                first, second = (a, b) if self.rng.random() < 0.5 else (b, a)
                got = {first.name: self._round(first, s.round_seconds, pair),
                       second.name: self._round(second, s.round_seconds, pair)}
                for name in ("a", "b"):
                    rounds[name].append(got[name])
                order.append(first.name.upper() + second.name.upper())
                count = len(order)
                self.progress(_title(row), f"{where}, {count} pair{'s' if count > 1 else ''}")
                spent = time.monotonic() - started >= budget
                if not (looks.due(count) or spent):
                    continue
                looked += 1
                rates = pairing.worker_pair_rates(_measurement(row, ready_a, rounds["a"]),
                                                  _measurement(row, ready_b, rounds["b"]))
                outcome = sequential.analyse([r for r, _, _ in rates],
                                             [r for _, r, _ in rates], looks, s.threshold,
                                             [w for _, _, w in rates])
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
                        self.cpu if self._pinned(side) else None))

    def _alone(self, side: _Side, row: Row, ready: dict[str, Any]) -> None:
        started = time.monotonic()
        self._round(side, self.settings.warmup)
        rounds = [self._round(side, self.settings.round_seconds)
                  for _ in range(ONE_SIDED_ROUNDS)]
        extra = {"ab_seconds": round(time.monotonic() - started, 3), "ab_stopped":
                 "measured on this side only: the other side does not offer it"}
        side.measurements.append(_measurement(
            row, ready, rounds, extra, self.cpu if self._pinned(side) else None))

    # --- the two runs ---------------------------------------------------------------------

    def _runs(self, status: str) -> tuple[Run, Run]:
        finished = datetime.now(UTC)
        self.machine_state = self.watch.state()
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
                              "i, taken by worker pair i mod J (ab_worker); the order within "
                              "each pair is random (ab_order)",
                   "worker_pairs": len(self.paddings),
                   "padding_variable": PADDING_VARIABLE, "paddings": list(self.paddings),
                   "pids": [w.pid for w in side.workers],
                   "looks": list(s.looks.counts), "alpha": s.looks.alpha,
                   "round_seconds": s.round_seconds, "max_seconds": s.max_seconds,
                   "threshold": "auto" if s.threshold is None else s.threshold,
                   "cpu": self.cpu, "pinned": self._pinned(side), "env": side.side.shown_env(),
                   "worker": side.workers[0].command if side.workers else None},
        }

    def _environment(self, side: _Side) -> dict[str, Any]:
        found = dict(side.workers[0].environment) if side.workers else {}
        found["mask"] = side.side.mask.fingerprint() if side.side.mask else None
        if side.side.env:
            found["ab_env"] = side.side.shown_env()
        found["run"] = self.machine_state
        return found


def _add_libraries(environment: dict[str, Any], reply: dict[str, Any]) -> None:
    """A foreign worker starts only once the plan names it: the versions it reported (its
    libraries, its runtime) join the side's fingerprint then."""
    for key, part in (("libraries", "libraries"), ("library_details", "library_details")):
        found = reply.get(part)
        if isinstance(found, dict) and found:
            current = environment.get(key)
            environment[key] = {**(current if isinstance(current, dict) else {}), **found}


def choose_paddings(rng: random.Random, count: int) -> tuple[int, ...]:
    """``count`` different padding lengths in bytes, one per worker pair: a random sample,
    so the layouts a session's worker pairs see are a random draw of the layouts this
    machine gives, which is what their spread then estimates."""
    most = PADDING_RANGE // PADDING_STEP
    if not MIN_WORKER_PAIRS <= count <= most:
        raise ValueError(f"a session starts {MIN_WORKER_PAIRS} to {most} worker pairs, not "
                         f"{count}")
    return tuple(rng.sample(range(0, PADDING_RANGE, PADDING_STEP), count))


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


def _loop_result(reply: dict[str, Any], worker: str) -> LoopResult:
    ops, elapsed, cycles = reply.get("ops"), reply.get("elapsed_ns"), reply.get("cycles")
    # Every loop completes at least one operation (the timing contract), so 0 is a fault.
    if not (isinstance(ops, int) and isinstance(elapsed, int) and elapsed > 0 and ops >= 1
            and (cycles is None or isinstance(cycles, int))):
        raise WorkerError(f"worker {worker} sent an impossible round: {reply!r}")
    return LoopResult(ops, elapsed, cycles)


def _measurement(row: Row, ready: dict[str, Any], rounds: Sequence[Timed],
                 extra: dict[str, Any] | None = None, cpu: int | None = None) -> Measurement:
    """A row as stored: rounds timed in the CPU time each worker's thread got (what the
    pairs are compared in; ``time_base`` "cpu"), each round's wall time in ``wall_ns`` and
    its CPU time also in ``ab_cpu_ns``, the worker pair of each in ``ab_worker``, and the
    session's facts. Should a worker not report a round's CPU time, the row keeps wall time
    throughout (``time_base`` "wall"): a row is never timed on two bases."""
    on_cpu = all(t.cpu_ns is not None for t in rounds)
    attributes = {**(ready.get("attributes") or {}), **(extra or {}),
                  "ab_cpu_ns": [t.cpu_ns for t in rounds],
                  "wall_ns": [t.result.elapsed_ns for t in rounds],
                  "time_base": "cpu" if on_cpu else "wall",
                  "ab_worker": [t.worker for t in rounds]}
    if cpu is not None:
        attributes["cpu"] = cpu
    timed = tuple(LoopResult(t.result.ops, t.cpu_ns, t.result.cycles)
                  if on_cpu and t.cpu_ns is not None else t.result for t in rounds)
    return Measurement(algorithm=row[0], implementation=row[1], operation=row[2],
                       rounds=timed,
                       sizes=dict(ready.get("sizes") or {}), block_size=row[3],
                       attributes=attributes, counter=ready.get("counter"))
