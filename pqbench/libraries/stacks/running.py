"""One stack's worker in this pqbench process: built on first use, started once, greeted,
kept for every row it serves, and stopped when pqbench exits.

`availability` says what `pqbench list` shows (built, buildable, or what is missing) without
building or starting anything; `ensure` builds if needed (its progress through the
"pqbench.libraries.stacks" logger, which the command line shows), starts the worker and returns its
hello. A
build or a worker that failed once is not tried again in the same process: its reason is
kept and given to every row that asks.
"""

from __future__ import annotations

import atexit
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pqbench.libraries.stacks import compiling, pins
from pqbench.libraries.stacks.client import StackWorker
from pqbench.libraries.stacks.protocol import Hello, ProtocolError, parse_hello
from pqbench.libraries.stacks.registry import Stack
from pqbench.platform.errors import ImplementationUnavailable, WorkerFailed

Log = Callable[[str], None]


@dataclass(frozen=True)
class Availability:
    """What this machine can do with a stack right now, found without building."""

    state: Literal["built", "buildable", "missing"]
    detail: str
    hello: Hello | None = None


class StackProcess:
    """The worker of one stack in this process (at most one at a time)."""

    def __init__(self, stack: Stack, pinned: tuple[pins.Pin, ...] | None = None,
                 command: Sequence[str] | None = None) -> None:
        self.stack = stack
        self.pins = pins.from_environment() if pinned is None else pinned
        #: A command that starts a worker without building one (tests, a worker of one's
        #: own); None: the build pqbench makes.
        self.command = list(command) if command is not None else None
        self.worker: StackWorker | None = None
        self.hello: Hello | None = None
        self.unavailable: str | None = None
        self.planned: compiling.Plan | None = None

    def availability(self) -> Availability:
        if self.command is not None:
            return Availability("built", " ".join(self.command))
        try:
            planned = compiling.plan(self.stack, self.pins)
        except ImplementationUnavailable as exc:
            return Availability("missing", str(exc))
        found = compiling.find_built(planned)
        tools = ", ".join(t.version for t in planned.toolchains.values() if t.name != "maven")
        if found is None:
            return Availability("buildable", f"compiled on first use with {tools}")
        try:
            hello = parse_hello({"type": "hello", "protocol": 1, **found.hello},
                                self.stack.name)
        except ProtocolError:
            hello = None
        return Availability("built", f"{found.plan.directory}", hello)

    def ensure(self, log: Log = compiling.progress) -> Hello:
        """The worker's hello, building and starting it first if needed; raises
        ImplementationUnavailable (no toolchain, a failed build) or WorkerFailed."""
        if self.unavailable is not None:
            raise ImplementationUnavailable(self.unavailable)
        if self.worker is not None and self.worker.failure is not None:
            raise WorkerFailed(self.worker.failure)
        if self.worker is not None and self.hello is not None:
            return self.hello
        try:
            if self.command is not None:
                argv = self.command
            else:
                self.planned = compiling.plan(self.stack, self.pins)
                argv = compiling.compile_worker(self.planned, log).argv()
            worker = StackWorker(self.stack.name, argv)
            _started.append(worker)
            self.worker = worker
            self.hello = worker.greet(self.stack.name)
        except (ImplementationUnavailable, WorkerFailed) as exc:
            self.unavailable = str(exc)
            raise
        return self.hello

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
        self.worker = None
        self.hello = None


#: Every worker this process started, stopped in order at exit (each also exits by itself
#: when its stdin closes, so none outlives a pqbench that is killed).
_started: list[StackWorker] = []


@atexit.register
def _close_all() -> None:
    while _started:
        with contextlib.suppress(Exception):
            _started.pop().close()
