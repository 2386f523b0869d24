"""Run a speed suite: check each (algorithm, implementation), then time every operation.

The order of work follows `openssl speed`: correctness first, then a warm-up, then several
timed rounds per operation so every figure has a spread. The rounds are taken in cycles
(one round of every row per cycle, in a fresh random order), so two rows of one run are
paired by cycle and their ratio can be taken pair by pair (`analysis.ratios`): this
machine's drift, shared by the rounds of a cycle, cancels in it. Nothing here prints;
progress is reported through a callback and the result is a frozen Run.
"""

from __future__ import annotations

import random
import secrets
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pqbench.catalog.algorithms.base import Algorithm, security_attributes
from pqbench.data.record.results import Measurement, Problem, Run, Verification
from pqbench.data.record.rounds import TimeBase, Timed, helper_threads, other_clock
from pqbench.data.record.runs import new_run
from pqbench.libraries.implementations.base import Implementation, TimedOperation
from pqbench.measure.checks.pair import check_pair as pair_check
from pqbench.measure.environment import load
from pqbench.platform.errors import (
    ImplementationUnavailable,
    NotOfferedError,
    VerificationError,
    WorkerFailed,
)
from pqbench.timing import multi

#: `openssl speed -evp` block sizes.
BLOCK_SIZES = (16, 64, 256, 1024, 8192, 16384)

#: Kinds whose operations process a block of bytes and are swept over block sizes.
BULK_KINDS = ("cipher", "hash")

#: Warm-up of a row whose speed settles only over its first rounds (a JIT compiles the hot
#: code while it runs: a JDK's ML-KEM encapsulation more than quadruples its rate over its
#: first seconds): untimed rounds of the run's round length until two in a row agree within
#: WARMUP_AGREE and the operation's least warm-up time has passed, at most
#: WARMUP_MAX_ROUNDS of them. The row states how many it took and whether they agreed
#: (`warmup_rounds`, `warmup_settled`).
WARMUP_AGREE = 0.05
WARMUP_MAX_ROUNDS = 20
#: The longest warm-up round, in seconds, where a busy machine lengthens them.
WARMUP_LONGEST_ROUND = 60.0


@dataclass(frozen=True)
class SpeedSettings:
    """How long and how often each operation is timed."""

    seconds: float = 1.0  # timed seconds per operation, split over the rounds
    #: Rounds per operation, which are the run's cycles: every row has one per cycle.
    rounds: int = 10
    warmup: float = 0.05  # untimed seconds before the rounds
    operations: tuple[str, ...] = ()  # empty: each algorithm's default operations
    #: Bytes per operation for ciphers and hashes (the `openssl speed` sweep by default).
    block_sizes: tuple[int, ...] = BLOCK_SIZES
    label: str | None = None
    #: Worker processes timing each operation at once (`openssl speed -multi`).
    processes: int = 1
    #: CPUs to pin the workers to, in turn; empty: the OS decides.
    cpus: tuple[int, ...] = ()
    #: The clock rates are computed in: the measuring thread's CPU time (what `openssl
    #: speed` counts unless -elapsed) or the wall clock (`--elapsed`).
    time_base: TimeBase = "cpu"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def round_seconds(self) -> float:
        return self.seconds / self.rounds

    def as_dict(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "rounds": self.rounds, "warmup": self.warmup,
                "operations": list(self.operations), "block_sizes": list(self.block_sizes),
                "processes": self.processes, "cpus": list(self.cpus),
                "time_base": time_base(self), "interleaved": True, **self.extra}


@dataclass(frozen=True)
class Task:
    """One unit of timed work, for progress reporting."""

    algorithm: Algorithm
    implementation: Implementation
    operation: str
    block_size: int | None = None

    @property
    def title(self) -> str:
        block = f" {self.block_size}B" if self.block_size else ""
        return f"{self.algorithm.name} {self.operation}{block} [{self.implementation.name}]"


Progress = Callable[[Task], None]


def operations_for(alg: Algorithm, wanted: Sequence[str]) -> tuple[str, ...]:
    if not wanted:
        return alg.operations
    return tuple(op for op in wanted if op in alg.all_operations)


def plan(algorithms: Iterable[Algorithm], implementations: Iterable[Implementation],
         settings: SpeedSettings) -> list[Task]:
    impls = tuple(implementations)
    return [Task(alg, impl, op, size) for alg in algorithms for impl in impls
            if impl.in_scope(alg)
            for op in operations_for(alg, settings.operations)
            for size in (settings.block_sizes if alg.kind in BULK_KINDS else (None,))]


class SuiteRecorder:
    """Collects what a suite produced so an interruption keeps everything completed."""

    def __init__(self) -> None:
        self.measurements: list[Measurement] = []
        self.problems: list[Problem] = []
        self.verifications: list[Verification] = []


@dataclass
class _Row:
    """One task prepared and warmed up, and the rounds it has had so far."""

    task: Task
    prepared: TimedOperation
    rounds: list[Timed] = field(default_factory=list)
    #: Facts of its warm-up, stored with the row.
    attributes: dict[str, Any] = field(default_factory=dict)
    #: Why it stopped before its last cycle (its worker failed), if it did.
    failed: str | None = None


