"""The headline: post-quantum against classical public-key cryptography on this machine.

The per-exchange cost model is `analysis.exchanges`; this module lays it out: the tables
per role and implementation, the operations chart, the implementation gap and the summary
bullets.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from pqbench.analysis import ratios
from pqbench.analysis.bindings import bundled_openssl
from pqbench.analysis.exchanges import (
    BASELINE,
    HEADLINE_PAIRS,
    Exchange,
    algorithms_for,
    exchanges,
    fastest,
    implementations_of,
    operations_in,
)
from pqbench.analysis.figures import Cost, RunFigures, Versus, versus_baseline
from pqbench.analysis.ratios import Ratio
from pqbench.data.record.fingerprint import Fingerprint
from pqbench.data.record.results import Measurement, Run
from pqbench.libraries.implementations import BINDINGS, STACKS
from pqbench.views import markdown as md
from pqbench.views import numbers
from pqbench.views import ratios as ratio_views
from pqbench.views.report.base import Section
from pqbench.views.report.charts import GroupedBars
from pqbench.views.runs import time_base, unstable_rows

__all__ = ["gap", "headline", "ratios_section", "summary"]


def _operations_text(ex: Exchange) -> str:
    return " · ".join(f"{op}{'×2' if count > 1 else ''} {md.duration_us(m.us_per_op)}"
                      for op, count, m in ex.operations)


_TITLES = {"exchange": ("Key exchange", "exchange", "exchanges/s", "bytes on the wire"),
           "signature": ("Signatures", "sign + verify", "sign+verify/s", "signature + public key")}


def paired_text(found: Ratio | None) -> str:
    """A paired ratio in the words of every pqbench ratio, its interval beside it: "3.40x
    faster [3.37–3.47]"; a dash where the rows were not paired: pqbench prints no ratio it
    cannot back with an interval."""
    if found is None:
        return md.MISSING
    return numbers.time_change(found.estimate, found.ci_low, found.ci_high)


#: One side of what a report shows: its name (None for a single run), its rows, and how
#: many cycles paired those rows (0: not paired with each other).
ReportSide = tuple[str | None, Sequence[Measurement], int]


def _level_header(levels: Iterable[float | None]) -> str:
    """" [97.9 % CI]" where every figure's interval has one level, " [CI]" where they
    differ (each cell then states its own), nothing where no figure has one."""
    known = {lv for lv in levels if lv is not None}
    if not known:
        return ""
    return f" [{numbers.share(known.pop())} CI]" if len(known) == 1 else " [CI]"


def _cost_text(cost: Cost, with_level: bool = False) -> str:
    """"35.7 [35.4–36.0]" µs; the level after it where the header cannot say it."""
    if cost.low is None or cost.high is None:
        return md.number(cost.us)
    level = f" ({numbers.share(cost.level)})" if with_level and cost.level is not None else ""
    return f"{md.number(cost.us)} [{numbers.interval(cost.low, cost.high)}]{level}"


def _versus_text(line: Versus, with_level: bool = False) -> str:
    if line.baseline is line.exchange:
        return "the baseline"
    if line.ratio is None:
        return md.MISSING
    r = line.ratio
    text = paired_text(r) + (f" ({numbers.share(r.ci_level)})" if with_level else "")
    if line.baseline is not None and line.baseline.implementation != \
            line.exchange.implementation:
        text += f" (vs {line.baseline.implementation})"
    return text


def _exchange_table(role: str, lines: Sequence[tuple[str | None, Versus]],
                    show_impl: bool) -> str:
    """One line per exchange (signature), with its side where a session has two: µs with
    its interval, per second, its answer against the baseline through its own
    implementation or its counterpart (the lead's pairing, in `speed`'s words), cycles,
    bytes on the wire and the operations. Headers state the level where every line's
    interval has it; otherwise each cell does."""
    _, per, rate, wire = _TITLES[role]
    sided = any(side is not None for side, _ in lines)
    cost_levels = {v.cost.level for _, v in lines if v.cost.low is not None}
    ratio_levels = {v.ratio.ci_level for _, v in lines if v.ratio is not None}
    cost_header, ratio_header = _level_header(cost_levels), _level_header(ratio_levels)
    headers = [*(["side"] if sided else []), "algorithm",
               *(["implementation"] if show_impl else []), "security",
               f"µs per {per}{cost_header}", rate, f"against {BASELINE[role]}{ratio_header}",
               "cycles", wire, "operations"]
    rows = []
    for side, v in lines:
        ex = v.exchange
        rows.append([*([md.text(side or "")] if sided else []), ex.algorithm,
                     *([ex.implementation] if show_impl else []), ex.security or md.MISSING,
                     _cost_text(v.cost, cost_header == " [CI]"), md.si(ex.per_second),
                     _versus_text(v, ratio_header == " [CI]"), md.si(ex.cycles),
                     md.byte_count(ex.wire_bytes), _operations_text(ex)])
    align = [*(["l"] if sided else []), "l", *(["l"] if show_impl else []), "l", "r", "r",
             "r", "r", "r", "l"]
    return md.table(headers, rows, align)


def _unpaired_note(sides: Sequence[ReportSide]) -> str | None:
    if all(cycles for _, _, cycles in sides):
        return None
    return ("A dash against the baseline: this run's rows were not taken in cycles, so "
            "they are not paired with each other (an `ab` side's rows are paired with the "
            "other side's, which the comparison above judges). Its µs intervals are then "
            "the sum of the operations' own, at the level they jointly hold (Bonferroni), "
            "shown where that is 90 % or more.")


def headline(sides: Sequence[ReportSide], prefix: str) -> Section | None:
    """Per role: the fastest implementation of each algorithm, then each implementation;
    with two sides (an `ab` session), each table lines up both sides, each chart both."""
    sides = [(name, [m for m in rows if m.block_size is None], cycles)
             for name, rows, cycles in sides]
    sides = [side for side in sides if side[1]]
    if not sides:
        return None
    parts = [md.heading(2, "Post-quantum against classical"),
             "What one key exchange and one signature cost on this machine. An exchange is "
             "keygen + encaps + decaps for a KEM, two keygens and two derives for ECDH, and "
             "encrypt + decrypt for RSA key transport; a signature is sign + verify. "
             "Cycles are reference cycles (rdtsc) from the native loops only, in the rows' "
             "time base; bytes are what crosses the wire (KEM: public key + ciphertext; "
             "ECDH: two public keys; signature: signature + public key)."]
    note = _unpaired_note(sides)
    if note:
        parts.append(note)
    charts = []
    every_impl = implementations_of([m for _, rows, _ in sides for m in rows])
    for role in ("exchange", "signature"):
        per_side = [(name, versus_baseline(role, exchanges(role, rows), cycles))
                    for name, rows, cycles in sides]
        if not any(lines for _, lines in per_side):
            continue
        title = _TITLES[role][0]
        quickest = [(name, v) for name, lines in per_side
                    for v in _fastest_lines(lines)]
        parts += [md.heading(3, title), "Fastest measured implementation of each algorithm:",
                  _exchange_table(role, _by_algorithm(quickest), True)]
        for impl in every_impl:
            mine = [(name, v) for name, lines in per_side for v in lines
                    if v.exchange.implementation == impl]
            if mine:
                parts += [md.heading(4, f"{title} through {impl}"),
                          _exchange_table(role, _by_algorithm(mine), False)]
        chart = _ops_chart(role, sides, f"{prefix}{role}-ops.png")
        if chart is not None:
            charts.append(chart)
            parts.append(md.image(f"{title}: operations per second by implementation",
                                  chart.filename))
    return Section("\n\n".join(parts), tuple(charts))


def _fastest_lines(lines: Sequence[Versus]) -> list[Versus]:
    best = {v.exchange.algorithm: v.exchange for v in lines}
    chosen = {id(ex) for ex in fastest([v.exchange for v in lines])} if best else set()
    return [v for v in lines if id(v.exchange) in chosen]


def _by_algorithm(lines: Sequence[tuple[str | None, Versus]]
                  ) -> list[tuple[str | None, Versus]]:
    """The sides of one algorithm next to each other, algorithms in the order found."""
    order = list(dict.fromkeys(v.exchange.algorithm for _, v in lines))
    return sorted(lines, key=lambda line: order.index(line[1].exchange.algorithm))


def _ops_chart(role: str, sides: Sequence[ReportSide], filename: str) -> GroupedBars | None:
    rows = [m for _, mine, _ in sides for m in mine]
    names = algorithms_for(role, rows)
    wanted = operations_in(role)
    labels: list[tuple[str, str]] = []
    for name in names:
        ops = [m.operation for m in rows if m.algorithm == name and m.operation in wanted]
        labels += [(name, op) for op in dict.fromkeys(ops)]
    if not labels:
        return None
    impls = implementations_of(rows)
    series, errors = [], []
    for impl in impls:
        for side, mine, _ in sides:
            index = {(m.algorithm, m.operation, m.implementation): m for m in mine}
            series.append((impl if side is None else f"{impl} · {side}",
                           tuple(index[(a, op, impl)].ops_per_sec if (a, op, impl) in index
                                 else None for a, op in labels)))
            errors.append(tuple(_interval(index.get((a, op, impl))) for a, op in labels))
    title = "Key exchange" if role == "exchange" else "Signatures"
    return GroupedBars(filename, f"{title}: operations per second of {time_base(rows)} "
                                 "(higher is faster; bars: the median's interval)",
                       "operations per second",
                       tuple(f"{a} {op}" for a, op in labels), tuple(series),
                       errors=tuple(errors))


def _interval(m: Measurement | None) -> tuple[float, float] | None:
    """The interval of a row's median rate, for its error bar."""
    if m is None or len(m.samples) < 2:
        return None
    s = m.summary
    return (s.ci_low, s.ci_high)


