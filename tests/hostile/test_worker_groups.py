"""Workers (ab's, a foreign stack's) and userland builds end with their whole process group:
asked to quit first where they speak a protocol, then signalled as a group, so that nothing
they started outlives them."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from pqbench.platform import processes

pytestmark = pytest.mark.process


def _gone(pid: int, within: float = 30.0) -> bool:
    """Whether the process has ended (gone, or a zombie its new parent has not reaped yet),
    checked until it has or `within` seconds have passed."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.01)
    return False


def test_a_group_is_stopped_with_the_children_its_leader_started() -> None:
    shell = subprocess.Popen(["sh", "-c", "sleep 600 & echo $!; wait"],
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert shell.stdout is not None
    child = int(shell.stdout.readline())  # the child is running once its pid is written
    processes.stop_group(shell)
    shell.stdout.close()
    assert shell.returncode == -15  # SIGTERM: it needed no SIGKILL
    assert _gone(child), f"sleep {child} outlived its shell"


def test_a_worker_that_answers_the_quit_request_ends_by_itself() -> None:
    worker = subprocess.Popen(
        [sys.executable, "-c", "import sys; assert sys.stdin.readline() == 'quit\\n'"],
        stdin=subprocess.PIPE, text=True, start_new_session=True)
    processes.ask_to_quit(worker, "quit\n")
    assert worker.returncode == 0


def test_a_worker_that_ignores_the_quit_request_is_stopped() -> None:
    worker = subprocess.Popen(["sleep", "600"], stdin=subprocess.PIPE, text=True,
                              start_new_session=True)
    processes.ask_to_quit(worker, "quit\n", wait=0.2)
    assert worker.returncode == -15


def test_asking_a_worker_that_has_ended_does_nothing() -> None:
    worker = subprocess.Popen(["true"], stdin=subprocess.PIPE, start_new_session=True)
    worker.wait()
    processes.ask_to_quit(worker, b"quit\n")  # no write to a closed pipe, no signal
    processes.stop_group(worker)
    assert worker.returncode == 0
