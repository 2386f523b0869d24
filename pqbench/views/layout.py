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
stays); the narrower prose where it makes the tallest row shorter.
When even that is too wide, the table is drawn as one block of "title: value" lines per
row (`Plan.records`), which fits any width its single values fit. Room left over
unwraps titles.
Prose columns share the room so that the tallest row is as short as it allows (a list of
eight names over three lines beside operations on one, not over six beside operations on
two); what is left unwraps whole columns, the nearest first. A `Column.notes` column's cells
too tall for a row (`most_lines`) go under the table as numbered notes (`noted`), a repeated
one once.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

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
#: From this width on a row keeps to `WIDE_ROW_LINES` lines, below it to `ROW_LINES`, where a
#: column can send what is taller below the table (`Column.notes`).
WIDE = 100
ROW_LINES = 3
WIDE_ROW_LINES = 2


#: What the terminal wraps a cell's line at: a word with the blanks around it.
_WORD = re.compile(r"\s*\S+\s*")

#: A cell's lines, each as its words: their cells without and with the blanks after them,
#: and whether the word starts the line.
CellSizes = tuple[tuple[tuple[int, int, bool], ...], ...]
#: A column's distinct cells, each as how many rows hold it and its `CellSizes`.
Sizes = tuple[tuple[int, CellSizes], ...]


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


def _title_word(text: str) -> int:
    """A title's longest word as `header_lines` keeps it whole: a number with its unit
    ("16 KiB") is one word there (its space taken for a one-cell character while the
    words are measured)."""
    return _longest_word(_UNIT_SPACE.sub("_", text))


def title(column: Column, short: bool) -> str:
    """The column's title, or its short one ("impl.") where room is short."""
    return (column.short or column.title) if short else column.title


def _natural(column: Column, cells: Sequence[str], short: bool) -> int:
    """A column's width with nothing wrapped but its title (at spaces)."""
    return max([_title_word(title(column, short)), 1, *(text_width(c) for c in cells)])


def _least(column: Column, cells: Sequence[str], prose: int, short: bool,
           whole: int = WHOLE_WORD, floor: bool = True) -> int:
    """The narrowest a column may be: its natural width, or for prose at most `prose`
    (never below its title's longest word, its cells' longest word up to `whole`, nor the
    widest value of a non-prose column)."""
    natural = _natural(column, cells, short)
    if not column.wrap:
        return natural
    words = max((_longest_word(c) for c in cells), default=0)
    return min(natural, max(prose, _title_word(title(column, short)), min(words, whole),
                            column.min_width if floor else 0))


#: The space between a number (or an interval's closing bracket) and its unit: "0.9 %",
#: "5.53 GB/s", "[5.43–5.63] GB/s", "14 df". Prose never breaks a line there.
_UNIT_SPACE = re.compile(r"(?<=[\d\]]) (?=(?:%|(?:[kKMGT]i?)?B(?:/s)?|[kMG]?ops/s|[mµn]?s|df)"
                         r"(?![\w/]))")
#: Where to find what stands for such a space while textwrap breaks the lines: a
#: private-use character (textwrap breaks at ASCII whitespace only) that the text itself
#: does not hold, so that a label holding one is shown as it is.
_PRIVATE_USE = range(0xE000, 0xF900)


def wrap_prose(text: str, width: int, first: str = "", hang: str = "") -> list[str]:
    """`text` wrapped at spaces to `width` (words kept whole, never broken at hyphens),
    its first line after `first` and the others after `hang`, never between a number and
    its unit: "spread of 0.9 %" does not end a line with "0.9" and start the next with
    "%"."""
    glue = next(chr(c) for c in _PRIVATE_USE if chr(c) not in text)
    glued = _UNIT_SPACE.sub(glue, text)
    return [line.replace(glue, " ") for line in
            textwrap.wrap(glued, width, initial_indent=first, subsequent_indent=hang,
                          break_long_words=False, break_on_hyphens=False)]


