"""Tables as CSV: one header line of column names, then one line per row of raw values.

The terminal and Markdown show numbers rounded for reading (`views.numbers`); a CSV
is read by a program, so it carries every value as measured (full precision, no units in
the cells, the unit in the column's name), and an empty cell where there is no value.

A CSV is also opened in spreadsheets, which run a cell that starts with `=`, `+`, `-` or
`@` as a formula (`=HYPERLINK(...)`, `+cmd|' /C calc'!A0`; some strip a leading tab or
carriage return first). Labels, build names, paths and library names come from users and
from imported runs, so every text cell that starts with one of those characters (after
any spaces) is written with a `'` before it, as the OWASP guidance on CSV injection says.
A number stays a number: numeric values, and text that is only a number (`-0.5`), are
written as they are, since a spreadsheet reads them as numbers, never as formulas.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pqbench.platform.untrusted import printable

if TYPE_CHECKING:
    from pqbench.data.record.results import Run

__all__ = ["csv_text", "run_csv"]

#: What a spreadsheet takes for the start of a formula (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def formula_safe(text: str) -> str:
    """`text` as a cell no spreadsheet runs: a `'` before a formula's first character,
    unless the text is only a number."""
    if text.lstrip(" ").startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text.strip()):
        return f"'{text}"
    return text


def _cell(value: Any) -> Any:
    """A CSV cell: None empty, lists joined by spaces, text made printable (a label
    stored by someone else cannot smuggle control characters into a terminal) and
    formula-safe; numbers as they are."""
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        value = " ".join(str(v) for v in value)
    if isinstance(value, str):
        return formula_safe(printable(value))
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


def run_csv(run: Run) -> str:
    """A run as one tidy table (`record.codec.csv_table`: its columns and rows)."""
    from pqbench.data.record import codec

    return csv_text(*codec.csv_table(run))
