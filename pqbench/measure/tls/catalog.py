"""The TLS grid as data: key-exchange groups and certificate key types.

Every size is derived from pqbench's algorithm table (FIPS 203/204, RFC 7748/8032, SEC 1),
never typed twice. Code points are IANA's: "TLS Supported Groups" (RFC 8446 section 4.2.7,
draft-ietf-tls-ecdhe-mlkem for the hybrids, draft-ietf-tls-mlkem for pure ML-KEM) and "TLS
SignatureScheme" (RFC 8446 section 4.2.3, draft-ietf-tls-mldsa for ML-DSA).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from pqbench.catalog import algorithms
from pqbench.catalog.algorithms.base import normalize
from pqbench.platform.errors import UsageError


@dataclass(frozen=True)
class Group:
    """A TLS 1.3 key-exchange group and the algorithms its key shares concatenate."""

    name: str  # the name OpenSSL and IANA use, e.g. "X25519MLKEM768"
    codepoint: int
    #: pqbench algorithm names in wire order (draft-ietf-tls-ecdhe-mlkem section 3:
    #: X25519MLKEM768 puts ML-KEM first, SecP256r1MLKEM768 puts the curve first).
    components: tuple[str, ...]
    aliases: tuple[str, ...] = ()

    @property
    def post_quantum(self) -> bool:
        return any(algorithms.by_name(c).kind == "kem" for c in self.components)

    @property
    def client_share_bytes(self) -> int:
        """The client's key_share: an ML-KEM encapsulation key, a curve point."""
        return sum(algorithms.by_name(c).size("public_key") for c in self.components)

    @property
    def server_share_bytes(self) -> int:
        """The server's key_share: an ML-KEM ciphertext, a curve point."""
        return sum(algorithms.by_name(c).size("ciphertext" if algorithms.by_name(c).kind
                                              == "kem" else "public_key")
                   for c in self.components)


@dataclass(frozen=True)
class CertificateKind:
    """A server certificate key type and the TLS 1.3 signature scheme it signs with."""

    name: str  # the pqbench algorithm name: "ECDSA-P-256", "ML-DSA-65" ...
    scheme: int  # SignatureScheme code point of CertificateVerify
    scheme_name: str
    aliases: tuple[str, ...] = ()

    @property
    def algorithm(self) -> algorithms.Algorithm:
        return algorithms.by_name(self.name)

    @property
    def post_quantum(self) -> bool:
        return self.algorithm.family == "ML-DSA"

    @property
    def signature_bytes(self) -> int | None:
        """The signature length where it is fixed (not for DER-encoded ECDSA)."""
        if self.algorithm.family == "RSA":
            return self.algorithm.int_param("modulus_bits") // 8
        return dict(self.algorithm.standard_sizes).get("signature")

    @property
    def public_key_bytes(self) -> int | None:
        return dict(self.algorithm.standard_sizes).get("public_key")


GROUPS: tuple[Group, ...] = (
    Group("X25519", 0x001D, ("X25519",), ("x25519", "ecdhx25519")),
    Group("P-256", 0x0017, ("ECDH-P-256",), ("secp256r1", "prime256v1", "ecdhp256")),
    Group("X25519MLKEM768", 0x11EC, ("ML-KEM-768", "X25519")),
    Group("SecP256r1MLKEM768", 0x11EB, ("ECDH-P-256", "ML-KEM-768"), ("p256mlkem768",)),
    Group("MLKEM512", 0x0200, ("ML-KEM-512",), ("ml-kem-512",)),
    Group("MLKEM768", 0x0201, ("ML-KEM-768",), ("ml-kem-768",)),
    Group("MLKEM1024", 0x0202, ("ML-KEM-1024",), ("ml-kem-1024",)),
)

CERTIFICATES: tuple[CertificateKind, ...] = (
    CertificateKind("ECDSA-P-256", 0x0403, "ecdsa_secp256r1_sha256", ("ecdsa", "p256")),
    CertificateKind("Ed25519", 0x0807, "ed25519"),
    # An rsaEncryption key signs CertificateVerify with RSA-PSS (RFC 8446 section 4.2.3).
    CertificateKind("RSA-2048", 0x0804, "rsa_pss_rsae_sha256", ("rsa",)),
    CertificateKind("ML-DSA-44", 0x0904, "mldsa44"),
    CertificateKind("ML-DSA-65", 0x0905, "mldsa65"),
    CertificateKind("ML-DSA-87", 0x0906, "mldsa87"),
)

#: What `pqbench tls` measures without --group: the issue's grid (512/1024 on request).
DEFAULT_GROUPS = ("X25519", "P-256", "X25519MLKEM768", "SecP256r1MLKEM768", "MLKEM768")
DEFAULT_CERTIFICATES = tuple(c.name for c in CERTIFICATES)

GROUP_BY_CODEPOINT = {g.codepoint: g for g in GROUPS}
SCHEME_NAMES = {c.scheme: c.scheme_name for c in CERTIFICATES}


@dataclass(frozen=True)
class Cell:
    """One point of the grid: a key-exchange group and a certificate key type."""

    group: Group
    certificate: CertificateKind

    @property
    def name(self) -> str:
        """The row's algorithm: "X25519MLKEM768 + ML-DSA-65"."""
        return f"{self.group.name} + {self.certificate.name}"


class _Named(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def aliases(self) -> tuple[str, ...]: ...


_Entry = TypeVar("_Entry", bound=_Named)


def _resolve(names: Iterable[str], table: Sequence[_Entry], what: str,
             option: str) -> list[_Entry]:
    index: dict[str, _Entry] = {}
    for entry in table:
        for spelling in (entry.name, *entry.aliases):
            index[normalize(spelling)] = entry
    chosen: list[_Entry] = []
    for name in names:
        found = index.get(normalize(name))
        if found is None:
            spelled = ", ".join(e.name for e in table)
            raise UsageError(f"unknown {what} {name!r} for {option}; known: {spelled}")
        if found not in chosen:
            chosen.append(found)
    return chosen


def resolve_groups(names: Iterable[str]) -> list[Group]:
    """Groups by name or alias (case and punctuation ignored), in order, once each."""
    return _resolve(names, GROUPS, "key-exchange group", "--group")


def resolve_certificates(names: Iterable[str]) -> list[CertificateKind]:
    return _resolve(names, CERTIFICATES, "certificate key type", "--cert")


def grid(groups: Sequence[Group], certificates: Sequence[CertificateKind]) -> list[Cell]:
    return [Cell(g, c) for g in groups for c in certificates]
