"""Python's own `ssl` module, on the OpenSSL the interpreter links (the system's, usually).

What it can be asked for depends on the Python version: before 3.15 the only way to choose
a key-exchange group is `SSLContext.set_ecdh_curve`, which takes one elliptic-curve name
(so X25519 and P-256, not the ML-KEM groups); `SSLContext.set_groups` (Python 3.15) takes
any group the library knows. ML-DSA certificates need OpenSSL 3.5. The handshake messages
are watched through `SSLContext._msg_callback`, CPython's hook over OpenSSL's message
callback (private, but there since Python 3.8 and used by CPython's own tests).
"""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import sys
import tempfile
from typing import Any

from pqbench.measure.tls.base import ClientSide, ServerSide, SignallingEndpoint, TlsImplementation
from pqbench.measure.tls.catalog import Cell
from pqbench.measure.tls.certs import SERVER_NAME, Credentials
from pqbench.measure.tls.wire import Transcript
from pqbench.platform.errors import NotOfferedError, VerificationError

_READ_SIZE = 65536
#: The curve names set_ecdh_curve accepts for the groups it can choose.
_CURVE_NAMES = {"X25519": "X25519", "P-256": "prime256v1"}
_OPENSSL_WITH_MLDSA = _OPENSSL_WITH_MLKEM = (3, 5)


def _library() -> str:
    return " ".join(ssl.OPENSSL_VERSION.split()[:2])


def _python() -> str:
    return f"Python {sys.version_info.major}.{sys.version_info.minor}"


def _group_reason(cell: Cell) -> str | None:
    if hasattr(ssl.SSLContext, "set_groups") or cell.group.name in _CURVE_NAMES:
        return None
    reason = (f"{_python()}'s ssl module chooses groups only through set_ecdh_curve, which "
              "takes one elliptic curve (SSLContext.set_groups arrives in Python 3.15)")
    if cell.group.post_quantum and ssl.OPENSSL_VERSION_INFO[:2] < _OPENSSL_WITH_MLKEM:
        reason += f", and the {_library()} it links has no ML-KEM (OpenSSL 3.5 added it)"
    return reason


def _certificate_reason(cell: Cell) -> str | None:
    if cell.certificate.post_quantum and ssl.OPENSSL_VERSION_INFO[:2] < _OPENSSL_WITH_MLDSA:
        return f"{_library()}, which {_python()}'s ssl module links, has no ML-DSA " \
               "(OpenSSL 3.5 added it)"
    return None


def _context(cell: Cell, purpose: int) -> ssl.SSLContext:
    context = ssl.SSLContext(purpose)
    context.minimum_version = context.maximum_version = ssl.TLSVersion.TLSv1_3
    try:
        if hasattr(context, "set_groups"):
            context.set_groups(cell.group.name)
        else:
            context.set_ecdh_curve(_CURVE_NAMES[cell.group.name])
    except (ssl.SSLError, ValueError, KeyError) as exc:
        raise NotOfferedError(f"{_library()} through {_python()}'s ssl module refuses "
                              f"the group {cell.group.name}: {exc}") from None
    return context


_HANDSHAKE = "the ssl module's handshake"


def _handshake_error(exc: Exception) -> VerificationError:
    return VerificationError(f"{_HANDSHAKE} failed: {exc}")


class _Recorder:
    def __init__(self, context: ssl.SSLContext) -> None:
        self.context = context
        self.transcript: Transcript | None = None

    def _on_message(self, _conn: Any, direction: str, _version: Any, content_type: Any,
                    _msg_type: Any, data: bytes) -> None:
        if self.transcript is not None:
            self.transcript.add(direction == "write", int(content_type), bytes(data))

    def record(self, transcript: Transcript | None) -> None:
        self.transcript = transcript
        self.context._msg_callback = (  # type: ignore[attr-defined]
            self._on_message if transcript is not None else None)


