"""Run a speed suite: check each (algorithm, implementation), then time each operation.

The order of work follows `openssl speed`: correctness first, then a warm-up, then several
timed rounds per operation so every figure has a spread. Nothing here prints; progress is
reported through a callback and the result is a frozen Run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pqbench.algorithms.base import Algorithm
from pqbench.checks.pair import check_pair as pair_check
from pqbench.errors import NotOfferedError, VerificationError
from pqbench.implementations.base import Implementation, TimedOperation
from pqbench.record.results import Measurement, Problem, Run, Verification
from pqbench.record.runs import new_run
from pqbench.timing import multi

#: `openssl speed -evp` block sizes.
BLOCK_SIZES = (16, 64, 256, 1024, 8192, 16384)

#: Kinds whose operations process a block of bytes and are swept over block sizes.
BULK_KINDS = ("cipher", "hash")


@dataclass(frozen=True)
class SpeedSettings:
    """How long and how often each operation is timed."""

    seconds: float = 1.0  # timed seconds per operation, split over the rounds
    rounds: int = 7
    warmup: float = 0.05  # untimed seconds before the rounds
    operations: tuple[str, ...] = ()  # empty: each algorithm's default operations
    #: Bytes per operation for ciphers and hashes (the `openssl speed` sweep by default).
    block_sizes: tuple[int, ...] = BLOCK_SIZES
    label: str | None = None
    #: Worker processes timing each operation at once (`openssl speed -multi`).
    processes: int = 1
    #: CPUs to pin the workers to, in turn; empty: the OS decides.
    cpus: tuple[int, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def round_seconds(self) -> float:
        return self.seconds / self.rounds

    def as_dict(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "rounds": self.rounds, "warmup": self.warmup,
                "operations": list(self.operations), "block_sizes": list(self.block_sizes),
                "processes": self.processes, "cpus": list(self.cpus), **self.extra}


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


def measure(task: Task, settings: SpeedSettings) -> Measurement:
    """Prepare outside the clock, warm up, then time `settings.rounds` rounds."""
    prepared = task.implementation.prepare(task.algorithm, task.operation, task.block_size)
    if settings.processes > 1:
        return _measure_in_processes(task, settings, prepared)
    pinned = multi.pin(settings.cpus[0]) if settings.cpus else False
    prepared.run(settings.warmup)
    rounds = tuple(prepared.run(settings.round_seconds) for _ in range(settings.rounds))
    attributes = {**prepared.attributes, **({"cpu": settings.cpus[0]} if pinned else {})}
    return Measurement(
        algorithm=task.algorithm.name,
        implementation=task.implementation.name,
        operation=task.operation,
        rounds=rounds,
        sizes=dict(prepared.sizes),
        block_size=task.block_size,
        attributes=attributes,
        counter=prepared.counter,
    )


def _measure_in_processes(task: Task, settings: SpeedSettings,
                          prepared: TimedOperation) -> Measurement:
    """The aggregate of N workers as the row; each worker's median rate as an attribute."""
    per_worker = multi.run_in_processes(
        lambda: task.implementation.prepare(task.algorithm, task.operation, task.block_size),
        processes=settings.processes, warmup=settings.warmup,
        round_seconds=settings.round_seconds, rounds=settings.rounds, cpus=settings.cpus)
    from pqbench.record.summary import summarize

    per_process = [summarize([r.ops_per_sec for r in rounds]).median
                   for rounds in per_worker]
    return Measurement(
        algorithm=task.algorithm.name,
        implementation=task.implementation.name,
        operation=task.operation,
        rounds=tuple(multi.aggregate(per_worker)),
        sizes=dict(prepared.sizes),
        block_size=task.block_size,
        attributes={**prepared.attributes, "processes": settings.processes,
                    "per_process_ops_per_sec": per_process,
                    "cpus": list(settings.cpus)},
        counter=None,
    )


def check_pair(alg: Algorithm, impl: Implementation, record: SuiteRecorder) -> bool:
    """Verify before timing (`checks.pair`); a pair that fails is recorded, never timed."""
    checked = pair_check(alg, impl)
    if checked.problem is not None:
        record.problems.append(checked.problem)
        return False
    record.verifications.append(checked.verification)
    return True


def execute(tasks: Sequence[Task], settings: SpeedSettings, record: SuiteRecorder,
            progress: Progress | None = None) -> None:
    """Run the tasks in order; raises KeyboardInterrupt through, keeping what finished."""
    verified: dict[tuple[str, str], bool] = {}
    for task in tasks:
        pair = (task.algorithm.name, task.implementation.name)
        if pair not in verified:
            verified[pair] = check_pair(task.algorithm, task.implementation, record)
        if progress:
            progress(task)
        if not verified[pair]:
            continue
        reason = task.implementation.offers(task.algorithm, task.operation)
        if reason:
            record.problems.append(Problem(*pair, "not offered", reason, task.operation))
            continue
        try:
            record.measurements.append(measure(task, settings))
        except (NotOfferedError, VerificationError) as exc:
            kind = "not offered" if isinstance(exc, NotOfferedError) else "failed verification"
            record.problems.append(Problem(*pair, kind, str(exc), task.operation))


def run_suite(
    algorithms: Sequence[Algorithm],
    implementations: Sequence[Implementation],
    settings: SpeedSettings,
    environment: dict[str, Any],
    progress: Progress | None = None,
    command: str | None = None,
) -> Run:
    """Measure everything; on Ctrl-C return what finished, marked interrupted."""
    started = datetime.now(UTC)
    record = SuiteRecorder()
    status = "complete"
    try:
        execute(plan(algorithms, implementations, settings), settings, record, progress)
    except KeyboardInterrupt:
        status = "interrupted"
    return new_run("speed", started, settings=settings.as_dict(), environment=environment,
                   measurements=record.measurements, problems=record.problems,
                   verifications=record.verifications, status=status, label=settings.label,
                   command=command)
