"""pqbench's handle on one stack worker: start it, greet it, ask it, stop it.

Every answer is awaited with a time limit scaled to the request (a round waits its own
length and more), and a line is read with a bounded buffer, so a worker that dies, hangs,
writes garbage or breaks the protocol is a `WorkerFailed` naming what happened, never a
hang or a traceback. A worker that failed once is stopped and not asked again. Its stderr
is kept (the last lines), so the message can quote what it said before it died.
"""

from __future__ import annotations

import collections
import contextlib
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from pqbench.libraries.stacks import jvm, protocol
from pqbench.platform import processes
from pqbench.platform.errors import NotOfferedError, WorkerFailed
from pqbench.platform.untrusted import printable

#: Seconds a worker may take to start and greet (a cold JVM on a busy machine).
START_TIMEOUT = 60.0
#: Seconds for a correctness request or a prepare (key generation, 64 signatures).
REQUEST_TIMEOUT = 60.0
#: A round may take its own length times this, plus REQUEST_TIMEOUT: on a busy machine a
#: worker is descheduled, and its last batch may overrun.
ROUND_FACTOR = 3.0
#: Lines of the worker's stderr kept for error messages.
STDERR_LINES = 12

class RequestRefused(Exception):
    """The worker answered `error`: it is alive, and could not do what was asked."""


class StackWorker:
    """One running worker process. Not thread-safe: one request at a time."""

    def __init__(self, name: str, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 cwd: Path | None = None, start_timeout: float = START_TIMEOUT,
                 request_timeout: float = REQUEST_TIMEOUT) -> None:
        self.name = name
        self.argv = list(argv)
        self.start_timeout = start_timeout
        self.request_timeout = request_timeout
        self.failure: str | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        try:
            # A session of its own: a Ctrl-C at the terminal reaches pqbench only, which
            # keeps what finished and then stops its workers in order.
            self.process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env=dict(env) if env is not None else None,
                cwd=cwd, start_new_session=True)
        except OSError as exc:
            raise WorkerFailed(f"{name}: cannot start its worker {self.argv[0]}: "
                               f"{exc.strerror or exc}") from None
        assert self.process.stdout is not None and self.process.stderr is not None
        self._lines = processes.LineReader(self.process.stdout, protocol.read_line,
                                           protocol.decode, protocol.ProtocolError)
        self._stderr_reader = threading.Thread(
            target=_keep_tail, args=(self.process.stderr, self._stderr), daemon=True)
        self._stderr_reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def greet(self, expected: str) -> protocol.Hello:
        """The worker's hello, checked; WorkerFailed if it does not come in time."""
        message = self._receive("start", self.start_timeout)
        try:
            return protocol.parse_hello(message, expected)
        except protocol.ProtocolError as exc:
            raise self.fail(f"its hello breaks the protocol: {exc}") from None

    def request(self, message: Mapping[str, Any], replies: tuple[str, ...],
                timeout: float | None = None) -> dict[str, Any]:
        """Send one request and return its reply, of one of the types `replies`.

        A `problem` reply raises NotOfferedError and an `error` reply RequestRefused (the
        worker lives on); anything else unexpected stops the worker: WorkerFailed."""
        kind = str(message["type"])
        if self.failure is not None:
            raise WorkerFailed(self.failure)
        if self._pending():
            # One reply per request, in order: a line before the request is one nobody
            # asked for (a reply sent twice), and every later reply would be out of step.
            raise self.fail(f"it sent a line nobody asked for before {kind}")
        try:
            self._write(protocol.encode(message))
        except (BrokenPipeError, OSError, ValueError):
            raise self._died(kind) from None
        try:
            reply = self._receive(kind, self.request_timeout if timeout is None else timeout)
        except KeyboardInterrupt:
            # The reply may still come: the conversation is out of step, so end it.
            self.fail("interrupted while it answered")
            raise
        if reply["type"] == "problem":
            raise NotOfferedError(f"{self.name}: "
                                  f"{protocol.text(reply.get('reason'), 'reason')}")
        if reply["type"] == "error":
            said = reply.get("message")
            raise RequestRefused(printable(said)[:protocol.MAX_TEXT] if isinstance(said, str)
                                 else "(no message)")
        if reply["type"] not in replies:
            raise self.fail(f"it answered {kind} with {protocol.excerpt(reply['type'])}")
        return reply

    def round_timeout(self, seconds: float) -> float:
        return seconds * ROUND_FACTOR + self.request_timeout

    # --- the transport: the worker's pipes (a test may put another in their place) ----

    def _write(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line)
        self.process.stdin.flush()

    def _next(self, timeout: float) -> dict[str, Any]:
        return self._lines.next(timeout)

    def _pending(self) -> bool:
        return self._lines.pending()

    def _said(self) -> str:
        """The end of what the worker wrote on stderr, once it has stopped."""
        self._stderr_reader.join(timeout=2)
        return " | ".join(self._stderr)

    def _receive(self, what: str, timeout: float) -> dict[str, Any]:
        try:
            return self._next(timeout)
        except TimeoutError:
            raise self.fail(f"it did not answer {what} within {timeout:g} s") from None
        except EOFError:
            raise self._died(what) from None
        except protocol.ProtocolError as exc:
            raise self.fail(f"it does not speak the stack worker protocol: {exc}") from None

    def _died(self, what: str) -> WorkerFailed:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        status = f"exited with status {code}" if code is not None else "closed its output"
        return self.fail(f"it {status} during {what}")

    def fail(self, what: str) -> WorkerFailed:
        """Stop the worker for good and say why, with the end of what it wrote on stderr."""
        self.kill()
        said = self._said()
        self.failure = (f"{self.name} worker (pid {self.pid}): {what}"
                        + (f"; it wrote: {said}" if said else ""))
        return WorkerFailed(self.failure)

    def close(self) -> None:
        """Ask the worker to quit; stop it if it has not within a few seconds."""
        processes.ask_to_quit(self.process, protocol.encode({"type": "quit"}))
        self._close_pipes()

    def kill(self) -> None:
        """Stop the worker and anything it started (it leads a process group of its own)."""
        processes.stop_group(self.process)
        self._close_pipes()

    def _close_pipes(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()


def _keep_tail(stream: IO[bytes], tail: collections.deque[str]) -> None:
    """Keep the last lines of the worker's stderr, each cut short and made printable, with
    the JVM options it says it picked up from the environment shown as `jvm` shows them
    (the rest of such a line longer than a read is left out)."""
    hiding = False
    try:
        while line := stream.readline(4096):
            text = printable(line.decode("utf-8", "backslashreplace"))
            shown = "" if hiding else jvm.shown_line(text).strip()
            hiding = not line.endswith(b"\n") and (hiding or jvm.picked_up(text))
            if shown:
                tail.append(shown[:200])
    except (OSError, ValueError):
        pass
