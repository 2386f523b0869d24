"""Several worker processes timing the same operation at once (`openssl speed -multi`).

Each worker prepares its own operations (keys and buffers are per process, outside the
clock), warms up, then all workers start every round together at a barrier, so the
aggregate is what the machine sustains with N copies running side by side.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Barrier
from typing import Any

from pqbench.data.record.rounds import LoopResult, Timed
from pqbench.platform.errors import UsageError
from pqbench.platform.untrusted import printable

_CPU_PART = re.compile(r"\s*(\d{1,18})\s*(?:-\s*(\d{1,18})\s*)?")


def parse_cpus(text: str) -> tuple[int, ...]:
    """'0,2-3' -> (0, 2, 3); the CPUs must exist and be allowed to this process. A range
    is checked by its ends before it is listed (0-999999999999 names no CPU here, and
    expanding it first took gigabytes); an empty list or part ('', '0-', '1,') is refused."""
    usage = f"--cpu takes a list like 0,2-3, not {printable(text)[:50]!r}"
    allowed = _allowed_cpus()
    top = max(allowed) if allowed else max(0, (os.cpu_count() or 1) - 1)
    cpus: dict[int, None] = {}
    for part in text.split(","):
        found = _CPU_PART.fullmatch(part)
        if found is None:
            raise UsageError(usage)
        first, last = int(found[1]), int(found[2] or found[1])
        if last < first:
            raise UsageError(f"{usage}: the range {first}-{last} ends before it starts")
        if last > top:
            raise UsageError(f"--cpu {printable(text)[:50]}: CPU {max(first, top + 1)} is "
                             f"not available here (allowed: "
                             f"{sorted(allowed) if allowed else 'unknown'})")
        cpus.update(dict.fromkeys(range(first, last + 1)))
    outside = [c for c in cpus if allowed is not None and c not in allowed]
    if outside:
        raise UsageError(f"--cpu {printable(text)[:50]}: CPUs {outside} are not available "
                         f"here (allowed: {sorted(allowed) if allowed else 'unknown'})")
    return tuple(cpus)


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask), else the machine's count."""
    allowed = _allowed_cpus()
    return len(allowed) if allowed else (os.cpu_count() or 1)


def _allowed_cpus() -> set[int] | None:
    getter = getattr(os, "sched_getaffinity", None)
    return set(getter(0)) if getter else None


def pin(cpu: int | None) -> set[int] | None:
    """Pin this process to one CPU where the OS allows: the CPUs it was allowed before,
    for `unpin`; None where it cannot be pinned."""
    setter = getattr(os, "sched_setaffinity", None)
    before = _allowed_cpus()
    if cpu is None or setter is None or before is None:
        return None
    setter(0, {cpu})
    return before


def unpin(before: set[int] | None) -> None:
    """Give this process back the CPUs `pin` found (a caller that measured in-process,
    a library user or a test, goes on on every CPU it had, and so do its children)."""
    setter = getattr(os, "sched_setaffinity", None)
    if before and setter is not None:
        setter(0, before)


class Pool:
    """N forked worker processes that each prepare every row once (keys and buffers per
    process, outside the clock) and warm it up, then time one row's round at a time, all
    N together: every round starts at a barrier, so the aggregate is what the machine
    sustains with N copies running side by side, and the rows stay paired by cycle.

    Workers ignore SIGINT (the controller decides: a Ctrl-C at the terminal reaches the
    whole process group) and are terminated by `close`, so an interruption prints nothing
    of theirs."""

    def __init__(self, preparers: Sequence[Callable[[], Any]], *, processes: int,
                 warmup: float, cpus: Sequence[int] = ()) -> None:
        context = mp.get_context("fork")
        barrier = context.Barrier(processes)
        self._pipes: list[Connection] = []
        self._workers: list[mp.process.BaseProcess] = []
        #: Per row, per worker, the rate of each round it timed.
        self._rates: list[list[list[float]]] = [[[] for _ in range(processes)]
                                                for _ in preparers]
        for i in range(processes):
            ours, theirs = context.Pipe()
            worker = context.Process(
                target=_serve, daemon=True,
                args=(preparers, warmup, cpus[i % len(cpus)] if cpus else None, barrier,
                      theirs))
            worker.start()
            theirs.close()
            self._pipes.append(ours)
            self._workers.append(worker)
        try:
            self._collect()  # every worker prepared and warmed up every row
        except BaseException:
            self.close()
            raise

    def _collect(self) -> list[Any]:
        answers = []
        for pipe in self._pipes:
            try:
                answer = pipe.recv()
            except EOFError:
                raise RuntimeError("a worker process ended unexpectedly") from None
            if isinstance(answer, str):
                raise RuntimeError(f"a worker process failed: {answer}")
            answers.append(answer)
        return answers

    def round(self, index: int, seconds: float) -> Timed:
        """Row `index`'s round in every worker at once: all operations over the longest
        wall time (and the longest CPU time)."""
        for pipe in self._pipes:
            pipe.send((index, seconds))
        found: list[tuple[int, int, int]] = self._collect()
        for worker, (ops, elapsed, _) in enumerate(found):
            self._rates[index][worker].append(ops * 1e9 / elapsed if elapsed > 0 else 0.0)
        return Timed(LoopResult(ops=sum(ops for ops, _, _ in found),
                                elapsed_ns=max(elapsed for _, elapsed, _ in found),
                                cycles=None), max(cpu for _, _, cpu in found))

    def per_worker(self) -> list[list[list[float]]]:
        """Per row, per worker, its per-round rates."""
        return self._rates

    def close(self) -> None:
        for pipe in self._pipes:
            with contextlib.suppress(OSError):
                pipe.send(None)
        for worker in self._workers:
            worker.join(timeout=1)
            if worker.is_alive():
                worker.terminate()
                worker.join(timeout=5)


def _serve(preparers: Sequence[Callable[[], Any]], warmup: float, cpu: int | None,
           barrier: Barrier, pipe: Connection) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        pin(cpu)
        operations = [prepare() for prepare in preparers]
        for operation in operations:
            operation.run(warmup)
        pipe.send(())  # ready
        while (request := pipe.recv()) is not None:
            index, seconds = request
            barrier.wait()
            cpu_started = time.thread_time_ns()
            result = operations[index].run(seconds)
            pipe.send((result.ops, result.elapsed_ns,
                       Timed.of(result, time.thread_time_ns() - cpu_started).cpu_ns))
    except (EOFError, BrokenPipeError, threading.BrokenBarrierError):
        return
    except Exception as exc:
        barrier.abort()
        with contextlib.suppress(OSError):
            pipe.send(f"{type(exc).__name__}: {exc}")
