"""The news of a comparison (`analysis.news`) as plain lines, for every place that shows it.

`items` gives (heading, lines) pairs of plain text; `table` lays them out for the terminal
(drawn and escaped by `views.console`) and `markdown` as nested bullets, each line
escaped by `views.markdown.text`; `summary_bullet` is a report's story bullet.
Figures go through the one formatter (`views.numbers`), so a figure reads the same
in the news as in the table below it; `Formats` lets a test pin them down.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pqbench.analysis import explain
from pqbench.analysis.news import (
    NO_REASON,
    Availability,
    CauseGroup,
    Change,
    Highlight,
    News,
    Reason,
    RowKey,
)
from pqbench.data.record.fingerprint import binary_identity
from pqbench.views import markdown as md
from pqbench.views import numbers
from pqbench.views.runs import operation
from pqbench.views.tables import Cell, Column, Table

#: Row names listed per cause before the rest are counted.
ROWS_NAMED = 4


@dataclass(frozen=True)
class Formats:
    """How the caller prints a rate (value, "ops/s" or "bytes/s"), a ratio of two rates
    ("0.5x" of a peer) and a change of speed ("2.00x slower")."""

    rate: Callable[[float, str], str]
    ratio: Callable[[float], str]
    change: Callable[[float], str] = numbers.speed_change


#: The one formatter's rates and ratios, as every table shows them.
FORMATS = Formats(rate=numbers.rate, ratio=numbers.ratio, change=numbers.speed_change)


@dataclass(frozen=True)
class Item:
    """One heading of the news and its lines (plain, unescaped text)."""

    heading: str
    lines: tuple[str, ...]


def row_name(key: RowKey | Sequence[Any]) -> str:
    """"Ed25519 sign [libcrypto]", "AES-256-XTS encrypt @16384B [cryptography]"."""
    algorithm, implementation, name, block_size = key
    return f"{algorithm} {operation(name, block_size)} [{implementation}]"


def value(found: Any) -> str:
    """A fingerprint value as text: lists joined, nothing as "none", a loaded binary by its
    identity ("build-id 30563306a0d3…")."""
    if found is None or found == "" or found == []:
        return "none"
    if isinstance(found, Mapping) and binary_identity(found) is not None:
        return explain.short_identity(found)
    if isinstance(found, list | tuple):
        return ", ".join(value(v) if isinstance(v, list | tuple) else str(v) for v in found)
    return str(found)


def items(news: News, formats: Formats = FORMATS) -> list[Item]:
    """The news in reading order: the builds, rows that appeared, disappeared or failed,
    the largest changes, then each cause once."""
    found = [Item("builds", _builds(news))]
    if news.appeared:
        found.append(Item(f"appeared on {news.after_name}",
                          _one_sided_lines(news.appeared, news.before_name, formats)))
    if news.disappeared:
        found.append(Item(f"gone on {news.after_name}",
                          _one_sided_lines(news.disappeared, news.after_name, formats)))
    if news.failed:
        names = {"before": news.before_name, "after": news.after_name}
        found.append(Item("failed its checks", tuple(
            f"{f.algorithm} {f.operation or 'every operation'} [{f.implementation}] on "
            f"{names[f.side]}: {f.reason}" for f in news.failed)))
    if news.compared:  # a comparison of memory runs only has no timed rows
        found.append(Item("changes", _changes(news, formats)))
    if news.causes or news.unexplained:
        found.append(Item("causes", _causes(news)))
    return found


def _builds(news: News) -> tuple[str, ...]:
    lines = [f"{c.topic}: {_change(c)}" + (f" ({c.note})" if c.note else "")
             for c in news.builds]
    if not lines:
        lines.append("the fingerprints do not differ (apart from labels)")
    if news.unchanged:
        lines.append(f"the same on both: {', '.join(news.unchanged)}")
    if news.other_fields:
        lines.append(f"{news.other_fields} minor field(s) differ too (paths, other "
                     "packages): see the differences")
    return tuple(lines)


def _change(change: Change) -> str:
    """A topic's change: "before → after", or for a loaded binary under the same version
    string what makes it another one (`explain.binary_change`)."""
    if change.field.startswith("binaries."):
        return explain.binary_change(change.before, change.after)
    return f"{_told(change.field, change.before)} → {_told(change.field, change.after)}"


def _told(field: str, found: Any) -> str:
    """A build's value; an OpenSSL capability knob in words ("AES-NI hidden")."""
    if field.startswith("knobs.") and isinstance(found, str):
        return explain.knob_text(field.removeprefix("knobs."), found) or "none"
    return value(found)


