"""Charts as data, rendered headless to PNG with matplotlib's Agg canvas.

A chart is a frozen description (what to plot); `render` draws it. Figures are built with
the object-oriented API on an Agg canvas, never through pyplot, so no display or global
state is involved. Colours follow the Okabe–Ito palette (Okabe & Ito 2008, "Color Universal
Design"), distinguishable under the common colour-vision deficiencies; implementations also
differ by hatch or line style so the chart reads in grey too. PNGs are written without the
matplotlib version in their metadata, so the same data gives the same bytes.

Labels reach the charts from stored runs: `render` draws with mathtext off (a `$` in a
label is a dollar sign, not a formula that can fail to parse) and with control characters
removed from every string, which no font has glyphs for.
"""

from __future__ import annotations

import dataclasses
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import EngFormatter, LogLocator, NullFormatter, NullLocator
from PIL import Image

from pqbench.platform.untrusted import printable
from pqbench.views import numbers
from pqbench.views.chartkit import (
    HISTORY_TICKS,
    LINE_COLOURS,
    OKABE_ITO,
    axis_labels,
    tick_indexes,
)

__all__ = ["LINE_COLOURS", "OKABE_ITO", "Chart", "GroupedBars", "History", "Lines", "Ratios",
           "axis_labels", "render", "tick_indexes"]

#: Fixed colours per implementation so every chart of a report agrees.
IMPLEMENTATION_STYLE: dict[str, tuple[str, str, str]] = {
    # name: (colour, bar hatch, line style)
    "liboqs": ("#0072B2", "", "-"),
    "liboqs-python": ("#56B4E9", "//", "--"),
    "libcrypto": ("#D55E00", "", "-"),
    "cryptography": ("#E69F00", "//", "--"),
    "python": ("#009E73", "..", ":"),
    # TLS libraries (pqbench tls): cryptography's OpenSSL in its colour, the system's in
    # libcrypto's, told apart by hatch.
    "pyopenssl": ("#E69F00", "", "-"),
    "python-ssl": ("#D55E00", "//", "--"),
    "libssl": ("#CC79A7", "", "-"),
    "client to server": ("#0072B2", "", "-"),
    "server to client": ("#009E73", "//", "--"),
}
DPI = 100


def implementation_style(name: str, index: int) -> tuple[str, str, str]:
    return IMPLEMENTATION_STYLE.get(name, (OKABE_ITO[index % len(OKABE_ITO)], "..", ":"))


@dataclass(frozen=True)
class GroupedBars:
    """Horizontal bars on a linear axis that starts at zero (a bar's length is its value,
    so two bars compare by length): one group per label, one bar per series."""

    filename: str
    title: str
    xlabel: str
    labels: tuple[str, ...]  # one row each, top to bottom
    #: (series name, one value per label, None where not measured)
    series: tuple[tuple[str, tuple[float | None, ...]], ...]
    legend_title: str = "implementation"
    #: The unit ticks and value labels carry ("B/s"; "" for plain counts).
    unit: str = ""
    #: Per series (in `series`' order), per label, the value's interval (low, high), drawn
    #: as an error bar; empty, or None for a bar, where there is none.
    errors: tuple[tuple[tuple[float, float] | None, ...], ...] = ()


@dataclass(frozen=True)
class Lines:
    """Lines over a log-log plane: throughput against block size."""

    filename: str
    title: str
    xlabel: str
    ylabel: str
    #: (name, implementation, ((x, y), ...)); colour by name, line style by implementation.
    series: tuple[tuple[str, str, tuple[tuple[float, float], ...]], ...]
    #: The unit the y tick labels carry ("B/s").
    yunit: str = ""
    #: Per series (in `series`' order), per point, its interval (low, high), drawn as an
    #: error bar; empty, or None for a point, where there is none.
    errors: tuple[tuple[tuple[float, float] | None, ...], ...] = ()


@dataclass(frozen=True)
class History:
    """One measure over a sequence of groups (runs or OS builds), with steps marked and
    each point's confidence interval drawn as a band around its line."""

    filename: str
    title: str
    ylabel: str
    points: tuple[str, ...]  # x tick labels, in order
    #: (name, one value per point or None)
    series: tuple[tuple[str, tuple[float | None, ...]], ...]
    #: (series name, index of the first point at the new level, text)
    steps: tuple[tuple[str, int, str], ...] = ()
    #: Per series (in `series` order), each point's interval (low, high), None where absent.
    intervals: tuple[tuple[tuple[float, float] | None, ...], ...] = ()
    #: The unit the tick labels carry ("B/s"; "" for plain counts such as ops/s).
    unit: str = ""
    #: Said under the chart: the series left out, when there were more than it can tell apart.
    footnote: str = ""