def time_base(settings: SpeedSettings) -> TimeBase:
    """The clock a run's rows are measured in: wall time for --multi (the machine's
    aggregate throughput is a wall-clock quantity), else the settings' choice."""
    return "wall" if settings.processes > 1 else settings.time_base


def timed_round(prepared: TimedOperation, seconds: float) -> Timed:
    """One round and the CPU time the measuring thread got during it: the loop's own
    reading (the window of its wall time), else one read around the call. Every loop runs
    in this thread (the native ones release the GIL, not the thread), so the thread's CPU
    clock sees all of its work and none of another process's."""
    cpu_started = time.thread_time_ns()
    result = prepared.run(seconds)
    return Timed.of(result, time.thread_time_ns() - cpu_started)


def row_measurement(task: Task, prepared: TimedOperation, rounds: Sequence[Timed],
                    base: TimeBase, attributes: Mapping[str, Any] | None = None
                    ) -> Measurement:
    """The stored row: each round's time in the run's time base (`Timed.in_base`), the
    other clock's per round beside it (`wall_ns` or `cpu_ns`), and the base named; where
    the loop read the process's CPU time, that too, and whether other threads worked."""
    helpers = helper_threads(rounds)
    return Measurement(
        algorithm=task.algorithm.name,
        implementation=task.implementation.name,
        operation=task.operation,
        rounds=tuple(t.in_base(base) for t in rounds),
        sizes=dict(prepared.sizes),
        block_size=task.block_size,
        attributes={**security_attributes(task.algorithm), **prepared.attributes,
                    **(attributes or {}), "time_base": base,
                    **other_clock(rounds, base),
                    **({} if helpers is None else {"helper_threads": helpers})},
        counter=prepared.counter,
    )


def _prepare(task: Task, settings: SpeedSettings, verified: dict[tuple[str, str], bool],
             recorder: SuiteRecorder) -> _Row | None:
    """Check the pair (once), ask for the operation, prepare it outside the clock and warm
    it up; None (with the problem recorded) where it cannot be timed."""
    pair = (task.algorithm.name, task.implementation.name)
    if pair not in verified:
        verified[pair] = check_pair(task.algorithm, task.implementation, recorder)
    if not verified[pair]:
        return None
    if settings.processes > 1 and not task.implementation.multi_process:
        recorder.problems.append(Problem(*pair, "not offered", (
            f"{task.implementation.name} is timed by one worker thread; --multi runs "
            "Python and native loops in several processes"), task.operation))
        return None
    try:
        failed = task.implementation.failure()
        if failed is not None:  # its worker died on an earlier row: an error, not an offer
            raise WorkerFailed(failed)
        reason = task.implementation.offers(task.algorithm, task.operation)
        if reason:
            recorder.problems.append(Problem(*pair, "not offered", reason, task.operation))
            return None
        prepared = task.implementation.prepare(task.algorithm, task.operation,
                                               task.block_size)
        row = _Row(task, prepared)
        if settings.processes == 1:
            row.attributes = warm_up(prepared, settings)
    except (NotOfferedError, VerificationError) as exc:
        kind = "not offered" if isinstance(exc, NotOfferedError) else "failed verification"
        recorder.problems.append(Problem(*pair, kind, str(exc), task.operation))
        return None
    except (WorkerFailed, ImplementationUnavailable) as exc:
        kind = "error" if isinstance(exc, WorkerFailed) else "unavailable"
        recorder.problems.append(Problem(*pair, kind, str(exc), task.operation))
        return None
    return row


def warm_up(prepared: TimedOperation, settings: SpeedSettings) -> dict[str, Any]:
    """Untimed rounds before the timed ones: one of `settings.warmup` seconds, or, for an
    operation whose speed settles over its first rounds (`TimedOperation.warmup`), rounds
    until two in a row agree (WARMUP_AGREE) and the operation's least warm-up has passed,
    at most WARMUP_MAX_ROUNDS, stated in the row.

    The least warm-up counts the measuring thread's CPU time, not wall time: a JIT
    compiles the code that has run often enough, and on a busy machine ten seconds of
    wall time may hold two of running it. The row states the CPU time the warm-up took
    (`warmup_cpu_ns`)."""
    if prepared.warmup == "once":
        prepared.run(settings.warmup)
        return {}
    least_ns = prepared.warmup_min_seconds * 1e9
    shortest = max(settings.warmup, settings.round_seconds,
                   2 * prepared.warmup_min_seconds / WARMUP_MAX_ROUNDS)
    seconds = shortest
    base = time_base(settings)
    rates: list[float] = []
    spent_cpu_ns = spent_wall_ns = 0
    settled = False
    while len(rates) < WARMUP_MAX_ROUNDS and not settled:
        timed = timed_round(prepared, seconds)
        spent_cpu_ns += timed.cpu_ns
        spent_wall_ns += max(timed.result.elapsed_ns, 1)
        found = timed.in_base(base)
        rates.append(found.ops / max(found.elapsed_ns, 1))
        settled = (len(rates) >= 2 and abs(rates[-1] / rates[-2] - 1) <= WARMUP_AGREE
                   and spent_cpu_ns >= least_ns)
        if spent_cpu_ns < least_ns:
            # The rounds are asked in wall time: where the thread got only a share of it,
            # the rounds left are lengthened so that they hold the CPU time still owed.
            share = spent_cpu_ns / spent_wall_ns
            left = WARMUP_MAX_ROUNDS - len(rates)
            owed = (least_ns - spent_cpu_ns) / 1e9 / max(share, 1e-3) / max(left, 1)
            seconds = min(WARMUP_LONGEST_ROUND, max(shortest, owed))
    return {"warmup_rounds": len(rates), "warmup_settled": settled,
            "warmup_cpu_ns": spent_cpu_ns}


