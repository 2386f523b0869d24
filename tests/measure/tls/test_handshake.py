"""Real TLS 1.3 handshakes through every implementation: the group and signature scheme read
back from the connection, the sizes FIPS 203/204 imply (from pqbench's algorithm table), and
the CertificateVerify signature checked here, independently, with pyca/cryptography."""

from __future__ import annotations

import hashlib
import ssl
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, mldsa, padding, rsa

from pqbench.catalog import algorithms
from pqbench.catalog.algorithms.base import normalize
from pqbench.measure.tls import catalog, certs, inprocess, registry, wire
from pqbench.measure.tls.base import TlsImplementation
from pqbench.platform.errors import NotOfferedError, VerificationError

# IANA "TLS Supported Groups" and "TLS SignatureScheme" code points, typed from the
# registries (RFC 8446, draft-ietf-tls-ecdhe-mlkem, draft-ietf-tls-mlkem, draft-ietf-tls-mldsa).
GROUP_CODEPOINTS = {"X25519": 0x001D, "P-256": 0x0017, "X25519MLKEM768": 0x11EC,
                    "SecP256r1MLKEM768": 0x11EB, "MLKEM512": 0x0200, "MLKEM768": 0x0201,
                    "MLKEM1024": 0x0202}
SCHEMES = {"ECDSA-P-256": 0x0403, "Ed25519": 0x0807, "RSA-2048": 0x0804, "ML-DSA-44": 0x0904,
           "ML-DSA-65": 0x0905, "ML-DSA-87": 0x0906}
PUBLIC_KEY_TYPES = {"ECDSA-P-256": ec.EllipticCurvePublicKey,
                    "Ed25519": ed25519.Ed25519PublicKey, "RSA-2048": rsa.RSAPublicKey,
                    "ML-DSA-44": mldsa.MLDSA44PublicKey, "ML-DSA-65": mldsa.MLDSA65PublicKey,
                    "ML-DSA-87": mldsa.MLDSA87PublicKey}
# RFC 8446 section 4.4.3: what the server signs, before the transcript hash.
SIGNED_PREFIX = b" " * 64 + b"TLS 1.3, server CertificateVerify" + b"\x00"
SUITE_HASHES = {0x1301: hashlib.sha256, 0x1302: hashlib.sha384, 0x1303: hashlib.sha256}

IMPLEMENTATIONS = registry.all_implementations()
CELLS = catalog.grid(catalog.GROUPS, catalog.CERTIFICATES)


def _size(name: str, what: str) -> int:
    return algorithms.by_name(name).size(what)


@pytest.fixture(scope="module")
def chains() -> dict[str, certs.Credentials]:
    return {kind.name: certs.make_credentials(kind) for kind in catalog.CERTIFICATES}


def _recorded(implementation: TlsImplementation, cell: catalog.Cell,
              credentials: certs.Credentials, session: object | None = None
              ) -> tuple[wire.Transcript, wire.Transcript, inprocess.Handshake]:
    client = implementation.client(cell, credentials)
    server = implementation.server(cell, credentials)
    client_view, server_view = wire.Transcript(), wire.Transcript()
    client.record(client_view)
    server.record(server_view)
    done = inprocess.handshake(client, server, session)
    client.record(None)
    server.record(None)
    return client_view, server_view, done


def _suite(server_hello: bytes) -> int:
    session_id_length = server_hello[4 + 2 + 32]
    at = 4 + 2 + 32 + 1 + session_id_length
    return int.from_bytes(server_hello[at:at + 2], "big")


def _verify_certificate_verify(transcript: wire.Transcript, name: str) -> Any:
    """Check the server's signature over the transcript with the leaf's public key."""
    received = {m[0]: m for _, m in transcript.messages(sent=False)}
    hello = transcript.message(wire.CLIENT_HELLO, sent=True)
    assert hello is not None
    context = [hello, *(received[t] for t in (wire.SERVER_HELLO, wire.ENCRYPTED_EXTENSIONS,
                                              wire.CERTIFICATE))]
    digest = SUITE_HASHES[_suite(received[wire.SERVER_HELLO])](b"".join(context)).digest()
    verify = received[wire.CERTIFICATE_VERIFY]
    signature = verify[4 + 2 + 2:]
    assert len(signature) == int.from_bytes(verify[6:8], "big")
    leaf = x509.load_der_x509_certificate(wire.parse_certificate(received[wire.CERTIFICATE])[0])
    key = leaf.public_key()
    assert isinstance(key, PUBLIC_KEY_TYPES[name])
    signed = SIGNED_PREFIX + digest
    if isinstance(key, ec.EllipticCurvePublicKey):
        key.verify(signature, signed, ec.ECDSA(hashes.SHA256()))
    elif isinstance(key, rsa.RSAPublicKey):
        key.verify(signature, signed, padding.PSS(padding.MGF1(hashes.SHA256()), 32),
                   hashes.SHA256())
    else:
        key.verify(signature, signed)  # Ed25519 and ML-DSA (empty context) sign the message
    return key, signature


