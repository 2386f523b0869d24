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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


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


def _separators(lines: list[str]) -> list[tuple[int, int]]:
    """Runs of two or more positions blank in every one of `lines` (between the first and
    the last position any line uses): where one column ends and the next begins."""
    width = max(len(line) for line in lines)
    blank = [all(i >= len(line) or line[i] == " " for line in lines) for i in range(width)]
    runs, start = [], None
    for i, is_blank in enumerate([*blank, False]):
        if is_blank and start is None:
            start = i
        elif not is_blank and start is not None:
            if i - start >= 2 and start > 0 and i < width:
                runs.append((start, i))
            start = None
    return runs


def read_table(text: str, title: str, key: str | None = None, end: str | None = None
               ) -> list[dict[str, str]]:
    """The table under the line that starts with `title`, as pqbench draws it (a header,
    a rule, rows whose wrapped cells go on in the lines below): one dict per row, each
    cell's lines joined by a space. Columns are where the header and every row leave two
    or more blanks; a header wrapped over two lines is joined. A row starts on a line
    whose `key` column (default: the first) is filled. The table ends at a blank line, at
    a line that starts with `end` (the next table's title), or at the first line that
    would leave fewer columns than the header has (a note, another table's title)."""
    return list(drawn_table(text, title, key, end).rows)


def drawn_table(text: str, title: str, key: str | None = None, end: str | None = None
                ) -> Drawn:
    """`read_table`'s table with how many lines each row took."""
    return _read(text, title, key, end)


@dataclass(frozen=True)
class Drawn:
    """One table as drawn: its title (the line above its header), its columns' names, its
    rows (each cell's lines joined), how many lines each row took and how wide it is."""

    title: str
    names: tuple[str, ...]
    rows: tuple[dict[str, str], ...]
    heights: tuple[int, ...]
    #: The width it was laid out to: its rule's.
    width: int = 0


def tables(text: str) -> list[Drawn]:
    """Every table drawn in `text` (a header above a rule of "─"), in order. A row starts
    where its shape says: a cell's lines run down from the row's first line, so a line
    with a cell filled where the line above is blank, or filled wherever the row's first
    line is, or filling the last column below a cell that closed its bracketed part there
    (an answer's interval: `_closed`), starts a row; a line filled in fewer places, or in
    the first column alone (a name's second line, a note such as "58 more with --all",
    even below an answer's second line), goes on the row above."""
    lines = text.splitlines()
    found = []
    for rule, line in enumerate(lines):
        if not line or set(line.rstrip()) != {"─"}:
            continue
        top = _header_top(lines, 0, rule)
        if top < 1:
            continue
        drawn = _read("\n".join(lines[top - 1:]), lines[top - 1], None, None, by_shape=True)
        # A title wrapped over lines above (prose: no two blanks in a row, as columns have).
        first = top - 1
        while first > 0 and top - first < 3 and lines[first - 1].strip() and \
                not lines[first - 1].startswith(" ") and \
                "  " not in lines[first - 1].strip() and "─" not in lines[first - 1]:
            first -= 1
        found.append(replace(drawn, title=" ".join(lines[first:top])))
    return found


def _header_top(lines: list[str], start: int, rule: int) -> int:
    """The first line of the header above `rule`: the line above the rule, and the lines
    above it where a title wrapped there (they start blank: a first column's title rarely
    wraps, a table's title does not start with blanks); a title that wraps may be drawn
    on the line below instead (that line then starts blank)."""
    top = rule - 1
    while top - 1 > start and lines[top - 1].startswith(" "):  # titles wrapped upwards
        top -= 1
    if top == rule - 1 and top - 1 > start and lines[top].startswith(" "):
        top -= 1  # a title wrapped downwards: the header's first line is the one above
    return top


def _closed(cell: str) -> bool:
    """Whether a cell's text ends a bracketed part it opened ("1.19x slower [1.12–1.26]"):
    a line below it in its column starts another row, as a wrapped interval's first line
    leaves its bracket open."""
    return "[" in cell and cell.endswith("]") and cell.count("[") == cell.count("]")


def _read(text: str, title: str, key: str | None, end: str | None, *,
          by_shape: bool = False) -> Drawn:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rule = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("─"))
    top = _header_top(lines, start, rule)
    header_lines = lines[top:rule]
    columns = len(_separators(header_lines)) + 1
    body: list[str] = []
    for line in lines[rule + 1:]:
        if not line.strip() or (end and line.startswith(end)):
            break
        if len(_separators([*header_lines, *body, line])) < columns - 1:
            break
        body.append(line)
    seps = _separators([*header_lines, *body])
    bounds = list(zip([0, *(b for _, b in seps)], [*(a for a, _ in seps), None], strict=True))
    names = [" ".join(" ".join(line[a:b].split()) for line in header_lines
                      if line[a:b].strip()) for a, b in bounds]
    first = names.index(key) if key is not None else 0
    rows: list[dict[str, list[str]]] = []
    heights: list[int] = []
    above: set[int] = set()
    opened: set[int] = set()
    previous: list[str] = []
    for line in body:
        cells = [line[a:b].strip() for a, b in bounds]
        filled = {i for i, cell in enumerate(cells) if cell}
        starts = (not (filled <= above) or filled >= opened
                  or (len(cells) - 1 in filled and _closed(previous[-1]))) if by_shape \
            else bool(cells[first])
        if by_shape and filled == {0}:
            starts = False  # a name's second line, or a note, even below a wrapped answer
        above, previous = filled, cells
        if starts or not rows:
            opened = filled
            rows.append({name: [cell] if cell else [] for name, cell in zip(names, cells,
                                                                             strict=True)})
            heights.append(1)
        else:
            heights[-1] += 1
            for name, cell in zip(names, cells, strict=True):
                if cell:
                    rows[-1][name].append(cell)
    return Drawn(lines[start], tuple(names),
                 tuple({name: " ".join(parts) for name, parts in row.items()} for row in rows),
                 tuple(heights), len(lines[rule].rstrip()))


def rendered(table: Any, width: int) -> str:
    """A `views.tables.Table` as the terminal draws it `width` columns wide (no colour)."""
    import io

    from rich.console import Console

    from pqbench.views import console

    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None).print(console.rich_table(table))
    return buffer.getvalue()


def notes_below(text: str) -> dict[str, str]:
    """The numbered notes drawn under a table ("[1] text", its further lines indented):
    "[1]" to the note's text, its lines joined by a space."""
    found: dict[str, list[str]] = {}
    last = None
    for line in text.splitlines():
        start = re.match(r"(\[\d+\]) +(\S.*)", line)
        if start:
            last = start.group(1)
            found[last] = [start.group(2)]
        elif last is not None and line.startswith(" ") and line.strip():
            found[last].append(line.strip())
        else:
            last = None
    return {ref: " ".join(parts) for ref, parts in found.items()}
