"""The terminal: rich tables and progress bars, and the only module that prints.

Tables and progress go to stderr when stdout carries JSON or CSV, so machine-readable
output is never mixed with anything else. Tables arrive as data (`views.tables`,
built by `views.runs` and `views.comparisons`) and `rich_table` draws them:
the report's Markdown adapter draws the same tables with the same figures.

Labels, OS builds, host names, paths and error texts come from users and from imported
files, so nothing they hold may steer the terminal: every table cell, title, message and
progress line goes through `safe` (`pqbench.platform.untrusted.printable`: control characters and
bidirectional overrides removed, passwords redacted) and reaches rich as `Text`, which
rich never parses as markup.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleDimensions, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.table import Column as RichColumn
from rich.table import Table as RichTable
from rich.text import Text

from pqbench.data.record.results import Problem, Run
from pqbench.platform.untrusted import printable
from pqbench.views import layout, numbers, runs, tables
from pqbench.views import ratios as ratio_views
from pqbench.views.runs import unstable_rows

if TYPE_CHECKING:
    from pqbench.analysis.figures import RunFigures
    from pqbench.analysis.ratios import Across, Ratio

__all__ = ["FittedTable", "SafeTable", "clean", "error", "note", "print_json", "print_table",
           "progress_bar", "rich_table", "safe", "show_comparison", "show_files_run",
           "show_load", "show_run", "status", "stderr", "stdout", "unstable_rows",
           "warn_unstable", "warn_unsteady", "warning", "write"]


def clean(value: object) -> str:
    """Text fit for a terminal: see `pqbench.platform.untrusted.printable`."""
    return printable(value)


def safe(value: object, style: str = "") -> Text:
    """`clean` text as a rich Text: shown as it is, never read as [markup]."""
    return Text(clean(value), style=style)


class SafeTable(RichTable):
    """A rich Table whose title and string cells are shown literally (see `safe`)."""

    def __init__(self, title: str | None = None, **kwargs: Any) -> None:
        super().__init__(title=None if title is None else safe(title), **kwargs)

    def add_row(self, *cells: Any, **kwargs: Any) -> None:
        super().add_row(*(safe(c) if isinstance(c, str) else c for c in cells), **kwargs)


#: The width when no terminal is anywhere (cron, CI) and COLUMNS is not set: nothing
#: is left out or wrapped for want of room.
UNBOUNDED = 1000


class _Terminal(Console):
    """A console whose width is looked up at each print: COLUMNS when set (piped or not,
    as the environment's convention is), else the width of the terminal that stdout,
    stderr or stdin is (`pqbench runs | less` lays out for the terminal less runs in),
    else `UNBOUNDED`."""

    @property  # type: ignore[misc]  # read-only here: the width is looked up, never set
    def size(self) -> ConsoleDimensions:
        columns = os.environ.get("COLUMNS", "")
        if columns.isdigit() and int(columns) > 0:
            return ConsoleDimensions(int(columns), super().size.height)
        for fd in (1, 2, 0):
            try:
                found = os.get_terminal_size(fd)
            except (OSError, ValueError):
                continue
            if found.columns > 0:
                return ConsoleDimensions(found.columns, found.lines or 25)
        return ConsoleDimensions(UNBOUNDED, 25)


def _console(to_stderr: bool) -> Console:
    return _Terminal(stderr=to_stderr, highlight=False, emoji=False)


stdout = _console(False)
stderr = _console(True)

#: How a row's tone (a verdict) is coloured.
TONES = {"faster": "green", "slower": "red", "inconclusive": "yellow",
         "too few runs": "yellow", "failed": "red"}


class FittedTable:
    """A table as data, drawn by rich for the width it is printed at: columns laid out by
    `views.layout` (dropped by priority, prose wrapped, never a number, name or id
    cut), every cell through the one formatter and shown literally, columns no row fills
    left out, rows coloured by their tone, and a line naming the columns left out."""

    def __init__(self, table: tables.Table) -> None:
        self.table = table.without_empty_columns()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = self.table
        texts = tables.texts(table)
        by_column = [[row[i] for row in texts] for i in range(len(table.columns))]
        found = layout.noted(table.columns, by_column, options.max_width)
        plan = found.plan
        if plan.records:
            yield from _records(table, texts, options.max_width)
            return
        drawn = _one_line_table(table, found, console, options)
        if drawn is None:
            drawn = console.render_lines(_rich_table(table, found), options, pad=False)
        # Each line without the spaces rich pads it with to the table's width: a copied
        # line or a `grep` of it ends where its last figure does.
        for line in drawn:
            yield from _rstrip(line)
            yield Segment.line()
        for number, note in enumerate(found.notes, 1):
            hang = " " * len(f"[{len(found.notes)}] ")
            for part in wrapped(clean(note), options.max_width, f"[{number}] ".ljust(len(hang)),
                                hang):
                yield Text(part)
        if plan.dropped:
            # Wrapped here as every note is (continuations indented, no space left at a
            # line's end), not by rich, which would leave both.
            names = ", ".join(table.columns[i].title for i in plan.dropped)
            said = f"not shown at {options.max_width} columns: {names} (a wider terminal " \
                   "shows them)"
            for part in wrapped(clean(said), options.max_width, hang="  "):
                yield safe(part, "dim")


def _rich_table(table: tables.Table, found: layout.Noted) -> RichTable:
    """The table as rich draws it: the columns `found` kept, at their widths."""
    plan = found.plan
    drawn = RichTable(title=None if table.title is None else _title(table.title, plan.total()),
                      title_justify="left", show_header=table.show_header,
                      box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                      collapse_padding=True)
    for i, width, header in zip(plan.kept, plan.widths, plan.headers, strict=True):
        column = table.columns[i]
        drawn.add_column(Text("\n").join(safe(line) for line in header),
                         justify=column.alignment, width=width, no_wrap=not column.wrap,
                         overflow="fold")
    for index, row in enumerate(table.rows):
        drawn.add_row(*(safe(found.cells[i][index], "bold" if tables.strong(row[i]) else "")
                        for i in plan.kept), style=TONES.get(table.tone(index) or ""))
    return drawn


def _title(title: str, width: int) -> Text:
    """A table's title wrapped as prose is (`layout.wrap_prose`: never between a number and
    its unit, "75 %"), its lines then short enough that rich keeps them as they are."""
    return Text("\n").join(safe(line) for line in layout.wrap_prose(clean(title),
                                                                     max(width, 20)))


def _one_line_table(table: tables.Table, found: layout.Noted, console: Console,
                    options: ConsoleOptions) -> list[list[Segment]] | None:
    """The lines `_rich_table` draws, segment for segment and style for style, made
    directly where that is simple: every header and cell one line that fits its column,
    the table within the width. rich lays out, pads and styles each cell through three
    renderables, several times the rest of `show`'s drawing for a run's 80 rows; here each
    cell is a justified string and its padding. None where it is not simple (a cell that
    wraps, a header of two lines, a cell with spaces at an end, which rich trims)."""
    plan = found.plan
    widths, count = plan.widths, len(plan.widths)
    table_width = sum(widths) + 2 * (count - 1)  # one space of padding, one of rule
    if (not count or table_width > options.max_width
            or any(len(header) != 1 for header in plan.headers)):
        return None
    rows = [[clean(found.cells[i][index]) for i in plan.kept]
            for index in range(len(table.rows))]
    headers = [clean(header[0]) for header in plan.headers]
    justify = [table.columns[i].alignment for i in plan.kept]
    for texts in [headers, *rows]:
        for text, width in zip(texts, widths, strict=True):
            if text != text.strip() or "\n" in text or "\t" in text \
                    or cell_len(text) > width:
                return None
    lines: list[list[Segment]] = []
    if table.title is not None:
        lines.extend(console.render_lines(
            _title(table.title, table_width),
            options.update(width=table_width, height=None, highlight=False, justify="left"),
            pad=False))
    null, bold, rule = Style.null(), console.get_style("bold"), console.get_style("")

    def line(texts: list[str], style: Style, strong: list[Style]) -> list[Segment]:
        """A row of cells: each justified to its width in the row's style and its own,
        then a space of padding in the row's, and a space of rule between columns."""
        drawn: list[Segment] = []
        for n, (text, width, how, own) in enumerate(
                zip(texts, widths, justify, strong, strict=True), 1):
            room = width - cell_len(text)
            drawn.append(Segment(text + " " * room if how == "left" else " " * room + text,
                                 style + own if style else own))
            if n < count:
                drawn.append(Segment(" ", style or None))
                drawn.append(Segment(" ", style.background_style + rule))
        return drawn

    if table.show_header:
        lines.append(line(headers, console.get_style("table.header"), [null] * count))
        head = box.SIMPLE_HEAD.substitute(options, safe=console.safe_box)
        lines.append([Segment(head.get_row([w + 1 for w in widths[:-1]] + [widths[-1]],
                                           "head", edge=False), rule)])
    for index, texts in enumerate(rows):
        row = table.rows[index]
        style = console.get_style(TONES.get(table.tone(index) or "", ""))
        lines.append(line(texts, style, [bold if tables.strong(row[i]) else null
                                         for i in plan.kept]))
    return lines


