"""Rich tables and progress bars: the only module that prints.

Tables and progress go to stderr when stdout carries JSON or CSV, so machine-readable
output is never mixed with anything else.

Labels, OS builds, host names, paths and error texts come from users and from imported
files, so nothing they hold may steer the terminal: every table cell, title, message and
progress line goes through `safe` (`pqbench.untrusted.printable`: control characters and
bidirectional overrides removed, passwords redacted) and reaches rich as `Text`, which
rich never parses as markup.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from pqbench.results import Measurement, Problem, Run
from pqbench.untrusted import printable


def clean(value: object) -> str:
    """Text fit for a terminal: see `pqbench.untrusted.printable`."""
    return printable(value)


def safe(value: object, style: str = "") -> Text:
    """`clean` text as a rich Text: shown as it is, never read as [markup]."""
    return Text(clean(value), style=style)


class SafeTable(Table):
    """A rich Table whose title and string cells are shown literally (see `safe`)."""

    def __init__(self, title: str | None = None, **kwargs: Any) -> None:
        super().__init__(title=None if title is None else safe(title), **kwargs)

    def add_row(self, *cells: Any, **kwargs: Any) -> None:
        super().add_row(*(safe(c) if isinstance(c, str) else c for c in cells), **kwargs)


def _console(to_stderr: bool) -> Console:
    probe = Console(stderr=to_stderr)
    # Off a terminal rich assumes 80 columns; tables of figures then wrap every cell.
    return Console(stderr=to_stderr, highlight=False, emoji=False,
                   width=None if probe.is_terminal else 160)


stdout = _console(False)
stderr = _console(True)


def si(value: float | None, unit: str = "", digits: int = 3) -> str:
    """A number with `digits` significant digits and an SI prefix: 1.23 G, 45.6 k."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.{digits}g} {prefix}{unit}".rstrip()
    return f"{value:.{digits}g} {unit}".rstrip()


def plain(value: float | None, digits: int = 3) -> str:
    """Significant digits without exponent notation for the usual table range."""
    if value is None or not math.isfinite(value):
        return "-"
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(digits - 1 - magnitude, 0)
    return f"{round(value, digits - 1 - magnitude):,.{decimals}f}"


def spread(m: Measurement) -> tuple[str, str]:
    """Half-width of the median's confidence interval and the coefficient of variation."""
    s = m.summary
    if s.n < 2 or not s.median:
        return "-", "-"
    half = (s.ci_high - s.ci_low) / 2 / s.median * 100
    return f"±{half:.1f}%", f"{s.cv * 100:.1f}%"


def _sizes(m: Measurement) -> str:
    short = {"public_key": "pk", "secret_key": "sk", "ciphertext": "ct", "signature": "sig",
             "shared_secret": "ss"}
    return " ".join(f"{short[k]} {v}" for k, v in m.sizes.items() if k in short)


