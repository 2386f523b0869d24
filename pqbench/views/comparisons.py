"""Comparisons and histories as tables, defined once for the terminal, `--markdown` and the
report (`views.tables`; each medium's adapter draws and escapes them).

The figures are `analysis.compare`'s, `analysis.history`'s and `analysis.memory`'s; this
module only lays them out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pqbench.analysis import explain, verdict
from pqbench.analysis.memory import MemoryChange
from pqbench.analysis.news import cause_topics
from pqbench.data.record.fingerprint import binary_identity
from pqbench.platform.untrusted import first_few
from pqbench.views import numbers
from pqbench.views import runs as runs_view
from pqbench.views.layout import READABLE_PROSE
from pqbench.views.news import DESIGNS, row_name
from pqbench.views.runs import operation
from pqbench.views.tables import Cell, Column, Table

if TYPE_CHECKING:  # the figures' types; the statistics behind them load where they are made
    from pqbench.analysis.compare import RunComparison
    from pqbench.analysis.history import Series
    from pqbench.analysis.rows import Row
    from pqbench.app.history import FleetStep, MachineHistory

#: How each memory figure is named in tables.
METRIC_NAMES = {"stack_bytes": "stack B", "heap_bytes": "heap peak B",
                "allocations": "allocations"}


def title(result: RunComparison) -> str:
    """"A → B (runs as the unit; 99% CI; band ...)", each design that judged rows named with
    its own interval level ("12 rows by runs as the unit, 99% CI; 4 by pairs of an ab
    session, 99.8% CI")."""
    band = ("band: ±5 % or the row's noise floor, whichever is larger"
            if result.threshold is None else f"band ±{numbers.share(result.threshold)}")
    return f"{result.before_name} → {result.after_name} ({design(result)}; {band})"


def design(result: RunComparison) -> str:
    """The designs that judged the rows, with their intervals' confidence."""
    levels: dict[str, set[float]] = {}
    for row in result.rows:
        levels.setdefault(row.design, set()).add(row.ci_level)
    if not levels:
        return f"{DESIGNS['pairs' if result.paired else 'runs']}; " \
               f"{numbers.share(ci_level(result))} CI"
    counts = result.designs
    said = []
    for name, found in levels.items():
        confidence = "/".join(numbers.share(level) for level in sorted(found))
        rows = f"{counts[name]} row(s) by " if len(levels) > 1 else ""
        said.append(f"{rows}{DESIGNS[name]}, {confidence} CI")
    return "; ".join(said)


def ci_level(result: RunComparison) -> float:
    """The intervals' nominal confidence, 1 - the alpha the rows were judged at."""
    return 1 - result.alpha


def units(row: Row) -> str:
    """Independent units behind a row: "5/5 runs", "96 pairs" or "10 machines"."""
    if row.machines is not None:
        return f"{row.machines} machines"
    if row.pairs is not None:
        return f"{row.pairs} pairs"
    return f"{row.runs_before}/{row.runs_after} runs"


def floor(row: Row) -> str:
    """The row's noise floor and the band it was judged against: "?" when one run a side
    leaves it unknown, "paired" where pairs cancel the run-to-run drift it measures."""
    if row.noise_floor is not None:
        known = numbers.percent(row.noise_floor)
    else:
        known = "paired" if row.pairs is not None else "?"
    return f"{known} (band {numbers.plus_minus(row.threshold)})"


def causes(row: Row) -> str:
    """Why a row got its verdict, in a few words beside the change that states its
    interval: a changed row's causes by topic and strength ("system libcrypto (likely)";
    each cause is told in full once, in the news above the table); an unchanged row's
    reason (`explanation`)."""
    if not row.changed:
        return explanation(row)
    topics = cause_topics(row)
    if not topics:
        return "no fingerprint difference explains it"
    return "; ".join(f"{topic} ({strength})" for topic, strength in topics)


def explanation(row: Row) -> str:
    """Why an unchanged row is not called faster or slower, without the interval the
    change beside it states (the reason's "CI 0.628–3.26" is a bare rate ratio): "the
    interval reaches beyond the ±15.5 % band", "significant, but the interval reaches
    inside the ±5 % band", "the interval lies inside the ±5 % band"; a row with too few
    runs or pairs says what it would need (judged against the machine's spread, without
    what it was judged against, which the noise floor column and the note under the
    table say: `spread_note`)."""
    band = f"±{numbers.share(row.threshold)} band"
    if row.verdict == verdict.NO_CHANGE:
        return f"the interval lies inside the {band}"
    if row.verdict == verdict.INCONCLUSIVE:
        if row.p_value < 1 - row.ci_level:
            return f"significant, but the interval reaches inside the {band}"
        return f"the interval reaches beyond the {band}"
    if row.outcome.basis and "runs against" in row.reason and "): " in row.reason:
        return row.reason.split("): ", 1)[1]
    return row.reason


def change(row: Row) -> str:
    """A row's change in the words users know, its interval beside it (the last thing a
    narrow terminal may lose): "13.8x slower [13.4–14.4]", "1.24x faster [1.20–1.29]", "no
    change (within ±5 %) [1.01x slower – 1.02x faster]"; a row without a verdict says why
    before its estimate ("too few runs: 1.97x faster [...]"). The verdict is in it: the
    table has no verdict column of its own."""
    interval = f" {numbers.bracket(row.ci_low, row.ci_high)}" if _has_interval(row) else ""
    if row.verdict == "no change":
        directed = numbers.bracket(row.ci_low, row.ci_high, directed=True)
        return f"{numbers.no_change(row.threshold)}{f' {directed}' if interval else ''}"
    moved = f"{numbers.speed_change(row.ratio)}{interval}"
    return moved if row.changed else f"{row.verdict}: {moved}"


def _two_lines(texts: Sequence[str], at: str, keep: int = 0) -> int:
    """The width that takes each text on at most two lines, broken at `at` (its first
    `keep` characters staying on the first line: a rate's arrow), so that no cell of the
    column needs three."""
    widths = []
    for text in texts:
        where = text.find(at)
        widths.append(len(text) if where < 0 else
                      max(len(text[:where + keep].rstrip()), len(text[where + keep:].strip())))
    return max(widths, default=0)


def _has_interval(row: Row) -> bool:
    return numbers.finite(row.ci_low) and numbers.finite(row.ci_high) and row.ci_low > 0


def shared_reason(rows: Sequence[Row]) -> str | None:
    """The explanation of every row, when there are several, none changed, and all give
    the same one; else None (each row says its own)."""
    reasons = {causes(row) for row in rows}
    if len(rows) < 2 or len(reasons) != 1 or any(row.changed for row in rows):
        return None
    return reasons.pop()


def levels(row: Row) -> str:
    """Before → after in one cell: "60.1 → 4.34 kops/s", "1.65 GB/s → 850 MB/s"."""
    return numbers.levels(row.before, row.after, row.unit)


def compare_table(result: RunComparison, rows: Sequence[Row] | None = None) -> Table:
    """One line per (algorithm, implementation, operation, block size), largest change
    first; `rows` (default all) picks which. The change says the verdict with its
    interval; no column repeats it."""
    shown = list(result.rows if rows is None else rows)
    timed = any(row.seconds is not None for row in shown)
    # A reason every row shares ("too few runs": one run a side) is said once, in the title.
    shared = shared_reason(shown)
    heading = title(result) + (f". Every row: {shared}" if shared else "")
    changes = [change(row) for row in shown]
    rates = [levels(row) for row in shown]
    # Where room is short the change in words with its interval beside it and the levels
    # it is between stay (80 columns), each on at most two lines (a change above its
    # interval, a rate above the other); then the test's detail goes, then why.
    columns = (Column("algorithm"), Column("implementation", short="impl."),
               Column("operation"),
               Column("before → after", align="right", wrap=True,
                      min_width=_two_lines(rates, "→ ", keep=1)),
               Column(f"change [{numbers.share(ci_level(result))} CI]"
                      if any(map(_has_interval, shown)) else "change", wrap=True,
                      min_width=_two_lines(changes, "[")),
               Column("p", "p", priority=4), Column("units", align="right", priority=4),
               Column("noise floor", align="right", priority=4),
               # Readable, or not shown: the test's detail goes before it narrows.
               Column("explanation", priority=3, wrap=True, min_width=READABLE_PROSE),
               *((Column("s", "number", priority=5),) if timed else ()))
    return Table(heading, columns, tuple(
        (row.algorithm, row.implementation, operation(row.operation, row.block_size),
         rate, Cell(moved, strong=row.changed), row.p_value, units(row), floor(row),
         None if shared else causes(row), *((row.seconds,) if timed else ()))
        for row, moved, rate in zip(shown, changes, rates, strict=True)),
        tuple(row.verdict for row in shown))


def short(value: Any) -> str:
    """A fingerprint value on one line: lists comma-joined, nothing cut (a long value
    wraps in its column)."""
    if value is None or value == "":
        return numbers.MISSING
    if isinstance(value, Mapping) and binary_identity(value) is not None:
        return explain.binary_text(value)
    if isinstance(value, list | tuple):
        return ", ".join(short(v) if isinstance(v, Mapping) else str(v) for v in value)
    return str(value)


def differences_table(result: RunComparison, limit: int | None = None) -> tuple[Table, int]:
    """The differing fingerprint fields, those named as causes first, then the shallowest
    paths; at most `limit` of them, and how many were left out."""
    named = {c.field for r in result.rows for c in r.causes}
    ranked = sorted(result.differences,
                    key=lambda d: (d.field not in named, d.field.count("."), d.field))
    # Fields that differ the same way are one line (the libcrypto version that
    # `library_details.libcrypto.version` and `.system_libcrypto.version` both hold).
    merged: dict[tuple[str, str, str], list[str]] = {}
    for d in ranked:
        merged.setdefault((short(d.before), short(d.after), d.note or ""), []).append(d.field)
    lines = [(", ".join(fields), *values) for values, fields in merged.items()]
    shown = lines if limit is None else lines[:limit]
    table = Table(f"fingerprint differences: {result.before_name} → {result.after_name}",
                  # A side without the field ("–") is the difference: never left out.
                  (Column("fingerprint field", wrap=True),
                   Column(result.before_name, wrap=True, optional=False, short="before"),
                   Column(result.after_name, wrap=True, optional=False, short="after"),
                   Column("note", wrap=True)),
                  tuple((fields, before, after, note) for fields, before, after, note in shown))
    return table, len(lines) - len(shown)


#: Memory verdicts as tones (the terminal colours them as compare's verdicts).
_MEMORY_TONES = {"larger": "slower", "smaller": "faster", "varies": "inconclusive"}


def memory_table(changes: Sequence[MemoryChange], title_text: str | None = None) -> Table:
    """Memory figures before and after (`analysis.memory`), changes first."""
    columns = (Column("algorithm"), Column("implementation", short="impl."),
               Column("operation"), Column("figure"), Column("before", align="right"),
               Column("after", align="right"), Column("ratio", "ratio", priority=1),
               Column("verdict"))
    return Table(title_text, columns, tuple(
        (c.algorithm, c.implementation, c.operation, METRIC_NAMES[c.metric],
         span(c.before), span(c.after), c.ratio, c.verdict) for c in changes),
        tuple(_MEMORY_TONES.get(c.verdict) for c in changes))


def span(values: tuple[int, int]) -> str:
    """`1,024` or, where the calls differed, `1,024–1,280`."""
    low, high = values
    return numbers.count(low) if low == high else f"{numbers.count(low)}–{numbers.count(high)}"


def history_table(series: Series, machine: str | None = None) -> Table:
    """One point per build, with its interval, steps (with theirs) and notes; the title
    names the machine where one is given."""
    floor_text = ("unknown" if series.noise_floor is None
                  else numbers.percent(series.noise_floor))
    steps = {s.index: s for s in series.steps}
    rows, tones = [], []
    for i, p in enumerate(series.points):
        step = steps.get(i)
        rows.append((p.build, runs_view.utc_time(p.started_at), len(p.runs), p.n,
                     numbers.level_interval(p.median, p.ci_low, p.ci_high, series.unit),
                     f"{'▲' if step.ratio > 1 else '▼'} "
                     f"{numbers.change_beside_interval(step.ratio, step.ci_low, step.ci_high)}"
                     if step else "", "; ".join(p.notes)))
        tones.append(None if step is None else ("faster" if step.ratio > 1 else "slower"))
    return Table(f"{series.algorithm} {operation(series.operation, series.block_size)} "
                 f"[{series.implementation}] {f'on {machine} ' if machine else ''}"
                 f"(noise floor {floor_text}; steps of at least "
                 f"{numbers.plus_minus(series.threshold)})",
                 # The level with its interval in one cell, the unit said once ("1.65
                 # [1.62–1.68] GB/s"), kept at every width; a long build label wraps.
                 (Column("build", wrap=True, min_width=READABLE_PROSE),
                  Column("first run (UTC)", priority=3),
                  Column("runs", "count", priority=2), Column("rounds", "count", priority=4),
                  Column(f"{series.unit} [95 % CI]", align="right"),
                  Column("step [CI]", wrap=True, min_width=_two_lines(
                      [text for row in rows if (text := row[5])], "[")),
                  Column("notes", priority=1, wrap=True)),
                 tuple(rows), tuple(tones))


def fleet_steps_table(steps: Sequence[FleetStep], machines: int) -> Table:
    """The steps of a fleet's histories gathered by build (`app.history.fleet_steps`):
    per build and row, on how many of the machines that measured it the row stepped, and
    the range of those machines' own step ratios (each step's interval is in its
    machine's table above)."""
    rows = []
    for f in steps:
        rows.append((f.build, row_name(f.key), f"{len(f.machines)} of {f.measured}",
                     numbers.speed_change_range(f.low, f.high),
                     first_few(f.hosts, FLEET_NAMED)))
    return Table(f"steps across the fleet ({machines} machines), each judged on its own "
                 "machine, gathered by build",
                 (Column("build", wrap=True), Column("row", wrap=True),
                  Column("machines", align="right"), Column("their steps"),
                  Column("on", priority=1, wrap=True, min_width=READABLE_PROSE)),
                 tuple(rows), tuple(f.verdict for f in steps))


#: Machines a fleet's step names in the table (--json names every one).
FLEET_NAMED = 5


def spread_note(rows: Sequence[Any]) -> str | None:
    """One line for the rows judged against the machine's run-to-run spread (too few runs
    for the exact test): how many, the spreads' range, and the prior where it was used."""
    judged = [r for r in rows if r.outcome.basis and r.outcome.floor is not None
              and "run-to-run spread" in r.outcome.basis]
    if not judged:
        return None
    floors = sorted(r.outcome.floor for r in judged)
    size = (numbers.percent(floors[0]) if floors[0] == floors[-1]
            else f"{numbers.percent(floors[0])} to {numbers.percent(floors[-1])}")
    # Where the row's own calibration runs are stored, the spread does not advise them again.
    prior = sum(1 for r in judged if "`pqbench calibrate` sharpens" in r.outcome.basis)
    text = (f"{len(judged)} row(s) had too few runs for the exact test and were judged against "
            f"this machine's run-to-run spread of the row ({size}, the noise floor column; "
            "--json gives each row's basis)")
    if prior:
        text += (f"; {prior} of them rest on the default prior: `pqbench calibrate` "
                 "sharpens it")
    return text


def verdict_counts(result: RunComparison) -> str:
    """"12 no change, 3 faster"."""
    counts = {v: sum(1 for r in result.rows if r.verdict == v) for v in verdict.VERDICTS}
    return ", ".join(f"{n} {v}" for v, n in counts.items() if n)


def markdown(results: Sequence[RunComparison]) -> str:
    """`compare --markdown`: per comparison its heading, the news and the tables the
    terminal shows, as GitHub-flavoured Markdown, every cell escaped
    (`views.markdown`)."""
    from pqbench.views import markdown as md
    from pqbench.views import news

    blocks: list[str] = []
    for result in results:
        blocks.append(md.heading(3, f"{result.before_name} → {result.after_name}"))
        if result.news is not None:
            blocks.append(news.markdown(result.news))
        if result.rows or not result.memory:
            blocks.append(md.render(compare_table(result)))
        if result.memory:
            blocks.append(md.render(memory_table(result.memory)))
        if result.differences:
            blocks.append(md.render(differences_table(result)[0]))
    return "\n\n".join(blocks) + "\n"


#: `compare --csv`: one line per row of every comparison, raw values. Every ratio column is
#: named for its direction: `speedup` is the after rate over the before rate (above 1,
#: after is faster), with its interval; `before` and `after` are the rates (`unit`).
COMPARE_CSV = ("before_name", "after_name", "algorithm", "implementation", "operation",
               "block_size", "unit", "before", "after", "speedup", "speedup_ci_low",
               "speedup_ci_high", "ci_level", "p_value", "verdict", "reason", "n_before",
               "n_after", "runs_before", "runs_after", "noise_floor", "threshold", "design",
               "pairs", "causes")
#: The CSV's names of the fields `Row.as_dict` names for JSON.
_CSV_NAMES = {"speedup": "ratio", "speedup_ci_low": "ci_low", "speedup_ci_high": "ci_high"}


def compare_csv_rows(results: Sequence[RunComparison]) -> list[tuple[Any, ...]]:
    """The rows of `COMPARE_CSV`; causes as "topic (strength)" joined by "; "."""
    found = []
    for result in results:
        for row in result.rows:
            fields = row.as_dict()
            fields["causes"] = "; ".join(f"{t} ({s})" for t, s in cause_topics(row))
            fields.update(before_name=result.before_name, after_name=result.after_name)
            found.append(tuple(fields[_CSV_NAMES.get(name, name)] for name in COMPARE_CSV))
    return found


#: `history --csv`: one line per point of every series of every machine; `step_speedup` is
#: the new level over the old where a step starts (above 1, faster), with its interval and
#: verdict.
HISTORY_CSV = ("machine", "machine_key", "algorithm", "implementation", "operation",
               "block_size", "unit", "build", "started_at", "runs", "level", "ci_low",
               "ci_high", "step_speedup", "step_speedup_ci_low", "step_speedup_ci_high",
               "step_verdict", "notes")


def history_csv_rows(found: Sequence[MachineHistory]) -> list[tuple[Any, ...]]:
    """The rows of `HISTORY_CSV`; the step where one starts (its first build)."""
    rows = []
    for machine_history in found:
        one, machine = machine_history.series, machine_history.machine
        steps = {s.index: s for s in one.steps}
        for i, p in enumerate(one.points):
            step = steps.get(i)
            rows.append((machine.name, machine.key, one.algorithm, one.implementation,
                         one.operation, one.block_size, one.unit, p.build, p.started_at,
                         len(p.runs), p.median, p.ci_low, p.ci_high,
                         step.ratio if step else None,
                         verdict.finite(step.ci_low) if step else None,
                         verdict.finite(step.ci_high) if step else None,
                         step.verdict if step else None, "; ".join(p.notes)))
    return rows
