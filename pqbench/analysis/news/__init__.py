"""What changed between two builds, as one plain record that compare and report lead with.

A comparison table answers "how did each row move"; a reader of an OS upgrade first wants
the news: which facts of the build changed (the userland, the
system OpenSSL, the C library, with the kernel and CPU kept), which rows appeared or
disappeared and why (Debian 12's libcrypto: "not offered: ML-KEM-768 needs OpenSSL >= 3.5"),
which rows changed most with their causes, and each cause once with the rows it explains,
instead of the same sentence on every row. `summarize` builds that record from a
`RunComparison` and the runs behind it; it is pure (no printing, no storage), and
`pqbench.views.news` turns it into lines for the terminal, Markdown and the report.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pqbench.analysis import explain, pairing, verdict
from pqbench.analysis.news.model import (
    Availability,
    CauseGroup,
    Change,
    Failure,
    Highlight,
    News,
    OneSided,
    Reason,
)
from pqbench.analysis.news.topics import KEY_TOPICS, TOPICS, preference, representative, topic_of
from pqbench.analysis.rows import Row, RowComparison, RowKey
from pqbench.data.record.results import Measurement, Run

__all__ = ["Availability", "CauseGroup", "Change", "Failure", "Highlight", "News", "OneSided",
           "Reason", "RowKey", "cause_topics", "summarize"]

#: Significant changes listed by name (largest first); the rest are counted.
HIGHLIGHTS = 10

#: Problem kinds that mean an implementation gave a wrong answer (never a mere absence).
FAILED_KINDS = ("failed verification", "error")

#: Why a one-sided row's other side has no row, when that side stored no reason.
NO_REASON = "no row there, and no reason stored (not asked for)"


def summarize(sides: RowComparison, before: Sequence[Run], after: Sequence[Run]) -> News:
    """The news of one comparison: its rows and sides (`sides`), and the two groups of runs
    they were made from."""
    builds, other = build_changes(sides.differences)
    changed = [row for row in sides.rows if row.changed]
    rows_after = {r.key: r.after for r in sides.rows}
    rows_before = {r.key: r.before for r in sides.rows}
    return News(
        before_name=sides.before_name, after_name=sides.after_name,
        builds=builds, unchanged=unchanged_topics(builds, before, after), other_fields=other,
        appeared=availability(sides.only_after, after, before, rows_after, sides.paired),
        disappeared=availability(sides.only_before, before, after, rows_before,
                                 sides.paired),
        failed=failures(before, after),
        changes=tuple(highlight(row) for row in changed[:HIGHLIGHTS]),
        more_changes=max(0, len(changed) - HIGHLIGHTS),
        causes=cause_groups(changed, builds),
        unexplained=tuple(row.key for row in changed if not row.causes),
        verdicts=tuple((v, n) for v in verdict.VERDICTS
                       if (n := sum(1 for r in sides.rows if r.verdict == v))),
        paired=sides.paired,
        designs=tuple(sides.designs.items()),
    )


# --- the builds ---------------------------------------------------------------------------


def build_changes(found: Sequence[explain.Difference]) -> tuple[tuple[Change, ...], int]:
    """Differences gathered by topic, each by its most telling field (topics in the order
    of `topics.TOPICS`), and how many differing fields belong to no topic."""
    by_topic: dict[str, list[explain.Difference]] = {}
    other = 0
    for diff in found:
        topic = topic_of(diff.field)
        if topic is None:
            other += 1
        else:
            by_topic.setdefault(topic, []).append(diff)
    changes = []
    for topic, _ in TOPICS:
        diffs = by_topic.get(topic)
        if diffs:
            best = min(diffs, key=lambda d: (preference(topic, d.field), d.field.count(".")))
            note = next((d.note for d in diffs if d.note), None)
            changes.append(Change(topic, best.field, best.before, best.after,
                                  tuple(d.field for d in diffs), note))
    return tuple(changes), other


def unchanged_topics(builds: Sequence[Change], before: Sequence[Run],
                     after: Sequence[Run]) -> tuple[str, ...]:
    """Key topics every run records and no difference touches: what the story kept."""
    differing = {c.topic for c in builds}
    kept = []
    for topic in KEY_TOPICS:
        field = representative(topic)
        if topic not in differing and all(r.environment.path(field) not in (None, "", [])
                                          for r in (*before, *after)):
            kept.append(topic)
    return tuple(kept)


# --- rows on one side only ----------------------------------------------------------------


def availability(keys: Iterable[RowKey], measured: Sequence[Run], other: Sequence[Run],
                 compared: Mapping[RowKey, float], paired: bool) -> tuple[Availability, ...]:
    """Rows `measured` has and `other` has not, grouped by algorithm, implementation and
    the reason `other` gave; each with its level and the checks it passed."""
    groups: dict[tuple[str, str, int | None, str], list[OneSided]] = {}
    rows = _measurements(measured)
    wanted = set(keys)
    for key in [k for k in rows if k in wanted]:  # in the order the side measured them
        algorithm, implementation, operation, block_size = key
        peer = _fastest_peer(key, rows, compared, paired)
        entry = OneSided(operation, level(rows[key], paired), *peer)
        groups.setdefault((algorithm, implementation, block_size,
                           reason_missing(key, other)), []).append(entry)
    return tuple(
        Availability(algorithm, implementation, block_size,
                     "bytes/s" if block_size else "ops/s", reason,
                     checks_passed(measured, algorithm, implementation),
                     tuple(_scaled(e, block_size) for e in entries))
        for (algorithm, implementation, block_size, reason), entries in groups.items())


def _measurements(runs: Sequence[Run]) -> dict[RowKey, list[Measurement]]:
    found: dict[RowKey, list[Measurement]] = {}
    for run in runs:
        for m in run.measurements:
            if m.samples:
                found.setdefault(m.key, []).append(m)
    return found


def level(measurements: Sequence[Measurement], paired: bool) -> float:
    """A side's level for one row, as compare estimates it: in an `ab` session the
    geometric mean of the rounds' rates in CPU time (the rates pairs compare), otherwise
    the geometric mean of each run's median round (the run as the unit). Operations per
    second; `_scaled` makes bytes of block rows."""
    if paired:
        logs = [math.log(cpu or r.ops_per_sec)
                for m in measurements
                for r, cpu in zip(m.rounds, pairing.cpu_rates(m), strict=True) if r.ops > 0]
        return math.exp(sum(logs) / len(logs))
    medians = [_median([math.log(s) for s in m.samples]) for m in measurements]
    return math.exp(sum(medians) / len(medians))


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _fastest_peer(key: RowKey, rows: Mapping[RowKey, list[Measurement]],
                  compared: Mapping[RowKey, float], paired: bool
                  ) -> tuple[str | None, float | None]:
    """The fastest other implementation of the same operation on the same side: its level
    from the comparison where the row was compared (the figure its table shows)."""
    algorithm, implementation, operation, block_size = key
    best: tuple[str | None, float | None] = (None, None)
    for other, found in rows.items():
        if other[0] == algorithm and other[2:] == (operation, block_size) \
                and other[1] != implementation:
            value = compared[other] / (block_size or 1) if other in compared \
                else level(found, paired)
            if best[1] is None or value > best[1]:
                best = (other[1], value)
    return best


def _scaled(entry: OneSided, block_size: int | None) -> OneSided:
    if not block_size:
        return entry
    return OneSided(entry.operation, entry.rate * block_size, entry.peer,
                    None if entry.peer_rate is None else entry.peer_rate * block_size)


def reason_missing(key: RowKey, runs: Sequence[Run]) -> str:
    """Why `runs` have no such row: the problems they stored for it, else NO_REASON."""
    algorithm, implementation, operation, _ = key
    reasons = dict.fromkeys(
        f"{p.kind}: {p.reason}" for run in runs for p in run.problems
        if p.algorithm == algorithm and p.implementation == implementation
        and p.operation in (None, operation))
    return "; ".join(reasons) if reasons else NO_REASON


def checks_passed(runs: Sequence[Run], algorithm: str, implementation: str
                  ) -> tuple[str, ...]:
    """The checks the pair passed before it was timed, over the runs (each once)."""
    return tuple(dict.fromkeys(
        check for run in runs for v in run.verifications
        if (v.algorithm, v.implementation) == (algorithm, implementation) for check in v.checks))


def failures(before: Sequence[Run], after: Sequence[Run]) -> tuple[Failure, ...]:
    """Implementations that failed their checks (never timed there), on either side."""
    found = dict.fromkeys(
        Failure(side, p.algorithm, p.implementation, p.operation, p.reason)
        for side, runs in (("before", before), ("after", after)) for run in runs
        for p in run.problems if p.kind in FAILED_KINDS)
    return tuple(found)


# --- changed rows and their causes --------------------------------------------------------


def cause_topics(row: Row) -> tuple[tuple[str, str], ...]:
    """(topic, strength) of a row's causes, each topic once at its strongest, strongest
    first; weak topics only when no stronger cause is known."""
    found: dict[str, str] = {}
    for cause in row.causes:
        topic = topic_of(cause.field) or cause.field
        if topic not in found or _rank(cause.strength) < _rank(found[topic]):
            found[topic] = cause.strength
    ranked = sorted(found.items(), key=lambda item: _rank(item[1]))
    strong = [item for item in ranked if item[1] != "weak"]
    return tuple(strong or ranked)


def _rank(strength: str) -> int:
    return explain.STRENGTHS.index(strength) if strength in explain.STRENGTHS else 99


def _told(causes: Iterable[explain.Cause]) -> dict[tuple[str, str], explain.Cause]:
    """One cause per (topic, strength) of a row: the one of the topic's most telling field
    (`platform.userland` speaks for `os.version`, `os_build` ... of the same upgrade)."""
    chosen: dict[tuple[str, str], explain.Cause] = {}
    for cause in causes:
        topic = topic_of(cause.field) or cause.field
        known = chosen.get((topic, cause.strength))
        if known is None or preference(topic, cause.field) < preference(topic, known.field):
            chosen[(topic, cause.strength)] = cause
    return chosen


def highlight(row: Row) -> Highlight:
    return Highlight(row, cause_topics(row))


def cause_groups(changed: Sequence[Row], builds: Sequence[Change]) -> tuple[CauseGroup, ...]:
    """Every cause of the changed rows, grouped by topic and told once: per topic its
    values (from the builds), and per distinct explanation the rows it applies to."""
    values = {c.topic: (c.before, c.after) for c in builds}
    fields = {c.topic: c.field for c in builds}
    reasons: dict[str, dict[tuple[str, str], list[RowKey]]] = {}
    fallback: dict[str, tuple[Any, Any]] = {}
    for row in changed:
        for (named, _), cause in _told(row.causes).items():
            fallback.setdefault(named, (cause.before, cause.after))
            fields.setdefault(named, cause.field)
            reasons.setdefault(named, {}).setdefault((cause.strength, cause.shared_why),
                                                     []).append(row.key)
    groups = []
    for topic, by_why in reasons.items():
        told = tuple(sorted((Reason(strength, why, tuple(keys))
                             for (strength, why), keys in by_why.items()),
                            key=lambda r: (_rank(r.strength), -len(r.rows))))
        before, after = values.get(topic, fallback[topic])
        groups.append(CauseGroup(topic, before, after, told[0].strength, told,
                                 fields.get(topic)))
    groups.sort(key=lambda g: (_rank(g.strength), -len(g.rows), g.topic))
    return tuple(groups)