def _rstrip(line: list[Segment]) -> list[Segment]:
    """A rendered line without its trailing spaces (their styles go with them)."""
    kept = list(line)
    while kept and (kept[-1].control or not kept[-1].text.rstrip(" ")):
        if kept[-1].control:
            break
        kept.pop()
    if kept and not kept[-1].control:
        last = kept[-1]
        kept[-1] = Segment(last.text.rstrip(" "), last.style)
    return kept


def _records(table: tables.Table, texts: list[list[str]], width: int) -> Iterator[Text]:
    """Too narrow for columns: each row as its first cell, then "title: value" lines, each
    wrapped at spaces to the width with its continuations indented under it (a long value
    is never broken by the terminal back at the margin)."""
    if table.title is not None:
        yield from _wrapped(table.title, width, "", "  ", "")
    for index, row_texts in enumerate(texts):
        style = TONES.get(table.tone(index) or "", "")
        if not table.show_header:  # names and values: "name: value"
            yield from _wrapped(": ".join(t for t in row_texts if t), width, "", "    ",
                                style)
            continue
        yield from _wrapped(row_texts[0], width, "", "    ", f"bold {style}".strip())
        for column, text in zip(table.columns[1:], row_texts[1:], strict=True):
            if text not in ("", numbers.MISSING):
                yield from _wrapped(f"{column.short or column.title}: {text}", width, "  ",
                                    "      ", style)


