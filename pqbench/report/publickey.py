"""The headline: post-quantum against classical public-key cryptography on this machine.

The per-exchange cost model is `analysis.exchanges`; this module lays it out: the tables
per role and implementation, the operations chart, the implementation gap and the summary
bullets.
"""

from __future__ import annotations

from collections.abc import Sequence

from pqbench.analysis import ratios
from pqbench.analysis.bindings import bundled_openssl
from pqbench.analysis.exchanges import (
    BASELINE,
    Exchange,
    algorithms_for,
    baseline_for,
    exchanges,
    fastest,
    headline_pairs,
    implementations_of,
    operations_in,
)
from pqbench.analysis.figures import RunFigures
from pqbench.analysis.ratios import Ratio
from pqbench.implementations import BINDINGS, STACKS
from pqbench.presentation import markdown as md
from pqbench.presentation import numbers
from pqbench.presentation import ratios as ratio_views
from pqbench.presentation.runs import time_base, unstable_rows
from pqbench.record.fingerprint import Fingerprint
from pqbench.record.results import Measurement, Run
from pqbench.report.base import Section
from pqbench.report.charts import GroupedBars

__all__ = ["gap", "headline", "ratios_section", "summary"]


def _operations_text(ex: Exchange) -> str:
    return " · ".join(f"{op}{'×2' if count > 1 else ''} {md.duration_us(m.us_per_op)}"
                      for op, count, m in ex.operations)


_TITLES = {"exchange": ("Key exchange", "exchange", "exchanges/s", "bytes on the wire"),
           "signature": ("Signatures", "sign + verify", "sign+verify/s", "signature + public key")}


def paired_text(found: Ratio | None) -> str:
    """A paired ratio with its interval and true level: "0.27x (99 % CI 0.265–0.277)";
    a dash where the rows were not paired (a run from before rounds were taken in
    cycles): pqbench prints no ratio it cannot back with an interval."""
    if found is None:
        return md.MISSING
    return (f"{md.ratio(found.estimate)} ({numbers.share(found.ci_level)} CI "
            f"{numbers.interval(found.ci_low, found.ci_high)})")


def _exchange_table(role: str, found: Sequence[Exchange], show_impl: bool,
                    baselines: dict[str, Exchange], cycles: int) -> str:
    """`show_impl`: the fastest-of-each table, set against the fastest baseline; otherwise
    one implementation's table, set against its own baseline or its counterpart's. The
    time against the baseline is the paired ratio with its interval."""
    _, per, rate, wire = _TITLES[role]
    headers = ["algorithm", *(["implementation"] if show_impl else []), "security",
               f"µs per {per}", rate, f"time vs {BASELINE[role]}", "cycles", wire,
               "operations"]
    rows = []
    for ex in found:
        base = baseline_for(ex, baselines, show_impl)
        versus = md.MISSING
        if base is ex:
            versus = "1x (the baseline)"
        elif base is not None:
            versus = paired_text(ratios.exchange_ratio(role, ex, base, cycles))
            if base.implementation != ex.implementation:
                versus += f" (vs {base.implementation})"
        rows.append([ex.algorithm, *([ex.implementation] if show_impl else []),
                     ex.security or md.MISSING,
                     md.number(ex.us), md.si(ex.per_second), versus,
                     md.si(ex.cycles), md.byte_count(ex.wire_bytes), _operations_text(ex)])
    align = ["l", *(["l"] if show_impl else []), "l", "r", "r", "r", "r", "r", "l"]
    return md.table(headers, rows, align)