@pytest.mark.parametrize("cell", CELLS, ids=[c.name.replace(" ", "") for c in CELLS])
@pytest.mark.parametrize("implementation", IMPLEMENTATIONS, ids=lambda i: i.name)
def test_the_negotiated_group_and_scheme_are_the_ones_asked_for(
        implementation: TlsImplementation, cell: catalog.Cell,
        chains: dict[str, certs.Credentials]) -> None:
    reason = implementation.unavailable_reason() or implementation.offers(cell)
    if reason is not None:
        # Not offered is an answer with its reason, never a silent gap: only post-quantum
        # cells on a library or Python too old for them may be refused.
        assert cell.group.post_quantum or cell.certificate.post_quantum, reason
        assert "3.5" in reason or "3.15" in reason, reason
        return
    client_view, server_view, done = _recorded(implementation, cell, chains[cell.certificate.name])
    facts = wire.client_view(client_view)
    assert facts.group == GROUP_CODEPOINTS[cell.group.name]
    assert facts.offered_groups == (GROUP_CODEPOINTS[cell.group.name],)
    api_name = done.client.group_name()
    if api_name is not None:  # pyOpenSSL and libssl 3.2+ name it; Python's ssl cannot
        assert normalize(api_name) in {normalize(n) for n in (cell.group.name,
                                                              *cell.group.aliases)}
    assert facts.scheme == SCHEMES[cell.certificate.name]
    key, signature = _verify_certificate_verify(client_view, cell.certificate.name)
    assert facts.signature_bytes == len(signature)
    assert facts.certificate_der_lengths == chains[cell.certificate.name].chain_der_lengths
    # What the server says it sent is what the client says it received, record by record.
    assert [n for sent, n in server_view.flights() if sent] == \
        [n for sent, n in client_view.flights() if not sent]
    assert not facts.resumed
    if cell.certificate.post_quantum:
        assert len(key.public_bytes_raw()) == _size(cell.certificate.name, "public_key")


@pytest.mark.parametrize(("group", "client_share", "server_share"), [
    # FIPS 203 Table 3: an encapsulation key from the client, a ciphertext back.
    ("MLKEM512", [("ML-KEM-512", "public_key")], [("ML-KEM-512", "ciphertext")]),
    ("MLKEM768", [("ML-KEM-768", "public_key")], [("ML-KEM-768", "ciphertext")]),
    ("MLKEM1024", [("ML-KEM-1024", "public_key")], [("ML-KEM-1024", "ciphertext")]),
    # draft-ietf-tls-ecdhe-mlkem: the ML-KEM part and an X25519 key or a P-256 point.
    ("X25519MLKEM768", [("ML-KEM-768", "public_key"), ("X25519", "public_key")],
     [("ML-KEM-768", "ciphertext"), ("X25519", "public_key")]),
    ("SecP256r1MLKEM768", [("ECDH-P-256", "public_key"), ("ML-KEM-768", "public_key")],
     [("ECDH-P-256", "public_key"), ("ML-KEM-768", "ciphertext")]),
    ("X25519", [("X25519", "public_key")], [("X25519", "public_key")]),
    ("P-256", [("ECDH-P-256", "public_key")], [("ECDH-P-256", "public_key")]),
])
def test_key_shares_have_the_sizes_fips_203_and_the_curves_imply(
        group: str, client_share: list[tuple[str, str]], server_share: list[tuple[str, str]],
        chains: dict[str, certs.Credentials]) -> None:
    cell = catalog.Cell(catalog.resolve_groups([group])[0],
                        catalog.resolve_certificates(["Ed25519"])[0])
    client_view, _, _ = _recorded(registry.by_name("pyopenssl"), cell, chains["Ed25519"])
    facts = wire.client_view(client_view)
    assert facts.client_share_bytes == sum(_size(a, s) for a, s in client_share)
    assert facts.server_share_bytes == sum(_size(a, s) for a, s in server_share)
    if group == "MLKEM768":  # the worked figures, as a cross-check of the table
        assert (facts.client_share_bytes, facts.server_share_bytes) == (1184, 1088)
    if group == "X25519MLKEM768":
        assert (facts.client_share_bytes, facts.server_share_bytes) == (1216, 1120)


