"""A stack implementation served by the fake worker (`fake_stack_worker.py`): the real
protocol client, real cryptography, with faults chosen by mode; in a process of its own
(`fake_implementation`) or, for the fast lane, answered in this process
(`in_process_implementation`): the same client, protocol checks and checks before timing,
only the pipes replaced."""

from __future__ import annotations

import collections
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

from pqbench.libraries.implementations.stacks import StackImplementation
from pqbench.libraries.stacks import protocol, registry
from pqbench.libraries.stacks.client import StackWorker
from pqbench.libraries.stacks.running import StackProcess
from tests.helpers import fake_stack_worker

FAKE_WORKER = Path(__file__).resolve().parent / "fake_stack_worker.py"


def fake_command(name: str = "go", mode: str = "good", *extra: str) -> list[str]:
    return [sys.executable, str(FAKE_WORKER), "--impl", name, "--mode", mode, *extra]


def fake_implementation(mode: str = "good", name: str = "go", *extra: str
                        ) -> StackImplementation:
    """The stack `name` with its worker replaced by the fake in `mode` (no build)."""
    stack = registry.by_name(name)
    return StackImplementation(stack, StackProcess(stack, (), fake_command(name, mode, *extra)))


class InProcessWorker(StackWorker):
    """pqbench's client for one stack worker whose requests the fake answers in this
    process: every message still crosses as one encoded line each way, through the same
    request, reply and protocol checks; only the process and its pipes are left out."""

    def __init__(self, name: str, mode: str = "good") -> None:
        self.name = name
        self.argv = ["(in process)", "--mode", mode]
        self.start_timeout = self.request_timeout = 1.0
        self.failure: str | None = None
        self.stopped = False
        self._mode = mode
        self._fake = fake_stack_worker.Worker(mode, None)
        self._replies: collections.deque[bytes] = collections.deque(
            [protocol.encode(fake_stack_worker.hello(name))])

    @property
    def pid(self) -> int:
        return os.getpid()

    def _write(self, line: bytes) -> None:
        reply: dict[str, Any] | None = self._fake.answer(json.loads(line))
        for _ in range(2 if self._mode == "twice" else 1):
            self._replies.append(protocol.encode(reply or {}))

    def _next(self, timeout: float) -> dict[str, Any]:
        if not self._replies:
            raise TimeoutError
        return protocol.decode(protocol.read_line(io.BytesIO(self._replies.popleft())))

    def _pending(self) -> bool:
        return bool(self._replies)

    def _said(self) -> str:
        return ""

    def kill(self) -> None:
        self.stopped = True

    def close(self) -> None:
        self.stopped = True


def in_process_implementation(mode: str = "good", name: str = "go") -> StackImplementation:
    """The stack `name` served by the fake in `mode`, answered in this process."""
    stack = registry.by_name(name)
    process = StackProcess(stack, (), ["(in process)"])
    worker = InProcessWorker(name, mode)
    process.worker = worker
    process.hello = worker.greet(name)
    return StackImplementation(stack, process)
