"""The grid runner on real handshakes: rows only for verified cells, failures and refusals
recorded with their reasons, honest handshake counts, and loopback between two processes."""

from __future__ import annotations

import pytest

from pqbench.measure.tls import catalog, grid, inprocess, pyopenssl, registry, wire
from pqbench.measure.tls import runs as tls_runs
from pqbench.measure.tls.base import ClientSide, MemoryEndpoint, TlsImplementation
from pqbench.platform.errors import NotOfferedError

QUICK = grid.TlsSettings(seconds=0.05, rounds=5, warmup=0.0, transports=("memory",))


def _cells(groups: list[str], certificates: list[str]) -> list[catalog.Cell]:
    return catalog.grid(catalog.resolve_groups(groups), catalog.resolve_certificates(certificates))


def _run(cells: list[catalog.Cell], implementations: list[TlsImplementation],
         settings: grid.TlsSettings = QUICK) -> grid.GridRecorder:
    record = grid.GridRecorder()
    grid.run_grid(cells, implementations, settings, record)
    return record


def test_every_offered_cell_gets_verified_rows_and_the_rest_a_reason() -> None:
    cells = _cells(["X25519", "X25519MLKEM768"], ["ECDSA-P-256", "ML-DSA-65"])
    record = _run(cells, registry.all_implementations())
    rows = {(r.cell.name, r.implementation, r.operation) for r in record.results}
    refused = {(p.algorithm, p.implementation) for p in record.problems}
    for cell in cells:
        assert {(cell.name, "pyopenssl", op) for op in grid.OPERATIONS} <= rows
        verified = {(v.algorithm, v.implementation) for v in record.verifications}
        assert (cell.name, "pyopenssl") in verified
        for name in ("python-ssl", "libssl"):
            classical = not (cell.group.post_quantum or cell.certificate.post_quantum)
            implementation = registry.by_name(name)
            if classical or implementation.offers(cell) is None:
                assert {(cell.name, name, op) for op in grid.OPERATIONS} <= rows
            else:
                assert (cell.name, name) in refused
                assert not any(r[:2] == (cell.name, name) for r in rows)
    assert all(p.kind == "not offered" and p.reason for p in record.problems)


