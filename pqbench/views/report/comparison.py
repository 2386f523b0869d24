"""Before against after: the compare table with verdicts and causes, and its charts.

The statistics are `pqbench.analysis.compare`'s (the run as the unit, or the pairs of an `ab`
session); this module only lays them out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pqbench.analysis import history, pairing, verdict
from pqbench.analysis.compare import RunComparison
from pqbench.analysis.noise import NoiseModel
from pqbench.app.compare import comparable_steps, compare_sides
from pqbench.app.history import history_of_runs
from pqbench.app.identity import by_build
from pqbench.data.record.results import Run
from pqbench.data.record.runs import group_runs, run_order
from pqbench.views import comparisons, numbers
from pqbench.views import markdown as md
from pqbench.views import news as news_text
from pqbench.views.report.base import Section
from pqbench.views.report.charts import LINE_COLOURS, History, Ratios

#: Rows in the ratio chart; the largest changes first, as compare sorts them.
_CHART_ROWS = 24


def groups_for(runs: Sequence[Run], by: str | None) -> list[tuple[str, list[Run]]]:
    """--by FIELD groups, each of one build (`identity.by_build`: a masked run beside
    unmasked ones is a group of its own); otherwise each run is its own group (named by
    label or id)."""
    if by:
        return by_build(group_runs(runs, by))
    ordered = sorted(runs, key=run_order)
    names = [r.label or r.run_id for r in ordered]
    if len(set(names)) != len(names):
        names = [r.run_id for r in ordered]
    return [(name, [run]) for name, run in zip(names, ordered, strict=True)]


def _row_label(algorithm: str, operation: str, block_size: int | None, impl: str) -> str:
    block = f" {numbers.size(block_size)}" if block_size else ""
    return f"{algorithm} {operation}{block} [{impl}]"


#: Fingerprint differences shown in full; the rest (build details) are counted.
_DIFFERENCES_SHOWN = 12


def ratio_chart(result: RunComparison, filename: str) -> Ratios:
    rows = tuple((_row_label(r.algorithm, r.operation, r.block_size, r.implementation),
                  r.ratio, r.ci_low, r.ci_high, r.verdict)
                 for r in result.rows[:_CHART_ROWS])
    shown = "" if len(result.rows) <= _CHART_ROWS else f" (largest {_CHART_ROWS} changes)"
    band = verdict.MIN_THRESHOLD if result.threshold is None else result.threshold
    label = (f"±{numbers.share(band)} band (auto)"
             if result.threshold is None else None)
    return Ratios(filename, f"{result.after_name} against {result.before_name}{shown}", rows,
                  band, label)


def _band_text(result: RunComparison) -> str:
    if result.threshold is not None:
        return f"±{numbers.share(result.threshold)}"
    return (f"the row's noise band (±{numbers.share(verdict.MIN_THRESHOLD)}, or the row's noise "
            "floor where that is larger)")


def _summary(result: RunComparison) -> str:
    listed = comparisons.verdict_counts(result)
    unit = "pairs of an `ab` session" if result.paired else "runs"
    return (f"{len(result.rows)} rows compared ({unit} as the unit): {listed}. A row is "
            f"faster or slower only when p < {numbers.number(result.alpha, trim=True)} and its "
            "whole interval lies "
            f"beyond {_band_text(result)}; no change when the whole interval lies inside it; "
            "inconclusive otherwise. Ratios above 1 mean the after side is faster.")


def comparison(result: RunComparison, index: int, prefix: str = "",
               changed_only: bool = False) -> Section:
    """One before/after pair: what changed (the news), then the detail: the verdict
    counts, what differs, the ratio chart, and every row folded.

    `changed_only` (a history of several steps) lists only rows judged faster or slower.
    """
    chart = ratio_chart(result, f"{prefix}compare-{index}.png")
    parts: list[str] = [md.heading(3, f"{result.before_name} → {result.after_name}")]
    bullets: tuple[str, ...] = ()
    if result.news is not None:
        parts.append(news_text.markdown(result.news))
        bullets = (news_text.summary_bullet(result.news),)
    parts.append(_summary(result))
    parts += [f"**Warning:** {md.text(w)}" for w in result.warnings]
    parts.append("What differs between the two fingerprints:" if result.differences
                 else "The two fingerprints do not differ.")
    if result.differences:
        table, more = comparisons.differences_table(result, _DIFFERENCES_SHOWN)
        parts.append(md.render(table))
        if more:
            parts.append(f"{more} further fields differ (library build details); "
                         "`pqbench compare --json` lists them all.")
    parts.append(md.image(chart.title, chart.filename))
    shown = [r for r in result.rows if r.changed] if changed_only else list(result.rows)
    if shown:
        # The news and the chart tell the story; every row is there for who checks it.
        parts.append(md.details(
            f"{'the changed rows' if changed_only else 'every compared row'} ({len(shown)}): "
            "before, after, ratio, interval, p-value, verdict and why",
            md.render(comparisons.compare_table(result, shown))))
    if len(shown) < len(result.rows):
        parts.append(f"{len(result.rows) - len(shown)} rows without a change are not listed; "
                     "the chart shows the largest ratios of all rows.")
    return Section("\n\n".join(parts), (chart,), bullets)


#: The kinds a report compares (never across kinds: they share no row), with their chart
#: names' prefixes and their sections' titles.
KINDS = (("speed", "", "Comparison"), ("files", "files-", "Comparison of the file benchmarks"),
         ("tls", "tls-", "Comparison of the TLS handshakes"))


def each_against_the_next(title: str, by: str | None, method: str,
                          alone: Sequence[str] = ()) -> Section:
    """The head of a comparison of each group (or run) with the next that shares rows with
    it; the groups that share no row with any other are named, not compared."""
    lone = (f"Not compared: {', '.join(md.text(name) for name in alone)} (no other group "
            "shares a row with it)." if alone else "")
    return Section("\n\n".join(part for part in [
        md.heading(2, title),
        f"Runs grouped by {md.inline_code(by)}, each group against the one before it that "
        "measured some of the same rows." if by else
        "Each run against the one before it that measured some of the same rows, oldest "
        "first.", lone, f"Method: {md.text(method)}."] if part))


def sections(runs: Sequence[Run], by: str | None, threshold: float | None,
             cross_machine: bool = False,
             annotations: Mapping[str, Sequence[str]] | None = None,
             model: NoiseModel | None = None) -> list[Section]:
    """The comparison part of a report; empty for a single run or a single group.
    ``model`` is the machine's noise model (rows with too few runs are judged against it).

    Speed runs are compared with speed runs and file runs with file runs: they share no
    row, so comparing across kinds could only fail.
    """
    found: list[Section] = []
    for kind, prefix, title in KINDS:
        of_kind = [r for r in runs if r.kind == kind]
        found += _sections_of_kind(of_kind, by, threshold, cross_machine, annotations or {},
                                   prefix, title, model)
    return found


def _sections_of_kind(runs: Sequence[Run], by: str | None, threshold: float | None,
                      cross_machine: bool, annotations: Mapping[str, Sequence[str]],
                      prefix: str, title: str, model: NoiseModel | None = None
                      ) -> list[Section]:
    groups = groups_for(runs, by)
    if len(groups) < 2:
        return []
    pairs, alone = comparable_steps(groups)
    if not pairs:
        return []
    results = [compare_sides(list(groups[b][1]), list(groups[a][1]), threshold,
                             cross_machine=cross_machine, before_name=groups[b][0],
                             after_name=groups[a][0], noise=lambda _runs: model)
               for b, a in pairs]
    head = each_against_the_next(title, by, results[0].method,
                                 [groups[i][0] for i in alone])
    labels = [r.label for r in runs]
    unique_labels = None not in labels and len(set(labels)) == len(labels)
    # The two sides of one ab session: their history would be the comparison told twice.
    steps = None if by is None and _one_session(runs) else history_section(
        runs, by or ("label" if unique_labels else "run_id"), annotations, prefix, model)
    return [head, *(comparison(r, i + 1, prefix, changed_only=len(results) > 1)
                    for i, r in enumerate(results)),
            *([steps] if steps else [])]


def _one_session(runs: Sequence[Run]) -> bool:
    """Whether `runs` are exactly the two sides of one `pqbench ab` session."""
    if len(runs) != 2:
        return False
    before, after = sorted(runs, key=run_order)
    return pairing.session_pairs([before], [after]) is not None


# --- history ------------------------------------------------------------------------------

#: History charts drawn at most (one per algorithm, largest steps first), and series per
#: chart (one colour each, never repeated).
_HISTORY_CHARTS = 4
_HISTORY_SERIES = len(LINE_COLOURS)


def _series_label(s: history.Series) -> str:
    block = f" {numbers.size(s.block_size)}" if s.block_size else ""
    return f"{s.operation}{block} [{s.implementation}]"


def _largest_step(series: history.Series) -> float:
    """|ln ratio| of the series' largest step; 0 without one."""
    return max((abs(math.log(step.ratio)) for step in series.steps if step.ratio > 0),
               default=0.0)


