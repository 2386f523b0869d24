"""TLS results as stored runs of kind "tls", using the records every run kind shares.

One row per (cell, implementation, transport, operation). The mapping to the record lives in
`measurement` alone; `record.models.TlsFacts` types the attributes it writes:

* algorithm: the cell, "X25519MLKEM768 + ML-DSA-65"; operation: "full" or "resumed";
* implementation: the library's name for the in-process figure over memory buffers
  ("pyopenssl"), with "-loopback" for the two-process figure over 127.0.0.1. The transport
  is part of the name because rows are compared by (algorithm, implementation, operation,
  block size): the two figures measure different things and must never be pooled;
* rounds: LoopResult(handshakes, elapsed_ns) per round, so compare, history and report read
  handshakes per second as they read operations per second;
* sizes: the messages' bytes; attributes: the group and certificate, the bytes each side
  sent, the paper round trips, and each side's CPU time per handshake (per round too).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pqbench.data.record.results import Measurement, Problem, Run, Verification
from pqbench.data.record.rounds import LoopResult
from pqbench.data.record.runs import new_run
from pqbench.measure.tls.catalog import SCHEME_NAMES
from pqbench.measure.tls.grid import TlsResult, TlsSettings

KIND = "tls"
LOOPBACK_SUFFIX = "-loopback"


def implementation_name(implementation: str, transport: str) -> str:
    return implementation + (LOOPBACK_SUFFIX if transport == "loopback" else "")


def _median(values: Sequence[float]) -> float:
    return statistics.median(values)


def _per_handshake_us(cpu_ns: Sequence[int], counts: Sequence[int]) -> float | None:
    """Median over rounds of each round's CPU time per handshake, in microseconds."""
    per_round = [ns / n / 1e3 for ns, n in zip(cpu_ns, counts, strict=True) if n]
    return _median(per_round) if per_round else None


def measurement(result: TlsResult) -> Measurement:
    """The one place a TLS result becomes the shared record."""
    wire, trips = result.wire, result.trips
    rounds = tuple(LoopResult(r.handshakes, max(r.elapsed_ns, 1)) for r in result.rounds)
    counts = [r.handshakes for r in result.rounds]
    client_cpu = [r.client_cpu_ns for r in result.rounds]
    server_cpu = [r.server_cpu_ns for r in result.rounds]
    rates = [r.ops_per_sec for r in rounds if r.ops]
    sizes = {"client_hello": wire.client_hello_bytes,
             "client_share": wire.client_share_bytes, "server_share": wire.server_share_bytes,
             "server_flight": wire.server_flight_bytes,
             "tickets": wire.post_handshake_bytes}
    if wire.certificate_message_bytes is not None:
        sizes["certificate_chain"] = wire.certificate_message_bytes
    if wire.signature_bytes is not None:
        sizes["signature"] = wire.signature_bytes
    attributes: dict[str, Any] = {
        "group": result.cell.group.name,
        "certificate": result.cell.certificate.name,
        "transport": result.transport,
        "library": result.explain_library,
        "tls_library": result.library,
        "handshakes_per_sec": _median(rates) if rates else 0.0,
        "client_bytes": wire.client_bytes,
        "server_bytes": wire.server_bytes,
        "round_trips": trips.round_trips,
        "client_segments": trips.client_segments,
        "server_segments": trips.server_segments,
        "mtu": trips.mtu,
        "initial_window": trips.initial_window,
        "signature_scheme": SCHEME_NAMES.get(wire.scheme) if wire.scheme is not None else None,
        "certificates": len(wire.certificate_der_lengths),
        "client_cpu_us": _per_handshake_us(client_cpu, counts),
        "server_cpu_us": _per_handshake_us(server_cpu, counts),
        "client_cpu_ns": client_cpu,
        "server_cpu_ns": server_cpu,
        # A handshake runs on two threads (or two processes): its rate is in wall time,
        # each side's CPU time is kept beside it.
        "time_base": "wall",
    }
    return Measurement(algorithm=result.cell.name,
                       implementation=implementation_name(result.implementation,
                                                          result.transport),
                       operation=result.operation, rounds=rounds, sizes=sizes,
                       attributes=attributes)


def tls_run(started: datetime, settings: TlsSettings, environment: dict[str, Any],
            results: Sequence[TlsResult], problems: Sequence[Problem],
            verifications: Sequence[Verification], status: str = "complete") -> Run:
    return new_run(KIND, started, settings=settings.as_dict(), environment=environment,
                   measurements=(measurement(r) for r in results), problems=problems,
                   verifications=verifications, status=status, label=settings.label)


def rows(run: Run) -> list[Measurement]:
    """The run's TLS rows (a stored run of kind "tls")."""
    return [m for m in run.measurements if "group" in m.attributes]