def header_lines(title: str, width: int) -> tuple[str, ...]:
    """A title wrapped at spaces to `width` (its words fit: widths are at least the
    longest word)."""
    return tuple(wrap_prose(title, width)) or ("",)


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
            if prose == READABLE_PROSE:  # narrower prose, where that shortens the rows
                narrower = _fit(columns, cells, kept, width, short, NARROWEST_PROSE, whole)
                if narrower is not None and \
                        tallest_row(cells, narrower) < tallest_row(cells, fitted):
                    fitted, prose = narrower, NARROWEST_PROSE
            return _fill_back(columns, cells, fitted, width, prose, whole)
    # A column's `min_width` holds while other columns can go; past that (every column
    # that may go gone), it wraps too, and nothing comes back at its cost.
    for short, kept, prose, whole in attempts[-2:]:
        fitted = _fit(columns, cells, kept, width, short, prose, whole, floor=False)
        if fitted is not None:
            return fitted
    widths = [_natural(columns[i], cells[i], True) for i in everything]
    return Plan(tuple(everything), tuple(widths), True, (), (), records=True)


@dataclass(frozen=True)
class Noted:
    """A plan once the `Column.notes` cells too tall for a row went below the table: the
    cells drawn (column by column, "[1]" where a note went) and the notes, in order."""

    plan: Plan
    cells: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...]


def most_lines(width: int) -> int:
    """The lines a row keeps to where its tall cells can go below as notes: two from
    `WIDE` columns on, three below."""
    return WIDE_ROW_LINES if width >= WIDE else ROW_LINES


def noted(columns: Sequence[Column], cells: Sequence[Sequence[str]], width: int) -> Noted:
    """`plan` for `width` once `Column.notes` cells went below the table as numbered notes
    (a text met again keeps its number), planned again after each move, as the room they
    leave goes to the others: while the table does not fit, the text with the longest word
    (it sets how narrow its column may go); then every cell that takes more than
    `most_lines` lines at its column's width; then, while another column's cells keep a
    row taller than that, the tallest notes cells, where that makes the tallest row
    shorter. Where the table would not fit with every such cell gone, none goes."""
    noting = [i for i, column in enumerate(columns) if column.notes]
    drawn = [tuple(column) for column in cells]
    every = [("[0]",) * len(column) if i in noting else column for i, column in enumerate(drawn)]
    if not noting or not _shown(plan(columns, every, width), noting):
        return Noted(plan(columns, drawn, width), tuple(drawn), ())
    notes: list[str] = []
    fitted = plan(columns, drawn, width)
    while True:
        refs = {f"[{n}]" for n in range(1, len(notes) + 1)}
        widths = dict(zip(fitted.kept, fitted.widths, strict=True))
        left = [(t, i) for i in noting for t in drawn[i] if t not in refs]
        if not _shown(fitted, noting):
            going = {max(left, key=lambda found: (_longest_word(found[0]),
                                                  cell_len(found[0])))[0]} if left else set()
        else:
            going = {t for t, i in left if lines_at(t, widths[i]) > most_lines(width)}
            if not going:
                shorter = _shorter(columns, drawn, notes, noting, fitted, width)
                if shorter is not None:
                    drawn, notes, fitted = shorter
                    continue
        if not going:
            return _numbered(fitted, drawn, notes)
        drawn, notes = _moved(drawn, notes, noting, going)
        fitted = plan(columns, drawn, width)


def _shorter(columns: Sequence[Column], drawn: Sequence[tuple[str, ...]],
             notes: Sequence[str], noting: Sequence[int], fitted: Plan, width: int
             ) -> tuple[list[tuple[str, ...]], list[str], Plan] | None:
    """Where another column keeps a row taller than `most_lines`: the notes cells of two
    lines or more moved, the tallest first, as far as it takes to make the tallest row
    shorter (the room they leave goes to that column); None where moving them does not."""
    tallest = tallest_row(drawn, fitted)
    if tallest <= most_lines(width):
        return None
    widths = dict(zip(fitted.kept, fitted.widths, strict=True))
    refs = {f"[{n}]" for n in range(1, len(notes) + 1)}
    heights = {t: lines_at(t, widths[i]) for i in noting for t in drawn[i] if t not in refs}
    for least in sorted({h for h in heights.values() if h > 1}, reverse=True):
        moved, more = _moved(drawn, notes, noting, {t for t, h in heights.items()
                                                    if h >= least})
        again = plan(columns, moved, width)
        if _shown(again, noting) and tallest_row(moved, again) < tallest:
            return moved, more, again
    return None