def check_pair(alg: Algorithm, impl: Implementation, recorder: SuiteRecorder) -> bool:
    """Verify before timing (`checks.pair`); a pair that fails is recorded, never timed."""
    checked = pair_check(alg, impl)
    if checked.problem is not None:
        recorder.problems.append(checked.problem)
        return False
    recorder.verifications.append(checked.verification)
    return True


def execute(tasks: Sequence[Task], settings: SpeedSettings, recorder: SuiteRecorder,
            progress: Progress | None = None, rng: random.Random | None = None) -> None:
    """Check, prepare and warm up every task, then time them in cycles: each cycle runs one
    round of every row, in a fresh random order, so any two rows of the run are paired by
    cycle (round i of every row belongs to cycle i) and drift hits both alike.

    Raises KeyboardInterrupt through, keeping every round that finished."""
    verified: dict[tuple[str, str], bool] = {}
    rows: list[_Row] = []
    base = time_base(settings)
    pool: multi.Pool | None = None
    # Pinned before the warm-ups, so they warm the CPU the rounds run on.
    pinned = multi.pin(settings.cpus[0]) if settings.cpus and settings.processes == 1 \
        else None
    try:
        for task in tasks:
            if progress:
                progress(task)
            prepared = _prepare(task, settings, verified, recorder)
            if prepared is not None:
                rows.append(prepared)
        if not rows:
            return
        if settings.processes > 1:
            pool = multi.Pool([_preparer(row.task) for row in rows],
                              processes=settings.processes, warmup=settings.warmup,
                              cpus=settings.cpus)
        shuffle = (rng or random.Random(secrets.randbits(64))).shuffle
        for _ in range(settings.rounds):
            order = list(range(len(rows)))
            shuffle(order)
            for index in order:
                row = rows[index]
                if progress:
                    progress(row.task)
                if row.failed is not None:
                    continue
                try:
                    row.rounds.append(pool.round(index, settings.round_seconds) if pool
                                      else timed_round(row.prepared, settings.round_seconds))
                except WorkerFailed as exc:
                    # Its worker is gone: the row keeps its finished rounds, says why it
                    # has no more, and the other rows go on.
                    row.failed = str(exc)
                    recorder.problems.append(Problem(row.task.algorithm.name,
                                                   row.task.implementation.name, "error",
                                                   str(exc), row.task.operation))
    finally:
        multi.unpin(pinned)
        per_worker = pool.per_worker() if pool else None
        if pool:
            pool.close()
        for index, row in enumerate(rows):
            if row.rounds:
                recorder.measurements.append(row_measurement(
                    row.task, row.prepared, row.rounds, base,
                    _multi_attributes(settings, per_worker[index]) if per_worker
                    else {**row.attributes,
                          **({"cpu": settings.cpus[0]} if settings.cpus and pinned is not None
                             else {})}))


def _preparer(task: Task) -> Callable[[], TimedOperation]:
    return lambda: task.implementation.prepare(task.algorithm, task.operation,
                                               task.block_size)


def _multi_attributes(settings: SpeedSettings, per_worker: Sequence[Sequence[float]]
                      ) -> dict[str, Any]:
    """--multi: the workers, each one's median rate, and the CPUs they were pinned to."""
    return {"processes": settings.processes,
            "per_process_ops_per_sec": [statistics.median(rates) if rates else 0.0
                                        for rates in per_worker],
            "cpus": list(settings.cpus)}


def run_suite(
    tasks: Sequence[Task],
    settings: SpeedSettings,
    environment: dict[str, Any],
    progress: Progress | None = None,
    command: str | None = None,
) -> Run:
    """Measure the planned tasks (`plan`, made once by the caller, which also needs them
    to say what it will measure); on Ctrl-C return what finished, marked interrupted. The
    machine's state over the run (`environment.load`) joins the fingerprint as `run`."""
    started = datetime.now(UTC)
    watch = load.Watch()
    recorder = SuiteRecorder()
    status = "complete"
    try:
        execute(tasks, settings, recorder, progress)
    except KeyboardInterrupt:
        status = "interrupted"
    return new_run("speed", started, settings=settings.as_dict(),
                   environment={**environment, "run": watch.state()},
                   measurements=recorder.measurements, problems=recorder.problems,
                   verifications=recorder.verifications, status=status, label=settings.label,
                   command=command)
