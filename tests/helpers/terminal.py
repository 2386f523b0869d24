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


def read_table(text: str, title: str, key: str | None = None, end: str | None = None
               ) -> list[dict[str, str]]:
    """The table under the line that starts with `title`, as pqbench draws it (a header,
    a rule, rows whose wrapped cells go on in the lines below): one dict per row, each
    cell's lines joined by a space. Columns start where their header's words start; a
    header wrapped over two lines is joined too. A row starts on a line whose `key` column
    (default: the first) is filled. The table ends at a blank line, at a line that starts
    with `end` (the next table's title), or at the first line that does not keep the two
    blanks between its columns (a note)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rule = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("─"))
    header_lines = lines[start + 1:rule]
    starts = sorted({0} | {m.start() for line in header_lines
                           for m in re.finditer(r"(?<=  )\S", line)})
    bounds = list(zip(starts, [*starts[1:], None], strict=True))
    names = [" ".join(" ".join(line[a:b].split()) for line in header_lines
                      if line[a:b].strip()) for a, b in bounds]

    def in_grid(line: str) -> bool:
        return all(not line[s - 2:s].strip() for s in starts[1:])

    first = names.index(key) if key is not None else 0
    rows: list[dict[str, list[str]]] = []
    for line in lines[rule + 1:]:
        if not line.strip() or not in_grid(line) or (end and line.startswith(end)):
            break
        cells = [line[a:b].strip() for a, b in bounds]
        if cells[first] or not rows:
            rows.append({name: [cell] if cell else [] for name, cell in zip(names, cells,
                                                                             strict=True)})
        else:
            for name, cell in zip(names, cells, strict=True):
                if cell:
                    rows[-1][name].append(cell)
    return [{name: " ".join(parts) for name, parts in row.items()} for row in rows]
