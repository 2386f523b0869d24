"""Starting pqbench's own child processes, and ending a child process that leads a process
group of its own (started with `start_new_session=True`): asked to quit first where it
speaks a protocol, then stopped with everything it started. The group, not the one
process, is signalled, so that a child of `sh -c` or of debootstrap cannot outlive it,
holding the user's terminal open or writing into a directory about to be removed."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import IO, Any, AnyStr, Generic

#: How long a worker asked to quit may take before its group is stopped.
QUIT_WAIT = 5.0


def python_module(module: str, python: str | None = None) -> list[str]:
    """argv that runs `module` with `python` (this interpreter by default) as `-m` does, but
    with `-P`: `python -m` otherwise puts the current directory first on the import path,
    so a child started in a folder holding another `pqbench` (a checkout of another
    version) or a `pqbench.py` would run that code, not the pqbench that started it."""
    return [python or sys.executable, "-P", "-m", module]


def stop_group(process: subprocess.Popen[Any], *, term_wait: float = 3.0,
               kill_wait: float = 3.0) -> None:
    """SIGTERM to the process's group, then SIGKILL if the process has not ended within
    `term_wait` seconds; returns once it has ended, or after `kill_wait` more seconds."""
    for sig, wait in ((signal.SIGTERM, term_wait), (signal.SIGKILL, kill_wait)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def ask_to_quit(process: subprocess.Popen[Any], message: str | bytes, *,
                wait: float = QUIT_WAIT) -> None:
    """Write `message` (the protocol's quit request) and close the process's stdin; stop
    its group if it has not ended within `wait` seconds."""
    if process.poll() is not None:
        return
    try:
        assert process.stdin is not None
        process.stdin.write(message)
        process.stdin.close()
    except (BrokenPipeError, OSError, ValueError):
        pass
    try:
        process.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        stop_group(process)


class LineReader(Generic[AnyStr]):
    """A child's output read line by line on a daemon thread of its own, so that a wait for
    the next message can time out. `read_line` reads one line with a bounded buffer ("" or
    b"" at the end) and raises `error` for one it refuses; `decode` makes a message of a
    line. Past `max_pending` lines nobody took, the child floods: that is an `error` too.
    After an error nothing more is read."""

    def __init__(self, stream: IO[AnyStr], read_line: Callable[[IO[AnyStr]], AnyStr],
                 decode: Callable[[AnyStr], dict[str, Any]], error: type[Exception],
                 max_pending: int | None = None) -> None:
        self._decode: Callable[[AnyStr], dict[str, Any]] = decode
        self._error = error
        self._max_pending = max_pending
        self._lines: queue.Queue[AnyStr | Exception | None] = queue.Queue()
        #: The reading thread: it ends at the output's end or at the first error.
        self.thread = threading.Thread(target=self._pump, args=(stream, read_line), daemon=True)
        self.thread.start()

    def next(self, timeout: float) -> dict[str, Any]:
        """The next message. TimeoutError when no line comes within `timeout` seconds,
        EOFError once the output has ended, `error` for a line the protocol refuses."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None
        if line is None:
            raise EOFError
        if isinstance(line, Exception):
            raise line
        return self._decode(line)

    def pending(self) -> bool:
        """Whether a line has come that nobody took yet (the output's end is none)."""
        with self._lines.mutex:
            return any(isinstance(item, (str, bytes)) for item in self._lines.queue)

    def _pump(self, stream: IO[AnyStr], read_line: Callable[[IO[AnyStr]], AnyStr]) -> None:
        try:
            while line := read_line(stream):
                if self._max_pending is not None and self._lines.qsize() >= self._max_pending:
                    self._lines.put(self._error(
                        f"it sent more than {self._max_pending} lines nobody asked for"))
                    return
                self._lines.put(line)
        except self._error as exc:
            self._lines.put(exc)
            return
        except (OSError, ValueError):
            pass
        self._lines.put(None)