# --- the implementation gap -----------------------------------------------------------------



def _library_note(environment: Fingerprint) -> str | None:
    """cryptography's wheels bundle their own OpenSSL: say so when it is not the system's."""
    found = bundled_openssl(environment)
    if found is None:
        return None
    bundled, system = found
    return (f"cryptography runs its bundled {md.text(bundled)}, libcrypto the system's "
            f"{md.text(system)}: "
            "where cryptography is faster than libcrypto, that is the newer OpenSSL being "
            "faster, not a negative binding cost.")


def gap(rows: Sequence[Measurement], environment: Fingerprint | None = None, cycles: int = 0,
        sides: Sequence[ReportSide] = ()) -> Section | None:
    """ops/s of each (algorithm, operation) through every implementation, side by side, and
    each binding's time against its native loop, paired by cycle. With `sides` (an `ab`
    session's two), a line per side under each (algorithm, operation)."""
    sided = [(name, [m for m in mine if m.block_size is None], found_cycles)
             for name, mine, found_cycles in sides] if len(sides) > 1 else \
        [(None, [m for m in rows if m.block_size is None], cycles)]
    public = [m for _, mine, _ in sided for m in mine]
    impls = implementations_of(public)
    if len(impls) < 2:
        return None
    keys = list(dict.fromkeys((m.algorithm, m.operation) for m in public))
    pairs = [(b, n) for b, n in BINDINGS if b in impls and n in impls]
    foreign = [i for i in impls if i in STACKS]
    two = len(sided) > 1
    headers = [*(["side"] if two else []), "algorithm", "operation",
               *(f"{i} (ops/s)" for i in impls),
               *(f"{b} time / {n} time" for b, n in pairs),
               *(f"{i} time / reference" for i in foreign)]
    table_rows = []
    for alg, op in keys:
        for name, mine, paired_by in sided:
            index = {(m.algorithm, m.operation, m.implementation): m for m in mine}
            if not any((alg, op, i) in index for i in impls):
                continue
            table_rows.append([*([md.text(name or "")] if two else []), alg, op,
                               *_gap_cells(alg, op, index, impls, pairs, foreign, paired_by)])
    text = [md.heading(2, "Implementation gap"),
            "The same operation through each implementation. `liboqs` and `libcrypto` are "
            "pqbench's native C loops (no binding cost, as liboqs's speed_kem and "
            "`openssl speed` measure); `liboqs-python` and `cryptography` are what a Python "
            "program sees. A binding against its native loop is paired by cycle and said "
            "with its interval (\"1.13x slower [1.10–1.15]\": what the binding costs); a "
            "dash means not offered, not measured, or not paired."]
    if foreign:
        text.append("A foreign implementation (a worker in its own language: Go, Rust, "
                    "Java) is paired with the reference named in its cell: liboqs, else "
                    "libcrypto, the first measured for the row; \"slower\": it takes longer "
                    "than that reference.")
    note = _library_note(environment or Fingerprint())
    if note and ("cryptography", "libcrypto") in pairs:
        text.append(note)
    text.append(md.table(headers, table_rows,
                         [*(["l"] if two else []), "l", "l", *("r" for _ in impls),
                          *("r" for _ in pairs), *("r" for _ in foreign)]))
    return Section("\n\n".join(text))


