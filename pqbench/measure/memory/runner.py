"""Plan memory measurements, run them in the worker process, collect figures and problems.

The parent never measures: every figure comes from `pqbench.measure.memory.worker`, a process
started with the allocator interposer preloaded, one per operation. A call that kills its
worker (a stack deeper than the painted region) becomes a problem of that operation.
Nothing here prints; progress goes through a callback.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pqbench.catalog import algorithms
from pqbench.catalog.algorithms.base import PUBLIC_KEY_KINDS, Algorithm
from pqbench.data.record.memory import MemoryFigure
from pqbench.data.record.results import Problem, Verification
from pqbench.libraries.implementations.base import Implementation
from pqbench.libraries.implementations.native import MEMORY_ONLY_OPERATIONS
from pqbench.platform import processes
from pqbench.platform.errors import UsageError

INTERPOSER_MODULE = "pqbench.measure.memory._memhook"
#: Calls measured per operation; each figure is the largest of them.
DEFAULT_CALLS = 5
#: The implementations whose operations run in C, where a call's memory is the library's.
IMPLEMENTATIONS = ("liboqs", "libcrypto")
#: The stack region the call runs on (csrc/memory.c MEM_STACK_BYTES).
STACK_REGION_BYTES = 8 << 20

STACK_METHOD = "painted stack (high-water mark, harness subtracted)"
HEAP_METHOD = "LD_PRELOAD malloc interposer (bytes requested)"


def interposer() -> tuple[Path | None, str | None]:
    """The built interposer, or None and why it is missing."""
    if not sys.platform.startswith("linux"):
        return None, f"heap counting needs glibc's LD_PRELOAD (Linux); this is {sys.platform}"
    spec = importlib.util.find_spec(INTERPOSER_MODULE)
    if spec is None or spec.origin is None or not Path(spec.origin).is_file():
        return None, ("the allocator interposer was not built (no C compiler when pqbench "
                      "was installed); reinstall with gcc to count the heap")
    return Path(spec.origin), None


def method(heap_counted: bool) -> str:
    """How a row's figures were obtained (`memory_method`)."""
    return f"{STACK_METHOD}; {HEAP_METHOD if heap_counted else 'heap not counted'}"