def test_a_negotiation_other_than_the_one_asked_for_is_a_failed_verification(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injected: both sides also allow X25519, which the client offers first, so a
    P-256 cell would silently run X25519. It must be refused, not timed."""
    original = pyopenssl._context

    def both_groups(cell: catalog.Cell) -> object:
        context = original(cell)
        pyopenssl.lib.SSL_CTX_set1_curves_list(context._context, b"X25519:P-256")
        return context

    monkeypatch.setattr(pyopenssl, "_context", both_groups)
    record = _run(_cells(["P-256"], ["ECDSA-P-256"]), [registry.by_name("pyopenssl")])
    assert record.results == []
    assert {p.operation for p in record.problems} == set(grid.OPERATIONS)
    for problem in record.problems:
        assert problem.kind == "failed verification"
        assert "asked for P-256" in problem.reason and "X25519" in problem.reason


def test_a_resumption_the_server_refuses_stops_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injected: the client never offers its session, so no handshake resumes."""
    def no_session(self: MemoryEndpoint) -> object | None:
        return None

    monkeypatch.setattr(pyopenssl._Memory, "session", no_session)
    record = _run(_cells(["X25519"], ["Ed25519"]), [registry.by_name("pyopenssl")])
    assert [r.operation for r in record.results] == ["full"]
    (problem,) = record.problems
    assert (problem.kind, problem.operation) == ("failed verification", "resumed")


class _Counting(ClientSide):
    """A real client side that counts the connections it makes."""

    def __init__(self, inner: ClientSide) -> None:
        self.inner, self.made = inner, 0

    def memory(self, session: object | None = None) -> MemoryEndpoint:
        self.made += 1
        return self.inner.memory(session)

    def record(self, transcript: wire.Transcript | None) -> None:
        self.inner.record(transcript)

    def connect(self, sock, session):  # type: ignore[no-untyped-def]
        return self.inner.connect(sock, session)


@pytest.mark.parametrize("resumed", [False, True])
def test_rounds_count_every_handshake_once_and_charge_both_sides(resumed: bool) -> None:
    implementation = registry.by_name("pyopenssl")
    (cell,) = _cells(["X25519MLKEM768"], ["ML-DSA-44"])
    from pqbench.measure.tls.certs import make_credentials

    credentials = make_credentials(cell.certificate)
    client = _Counting(implementation.client(cell, credentials))
    server = implementation.server(cell, credentials)
    rounds = inprocess.run_rounds(client, server, resumed=resumed, rounds=3, round_seconds=0.05,
                               warmup=0.0)
    # One connection per counted handshake, plus the full one a resumed run starts from.
    assert client.made == sum(r.handshakes for r in rounds) + (1 if resumed else 0)
    for r in rounds:
        assert r.handshakes >= 1 and r.elapsed_ns >= 0.05e9
        assert r.client_cpu_ns > 0 and r.server_cpu_ns > 0


def test_bytes_and_round_trips_follow_the_mtu_and_window_asked_for() -> None:
    cells = _cells(["X25519MLKEM768"], ["ML-DSA-87"])
    wide = _run(cells, [registry.by_name("pyopenssl")],
                grid.TlsSettings(seconds=0.02, rounds=1, warmup=0.0, transports=("memory",),
                                 operations=("full",), initial_window=40))
    narrow = _run(cells, [registry.by_name("pyopenssl")],
                  grid.TlsSettings(seconds=0.02, rounds=1, warmup=0.0, transports=("memory",),
                                   operations=("full",), mtu=1280, initial_window=4))
    (w,), (n,) = wide.results, narrow.results
    # The same certificate kind, the same sizes: only the paper model differs.
    assert w.wire.server_flight_bytes > 4 * 1240 * 3  # beyond 4 + 8 segments at MSS 1240
    assert w.trips.round_trips == 1 and n.trips.round_trips >= 3
    assert n.trips.server_segments == -(-n.wire.server_flight_bytes // 1240)


@pytest.mark.slow
def test_loopback_rows_run_between_two_processes_after_their_own_verification() -> None:
    cells = _cells(["X25519MLKEM768"], ["ML-DSA-65"]) + _cells(["X25519"], ["ECDSA-P-256"])
    settings = grid.TlsSettings(seconds=0.1, rounds=5, warmup=0.0, transports=("loopback",))
    record = _run(cells, [registry.by_name("pyopenssl"), registry.by_name("python-ssl")],
                  settings)
    rows = {(r.cell.name, r.implementation, r.operation): r for r in record.results}
    for op in grid.OPERATIONS:
        assert ("X25519MLKEM768 + ML-DSA-65", "pyopenssl", op) in rows
        assert ("X25519 + ECDSA-P-256", "python-ssl", op) in rows
    for row in rows.values():
        assert row.transport == "loopback"
        assert all(r.handshakes > 0 and r.server_cpu_ns > 0 for r in row.rounds)
    checks = {c for v in record.verifications for c in v.checks}
    assert any("over loopback" in c for c in checks)
    measurement = tls_runs.measurement(rows[("X25519 + ECDSA-P-256", "python-ssl", "full")])
    assert measurement.implementation == "python-ssl-loopback"


def test_a_server_process_that_cannot_serve_the_cell_is_reported() -> None:
    from pqbench.measure.tls import loopback
    from pqbench.measure.tls.certs import make_credentials

    (cell,) = _cells(["X25519MLKEM768"], ["ECDSA-P-256"])
    credentials = make_credentials(cell.certificate)
    with loopback.ServerProcess("python-ssl") as server, \
            pytest.raises(NotOfferedError, match="X25519MLKEM768"):
        server.serve(cell, credentials)


def test_the_record_mapping_carries_the_fields_the_json_promises() -> None:
    record = _run(_cells(["X25519MLKEM768"], ["ML-DSA-65"]), [registry.by_name("pyopenssl")])
    full = next(r for r in record.results if r.operation == "full")
    m = tls_runs.measurement(full)
    assert (m.algorithm, m.implementation, m.operation) == (
        "X25519MLKEM768 + ML-DSA-65", "pyopenssl", "full")
    a = m.attributes
    assert (a["group"], a["certificate"], a["transport"]) == (
        "X25519MLKEM768", "ML-DSA-65", "memory")
    assert a["client_bytes"] == full.wire.client_first_flight_bytes \
        + full.wire.client_second_flight_bytes
    assert a["server_bytes"] == full.wire.server_flight_bytes + full.wire.post_handshake_bytes
    assert a["round_trips"] == full.trips.round_trips
    assert a["handshakes_per_sec"] == m.ops_per_sec
    assert [r.ops for r in m.rounds] == [r.handshakes for r in full.rounds]
    assert m.sizes["signature"] == 3309 and m.sizes["certificate_chain"] > 2 * 3309
    per_round = [ns / n / 1e3 for ns, n in zip(a["client_cpu_ns"],
                                               [r.handshakes for r in full.rounds],
                                               strict=True)]
    assert min(per_round) <= a["client_cpu_us"] <= max(per_round)