def _moved(drawn: Sequence[tuple[str, ...]], notes: Sequence[str], noting: Sequence[int],
           going: set[str]) -> tuple[list[tuple[str, ...]], list[str]]:
    """The `going` texts of the `noting` columns as notes, "[n]" in their place."""
    notes = [*notes, *(t for t in dict.fromkeys(t for i in noting for t in drawn[i])
                       if t in going and t not in notes)]
    return ([tuple(f"[{notes.index(t) + 1}]" if i in noting and t in going else t
                   for t in column) for i, column in enumerate(drawn)], notes)


def _numbered(fitted: Plan, drawn: Sequence[tuple[str, ...]], notes: Sequence[str]
              ) -> Noted:
    """The notes numbered in the order the table refers to them, row by row."""
    refs = {f"[{n}]" for n in range(1, len(notes) + 1)}
    order = list(dict.fromkeys(text for row in zip(*drawn, strict=True) for text in row
                               if text in refs))
    new = {old: f"[{n}]" for n, old in enumerate(order, 1)}
    return Noted(fitted, tuple(tuple(new.get(text, text) for text in column)
                               for column in drawn),
                 tuple(notes[int(old[1:-1]) - 1] for old in order))


def _shown(fitted: Plan, columns: Sequence[int]) -> bool:
    """Whether `fitted` draws a table with `columns` in it."""
    return not fitted.records and set(columns) <= set(fitted.kept)


def tallest_row(cells: Sequence[Sequence[str]], plan: Plan) -> int:
    """The lines the tallest row of `plan` takes."""
    return max((_tallest(_sizes(tuple(cells[i])), w)
                for i, w in zip(plan.kept, plan.widths, strict=True)), default=1)


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
        widths = _share(least, natural, spare, words, floors,
                        [cells[i] if columns[i].wrap else () for i in kept])
    if total_width(widths) > width:
        return None
    titles = [title(columns[i], short) for i in kept]
    widths = _unwrap_titles(widths, titles, width - total_width(widths))
    if prose is not None:  # what is still left: a table that wraps takes the width
        widths = _to_whole(widths, natural, width - total_width(widths))[0]
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
           words: Sequence[int] | None = None, floors: Sequence[int] | None = None,
           prose: Sequence[Sequence[str]] = ()) -> list[int]:
    """Give `spare` cells to the columns below their natural width: first to those whose
    longest word would otherwise be folded mid-word (a path cut "pytho/n" reads worse than
    any wrap at a space), up to that word; then to those below their `min_width` (`floors`,
    once every column that may go has gone), the nearest first; then to the prose columns
    (`prose`: each column's cells, empty for one that does not wrap) so that the tallest
    row is as short as the room allows (`_even`); then whole columns, the one that lacks
    least first, so that as few columns wrap as the room allows; then where a cell more
    saves the most lines (`_fewer_lines`). What is left unwraps titles (`_fit`)."""
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
    sizes = [_sizes(tuple(cells)) if cells else () for cells in prose]
    sizes += [()] * (len(widths) - len(sizes))
    widths, spare = _even(widths, natural, spare, sizes)
    widths, spare = _to_whole(widths, natural, spare, whole=True)
    return _fewer_lines(widths, natural, spare, sizes)[0]


def _to_whole(widths: Sequence[int], natural: Sequence[int], spare: int,
              whole: bool = False) -> tuple[list[int], int]:
    """`spare` to the columns below their natural width, the one that lacks least first;
    only those it makes whole (`whole`), or as far as it goes; and the cells left."""
    widths = list(widths)
    for i in sorted(range(len(widths)), key=lambda i: (natural[i] - widths[i], i)):
        grant = min(max(natural[i] - widths[i], 0), spare)
        if whole and grant < natural[i] - widths[i]:
            break
        widths[i] += grant
        spare -= grant
    return widths, spare