def headline(rows: Sequence[Measurement], prefix: str, cycles: int = 0) -> Section | None:
    """Per role: the fastest implementation of each algorithm, then each implementation.
    `cycles`: how many cycles paired the run's rows (0: not paired, no ratio shown)."""
    public = [m for m in rows if m.block_size is None]
    if not public:
        return None
    parts = [md.heading(2, "Post-quantum against classical"),
             "What one key exchange and one signature cost on this machine. An exchange is "
             "keygen + encaps + decaps for a KEM, two keygens and two derives for ECDH, and "
             "encrypt + decrypt for RSA key transport; a signature is sign + verify. "
             "Cycles are reference cycles (rdtsc) from the native loops only; bytes are what "
             "crosses the wire (KEM: public key + ciphertext; ECDH: two public keys; "
             "signature: signature + public key)."]
    charts = []
    for role in ("exchange", "signature"):
        found = exchanges(role, public)
        if not found:
            continue
        title = _TITLES[role][0]
        baselines = {ex.implementation: ex for ex in found if ex.algorithm == BASELINE[role]}
        parts += [md.heading(3, title),
                  "Fastest measured implementation of each algorithm:",
                  _exchange_table(role, fastest(found), True, baselines, cycles)]
        for impl in implementations_of(public):
            mine = [ex for ex in found if ex.implementation == impl]
            if mine:
                parts += [md.heading(4, f"{title} through {impl}"),
                          _exchange_table(role, mine, False, baselines, cycles)]
        chart = _ops_chart(role, public, f"{prefix}{role}-ops.png")
        if chart is not None:
            charts.append(chart)
            parts.append(md.image(f"{title}: operations per second by implementation",
                                  chart.filename))
    return Section("\n\n".join(parts), tuple(charts))


def _ops_chart(role: str, rows: Sequence[Measurement], filename: str) -> GroupedBars | None:
    names = algorithms_for(role, rows)
    wanted = operations_in(role)
    labels: list[tuple[str, str]] = []
    for name in names:
        ops = [m.operation for m in rows if m.algorithm == name and m.operation in wanted]
        labels += [(name, op) for op in dict.fromkeys(ops)]
    if not labels:
        return None
    impls = implementations_of(rows)
    index = {(m.algorithm, m.operation, m.implementation): m for m in rows}
    series = tuple((impl, tuple(index[(a, op, impl)].ops_per_sec if (a, op, impl) in index
                                else None for a, op in labels)) for impl in impls)
    errors = tuple(tuple(_interval(index.get((a, op, impl))) for a, op in labels)
                   for impl in impls)
    title = "Key exchange" if role == "exchange" else "Signatures"
    return GroupedBars(filename, f"{title}: operations per second of {time_base(rows)} "
                                 "(log scale, higher is faster; bars: the median's interval)",
                       "operations per second (log scale)",
                       tuple(f"{a} {op}" for a, op in labels), series, errors=errors)


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
            "a cryptography / libcrypto ratio above 1 is the newer OpenSSL being faster, "
            "not a negative binding cost.")


def gap(rows: Sequence[Measurement], environment: Fingerprint | None = None, cycles: int = 0
        ) -> Section | None:
    """ops/s of each (algorithm, operation) through every implementation, side by side, and
    each binding's time against its native loop, paired by cycle."""
    public = [m for m in rows if m.block_size is None]
    impls = implementations_of(public)
    if len(impls) < 2:
        return None
    keys = list(dict.fromkeys((m.algorithm, m.operation) for m in public))
    index = {(m.algorithm, m.operation, m.implementation): m for m in public}
    pairs = [(b, n) for b, n in BINDINGS if b in impls and n in impls]
    foreign = [i for i in impls if i in STACKS]
    headers = ["algorithm", "operation", *(f"{i} (ops/s)" for i in impls),
               *(f"{b} time / {n} time" for b, n in pairs),
               *(f"{i} time / reference" for i in foreign)]
    table_rows = []
    for alg, op in keys:
        cells = [md.si(index[(alg, op, i)].ops_per_sec) if (alg, op, i) in index else md.MISSING
                 for i in impls]
        found: list[str] = []
        for b, n in pairs:
            if (alg, op, b) in index and (alg, op, n) in index:
                found.append(paired_text(ratios.row_ratio(index[(alg, op, b)],
                                                          index[(alg, op, n)], cycles,
                                                          "binding")))
            else:
                found.append(md.MISSING)
        reference = next((r for r in ratios.REFERENCES if (alg, op, r) in index), None)
        for i in foreign:
            if reference is not None and (alg, op, i) in index:
                against = ratios.row_ratio(index[(alg, op, i)], index[(alg, op, reference)],
                                           cycles, "implementation")
                found.append(f"{paired_text(against)} ({md.text(reference)})")
            else:
                found.append(md.MISSING)
        table_rows.append([alg, op, *cells, *found])
    text = [md.heading(2, "Implementation gap"),
            "The same operation through each implementation. `liboqs` and `libcrypto` are "
            "pqbench's native C loops (no binding cost, as liboqs's speed_kem and "
            "`openssl speed` measure); `liboqs-python` and `cryptography` are what a Python "
            "program sees. A binding's time against its native loop is paired by cycle, "
            "with its interval; above 1 is what the binding costs; a dash means not offered, "
            "not measured, or not paired."]
    if foreign:
        text.append("A foreign implementation (a worker in its own language: Go, Rust, "
                    "Java) is paired with the reference named in its cell: liboqs, else "
                    "libcrypto, the first measured for the row; above 1 it takes longer "
                    "than that reference.")
    note = _library_note(environment or Fingerprint())
    if note and ("cryptography", "libcrypto") in pairs:
        text.append(note)
    text.append(md.table(headers, table_rows,
                         ["l", "l", *("r" for _ in impls), *("r" for _ in pairs),
                          *("r" for _ in foreign)]))
    return Section("\n\n".join(text))


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


