"""Run the grid: for each implementation and cell, verify a handshake, then time it.

Order of work per (implementation, cell): ask whether the cell is offered; build both
contexts (certificates were issued before, outside every clock); per operation (full,
resumed) one recorded handshake over memory buffers is verified against the catalog and
gives the wire sizes; then each transport is timed, loopback after its own verified
connection. Nothing here prints; a callback reports progress, and Ctrl-C keeps everything
completed so far.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pqbench.data.record.results import Problem, Verification
from pqbench.measure.tls import checks, inprocess, loopback, model
from pqbench.measure.tls.base import ClientSide, ServerSide, TlsImplementation
from pqbench.measure.tls.catalog import Cell
from pqbench.measure.tls.certs import Credentials, make_credentials
from pqbench.measure.tls.wire import Transcript, WireFacts, client_view
from pqbench.platform.errors import NotOfferedError, VerificationError

OPERATIONS = ("full", "resumed")
TRANSPORTS = ("memory", "loopback")


@dataclass(frozen=True)
class TlsSettings:
    """How long each row is timed and how the paper model counts."""

    seconds: float = 1.0  # timed seconds per row, split over the rounds
    rounds: int = 5
    warmup: float = 0.05  # untimed seconds before the rounds
    operations: tuple[str, ...] = OPERATIONS
    transports: tuple[str, ...] = TRANSPORTS
    mtu: int = model.DEFAULT_MTU
    initial_window: int = model.DEFAULT_INITIAL_WINDOW
    intermediates: int = 1
    label: str | None = None

    @property
    def round_seconds(self) -> float:
        return self.seconds / self.rounds

    def as_dict(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "rounds": self.rounds, "warmup": self.warmup,
                "operations": list(self.operations), "transports": list(self.transports),
                "mtu": self.mtu, "initial_window": self.initial_window,
                "intermediates": self.intermediates, "label": self.label}


@dataclass(frozen=True)
class TlsResult:
    """One timed row: a cell through one implementation, transport and operation."""

    cell: Cell
    implementation: str
    library: str  # "OpenSSL 4.0.3"
    explain_library: str  # the library in `explain`'s terms
    transport: str
    operation: str
    rounds: tuple[inprocess.Round, ...]
    wire: WireFacts  # from the verified handshake over memory buffers
    trips: model.RoundTrips


@dataclass
class GridRecorder:
    """What the grid produced so far; an interruption keeps all of it."""

    results: list[TlsResult] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    verifications: list[Verification] = field(default_factory=list)


Progress = Callable[[str], None]


def plan_size(cells: Sequence[Cell], implementations: Sequence[TlsImplementation],
              settings: TlsSettings) -> int:
    """Progress steps: one per (implementation, cell, operation, transport)."""
    return (len(cells) * len(implementations) * len(settings.operations)
            * len(settings.transports))


def verify(client: ClientSide, server: ServerSide, cell: Cell, credentials: Credentials,
           operation: str) -> tuple[WireFacts, list[str]]:
    """One recorded handshake over memory buffers, checked against the catalog."""
    session = inprocess.handshake(client, server).client.session() if operation == "resumed" \
        else None
    transcript = Transcript()
    client.record(transcript)
    try:
        done = inprocess.handshake(client, server, session)
    finally:
        client.record(None)
    facts = client_view(transcript)
    if transcript.flights() != list(done.flights):
        # The record headers the library reported must add up to what crossed the buffers.
        raise VerificationError(f"the library reported flights of {transcript.flights()} "
                                f"bytes, the buffers carried {list(done.flights)}")
    found_checks = checks.check_group(cell, facts, done.client.group_name())
    found_checks += (checks.check_resumed(facts) if operation == "resumed"
                     else checks.check_full(cell, facts, credentials))
    return facts, found_checks


def _verify_loopback(client: ClientSide, port: int, cell: Cell, credentials: Credentials,
                     operation: str) -> list[str]:
    """The first loopback connection of an operation, checked like the in-memory one."""
    session = loopback.connect(client, port, None)[0] if operation == "resumed" else None
    transcript = Transcript()
    client.record(transcript)
    try:
        loopback.connect(client, port, session)
    finally:
        client.record(None)
    facts = client_view(transcript)
    checks.check_group(cell, facts)
    if operation == "resumed":
        checks.check_resumed(facts)
    else:
        checks.check_full(cell, facts, credentials)
    return [f"{operation} handshake over loopback checked the same way"]


class _Servers:
    """One server process per implementation, started when a loopback row first needs it."""

    def __init__(self) -> None:
        self.running: dict[str, loopback.ServerProcess] = {}

    def get(self, name: str) -> loopback.ServerProcess:
        if name not in self.running:
            self.running[name] = loopback.ServerProcess(name)
        return self.running[name]

    def close(self) -> None:
        for server in self.running.values():
            server.close()


def _time(client: ClientSide, server: ServerSide, cell: Cell, credentials: Credentials,
          implementation: TlsImplementation, operation: str, transport: str,
          settings: TlsSettings, servers: _Servers) -> tuple[list[inprocess.Round], list[str]]:
    resumed = operation == "resumed"
    if transport == "memory":
        return inprocess.run_rounds(client, server, resumed=resumed, rounds=settings.rounds,
                                 round_seconds=settings.round_seconds,
                                 warmup=settings.warmup), []
    process = servers.get(implementation.name)
    port = process.serve(cell, credentials)
    found = _verify_loopback(client, port, cell, credentials, operation)
    return loopback.run_rounds(client, process, port, resumed=resumed, rounds=settings.rounds,
                               round_seconds=settings.round_seconds,
                               warmup=settings.warmup), found


def _cell(implementation: TlsImplementation, cell: Cell, credentials: Credentials,
          settings: TlsSettings, recorder: GridRecorder, servers: _Servers,
          progress: Progress) -> None:
    name = implementation.name
    client = implementation.client(cell, credentials)
    server = implementation.server(cell, credentials)
    passed: list[str] = []
    for operation in settings.operations:
        try:
            facts, found = verify(client, server, cell, credentials, operation)
        except VerificationError as exc:
            recorder.problems.append(Problem(cell.name, name, "failed verification", str(exc),
                                           operation))
            for transport in settings.transports:
                progress(f"{cell.name} {operation} {transport} [{name}]")
            continue
        passed += [c for c in found if c not in passed]
        trips = model.handshake(facts.client_first_flight_bytes, facts.server_flight_bytes,
                                settings.mtu, settings.initial_window)
        for transport in settings.transports:
            progress(f"{cell.name} {operation} {transport} [{name}]")
            try:
                rounds, more = _time(client, server, cell, credentials, implementation,
                                     operation, transport, settings, servers)
            except (NotOfferedError, VerificationError) as exc:
                kind = "not offered" if isinstance(exc, NotOfferedError) else \
                    "failed verification"
                recorder.problems.append(Problem(cell.name, name, kind,
                                               f"{transport}: {exc}", operation))
                continue
            passed += [c for c in more if c not in passed]
            recorder.results.append(TlsResult(
                cell=cell, implementation=name, library=implementation.library(),
                explain_library=implementation.explain_library, transport=transport,
                operation=operation, rounds=tuple(rounds), wire=facts, trips=trips))
    if passed:
        recorder.verifications.append(Verification(cell.name, name, tuple(passed)))


def run_grid(cells: Sequence[Cell], implementations: Sequence[TlsImplementation],
             settings: TlsSettings, recorder: GridRecorder,
             progress: Progress | None = None) -> None:
    """Everything in order; KeyboardInterrupt passes through, keeping what finished."""
    report = progress or (lambda _title: None)
    steps = len(settings.operations) * len(settings.transports)
    credentials: dict[str, Credentials] = {}
    servers = _Servers()
    try:
        for implementation in implementations:
            unavailable = implementation.unavailable_reason()
            for cell in cells:
                reason = unavailable or implementation.offers(cell)
                if reason is None:
                    kind = cell.certificate.name
                    if kind not in credentials:
                        credentials[kind] = make_credentials(cell.certificate,
                                                             settings.intermediates)
                    try:
                        _cell(implementation, cell, credentials[kind], settings, recorder,
                              servers, report)
                        continue
                    except NotOfferedError as exc:
                        reason = str(exc)
                recorder.problems.append(Problem(
                    cell.name, implementation.name,
                    "unavailable" if unavailable else "not offered", reason))
                for _ in range(steps):
                    report(f"{cell.name} [{implementation.name}]")
    finally:
        servers.close()
