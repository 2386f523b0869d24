"""Markdown building blocks: GitHub-flavoured tables, headings, links, and number formats.

Pure functions from data to text. Cells are escaped so that a `|` in a library version or
a reason never splits a table row; numbers carry three significant digits and their unit,
which is as much as a benchmark's spread supports.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: A dash for "not measured" or "not applicable", as in the console tables.
MISSING = "–"


def escape(text: object) -> str:
    """One table cell: no line breaks, no unescaped pipes (GFM table syntax)."""
    value = str(text).replace("\\", "\\\\").replace("|", "\\|")
    return " ".join(value.split())


def table(headers: Sequence[str], rows: Sequence[Sequence[object]],
          align: Sequence[str] | None = None) -> str:
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
    return "\n".join(lines)


def heading(level: int, text: str) -> str:
    return f"{'#' * level} {text}"


def image(alt: str, relpath: str) -> str:
    """An image with a relative link; the path uses forward slashes as URLs do."""
    return f"![{alt}]({relpath.replace(chr(92), '/')})"


def code_block(text: str, language: str = "") -> str:
    return f"```{language}\n{text}\n```"


def inline_code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


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