def speed_table(run: Run) -> Table:
    table = SafeTable(title=f"pqbench run {run.run_id} ({run.status})", title_justify="left")
    for column, justify in (("algorithm", "left"), ("implementation", "left"),
                            ("operation", "left"), ("ops/s", "right"), ("µs/op", "right"),
                            ("bytes/s", "right"),
                            ("±95% CI", "right"), ("CV", "right"), ("cycles/op", "right"),
                            ("sizes (bytes) / key, security bits", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for m in run.measurements:
        cycles = plain(m.cycles_per_op) if m.cycles_per_op else "-"
        table.add_row(m.algorithm, m.implementation, m.operation + _block(m),
                      plain(m.ops_per_sec), plain(m.us_per_op), si(m.bytes_per_sec, "B/s"),
                      *spread(m), cycles, _sizes(m) or _bits(m))
    return table


def _bits(m: Measurement) -> str:
    """Key and security bits of a cipher or hash row: what a longer key buys."""
    names = (("key_bits", "key"), ("security_bits", "sec"), ("quantum_security_bits", "PQ"))
    return " ".join(f"{short} {m.attributes[k]}" for k, short in names
                    if m.attributes.get(k) is not None)


def _block(m: Measurement) -> str:
    return f" @{m.block_size}B" if m.block_size else ""


def problems_table(problems: Sequence[Problem]) -> Table:
    table = SafeTable(title="not measured", title_justify="left")
    for column in ("algorithm", "implementation", "operation", "why"):
        table.add_column(column)
    for p in problems:
        table.add_row(p.algorithm, p.implementation, p.operation or "all",
                      f"{p.kind}: {p.reason}")
    return table


def show_run(run: Run, console: Console = stdout) -> None:
    from pqbench.implementations import binding_shares

    console.print(speed_table(run))
    libraries = run.environment.get("libraries") or {}
    bundled, system = libraries.get("cryptography_openssl"), libraries.get("system_libcrypto")
    for binding, native, share, count in binding_shares(run.measurements):
        caveat = (f"; note cryptography bundles {bundled}, libcrypto is {system}"
                  if binding == "cryptography" and bundled and system and bundled != system
                  else "")
        console.print(safe(f"binding cost: {binding} runs at {share * 100:.0f}% of {native}'s "
                           f"native speed (median over {count} operations measured through "
                           f"both{caveat})"))
    if run.problems:
        console.print(problems_table(run.problems))


def key_value_table(title: str, rows: Sequence[tuple[str, Any]]) -> Table:
    table = SafeTable(title=title, title_justify="left", show_header=False)
    table.add_column("key", style="bold")
    table.add_column("value")
    for key, value in rows:
        table.add_row(key, "-" if value in (None, "", [], {}) else str(value))
    return table


def rows_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Table:
    table = SafeTable(title=title, title_justify="left")
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*("-" if v is None else str(v) for v in row))
    return table


@contextmanager
def progress_bar(total: int, enabled: bool = True) -> Iterator[Callable[[str], None]]:
    """A progress bar on stderr; yields `advance(description)`."""
    if not enabled or not stderr.is_terminal:
        yield lambda _description: None
        return
    bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                   MofNCompleteColumn(), TimeElapsedColumn(), console=stderr, transient=True)
    with bar:
        task = bar.add_task("starting", total=total)
        first = [True]

        def advance(description: str) -> None:
            if not first[0]:
                bar.advance(task)
            first[0] = False
            bar.update(task, description=clean(description))

        yield advance
        bar.advance(task)


@contextmanager
def status(first: str) -> Iterator[Callable[[str], None]]:
    """A one-line status with a spinner on stderr (a terminal only); yields `show(text)`."""
    if not stderr.is_terminal:
        yield lambda _text: None
        return
    with stderr.status(first, spinner="dots") as shown:
        yield lambda text: shown.update(text)


def error(message: str) -> None:
    stderr.print(Text.assemble(("error:", "bold red"), " ", safe(message)))


def warning(message: str) -> None:
    stderr.print(Text.assemble(("warning:", "yellow"), " ", safe(message)))


def note(message: str) -> None:
    stderr.print(safe(message))


# --- compare and history (pqbench compare / history) -----------------------------------


def _rate(value: float, unit: str) -> str:
    return si(value, "B/s") if unit == "bytes/s" else si(value, "ops/s")


def _ratio_ci(low: float, high: float) -> str:
    return f"{plain(low)}–{plain(high)}" if math.isfinite(low) and math.isfinite(high) else "-"


def _causes(row: Any, limit: int = 2) -> str:
    """The row's causes by topic ("system libcrypto (likely)"); each is told once in full
    in the news above the table."""
    from pqbench.news import cause_topics

    topics = cause_topics(row)
    text = "; ".join(f"{topic} ({strength})" for topic, strength in topics[:limit])
    hidden = len(topics) - limit
    return text + (f" +{hidden} more" if hidden > 0 else "")


def _units(row: Any) -> str:
    return f"{row.pairs} pairs" if row.pairs is not None else \
        f"{row.runs_before}/{row.runs_after} runs"


def _floor(row: Any) -> str:
    """The row's noise floor and band: "?" when one run a side leaves it unknown, "paired"
    where pairs cancel the run-to-run drift it measures."""
    if row.noise_floor is not None:
        known = f"{row.noise_floor:.1%}"
    else:
        known = "paired" if row.pairs is not None else "?"
    return f"{known} (±{row.threshold:.1%})"