#: Rows measured on one side only without a reason, named before the rest are counted.
UNASKED_NAMED = 6


def _one_sided_lines(entries: Sequence[Availability], other_side: str, formats: Formats
                     ) -> tuple[str, ...]:
    """Rows the other side gave a reason for, one line each; rows it simply did not
    measure (a subset compared with a full run: nobody asked for them) in one line."""
    told = [_one_sided(e, other_side, formats) for e in entries if e.reason != NO_REASON]
    unasked = [e for e in entries if e.reason == NO_REASON]
    if unasked:
        names = list(dict.fromkeys(e.algorithm for e in unasked))
        more = len(names) - UNASKED_NAMED
        listed = ", ".join(names[:UNASKED_NAMED]) + (f" and {more} more" if more > 0 else "")
        rows = sum(len(e.rows) for e in unasked)
        told.append(f"{rows} row(s) of {listed}: not measured on {other_side}, which stored "
                    "no reason (not asked for there)")
    return tuple(told)


def _one_sided(entry: Availability, other_side: str, formats: Formats) -> str:
    block = f" @{entry.block_size}B" if entry.block_size else ""
    figures = []
    for row in entry.rows:
        text = f"{row.operation} {formats.rate(row.rate, entry.unit)}"
        # Beside it the same operation's rate through the implementation it is set against,
        # not their ratio: two unpaired rates give no interval to back a ratio with.
        if row.peer is not None and row.peer_rate:
            text += f" ({row.peer}: {formats.rate(row.peer_rate, entry.unit)})"
        figures.append(text)
    checked = (f"checked first ({', '.join(entry.checks)})" if entry.checks
               else "no checks recorded")
    return (f"{entry.algorithm}{block} [{entry.implementation}]: {', '.join(figures)}; "
            f"{checked}; on {other_side}: {entry.reason}")


#: What judged a row, in words.
DESIGNS = {"runs": "runs as the unit", "pairs": "pairs of an ab session",
           "machines": "machines, each against itself"}


def _changes(news: News, formats: Formats) -> tuple[str, ...]:
    designs = dict(news.designs) or {"pairs" if news.paired else "runs": news.compared}
    design = DESIGNS[next(iter(designs))] if len(designs) == 1 else "; ".join(
        f"{n} by {DESIGNS[name]}" for name, n in designs.items())
    counts = ", ".join(f"{n} {v}" for v, n in news.verdicts) or "none"
    lines = [f"{news.compared} row(s) measured on both sides ({design}): {counts}"]
    lines += [_highlight(h, formats) for h in news.changes]
    if news.more_changes:
        lines.append(f"... and {news.more_changes} more faster or slower row(s) in the table")
    if not news.changes:
        lines.append("no row got faster or slower beyond its noise band")
    return tuple(lines)


def _highlight(h: Highlight, formats: Formats) -> str:
    causes = ", ".join(f"{topic} ({strength})" for topic, strength in h.causes) \
        or "no fingerprint difference explains it"
    row = h.row
    return (f"{row.verdict}: {row_name(row.key)} {formats.change(row.ratio)} "
            f"{numbers.bracket(row.ci_low, row.ci_high)} "
            f"({formats.rate(row.before, row.unit)} → {formats.rate(row.after, row.unit)}); "
            f"causes: {causes}")


def _causes(news: News) -> tuple[str, ...]:
    """Strong and likely causes with the rows each explains; causes that are only ever weak
    without their rows (they reach every row a little, so the list would say nothing)."""
    lines = [_cause(group, reason) for group in news.causes if group.strength != "weak"
             for reason in group.reasons if reason.strength != "weak"]
    lines += [f"{g.topic} ({_values(g)}): weak: {g.reasons[0].why}"
              for g in news.causes if g.strength == "weak"]
    if news.unexplained:
        lines.append(f"no fingerprint difference explains {_rows(news.unexplained)}")
    return tuple(lines)


