"""Throw-away PKI for one run: a root CA, intermediates and a server certificate per key type.

Made with pyca/cryptography before any clock starts, held in memory only and never stored
or printed (the private key is left out of the repr). The chain has the shape the Web PKI
sends (RFC 8446 section 4.4.2): the server certificate, then its intermediates; the root is
the client's trust anchor and does not travel. Every certificate is signed with the same key
type, so an ML-DSA-65 cell pays for ML-DSA-65 signatures and keys throughout the chain.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, mldsa, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pqbench.measure.tls.catalog import CertificateKind

#: The name the server certificate is issued to and the client checks (RFC 6125).
SERVER_NAME = "server.pqbench.test"
#: Long enough for any run, short enough that a leaked certificate is worthless soon.
VALIDITY = datetime.timedelta(days=2)

_MLDSA: dict[str, Any] = {"ML-DSA-44": mldsa.MLDSA44PrivateKey,
                          "ML-DSA-65": mldsa.MLDSA65PrivateKey,
                          "ML-DSA-87": mldsa.MLDSA87PrivateKey}


@dataclass(frozen=True)
class Credentials:
    """One key type's chain as PEM: what a server loads and what a client trusts."""

    kind: CertificateKind
    #: The trust anchor the client verifies against.
    root_pem: bytes
    #: Server certificate first, then the intermediates, as the server sends them.
    chain_pem: tuple[bytes, ...]
    #: DER length of each certificate in `chain_pem`, in the same order.
    chain_der_lengths: tuple[int, ...]
    #: The server's private key (PKCS#8 PEM, unencrypted, in memory only).
    key_pem: bytes = field(repr=False)

    @property
    def chain_bytes(self) -> bytes:
        return b"".join(self.chain_pem)


def generate_key(kind: CertificateKind) -> Any:
    """A fresh private key of the certificate's type."""
    family = kind.algorithm.family
    if kind.name in _MLDSA:
        return _MLDSA[kind.name].generate()
    if family == "ECDSA":
        return ec.generate_private_key(ec.SECP256R1())
    if kind.name == "Ed25519":
        return ed25519.Ed25519PrivateKey.generate()
    if family == "RSA":
        return rsa.generate_private_key(65537, kind.algorithm.int_param("modulus_bits"))
    raise ValueError(f"no key generator for {kind.name}")


def _hash_for(key: Any) -> hashes.SHA256 | None:
    """Ed25519 and ML-DSA sign the message itself; ECDSA and RSA sign a SHA-256 digest."""
    if isinstance(key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
        return hashes.SHA256()
    return None


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "pqbench throw-away PKI"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(subject: str, key: Any, issuer: str, issuer_key: Any, *, ca: bool,
                 now: datetime.datetime) -> x509.Certificate:
    public = key.public_key()
    builder = (x509.CertificateBuilder()
               .subject_name(_name(subject)).issuer_name(_name(issuer))
               .public_key(public).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + VALIDITY)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                   issuer_key.public_key()), critical=False))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=False, content_commitment=False, key_encipherment=False,
            data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
            encipher_only=False, decipher_only=False), critical=True)
    else:
        builder = (builder
                   .add_extension(x509.KeyUsage(
                       digital_signature=True, content_commitment=False,
                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                       key_cert_sign=False, crl_sign=False, encipher_only=False,
                       decipher_only=False), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                                  critical=False)
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName(SERVER_NAME)]),
                                  critical=False))
    return builder.sign(issuer_key, _hash_for(issuer_key))


def make_credentials(kind: CertificateKind, intermediates: int = 1) -> Credentials:
    """Root CA -> `intermediates` CAs -> server certificate, all keys of `kind`."""
    if intermediates < 0:
        raise ValueError("intermediates must not be negative")
    now = datetime.datetime.now(datetime.UTC)
    root_key = generate_key(kind)
    root = _certificate("pqbench root CA", root_key, "pqbench root CA", root_key, ca=True,
                        now=now)
    issuer_name, issuer_key = "pqbench root CA", root_key
    cas: list[x509.Certificate] = []
    for number in range(1, intermediates + 1):
        key = generate_key(kind)
        name = f"pqbench intermediate CA {number}"
        cas.append(_certificate(name, key, issuer_name, issuer_key, ca=True, now=now))
        issuer_name, issuer_key = name, key
    server_key = generate_key(kind)
    server = _certificate(SERVER_NAME, server_key, issuer_name, issuer_key, ca=False, now=now)
    chain = [server, *reversed(cas)]
    pem = serialization.Encoding.PEM
    return Credentials(
        kind=kind,
        root_pem=root.public_bytes(pem),
        chain_pem=tuple(c.public_bytes(pem) for c in chain),
        chain_der_lengths=tuple(len(c.public_bytes(serialization.Encoding.DER)) for c in chain),
        key_pem=server_key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()),
    )
