"""Tables as data: columns with a kind and a priority, cells as plain values.

A view (`views.runs`, `views.comparisons`) builds a `Table` once; the rich adapter
(`views.console.rich_table`) draws it on a terminal and the Markdown adapter
(`views.markdown.render_table`) writes it into `--markdown` output and reports. Both
format every cell through `cell_text`, so the terminal and the report print the same
figures, and both escape every cell for their medium.

A cell is a plain value (text, a number, None) formatted by its column's kind, or a
`Cell` where one row needs another kind or unit than its column (bytes/s beside ops/s) or
stands out (a verdict that is a change).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pqbench.views import numbers

Align = Literal["left", "right"]

#: How a column's values become text; "text" is str(), everything else `numbers`.
FORMATS: dict[str, Callable[[Any, str], str]] = {
    "text": lambda value, _unit: str(value),
    "number": lambda value, _unit: numbers.number(value),
    "si": lambda value, unit: numbers.si(value, unit),
    "rate": lambda value, unit: numbers.rate(value, unit),
    "count": lambda value, _unit: numbers.count(value),
    "bytes": lambda value, _unit: numbers.byte_count(value),
    "size": lambda value, _unit: numbers.size(value),
    "ratio": lambda value, _unit: numbers.ratio(value),
    "percent": lambda value, _unit: numbers.percent(value),
    "plus_minus": lambda value, _unit: numbers.plus_minus(value),
    "duration": lambda value, _unit: numbers.duration_us(value),
    "p": lambda value, _unit: numbers.p_value(value),
}


@dataclass(frozen=True)
class Column:
    """A column: its title, how its cells are formatted, and how important it is.

    `priority` 0 is always shown; a narrow terminal leaves out the highest first
    (`views.layout`). `wrap` marks prose (reasons, details), the only cells that
    may wrap: numbers, names and ids never are. A column no row fills (every cell empty
    or `numbers.MISSING`) is left out unless it is not `optional`. Numbers are
    right-aligned unless `align` says otherwise.
    """

    title: str
    kind: str = "text"
    unit: str = ""
    priority: int = 0
    align: Align | None = None
    optional: bool = True
    wrap: bool = False
    #: The title where room is short ("impl." for "implementation").
    short: str | None = None
    #: Columns of one group are left out together (before and after).
    group: str = ""
    #: Prose narrower than this wraps only once every other column that may go has gone
    #: (a change beside its interval, "13.9x slower [13.4–14.4]", stays on one line).
    min_width: int = 0
    #: Prose whose cells too tall for a row go under the table as numbered notes, "[1]" in
    #: their place (`views.layout.noted`): a check's long reason.
    notes: bool = False

    @property
    def alignment(self) -> Align:
        return self.align or ("left" if self.kind == "text" else "right")


@dataclass(frozen=True)
class Cell:
    """A value whose kind, unit or emphasis differs from its column's."""

    value: Any
    kind: str | None = None
    unit: str | None = None
    strong: bool = False


@dataclass(frozen=True)
class Table:
    """A titled table; `tones` (one per row, or empty) say how a row reads: "faster",
    "slower", "inconclusive" ... (the terminal colours them; Markdown does not)."""

    title: str | None
    columns: tuple[Column, ...]
    rows: tuple[tuple[Any, ...], ...]
    tones: tuple[str | None, ...] = ()
    show_header: bool = True

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"row {row!r} has {len(row)} cells for "
                                 f"{len(self.columns)} columns")
        if self.tones and len(self.tones) != len(self.rows):
            raise ValueError("one tone per row, or none")

    def tone(self, index: int) -> str | None:
        return self.tones[index] if self.tones else None

    def without_empty_columns(self) -> Table:
        """The table without the optional columns whose every cell is empty (None, "",
        or shown as `numbers.MISSING`)."""
        if not self.rows:
            return self
        keep = [i for i, column in enumerate(self.columns)
                if not column.optional
                or any(cell_text(row[i], column) not in ("", numbers.MISSING)
                       for row in self.rows)]
        if len(keep) == len(self.columns):
            return self
        return Table(self.title, tuple(self.columns[i] for i in keep),
                     tuple(tuple(row[i] for i in keep) for row in self.rows), self.tones,
                     self.show_header)


def _value(cell: Any) -> Any:
    return cell.value if isinstance(cell, Cell) else cell


def cell_text(cell: Any, column: Column) -> str:
    """A cell as text through the one formatter; None is `numbers.MISSING`."""
    value = _value(cell)
    if value is None:
        return numbers.MISSING
    kind = (cell.kind if isinstance(cell, Cell) else None) or column.kind
    unit = cell.unit if isinstance(cell, Cell) and cell.unit is not None else column.unit
    return FORMATS[kind](value, unit)


def strong(cell: Any) -> bool:
    return isinstance(cell, Cell) and cell.strong


def texts(table: Table) -> list[list[str]]:
    """Every cell of `table` as text, row by row."""
    return [[cell_text(cell, column) for cell, column in zip(row, table.columns, strict=True)]
            for row in table.rows]


def key_values(title: str | None, pairs: Sequence[tuple[str, Any]]) -> Table:
    """A two-column table of names and values, without a header; long values wrap."""
    return Table(title, (Column("key"), Column("value", wrap=True)),
                 tuple((key, _blank_as_missing(value)) for key, value in pairs),
                 show_header=False)


def _blank_as_missing(value: Any) -> Any:
    return None if value in (None, "", [], {}) else value