def _wrapped(text: str, width: int, first: str, rest: str, style: str) -> Iterator[Text]:
    for part in layout.wrap_prose(clean(text), max(width, 20), first, rest) or [first]:
        yield Text(part, style=style)


def rich_table(table: tables.Table) -> FittedTable:
    """A table as data, ready for rich to draw at the width it is printed at."""
    return FittedTable(table)


def print_table(table: tables.Table, console: Console = stdout) -> None:
    console.print(rich_table(table))


def rows_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
               ) -> FittedTable:
    """A table of text cells (None shown as missing)."""
    return rich_table(tables.Table(title, tuple(tables.Column(c) for c in columns),
                                   tuple(tuple(row) for row in rows)))


def key_value_table(title: str, rows: Sequence[tuple[str, Any]]) -> FittedTable:
    return rich_table(tables.key_values(title, rows))


def problems_table(problems: Sequence[Problem]) -> FittedTable:
    return rich_table(runs.problems_table(problems))


def show_run(run: Run, figures: RunFigures, console: Console = stdout) -> None:
    """A speed run: the public-key rows, the ciphers and hashes with block sizes as
    columns (as `openssl speed`; --json and --csv keep a row per block size), what each
    binding costs, what was not measured."""
    bulk = [m for m in run.measurements if m.block_size and m.unit == "op"]
    single = [m for m in run.measurements if m not in bulk]
    if single or not bulk:
        print_table(runs.measurements_table(run, single), console)
    if bulk:
        print_table(runs.throughput_table(
            bulk, f"{runs.heading(run)}: ciphers and hashes, MB/s "
                  f"(10^6 bytes/s) of {runs.time_base(bulk)} by block size" if not single
            else None), console)
    lines([*runs.binding_notes(figures), *runs.key_form_notes(run.measurements)],
          console=console)
    show_load(run, console)
    if run.problems:
        print_table(runs.problems_table(run.problems), console)


