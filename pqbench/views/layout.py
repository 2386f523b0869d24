"""How a table fits a width: which columns stay, how wide each is, how it is drawn.

Pure arithmetic over cell texts, so the rule is tested without a terminal. Numbers, names
and ids are never cut or wrapped (a run id a user must copy, "25.8 kops/s"): a column of
them is as wide as its widest cell. Only prose columns (`Column.wrap`: reasons, details,
explanations, labels) wrap, at spaces, keeping words whole up to `WHOLE_WORD` cells.
One style at every width: no box lines, two spaces between columns, a rule under the
header (a table that changed style with the terminal's width read as two different
tables). To fit, in this order: short titles ("impl."); wrap prose to a readable width, then
narrower; leave out columns one at a time (a `group` at once), the highest priority number
first and of equals the rightmost, trying both prose widths after each (priority 0 always
stays).
When even that is too wide, the table is drawn as one block of "title: value" lines per
row (`Plan.records`), which fits any width its single values fit. Room left over
unwraps titles.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len

from pqbench.views.tables import Column

#: Two spaces between columns and nothing at the edges.
COMPACT_GAP = 2
#: Prose keeps at least this width while columns can still be left out instead.
READABLE_PROSE = 24
#: The narrowest prose column, once nothing else can give way.
NARROWEST_PROSE = 10
#: Prose keeps its words whole up to this length (a label, a version); longer ones (paths)
#: are folded across lines rather than cost every other column.
WHOLE_WORD = 40


@dataclass(frozen=True)
class Plan:
    """The columns kept (indices into the table's), their content widths, whether short
    titles are used, each kept column's header as lines, and the columns left out."""

    kept: tuple[int, ...]
    widths: tuple[int, ...]
    short: bool
    headers: tuple[tuple[str, ...], ...]
    dropped: tuple[int, ...]
    records: bool = False

    def total(self) -> int:
        return total_width(self.widths)


def total_width(widths: Sequence[int]) -> int:
    return sum(widths) + COMPACT_GAP * max(len(widths) - 1, 0)


def text_width(text: str) -> int:
    """Terminal cells of the widest line of `text`."""
    return max((cell_len(line) for line in text.split("\n")), default=0)


def _longest_word(text: str) -> int:
    return max((cell_len(word) for word in text.split()), default=0)


def title(column: Column, short: bool) -> str:
    """The column's title, or its short one ("impl.") where room is short."""
    return (column.short or column.title) if short else column.title


def _natural(column: Column, cells: Sequence[str], short: bool) -> int:
    """A column's width with nothing wrapped but its title (at spaces)."""
    return max([_longest_word(title(column, short)), 1, *(text_width(c) for c in cells)])


def _least(column: Column, cells: Sequence[str], prose: int, short: bool,
           whole: int = WHOLE_WORD, floor: bool = True) -> int:
    """The narrowest a column may be: its natural width, or for prose at most `prose`
    (never below its title's longest word, its cells' longest word up to `whole`, nor the
    widest value of a non-prose column)."""
    natural = _natural(column, cells, short)
    if not column.wrap:
        return natural
    words = max((_longest_word(c) for c in cells), default=0)
    return min(natural, max(prose, _longest_word(title(column, short)), min(words, whole),
                            column.min_width if floor else 0))


def header_lines(title: str, width: int) -> tuple[str, ...]:
    """A title wrapped at spaces to `width` (its words fit: widths are at least the
    longest word)."""
    return tuple(textwrap.wrap(title, width, break_long_words=False,
                               break_on_hyphens=False)) or ("",)


def plan(columns: Sequence[Column], cells: Sequence[Sequence[str]], width: int) -> Plan:
    """The first layout, in the order the module docstring gives, that fits `width`.

    `cells` holds the texts column by column (one sequence per column).
    """
    everything = list(range(len(columns)))
    attempts: list[tuple[bool, list[int], int | None, int]] = [
        (False, everything, None, WHOLE_WORD), (True, everything, None, WHOLE_WORD)]
    dropped: list[int] = []
    for unit in [[], *_drop_order(columns)]:
        dropped += unit
        kept = [i for i in everything if i not in dropped]
        attempts += [(True, kept, READABLE_PROSE, WHOLE_WORD),
                     (True, kept, NARROWEST_PROSE, WHOLE_WORD)]
    for short, kept, prose, whole in attempts:
        fitted = _fit(columns, cells, kept, width, short, prose, whole)
        if fitted is not None:
            return _fill_back(columns, cells, fitted, width, prose, whole)
    # A column's `min_width` holds while other columns can go; past that (every column
    # that may go gone), it wraps too, and nothing comes back at its cost.
    for short, kept, prose, whole in attempts[-2:]:
        fitted = _fit(columns, cells, kept, width, short, prose, whole, floor=False)
        if fitted is not None:
            return fitted
    widths = [_natural(columns[i], cells[i], True) for i in everything]
    return Plan(tuple(everything), tuple(widths), True, (), (), records=True)


def _fill_back(columns: Sequence[Column], cells: Sequence[Sequence[str]], fitted: Plan,
               width: int, prose: int | None, whole: int) -> Plan:
    """Columns left out one at a time until the table fit may leave room for some of them
    again (a narrow "kind" dropped before a wide "OS build" was): each is put back, the
    most important first, where the table still fits without wrapping more titles."""
    plan = fitted
    for unit in reversed(_drop_order(columns)):
        if not set(unit) <= set(plan.dropped):
            continue
        kept = sorted([*plan.kept, *unit])
        tried = _fit(columns, cells, kept, width, plan.short, prose, whole)
        # Not at the cost of titles wrapped that were whole ("16 B" over two lines).
        if tried is not None and _title_lines(tried) <= _title_lines(plan):
            plan = tried
    return plan


def _title_lines(plan: Plan) -> int:
    """The titles' lines of wrapping, over every column kept."""
    return sum(len(lines) - 1 for lines in plan.headers)


def _drop_order(columns: Sequence[Column]) -> list[list[int]]:
    """The columns that may be left out, least important first (the highest priority
    number, and of equals the rightmost); a `group` goes as one."""
    units: dict[str, list[int]] = {}
    for i, column in enumerate(columns):
        if column.priority > 0:
            units.setdefault(column.group or f"#{i}", []).append(i)
    return sorted(units.values(), key=lambda unit: (-max(columns[i].priority for i in unit),
                                                    -max(unit)))


def _fit(columns: Sequence[Column], cells: Sequence[Sequence[str]], kept: list[int],
         width: int, short: bool, prose: int | None, whole: int = WHOLE_WORD,
         floor: bool = True) -> Plan | None:
    natural = [_natural(columns[i], cells[i], short) for i in kept]
    if prose is None:
        widths = natural
    else:
        least = [_least(columns[i], cells[i], prose, short, whole, floor) for i in kept]
        spare = width - total_width(least)
        if spare < 0:
            return None
        words = [min(natural[n], max(least[n], max((_longest_word(c) for c in cells[i]),
                                                    default=0)))
                 for n, i in enumerate(kept)]
        floors = [min(natural[n], max(least[n], columns[i].min_width))
                  for n, i in enumerate(kept)]
        widths = _share(least, natural, spare, words, floors)
    if total_width(widths) > width:
        return None
    titles = [title(columns[i], short) for i in kept]
    widths = _unwrap_titles(widths, titles, width - total_width(widths))
    dropped = tuple(i for i in range(len(columns)) if i not in kept)
    headers = tuple(header_lines(text, w) for text, w in zip(titles, widths, strict=True))
    return Plan(tuple(kept), tuple(widths), short, headers, dropped)


def _unwrap_titles(widths: Sequence[int], titles: Sequence[str], spare: int) -> list[int]:
    """Widen columns whose title wraps to the title's length while room is left, the
    cheapest first."""
    widths = list(widths)
    wanted = sorted((cell_len(text) - w, i) for i, (text, w) in enumerate(zip(titles, widths,
                                                                              strict=True))
                    if cell_len(text) > w)
    for extra, i in wanted:
        if extra > spare:
            break
        widths[i] += extra
        spare -= extra
    return widths


def _share(least: Sequence[int], natural: Sequence[int], spare: int,
           words: Sequence[int] | None = None, floors: Sequence[int] | None = None
           ) -> list[int]:
    """Give `spare` cells to the columns below their natural width: first to those whose
    longest word would otherwise be folded mid-word (a path cut "pytho/n" reads worse than
    any wrap at a space), up to that word; then to those below their `min_width` (`floors`,
    once every column that may go has gone), the nearest first; then the one that lacks
    least first, each up to whole, so that as few columns wrap as the room allows."""
    widths = list(least)
    for i, word in enumerate(words or ()):
        grant = min(max(word - widths[i], 0), spare)
        widths[i] += grant
        spare -= grant
    wanted = floors or ()
    for i in sorted(range(len(wanted)), key=lambda i: (wanted[i] - widths[i], i)):
        grant = min(max(wanted[i] - widths[i], 0), spare)
        widths[i] += grant
        spare -= grant
    for i in sorted(range(len(widths)), key=lambda i: (natural[i] - widths[i], i)):
        grant = min(natural[i] - widths[i], spare)
        widths[i] += grant
        spare -= grant
    return widths
