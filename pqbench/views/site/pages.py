"""The site's pages as HTML text: the index, the regressions, a page per row, a page per
machine's comparison of its two newest builds.

Every value from stored runs (host and build names, labels, annotations, reasons,
algorithm names) is escaped for where it goes: HTML text and double-quoted attributes by
`esc` (`html.escape`, quotes too, control characters dropped), JSON inside a
`<script type="application/json">` block by `script_json` (`<`, `>` and `&` as \\u
escapes, so no `</script>` or `<!--` can end or change the block), plotly text by
`charts.text`. Pages hold no inline script or style: the Content-Security-Policy
(`POLICY`) allows only the site's own files and no connection at all, so a hole in the
escaping could still run nothing, and a page makes no request beyond its folder.

Each chart has its table: the same points, levels, intervals and steps as text, folded
under the chart. Pages carry no date or time of their own making, so publishing the same
store again gives the same bytes.
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from pqbench.analysis.history import Series
from pqbench.app.publish import Cause, Comparison, MachinePart, RatioLine, Site
from pqbench.data.record.fingerprint import LOAD_THRESHOLD, STEAL_THRESHOLD
from pqbench.data.record.results import RowKey
from pqbench.data.record.transfer import json_ready
from pqbench.platform.untrusted import first_few, printable
from pqbench.views import numbers
from pqbench.views.runs import operation as operation_words
from pqbench.views.runs import utc_time
from pqbench.views.site.charts import cause_words, history_chart

#: Only the site's own files; no connection, no frame, no form target, no plugin. Styles
#: 'unsafe-inline': plotly.js sets element styles and adds its own <style> to draw.
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
          "img-src 'self' data:; font-src 'self'; connect-src 'none'; frame-src 'none'; "
          "object-src 'none'; base-uri 'none'; form-action 'none'")
PLOTLY = "assets/plotly.min.js"


@functools.lru_cache(maxsize=1 << 16)
def _escaped(text: str) -> str:
    return html.escape(printable(text), quote=True)


def esc(value: object) -> str:
    """Text for HTML text or a double-quoted attribute (each text escaped once: a fleet's
    pages name the same builds and runs thousands of times)."""
    return _escaped(str(value))


def script_json(value: Any) -> str:
    """JSON to embed in a <script type="application/json"> block."""
    return (json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def row_file(key: RowKey) -> str:
    """A row's page: a readable slug and a hash of the whole key (two keys that slug
    alike stay two pages)."""
    algorithm, implementation, operation, block = key
    slug = re.sub(r"[^a-z0-9]+", "-", f"{algorithm} {implementation} {operation} "
                                      f"{block or ''}".lower()).strip("-")[:60]
    digest = hashlib.sha256(json.dumps(list(key)).encode()).hexdigest()[:8]
    return f"row-{slug}-{digest}.html"


def compare_file(part: MachinePart) -> str:
    return f"compare-{part.machine.key}.html"


def row_name(key: RowKey | Series) -> str:
    if isinstance(key, Series):
        key = RowKey(key.algorithm, key.implementation, key.operation, key.block_size)
    return f"{key.algorithm} {operation_words(key.operation, key.block_size)} " \
           f"[{key.implementation}]"


def _page(title: str, body: str, *, charts: bool = False, data: Any = None,
          chart_data: str | None = None) -> str:
    scripts = ([f'<script src="{PLOTLY}" defer></script>'] if charts else []) + [
        '<script src="assets/site.js" defer></script>']
    blocks = []
    if data is not None:
        blocks.append('<script type="application/json" id="pqbench-page">'
                      f"{script_json(json_ready(data))}</script>")
    if chart_data is not None:  # JSON already, made by `script_json`
        blocks.append(f'<script type="application/json" id="pqbench-charts">{chart_data}'
                      "</script>")
    return "\n".join([
        "<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>{esc(title)} · pqbench</title>",
        '<link rel="stylesheet" href="assets/site.css">', *scripts, "</head>", "<body>",
        '<a class="skip" href="#main">Skip to the content</a>',
        '<header><span class="brand">pqbench</span>'
        '<nav aria-label="Site"><a href="index.html">Machines and rows</a>'
        '<a href="regressions.html">Regressions</a></nav></header>',
        f'<main id="main">\n<h1>{esc(title)}</h1>\n{body}\n</main>', *blocks,
        "</body>", "</html>", ""])


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], *, numeric: Sequence[int] = (),
           caption: str = "", attributes: Sequence[str] | None = None) -> str:
    """A table; `head` and cells are HTML already (escape their text first)."""
    found = [f"<caption>{caption}</caption>" if caption else "",
             "<thead><tr>" + "".join(f'<th scope="col">{h}</th>' for h in head)
             + "</tr></thead>", "<tbody>"]
    for number, row in enumerate(rows):
        extra = f" {attributes[number]}" if attributes else ""
        found.append(f"<tr{extra}>" + "".join(
            f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
            for i, c in enumerate(row)) + "</tr>")
    found.append("</tbody>")
    return "<table>" + "".join(found) + "</table>"


def _filters(rows: Sequence[RowKey], machines: Sequence[MachinePart],
             chosen: RowKey | None = None, *, row_page: bool = False) -> str:
    """The filter form: algorithm, implementation, operation and machine, then Show."""
    def select(name: str, label: str, options: Iterable[tuple[str, str]], current: str) -> str:
        items = [f'<option value="">{"every " + label}</option>'] if not row_page \
            or name == "machine" else []
        for value, words in options:
            picked = " selected" if value == current else ""
            items.append(f'<option value="{esc(value)}"{picked}>{esc(words)}</option>')
        return (f'<label for="filter-{name}">{label}<select id="filter-{name}" '
                f'name="{name}">{"".join(items)}</select></label>')

    def distinct(values: Iterable[str]) -> list[tuple[str, str]]:
        return [(v, v) for v in sorted(set(values))]

    parts = [select("algorithm", "algorithm", distinct(r.algorithm for r in rows),
                    chosen.algorithm if chosen else ""),
             select("implementation", "implementation",
                    distinct(r.implementation for r in rows),
                    chosen.implementation if chosen else ""),
             select("operation", "operation", distinct(r.operation for r in rows),
                    chosen.operation if chosen else ""),
             select("machine", "machine",
                    [(p.machine.key, p.machine.name) for p in machines], "")]
    return ('<form id="filters" class="filters" aria-label="Filters">' + "".join(parts)
            + '<button type="submit" id="filters-show">Show</button>'
            '<p id="filter-status" role="status" aria-live="polite"></p></form>')


def _load_words(part: MachinePart) -> str:
    latest = part.latest
    if not latest.under_load:
        return "no" if latest.others_cpu is not None or latest.steal is not None \
            else '<span class="muted">not recorded</span>'
    parts = []
    if latest.others_cpu is not None and latest.others_cpu >= LOAD_THRESHOLD:
        parts.append(f"other processes took {numbers.share(latest.others_cpu)}")
    if latest.steal is not None and latest.steal >= STEAL_THRESHOLD:
        parts.append(f"the hypervisor stole {numbers.share(latest.steal)}")
    return f'<span class="load">yes: {esc(", ".join(parts))}</span>'


def _ratio_cell(r: RatioLine) -> str:
    # In the words of every other ratio pqbench shows: "3.40x faster [3.31–3.47]".
    return esc(f"{numbers.time_change(r.estimate, r.ci_low, r.ci_high)} "
               f"({numbers.share(r.ci_level)} CI)")


def index_page(site: Site) -> str:
    parts = site.parts
    body = [f"<p>{numbers.count(len(parts))} machines, {numbers.count(len(site.rows))} rows "
            f"measured; {numbers.count(len(site.regressions))} rows whose latest step is "
            'slower or faster: <a href="regressions.html">the regressions</a>. Each row\'s '
            "page shows its history on every machine that measured it.</p>",
            '<h2 id="machines">Machines, newest run first</h2>']
    lines = []
    for part in parts:
        builds = part.builds
        newest = ", ".join(f"<code>{esc(b.name)}</code> ({numbers.count(b.runs)} runs)"
                           for b in builds[:3])
        more = "" if len(builds) <= 3 else (
            f"<details><summary>all {numbers.count(len(builds))} builds, newest first"
            "</summary><ol>" + "".join(
                f"<li><code>{esc(b.name)}</code>: {numbers.count(b.runs)} runs, "
                f"{esc(b.first[:10])} to {esc(b.last[:10])}</li>" for b in builds)
            + "</ol></details>")
        latest = part.latest
        compared = (f'<a href="{compare_file(part)}">{esc(part.comparison.before)} → '
                    f"{esc(part.comparison.after)}</a>" if part.comparison else
                    '<span class="muted">one build</span>')
        lines.append([f'<span id="m-{part.machine.key}">{esc(part.machine.name)}</span>',
                      newest + more,
                      f"<code>{esc(latest.run_id)}</code>, {esc(latest.kind)}, "
                      f"{esc(utc_time(latest.started_at))} UTC, <code>{esc(latest.build)}</code>",
                      _load_words(part), compared])
    body.append(_table(["machine", "OS builds, newest first", "latest run",
                        "taken under load", "newest build compared"], lines))
    body.append('<h2 id="ratios">Post-quantum against classical, per machine</h2>')
    body.append("<p>What a post-quantum exchange or signature costs in time against the "
                "classical one, in each machine's newest <code>speed</code> run: paired "
                "cycle by cycle within the run, with the interval of the Hodges-Lehmann "
                "estimate, said as the post-quantum scheme faster or slower than the "
                "classical one.</p>")
    ratio_rows = [[esc(p.machine.name), esc(r.name), _ratio_cell(r), numbers.count(r.pairs),
                   f"<code>{esc(r.run_id)}</code>"] for p in parts for r in p.ratios]
    body.append(_table(["machine", "ratio", "speed [CI] (level)", "pairs", "run"],
                       ratio_rows, numeric=(2, 3)) if ratio_rows else
                "<p>No machine's newest <code>speed</code> run measured a post-quantum "
                "scheme and its classical counterpart in cycles.</p>")
    body.append('<h2 id="rows">Rows</h2>')
    body.append(_filters(site.rows, parts))
    measured: dict[RowKey, list[str]] = {}
    latest_step: dict[RowKey, list[str]] = {}
    for part in parts:
        for series in part.series:
            key = RowKey(series.algorithm, series.implementation, series.operation,
                         series.block_size)
            measured.setdefault(key, []).append(part.machine.key)
    for found in site.regressions:
        key = RowKey(found.series.algorithm, found.series.implementation,
                     found.series.operation, found.series.block_size)
        latest_step.setdefault(key, []).append(found.step.verdict)
    rows, attributes = [], []
    for key in site.rows:
        steps = latest_step.get(key, [])
        rows.append([f'<a href="{row_file(key)}">{esc(row_name(key))}</a>',
                     numbers.count(len(measured.get(key, []))),
                     esc(", ".join(f"{steps.count(v)} {v}" for v in ("slower", "faster")
                                   if v in steps)) or '<span class="muted">none</span>'])
        attributes.append(f'data-algorithm="{esc(key.algorithm)}" '
                          f'data-implementation="{esc(key.implementation)}" '
                          f'data-operation="{esc(key.operation)}" '
                          f'data-machines="{esc(" ".join(measured.get(key, [])))}"')
    body.append(_table(["row", "machines", "machines whose latest step is"], rows,
                       numeric=(1,), attributes=attributes))
    return _page("The fleet", "\n".join(body), data={"index": True})


def _causes_cell(causes: Sequence[Cause]) -> str:
    return esc(cause_words(causes)) if causes else '<span class="muted">none named</span>'


def _verdict(words: str) -> str:
    css = words if words in ("slower", "faster") else "muted"
    return f'<span class="{css}">{esc(words)}</span>'


def regressions_page(site: Site) -> str:
    body = ["<p>Every row of every machine whose latest step is slower or faster beyond its "
            "band, newest first, as <code>pqbench history</code> finds steps: each is a "
            "verdict <code>compare</code> gives on the runs before and after it. A row "
            "whose builds measured the same speed has no step and is not listed.</p>"]
    rows = []
    for found in site.regressions:
        step = found.step
        key = RowKey(found.series.algorithm, found.series.implementation,
                     found.series.operation, found.series.block_size)
        before = found.series.points[step.index - 1].build
        rows.append([esc(found.when), esc(found.machine.name),
                     f'<a href="{row_file(key)}#m-{found.machine.key}">{esc(row_name(key))}</a>',
                     _verdict(step.verdict),
                     esc(f"{numbers.speed_change(step.ratio)} "
                         f"{numbers.bracket(step.ci_low, step.ci_high)}"),
                     f"<code>{esc(before)}</code> → <code>{esc(step.build)}</code>",
                     _causes_cell(found.causes), esc(step.reason)])
    body.append(_table(["first run of the build", "machine", "row", "step", "speed "
                        "[95 % interval]", "builds", "named causes", "why"], rows,
                       numeric=(4,)) if rows else
                "<p>No row's latest step is slower or faster.</p>")
    if site.fleet:
        body.append(_fleet_steps(site))
    return _page("Regressions and improvements", "\n".join(body))


#: Machines a line of the steps by build names (the rest counted; each row's page has all).
SITE_NAMED = 10


def _fleet_steps(site: Site) -> str:
    """Every step of every machine gathered by build (`app.history.fleet_steps`): on how
    many of the machines that measured that build of a row the row stepped, one way."""
    rows = [[f"<code>{esc(f.build)}</code>",
             f'<a href="{row_file(f.key)}">{esc(row_name(f.key))}</a>', _verdict(f.verdict),
             esc(f"{numbers.count(len(f.machines))} of {numbers.count(f.measured)}"),
             esc(numbers.speed_change_range(f.low, f.high)),
             esc(first_few(f.machines, SITE_NAMED))] for f in site.fleet]
    return ('<h2 id="by-build">Steps by build, across the fleet</h2>'
            "<p>Every step of every machine (not only the latest), each judged on its own "
            "machine, gathered by build: on how many of the machines that measured that "
            "build of the row it stepped there, and the range of those machines' own step "
            "ratios (their estimates, not an interval; each step's interval is on its "
            f"row's page). The fleet has {numbers.count(len(site.parts))} machines.</p>"
            + _table(["build", "row", "step", "machines", "their steps", "on"], rows,
                     numeric=(3,)))


#: Each machine's section of a row's page and its chart (JSON text), by the digest of the
#: machine's part and the row: a part that did not change is not rendered again.
Fragments = dict[str, dict[str, list[str]]]


def machine_fragment(part: MachinePart, index: int, fragments: Fragments
                     ) -> tuple[str, str]:
    """The section (HTML) and the chart (JSON) of `part.series[index]`, rendered once."""
    series = part.series[index]
    row = json.dumps([series.algorithm, series.implementation, series.operation,
                      series.block_size])
    kept = fragments.setdefault(part.digest, {})
    if row not in kept:
        chart_id = f"chart-{part.machine.key}"
        kept[row] = [_machine_section(part, index, chart_id),
                     script_json(json_ready(history_chart(chart_id, part, index)))]
    section, chart = kept[row]
    return section, chart


def row_page(site: Site, key: RowKey, fragments: Fragments | None = None) -> str:
    """A row's history on every machine that measured it."""
    fragments = {} if fragments is None else fragments
    body = [_filters(site.rows, site.parts, key, row_page=True)]
    charts = []
    for part in site.parts:
        for index, series in enumerate(part.series):
            if (series.algorithm, series.implementation, series.operation,
                    series.block_size) != tuple(key):
                continue
            section, chart = machine_fragment(part, index, fragments)
            charts.append(chart)
            body.append(section)
    rows = [[r.algorithm, r.implementation, r.operation, row_file(r)] for r in site.rows]
    return _page(row_name(key), "\n".join(body), charts=True,
                 data={"row": [key.algorithm, key.implementation, key.operation],
                       "rows": rows}, chart_data="[" + ",".join(charts) + "]")