def _gap_cells(alg: str, op: str, index: dict[tuple[str, str, str], Measurement],
               impls: Sequence[str], pairs: Sequence[tuple[str, str]],
               foreign: Sequence[str], cycles: int) -> list[str]:
    """One line of the gap table: ops/s per implementation, then each binding against its
    native loop and each foreign implementation against its reference, paired by cycle."""
    cells = [md.si(index[(alg, op, i)].ops_per_sec) if (alg, op, i) in index else md.MISSING
             for i in impls]
    for b, n in pairs:
        if (alg, op, b) in index and (alg, op, n) in index:
            cells.append(paired_text(ratios.row_ratio(index[(alg, op, b)],
                                                      index[(alg, op, n)], cycles,
                                                      "binding")))
        else:
            cells.append(md.MISSING)
    reference = next((r for r in ratios.REFERENCES if (alg, op, r) in index), None)
    for i in foreign:
        if reference is not None and (alg, op, i) in index:
            against = ratios.row_ratio(index[(alg, op, i)], index[(alg, op, reference)],
                                       cycles, "implementation")
            cells.append(f"{paired_text(against)} ({md.text(reference)})")
        else:
            cells.append(md.MISSING)
    return cells


def ratios_section(figures: RunFigures | None) -> Section | None:
    """Every paired ratio of the run (`analysis.ratios`), and the rows too unsteady to
    trust, flagged as `speed` flags them."""
    if figures is None:
        return None
    found = list(figures.ratios)
    shaky = unstable_rows(figures)
    if not found and not shaky:
        return None
    parts = [md.heading(2, "What it costs, paired"),
             "Each ratio is one row's cost (time per exchange, signature, byte or operation) "
             "over another's, from the rounds the two rows took in the same cycles: the "
             "Hodges–Lehmann estimate of the per-cycle ratios and its signed-rank interval at "
             "the level shown (99 % where the cycles allow)."]
    if found:
        parts.append(md.render(ratio_views.table(found, "paired cost ratios")))
    if shaky:
        parts += ["Rows too unsteady to trust (a CV over 10 % or a trend across rounds): "
                  "more rounds, `--cpu`, or `pqbench ab` help.",
                  "\n".join(f"- {md.text(line)}" for line in shaky)]
    return Section("\n\n".join(parts))


