"""pqbench on a pseudo-terminal of a given width, as a user at a terminal meets it:
everything it drew (stdout and stderr, progress included), escapes and carriage returns
removed, as lines (progress lines are redrawn in place)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path


def in_terminal(*args: str, columns: int, db: Path, env: dict[str, str] | None = None,
                expect: int = 0) -> str:
    """`pqbench ARGS` on a terminal `columns` wide with its store at `db`; the exit code
    must be `expect`."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    merged = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    merged.update(env or {})
    merged["PQBENCH_DB"] = str(db)
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    done = subprocess.run([sys.executable, "-m", "pqbench", *args], stdin=subprocess.DEVNULL,
                          stdout=slave, stderr=slave, env=merged, timeout=600, check=False)
    os.close(slave)
    reader.join(timeout=30)
    os.close(master)
    text = b"".join(chunks).decode(errors="replace")
    assert done.returncode == expect, text
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    return re.sub(r"\r(?!\n)", "\n", plain).replace("\r", "")