def worker_environment(hook: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    # Resolve every symbol at load time: a first call through the PLT would otherwise
    # charge the dynamic linker's resolver (kilobytes of stack) to the measured call.
    env["LD_BIND_NOW"] = "1"
    if hook is not None:
        env["LD_PRELOAD"] = ":".join(filter(None, [str(hook), env.get("LD_PRELOAD")]))
    return env


class WorkerDied(RuntimeError):
    """The worker process ended while measuring; the message says how."""


class Worker:
    """One worker process; `ask` sends a request and returns its reply."""

    def __init__(self, hook: Path | None) -> None:
        # Kept open for the worker's life (closed in close()): its last lines explain a death.
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        self.process = subprocess.Popen(
            processes.python_module("pqbench.measure.memory.worker"), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._stderr, env=worker_environment(hook),
            text=True)
        try:
            self.hello = self._read()
        except BaseException:
            self.close()
            raise

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise WorkerDied(self._death())
        reply: dict[str, Any] = json.loads(line)
        return reply

    def _death(self) -> str:
        code = self.process.wait()
        if code < 0:
            name = signal.Signals(-code).name
            how = f"was killed by {name}"
            if -code in (signal.SIGSEGV, signal.SIGBUS):
                how += (f" (a stack deeper than the {STACK_REGION_BYTES >> 20} MiB "
                        "measurement region hits its guard)")
        else:
            how = f"exited with status {code}"
        self._stderr.seek(0)
        tail = self._stderr.read().decode(errors="replace").strip().splitlines()[-3:]
        return f"the memory worker {how}" + (f": {' / '.join(tail)}" if tail else "")

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            raise WorkerDied(self._death()) from None
        return self._read()

    def close(self) -> None:
        """End the worker (closing its stdin ends its loop) and release its pipes."""
        if self.process.poll() is None:
            if self.process.stdin is not None:
                self.process.stdin.close()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self._stderr.close()


@dataclass(frozen=True)
class MemoryTask:
    algorithm: Algorithm
    implementation: Implementation
    operation: str

    @property
    def title(self) -> str:
        return f"{self.algorithm.name} {self.operation} [{self.implementation.name}]"

    def request(self, calls: int) -> dict[str, Any]:
        """The worker's request; a mechanism only liboqs knows travels with its kind."""
        try:
            algorithms.by_name(self.algorithm.name)
            liboqs_kind = None
        except KeyError:
            liboqs_kind = self.algorithm.kind
        return {"implementation": self.implementation.name, "algorithm": self.algorithm.name,
                "liboqs_kind": liboqs_kind, "operation": self.operation, "calls": calls}


def operations_for(alg: Algorithm, wanted: Sequence[str]) -> tuple[str, ...]:
    """The default operations plus decaps-reject for a KEM; or those of `wanted` it has."""
    extra = tuple(op for op, base in MEMORY_ONLY_OPERATIONS.items() if base in alg.operations)
    if not wanted:
        return alg.operations + extra
    return tuple(op for op in wanted if op in alg.all_operations + extra)


def plan(algorithms: Iterable[Algorithm], implementations: Iterable[Implementation],
         operations: Sequence[str] = ()) -> list[MemoryTask]:
    algs, impls = tuple(algorithms), tuple(implementations)
    symmetric = [a.name for a in algs if a.kind not in PUBLIC_KEY_KINDS]
    if symmetric:
        raise UsageError(f"memory is measured for public-key algorithms; {', '.join(symmetric)} "
                         "is not one")
    return [MemoryTask(alg, impl, op) for alg in algs for impl in impls if impl.in_scope(alg)
            for op in operations_for(alg, operations)]


@dataclass
class MemoryRecorder:
    """What a memory run produced so far (an interruption keeps it)."""

    figures: list[MemoryFigure] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    verifications: list[Verification] = field(default_factory=list)
    heap_counted: bool | None = None
    harness_stack_bytes: int | None = None


def _figure(task: MemoryTask, reply: dict[str, Any], heap_counted: bool) -> MemoryFigure:
    memory = reply["memory"]
    ranges = {metric: (int(memory[metric][0]), int(memory[metric][1]))
              for metric in ("stack_bytes", "heap_bytes", "allocations")
              if memory.get(metric) is not None}
    return MemoryFigure(
        algorithm=task.algorithm.name, implementation=task.implementation.name,
        operation=task.operation, stack_bytes=ranges["stack_bytes"][1],
        heap_bytes=ranges["heap_bytes"][1] if "heap_bytes" in ranges else None,
        allocations=ranges["allocations"][1] if "allocations" in ranges else None,
        method=method(heap_counted), calls=int(memory["calls"]), ranges=ranges,
        sizes={k: int(v) for k, v in reply.get("sizes", {}).items()})


def _offered(task: MemoryTask, recorder: MemoryRecorder, refused: set[tuple[str, str]]) -> bool:
    """Support asked, not assumed: a pair refused as a whole is one problem, as in speed."""
    alg, impl = task.algorithm, task.implementation
    pair = (alg.name, impl.name)
    if pair in refused:
        return False
    whole = impl.offers(alg, alg.all_operations[0])
    if whole:
        kind = "unavailable" if impl.unavailable_reason() else "not offered"
        recorder.problems.append(Problem(*pair, kind, whole))
        refused.add(pair)
        return False
    reason = impl.offers(alg, MEMORY_ONLY_OPERATIONS.get(task.operation, task.operation))
    if reason:
        recorder.problems.append(Problem(*pair, "not offered", reason, task.operation))
        return False
    return True


def _ask(hook: Path | None, task: MemoryTask, calls: int,
         recorder: MemoryRecorder) -> dict[str, Any]:
    """One task in a worker of its own, so that its figures never depend on what else the
    run measured: libcrypto's global state (name maps, method caches) grows with each
    algorithm a process uses, and with it the heap of later calls (by 8 bytes for X25519
    key generation after P-256 on OpenSSL 3.0). The worker is gone when this returns."""
    worker = Worker(hook)
    try:
        recorder.heap_counted = bool(worker.hello.get("heap"))
        return worker.ask(task.request(calls))
    finally:
        worker.close()


def execute(tasks: Sequence[MemoryTask], calls: int, recorder: MemoryRecorder,
            progress: Callable[[MemoryTask], None] | None = None) -> None:
    """Measure each task in a fresh worker; raises KeyboardInterrupt through, keeping the
    rest."""
    hook, _ = interposer()
    refused: set[tuple[str, str]] = set()
    verified: set[tuple[str, str]] = set()
    for task in tasks:
        if progress:
            progress(task)
        if not _offered(task, recorder, refused):
            continue
        pair = (task.algorithm.name, task.implementation.name)
        try:
            reply = _ask(hook, task, calls, recorder)
        except WorkerDied as exc:
            recorder.problems.append(Problem(*pair, "error", str(exc), task.operation))
            continue
        if not reply.get("ok"):
            recorder.problems.append(Problem(*pair, str(reply.get("kind", "error")),
                                           str(reply.get("reason")), task.operation))
            continue
        recorder.harness_stack_bytes = int(reply["memory"]["harness_stack_bytes"])
        recorder.figures.append(_figure(task, reply, bool(recorder.heap_counted)))
        if pair not in verified:
            verified.add(pair)
            recorder.verifications.append(Verification(*pair, ("native check",)))
