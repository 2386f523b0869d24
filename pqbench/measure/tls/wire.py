"""What travelled: a TLS 1.3 connection's records and handshake messages, as one side saw them.

Every implementation reports the same events (OpenSSL's message callback: each record header
and each plaintext handshake message, in order, with its direction), so one parser reads
them all. From the client's view of one connection this module takes the bytes of each
flight, the key shares (RFC 8446 section 4.2.8), the certificate chain (section 4.4.2) and
the CertificateVerify signature (section 4.4.3): the facts a handshake is verified by and
the sizes the round-trip model needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pqbench.platform.errors import VerificationError

# RFC 8446 section 5.1 content types; OpenSSL's message callback adds two pseudo types:
# SSL3_RT_HEADER (the 5-byte record header) and SSL3_RT_INNER_CONTENT_TYPE.
HANDSHAKE = 22
RECORD_HEADER = 256
RECORD_HEADER_BYTES = 5

# RFC 8446 section 4: handshake message types.
CLIENT_HELLO = 1
SERVER_HELLO = 2
NEW_SESSION_TICKET = 4
ENCRYPTED_EXTENSIONS = 8
CERTIFICATE = 11
CERTIFICATE_VERIFY = 15
FINISHED = 20

# RFC 8446 section 4.2: extension types.
EXT_PRE_SHARED_KEY = 41
EXT_KEY_SHARE = 51

#: A ServerHello with this random is a HelloRetryRequest (RFC 8446 section 4.1.3).
HELLO_RETRY_RANDOM = bytes.fromhex(
    "CF21AD74E59A6111BE1D8C021E65B891C2A211167ABB8C5E079E09E2C8A8339C")


class _Reader:
    """Bounds-checked reading of TLS's length-prefixed vectors."""

    def __init__(self, data: bytes, what: str) -> None:
        self.data, self.at, self.what = data, 0, what

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise VerificationError(f"malformed {self.what}: truncated")
        chunk = self.data[self.at:self.at + n]
        self.at += n
        return chunk

    def number(self, n: int) -> int:
        return int.from_bytes(self.take(n), "big")

    def vector(self, length_bytes: int) -> bytes:
        return self.take(self.number(length_bytes))

    @property
    def done(self) -> bool:
        return self.at >= len(self.data)


def _extensions(reader: _Reader) -> dict[int, bytes]:
    block = _Reader(reader.vector(2), reader.what + " extensions")
    found: dict[int, bytes] = {}
    while not block.done:
        kind = block.number(2)
        found[kind] = block.vector(2)
    return found


def _body(message: bytes, what: str) -> _Reader:
    """A handshake message's body (after its 1-byte type and 3-byte length)."""
    header = _Reader(message, what)
    header.take(1)
    return _Reader(header.vector(3), what)


@dataclass(frozen=True)
class ClientHello:
    #: (group code point, key_exchange length) per key share the client offered.
    key_shares: tuple[tuple[int, int], ...]
    offers_psk: bool


@dataclass(frozen=True)
class ServerHello:
    retry: bool  # a HelloRetryRequest: the client's shares did not suit the server
    group: int | None  # the key share's group (the selected group of a retry)
    key_share_bytes: int | None
    psk_accepted: bool


def parse_client_hello(message: bytes) -> ClientHello:
    body = _body(message, "ClientHello")
    body.take(2 + 32)  # legacy_version, random
    body.vector(1)  # legacy_session_id
    body.vector(2)  # cipher_suites
    body.vector(1)  # legacy_compression_methods
    extensions = _extensions(body)
    shares: list[tuple[int, int]] = []
    if EXT_KEY_SHARE in extensions:
        entries = _Reader(_Reader(extensions[EXT_KEY_SHARE], "key_share").vector(2), "key_share")
        while not entries.done:
            group = entries.number(2)
            shares.append((group, len(entries.vector(2))))
    return ClientHello(tuple(shares), EXT_PRE_SHARED_KEY in extensions)


def parse_server_hello(message: bytes) -> ServerHello:
    body = _body(message, "ServerHello")
    body.take(2)
    retry = body.take(32) == HELLO_RETRY_RANDOM
    body.vector(1)  # legacy_session_id_echo
    body.take(2 + 1)  # cipher_suite, legacy_compression_method
    extensions = _extensions(body)
    group = share = None
    if EXT_KEY_SHARE in extensions:
        entry = _Reader(extensions[EXT_KEY_SHARE], "key_share")
        group = entry.number(2)
        share = None if retry else len(entry.vector(2))
    return ServerHello(retry, group, share, EXT_PRE_SHARED_KEY in extensions)


def parse_certificate(message: bytes) -> tuple[bytes, ...]:
    """The DER certificates of a TLS 1.3 Certificate message, server certificate first."""
    body = _body(message, "Certificate")
    body.vector(1)  # certificate_request_context
    entries = _Reader(body.vector(3), "certificate_list")
    found = []
    while not entries.done:
        found.append(entries.vector(3))
        entries.vector(2)  # per-certificate extensions
    return tuple(found)


