"""What a TLS implementation offers the handshake drivers.

An implementation builds one client side and one server side per grid cell (contexts with
the group, the certificate chain, the trust anchor and server-name check), before any clock
starts. Each side then makes connections over memory buffers (the CPU-only figure in one
process) or over a connected socket (the loopback figure between two processes). Support is
asked, not assumed: `offers` says why a cell cannot run, and building a side raises
NotOfferedError when the library refuses what `offers` let through.
"""

from __future__ import annotations

import socket
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Protocol

from pqbench.measure.tls.catalog import Cell
from pqbench.measure.tls.certs import Credentials
from pqbench.measure.tls.wire import Transcript
from pqbench.platform.errors import VerificationError


class MemoryEndpoint(ABC):
    """One side of one connection whose records go through memory buffers."""

    @abstractmethod
    def __init__(self, context: Any, client: bool, session: object | None = None) -> None:
        """A connection from a side's library context, in its role (a client resumes
        `session` if given)."""

    @abstractmethod
    def step(self) -> bool:
        """Advance the handshake with the bytes fed so far; True once it is complete."""

    @abstractmethod
    def pending(self) -> bytes:
        """The records this side has written and not yet handed over."""

    @abstractmethod
    def feed(self, data: bytes) -> None:
        """Records from the peer."""

    @abstractmethod
    def after_handshake(self) -> None:
        """Read what arrives after the handshake (a client's session tickets)."""

    @abstractmethod
    def close(self) -> None:
        """End the connection as a client does that keeps its session: OpenSSL marks the
        session of a connection freed without a shutdown as not resumable."""

    def session(self) -> object | None:
        """A client's session for resumption (TLS 1.3 ticket), once it has one."""
        return None

    @abstractmethod
    def resumed(self) -> bool:
        """Whether this connection resumed a session."""

    def group_name(self) -> str | None:
        """The negotiated group as the library's API names it, where it has such an API."""
        return None


class SignallingEndpoint(MemoryEndpoint):
    """An endpoint over a library that says "give me the peer's records first" by raising
    an exception (pyOpenSSL, Python's ssl module): one handshake call and one read, each
    asked again once the peer's flight has been fed."""

    #: The library's exceptions: more records needed, the peer closed, any other failure.
    want_read: ClassVar[type[Exception]]
    closed: ClassVar[type[Exception]]
    failure: ClassVar[type[Exception]]
    #: Who failed, in the message: "the pyOpenSSL handshake failed: ...".
    library: ClassVar[str]

    @abstractmethod
    def _handshake(self) -> None:
        """One handshake call of the library."""

    @abstractmethod
    def _read(self) -> None:
        """One read of what arrives after the handshake."""

    def failed(self, exc: Exception) -> VerificationError:
        return VerificationError(f"{self.library} failed: {exc}")

    def step(self) -> bool:
        try:
            self._handshake()
        except self.want_read:
            return False
        except self.failure as exc:
            raise self.failed(exc) from None
        return True

    def after_handshake(self) -> None:
        try:
            self._read()
        except (self.want_read, self.closed):
            pass
        except self.failure as exc:
            raise self.failed(exc) from None


class Recorder(Protocol):
    """What watches a context's handshakes: the library's message callback."""

    def record(self, transcript: Transcript | None) -> None: ...


class Side(ABC):
    """One role's context for one cell, made once; connections are made from it."""

    #: The library's context for the cell, made when the side is built.
    context: Any
    #: The context's message callback, set by the library's side when it is built.
    recorder: Recorder
    #: The library's connection over memory buffers, made from `context`.
    endpoint: ClassVar[type[MemoryEndpoint]]
    #: The side's role: True for the client, which may resume a session.
    client: ClassVar[bool]

    @abstractmethod
    def __init__(self, cell: Cell, credentials: Credentials) -> None:
        """Build the context for `cell` (raises NotOfferedError when the library refuses)."""

    def memory(self, session: object | None = None) -> MemoryEndpoint:
        """A new connection over memory buffers (a client resumes `session` if given)."""
        return self.endpoint(self.context, self.client, session)

    def record(self, transcript: Transcript | None) -> None:
        """Report every record and handshake message of later connections to `transcript`
        (None: stop; the callback costs time, so it is off while the clock runs)."""
        self.recorder.record(transcript)


class ClientSide(Side):
    client = True

    @abstractmethod
    def connect(self, sock: socket.socket, session: object | None) -> tuple[object | None, bool]:
        """Handshake over a connected socket, read until the server closes; returns the
        session to resume next and whether this connection resumed."""


class ServerSide(Side):
    client = False

    @abstractmethod
    def serve(self, sock: socket.socket) -> None:
        """Handshake over an accepted socket, send the session tickets and close_notify."""


class TlsImplementation(ABC):
    """A TLS library pqbench can drive."""

    name: str
    description: str
    #: The library the rows run on, in `explain`'s terms (cryptography, libcrypto).
    explain_library: str
    #: The library's two sides, built per cell by `client` and `server`.
    client_side: type[ClientSide]
    server_side: type[ServerSide]

    @abstractmethod
    def unavailable_reason(self) -> str | None:
        """Why this implementation cannot run here at all, or None."""

    @abstractmethod
    def library(self) -> str:
        """The TLS library and version behind it, e.g. "OpenSSL 4.0.3"."""

    def versions(self) -> dict[str, str]:
        """Versions for the run's fingerprint."""
        return {}

    @abstractmethod
    def offers(self, cell: Cell) -> str | None:
        """Why this implementation cannot run the cell, or None when it can."""

    def client(self, cell: Cell, credentials: Credentials) -> ClientSide:
        """The client context: the cell's group only, trusting the credentials' root."""
        return self.client_side(cell, credentials)

    def server(self, cell: Cell, credentials: Credentials) -> ServerSide:
        """The server context: the cell's group only, serving the credentials' chain."""
        return self.server_side(cell, credentials)