def unsteady_section(sides: Sequence[tuple[str, RunFigures]]) -> Section | None:
    """An `ab` session's rows too unsteady to trust, each side's named: its rows are
    paired with the other side's, so it has no ratios of its own to show beside them."""
    lines = [f"- {md.text(name)}: {md.text(line)}" for name, found in sides
             for line in unstable_rows(found)]
    if not lines:
        return None
    return Section("\n\n".join([
        md.heading(2, "Rows too unsteady to trust"),
        "A CV over 10 % or a trend across rounds, on either side of the session; the "
        "comparison above judges such a row on its pairs all the same, and a longer session "
        "(`--max-seconds`) or a quieter CPU (`--cpu`) steadies it.",
        "\n".join(lines)]))


# --- the summary at the top -----------------------------------------------------------------

def _lead_cost(cost: Cost, with_level: bool = False) -> str:
    """"35.7 µs [35.4–36.0]" (with its level after it where asked), else "35.7 µs"."""
    if cost.low is None or cost.high is None:
        return md.duration_us(cost.us)
    level = (f" ({numbers.share(cost.level)} CI)" if with_level and cost.level is not None
             else "")
    return f"{md.duration_us(cost.us)} [{numbers.interval(cost.low, cost.high)}]{level}"


def _summary_line(role: str, line: Versus) -> str:
    """The lead's line for one role: the same exchange, baseline, figures and words as the
    tables below and `speed`'s table."""
    pq, classical = line.exchange, line.baseline
    assert classical is not None
    what = "A key exchange" if role == "exchange" else "A signature (sign + verify)"
    per = "exchange" if role == "exchange" else "signature"
    wire = ""
    if pq.wire_bytes and classical.wire_bytes:
        wire = (f"; it puts {md.byte_count(pq.wire_bytes)} on the wire instead of "
                f"{md.byte_count(classical.wire_bytes)} "
                f"({md.ratio(pq.wire_bytes / classical.wire_bytes)})")
    base_cost = exchange_cost_of(classical, line)
    levels = []
    if line.ratio is not None:
        answer = f": {paired_text(line.ratio)} per {per}"
        levels.append(f"paired over {line.ratio.pairs} cycles, "
                      f"{numbers.share(line.ratio.ci_level)} CI")
    else:
        answer = ""
        levels.append("not paired with each other")
    # The level of every time's interval shown: once where the two share it, else beside
    # each ("37.5 µs [37.2–37.9] (90.6 % CI)").
    shown = {c.level for c in (line.cost, base_cost) if c.level is not None and c.low is not None}
    each = len(shown) > 1
    if len(shown) == 1:
        levels.append(f"times: {numbers.share(shown.pop())} CI")
    return (f"- {what} with {md.text(pq.algorithm)} ({md.text(pq.implementation)}) takes "
            f"{_lead_cost(line.cost, each)}, {md.text(classical.algorithm)} "
            f"({md.text(classical.implementation)}) {_lead_cost(base_cost, each)}{answer} "
            f"({'; '.join(levels)}){wire}.")


