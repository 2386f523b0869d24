"""Ending a child process that leads a process group of its own (started with
`start_new_session=True`): asked to quit first where it speaks a protocol, then stopped
with everything it started. The group, not the one process, is signalled, so that a child
of `sh -c` or of debootstrap cannot outlive it, holding the user's terminal open or
writing into a directory about to be removed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from typing import Any

#: How long a worker asked to quit may take before its group is stopped.
QUIT_WAIT = 5.0


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