def show_files_run(run: Run, found: Sequence[Ratio], console: Console = stdout) -> None:
    """A `files hash` run, as the command and `show` print it: the table and what its hash
    rate holds, the load it was taken under, what was not measured, the digests, the
    paired answers (`found`: `analysis.ratios.file_ratios`)."""
    from pqbench.views import files

    print_table(files.hash_table(run), console)
    if any(m.operation == "hash" for m in run.measurements):
        lines([files.HASH_RATE], console=console)
    show_load(run, console)
    if run.problems:
        print_table(runs.problems_table(run.problems), console)
    lines(files.digest_lines(run), wrap=False, console=console)
    lines(files.ratio_lines(found), console=console)


def show_load(run: Run, console: Console = stdout) -> None:
    """The line under a run's table that says it was taken while other work ran."""
    line = runs.load_note(run)
    if line is not None:
        lines([line], console=console, style="yellow")


def show_ratios(chosen: Sequence[Ratio], asked: Sequence[Ratio] = (),
                console: Console = stdout) -> None:
    """What the run's rows cost against each other: the ratios the mission asks for, and
    those asked for with --relative-to, each a table (`ratios` prints the same)."""
    if chosen:
        print_table(ratio_views.table(chosen), console)
        lines(ratio_views.notes(chosen), console=console)
    if asked:
        print_table(ratio_views.table(asked, "relative to the row asked for"), console)


def show_followed_ratios(found: Sequence[Across], console: Console = stdout) -> None:
    """A run's paired cost ratios followed from one side of a comparison to the other."""
    if found:
        console.print(safe("paired cost ratios, each run's estimate one unit:", "bold"))
        _indented(ratio_views.followed_lines(found), console)


def wrapped(text: str, width: int, first: str = "", hang: str = "") -> list[str]:
    """`text` wrapped at spaces to `width`, its first line after `first`, the others after
    `hang`; a word wider than a line (a long path) starts a line of its own and is cut
    where the line ends, its rest continued after `hang`, as a table's wrapped cell is:
    nothing runs past the width."""
    found = []
    for part in layout.wrap_prose(text, width, first, hang):
        while len(part) > width > len(hang):
            found.append(part[:width])
            part = hang + part[width:]
        found.append(part)
    return found


def lines(texts: Sequence[str], wrap: bool = True, console: Console = stdout,
          style: str = "") -> None:
    """Lines of prose, each wrapped to the width with its continuations indented (`wrap`,
    see `wrapped`), or whole whatever the width (a digest line, which `sha256sum -c` reads
    back); never left to rich's own wrapping, which ends a line with a space and goes on
    at the margin."""
    for text in texts:
        if wrap:
            for part in wrapped(clean(text), max(console.width, 40), hang="    "):
                console.print(safe(part, style), soft_wrap=True)
        else:
            console.print(safe(text, style), soft_wrap=True)


def _indented(lines: Sequence[str], console: Console) -> None:
    """Each line as an item: wrapped to the width, continuations indented deeper, so a
    wrapped item still reads as one."""
    for line in lines:
        for part in wrapped(clean(line), max(console.width, 40), "  ", "      "):
            console.print(safe(part), soft_wrap=True)


