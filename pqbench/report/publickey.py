"""The headline: post-quantum against classical public-key cryptography on this machine.

The per-exchange cost model is `analysis.exchanges`; this module lays it out: the tables
per role and implementation, the operations chart, the implementation gap and the summary
bullets.
"""

from __future__ import annotations

from collections.abc import Sequence

from pqbench.analysis.bindings import binding_shares, bundled_openssl
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
from pqbench.implementations import BINDINGS
from pqbench.presentation import markdown as md
from pqbench.presentation import numbers
from pqbench.record.fingerprint import Fingerprint
from pqbench.record.results import Measurement
from pqbench.report.base import Section
from pqbench.report.charts import GroupedBars

__all__ = ["gap", "headline", "summary"]


def _operations_text(ex: Exchange) -> str:
    return " · ".join(f"{op}{'×2' if count > 1 else ''} {md.duration_us(m.us_per_op)}"
                      for op, count, m in ex.operations)


_TITLES = {"exchange": ("Key exchange", "exchange", "exchanges/s", "bytes on the wire"),
           "signature": ("Signatures", "sign + verify", "sign+verify/s", "signature + public key")}


def _exchange_table(role: str, found: Sequence[Exchange], show_impl: bool,
                    baselines: dict[str, Exchange]) -> str:
    """`show_impl`: the fastest-of-each table, set against the fastest baseline; otherwise
    one implementation's table, set against its own baseline or its counterpart's."""
    _, per, rate, wire = _TITLES[role]
    headers = ["algorithm", *(["implementation"] if show_impl else []), "security",
               f"µs per {per}", rate, f"time vs {BASELINE[role]}", "cycles", wire,
               "operations"]
    rows = []
    for ex in found:
        base = baseline_for(ex, baselines, show_impl)
        versus = md.MISSING
        if base is not None:
            versus = md.ratio(ex.us / base.us)
            if base.implementation != ex.implementation:
                versus += f" (vs {base.implementation})"
        rows.append([ex.algorithm, *([ex.implementation] if show_impl else []),
                     ex.security or md.MISSING,
                     md.number(ex.us), md.si(ex.per_second), versus,
                     md.si(ex.cycles), md.byte_count(ex.wire_bytes), _operations_text(ex)])
    align = ["l", *(["l"] if show_impl else []), "l", "r", "r", "r", "r", "r", "l"]
    return md.table(headers, rows, align)


def headline(rows: Sequence[Measurement], prefix: str) -> Section | None:
    """Per role: the fastest implementation of each algorithm, then each implementation."""
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
                  _exchange_table(role, fastest(found), True, baselines)]
        for impl in implementations_of(public):
            mine = [ex for ex in found if ex.implementation == impl]
            if mine:
                parts += [md.heading(4, f"{title} through {impl}"),
                          _exchange_table(role, mine, False, baselines)]
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
    index = {(m.algorithm, m.operation, m.implementation): m.ops_per_sec for m in rows}
    series = tuple((impl, tuple(index.get((a, op, impl)) for a, op in labels)) for impl in impls)
    title = "Key exchange" if role == "exchange" else "Signatures"
    return GroupedBars(filename, f"{title}: operations per second (log scale, higher is faster)",
                       "operations per second (log scale)",
                       tuple(f"{a} {op}" for a, op in labels), series)


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


def gap(rows: Sequence[Measurement], environment: Fingerprint | None = None
        ) -> Section | None:
    """ops/s of each (algorithm, operation) through every implementation, side by side."""
    public = [m for m in rows if m.block_size is None]
    impls = implementations_of(public)
    if len(impls) < 2:
        return None
    keys = list(dict.fromkeys((m.algorithm, m.operation) for m in public))
    index = {(m.algorithm, m.operation, m.implementation): m for m in public}
    pairs = [(b, n) for b, n in BINDINGS if b in impls and n in impls]
    headers = ["algorithm", "operation", *(f"{i} (ops/s)" for i in impls),
               *(f"{b} / {n}" for b, n in pairs)]
    table_rows = []
    for alg, op in keys:
        cells = [md.si(index[(alg, op, i)].ops_per_sec) if (alg, op, i) in index else md.MISSING
                 for i in impls]
        ratios = []
        for b, n in pairs:
            if (alg, op, b) in index and (alg, op, n) in index:
                ratios.append(md.ratio(index[(alg, op, b)].ops_per_sec
                                       / index[(alg, op, n)].ops_per_sec))
            else:
                ratios.append(md.MISSING)
        table_rows.append([alg, op, *cells, *ratios])
    text = [md.heading(2, "Implementation gap"),
            "The same operation through each implementation. `liboqs` and `libcrypto` are "
            "pqbench's native C loops (no binding cost, as liboqs's speed_kem and "
            "`openssl speed` measure); `liboqs-python` and `cryptography` are what a Python "
            "program sees. A ratio below 1 is the share of native speed left after the "
            "binding; a dash means not offered or not measured."]
    note = _library_note(environment or Fingerprint())
    if note and ("cryptography", "libcrypto") in pairs:
        text.append(note)
    text.append(md.table(headers, table_rows,
                         ["l", "l", *("r" for _ in impls), *("r" for _ in pairs)]))
    return Section("\n\n".join(text))


# --- the summary at the top -----------------------------------------------------------------

def _summary_line(role: str, pq: Exchange, classical: Exchange) -> str:
    what = "A key exchange" if role == "exchange" else "A signature (sign + verify)"
    time_ratio = pq.us / classical.us
    wire = ""
    if pq.wire_bytes and classical.wire_bytes:
        wire = (f"; it puts {md.byte_count(pq.wire_bytes)} on the wire instead of "
                f"{md.byte_count(classical.wire_bytes)} "
                f"({md.ratio(pq.wire_bytes / classical.wire_bytes)})")
    return (f"- {what} with {md.text(pq.algorithm)} takes {md.duration_us(pq.us)} "
            f"({md.text(pq.implementation)}), {md.ratio(time_ratio)} the time of "
            f"{md.text(classical.algorithm)} ({md.duration_us(classical.us)}, "
            f"{md.text(classical.implementation)}){wire}.")


def summary(rows: Sequence[Measurement]) -> list[str]:
    """Bullets for the top of the report: the level-3 PQ schemes against their classical
    counterparts (fastest implementation of each), and what each binding keeps of native."""
    public = [m for m in rows if m.block_size is None]
    lines = [_summary_line(role, pq, classical)
             for role, pq, classical in headline_pairs(public)]
    for binding, native, median, count in binding_shares(public):
        lines.append(f"- {md.text(binding)} runs at a median {numbers.percent(median, 0)} of "
                     f"{md.text(native)}'s "
                     f"native speed over {count} operations measured through both.")
    return lines
