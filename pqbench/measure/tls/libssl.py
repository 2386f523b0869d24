"""The operating system's libssl, called directly through ctypes: the library `openssl
s_server` and `s_time` use, with no Python TLS binding in between.

The ML-KEM groups and ML-DSA certificates arrived in OpenSSL 3.5; an older system libssl
still runs the classical cells (which makes it the reference for `openssl s_time` on the
same library, see benchmarks/tls_vs_openssl.py) and says "not offered" for the rest. The
calls mirror what s_time's client and s_server do: memory BIOs or a socket fd, SNI and a
verified chain, the session of the last connection for resumption, and a quiet shutdown
(SSL_set_shutdown) so the session stays resumable. Macros are called through their
SSL_CTX_ctrl/SSL_ctrl commands (values from OpenSSL's ssl.h, stable since 1.1.1).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import socket
from ctypes import (
    CFUNCTYPE,
    c_char_p,
    c_int,
    c_long,
    c_size_t,
    c_ulong,
    c_void_p,
)
from typing import Any

from pqbench.measure.tls.base import ClientSide, MemoryEndpoint, ServerSide, TlsImplementation
from pqbench.measure.tls.catalog import Cell
from pqbench.measure.tls.certs import SERVER_NAME, Credentials
from pqbench.measure.tls.wire import Transcript
from pqbench.platform.errors import NotOfferedError, VerificationError

# ssl.h, tls1.h, bio.h, prov_ssl.h
_SSL_CTRL_EXTRA_CHAIN_CERT = 14
_SSL_CTRL_SET_TLSEXT_HOSTNAME = 55
_SSL_CTRL_SET_GROUPS_LIST = 92
_SSL_CTRL_SET_MIN_PROTO_VERSION = 123
_SSL_CTRL_SET_MAX_PROTO_VERSION = 124
_TLSEXT_NAMETYPE_HOST_NAME = 0
_TLS1_3_VERSION = 0x0304
_SSL_VERIFY_PEER = 1
_SSL_ERROR_WANT_READ = 2
_SSL_ERROR_SYSCALL = 5
_SSL_ERROR_ZERO_RETURN = 6
_SSL_QUIET_SHUTDOWN = 1 | 2  # SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN
_BIO_CTRL_PENDING = 10
_OPENSSL_WITH_PQ = 0x30500000  # OpenSSL 3.5.0: ML-KEM groups, ML-DSA keys
_OPENSSL_MINIMUM = 0x30000000

_MSG_CALLBACK = CFUNCTYPE(None, c_int, c_int, c_int, c_void_p, c_size_t, c_void_p, c_void_p)
_READ_SIZE = 65536

_SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "OpenSSL_version_num": (c_ulong, []),
    "OpenSSL_version": (c_char_p, [c_int]),
    "TLS_method": (c_void_p, []),
    "SSL_CTX_new": (c_void_p, [c_void_p]),
    "SSL_CTX_free": (None, [c_void_p]),
    "SSL_CTX_ctrl": (c_long, [c_void_p, c_int, c_long, c_void_p]),
    "SSL_CTX_use_certificate": (c_int, [c_void_p, c_void_p]),
    "SSL_CTX_use_PrivateKey": (c_int, [c_void_p, c_void_p]),
    "SSL_CTX_check_private_key": (c_int, [c_void_p]),
    "SSL_CTX_get_cert_store": (c_void_p, [c_void_p]),
    "SSL_CTX_set_verify": (None, [c_void_p, c_int, c_void_p]),
    "SSL_CTX_get0_param": (c_void_p, [c_void_p]),
    "SSL_CTX_set_msg_callback": (None, [c_void_p, c_void_p]),
    "X509_STORE_add_cert": (c_int, [c_void_p, c_void_p]),
    "X509_VERIFY_PARAM_set1_host": (c_int, [c_void_p, c_char_p, c_size_t]),
    "X509_free": (None, [c_void_p]),
    "EVP_PKEY_free": (None, [c_void_p]),
    "BIO_new_mem_buf": (c_void_p, [c_char_p, c_int]),
    "BIO_s_mem": (c_void_p, []),
    "BIO_new": (c_void_p, [c_void_p]),
    "BIO_free": (c_int, [c_void_p]),
    "BIO_read": (c_int, [c_void_p, c_void_p, c_int]),
    "BIO_write": (c_int, [c_void_p, c_char_p, c_int]),
    "BIO_ctrl": (c_long, [c_void_p, c_int, c_long, c_void_p]),
    "PEM_read_bio_X509": (c_void_p, [c_void_p, c_void_p, c_void_p, c_void_p]),
    "PEM_read_bio_PrivateKey": (c_void_p, [c_void_p, c_void_p, c_void_p, c_void_p]),
    "SSL_new": (c_void_p, [c_void_p]),
    "SSL_free": (None, [c_void_p]),
    "SSL_ctrl": (c_long, [c_void_p, c_int, c_long, c_void_p]),
    "SSL_set_bio": (None, [c_void_p, c_void_p, c_void_p]),
    "SSL_set_fd": (c_int, [c_void_p, c_int]),
    "SSL_set_connect_state": (None, [c_void_p]),
    "SSL_set_accept_state": (None, [c_void_p]),
    "SSL_do_handshake": (c_int, [c_void_p]),
    "SSL_read": (c_int, [c_void_p, c_void_p, c_int]),
    "SSL_get_error": (c_int, [c_void_p, c_int]),
    "SSL_shutdown": (c_int, [c_void_p]),
    "SSL_set_shutdown": (None, [c_void_p, c_int]),
    "SSL_session_reused": (c_int, [c_void_p]),
    "SSL_get1_session": (c_void_p, [c_void_p]),
    "SSL_set_session": (c_int, [c_void_p, c_void_p]),
    "SSL_SESSION_free": (None, [c_void_p]),
    "ERR_get_error": (c_ulong, []),
    "ERR_error_string_n": (None, [c_ulong, c_char_p, c_size_t]),
    "ERR_clear_error": (None, []),
}


@functools.cache
def _load() -> Any:
    """The system libssl with typed functions, or an OSError saying why not."""
    name = ctypes.util.find_library("ssl")
    if not name:
        raise OSError("no system libssl found")
    lib = ctypes.CDLL(name)
    for function, (restype, argtypes) in _SIGNATURES.items():
        try:
            bound = getattr(lib, function)
        except AttributeError:
            raise OSError(f"{name} lacks {function}") from None
        bound.restype, bound.argtypes = restype, argtypes
    group_name = getattr(lib, "SSL_get0_group_name", None)  # OpenSSL 3.2+
    if group_name is not None:
        group_name.restype, group_name.argtypes = c_char_p, [c_void_p]
    return lib


def _version_text() -> str:
    raw: bytes = _load().OpenSSL_version(0)
    return " ".join(raw.decode().split()[:2])


def _errors(lib: Any) -> str:
    messages = []
    while code := lib.ERR_get_error():
        buffer = ctypes.create_string_buffer(256)
        lib.ERR_error_string_n(code, buffer, len(buffer))
        messages.append(buffer.value.decode(errors="replace"))
    return "; ".join(messages) or "no OpenSSL error recorded"


def _pem_objects(lib: Any, pem: bytes, reader: Any) -> list[int]:
    """Every object a PEM blob holds, read by `reader` (PEM_read_bio_X509 ...)."""
    bio = lib.BIO_new_mem_buf(pem, len(pem))
    found = []
    try:
        while pointer := reader(bio, None, None, None):
            found.append(pointer)
    finally:
        lib.BIO_free(bio)
        lib.ERR_clear_error()  # the read past the last object leaves an expected error
    return found


class _Session:
    """An SSL_SESSION reference, freed with the object."""

    def __init__(self, lib: Any, pointer: int) -> None:
        self.lib, self.pointer = lib, pointer

    def __del__(self) -> None:
        self.lib.SSL_SESSION_free(self.pointer)


class _Context:
    """An SSL_CTX for one side of one cell, with its message callback."""

    def __init__(self, cell: Cell) -> None:
        self.lib = lib = _load()
        self.pointer = lib.SSL_CTX_new(lib.TLS_method())
        if not self.pointer:
            raise VerificationError(f"SSL_CTX_new failed: {_errors(lib)}")
        for command in (_SSL_CTRL_SET_MIN_PROTO_VERSION, _SSL_CTRL_SET_MAX_PROTO_VERSION):
            lib.SSL_CTX_ctrl(self.pointer, command, _TLS1_3_VERSION, None)
        if lib.SSL_CTX_ctrl(self.pointer, _SSL_CTRL_SET_GROUPS_LIST, 0,
                            cell.group.name.encode()) != 1:
            lib.ERR_clear_error()
            raise NotOfferedError(f"{_version_text()} does not know the group "
                                  f"{cell.group.name}")
        self.transcript: Transcript | None = None
        self._callback = _MSG_CALLBACK(self._on_message)

    def _on_message(self, write_p: int, _version: int, content_type: int, buf: int,
                    length: int, _ssl: int, _arg: int) -> None:
        if self.transcript is not None:
            self.transcript.add(bool(write_p), content_type, ctypes.string_at(buf, length))

    def record(self, transcript: Transcript | None) -> None:
        self.transcript = transcript
        self.lib.SSL_CTX_set_msg_callback(
            self.pointer, ctypes.cast(self._callback, c_void_p) if transcript else None)

    def __del__(self) -> None:
        if getattr(self, "pointer", None):
            self.lib.SSL_CTX_free(self.pointer)


class _Connection:
    """An SSL object; freed with the Python object."""

    def __init__(self, context: _Context, client: bool, session: _Session | None) -> None:
        self.lib = lib = context.lib
        self.pointer = lib.SSL_new(context.pointer)
        if not self.pointer:
            raise VerificationError(f"SSL_new failed: {_errors(lib)}")
        if client:
            lib.SSL_set_connect_state(self.pointer)
            lib.SSL_ctrl(self.pointer, _SSL_CTRL_SET_TLSEXT_HOSTNAME,
                         _TLSEXT_NAMETYPE_HOST_NAME, SERVER_NAME.encode())
            if session is not None:
                lib.SSL_set_session(self.pointer, session.pointer)
        else:
            lib.SSL_set_accept_state(self.pointer)

    def handshake(self) -> bool:
        result = self.lib.SSL_do_handshake(self.pointer)
        if result == 1:
            return True
        if self.lib.SSL_get_error(self.pointer, result) == _SSL_ERROR_WANT_READ:
            return False
        raise VerificationError(f"the libssl handshake failed: {_errors(self.lib)}")

    def read(self) -> bool:
        """Read application data or post-handshake messages; False once nothing is left."""
        buffer = ctypes.create_string_buffer(_READ_SIZE)
        result = self.lib.SSL_read(self.pointer, buffer, _READ_SIZE)
        if result > 0:
            return True
        error = self.lib.SSL_get_error(self.pointer, result)
        if error in (_SSL_ERROR_WANT_READ, _SSL_ERROR_ZERO_RETURN, _SSL_ERROR_SYSCALL):
            self.lib.ERR_clear_error()
            return False
        raise VerificationError(f"libssl failed reading: {_errors(self.lib)}")

    def session(self) -> _Session | None:
        pointer = self.lib.SSL_get1_session(self.pointer)
        return _Session(self.lib, pointer) if pointer else None

    def resumed(self) -> bool:
        return bool(self.lib.SSL_session_reused(self.pointer))

    def quiet_close(self) -> None:
        self.lib.SSL_set_shutdown(self.pointer, _SSL_QUIET_SHUTDOWN)

    def __del__(self) -> None:
        if getattr(self, "pointer", None):
            self.lib.SSL_free(self.pointer)


class _Memory(MemoryEndpoint):
    def __init__(self, context: _Context, client: bool, session: Any = None) -> None:
        self.connection = _Connection(context, client, session)
        lib = self.lib = context.lib
        self.incoming, self.outgoing = lib.BIO_new(lib.BIO_s_mem()), lib.BIO_new(lib.BIO_s_mem())
        lib.SSL_set_bio(self.connection.pointer, self.incoming, self.outgoing)  # SSL owns them

    def step(self) -> bool:
        return self.connection.handshake()

    def pending(self) -> bytes:
        size = self.lib.BIO_ctrl(self.outgoing, _BIO_CTRL_PENDING, 0, None)
        if size <= 0:
            return b""
        buffer = ctypes.create_string_buffer(size)
        got = self.lib.BIO_read(self.outgoing, buffer, size)
        return buffer.raw[:max(got, 0)]

    def feed(self, data: bytes) -> None:
        self.lib.BIO_write(self.incoming, data, len(data))

    def after_handshake(self) -> None:
        while self.connection.read():
            pass

    def close(self) -> None:
        self.connection.quiet_close()

    def session(self) -> object | None:
        return self.connection.session()

    def resumed(self) -> bool:
        return self.connection.resumed()

    def group_name(self) -> str | None:
        function = getattr(self.lib, "SSL_get0_group_name", None)
        if function is None:
            return None
        name: bytes | None = function(self.connection.pointer)
        return name.decode() if name else None


class _Client(ClientSide):
    context: _Context
    endpoint = _Memory

    def __init__(self, cell: Cell, credentials: Credentials) -> None:
        self.context = self.recorder = _Context(cell)
        lib = self.context.lib
        roots = _pem_objects(lib, credentials.root_pem, lib.PEM_read_bio_X509)
        if not roots:
            raise NotOfferedError(f"{_version_text()} cannot read a "
                                  f"{cell.certificate.name} certificate")
        store = lib.SSL_CTX_get_cert_store(self.context.pointer)
        for root in roots:
            lib.X509_STORE_add_cert(store, root)
            lib.X509_free(root)  # the store holds its own reference
        lib.SSL_CTX_set_verify(self.context.pointer, _SSL_VERIFY_PEER, None)
        param = lib.SSL_CTX_get0_param(self.context.pointer)
        lib.X509_VERIFY_PARAM_set1_host(param, SERVER_NAME.encode(), len(SERVER_NAME))

    def connect(self, sock: socket.socket, session: object | None) -> tuple[object | None, bool]:
        connection = _Connection(self.context, True, session)  # type: ignore[arg-type]
        self.context.lib.SSL_set_fd(connection.pointer, sock.fileno())
        connection.handshake()
        while connection.read():  # session tickets, then close_notify
            pass
        connection.quiet_close()
        return connection.session(), connection.resumed()


class _Server(ServerSide):
    context: _Context
    endpoint = _Memory

    def __init__(self, cell: Cell, credentials: Credentials) -> None:
        self.context = self.recorder = _Context(cell)
        lib, pointer = self.context.lib, self.context.pointer
        certificates = _pem_objects(lib, credentials.chain_bytes, lib.PEM_read_bio_X509)
        keys = _pem_objects(lib, credentials.key_pem, lib.PEM_read_bio_PrivateKey)
        if len(certificates) != len(credentials.chain_pem) or len(keys) != 1:
            for key in keys:
                lib.EVP_PKEY_free(key)
            for certificate in certificates:
                lib.X509_free(certificate)
            raise NotOfferedError(f"{_version_text()} cannot load a {cell.certificate.name} "
                                  "key or certificate")
        leaf, *intermediates = certificates
        ok = lib.SSL_CTX_use_certificate(pointer, leaf) == 1
        lib.X509_free(leaf)
        for certificate in intermediates:  # the context takes these references over
            ok = ok and lib.SSL_CTX_ctrl(pointer, _SSL_CTRL_EXTRA_CHAIN_CERT, 0,
                                         certificate) == 1
        ok = ok and lib.SSL_CTX_use_PrivateKey(pointer, keys[0]) == 1
        lib.EVP_PKEY_free(keys[0])
        if not (ok and lib.SSL_CTX_check_private_key(pointer) == 1):
            raise NotOfferedError(f"{_version_text()} cannot serve a {cell.certificate.name} "
                                  f"certificate: {_errors(lib)}")

    def serve(self, sock: socket.socket) -> None:
        connection = _Connection(self.context, False, None)
        self.context.lib.SSL_set_fd(connection.pointer, sock.fileno())
        connection.handshake()  # writes the session tickets when it completes
        self.context.lib.SSL_shutdown(connection.pointer)  # close_notify, no waiting


class SystemLibssl(TlsImplementation):
    name = "libssl"
    description = "the operating system's libssl through ctypes (what `openssl s_time` uses)"
    explain_library = "libcrypto"
    client_side, server_side = _Client, _Server

    def unavailable_reason(self) -> str | None:
        try:
            lib = _load()
        except OSError as exc:
            return str(exc)
        if lib.OpenSSL_version_num() < _OPENSSL_MINIMUM:
            return f"{_version_text()} is older than OpenSSL 3.0"
        return None

    def library(self) -> str:
        return _version_text()

    def versions(self) -> dict[str, str]:
        return {"libssl": _version_text()}

    def offers(self, cell: Cell) -> str | None:
        old = _load().OpenSSL_version_num() < _OPENSSL_WITH_PQ
        if old and cell.group.post_quantum:
            return f"the system's {_version_text()} has no ML-KEM groups (needs OpenSSL 3.5)"
        if old and cell.certificate.post_quantum:
            return f"the system's {_version_text()} has no ML-DSA (needs OpenSSL 3.5)"
        return None