def _cause(group: CauseGroup, reason: Reason) -> str:
    """One explanation of a cause, with the rows it applies to."""
    return (f"{group.topic} ({_values(group)}), "
            f"{reason.strength} for {_rows(reason.rows)}: {reason.why}")


def _values(group: CauseGroup) -> str:
    """A cause's "before → after", a knob's values in words."""
    if group.field is None:
        return f"{value(group.before)} → {value(group.after)}"
    return f"{_told(group.field, group.before)} → {_told(group.field, group.after)}"


def _rows(keys: Sequence[RowKey]) -> str:
    named = ", ".join(row_name(k) for k in keys[:ROWS_NAMED])
    more = len(keys) - ROWS_NAMED
    return named + (f" and {more} more row(s)" if more > 0 else "")


def story(news: News, formats: Formats = FORMATS) -> tuple[str, list[str]]:
    """The step of the story for a report's summary: what changed in the build (the
    headline, told after the two sides' names) and the points under it (what appeared or
    went, how many rows moved, the largest change with its causes, failures)."""
    shown = [c for c in news.builds if c.topic != "host"]
    builds = "; ".join(f"{c.topic} {_change(c)}" for c in shown)
    if news.unchanged:
        builds += f"{'; ' if builds else ''}the same {', '.join(news.unchanged)}"
    headline = builds or "the same fingerprint"
    points = []
    for entries, verb, side in ((news.appeared, "appeared", news.before_name),
                                (news.disappeared, "went away", news.after_name)):
        if entries:
            names = list(dict.fromkeys(f"{a.algorithm} [{a.implementation}]"
                                       for a in entries))
            reasons = list(dict.fromkeys(a.reason for a in entries))
            points.append(f"{sum(len(a.rows) for a in entries)} row(s) {verb}: "
                          f"{', '.join(names)} (on {side}: {reasons[0]}"
                          f"{'; ...' if len(reasons) > 1 else ''})")
    if news.compared:  # a comparison of memory runs only has no timed rows
        moved = dict(news.verdicts)
        point = (f"of the {news.compared} row(s) measured on both sides, "
                 f"{moved.get('faster', 0)} got faster and {moved.get('slower', 0)} slower")
        if news.changes:
            top = news.changes[0]
            causes = ", ".join(f"{t} ({s})" for t, s in top.causes) or "no known cause"
            point += (f"; the largest: {row_name(top.key)} {formats.change(top.row.ratio)} "
                      f"{numbers.bracket(top.row.ci_low, top.row.ci_high)} ({causes})")
        points.append(point)
    if news.failed:
        points.append(f"{len(news.failed)} implementation(s) failed their checks")
    return headline, points


def table(news: News) -> Table:
    """The news for the terminal: a heading per kind of news, its lines beside it."""
    rows = [(Cell(item.heading, strong=True) if i == 0 else "", line)
            for item in items(news) for i, line in enumerate(item.lines)]
    return Table(f"what changed: {news.before_name} → {news.after_name}",
                 (Column("what"), Column("detail", wrap=True)), tuple(rows), show_header=False)


def markdown(news: News) -> md.Markdown:
    """A bullet per kind of news, its lines nested beneath (GFM nested lists)."""
    lines = [f"**What changed** from {md.text(news.before_name)} to "
             f"{md.text(news.after_name)}:", ""]
    for item in items(news):
        lines.append(f"- **{md.text(item.heading)}**")
        lines += [f"  - {md.text(line)}" for line in item.lines]
    return md.Markdown("\n".join(lines))


def summary_bullet(news: News) -> md.Markdown:
    """A bullet telling this step of the story, its points nested (see `story`)."""
    headline, points = story(news)
    lines = [f"- **{md.text(news.before_name)} → {md.text(news.after_name)}**: "
             f"{md.text(headline)}"]
    lines += [f"  - {md.text(point)}" for point in points]
    return md.Markdown("\n".join(lines))