def _compare_cells(row: Any) -> list[str]:
    block = f" @{row.block_size}B" if row.block_size else ""
    return [row.algorithm, row.implementation, row.operation + block,
            _rate(row.before, row.unit), _rate(row.after, row.unit), f"{row.ratio:.3g}x",
            _ratio_ci(row.ci_low, row.ci_high), f"{row.p_value:.2g}", _units(row),
            _floor(row), row.verdict, _causes(row) if row.causes else ""]


COMPARE_COLUMNS = ("algorithm", "implementation", "operation", "before", "after", "ratio",
                   "CI", "p", "units", "floor (band)", "verdict", "likely causes")
_RIGHT = ("before", "after", "ratio", "p", "units", "floor (band)")
VERDICT_STYLES = {"faster": "green", "slower": "red", "inconclusive": "yellow",
                  "too few runs": "yellow"}


def _band(result: Any) -> str:
    if result.threshold is None:
        return "band: ±5% or the row's noise floor, whichever is larger"
    return f"band ±{result.threshold:.0%}"


def compare_table(result: Any) -> Table:
    """One row per (algorithm, implementation, operation, block size), largest change first."""
    design = "pairs" if result.paired else "runs as the unit"
    title = (f"{result.before_name} → {result.after_name} ({design}; "
             f"{(1 - result.alpha) * 100:.3g}% CI; {_band(result)})")
    table = SafeTable(title=title, title_justify="left")
    timed = any(row.seconds is not None for row in result.rows)
    for column in (*COMPARE_COLUMNS, *(("s",) if timed else ())):
        table.add_column(column, justify="right" if column in (*_RIGHT, "s") else "left")
    for row in result.rows:
        seconds = ([f"{row.seconds:.1f}" if row.seconds is not None else "-"] if timed else [])
        table.add_row(*_compare_cells(row), *seconds, style=VERDICT_STYLES.get(row.verdict))
    return table


def differences_table(result: Any) -> Table:
    table = SafeTable(title="fingerprint differences", title_justify="left")
    for column in ("field", "before", "after", "note"):
        table.add_column(column)
    for diff in result.differences:
        table.add_row(diff.field, _short(diff.before), _short(diff.after), diff.note or "")
    return table


def _short(value: Any, width: int = 60) -> str:
    text = "-" if value is None else (", ".join(map(str, value)) if isinstance(value, list)
                                      else str(value))
    return text if len(text) <= width else text[: width - 1] + "…"


def memory_compare_table(result: Any) -> Table:
    """Memory figures before and after (pqbench.memory.compare), changes first."""
    from pqbench.memory import compare as memory_compare

    table = SafeTable(title=f"memory: {result.before_name} → {result.after_name} "
                            "(exact counts)", title_justify="left")
    for column in memory_compare.COLUMNS:
        table.add_column(column, justify="right" if column in ("before", "after", "ratio")
                         else "left")
    styles = {"larger": "red", "smaller": "green", "varies": "yellow"}
    for change in result.memory:
        table.add_row(*memory_compare.cells(change), style=styles.get(change.verdict))
    return table


