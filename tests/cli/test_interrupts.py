"""An interruption that lands in a finalizer is delivered again, not dropped.

Python runs a signal's handler at the next bytecode it executes; when that bytecode belongs
to a finalizer or a weakref callback the garbage collector runs, the handler's
KeyboardInterrupt cannot propagate: Python prints "Exception ignored" with a traceback and
the program runs on, as a `pqbench tls` run once did after Ctrl-C (it finished every row and
exited 0). Here a finalizer receives the signal on purpose, in a real process.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.process

PROGRAM = """
import os, signal, sys, time
from pqbench.platform import interrupts

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
    source = ("from pqbench.platform import interrupts\ninterrupts.install()\n"
              "class Bad:\n    def __del__(self):\n        raise ValueError('in a finalizer')\n"
              "Bad()\nprint('ran on')\n")
    done = _run(source)
    assert done.stdout.strip() == "ran on"
    assert "Exception ignored" in done.stderr and "ValueError: in a finalizer" in done.stderr


NESTED = """
import os, signal, sys, time
from pqbench.platform import interrupts

with interrupts.first_only():  # the block `handles_errors` opens around every command
    try:
        with interrupts.first_only():  # the command's own (`files corpus`)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
            print("ran on")
    except KeyboardInterrupt:
        print("interrupted")
os.kill(os.getpid(), signal.SIGINT)  # pressed again while the command reports
time.sleep(0.2)
print("reported", signal.getsignal(signal.SIGINT) is signal.SIG_IGN)
sys.exit(130)
"""


def test_a_second_ctrl_c_after_nested_blocks_is_ignored_to_the_exit() -> None:
    """The inner block takes the first Ctrl-C; the outer one, not interrupted itself, must
    not hand SIGINT back to Python's handler, or a Ctrl-C pressed while the command reports
    ends it by the signal (-2) or with a traceback instead of with 130 (seen in CI)."""
    done = _run(NESTED)
    assert done.returncode == 130, done.stderr
    assert done.stdout.split() == ["interrupted", "reported", "True"], done.stdout
    assert "Traceback" not in done.stderr, done.stderr


def test_a_new_outermost_block_is_interruptible_again() -> None:
    """Several commands in one process (as tests run them): the first one's interruption
    does not make the next command's Ctrl-C absorbed."""
    source = ("import os, signal\nfrom pqbench.platform import interrupts\n"
              "for n in range(2):\n"
              "    try:\n"
              "        with interrupts.first_only():\n"
              "            os.kill(os.getpid(), signal.SIGINT)\n"
              "            import time; time.sleep(5)\n"
              "            print('ran on')\n"
              "    except KeyboardInterrupt:\n"
              "        print('interrupted', n)\n"
              "    signal.signal(signal.SIGINT, signal.default_int_handler)\n")
    done = _run(source)
    assert done.stdout.splitlines() == ["interrupted 0", "interrupted 1"], done.stdout
    assert done.returncode == 0, done.stderr


CAUGHT_IN_SOURCE_TEXT = """
import os, signal, sys
from pqbench.platform import interrupts

try:
    # Source text run by exec, as dataclasses and namedtuple make their methods while a
    # module is imported: the Ctrl-C leaves it.
    exec("os.kill(os.getpid(), signal.SIGINT)\\nfor _ in range(10_000_000): pass")
    print("ran on")
except KeyboardInterrupt:
    sys.stderr.write("error: interrupted\\n")
    {forget}
    raise SystemExit(130)
"""


@pytest.mark.parametrize("forget, status", [
    ("interrupts.forget_caught_interruption()", 130),
    ("pass", -signal.SIGINT),  # the control: what CPython 3.11 does without it
], ids=["forgotten", "control"])
def test_a_ctrl_c_caught_after_source_text_exits_with_the_status_asked(
        tmp_path: Path, forget: str, status: int) -> None:
    """A Ctrl-C that lands in code run from source text and is then handled: the status is
    the one asked for (130), not the signal (-2) that CPython's "unhandled" mark brings at
    exit (seen when Ctrl-C landed while pqbench's commands were loading). Run as pqbench
    runs, with -m: a script or `-c` exits on SystemExit before the mark is read."""
    (tmp_path / "caught.py").write_text(CAUGHT_IN_SOURCE_TEXT.format(forget=forget))
    done = subprocess.run([sys.executable, "-m", "caught"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, check=False)
    assert done.stdout == "" and done.stderr == "error: interrupted\n", done.stderr
    assert done.returncode == status
