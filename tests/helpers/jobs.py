"""pqbench as a job at a terminal: started on a pseudo-terminal in a session of its own,
its output read as it comes, so a test waits for what the command draws (a progress line
naming a row) before it sends signals, as a user who presses Ctrl-C does."""

from __future__ import annotations

import os
import pty
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path


class Job:
    """`pqbench ARGS` on a terminal; `wait_for` a text, `signal` it, `finish`."""

    def __init__(self, *args: str, db: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        master, slave = pty.openpty()
        merged = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        merged.update(env or {})
        if db is not None:
            merged["PQBENCH_DB"] = str(db)
        self._master = master
        self._chunks: list[bytes] = []
        self._changed = threading.Condition()
        self.process = subprocess.Popen([sys.executable, "-m", "pqbench", *args],
                                        stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                                        env=merged, start_new_session=True)
        os.close(slave)
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self._master, 65536)
            except OSError:
                data = b""
            with self._changed:
                if data:
                    self._chunks.append(data)
                else:
                    self._chunks.append(b"")  # the end: wake every waiter
                self._changed.notify_all()
            if not data:
                return

    @property
    def output(self) -> str:
        """What the job drew so far, escapes removed, redrawn lines as lines."""
        text = b"".join(self._chunks).decode(errors="replace")
        plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
        return re.sub(r"\r(?!\n)", "\n", plain).replace("\r", "")

    def wait_for(self, pattern: str, seconds: float = 240) -> None:
        """Until the output matches `pattern` (a regular expression); fails on the job's
        end or after `seconds`, with what it drew."""
        deadline = time.monotonic() + seconds
        with self._changed:
            while not re.search(pattern, self.output):
                left = deadline - time.monotonic()
                if left <= 0 or (self._chunks and self._chunks[-1] == b""):
                    raise AssertionError(f"{pattern!r} never shown:\n{self.output[-3000:]}")
                self._changed.wait(left)

    def signal(self, *signals: signal.Signals, gap: float = 0.1, group: bool = True) -> None:
        """Send `signals` one after another, `gap` seconds apart: to the whole process
        group as a terminal's Ctrl-C does (`group`), or to pqbench alone as `kill` does."""
        for number, sig in enumerate(signals):
            if number:
                time.sleep(gap)
            if self.process.poll() is not None:
                return
            if group:
                os.killpg(self.process.pid, sig)
            else:
                self.process.send_signal(sig)

    def finish(self, seconds: float = 240) -> tuple[int, str]:
        """The exit status and everything drawn."""
        code = self.process.wait(timeout=seconds)
        self._reader.join(timeout=30)
        os.close(self._master)
        return code, self.output


def wait_until(condition: Callable[[], bool], what: str, seconds: float = 90) -> None:
    """Until `condition()` holds, looked at every 20 ms; fails naming `what` after
    `seconds`. For an event a test cannot be told of (a file that appears, grows), not a
    wait of a fixed time."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"{what} never happened")


def corpus_written(where: Path) -> bool:
    """True once a `files corpus` run in `where` holds a file with bytes in it: the corpus
    is being written (its files may be removed between the listing and the look)."""
    for path in where.glob("*/file*.bin"):
        try:
            if path.stat().st_size > 0:
                return True
        except FileNotFoundError:
            continue
    return False