def news_table(found: Any) -> Table:
    """What changed (`pqbench.news`), before the detail: one heading per kind of news."""
    from pqbench.news.text import Formats, items

    table = SafeTable(title=f"what changed: {found.before_name} → {found.after_name}",
                      title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("detail")
    formats = Formats(rate=_rate, ratio=lambda value: f"{value:.3g}x")
    for item in items(found, formats):
        for i, line in enumerate(item.lines):
            table.add_row(item.heading if i == 0 else "", line)
    return table


def show_comparison(result: Any, console: Console = stdout) -> None:
    """The news first, then every row, then every differing fingerprint field."""
    for warning_text in result.warnings:
        warning(warning_text)
    if result.news is not None:
        console.print(news_table(result.news))
    if result.rows or not result.memory:
        console.print(compare_table(result))
    if result.memory:
        console.print(memory_compare_table(result))
    if result.differences:
        console.print(differences_table(result))
    else:
        console.print(safe("fingerprints identical (apart from labels)"))


def compare_markdown(results: Sequence[Any]) -> str:
    """The comparison as GitHub-flavoured Markdown tables; every cell escaped (md.escape)."""
    from pqbench.report import markdown as md
    from pqbench.report import whatchanged

    lines: list[str] = []
    for result in results:
        lines += [md.heading(3, f"{result.before_name} → {result.after_name}"), ""]
        if result.news is not None:
            lines += [whatchanged.markdown(result.news), ""]
        if result.rows or not result.memory:
            lines += ["| " + " | ".join(COMPARE_COLUMNS) + " |",
                      "|" + "|".join("---:" if c in _RIGHT else "---"
                                     for c in COMPARE_COLUMNS) + "|"]
        for row in result.rows:
            lines.append("| " + " | ".join(md.escape(c) for c in _compare_cells(row)) + " |")
        if result.memory:
            from pqbench.memory import compare as memory_compare

            lines += [*([""] if result.rows else []),
                      "| " + " | ".join(memory_compare.COLUMNS) + " |",
                      "|" + "|".join("---:" if c in ("before", "after", "ratio") else "---"
                                     for c in memory_compare.COLUMNS) + "|"]
            lines += ["| " + " | ".join(md.escape(c) for c in memory_compare.cells(m)) + " |"
                      for m in result.memory]
        if result.differences:
            lines += ["", "| field | before | after | note |", "|---|---|---|---|"]
            lines += [f"| {md.escape(d.field)} | {md.escape(_short(d.before))} | "
                      f"{md.escape(_short(d.after))} | {md.escape(d.note or '')} |"
                      for d in result.differences]
        lines.append("")
    return "\n".join(lines)


def history_table(series: Any) -> Table:
    block = f" @{series.block_size}B" if series.block_size else ""
    floor = "unknown" if series.noise_floor is None else f"{series.noise_floor:.1%}"
    table = SafeTable(title=f"{series.algorithm} {series.operation}{block} "
                            f"[{series.implementation}] (noise floor {floor}; steps of at "
                            f"least ±{series.threshold:.1%})", title_justify="left")
    for column in ("build", "first run (UTC)", "runs", "rounds", series.unit, "95% CI",
                   "step", "notes"):
        table.add_column(column)
    steps = {s.index: s for s in series.steps}
    for i, p in enumerate(series.points):
        step = steps.get(i)
        table.add_row(p.build, p.started_at, str(len(p.runs)), str(p.n),
                      _rate(p.median, series.unit),
                      f"{_rate(p.ci_low, series.unit)} – {_rate(p.ci_high, series.unit)}",
                      f"{'▲' if step.ratio > 1 else '▼'} {step.ratio:.3g}x" if step else "",
                      "; ".join(p.notes),
                      style=("green" if step.ratio > 1 else "red") if step else None)
    return table


# --- speed: rows too unsteady to trust (pqbench speed) ---------------------------------

#: Rows named one by one in the warning; the rest are counted.
_UNSTABLE_SHOWN = 8


def unstable_rows(run: Run) -> list[str]:
    """One line per row whose spread or trend makes its figure shaky (`stability`)."""
    from pqbench import stability

    lines = []
    for m in run.measurements:
        found = stability.problems(m.samples)
        if found:
            lines.append(f"{m.algorithm} {m.operation}{_block(m)} [{m.implementation}]: "
                         + "; ".join(found))
    return lines


def warn_unstable(run: Run) -> None:
    """pyperf-style: say which rows are too unsteady to trust, and what helps."""
    from pqbench import stability

    lines = unstable_rows(run)
    if not lines:
        return
    shown = lines[:_UNSTABLE_SHOWN]
    more = f"... and {len(lines) - len(shown)} more" if len(lines) > len(shown) else ""
    warning(f"{len(lines)} row(s) too unsteady to trust:")
    for line in [*shown, *([more.strip()] if more else [])]:
        stderr.print(safe(f"  {line}"))
    stderr.print(safe(f"  What helps: {stability.WHAT_HELPS}."))