class _Memory(SignallingEndpoint):
    want_read, closed, failure, library = (ssl.SSLWantReadError, ssl.SSLZeroReturnError,
                                           ssl.SSLError, _HANDSHAKE)

    def __init__(self, context: ssl.SSLContext, client: bool, session: Any = None) -> None:
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.connection = context.wrap_bio(
            self.incoming, self.outgoing, server_side=not client,
            server_hostname=SERVER_NAME if client else None, session=session)

    def _handshake(self) -> None:
        self.connection.do_handshake()

    def _read(self) -> None:
        self.connection.read(_READ_SIZE)

    def pending(self) -> bytes:
        return self.outgoing.read()

    def feed(self, data: bytes) -> None:
        self.incoming.write(data)

    def close(self) -> None:
        pass  # CPython keeps a session resumable when its connection is freed

    def session(self) -> object | None:
        return self.connection.session

    def resumed(self) -> bool:
        return self.connection.session_reused


class _Client(ClientSide):
    context: ssl.SSLContext
    endpoint = _Memory

    def __init__(self, cell: Cell, credentials: Credentials) -> None:
        self.context = _context(cell, ssl.PROTOCOL_TLS_CLIENT)  # verifies chain and name
        try:
            self.context.load_verify_locations(cadata=credentials.root_pem.decode())
        except ssl.SSLError as exc:
            raise NotOfferedError(f"{_library()} cannot read a {cell.certificate.name} "
                                  f"certificate: {exc}") from None
        self.recorder = _Recorder(self.context)

    def connect(self, sock: socket.socket, session: object | None) -> tuple[object | None, bool]:
        try:
            connection = self.context.wrap_socket(sock, server_hostname=SERVER_NAME,
                                                  session=session)  # type: ignore[arg-type]
            while connection.recv(_READ_SIZE):  # session tickets, then close_notify
                pass
        except (ssl.SSLEOFError, ConnectionResetError):
            pass  # the server closed: everything it sent has been read
        except ssl.SSLError as exc:
            raise _handshake_error(exc) from None
        return connection.session, bool(connection.session_reused)


class _Server(ServerSide):
    context: ssl.SSLContext
    endpoint = _Memory

    def __init__(self, cell: Cell, credentials: Credentials) -> None:
        self.context = _context(cell, ssl.PROTOCOL_TLS_SERVER)
        # load_cert_chain reads files only: a private directory that lives for this call.
        with tempfile.TemporaryDirectory(prefix="pqbench-tls-") as directory:
            chain, key = os.path.join(directory, "chain.pem"), os.path.join(directory, "key.pem")
            for path, data in ((chain, credentials.chain_bytes), (key, credentials.key_pem)):
                with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
                    f.write(data)
            try:
                self.context.load_cert_chain(chain, key)
            except ssl.SSLError as exc:
                raise NotOfferedError(f"{_library()} cannot serve a {cell.certificate.name} "
                                      f"certificate: {exc}") from None
        self.recorder = _Recorder(self.context)

    def serve(self, sock: socket.socket) -> None:
        try:
            connection = self.context.wrap_socket(sock, server_side=True)
        except ssl.SSLError as exc:
            raise _handshake_error(exc) from None
        # unwrap() sends close_notify, then waits for the client's; a non-blocking socket
        # makes that wait end at once, as pyOpenSSL's single SSL_shutdown does.
        connection.setblocking(False)
        with contextlib.suppress(ssl.SSLError, OSError):
            connection.unwrap()


class PythonSsl(TlsImplementation):
    name = "python-ssl"
    description = "Python's ssl module on the OpenSSL the interpreter links"
    explain_library = "libcrypto"
    client_side, server_side = _Client, _Server

    def unavailable_reason(self) -> str | None:
        if not ssl.HAS_TLSv1_3:
            return f"{_library()} through {_python()}'s ssl module has no TLS 1.3"
        return None

    def library(self) -> str:
        return _library()

    def versions(self) -> dict[str, str]:
        return {"python": sys.version.split()[0], "ssl_openssl": ssl.OPENSSL_VERSION}

    def offers(self, cell: Cell) -> str | None:
        return _group_reason(cell) or _certificate_reason(cell)
