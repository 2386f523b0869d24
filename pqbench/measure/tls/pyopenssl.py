"""pyOpenSSL on the OpenSSL that pyca/cryptography bundles.

pyOpenSSL has no call to choose key-exchange groups or watch the handshake, so this module
reaches the same OpenSSL through cryptography's binding (`OpenSSL._util.lib`, the binding
pyOpenSSL itself uses): `SSL_CTX_set1_curves_list` takes group names, including the ML-KEM
ones; `SSL_CTX_set_msg_callback` reports each record and handshake message;
`SSL_session_reused` says whether a connection resumed. Private keys are loaded from PEM:
`PKey.from_cryptography_key` refuses ML-DSA keys, OpenSSL's PEM reader does not.
"""

from __future__ import annotations

import socket
from typing import Any

from cryptography import x509
from cryptography.hazmat.backends.openssl.backend import backend
from OpenSSL import SSL, crypto
from OpenSSL._util import ffi, lib

from pqbench.measure.tls.base import ClientSide, ServerSide, SignallingEndpoint, TlsImplementation
from pqbench.measure.tls.catalog import Cell
from pqbench.measure.tls.certs import SERVER_NAME, Credentials
from pqbench.measure.tls.wire import Transcript
from pqbench.platform.errors import NotOfferedError, VerificationError

_READ_SIZE = 65536


def _library() -> str:
    return " ".join(backend.openssl_version_text().split()[:2])


class _Recorder:
    """The message callback of one SSL_CTX, switched on only while a handshake is verified."""

    def __init__(self, context: SSL.Context) -> None:
        self._context = context
        self.transcript: Transcript | None = None
        # Kept on the instance: OpenSSL holds only the C pointer.
        self._callback = ffi.callback("void(int, int, int, void *, size_t, SSL *, void *)",
                                      self._on_message)

    def _on_message(self, write_p: int, _version: int, content_type: int, buf: Any,
                    length: int, _ssl: Any, _arg: Any) -> None:
        if self.transcript is not None:
            self.transcript.add(bool(write_p), content_type, bytes(ffi.buffer(buf, length)))

    def record(self, transcript: Transcript | None) -> None:
        self.transcript = transcript
        lib.SSL_CTX_set_msg_callback(self._context._context,
                                     self._callback if transcript is not None else ffi.NULL)


def _context(cell: Cell) -> SSL.Context:
    context = SSL.Context(SSL.TLS_METHOD)
    context.set_min_proto_version(SSL.TLS1_3_VERSION)
    context.set_max_proto_version(SSL.TLS1_3_VERSION)
    raw = context._context
    if lib.SSL_CTX_set1_curves_list(raw, cell.group.name.encode()) != 1:
        lib.ERR_clear_error()  # or a later pyOpenSSL call reports this error as its own
        raise NotOfferedError(f"{_library()} does not know the group {cell.group.name}")
    return context


_HANDSHAKE = "the pyOpenSSL handshake"


def _handshake_error(exc: Exception) -> VerificationError:
    return VerificationError(f"{_HANDSHAKE} failed: {exc}")


class _Memory(SignallingEndpoint):
    want_read, closed, failure, library = (SSL.WantReadError, SSL.ZeroReturnError, SSL.Error,
                                           _HANDSHAKE)

    def __init__(self, context: SSL.Context, client: bool, session: Any = None) -> None:
        self.connection = SSL.Connection(context, None)
        if client:
            self.connection.set_connect_state()
            self.connection.set_tlsext_host_name(SERVER_NAME.encode())
            if session is not None:
                self.connection.set_session(session)
        else:
            self.connection.set_accept_state()

    def _handshake(self) -> None:
        self.connection.do_handshake()

    def _read(self) -> None:
        self.connection.recv(_READ_SIZE)

    def pending(self) -> bytes:
        chunks = []
        while True:
            try:
                chunks.append(self.connection.bio_read(_READ_SIZE))
            except SSL.WantReadError:
                return b"".join(chunks)

    def feed(self, data: bytes) -> None:
        self.connection.bio_write(data)

    def close(self) -> None:
        # As `openssl s_time` does: a quiet shutdown keeps the session resumable.
        self.connection.set_shutdown(SSL.SENT_SHUTDOWN | SSL.RECEIVED_SHUTDOWN)

    def session(self) -> object | None:
        return self.connection.get_session()

    def resumed(self) -> bool:
        return bool(lib.SSL_session_reused(self.connection._ssl))

    def group_name(self) -> str | None:
        return self.connection.get_group_name()


