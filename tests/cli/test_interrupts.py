"""An interruption that lands in a finalizer is delivered again, not dropped.

Python runs a signal's handler at the next bytecode it executes; when that bytecode belongs
to a finalizer or a weakref callback the garbage collector runs, the handler's
KeyboardInterrupt cannot propagate: Python prints "Exception ignored" with a traceback and
the program runs on, as a `pqbench tls` run once did after Ctrl-C (it finished every row and
exited 0). Here a finalizer receives the signal on purpose, in a real process.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.process

PROGRAM = """
import os, signal, sys, time
from pqbench import interrupts

interrupts.install()


class Dropper:
    def __del__(self):
        os.kill(os.getpid(), signal.{signal})
        for _ in range(100_000):  # the handler runs here, inside the finalizer
            pass


try:
    Dropper()  # the last reference goes at once: __del__ runs
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        pass
    print("ran on")
except KeyboardInterrupt as exc:
    print("interrupted by", type(exc).__name__)
"""


def _run(source: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          cwd=REPO, timeout=60, check=False)


@pytest.mark.parametrize(("signal_name", "raised"), [
    ("SIGINT", "KeyboardInterrupt"),
    ("SIGTERM", "Terminated"),
])
def test_a_signal_dropped_in_a_finalizer_is_delivered_again(signal_name: str,
                                                            raised: str) -> None:
    done = _run(PROGRAM.format(signal=signal_name))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"interrupted by {raised}"
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr


def test_without_the_hook_python_drops_it() -> None:
    """The control: the same program without `install` runs on (what the hook is for)."""
    done = _run(PROGRAM.format(signal="SIGINT").replace("interrupts.install()", ""))
    assert done.stdout.strip() == "ran on"
    assert "Exception ignored" in done.stderr and "KeyboardInterrupt" in done.stderr


def test_other_exceptions_in_finalizers_are_still_reported() -> None:
    source = ("from pqbench import interrupts\ninterrupts.install()\n"
              "class Bad:\n    def __del__(self):\n        raise ValueError('in a finalizer')\n"
              "Bad()\nprint('ran on')\n")
    done = _run(source)
    assert done.stdout.strip() == "ran on"
    assert "Exception ignored" in done.stderr and "ValueError: in a finalizer" in done.stderr