def _even(widths: Sequence[int], natural: Sequence[int], spare: int,
          sizes: Sequence[Sizes]) -> tuple[list[int], int]:
    """The widths at which every prose cell (`sizes`, empty for a column that does not
    wrap) takes at most as many lines as the fewest that `spare` more cells can pay for,
    each column as narrow as that allows (a cell whose lines are its own, "\n", no shorter
    than at its natural width); and the cells left."""
    widths = list(widths)
    if not any(sizes):
        return widths, spare
    tallest = max(_tallest(s, w) for s, w in zip(sizes, widths, strict=True) if s)
    for lines in range(1, tallest):
        wanted = [_narrowest(s, lines, w, n) if s else w
                  for s, w, n in zip(sizes, widths, natural, strict=True)]
        cost = sum(wanted) - sum(widths)
        if cost <= spare:
            return wanted, spare - cost
    return widths, spare


def _fewer_lines(widths: Sequence[int], natural: Sequence[int], spare: int,
                 sizes: Sequence[Sizes]) -> tuple[list[int], int]:
    """`spare` given a few cells at a time where they save the most lines per cell (over
    every row of the column), while a grant saves any; and the cells left."""
    widths = list(widths)
    while spare > 0:
        best: tuple[float, int, int] | None = None  # lines saved per cell, column, cells
        for n, column in enumerate(sizes):
            if not column:
                continue
            now = _total(column, widths[n])
            for extra in range(1, min(spare, natural[n] - widths[n]) + 1):
                saved = now - _total(column, widths[n] + extra)
                if saved > 0:
                    if best is None or saved / extra > best[0]:
                        best = (saved / extra, n, extra)
                    break
        if best is None:
            break
        widths[best[1]] += best[2]
        spare -= best[2]
    return widths, spare


@lru_cache(maxsize=256)
def _sizes(cells: tuple[str, ...]) -> Sizes:
    counts: dict[str, int] = {}
    for text in cells:
        counts[text] = counts.get(text, 0) + 1
    return tuple((count, _cell_sizes(text)) for text, count in counts.items())


def _cell_sizes(text: str) -> CellSizes:
    return tuple(tuple((cell_len(word.group().rstrip()), cell_len(word.group()),
                        word.start() == 0) for word in _WORD.finditer(line))
                 for line in text.split("\n"))


def lines_at(text: str, width: int) -> int:
    """The lines `text` takes wrapped to `width` as the terminal wraps a prose cell
    (rich's `divide_line`): a word goes on where the line has room for it, else on the
    next line; one wider than a line is folded, blanks and all, across lines."""
    return _line_count(_cell_sizes(text), width)


def _line_count(lines: CellSizes, width: int) -> int:
    count = 0
    for words in lines:
        count += 1
        used = 0
        for bare, whole, first in words:
            if width - used >= bare:
                used += whole
            elif bare > width:
                folds = max(-(-whole // width), 1)
                count += folds - (1 if first else 0)
                used = whole - (folds - 1) * width
            elif used and not first:
                count += 1
                used = whole
    return count


def _tallest(sizes: Sizes, width: int) -> int:
    return max((_line_count(cell, width) for _, cell in sizes), default=1)


def _total(sizes: Sizes, width: int) -> int:
    return sum(count * _line_count(cell, width) for count, cell in sizes)


def _narrowest(sizes: Sizes, lines: int, low: int, high: int) -> int:
    """The narrowest width from `low` to `high` at which no cell takes more than `lines`
    lines (or than it takes at `high`)."""
    lines = max(lines, _tallest(sizes, high))
    while low < high:
        middle = (low + high) // 2
        if _tallest(sizes, middle) <= lines:
            high = middle
        else:
            low = middle + 1
    return low
