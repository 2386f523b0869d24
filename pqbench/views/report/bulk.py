"""Symmetric ciphers and hashes: throughput by block size, as `openssl speed -evp` shows it.

Quantum security is the attribute each row carries: Grover's search halves a cipher key's
bits, and a hash's collision resistance falls to about a third of its output bits under
Brassard–Høyer–Tapp; the implementations record the figure they assume.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath

from pqbench.analysis.exchanges import in_order
from pqbench.catalog import algorithms
from pqbench.data.record.results import Measurement
from pqbench.views import markdown as md
from pqbench.views import numbers
from pqbench.views import runs as views
from pqbench.views.report.base import Section
from pqbench.views.report.charts import LINE_COLOURS, GroupedBars, Lines


def throughput_table(rows: Sequence[Measurement],
                     sides: Sequence[tuple[str | None, Sequence[Measurement]]] = ()) -> str:
    """One line per (algorithm, implementation, operation) and side, one column per block
    size: the table the terminal prints (`views.runs.throughput_table`)."""
    return md.render(views.throughput_table(rows, sides=sides))


def _kind(m: Measurement) -> str:
    try:
        return algorithms.by_name(m.algorithm).kind
    except KeyError:
        return "hash" if m.operation == "hash" else "cipher"


def _charted_operation(rows: Sequence[Measurement], algorithm: str) -> str:
    """Ciphers are charted by encryption (decryption is in the table); else the first op."""
    ops = [m.operation for m in rows if m.algorithm == algorithm]
    return "encrypt" if "encrypt" in ops else ops[0]


def _charts(sides: Sequence[tuple[str | None, Sequence[Measurement]]], prefix: str
            ) -> list[Lines | GroupedBars]:
    """One chart for ciphers and one for hashes; a colour per algorithm, a line style per
    implementation, and at most LINE_COLOURS algorithms per chart so colours never repeat.
    Measured at one block size only, a chart is bars from zero (algorithm by
    implementation, and by side for an `ab` session's two), each with its interval."""
    charts: list[Lines | GroupedBars] = []
    for kind, title in (("cipher", "Cipher encryption"), ("hash", "Hash")):
        every = [(side, m) for side, rows in sides for m in rows
                 if _kind(m) == kind and m.block_size and m.bytes_per_sec]
        mine = [m for _, m in every]
        names = sorted({m.algorithm for m in mine})
        chunks = [names[i:i + len(LINE_COLOURS)] for i in range(0, len(names), len(LINE_COLOURS))]
        for number, chunk in enumerate(chunks, 1):
            grouped: dict[tuple[str, str], list[tuple[float, float]]] = {}
            spans: dict[tuple[float, str, str], tuple[float, float] | None] = {}
            for side, m in every:
                if m.algorithm in chunk and m.operation == _charted_operation(mine, m.algorithm):
                    impl = m.implementation if side is None else f"{m.implementation} · {side}"
                    grouped.setdefault((m.algorithm, impl), []).append(
                        (float(m.block_size or 0), m.bytes_per_sec or 0.0))
                    spans[(float(m.block_size or 0), m.algorithm, impl)] = _byte_interval(m)
            part = f" ({number} of {len(chunks)})" if len(chunks) > 1 else ""
            filename = f"{prefix}{kind}-throughput-{number}.png"
            sizes = {x for points in grouped.values() for x, _ in points}
            if len(sizes) == 1:  # one block size: lines would be dots told apart by nothing
                charts.append(_bars(filename, f"{title} throughput at {md.size(int(*sizes))}"
                                              f"{part}", grouped, spans))
                continue
            series = tuple((alg, impl, tuple(sorted(points)))
                           for (alg, impl), points in sorted(grouped.items()))
            errors = tuple(tuple(spans.get((x, alg, impl)) for x, _ in points)
                           for alg, impl, points in series)
            charts.append(Lines(filename, f"{title} throughput by block size{part} "
                                          "(bars: the median's interval)",
                                "bytes per operation (log scale)", "throughput (log scale)",
                                series, "B/s", errors=errors))
    return charts


def _byte_interval(m: Measurement) -> tuple[float, float] | None:
    """The interval of a bulk row's median rate, in bytes per second."""
    if len(m.samples) < 2 or not m.block_size:
        return None
    s = m.summary
    return (s.ci_low * m.block_size, s.ci_high * m.block_size)


def _bars(filename: str, title: str, grouped: dict[tuple[str, str], list[tuple[float, float]]],
          spans: dict[tuple[float, str, str], tuple[float, float] | None]) -> GroupedBars:
    """Throughput at a single block size: a bar per implementation (and side) for each
    algorithm, from zero, with the median's interval."""
    names = sorted({alg for alg, _ in grouped})
    impls = in_order(impl for _, impl in grouped)
    series = tuple((impl, tuple(grouped[(alg, impl)][0][1] if (alg, impl) in grouped else None
                                for alg in names)) for impl in impls)
    errors = tuple(tuple(spans.get((grouped[(alg, impl)][0][0], alg, impl))
                         if (alg, impl) in grouped else None for alg in names)
                   for impl in impls)
    return GroupedBars(filename, f"{title} (higher is faster; bars: the median's interval)",
                       "throughput", tuple(names), series, unit="B/s", errors=errors)


def symmetric(sides: Sequence[tuple[str | None, Sequence[Measurement]]], prefix: str
              ) -> Section | None:
    """Ciphers and hashes of one run, or of both sides of an `ab` session line by line."""
    sides = [(name, [m for m in rows if m.block_size]) for name, rows in sides]
    sides = [side for side in sides if side[1]]
    if not sides:
        return None
    bulk = [m for _, rows in sides for m in rows]
    parts = [md.heading(2, "Symmetric ciphers and hashes"),
             "Throughput in MB/s (10⁶ bytes per second) for one operation over a block of each "
             "size, the sweep `openssl speed -evp` uses. Small blocks show per-call cost; large "
             "blocks show the bulk rate. Key and security bits are those the row was measured "
             "with; quantum security accounts for Grover (keys) and Brassard–Høyer–Tapp "
             "(hash collisions)."]
    parts.append(throughput_table(bulk, sides if len(sides) > 1 else ()))
    charts = _charts(sides, prefix)
    parts += [md.image(chart.title, chart.filename) for chart in charts]
    return Section("\n\n".join(parts), tuple(charts))


def files(rows: Sequence[Measurement], prefix: str) -> Section | None:
    """`pqbench files` runs: whole files read, hashed or encrypted."""
    if not rows:
        return None
    headers = ["file", "size", "algorithm", "implementation", "operation", "cache",
               "resident", "MB/s"]
    table_rows = []
    for m in rows:
        a = m.attributes
        size = a.get("size")
        resident = a.get("resident")
        rate = m.bytes_per_sec
        table_rows.append([
            PurePath(str(a.get("path", md.MISSING))).name, md.si(size, "B") if size else md.MISSING,
            m.algorithm, m.implementation, m.operation, a.get("cache_mode") or md.MISSING,
            numbers.percent(float(resident), 0) if resident is not None else md.MISSING,
            md.number(rate / 1e6) if rate else md.MISSING])
    parts = [md.heading(2, "File benchmarks"),
             "Whole files as `pqbench files` measured them: `read` is the file read alone, "
             "the other rows hash or encrypt while reading. Cache says whether the file was "
             "dropped from the page cache first (cold) or read once before (warm); resident "
             "is the share of its pages in memory when the pass started.",
             md.table(headers, table_rows, ["l", "r", "l", "l", "l", "l", "r", "r"])]
    grouped: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    for m in rows:
        size, rate = m.attributes.get("size"), m.bytes_per_sec
        if size and rate:
            grouped.setdefault((m.algorithm, m.implementation, m.operation), []).append(
                (float(size), rate))
    charts: list[Lines] = []
    if len({x for points in grouped.values() for x, _ in points}) > 1:
        series = tuple((f"{alg} {op}", impl, tuple(sorted(points)))
                       for (alg, impl, op), points in sorted(grouped.items()))
        charts.append(Lines(f"{prefix}files-throughput.png", "File throughput by file size",
                            "file size (log scale)", "throughput (log scale)", series,
                            "B/s"))
        parts.append(md.image(charts[0].title, charts[0].filename))
    return Section("\n\n".join(parts), tuple(charts))
