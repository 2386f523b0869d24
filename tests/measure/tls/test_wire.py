"""The handshake parser on messages built here byte by byte from RFC 8446's structures."""

from __future__ import annotations

import pytest

from pqbench.measure.tls import wire
from pqbench.platform.errors import VerificationError


def _vector(data: bytes, length_bytes: int) -> bytes:
    return len(data).to_bytes(length_bytes, "big") + data


def _extension(kind: int, data: bytes) -> bytes:
    return kind.to_bytes(2, "big") + _vector(data, 2)


def _message(kind: int, body: bytes) -> bytes:
    return bytes([kind]) + _vector(body, 3)


def _server_hello(random: bytes, key_share: bytes, psk: bool = False) -> bytes:
    extensions = _extension(43, b"\x03\x04") + _extension(51, key_share)
    if psk:
        extensions += _extension(41, b"\x00\x00")
    body = (b"\x03\x03" + random + _vector(b"\x11" * 32, 1) + b"\x13\x02" + b"\x00"
            + _vector(extensions, 2))
    return _message(2, body)


def test_a_server_hello_gives_its_group_and_key_share_size() -> None:
    share = (0x11EC).to_bytes(2, "big") + _vector(b"\x42" * 1120, 2)
    parsed = wire.parse_server_hello(_server_hello(b"\x07" * 32, share, psk=True))
    assert (parsed.group, parsed.key_share_bytes, parsed.retry, parsed.psk_accepted) == (
        0x11EC, 1120, False, True)


def test_a_hello_retry_request_is_recognised_by_its_random() -> None:
    # RFC 8446 section 4.1.3: SHA-256("HelloRetryRequest"); its key_share names a group only.
    random = bytes.fromhex("CF21AD74E59A6111BE1D8C021E65B891C2A211167ABB8C5E079E09E2C8A8339C")
    parsed = wire.parse_server_hello(_server_hello(random, (0x0017).to_bytes(2, "big")))
    assert (parsed.retry, parsed.group, parsed.key_share_bytes) == (True, 0x0017, None)


def test_a_client_hello_lists_its_key_shares_and_psk_offer() -> None:
    shares = ((0x11EC).to_bytes(2, "big") + _vector(b"\x01" * 1216, 2)
              + (0x001D).to_bytes(2, "big") + _vector(b"\x02" * 32, 2))
    extensions = _extension(51, _vector(shares, 2)) + _extension(41, b"\x00" * 10)
    body = (b"\x03\x03" + b"\x00" * 32 + _vector(b"", 1) + _vector(b"\x13\x01\x13\x02", 2)
            + _vector(b"\x00", 1) + _vector(extensions, 2))
    parsed = wire.parse_client_hello(_message(1, body))
    assert parsed.key_shares == ((0x11EC, 1216), (0x001D, 32))
    assert parsed.offers_psk


def test_certificate_and_certificate_verify() -> None:
    entries = b"".join(_vector(der, 3) + _vector(b"", 2) for der in (b"A" * 700, b"B" * 650))
    certificate = _message(11, _vector(b"", 1) + _vector(entries, 3))
    assert wire.parse_certificate(certificate) == (b"A" * 700, b"B" * 650)
    verify = _message(15, (0x0905).to_bytes(2, "big") + _vector(b"\x00" * 3309, 2))
    assert wire.parse_certificate_verify(verify) == (0x0905, 3309)


@pytest.mark.parametrize("cut", [1, 5, 40, 80])
def test_a_truncated_message_is_a_verification_error(cut: int) -> None:
    share = (0x001D).to_bytes(2, "big") + _vector(b"\x42" * 32, 2)
    whole = _server_hello(b"\x07" * 32, share)
    with pytest.raises(VerificationError, match="truncated"):
        wire.parse_server_hello(whole[:-cut])


def _header(sent: bool, content_type: int, length: int) -> tuple[bool, int, bytes]:
    return sent, wire.RECORD_HEADER, bytes([content_type, 3, 3]) + length.to_bytes(2, "big")


def test_flights_add_record_headers_and_lengths_per_direction() -> None:
    transcript = wire.Transcript()
    for event in (_header(True, 22, 300), _header(False, 22, 90), _header(False, 20, 1),
                  _header(False, 23, 4000), _header(True, 20, 1), _header(True, 23, 53),
                  _header(False, 23, 250)):
        transcript.add(*event)
    transcript.add(True, wire.HANDSHAKE, b"\x01\x00\x00\x00")  # not a record: not counted
    assert transcript.flights() == [(True, 305), (False, 95 + 6 + 4005), (True, 6 + 58),
                                    (False, 255)]


def test_a_retry_is_not_a_one_round_trip_handshake() -> None:
    transcript = wire.Transcript()
    share = (0x001D).to_bytes(2, "big") + _vector(b"\x01" * 32, 2)
    extensions = _extension(51, _vector(share, 2))
    hello = _message(1, b"\x03\x03" + b"\x00" * 32 + _vector(b"", 1) + _vector(b"\x13\x01", 2)
                     + _vector(b"\x00", 1) + _vector(extensions, 2))
    random = bytes.fromhex("CF21AD74E59A6111BE1D8C021E65B891C2A211167ABB8C5E079E09E2C8A8339C")
    retry = _server_hello(random, (0x001D).to_bytes(2, "big"))
    for event in (_header(True, 22, len(hello)), (True, wire.HANDSHAKE, hello),
                  _header(False, 22, len(retry)), (False, wire.HANDSHAKE, retry)):
        transcript.add(*event)
    with pytest.raises(VerificationError, match="HelloRetryRequest for group 0x001d"):
        wire.client_view(transcript)