def _machine_section(part: MachinePart, index: int, chart_id: str) -> str:
    series = part.series[index]
    unit = series.unit
    steps = {s.index: (n, s) for n, s in enumerate(series.steps)}
    band = (f"its run-to-run spread {numbers.share(series.noise_floor)}"
            if series.noise_floor is not None else "no run-to-run spread known")
    lines = []
    for number, p in enumerate(series.points):
        step_words = ""
        if number in steps:
            at, step = steps[number]
            step_words = (f"{_verdict(step.verdict)} "
                          f"{esc(numbers.speed_change(step.ratio))} "
                          f"{esc(numbers.bracket(step.ci_low, step.ci_high))}; "
                          f"{_causes_cell(part.causes_of(index, at))}")
        lines.append([numbers.count(number + 1), f"<code>{esc(p.build)}</code>",
                      esc(numbers.level_interval(p.median, p.ci_low, p.ci_high, unit)),
                      numbers.count(len(p.runs)), esc(", ".join(p.runs)),
                      step_words, esc("; ".join(p.notes))])
    steps_count = len(series.steps)
    summary = (f"{numbers.count(len(series.points))} builds, "
               f"{numbers.count(steps_count)} step{'' if steps_count == 1 else 's'}; "
               f"{esc(band)}, band "
               f"{numbers.share(series.threshold)}")
    return (f'<section class="machine" id="m-{part.machine.key}" '
            f'data-machine="{part.machine.key}" aria-labelledby="h-{part.machine.key}">'
            f'<h2 id="h-{part.machine.key}">{esc(part.machine.name)}</h2>'
            f"<p>{summary}.</p>"
            f'<div class="chart" id="{chart_id}" role="img" aria-label="History of '
            f'{esc(row_name(series))} on {esc(part.machine.name)}: the table below gives '
            f'the same points"></div>'
            "<details><summary>The chart as a table</summary>"
            + _table(["#", "build", "level [95 % interval]", "runs", "run ids", "step to "
                      "this build: speed [interval]; causes", "notes"], lines,
                     numeric=(0, 2, 3))
            + "</details></section>")