# --- the summary at the top -----------------------------------------------------------------

def _cost_text(ex: Exchange, cycles: int) -> str:
    """"38.2 µs (95.7 % CI 37.9–38.6)" over the cycles, else the sum of the operations'
    medians alone."""
    found = ratios.exchange_cost(ex, cycles) if cycles else None
    if found is None:
        return md.duration_us(ex.us)
    median, low, high, level = found
    return (f"{md.duration_us(median)} ({numbers.share(level)} CI "
            f"{numbers.interval(low, high)})")


def _summary_line(role: str, pq: Exchange, classical: Exchange, found: Ratio | None,
                  cycles: int = 0) -> str:
    what = "A key exchange" if role == "exchange" else "A signature (sign + verify)"
    wire = ""
    if pq.wire_bytes and classical.wire_bytes:
        wire = (f"; it puts {md.byte_count(pq.wire_bytes)} on the wire instead of "
                f"{md.byte_count(classical.wire_bytes)} "
                f"({md.ratio(pq.wire_bytes / classical.wire_bytes)})")
    versus = (f"{md.ratio(found.estimate)} the time of" if found is not None
              else "against")
    interval = (f" ({numbers.share(found.ci_level)} CI "
                f"{numbers.interval(found.ci_low, found.ci_high)}, paired over {found.pairs} "
                f"cycles)" if found is not None else "")
    return (f"- {what} with {md.text(pq.algorithm)} takes {_cost_text(pq, cycles)} "
            f"({md.text(pq.implementation)}), {versus} "
            f"{md.text(classical.algorithm)} ({_cost_text(classical, cycles)}, "
            f"{md.text(classical.implementation)}){interval}{wire}.")


def _ratio_line(found: Ratio) -> str:
    return (f"- {md.text(found.numerator.label)} takes {md.ratio(found.estimate)} the time of "
            f"{md.text(found.denominator.label)} per {md.text(found.per)} "
            f"({numbers.share(found.ci_level)} CI "
            f"{numbers.interval(found.ci_low, found.ci_high)}, paired over {found.pairs} "
            "cycles).")


def summary(run: Run | None, figures: RunFigures | None) -> list[str]:
    """Bullets for the top of the report: the run's headline paired ratios
    (`ratios.headline`: the level-3 PQ schemes against their classical baselines, larger
    keys and digests against smaller, each binding against its native loop), each with its
    interval. A run whose rows were not paired shows the times alone."""
    if run is None or figures is None:
        return []
    public = [m for m in run.measurements if m.block_size is None and m.unit == "op"]
    cycles = ratios.cycles_of(run)
    if not cycles:
        return [_summary_line(role, pq, classical, None)
                for role, pq, classical in headline_pairs(public)]
    lines = []
    every = {role: exchanges(role, public) for role in ("exchange", "signature")}
    for found in figures.headline:
        if found.kind in every:
            sides = [next((ex for ex in every[found.kind]
                           if f"{ex.algorithm} [{ex.implementation}]" == side.label), None)
                     for side in (found.numerator, found.denominator)]
            if sides[0] is not None and sides[1] is not None:
                lines.append(_summary_line(found.kind, sides[0], sides[1], found, cycles))
                continue
        lines.append(_ratio_line(found))
    return lines
