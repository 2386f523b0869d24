"""The headline: post-quantum against classical public-key cryptography on this machine.

Costs are given per exchange, not only per operation, because that is what a protocol pays:

* KEM (FIPS 203): the client generates a key pair, the server encapsulates, the client
  decapsulates; the wire carries the public key and the ciphertext (as in TLS 1.3's
  ML-KEM key shares, draft-ietf-tls-ecdhe-mlkem).
* ECDH (RFC 7748, SP 800-56A): both sides generate an ephemeral key pair and derive; the wire
  carries two public keys.
* RSA key transport (RFC 8017 OAEP, as in TLS 1.2's RSA key exchange): the key pair is
  long-lived; the client encrypts, the server decrypts; the wire carries the public key and
  the ciphertext.
* Signatures: the signer signs, the verifier verifies; the wire carries the signature and
  the public key (as a certificate does). Key generation is excluded: keys are long-lived.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pqbench import algorithms
from pqbench.implementations import BINDINGS, ORDER, binding_shares
from pqbench.presentation import markdown as md
from pqbench.record.results import Measurement
from pqbench.report.base import Section
from pqbench.report.charts import GroupedBars

KEY_EXCHANGE = ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "X25519", "ECDH-P-256",
                "ECDH-P-384", "RSA-2048", "RSA-3072")
SIGNATURES = ("ML-DSA-44", "ML-DSA-65", "ML-DSA-87", "Ed25519", "ECDSA-P-256", "RSA-2048",
              "RSA-3072")
#: The classical scheme each table is set against.
BASELINE = {"exchange": "X25519", "signature": "Ed25519"}

#: (operation, times per exchange) and the sizes on the wire, per role and kind.
_RECIPES: dict[tuple[str, str], tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]] = {
    ("exchange", "kem"): ((("keygen", 1), ("encaps", 1), ("decaps", 1)),
                          (("public_key", 1), ("ciphertext", 1))),
    ("exchange", "key-agreement"): ((("keygen", 2), ("derive", 2)), (("public_key", 2),)),
    ("exchange", "rsa"): ((("encrypt", 1), ("decrypt", 1)),
                          (("public_key", 1), ("ciphertext", 1))),
    ("signature", "signature"): ((("sign", 1), ("verify", 1)),
                                 (("signature", 1), ("public_key", 1))),
    ("signature", "rsa"): ((("sign", 1), ("verify", 1)), (("signature", 1), ("public_key", 1))),
}


@dataclass(frozen=True)
class Exchange:
    """One algorithm's cost per exchange (or per signature) through one implementation."""

    algorithm: str
    implementation: str
    security: str
    operations: tuple[tuple[str, int, Measurement], ...]
    wire_bytes: int | None

    @property
    def us(self) -> float:
        return sum(count * m.us_per_op for _, count, m in self.operations)

    @property
    def per_second(self) -> float:
        return 1e6 / self.us if self.us else float("inf")

    @property
    def cycles(self) -> float | None:
        cycles = [m.cycles_per_op for _, _, m in self.operations]
        if any(c is None for c in cycles):
            return None
        return sum(count * (m.cycles_per_op or 0.0) for _, count, m in self.operations)


def _kind(name: str) -> str | None:
    try:
        return algorithms.by_name(name).kind
    except KeyError:
        return None


def security_label(name: str) -> str:
    try:
        alg = algorithms.by_name(name)
    except KeyError:
        return md.MISSING
    if alg.nist_level is not None:
        return f"NIST level {alg.nist_level}"
    if alg.classical_bits is not None:
        return f"{alg.classical_bits}-bit classical"
    return md.MISSING


def exchange(role: str, name: str, implementation: str,
             rows: Sequence[Measurement]) -> Exchange | None:
    """The exchange cost, or None unless every operation it needs was measured."""
    kind = _kind(name) or _kind_from_rows(rows)
    recipe = _RECIPES.get((role, kind or ""))
    if recipe is None:
        return None
    ops_needed, wire = recipe
    by_op = {m.operation: m for m in rows
             if m.algorithm == name and m.implementation == implementation
             and m.block_size is None}
    if any(op not in by_op for op, _ in ops_needed):
        return None
    sizes: dict[str, int] = {}
    for m in by_op.values():
        for key, value in m.sizes.items():
            sizes.setdefault(key, value)
    wire_bytes = (sum(count * sizes[key] for key, count in wire)
                  if all(key in sizes for key, _ in wire) else None)
    return Exchange(name, implementation, security_label(name),
                    tuple((op, count, by_op[op]) for op, count in ops_needed), wire_bytes)


def _kind_from_rows(rows: Sequence[Measurement]) -> str | None:
    ops = {m.operation for m in rows}
    if {"encaps", "decaps"} <= ops:
        return "kem"
    if {"sign", "verify"} <= ops:
        return "signature"
    return None