def compare_page(part: MachinePart, comparison: Comparison) -> str:
    rows = [[esc(row_name(r.key)), _verdict(r.verdict),
             esc(f"{numbers.speed_change(r.ratio)} {numbers.bracket(r.ci_low, r.ci_high)}"),
             esc(r.reason), _causes_cell(r.causes)] for r in comparison.rows]
    differences = [[f"<code>{esc(name)}</code>", esc(before), esc(after), esc(note)]
                   for name, before, after, note in comparison.differences]
    body = [f"<p>On {esc(part.machine.name)}: <code>{esc(comparison.before)}</code> "
            f"({numbers.count(len(comparison.before_runs))} runs) against "
            f"<code>{esc(comparison.after)}</code> "
            f"({numbers.count(len(comparison.after_runs))} runs), as "
            "<code>pqbench compare</code> judges them.</p>",
            f"<p>Method: {esc(comparison.method)}.</p>",
            _table(["row", "verdict", "speed [interval]", "why", "named causes"], rows,
                   numeric=(2,)),
            "<h2>What differs between the two builds</h2>",
            _table(["field", "before", "after", "note"], differences) if differences
            else "<p>No fingerprint difference.</p>"]
    return _page(f"{part.machine.name}: {comparison.before} → {comparison.after}",
                 "\n".join(body))
