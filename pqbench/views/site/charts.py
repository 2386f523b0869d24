"""One machine's history of one row as plotly.js data: the traces and layout the site's
script hands to `Plotly.newPlot`, built here as plain JSON-ready values.

What is drawn is what the application layer decided (`app.publish`): each point is a
build's level with its 95 % interval shaded around the line; each step a dotted line
before its first build, marked ▼ slower or ▲ faster (colour and shape both say which),
with its ratio, interval and causes; each annotated build a star. Hovering a point shows
its build, level, interval and run ids. The x axis is the builds in order, each named in
full where the axis has room for every name, else the first, the last, each step's and
evenly spaced ones between (`chartkit.tick_indexes`), each cut in its middle where it is
long yet distinct from every other (`chartkit.axis_labels`); hovering names every point.

plotly.js renders its text (tick labels, hover text, annotations) from a small subset of
HTML; every label here comes from stored runs, so it is entity-escaped (`text`): a label
`<b>` or `</script><img ...>` is shown as written, and only the line breaks this module
puts in are markup.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Sequence
from typing import Any

from pqbench.app.publish import Cause, MachinePart
from pqbench.platform.untrusted import printable
from pqbench.views import numbers
from pqbench.views.chartkit import LINE_COLOURS, STEP_STYLE, axis_labels, tick_indexes

#: The colour of a history's line and, lighter, of its interval band.
LINE = LINE_COLOURS[0]
BAND = "rgba(0, 114, 178, 0.22)"
#: Run ids a point's hover text lists before it says "and N more".
HOVER_RUNS = 6
#: How many characters of a build name an axis label shows at least (the hover shows it
#: whole; `chartkit.axis_labels` takes more where two names would read alike).
TICK_CHARACTERS = 40


def text(value: object) -> str:
    """A stored label as plotly text: control characters dropped, &, < and > escaped."""
    return _plotly_text(str(value))


@functools.lru_cache(maxsize=1 << 16)
def _plotly_text(value: str) -> str:
    return html.escape(printable(value), quote=False)


def cause_words(causes: Sequence[Cause]) -> str:
    """Causes in one line: "knobs.OPENSSL_ia32cap: (none) → ~0x2…"."""
    return "; ".join(f"{c.field}: {c.before} → {c.after}" for c in causes)


def history_chart(chart_id: str, part: MachinePart, index: int) -> dict[str, Any]:
    """The chart of `part.series[index]` (one row on one machine)."""
    series = part.series[index]
    points = series.points
    xs = list(range(len(points)))
    unit = series.unit
    hover = []
    for p in points:
        runs = ", ".join(p.runs[:HOVER_RUNS]) + (
            f" and {len(p.runs) - HOVER_RUNS} more" if len(p.runs) > HOVER_RUNS else "")
        lines = [f"build: {text(p.build)}",
                 f"level: {text(numbers.rate(p.median, unit))}",
                 f"95 % interval: {text(numbers.rate(p.ci_low, unit))} – "
                 f"{text(numbers.rate(p.ci_high, unit))}",
                 f"runs ({len(p.runs)}): {text(runs)}"]
        lines += [f"note: {text(n)}" for n in p.notes]
        hover.append("<br>".join(lines))
    traces: list[dict[str, Any]] = [
        {"type": "scatter", "mode": "lines", "name": "95 % interval (shaded)",
         "x": xs + xs[::-1], "y": [p.ci_high for p in points] + [p.ci_low for p in points][::-1],
         "fill": "toself", "fillcolor": BAND, "line": {"width": 0}, "hoverinfo": "skip"},
        {"type": "scatter", "mode": "lines+markers", "name": "level", "x": xs,
         "y": [p.median for p in points], "line": {"color": LINE, "width": 2},
         "marker": {"color": LINE, "size": 6, "symbol": "circle"},
         "customdata": hover, "hovertemplate": "%{customdata}<extra></extra>"},
    ]
    noted = [i for i, p in enumerate(points) if p.notes]
    if noted:
        traces.append({"type": "scatter", "mode": "markers", "name": "annotated build",
                       "x": noted, "y": [points[i].median for i in noted],
                       "marker": {"symbol": "star", "size": 13, "color": "#000000"},
                       "customdata": [hover[i] for i in noted],
                       "hovertemplate": "%{customdata}<extra></extra>"})
    shapes, labels = [], []
    for number, step in enumerate(series.steps):
        colour, symbol, arrow = STEP_STYLE.get(step.verdict, ("#000000", "diamond", "◆"))
        causes = part.causes_of(index, number)
        words = (f"{arrow} {numbers.speed_change(step.ratio)} "
                 f"{numbers.bracket(step.ci_low, step.ci_high)}")
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": step.index - 0.5,
                       "x1": step.index - 0.5, "y0": 0, "y1": 1,
                       "line": {"color": colour, "width": 2, "dash": "dot"}})
        labels.append({"x": step.index - 0.5, "y": 1, "xref": "x", "yref": "paper",
                       "yanchor": "bottom", "showarrow": False, "text": text(words),
                       "font": {"color": colour}})
        detail = [f"step to {text(step.build)}: {text(words)}", f"{text(step.reason)}"]
        if causes:
            detail.append(f"causes: {text(cause_words(causes))}")
        traces.append({"type": "scatter", "mode": "markers", "showlegend": number == 0,
                       "name": "step (hover for its causes)", "x": [step.index - 0.5],
                       "y": [(step.before + step.after) / 2],
                       "marker": {"symbol": symbol, "size": 14, "color": colour,
                                  "line": {"color": "#ffffff", "width": 1}},
                       "customdata": ["<br>".join(detail)],
                       "hovertemplate": "%{customdata}<extra></extra>"})
    ticks = tick_indexes(len(points), [s.index for s in series.steps])
    names = axis_labels([p.build for p in points], TICK_CHARACTERS)
    layout = {
        "margin": {"l": 70, "r": 20, "t": 40, "b": 20},
        "hovermode": "closest", "showlegend": True,
        "legend": {"orientation": "h", "y": -0.35, "x": 0},
        "xaxis": {"tickmode": "array", "tickvals": ticks,
                  "ticktext": [text(names[i]) for i in ticks],
                  "tickangle": -30, "automargin": True, "range": [-0.5, len(points) - 0.5],
                  "zeroline": False, "showgrid": False,
                  "title": {"text": "OS build (oldest first)"}},
        # SI prefixes as `numbers.si` writes them ("4.1G", not plotly's default "4.1B").
        "yaxis": {"title": {"text": text(unit)}, "automargin": True, "exponentformat": "SI"},
        "shapes": shapes, "annotations": labels,
    }
    return {"id": chart_id, "traces": traces, "layout": layout}