@contextmanager
def progress_bar(total: int, enabled: bool = True, console: Console | None = None
                 ) -> Iterator[Callable[[str], None]]:
    """A progress bar on stderr (a terminal only): what runs, how far, the time spent and
    the time left, estimated from the pace of the steps done so far; yields
    `advance(description)`, called as each step starts."""
    console = console or stderr
    if not enabled or not console.is_terminal:
        yield lambda _description: None
        return
    from rich.progress import (  # a terminal's alone: a command piped starts without it
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    # The description gives way (cut with "…") before the counts and times: at 80 columns
    # a long row title cut the elapsed time to "0:00:…".
    fixed = 20 + 2 * len(str(total)) + 1 + 7 + 3 + 7 + 5 * 2
    bar = Progress(TextColumn("{task.description}", markup=False, table_column=RichColumn(
                       no_wrap=True, overflow="ellipsis",
                       max_width=max(10, console.width - fixed))),
                   BarColumn(bar_width=20),
                   MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"),
                   TimeRemainingColumn(), console=console, transient=True)
    with bar:
        task = bar.add_task("starting", total=total)
        first = [True]

        def advance(description: str) -> None:
            if not first[0]:
                bar.advance(task)
            first[0] = False
            # More steps than foreseen (`files hash` takes passes until its answer is
            # decided): the total grows, never shown below what is done.
            done = bar.tasks[0].completed
            if bar.tasks[0].total is not None and done >= bar.tasks[0].total:
                bar.update(task, total=done + 1)
            bar.update(task, description=clean(description))

        yield advance
        bar.advance(task)


@contextmanager
def session_status(first: str, budget_seconds: float, console: Console | None = None
                   ) -> Iterator[Callable[[str, str], None]]:
    """A spinner line on stderr (a terminal only) for a session with a time budget, as
    `pqbench ab`: what runs, how far it is (the row of how many, the pairs so far), the
    time spent (live) against the budget; yields `show(text, where)`, called as each step
    starts and after each pair."""
    console = console or stderr
    if not console.is_terminal:
        yield lambda _text, _where: None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    budget = max(budget_seconds, 0.0)
    budget_text = f"of ~{numbers.duration_us(budget * 1e6)} budget"
    # The spinner, "row 12 of 79, 384 pairs", the elapsed time, the budget and the spaces
    # between the five columns: what runs gets the rest ("starting the workers" whole at
    # 80 columns), cut with "…" before any count or time is.
    fixed = 1 + len("row 12 of 79, 384 pairs") + len("0:00:00") + len(budget_text) + 4
    line = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False,
                                                table_column=RichColumn(
                                                    no_wrap=True, overflow="ellipsis",
                                                    max_width=max(10, console.width - fixed))),
                    TextColumn("{task.fields[rows]}"), TimeElapsedColumn(),
                    TextColumn(budget_text), console=console, transient=True)
    with line:
        task = line.add_task(first, total=None, rows="")

        def show(text: str, where: str) -> None:
            line.update(task, description=clean(text), rows=clean(where))

        yield show


@contextmanager
def status(first: str) -> Iterator[Callable[[str], None]]:
    """A one-line status with a spinner on stderr (a terminal only); yields `show(text)`."""
    if not stderr.is_terminal:
        yield lambda _text: None
        return
    with stderr.status(first, spinner="dots") as shown:
        yield lambda text: shown.update(text)


def _hanging(label: str, style: str, message: str, indent: int | None = None) -> None:
    """A message on stderr wrapped to the width (`wrapped`: at spaces, a path wider than
    the terminal on a line of its own, cut where the line ends), its continuation lines
    indented under its first word (a wrapped warning still reads as one)."""
    prefix = f"{label} " if label else ""
    width = max(stderr.width, 40)
    hang = " " * (len(prefix) if indent is None else indent)
    for number, line in enumerate(clean(message).split("\n")):
        parts = wrapped(line, width, prefix if number == 0 else hang, hang) \
            or [prefix if number == 0 else ""]
        for index, part in enumerate(parts):
            if index == 0 and number == 0 and prefix:
                stderr.print(Text.assemble((label, style), part[len(label):]),
                             soft_wrap=True)
            else:
                stderr.print(Text(part), soft_wrap=True)


def write(text: str) -> None:
    """Machine-readable text (CSV, Markdown, a path, a command line) on stdout as it is:
    the caller escaped it for where it goes (`views.delimited`, `views.markdown`)."""
    sys.stdout.write(text)
    sys.stdout.flush()


def print_json(document: Any) -> None:
    """One JSON document on stdout (values JSON cannot hold as text)."""
    write(json.dumps(document, indent=2, default=str) + "\n")


