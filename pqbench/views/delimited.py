"""Tables as CSV: one header line of column names, then one line per row of raw values.

The terminal and Markdown show numbers rounded for reading (`views.numbers`); a CSV
is read by a program, so it carries every value as measured (full precision, no units in
the cells, the unit in the column's name), and an empty cell where there is no value.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any

from pqbench.platform.untrusted import printable

__all__ = ["csv_text"]


def _cell(value: Any) -> Any:
    """A CSV cell: None empty, lists joined by spaces, text made printable (a label
    stored by someone else cannot smuggle control characters into a terminal)."""
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    if isinstance(value, str):
        return printable(value)
    return value


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """`header`, then `rows`, as CSV (RFC 4180 quoting, "\\n" line ends)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"row {row!r} has {len(row)} cells for {len(header)} columns")
        writer.writerow([_cell(v) for v in row])
    return out.getvalue()