class _Client(ClientSide):
    context: SSL.Context
    endpoint = _Memory

    def __init__(self, cell: Cell, credentials: Credentials) -> None:
        self.context = _context(cell)
        self.context.set_verify(SSL.VERIFY_PEER)
        try:
            root = crypto.load_certificate(crypto.FILETYPE_PEM, credentials.root_pem)
        except crypto.Error as exc:
            raise NotOfferedError(f"{_library()} cannot read a {cell.certificate.name} "
                                  f"certificate: {exc}") from None
        store = self.context.get_cert_store()
        if store is None:
            raise VerificationError("pyOpenSSL gave no certificate store to trust the root in")
        store.add_cert(root)
        # Every connection checks the server name against the certificate (RFC 6125).
        param = lib.SSL_CTX_get0_param(self.context._context)
        if lib.X509_VERIFY_PARAM_set1_host(param, SERVER_NAME.encode(), len(SERVER_NAME)) != 1:
            raise VerificationError("OpenSSL refused the server name to verify")
        self.recorder = _Recorder(self.context)

    def connect(self, sock: socket.socket, session: object | None) -> tuple[object | None, bool]:
        connection = SSL.Connection(self.context, sock)
        connection.set_connect_state()
        connection.set_tlsext_host_name(SERVER_NAME.encode())
        if session is not None:
            connection.set_session(session)  # type: ignore[arg-type]
        try:
            connection.do_handshake()
            while True:  # session tickets, then the server's close_notify
                connection.recv(_READ_SIZE)
        except (SSL.ZeroReturnError, SSL.SysCallError):
            pass  # the server closed: everything it sent has been read
        except SSL.Error as exc:
            raise _handshake_error(exc) from None
        connection.set_shutdown(SSL.SENT_SHUTDOWN | SSL.RECEIVED_SHUTDOWN)
        reused = bool(lib.SSL_session_reused(connection._ssl))
        return connection.get_session(), reused


class _Server(ServerSide):
    context: SSL.Context
    endpoint = _Memory

    def __init__(self, cell: Cell, credentials: Credentials) -> None:
        self.context = _context(cell)
        try:
            leaf, *intermediates = (x509.load_pem_x509_certificate(pem)
                                    for pem in credentials.chain_pem)
            self.context.use_certificate(leaf)
            for certificate in intermediates:
                self.context.add_extra_chain_cert(certificate)
            # Context.use_privatekey takes a cryptography key (PKey.from_cryptography_key
            # refuses ML-DSA) or a PKey (deprecated): hand OpenSSL the PEM-loaded key itself.
            key = crypto.load_privatekey(crypto.FILETYPE_PEM, credentials.key_pem)
            if lib.SSL_CTX_use_PrivateKey(self.context._context, key._pkey) != 1:
                raise crypto.Error([("", "", "SSL_CTX_use_PrivateKey refused the key")])
            self.context.check_privatekey()
        except (crypto.Error, SSL.Error, ValueError) as exc:
            lib.ERR_clear_error()
            raise NotOfferedError(f"{_library()} cannot serve a {cell.certificate.name} "
                                  f"certificate: {exc}") from None
        self.recorder = _Recorder(self.context)

    def serve(self, sock: socket.socket) -> None:
        connection = SSL.Connection(self.context, sock)
        connection.set_accept_state()
        try:
            connection.do_handshake()  # writes the session tickets when it completes
            connection.shutdown()  # close_notify, without waiting for the client's
        except SSL.Error as exc:
            raise _handshake_error(exc) from None


class PyOpenSSL(TlsImplementation):
    name = "pyopenssl"
    description = "pyOpenSSL on the OpenSSL bundled with pyca/cryptography"
    explain_library = "cryptography"
    client_side, server_side = _Client, _Server

    def unavailable_reason(self) -> str | None:
        return None  # a dependency of pqbench; importing this module proved it is there

    def library(self) -> str:
        return _library()

    def versions(self) -> dict[str, str]:
        from OpenSSL import __version__

        return {"pyopenssl": __version__, "pyopenssl_openssl": _library()}

    def offers(self, cell: Cell) -> str | None:
        probe = SSL.Context(SSL.TLS_METHOD)
        if lib.SSL_CTX_set1_curves_list(probe._context,
                                        cell.group.name.encode()) != 1:
            lib.ERR_clear_error()
            return f"{_library()} does not know the group {cell.group.name}"
        return None