def error(message: str) -> None:
    _hanging("error:", "bold red", message)


def warning(message: str) -> None:
    _hanging("warning:", "yellow", message)


def notes(messages: Sequence[str]) -> None:
    """Each note a use case returned, in order."""
    for message in messages:
        note(message)


def warnings(messages: Sequence[str]) -> None:
    """Each warning a use case returned, in order."""
    for message in messages:
        warning(message)


def note(message: str) -> None:
    _hanging("", "", message, indent=2)


class _Progress(logging.Handler):
    """The rooms below presentation print nothing: a liboqs, userland or pip build reports
    its progress to a "pqbench" logger, and this handler shows it like every note."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            _hanging("", "", f"{record.name}: {record.getMessage()}", indent=4)
        except Exception:  # logging's contract: a handler never raises into its caller
            self.handleError(record)


def show_progress() -> None:
    """Show on stderr the progress the rooms below report through logging (once)."""
    logger = logging.getLogger("pqbench")
    if not any(isinstance(handler, _Progress) for handler in logger.handlers):
        logger.addHandler(_Progress())
    logger.setLevel(logging.INFO)


# --- compare and history (pqbench compare / history) -----------------------------------


def show_comparison(result: Any, console: Console = stdout, hidden: int = 0) -> None:
    """A comparison: the news first (`views.news`), then its rows, its memory
    figures and every differing fingerprint field. `hidden` rows were left out
    (`compare --only-changed`)."""
    from pqbench.views import comparisons, news  # compare's own: `show` starts without

    for warning_text in result.warnings:
        warning(warning_text)
    if result.news is not None:
        print_table(news.table(result.news), console)
    if result.rows:
        print_table(comparisons.compare_table(result), console)
    elif hidden:
        lines([f"{comparisons.title(result)}: no row changed"], console=console)
    elif not result.memory:
        print_table(comparisons.compare_table(result), console)
    if hidden:
        note(f"{hidden} row(s) without a change not shown (--only-changed)")
    said = comparisons.spread_note(result.rows)
    if said:
        note(said)
    if result.memory:
        print_table(comparisons.memory_table(
            result.memory, f"memory: {result.before_name} → {result.after_name} "
                           "(exact counts)"), console)
    if result.differences:
        print_table(comparisons.differences_table(result)[0], console)
    else:
        console.print(safe("fingerprints identical (apart from labels)"))


def history_table(series: Any, machine: str | None = None) -> FittedTable:
    from pqbench.views import comparisons

    return rich_table(comparisons.history_table(series, machine))


def show_history(series: Any, console: Console = stdout, machine: str | None = None) -> None:
    """One row's history (on the machine named) and what its steps were judged against
    (naming the machine too: piped, the notes of a fleet's histories reach stderr apart
    from their tables)."""
    console.print(history_table(series, machine))
    if series.basis:
        note(f"steps{f' on {machine}' if machine else ''} judged as compare judges runs; few "
             f"runs against {series.basis}")


# --- speed: rows too unsteady to trust (pqbench speed) ---------------------------------

#: Rows named one by one in the warning; the rest are counted.
_UNSTABLE_SHOWN = 8


def warn_unstable(figures: RunFigures) -> None:
    """pyperf-style: say which rows are too unsteady to trust, and what helps."""
    from pqbench.analysis import stability

    warn_unsteady(unstable_rows(figures), stability.WHAT_HELPS)


def warn_unsteady(lines: Sequence[str], helps: str) -> None:
    """The rows too unsteady to trust, one line each (the first few), and what helps."""
    if not lines:
        return
    shown = lines[:_UNSTABLE_SHOWN]
    more = f"... and {len(lines) - len(shown)} more" if len(lines) > len(shown) else ""
    warning(f"{len(lines)} row(s) too unsteady to trust:")
    for line in [*shown, *([more.strip()] if more else []), f"What helps: {helps}."]:
        for part in wrapped(clean(line), max(stderr.width, 40), "  ", "      "):
            stderr.print(safe(part), soft_wrap=True)
