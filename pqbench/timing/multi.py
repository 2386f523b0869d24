"""Several worker processes timing the same operation at once (`openssl speed -multi`).

Each worker prepares its own operation (keys and buffers are per process, outside the
clock), warms up, then all workers start every round together at a barrier, so the
aggregate is what the machine sustains with N copies running side by side.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
from collections.abc import Callable, Sequence
from multiprocessing.synchronize import Barrier
from typing import Any

from pqbench import interrupts
from pqbench.errors import UsageError
from pqbench.timing.contract import LoopResult

Rounds = list[LoopResult]


def parse_cpus(text: str) -> tuple[int, ...]:
    """'0,2-3' -> (0, 2, 3); the CPUs must exist and be allowed to this process."""
    cpus: list[int] = []
    try:
        for part in text.split(","):
            first, _, last = part.strip().partition("-")
            cpus.extend(range(int(first), int(last or first) + 1))
    except ValueError:
        raise UsageError(f"--cpu takes a list like 0,2-3, not {text!r}") from None
    allowed = _allowed_cpus()
    outside = [c for c in cpus if allowed is not None and c not in allowed]
    if not cpus or outside:
        raise UsageError(f"--cpu {text}: CPUs {outside or cpus} are not available here "
                         f"(allowed: {sorted(allowed) if allowed else 'unknown'})")
    return tuple(cpus)


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask), else the machine's count."""
    allowed = _allowed_cpus()
    return len(allowed) if allowed else (os.cpu_count() or 1)


def _allowed_cpus() -> set[int] | None:
    getter = getattr(os, "sched_getaffinity", None)
    return set(getter(0)) if getter else None


def pin(cpu: int | None) -> bool:
    """Pin this process to one CPU where the OS allows; False where it does not."""
    setter = getattr(os, "sched_setaffinity", None)
    if cpu is None or setter is None:
        return False
    setter(0, {cpu})
    return True


def _worker(prepare: Callable[[], Any], warmup: float, round_seconds: float, rounds: int,
            cpu: int | None, barrier: Barrier, results: Any, index: int) -> None:
    # The parent alone answers Ctrl-C (sent to the whole process group) and SIGTERM: it
    # stops the workers with SIGTERM, which then ends a worker at once and silently.
    # Forked with both signals blocked, so none arrives before these handlers are set.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        pin(cpu)
        operation = prepare()
        operation.run(warmup)
        timed: Rounds = []
        for _ in range(rounds):
            barrier.wait()
            timed.append(operation.run(round_seconds))
        results.put((index, timed, None))
    except BaseException as exc:
        barrier.abort()
        results.put((index, [], f"{type(exc).__name__}: {exc}"))


def run_in_processes(prepare: Callable[[], Any], *, processes: int, warmup: float,
                     round_seconds: float, rounds: int,
                     cpus: Sequence[int] = ()) -> list[Rounds]:
    """Per worker, its rounds. Workers are forked so they inherit the prepared libraries."""
    context = mp.get_context("fork")
    barrier = context.Barrier(processes)
    results = context.Queue()
    workers = [context.Process(
        target=_worker, daemon=True,
        args=(prepare, warmup, round_seconds, rounds, cpus[i % len(cpus)] if cpus else None,
              barrier, results, i)) for i in range(processes)]
    with interrupts.deferred():  # each worker sets its own handlers first
        for worker in workers:
            worker.start()
    try:
        collected = [results.get() for _ in workers]
    except BaseException:  # Ctrl-C or SIGTERM: stop the workers now, not after their rounds
        for worker in workers:
            worker.terminate()
        raise
    finally:
        for worker in workers:
            worker.join(timeout=5)
            if worker.is_alive():
                worker.terminate()
    errors = [err for _, _, err in collected if err]
    if errors:
        raise RuntimeError(f"a worker process failed: {errors[0]}")
    return [timed for _, timed, _ in sorted(collected, key=lambda item: item[0])]


def aggregate(per_worker: Sequence[Rounds]) -> Rounds:
    """Round i of the whole machine: all workers' operations over the longest elapsed."""
    return [LoopResult(ops=sum(r.ops for r in same_round),
                       elapsed_ns=max(r.elapsed_ns for r in same_round), cycles=None)
            for same_round in zip(*per_worker, strict=True)]