def _history_chart(algorithm: str, series: Sequence[history.Series], builds: Sequence[str],
                   by: str, filename: str) -> History:
    """The series with the largest steps, as many as colours tell apart; the chart and
    the section name the ones left out."""
    shown = _charted_series(series)
    unit = shown[0].unit
    lines, intervals = [], []
    for s in shown:
        at = {p.build: p for p in s.points}
        lines.append((_series_label(s), tuple(at[b].median if b in at else None
                                              for b in builds)))
        intervals.append(tuple((at[b].ci_low, at[b].ci_high) if b in at else None
                               for b in builds))
    steps = tuple((_series_label(s), builds.index(step.build),
                   f"{_series_label(s)}: "
                   f"{numbers.change_beside_interval(step.ratio, step.ci_low, step.ci_high)}")
                  for s in shown for step in s.steps)
    hidden = [_series_label(s) for s in series if s not in shown]
    footnote = (f"{len(hidden)} of {len(series)} series not drawn (more than the colours tell "
                f"apart): {', '.join(hidden)}" if hidden else "")
    ylabel = ("throughput (log scale)" if unit == "bytes/s"
              else "operations per second (log scale)")
    return History(filename, f"{algorithm} by {by}", ylabel, tuple(builds), tuple(lines), steps,
                   tuple(intervals), "B/s" if unit == "bytes/s" else "", footnote)