@dataclass(frozen=True)
class Ratios:
    """After/before speed ratios with their confidence intervals (a forest plot)."""

    filename: str
    title: str
    #: (row label, ratio, ci_low, ci_high, verdict), top to bottom
    rows: tuple[tuple[str, float, float, float, str], ...]
    threshold: float
    #: Legend text of the band (default "±5 % threshold").
    band_label: str | None = None


Chart = GroupedBars | Lines | History | Ratios

#: Verdict -> (colour, marker): direction shown by marker shape as well as colour.
VERDICT_STYLE = {"faster": ("#0072B2", "^"), "slower": ("#D55E00", "v"),
                 "no change": ("#777777", "o"), "inconclusive": ("#AAAAAA", "D"),
                 "too few runs": ("#BBBBBB", "x")}


def render(chart: Chart, directory: Path) -> Path:
    """Draw `chart` into `directory`/`chart.filename` and return the path."""
    with rc_context({"text.parse_math": False}):
        return _render(_printable(chart), directory)


def _printable(value: Any) -> Any:
    """The chart with every string passed through `printable` (tuples and fields too)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, tuple):
        return tuple(_printable(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: _printable(getattr(value, f.name))
                                             for f in dataclasses.fields(value)})
    return value


def _render(chart: Chart, directory: Path) -> Path:
    if isinstance(chart, GroupedBars):
        figure = _grouped_bars(chart)
    elif isinstance(chart, Lines):
        figure = _lines(chart)
    elif isinstance(chart, Ratios):
        figure = _ratios(chart)
    else:
        figure = _history(chart)
    path = directory / chart.filename
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    buffer.seek(0)
    # A chart has a few flat colours plus anti-aliasing: a 256-colour palette keeps it
    # visually identical at a third of the size (reports get committed and pasted).
    with Image.open(buffer) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE,
                                              dither=Image.Dither.NONE)
        small.save(path, format="PNG", optimize=True)
    return path


def _title(figure: Figure, title: str) -> None:
    """The title across the whole figure, left-aligned: long y labels make the axes narrow,
    and an axes title would be clipped."""
    figure.suptitle(title, x=0.01, ha="left", fontsize="large")




def _log_axis(axis: Any, values: Sequence[float], unit: str = "") -> None:
    """Log ticks dense enough to read a value off: 1-2-5 per decade, every digit when the
    data spans less than a decade, decades only beyond three; labelled by matplotlib's
    EngFormatter with decimal SI prefixes ("2k", "500 MB/s"), as `numbers.si` writes them."""
    positive = [v for v in values if v and v > 0 and math.isfinite(v)]
    decades = math.log10(max(positive) / min(positive)) if positive else 1.0
    if decades < 0.7:
        subs: tuple[float, ...] = tuple(float(d) for d in range(1, 10))
    elif decades <= 3:
        subs = (1.0, 2.0, 5.0)
    else:
        subs = (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(EngFormatter(unit=unit, sep=" " if unit else ""))
    axis.set_minor_locator(NullLocator())


def _grouped_bars(chart: GroupedBars) -> Figure:
    rows = len(chart.labels)
    present = [(name, values) for name, values in chart.series
               if any(v is not None for v in values)]
    n = max(len(present), 1)
    bar = 0.8 / n
    height = 1.2 + rows * (0.16 * n + 0.12)
    figure = Figure(figsize=(9, max(height, 2.5)), layout="constrained")
    ax = figure.add_subplot()
    values_all = [v for _, values in present for v in values if v]
    errors = dict(zip([name for name, _ in chart.series], chart.errors, strict=False))
    # "liboqs · A: masked" (an ab session's sides): the implementation's colour, one
    # hatching per side, so a side's bars are told apart from the other's at a glance.
    suffixes = list(dict.fromkeys(name.partition(" · ")[2] for name, _ in present))
    for i, (name, values) in enumerate(present):
        base, _, side = name.partition(" · ")
        colour, hatch, _ = implementation_style(base, i)
        if side:
            hatch = ("", "////", "..")[suffixes.index(side) % 3]
        ys = [r + (i - (n - 1) / 2) * bar for r in range(rows)]
        widths = [v if v else 0.0 for v in values]
        ax.barh(ys, widths, height=bar * 0.92, color=colour, hatch=hatch,
                edgecolor="white" if not hatch else "#333333", linewidth=0.4, label=name)
        for y, v, interval in zip(ys, values, errors.get(name) or (), strict=False):
            if v and interval is not None:
                low, high = interval
                ax.errorbar([v], [y], xerr=[[max(v - low, 0.0)], [max(high - v, 0.0)]],
                            fmt="none", ecolor="#222222", elinewidth=0.8, capsize=2)
        for y, v in zip(ys, values, strict=True):
            if v:
                ax.annotate(numbers.si(v, chart.unit, compact=not chart.unit), xy=(v, y),
                            xytext=(3, 0),
                            textcoords="offset points", va="center", fontsize=7,
                            color="#333333")
    if values_all:
        tops = [high for intervals in chart.errors for span in intervals if span
                for high in span[1:]]
        ax.set_xlim(0, max([*values_all, *tops]) * 1.25)  # room for the value labels
        ax.xaxis.set_major_formatter(EngFormatter(unit=chart.unit,
                                                  sep=" " if chart.unit else ""))
    ax.set_yticks(range(rows), chart.labels)
    ax.invert_yaxis()
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_xlabel(chart.xlabel)
    _title(figure, chart.title)
    ax.grid(axis="x", which="major", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    for r in range(1, rows):
        ax.axhline(r - 0.5, color="#eeeeee", linewidth=0.6)
    ax.legend(title=chart.legend_title, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              frameon=False)
    return figure


def _lines(chart: Lines) -> Figure:
    names = sorted({name for name, _, _ in chart.series})
    impls = sorted({impl for _, impl, _ in chart.series})
    figure = Figure(figsize=(9, 5.2), layout="constrained")
    ax = figure.add_subplot()
    markers = "osD^v<>ph*"
    for number, (name, impl, points) in enumerate(chart.series):
        i = names.index(name)
        _, _, style = implementation_style(impl, impls.index(impl))
        xs = [x for x, _ in points]
        ys = [y for _, y in points]
        colour = LINE_COLOURS[i % len(LINE_COLOURS)]
        ax.plot(xs, ys, linestyle=style, marker=markers[i % len(markers)], markersize=4,
                linewidth=1.4, color=colour, label=f"{name} ({impl})")
        errors = chart.errors[number] if number < len(chart.errors) else ()
        for (x, y), interval in zip(points, errors, strict=False):
            if interval is not None:
                ax.errorbar([x], [y], yerr=[[max(y - interval[0], 0.0)],
                                            [max(interval[1] - y, 0.0)]],
                            fmt="none", ecolor=colour, elinewidth=0.8, capsize=2)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    xs_all = sorted({x for _, _, points in chart.series for x, _ in points})
    ax.set_xticks(xs_all, [numbers.size(x) for x in xs_all])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_minor_locator(NullLocator())
    _log_axis(ax.yaxis, [y for _, _, points in chart.series for _, y in points], chart.yunit)
    ax.set_xlabel(chart.xlabel)
    ax.set_ylabel(chart.ylabel)
    _title(figure, chart.title)
    ax.grid(which="major", color="#dddddd", linewidth=0.6)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small")
    return figure


def _history(chart: History) -> Figure:
    figure = Figure(figsize=(9, 4.8), layout="constrained")
    ax = figure.add_subplot()
    positions = list(range(len(chart.points)))
    names = [name for name, _ in chart.series]
    shaded = 0
    for i, (name, values) in enumerate(chart.series):
        colour = LINE_COLOURS[i % len(LINE_COLOURS)]
        xs = [p for p, v in zip(positions, values, strict=True) if v is not None]
        ys = [v for v in values if v is not None]
        ax.plot(xs, ys, marker="o", markersize=4 if len(positions) <= HISTORY_TICKS else 2,
                linewidth=1.4, color=colour, label=name)
        intervals = chart.intervals[i] if i < len(chart.intervals) else ()
        shaded += _bands(ax, positions, intervals, colour)
    for name, index, text in chart.steps:
        # Step texts go to the legend, beside the chart: inside it they collide.
        colour = (LINE_COLOURS[names.index(name) % len(LINE_COLOURS)] if name in names
                  else "#000000")
        ax.axvline(index - 0.5, color=colour, linestyle=":", linewidth=1.2,
                   label=f"step: {text}")
    ax.set_yscale("log")
    drawn = [v for _, values in chart.series for v in values if v]
    drawn += [v for bands in chart.intervals for band in bands if band for v in band]
    _log_axis(ax.yaxis, drawn, chart.unit)
    labelled = tick_indexes(len(positions), [index for _, index, _ in chart.steps])
    # Distinct builds keep distinct labels ("debian-12/6.1…AES-NI hidden)"), whatever
    # they share at either end.
    shown = axis_labels(chart.points)
    ax.set_xticks(labelled, [shown[i] for i in labelled], rotation=30, ha="right")
    ax.set_xticks(positions, minor=True)  # every point keeps a tick mark, unlabelled
    ax.set_xlim(-0.5, max(len(positions) - 0.5, 0.5))
    ax.set_ylabel(chart.ylabel)
    _title(figure, chart.title)
    ax.grid(which="major", color="#dddddd", linewidth=0.6)
    # The legend names the shading only where some was drawn, as a swatch of it.
    handles, _ = ax.get_legend_handles_labels()
    if shaded:
        handles.append(Patch(facecolor=LINE_COLOURS[0], alpha=BAND_ALPHA, linewidth=0,
                             label="shaded: each point's 95 % CI"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
              fontsize="small")
    if chart.footnote:  # below the tick labels, inside the constrained layout
        figure.supxlabel(chart.footnote, x=0.01, ha="left", fontsize="small", color="#555555")
    return figure


#: How opaque a history's interval band is over white.
BAND_ALPHA = 0.18
#: Half the width of the box a lone point's interval is drawn as (a band needs two).
LONE_HALF_WIDTH = 0.18


def _bands(ax: Any, positions: Sequence[int],
           intervals: Sequence[tuple[float, float] | None], colour: str) -> int:
    """Each point's interval shaded: a band across every run of neighbouring points that
    have one, a box around a point whose neighbours have none (a band through one point
    has no area). Bounds a log axis cannot draw (0, infinite) are left out. How many
    points got their shading."""
    known = [(p, band) for p, band in zip(positions, intervals, strict=False)
             if band is not None and all(math.isfinite(v) and v > 0 for v in band)]
    runs: list[list[tuple[int, tuple[float, float]]]] = []
    for point in known:
        if runs and runs[-1][-1][0] == point[0] - 1:
            runs[-1].append(point)
        else:
            runs.append([point])
    for run in runs:
        if len(run) == 1:
            (p, (low, high)), = run
            xs = [p - LONE_HALF_WIDTH, p + LONE_HALF_WIDTH]
            lows, highs = [low, low], [high, high]
        else:
            xs = [p for p, _ in run]
            lows, highs = [low for _, (low, _) in run], [high for _, (_, high) in run]
        ax.fill_between(xs, lows, highs, color=colour, alpha=BAND_ALPHA, linewidth=0)
    return len(known)


_NICE_RATIOS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0,
                3.0, 4.0, 5.0, 10.0, 20.0, 50.0, 100.0)


def _ratio_ticks(low: float, high: float) -> list[float]:
    """Nice ratios inside [low, high], thinned so neighbours are far enough apart to read."""
    span = math.log(high / low)
    ticks: list[float] = []
    for t in (1.0, *sorted(_NICE_RATIOS, key=lambda r: abs(math.log(r)))):
        if low <= t <= high and all(abs(math.log(t / u)) > span / 9 for u in ticks):
            ticks.append(t)
    return sorted(set(ticks))


def _ratios(chart: Ratios) -> Figure:
    rows = len(chart.rows)
    figure = Figure(figsize=(9, max(2.5, 1.3 + 0.28 * rows)), layout="constrained")
    ax = figure.add_subplot()
    finite = [v for _, r, lo, hi, _ in chart.rows for v in (r, lo, hi)
              if math.isfinite(v) and v > 0]
    # The band is symmetric in log, as the verdict rule: 1/(1+t) .. 1+t.
    band_low, band_high = 1 / (1 + chart.threshold), 1 + chart.threshold
    low = min([*finite, band_low]) / 1.05
    high = max([*finite, band_high]) * 1.05
    ax.axvspan(band_low, band_high, color="#eeeeee", zorder=0,
               label=chart.band_label or f"±{numbers.share(chart.threshold)} threshold")
    ax.axvline(1.0, color="#555555", linewidth=0.8)
    seen: set[str] = set()
    for y, (_, ratio, ci_low, ci_high, verdict) in enumerate(chart.rows):
        colour, marker = VERDICT_STYLE.get(verdict, ("#000000", "s"))
        lo = ci_low if math.isfinite(ci_low) and ci_low > 0 else low
        hi = ci_high if math.isfinite(ci_high) and ci_high > 0 else high
        ax.plot([lo, hi], [y, y], color=colour, linewidth=1.6)
        ax.plot([ratio], [y], marker=marker, color=colour, markersize=7, linestyle="none",
                label=verdict if verdict not in seen else None)
        seen.add(verdict)
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    ticks = _ratio_ticks(low, high)
    ax.set_xticks(ticks, [f"×{numbers.number(t, trim=True)}" for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yticks(range(rows), [label for label, *_ in chart.rows])
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_xlabel("after / before speed (log scale; right of ×1 is faster)")
    _title(figure, chart.title)
    ax.grid(axis="x", which="major", color="#dddddd", linewidth=0.5)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small")
    return figure