def _label(line: Versus) -> str:
    """"ML-KEM-768 [go]": how a ratio names the exchange (signature) of a line."""
    return f"{line.exchange.algorithm} [{line.exchange.implementation}]"


def exchange_cost_of(ex: Exchange, line: Versus) -> Cost:
    """The baseline's cost, worked out as the line's own (same cycles, same method)."""
    from pqbench.analysis.figures import exchange_cost

    return exchange_cost(ex, line.ratio.pairs if line.ratio is not None else 0)


def _ratio_line(found: Ratio) -> str:
    return (f"- {md.text(ratio_views.line(found))}.")


def summary(run: Run | None, figures: RunFigures | None, side: str | None = None,
            among: Collection[tuple[str, str]] | None = None) -> list[str]:
    """Bullets for the top of the report: per role the level-3 PQ scheme (native first)
    against its baseline through the same pairing as the tables below and `speed`
    (`figures.versus_baseline`), with both costs and the paired ratio, each with its
    interval; then the other headline ratios (larger keys and digests against smaller,
    each binding). `side` names an `ab` session's side; `among` (algorithm,
    implementation) pairs every side measured, so that each side's line tells of the same
    implementation where one is shared."""
    if run is None or figures is None:
        return []
    public = [m for m in run.measurements if m.block_size is None and m.unit == "op"]
    cycles = ratios.cycles_of(run)
    lines = []
    for role, preferred, _ in HEADLINE_PAIRS:
        found = [v for v in versus_baseline(role, exchanges(role, public), cycles)
                 if v.baseline is not None and v.baseline is not v.exchange]
        said: set[str] = set()
        for name in preferred:
            mine = [v for v in found if v.exchange.algorithm == name]
            shared = [v for v in mine if among is not None
                      and (name, v.exchange.implementation) in among
                      and (v.baseline is None or
                           (v.baseline.algorithm, v.baseline.implementation) in among)]
            mine = shared or mine
            if mine:
                natives = ("liboqs", "libcrypto")
                chosen = min(mine, key=lambda v: (v.exchange.implementation not in natives,
                                                  v.exchange.implementation))
                lines.append(_summary_line(role, chosen))
                said.add(_label(chosen))
                break
        # Each foreign implementation's own post-quantum against its own classical scheme,
        # as `speed`'s headline has them: the same line for each.
        for r in figures.headline:
            if r.kind != role or r.numerator.label in said:
                continue
            match = next((v for v in found if _label(v) == r.numerator.label
                          and v.baseline is not None
                          and f"{v.baseline.algorithm} [{v.baseline.implementation}]"
                          == r.denominator.label), None)
            lines.append(_summary_line(role, match) if match is not None else _ratio_line(r))
    lines += [_ratio_line(r) for r in figures.headline if r.kind not in ("exchange",
                                                                          "signature")]
    if side is not None and lines:
        lines.insert(0, f"- **{md.text(side)}**:")
        lines[1:] = ["  " + line for line in lines[1:]]
    return lines
