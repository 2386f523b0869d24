"""Handshakes in one process over memory buffers: the CPU-only figure, split by side.

Client and server take turns: each turn feeds a side the peer's records, advances it and
collects what it wrote. The calling thread's CPU clock (CLOCK_THREAD_CPUTIME_ID) is read at
every change of turn, so each side is charged exactly its own calls, connection set-up
included; no network, kernel or scheduler time is in the figure. The wall clock bounds each
round, as in every pqbench loop (see record/rounds.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from pqbench.measure.tls.base import ClientSide, MemoryEndpoint, ServerSide
from pqbench.platform.errors import VerificationError

#: A TLS 1.3 handshake with tickets takes four flights; more turns than this means a loop.
_MAX_TURNS = 12


@dataclass(frozen=True)
class Handshake:
    """One completed connection pair, with each side's CPU time and the flights' sizes."""

    client: MemoryEndpoint
    server: MemoryEndpoint
    client_cpu_ns: int
    server_cpu_ns: int
    #: Bytes per turn that wrote any: (sent by the client?, bytes), in order.
    flights: tuple[tuple[bool, int], ...]


def _turn(side: MemoryEndpoint, incoming: bytes, done: bool, *,
          reads_on: bool) -> tuple[bool, bytes]:
    """One side's turn: take the peer's flight, advance the handshake until it is done (then,
    with `reads_on`, read what still arrives: the client's session tickets), and collect
    what the side wrote. Returns (done, outgoing)."""
    if incoming:
        side.feed(incoming)
        if done and reads_on:
            side.after_handshake()
    if not done:
        done = side.step()
    return done, side.pending()


def handshake(client_side: ClientSide, server_side: ServerSide,
              session: object | None = None) -> Handshake:
    """One full (or, with `session`, resumed) handshake, until the client holds its tickets."""
    clock = time.thread_time_ns
    flights: list[tuple[bool, int]] = []
    start = clock()
    client = client_side.memory(session)
    client_done = client.step()
    to_server = client.pending()
    mark = clock()
    client_ns = mark - start
    server = server_side.memory()
    server_ns = 0
    server_done = False
    to_client = b""
    flights.append((True, len(to_server)))
    for _ in range(_MAX_TURNS):
        server_done, to_client = _turn(server, to_server, server_done, reads_on=False)
        now = clock()
        server_ns, mark = server_ns + now - mark, now
        if to_client:
            flights.append((False, len(to_client)))
        client_done, to_server = _turn(client, to_client, client_done, reads_on=True)
        now = clock()
        client_ns, mark = client_ns + now - mark, now
        if to_server:
            flights.append((True, len(to_server)))
        if client_done and server_done and not to_server:
            start = clock()
            client.close()
            client_ns += clock() - start
            return Handshake(client, server, client_ns, server_ns, tuple(flights))
    raise VerificationError("the handshake did not complete in "
                            f"{_MAX_TURNS} exchanges of flights")


@dataclass(frozen=True)
class Round:
    """One timed round: handshakes completed, wall time, and each side's CPU time."""

    handshakes: int
    elapsed_ns: int
    client_cpu_ns: int
    server_cpu_ns: int


def run_rounds(client_side: ClientSide, server_side: ServerSide, *, resumed: bool,
               rounds: int, round_seconds: float, warmup: float,
               on_round: Callable[[int], None] | None = None) -> list[Round]:
    """Time full (or resumed) handshakes for `rounds` rounds of `round_seconds` each.

    A resumed run starts from one full handshake's session and then always resumes the
    newest session (as a browser does with fresh tickets); a handshake that does not resume
    stops the run with a VerificationError rather than being counted as resumed.
    """
    session = handshake(client_side, server_side).client.session() if resumed else None

    def one() -> Handshake:
        nonlocal session
        done = handshake(client_side, server_side, session)
        if resumed:
            if not done.client.resumed():
                raise VerificationError("a handshake that should have resumed did not")
            session = done.client.session()
        return done

    wall = time.perf_counter_ns
    end = wall() + int(warmup * 1e9)
    while wall() < end:
        one()
    results = []
    budget = max(int(round_seconds * 1e9), 1)
    for index in range(rounds):
        count = client_ns = server_ns = 0
        start = now = wall()
        while now - start < budget:
            done = one()
            count += 1
            client_ns += done.client_cpu_ns
            server_ns += done.server_cpu_ns
            now = wall()
        results.append(Round(count, now - start, client_ns, server_ns))
        if on_round is not None:
            on_round(index)
    return results