def parse_certificate_verify(message: bytes) -> tuple[int, int]:
    """(SignatureScheme code point, signature length)."""
    body = _body(message, "CertificateVerify")
    scheme = body.number(2)
    return scheme, len(body.vector(2))


@dataclass
class Transcript:
    """One side's events of one connection, in order: (sent, content type, bytes)."""

    events: list[tuple[bool, int, bytes]] = field(default_factory=list)

    def add(self, sent: bool, content_type: int, data: bytes) -> None:
        self.events.append((sent, content_type, data))

    def clear(self) -> None:
        self.events.clear()

    def flights(self) -> list[tuple[bool, int]]:
        """Record bytes (headers included) per flight: (sent, bytes), direction by direction."""
        flights: list[tuple[bool, int]] = []
        for sent, content_type, data in self.events:
            if content_type != RECORD_HEADER or len(data) != RECORD_HEADER_BYTES:
                continue
            size = RECORD_HEADER_BYTES + int.from_bytes(data[3:5], "big")
            if flights and flights[-1][0] == sent:
                flights[-1] = (sent, flights[-1][1] + size)
            else:
                flights.append((sent, size))
        return flights

    def messages(self, sent: bool | None = None) -> list[tuple[bool, bytes]]:
        """Plaintext handshake messages (type byte first), optionally of one direction."""
        return [(s, data) for s, content_type, data in self.events
                if content_type == HANDSHAKE and data and (sent is None or s == sent)]

    def message(self, kind: int, sent: bool) -> bytes | None:
        """The first handshake message of a type in one direction."""
        for _, data in self.messages(sent):
            if data[0] == kind:
                return data
        return None


@dataclass(frozen=True)
class WireFacts:
    """One handshake as its client saw it: what was negotiated and how many bytes it took."""

    group: int
    client_share_bytes: int
    server_share_bytes: int
    offered_groups: tuple[int, ...]
    resumed: bool
    #: CertificateVerify scheme and signature length; None on a resumed handshake.
    scheme: int | None
    signature_bytes: int | None
    #: Certificate message length (header included) and each certificate's DER length.
    certificate_message_bytes: int | None
    certificate_der_lengths: tuple[int, ...]
    client_hello_bytes: int  # the ClientHello handshake message
    client_first_flight_bytes: int  # records of the client's first flight
    server_flight_bytes: int  # records from ServerHello to the server's Finished
    client_second_flight_bytes: int  # the client's Finished (and ChangeCipherSpec)
    post_handshake_bytes: int  # what the server sent after the handshake (tickets)

    @property
    def client_bytes(self) -> int:
        return self.client_first_flight_bytes + self.client_second_flight_bytes

    @property
    def server_bytes(self) -> int:
        return self.server_flight_bytes + self.post_handshake_bytes


def client_view(transcript: Transcript) -> WireFacts:
    """Read a completed handshake from the client's transcript.

    Flights alternate: client hello, the server's flight, the client's Finished, then what
    the server sends after the handshake. A HelloRetryRequest (a flight more each way) or
    any other shape is a VerificationError: the cell asked for a 1-RTT handshake.
    """
    hello = transcript.message(CLIENT_HELLO, sent=True)
    server_hello = transcript.message(SERVER_HELLO, sent=False)
    if hello is None or server_hello is None:
        raise VerificationError("the handshake transcript lacks a ClientHello or ServerHello")
    ch, sh = parse_client_hello(hello), parse_server_hello(server_hello)
    if sh.retry:
        raise VerificationError(f"the server asked for another key share (HelloRetryRequest "
                                f"for group 0x{sh.group or 0:04x}): an extra round trip")
    if sh.group is None or sh.key_share_bytes is None:
        raise VerificationError("the ServerHello carries no key share")
    client_share = next((n for g, n in ch.key_shares if g == sh.group), None)
    if client_share is None:
        raise VerificationError(f"the server chose group 0x{sh.group:04x}, for which the "
                                "ClientHello carried no key share")
    certificate = transcript.message(CERTIFICATE, sent=False)
    verify = transcript.message(CERTIFICATE_VERIFY, sent=False)
    scheme, signature = parse_certificate_verify(verify) if verify else (None, None)
    flights = transcript.flights()
    expected_first = (True, False, True)
    if tuple(sent for sent, _ in flights[:3]) != expected_first:
        raise VerificationError("the handshake did not run as one TLS 1.3 round trip "
                                f"(flights {[('client' if s else 'server') for s, _ in flights]})")
    return WireFacts(
        group=sh.group, client_share_bytes=client_share, server_share_bytes=sh.key_share_bytes,
        offered_groups=tuple(g for g, _ in ch.key_shares),
        resumed=sh.psk_accepted, scheme=scheme, signature_bytes=signature,
        certificate_message_bytes=len(certificate) if certificate else None,
        certificate_der_lengths=tuple(len(c) for c in parse_certificate(certificate))
        if certificate else (),
        client_hello_bytes=len(hello),
        client_first_flight_bytes=flights[0][1], server_flight_bytes=flights[1][1],
        client_second_flight_bytes=flights[2][1],
        post_handshake_bytes=sum(n for sent, n in flights[3:] if not sent),
    )
