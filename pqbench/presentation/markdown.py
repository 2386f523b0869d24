"""Markdown building blocks: GitHub-flavoured tables, headings, links, and number formats.

Pure functions from data to text. Everything that comes from a run (labels, OS builds,
library versions, reasons, commands) is untrusted: `text` makes it one line of literal
text by backslash-escaping every character that could start Markdown or HTML (CommonMark
§2.4 allows a backslash before any ASCII punctuation), so a label can neither open raw
HTML, an image, a link or emphasis, nor split a table row, nor end a heading. Code spans
and blocks are fenced longer than any backtick run inside them. Strings this module builds
are `Markdown` and are not escaped again. Numbers carry three significant digits and their
unit, which is as much as a benchmark's spread supports.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from pqbench.untrusted import printable

#: A dash for "not measured" or "not applicable", as in the console tables.
MISSING = "–"

# Characters that open inline markup or HTML anywhere in a line (`#` and `$` too: a
# heading's closing sequence, and GitHub's math); and a list marker at the start, in case
# the text starts a line ("- x", "2. y"; `>`, `#` and `*` are escaped anywhere).
_SPECIAL = re.compile(r"([\\`*_\[\]<>&|#~$!])")
_LINE_START = re.compile(r"^(\d{0,9})((?<=\d)[.)]|(?<!\d)[-+])(?=\s|$)")


class Markdown(str):
    """Text that already is Markdown, built here from escaped parts: not escaped again."""


def text(value: object) -> Markdown:
    """Untrusted text as one line of literal Markdown (see the module docstring)."""
    if isinstance(value, Markdown):
        return value
    line = _SPECIAL.sub(r"\\\1", " ".join(printable(value).split()))
    return Markdown(_LINE_START.sub(r"\1\\\2", line))


def escape(value: object) -> Markdown:
    """One table cell: literal text, no line breaks, pipes escaped (GFM table syntax)."""
    return text(value)


def bold(value: object) -> Markdown:
    return Markdown(f"**{text(value)}**")


def table(headers: Sequence[str], rows: Sequence[Sequence[object]],
          align: Sequence[str] | None = None) -> Markdown:
    """A GFM pipe table; `align` holds "l" or "r" per column (left by default)."""
    if align is not None and len(align) != len(headers):
        raise ValueError("one alignment per column")
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"row {row!r} has {len(row)} cells for {len(headers)} columns")
    marks = [("---:" if a == "r" else ":---") for a in (align or ["l"] * len(headers))]
    lines = ["| " + " | ".join(escape(h) for h in headers) + " |",
             "| " + " | ".join(marks) + " |"]
    lines.extend("| " + " | ".join(escape(cell) for cell in row) + " |" for row in rows)
    return Markdown("\n".join(lines))


def heading(level: int, title: object) -> Markdown:
    return Markdown(f"{'#' * level} {text(title)}")


def image(alt: object, relpath: str) -> Markdown:
    """An image of a chart pqbench wrote beside the report: a relative path, never a URL."""
    path = relpath.replace(chr(92), "/")
    if "://" in path or path.startswith("/") or not re.fullmatch(r"[A-Za-z0-9._/-]+", path):
        raise ValueError(f"chart paths are relative file names, not {path!r}")
    return Markdown(f"![{text(alt)}]({path})")


def code_block(content: object, language: str = "") -> Markdown:
    """A fenced block holding `content` verbatim: the fence is longer than any backtick
    run inside (CommonMark §4.5), so nothing in it can close the block early."""
    body = printable(content, keep_newlines=True)
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return Markdown(f"{fence}{text(language)}\n{body}\n{fence}")


def inline_code(content: object) -> Markdown:
    """A code span around `content` (one line), fenced longer than its backtick runs."""
    body = " ".join(printable(content).split())
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return Markdown(f"{fence}{pad}{body}{pad}{fence}")


# --- numbers ------------------------------------------------------------------------------


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def number(value: float | None, digits: int = 3) -> str:
    """`digits` significant digits, thousands separated, never in exponent notation."""
    if value is None or not math.isfinite(value):
        return MISSING
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    rounded = round(value, digits - 1 - magnitude)
    if rounded != 0:  # 0.99996 rounds up to 1.00: one digit fewer after the point
        magnitude = math.floor(math.log10(abs(rounded)))
    decimals = max(digits - 1 - magnitude, 0)
    return f"{rounded:,.{decimals}f}"


def si(value: float | None, unit: str = "", digits: int = 3) -> str:
    """A value with an SI prefix: `1.23 M`, `45.6 k`; below 1000 plain."""
    if not _finite(value):
        return MISSING
    assert value is not None
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor * 0.9995:
            return f"{number(value / factor, digits)} {prefix}{unit}".rstrip()
    return f"{number(value, digits)} {unit}".rstrip()


def duration_us(value: float | None) -> str:
    """Microseconds, switching to ms or s where that reads better."""
    if not _finite(value):
        return MISSING
    assert value is not None
    if value >= 1e6:
        return f"{number(value / 1e6)} s"
    if value >= 1e3:
        return f"{number(value / 1e3)} ms"
    return f"{number(value)} µs"


def byte_rate(bytes_per_sec: float | None) -> str:
    """Throughput in decimal units (MB/s = 10^6 bytes/s, as `openssl speed` prints kB/s)."""
    return si(bytes_per_sec, "B/s")


def byte_count(n: int | None) -> str:
    if n is None:
        return MISSING
    return f"{n:,} B"


def ratio(value: float | None) -> str:
    """A speed ratio: `×2.41`, `×0.873`."""
    if not _finite(value):
        return MISSING
    return f"×{number(value)}"


def percent(value: float | None, digits: int = 1) -> str:
    if not _finite(value):
        return MISSING
    assert value is not None
    return f"{value * 100:+.{digits}f} %"