def _charted_series(series: Sequence[history.Series]) -> list[history.Series]:
    """The series a history chart draws: the largest steps first, one per colour."""
    return sorted(series, key=lambda s: (-_largest_step(s), s.implementation, s.operation,
                                         s.block_size or 0))[:_HISTORY_SERIES]


def history_section(runs: Sequence[Run], by: str, annotations: Mapping[str, Sequence[str]],
                    prefix: str = "", model: NoiseModel | None = None) -> Section | None:
    """Steps over two or more groups (two: compare's verdict, as a step), with a chart per
    algorithm that stepped."""
    builds = [name for name, _ in by_build(group_runs(runs, by))]
    if len(builds) < 2:
        return None
    names = list(dict.fromkeys(m.algorithm for r in sorted(runs, key=lambda r: r.started_at)
                               for m in r.measurements))
    # A series measured in one group only has no history to show.
    per_algorithm = {name: [one.series for one in history_of_runs(
                         runs, name, by=by, annotations=annotations, model=model)
                         if len(one.series.points) >= 2]
                     for name in names}
    return history_of(per_algorithm, builds, by, prefix)


#: How the points' intervals were made, said under the history's method.
BANDS = ("In the charts the shaded band around a line is each point's 95 % confidence "
         "interval: Student's t interval of its runs' mean log level (a single run's: its "
         "order-statistic interval).")


def history_of(per_algorithm: Mapping[str, Sequence[history.Series]], builds: Sequence[str],
               by: str, prefix: str = "") -> Section:
    """The history part: every step found in a table, a chart per algorithm that stepped
    (largest steps first, at most `_HISTORY_CHARTS`), and what the charts leave out.
    `per_algorithm` holds, in the order the algorithms were first measured, the series of
    two points or more."""
    names = list(per_algorithm)
    largest = {name: max((_largest_step(s) for s in series), default=0.0)
               for name, series in per_algorithm.items()}
    ranked = sorted((n for n in names if per_algorithm[n]), key=lambda n: -largest[n])
    charted = [n for n in ranked if largest[n] > 0][:_HISTORY_CHARTS] or ranked[:1]
    charts = [_history_chart(name, per_algorithm[name], builds, by,
                             f"{prefix}history-{i + 1}.png")
              for i, name in enumerate(charted)]
    rows = [[s.algorithm, s.implementation, s.operation, md.byte_count(s.block_size),
             step.build, numbers.rate(step.before, s.unit), numbers.rate(step.after, s.unit),
             numbers.change_beside_interval(step.ratio, step.ci_low, step.ci_high),
             "; ".join(p.notes[0] for p in s.points
                                             if p.build == step.build and p.notes)
             or md.MISSING]
            for name in names for s in per_algorithm[name] for step in s.steps]
    parts = [md.heading(3, f"History by {by}"),
             f"{len(builds)} groups in the order they were first measured, each of one build. "
             "A point is a group's level (the geometric mean of the medians of the runs that "
             "measured the row). A step is where the comparison rule judges the runs before "
             "it against the runs after it faster or slower, as the comparisons above do "
             "(few runs against this machine's run-to-run spread of the row; an ab session's "
             "worker pairs where one measured both builds); the candidates come from a "
             "penalised piecewise-constant fit of the log levels (asv-style step detection). "
             f"{BANDS}"]
    if rows:
        parts.append(md.table(["algorithm", "implementation", "operation", "block",
                               "first at new level", "before", "after", "change [CI]",
                               "notes"],
                              rows, ["l", "l", "l", "r", "l", "r", "r", "r", "l"]))
    else:
        parts.append("No step was detected in any series.")
    parts += [md.image(c.title, c.filename) for c in charts]
    parts += _left_out(ranked, charted, per_algorithm)
    return Section("\n\n".join(parts), tuple(charts))


def _left_out(ranked: Sequence[str], charted: Sequence[str],
              per_algorithm: Mapping[str, Sequence[history.Series]]) -> list[str]:
    """What the charts do not draw, said rather than dropped: algorithms without a chart
    and, per chart, the series beyond what its colours tell apart."""
    lines = []
    for name in charted:
        drawn = _charted_series(per_algorithm[name])
        hidden = [s for s in per_algorithm[name] if s not in drawn]
        if hidden:
            lines.append(f"{md.text(name)}: {len(drawn)} of {len(per_algorithm[name])} series "
                         f"drawn (the largest steps first); not drawn: "
                         f"{md.text(', '.join(_series_label(s) for s in hidden))}.")
    uncharted = [n for n in ranked if n not in charted]
    if uncharted:
        lines.append(f"No chart for {md.text(', '.join(uncharted))}: "
                     + ("no step was detected there." if len(charted) < _HISTORY_CHARTS
                        else f"at most {_HISTORY_CHARTS} charts, for the largest steps."))
    return ["\n".join(f"- {line}" for line in lines)] if lines else []