def implementations_of(rows: Sequence[Measurement]) -> list[str]:
    names = {m.implementation for m in rows}
    return sorted(names, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def _algorithms_for(role: str, rows: Sequence[Measurement]) -> list[str]:
    """The headline algorithms in their fixed order, then any other measured ones."""
    headline = KEY_EXCHANGE if role == "exchange" else SIGNATURES
    present = {m.algorithm for m in rows if m.block_size is None}
    extra_kinds = ("kem", "key-agreement", "rsa") if role == "exchange" else ("signature", "rsa")
    others = sorted(a for a in present
                    if a not in headline and (_kind(a) or _kind_from_rows(
                        [m for m in rows if m.algorithm == a])) in extra_kinds)
    return [a for a in headline if a in present] + others


def _exchanges(role: str, rows: Sequence[Measurement]) -> list[Exchange]:
    found = []
    for name in _algorithms_for(role, rows):
        for impl in implementations_of(rows):
            ex = exchange(role, name, impl, rows)
            if ex is not None:
                found.append(ex)
    return found


def _operations_text(ex: Exchange) -> str:
    return " · ".join(f"{op}{'×2' if count > 1 else ''} {md.duration_us(m.us_per_op)}"
                      for op, count, m in ex.operations)


_TITLES = {"exchange": ("Key exchange", "exchange", "exchanges/s", "bytes on the wire"),
           "signature": ("Signatures", "sign + verify", "sign+verify/s", "signature + public key")}


#: Where an implementation lacks the classical baseline (liboqs has no X25519), its
#: counterpart of the same kind stands in: native against native, binding against binding.
_COUNTERPART = {"liboqs": "libcrypto", "libcrypto": "liboqs",
                "liboqs-python": "cryptography", "cryptography": "liboqs-python"}


def _baseline_for(ex: Exchange, baselines: dict[str, Exchange],
                  any_implementation: bool) -> Exchange | None:
    if any_implementation:
        return min(baselines.values(), key=lambda b: b.us) if baselines else None
    return baselines.get(ex.implementation) or baselines.get(
        _COUNTERPART.get(ex.implementation, ""))


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
        base = _baseline_for(ex, baselines, show_impl)
        versus = md.MISSING
        if base is not None:
            versus = md.ratio(ex.us / base.us)
            if base.implementation != ex.implementation:
                versus += f" (vs {base.implementation})"
        rows.append([ex.algorithm, *([ex.implementation] if show_impl else []), ex.security,
                     md.number(ex.us), md.si(ex.per_second), versus,
                     md.si(ex.cycles), md.byte_count(ex.wire_bytes), _operations_text(ex)])
    align = ["l", *(["l"] if show_impl else []), "l", "r", "r", "r", "r", "r", "l"]
    return md.table(headers, rows, align)


def _fastest(found: Sequence[Exchange]) -> list[Exchange]:
    best: dict[str, Exchange] = {}
    for ex in found:
        if ex.algorithm not in best or ex.us < best[ex.algorithm].us:
            best[ex.algorithm] = ex
    return [best[name] for name in dict.fromkeys(ex.algorithm for ex in found)]


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
        found = _exchanges(role, public)
        if not found:
            continue
        title = _TITLES[role][0]
        baselines = {ex.implementation: ex for ex in found if ex.algorithm == BASELINE[role]}
        parts += [md.heading(3, title),
                  "Fastest measured implementation of each algorithm:",
                  _exchange_table(role, _fastest(found), True, baselines)]
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
    names = _algorithms_for(role, rows)
    wanted = {op for (r, _), (ops, _) in _RECIPES.items() if r == role for op, _ in ops}
    wanted.add("keygen")
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



def _library_note(environment: Mapping[str, Any]) -> str | None:
    """cryptography's wheels bundle their own OpenSSL: say so when it is not the system's."""
    libraries = environment.get("libraries") or {}
    bundled, system = libraries.get("cryptography_openssl"), libraries.get("system_libcrypto")
    if bundled and system and bundled != system:
        return (f"cryptography runs its bundled {md.text(bundled)}, libcrypto the system's "
                f"{md.text(system)}: "
                "a cryptography / libcrypto ratio above 1 is the newer OpenSSL being faster, "
                "not a negative binding cost.")
    return None


def gap(rows: Sequence[Measurement], environment: Mapping[str, Any] | None = None
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
    note = _library_note(environment or {})
    if note and ("cryptography", "libcrypto") in pairs:
        text.append(note)
    text.append(md.table(headers, table_rows,
                         ["l", "l", *("r" for _ in impls), *("r" for _ in pairs)]))
    return Section("\n\n".join(text))


# --- the summary at the top -----------------------------------------------------------------

#: (role, post-quantum schemes in order of preference, classical scheme) for the summary:
#: the NIST level 3 parameter set first, as TLS deployments pick it.
_SUMMARY_PAIRS = (("exchange", ("ML-KEM-768", "ML-KEM-512", "ML-KEM-1024"), "X25519"),
                  ("signature", ("ML-DSA-65", "ML-DSA-44", "ML-DSA-87"), "Ed25519"))


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
    lines = []
    for role, pq_names, classical_name in _SUMMARY_PAIRS:
        best = {ex.algorithm: ex for ex in _fastest(_exchanges(role, public))}
        pq_name = next((name for name in pq_names if name in best), None)
        if pq_name and classical_name in best:
            lines.append(_summary_line(role, best[pq_name], best[classical_name]))
    for binding, native, median, count in binding_shares(public):
        lines.append(f"- {md.text(binding)} runs at a median {median * 100:.0f} % of "
                     f"{md.text(native)}'s "
                     f"native speed over {count} operations measured through both.")
    return lines
