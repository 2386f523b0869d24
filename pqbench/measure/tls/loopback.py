"""Handshakes between two processes over 127.0.0.1: what a connection costs end to end.

The server runs in a process of its own (started with `spawn`, so it shares nothing with
the client but the kernel), serving one cell at a time: accept, handshake, session tickets,
close_notify, close. The client connects, handshakes, reads until the server closes, and
closes; the next connection starts only then, as `openssl s_time -new` does. TCP_NODELAY
on both ends keeps Nagle's algorithm from holding back a flight's last segment. Each side
reads its own thread's CPU clock around its connections, so the CPU split includes the
kernel's TCP work; the wall clock of the client bounds each round.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import selectors
import signal
import socket
import struct
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from pqbench.measure.tls.base import ClientSide, ServerSide
from pqbench.measure.tls.catalog import Cell
from pqbench.measure.tls.certs import Credentials
from pqbench.measure.tls.inprocess import Round
from pqbench.platform.errors import NotOfferedError, PqbenchError, VerificationError

HOST = "127.0.0.1"
#: A peer that stops answering fails the connection after this long instead of hanging.
IO_TIMEOUT_SECONDS = 30
#: Seconds to wait for the server process to start and answer a command.
CONTROL_TIMEOUT_SECONDS = 120


def _tune(sock: socket.socket) -> None:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    # SO_RCVTIMEO/SO_SNDTIMEO keep the socket blocking (as pyOpenSSL needs) yet bounded.
    timeout = struct.pack("ll", IO_TIMEOUT_SECONDS, 0)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeout)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeout)


class _Serving:
    """The server process's state: the cell's context, its listener and its tallies."""

    def __init__(self, implementation: str) -> None:
        from pqbench.measure.tls.registry import by_name

        self.implementation = by_name(implementation)
        self.side: ServerSide | None = None
        self.listener: socket.socket | None = None
        self.count = 0
        self.cpu_ns = 0
        self.error: str | None = None

    def start(self, cell: Cell, credentials: Credentials) -> int:
        self.stop()
        self.side = self.implementation.server(cell, credentials)
        self.listener = socket.create_server((HOST, 0), backlog=128)
        return int(self.listener.getsockname()[1])

    def stop(self) -> None:
        if self.listener is not None:
            self.listener.close()
        self.listener, self.side = None, None

    def accept(self) -> None:
        assert self.listener is not None and self.side is not None
        start = time.thread_time_ns()
        connection, _ = self.listener.accept()
        try:
            _tune(connection)
            self.side.serve(connection)
        except (PqbenchError, OSError) as exc:
            self.error = self.error or str(exc)
        finally:
            connection.close()
        self.cpu_ns += time.thread_time_ns() - start
        self.count += 1

    def tallies(self) -> tuple[int, int, str | None]:
        found = (self.count, self.cpu_ns, self.error)
        self.count, self.cpu_ns, self.error = 0, 0, None
        return found


def _serve(pipe: Connection, implementation: str) -> None:
    """The server process: commands on the pipe, connections on the listener."""
    # Ctrl-C at a terminal reaches the whole process group: the client side stops the run
    # and closes this server through the pipe, so the server itself ignores it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    state = _Serving(implementation)
    selector = selectors.DefaultSelector()
    selector.register(pipe, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is not pipe:
                state.accept()
                continue
            try:
                command, *args = pipe.recv()
            except EOFError:  # the client process is gone (killed): nothing left to serve
                command, args = "exit", []
            if command == "exit":
                state.stop()
                return
            if command == "tallies":
                pipe.send(("tallies", *state.tallies()))
                continue
            if state.listener is not None:
                selector.unregister(state.listener)
            try:
                port = state.start(*args)
            except NotOfferedError as exc:
                pipe.send(("not offered", str(exc)))
                continue
            except (PqbenchError, OSError) as exc:
                pipe.send(("error", str(exc)))
                continue
            assert state.listener is not None
            selector.register(state.listener, selectors.EVENT_READ)
            pipe.send(("ready", port))


class ServerProcess:
    """A TLS server of one implementation in its own process; a context manager."""

    def __init__(self, implementation: str) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipe, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, implementation),
                                        daemon=True, name=f"pqbench tls server ({implementation})")
        self._process.start()
        child.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _ask(self, *message: Any) -> tuple[Any, ...]:
        self._pipe.send(message)
        if not self._pipe.poll(CONTROL_TIMEOUT_SECONDS):
            raise VerificationError("the TLS server process did not answer")
        try:
            reply: tuple[Any, ...] = self._pipe.recv()
        except EOFError:
            raise VerificationError("the TLS server process ended unexpectedly") from None
        return reply

    def serve(self, cell: Cell, credentials: Credentials) -> int:
        """Serve `cell` from now on; the port to connect to."""
        status, detail = self._ask("serve", cell, credentials)
        if status == "not offered":
            raise NotOfferedError(detail)
        if status != "ready":
            raise VerificationError(f"the TLS server could not start: {detail}")
        return int(detail)

    def tallies(self) -> tuple[int, int]:
        """Connections served and the server's CPU time since the last call."""
        _, count, cpu_ns, error = self._ask("tallies")
        if error:
            raise VerificationError(f"the TLS server failed a connection: {error}")
        return int(count), int(cpu_ns)

    def close(self) -> None:
        if self._process.is_alive():
            with contextlib.suppress(OSError):
                self._pipe.send(("exit",))
            self._process.join(5)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(5)
        self._pipe.close()


def connect(client: ClientSide, port: int, session: object | None) -> tuple[object | None, bool]:
    """One connection: TCP connect, handshake, read until the server closes, close."""
    sock = socket.create_connection((HOST, port))
    try:
        _tune(sock)
        return client.connect(sock, session)
    except OSError as exc:
        raise VerificationError(f"the loopback connection failed: {exc}") from None
    finally:
        sock.close()


def run_rounds(client: ClientSide, server: ServerProcess, port: int, *, resumed: bool,
               rounds: int, round_seconds: float, warmup: float,
               on_round: Callable[[int], None] | None = None) -> list[Round]:
    """Time full (or resumed) loopback handshakes, as inprocess.run_rounds does in one process."""
    session: object | None = None
    if resumed:
        session, _ = connect(client, port, None)

    def one() -> int:
        nonlocal session
        start = time.thread_time_ns()
        new_session, reused = connect(client, port, session if resumed else None)
        if resumed:
            if not reused:
                raise VerificationError("a handshake that should have resumed did not")
            session = new_session
        return time.thread_time_ns() - start

    wall = time.perf_counter_ns
    end = wall() + int(warmup * 1e9)
    while wall() < end:
        one()
    server.tallies()
    results = []
    budget = max(int(round_seconds * 1e9), 1)
    for index in range(rounds):
        count = client_ns = 0
        start = now = wall()
        while now - start < budget:
            client_ns += one()
            count += 1
            now = wall()
        served, server_ns = server.tallies()
        if served != count:
            raise VerificationError(f"the server counted {served} connections, the client "
                                    f"{count}")
        results.append(Round(count, now - start, client_ns, server_ns))
        if on_round is not None:
            on_round(index)
    return results
