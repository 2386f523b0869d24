"""The controller's handle on one worker process: start it, ask, wait with a time limit.

A worker that dies, hangs or prints something other than the protocol is a clear error
(`WorkerError`), never a hang: every answer is awaited with a time limit, and a worker
that misses it is stopped. The worker's stderr is the user's stderr, so its own messages
(a failed import, a missing library) appear where the user looks.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
from typing import IO, Any

from pqbench.platform import processes
from pqbench.platform.errors import PqbenchError
from pqbench.platform.untrusted import printable
from pqbench.sessions.ab import protocol
from pqbench.sessions.sides import Side, redact_command

#: Seconds to wait for a worker's hello, plan or prepare (start-up in a chroot, RSA-4096
#: key generation in a check); a round waits its own length plus this.
TIMEOUT_VAR = "PQBENCH_WORKER_TIMEOUT"
DEFAULT_TIMEOUT = 120.0
#: The longest limit accepted: a day (queue waits overflow on infinite or huge ones).
MAX_TIMEOUT = 86400.0
#: Seconds a worker has to say hello unless PQBENCH_WORKER_TIMEOUT says otherwise: a
#: healthy worker starts in a few seconds even on a busy machine, and one that never
#: answers (a command that sleeps, one that writes only to stderr) is stopped then, not
#: after the time a check may take.
START_TIMEOUT = 30.0
#: Lines a worker may send before the controller asks for them. A worker answers one
#: line per request; one that floods (`yes`) is a protocol error once this many wait,
#: and is no longer read, so the controller's memory stays bounded.
MAX_PENDING = 8


class WorkerError(PqbenchError):
    """A worker could not be started, died, hung, or broke the protocol."""


def timeout_from_environment() -> float:
    text = os.environ.get(TIMEOUT_VAR)
    if text is None:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        raise WorkerError(f"{TIMEOUT_VAR}={printable(text)!r} is not a number of "
                          "seconds") from None
    if not 0 < value <= MAX_TIMEOUT:
        raise WorkerError(f"{TIMEOUT_VAR} must be a positive number of seconds up to "
                          f"{MAX_TIMEOUT:g}")
    return value


class Worker:
    """One running worker: `greet` waits for its hello, `request` sends a message and
    returns its answer."""

    def __init__(self, name: str, side: Side, timeout: float | None = None) -> None:
        self.name = name
        self.side = side
        self.timeout = timeout if timeout is not None else timeout_from_environment()
        chosen = timeout is not None or os.environ.get(TIMEOUT_VAR) is not None
        self.start_timeout = self.timeout if chosen else min(self.timeout, START_TIMEOUT)
        self.command = redact_command(shlex.join(side.argv()))
        try:
            # A session of its own: a Ctrl-C at the terminal reaches the controller only,
            # which then stops the workers in order and keeps what finished.
            self.process = subprocess.Popen(
                side.argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                env=side.environ(), text=True, encoding="utf-8", bufsize=1,
                start_new_session=True)
        except OSError as exc:
            raise WorkerError(f"cannot start worker {name} ({self.command}): "
                              f"{exc.strerror or exc}") from None
        assert self.process.stdout is not None
        self._lines = processes.LineReader(self.process.stdout, protocol.read_line,
                                           protocol.decode, protocol.ProtocolError,
                                           max_pending=MAX_PENDING)
        self.environment: dict[str, Any] = {}
        self.python = self.pqbench = None

    def greet(self) -> None:
        """Wait for the worker's hello (start it first, so two workers start together)."""
        name = self.name
        hello = self._receive("start", self.start_timeout)
        if hello.get("type") != "hello":
            self.close()
            raise WorkerError(f"worker {name} ({self.command}) did not greet with hello: "
                              f"{hello.get('type')!r}")
        if hello.get("protocol") != protocol.VERSION:
            self.close()
            raise WorkerError(
                f"worker {name} ({self.command}) speaks protocol {hello.get('protocol')!r}, "
                f"this pqbench {protocol.VERSION}: install the same pqbench on both sides")
        environment = hello.get("environment")
        self.environment = environment if isinstance(environment, dict) else {}
        self.python = hello.get("python")
        self.pqbench = hello.get("pqbench")

    @property
    def pid(self) -> int:
        return self.process.pid

    def request(self, message: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one request and return the answer; WorkerError on anything unexpected."""
        kind = str(message["type"])
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(protocol.encode(message))
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died(kind) from None
        reply = self._receive(kind, self.timeout if timeout is None else timeout)
        if reply["type"] == "error":
            raise WorkerError(f"worker {self.name} could not {kind}: {reply.get('message')}")
        if reply["type"] not in protocol.REPLIES.get(kind, ()):
            self.close()
            raise WorkerError(f"worker {self.name} answered {kind} with {reply['type']!r}")
        problem = _refused(reply)
        if problem is not None:
            self.close()
            raise WorkerError(f"worker {self.name} sent a {reply['type']} the run format "
                              f"refuses ({printable(problem)}); nothing of it was kept")
        return reply

    def _receive(self, what: str, timeout: float) -> dict[str, Any]:
        try:
            return self._lines.next(timeout)
        except TimeoutError:
            self.kill()
            raise WorkerError(f"worker {self.name} ({self.command}) did not answer {what} "
                              f"within {timeout:g} s and was stopped ({TIMEOUT_VAR} sets "
                              "the limit)") from None
        except EOFError:
            raise self._died(what) from None
        except protocol.ProtocolError as exc:
            self.kill()
            raise WorkerError(f"worker {self.name} ({self.command}) does not speak the pqbench "
                              f"worker protocol: {exc}") from None

    def _died(self, what: str) -> WorkerError:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.process.returncode
        return WorkerError(f"worker {self.name} ({self.command}) exited with status {code} "
                           f"during {what}; its own messages, if any, are above")

    def close(self) -> None:
        """Ask the worker to quit; stop it if it does not within a few seconds."""
        processes.ask_to_quit(self.process, protocol.encode({"type": "quit"}))
        _close_quietly(self.process.stdout)

    def kill(self) -> None:
        """Stop the worker and whatever its command prefix started: the worker leads a
        process group of its own (start_new_session), so the group is signalled."""
        processes.stop_group(self.process)


def _refused(reply: dict[str, Any]) -> str | None:
    """What the run format (the model imports are validated with) refuses in a round or a
    prepared row; None when it would store and export as it is."""
    from pqbench.data.record import validation  # pydantic: only once a session runs

    if reply["type"] == "round":
        sample = {key: reply.get(key) for key in ("ops", "elapsed_ns", "cycles")}
        return validation.worker_row_problem(None, None, None, [sample],
                                             [reply.get("cpu_ns")])
    if reply["type"] == "prepared":
        return validation.worker_row_problem(reply.get("sizes"), reply.get("attributes"),
                                             reply.get("counter"), [], [])
    return None


def _close_quietly(stream: IO[str] | None) -> None:
    if stream is not None:
        with contextlib.suppress(OSError):
            stream.close()