@pytest.mark.parametrize("name", ["ML-DSA-44", "ML-DSA-65", "ML-DSA-87", "Ed25519"])
def test_the_server_flight_carries_fips_204_signatures_and_keys(
        name: str, chains: dict[str, certs.Credentials]) -> None:
    cell = catalog.Cell(catalog.resolve_groups(["X25519MLKEM768"])[0],
                        catalog.resolve_certificates([name])[0])
    client_view, _, _ = _recorded(registry.by_name("pyopenssl"), cell, chains[name])
    facts = wire.client_view(client_view)
    assert facts.signature_bytes == _size(name, "signature")
    certificate = client_view.message(wire.CERTIFICATE, sent=False)
    assert certificate is not None
    for der in wire.parse_certificate(certificate):  # leaf and intermediate alike
        issued = x509.load_der_x509_certificate(der)
        assert len(issued.public_key().public_bytes_raw()) == _size(name, "public_key")
        assert len(issued.signature) == _size(name, "signature")
    if name == "ML-DSA-65":
        assert (facts.signature_bytes, _size(name, "public_key")) == (3309, 1952)
    # The flight holds the chain's keys and signatures and the CertificateVerify signature.
    chain = len(wire.parse_certificate(certificate))
    assert facts.server_flight_bytes > (chain + 1) * _size(name, "signature") \
        + chain * _size(name, "public_key")


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS, ids=lambda i: i.name)
def test_resumption_uses_the_ticket_keeps_the_group_and_sends_no_certificate(
        implementation: TlsImplementation, chains: dict[str, certs.Credentials]) -> None:
    cell = catalog.Cell(catalog.resolve_groups(["X25519"])[0],
                        catalog.resolve_certificates(["ECDSA-P-256"])[0])
    client = implementation.client(cell, chains["ECDSA-P-256"])
    server = implementation.server(cell, chains["ECDSA-P-256"])
    session = inprocess.handshake(client, server).client.session()
    for _ in range(3):  # each resumption hands out the ticket for the next
        transcript = wire.Transcript()
        client.record(transcript)
        done = inprocess.handshake(client, server, session)
        client.record(None)
        facts = wire.client_view(transcript)
        assert done.client.resumed() and done.server.resumed() and facts.resumed
        assert facts.group == GROUP_CODEPOINTS["X25519"]
        assert facts.scheme is None and facts.certificate_message_bytes is None
        hello = transcript.message(wire.CLIENT_HELLO, sent=True)
        assert hello is not None and wire.parse_client_hello(hello).offers_psk
        session = done.client.session()


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS, ids=lambda i: i.name)
def test_a_client_that_trusts_another_root_refuses_the_server(
        implementation: TlsImplementation, chains: dict[str, certs.Credentials]) -> None:
    kind = catalog.resolve_certificates(["ECDSA-P-256"])[0]
    cell = catalog.Cell(catalog.resolve_groups(["X25519"])[0], kind)
    stranger = certs.make_credentials(kind)
    client = implementation.client(cell, stranger)  # trusts the other root only
    server = implementation.server(cell, chains["ECDSA-P-256"])
    with pytest.raises(VerificationError, match=r"(?i)certificate verify failed"):
        inprocess.handshake(client, server)


def test_ssl_module_and_libssl_share_the_system_library() -> None:
    """libssl here is the library Python's ssl links: their version strings agree."""
    libssl = registry.by_name("libssl")
    assert libssl.unavailable_reason() is None
    assert libssl.library() == " ".join(ssl.OPENSSL_VERSION.split()[:2])


def test_a_certificate_the_library_cannot_load_is_not_offered_with_its_reason(
        chains: dict[str, certs.Credentials], monkeypatch: pytest.MonkeyPatch) -> None:
    """Support is asked of the library too, not only decided by version: with the version
    gate lowered, an OpenSSL without ML-DSA must still refuse the key, as "not offered"."""
    implementation = registry.by_name("libssl")
    cell = catalog.Cell(catalog.resolve_groups(["X25519"])[0],
                        catalog.resolve_certificates(["ML-DSA-65"])[0])
    if implementation.offers(cell) is None:  # an OpenSSL with ML-DSA: it must serve it
        client_view, _, _ = _recorded(implementation, cell, chains["ML-DSA-65"])
        assert wire.client_view(client_view).scheme == SCHEMES["ML-DSA-65"]
        return
    monkeypatch.setattr("pqbench.measure.tls.libssl._OPENSSL_WITH_PQ", 0)
    assert implementation.offers(cell) is None
    with pytest.raises(NotOfferedError, match="ML-DSA-65"):
        implementation.server(cell, chains["ML-DSA-65"])
