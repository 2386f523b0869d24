"""PQ in a TLS handshake: `pqbench tls` runs as a table, two charts and a summary line.

Rows are stored one per (cell, implementation + transport, operation) (see
pqbench/measure/tls/runs.py); here each (cell, library) becomes one table row with its full and
resumed rates over memory buffers and over loopback side by side, its CPU split, the bytes
each side sends and the paper round trips. The classical baseline is X25519 with an
ECDSA P-256 certificate, what most TLS 1.3 servers negotiate today.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pqbench.data.record.results import Measurement
from pqbench.libraries.implementations import rank
from pqbench.measure.tls import catalog
from pqbench.measure.tls.runs import LOOPBACK_SUFFIX
from pqbench.views import markdown as md
from pqbench.views import numbers
from pqbench.views.report.base import Section
from pqbench.views.report.charts import GroupedBars

BASELINE = "X25519 + ECDSA-P-256"
#: The summary's post-quantum cell, in order of preference: what browsers and servers
#: negotiate now with the ML-DSA level-3 certificate expected next.
HEADLINE = ("X25519MLKEM768 + ML-DSA-65", "X25519MLKEM768 + ML-DSA-44",
            "X25519MLKEM768 + ECDSA-P-256")

_Key = tuple[str, str]  # (cell, library)


def _library(m: Measurement) -> str:
    return m.implementation.removesuffix(LOOPBACK_SUFFIX)


def _cell_order(name: str) -> tuple[int, int, str]:
    """Catalog order (groups, then certificates); unknown names last, alphabetically."""
    groups = [g.name for g in catalog.GROUPS]
    kinds = [c.name for c in catalog.CERTIFICATES]
    group, _, certificate = name.partition(" + ")
    return (groups.index(group) if group in groups else len(groups),
            kinds.index(certificate) if certificate in kinds else len(kinds), name)


def _index(rows: Sequence[Measurement]) -> dict[tuple[str, str, str, str], Measurement]:
    """(cell, library, transport, operation) -> row."""
    return {(m.algorithm, _library(m), str(m.attributes.get("transport")), m.operation): m
            for m in rows}


def _keys(rows: Sequence[Measurement]) -> list[_Key]:
    keys = {(m.algorithm, _library(m)) for m in rows}
    return sorted(keys, key=lambda k: (_cell_order(k[0]), rank(k[1])))


def _first(index: Mapping[tuple[str, str, str, str], Measurement], key: _Key,
           operation: str) -> Measurement | None:
    """The row whose bytes and CPU split a table row shows: memory first, then loopback."""
    for transport in ("memory", "loopback"):
        found = index.get((*key, transport, operation))
        if found is not None:
            return found
    return None


def _rate(m: Measurement | None) -> str:
    return md.si(m.ops_per_sec) if m is not None else md.MISSING


def _count(value: Any) -> str:
    return numbers.count(value) if isinstance(value, int) else md.MISSING


def _trips(m: Measurement) -> str:
    a = m.attributes
    return f"{a.get('round_trips', md.MISSING)} ({a.get('server_segments', md.MISSING)})"


def _table(rows: Sequence[Measurement]) -> str:
    index = _index(rows)
    headers = ["group", "certificate", "implementation", "full/s (memory)",
               "full/s (loopback)", "resumed/s (memory)", "resumed/s (loopback)",
               "client CPU µs", "server CPU µs", "client bytes",
               "server bytes", "chain bytes", "round trips (server segments)"]
    table_rows = []
    for cell, library in _keys(rows):
        full = _first(index, (cell, library), "full")
        shown = full or _first(index, (cell, library), "resumed")
        assert shown is not None
        a = shown.attributes
        memory_full = index.get((cell, library, "memory", "full"))
        table_rows.append([
            a.get("group", md.MISSING), a.get("certificate", md.MISSING), library,
            _rate(memory_full), _rate(index.get((cell, library, "loopback", "full"))),
            _rate(index.get((cell, library, "memory", "resumed"))),
            _rate(index.get((cell, library, "loopback", "resumed"))),
            md.number(a.get("client_cpu_us")), md.number(a.get("server_cpu_us")),
            _count(a.get("client_bytes")), _count(a.get("server_bytes")),
            _count(shown.sizes.get("certificate_chain")), _trips(shown)])
    return md.table(headers, table_rows, ["l", "l", "l", *("r" for _ in headers[3:])])


def _charts(rows: Sequence[Measurement], prefix: str) -> list[GroupedBars]:
    full = [m for m in rows if m.operation == "full"]
    cells = sorted({m.algorithm for m in full}, key=_cell_order)
    if not cells:
        return []
    index = _index(full)
    libraries = sorted({_library(m) for m in full}, key=rank)
    rates = tuple((library, tuple(
        (m.ops_per_sec if (m := index.get((cell, library, "memory", "full"))) else None)
        for cell in cells)) for library in libraries)
    shown = [next(m for library in libraries
                  if (m := _first(index, (cell, library), "full")) is not None)
             for cell in cells]
    sizes = tuple((label, tuple(float(m.attributes[key]) if isinstance(
        m.attributes.get(key), int) else None for m in shown))
        for label, key in (("client to server", "client_bytes"),
                           ("server to client", "server_bytes")))
    return [
        GroupedBars(f"{prefix}tls-handshakes.png",
                    "Full TLS 1.3 handshakes per second, in one process",
                    "handshakes per second", tuple(cells), rates),
        GroupedBars(f"{prefix}tls-bytes.png",
                    "Bytes each side sends in a full TLS 1.3 handshake",
                    "bytes", tuple(cells), sizes, legend_title="direction"),
    ]


def _settings_text(settings: Mapping[str, Any]) -> str:
    chain = settings.get("intermediates")
    chain_text = (f"the server certificate and {chain} intermediate CA certificate"
                  f"{'s' if chain != 1 else ''}" if isinstance(chain, int)
                  else "the server's certificate chain")
    return (f"The server sends {chain_text}, each signed with the cell's certificate key "
            "type; the client verifies the chain against a throw-away root CA and the server "
            "name on every handshake. Round trips and the server flight's TCP segments are "
            f"computed from the bytes at an MTU of {settings.get('mtu', md.MISSING)} bytes and "
            f"an initial window of {settings.get('initial_window', md.MISSING)} segments "
            "(RFC 6928): one round trip for a TLS 1.3 handshake, one more for each slow-start "
            "window a flight needs beyond the first; TCP's own handshake is not counted.")


def section(rows: Sequence[Measurement], settings: Mapping[str, Any],
            prefix: str = "") -> Section | None:
    """The "PQ in a TLS handshake" section for one `pqbench tls` run, or None."""
    if not rows:
        return None
    parts = [md.heading(2, "PQ in a TLS handshake"),
             "Real TLS 1.3 handshakes through each TLS library, over each key-exchange group "
             "and server certificate key type it offers. Each cell's group and signature "
             "scheme were read back from a recorded handshake and checked before it was "
             "timed. *memory*: client and server in one process over memory buffers, so the "
             "rate and the CPU split (each side's thread CPU time per handshake) are "
             "computation only; *loopback*: two processes over 127.0.0.1, TCP included. "
             "*resumed*: a TLS 1.3 session ticket with a fresh key exchange in the same group "
             "(no certificate). Bytes are whole TLS records as each side sent them in a full "
             "handshake (the server's include its two session tickets).",
             _settings_text(settings), _table(rows)]
    charts = _charts(rows, prefix)
    parts += [md.image(c.title, c.filename) for c in charts]
    return Section("\n\n".join(parts), tuple(charts))


def summary(rows: Sequence[Measurement]) -> list[str]:
    """One bullet: the post-quantum headline cell beside the classical baseline. Their
    rounds were taken one row after the other, not in cycles, so drift between the two
    rows is not cancelled: the rates are given, and no ratio is claimed that the rounds
    cannot back."""
    index = _index(rows)
    for library in sorted({_library(m) for m in rows}, key=rank):
        base = index.get((BASELINE, library, "memory", "full"))
        pq = next((m for name in HEADLINE
                   if (m := index.get((name, library, "memory", "full"))) is not None), None)
        if base is None or pq is None or not base.ops_per_sec:
            continue
        a, b = pq.attributes, base.attributes
        return [f"- A full TLS 1.3 handshake with {pq.algorithm} ran at "
                f"{md.si(pq.ops_per_sec)} handshakes/s, with {BASELINE} at "
                f"{md.si(base.ops_per_sec)} ({library} in one process; the rows were timed "
                "one after the other, not paired, so no ratio is claimed); the server sends "
                f"{_count(a.get('server_bytes'))} bytes instead of "
                f"{_count(b.get('server_bytes'))}, in {a.get('round_trips')} round trip(s) "
                f"instead of {b.get('round_trips')}."]
    return []
