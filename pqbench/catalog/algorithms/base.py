"""The algorithm record every family module fills in: parameter sets are data."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["kem", "signature", "key-agreement", "rsa", "cipher", "hash"]
#: The public-key kinds: `verify` checks them when no algorithm is named, `memory` measures
#: them (ciphers and hashes allocate per context, not per call).
PUBLIC_KEY_KINDS: tuple[Kind, ...] = ("kem", "signature", "key-agreement", "rsa")

#: The operations a kind offers by default, in the order a table shows them.
DEFAULT_OPERATIONS: dict[str, tuple[str, ...]] = {
    "kem": ("keygen", "encaps", "decaps"),
    "signature": ("keygen", "sign", "verify"),
    "key-agreement": ("keygen", "derive"),
    "rsa": ("sign", "verify", "encrypt", "decrypt"),
}


@dataclass(frozen=True)
class Algorithm:
    """One parameter set: canonical name, spellings, security and what it can do."""

    name: str
    kind: Kind
    family: str
    aliases: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    #: Operations measured only when asked for by name (RSA keygen is seconds-slow).
    optional_operations: tuple[str, ...] = ()
    #: NIST security category (FIPS 203/204 sections 8/4), None for classical schemes.
    nist_level: int | None = None
    #: Best known classical attack cost, in bits (SP 800-57 Part 1 Table 2 for RSA/ECC).
    classical_bits: int | None = None
    #: Name liboqs uses, when liboqs implements it.
    liboqs_name: str | None = None
    #: Free attributes a family needs (curve name, RSA modulus bits, key bits ...).
    params: tuple[tuple[str, object], ...] = field(default=())
    #: Sizes in bytes the standard fixes (public_key, secret_key, ciphertext, signature,
    #: shared_secret), where it fixes them.
    standard_sizes: tuple[tuple[str, int], ...] = field(default=())

    def param(self, key: str, default: object = None) -> object:
        return dict(self.params).get(key, default)

    def int_param(self, key: str) -> int:
        value = self.param(key)
        if not isinstance(value, int):
            raise KeyError(f"{self.name} has no integer parameter {key!r}")
        return value

    def size(self, name: str) -> int:
        """A size the standard fixes, e.g. size("ciphertext") of ML-KEM-768 is 1088."""
        return dict(self.standard_sizes)[name]

    @property
    def all_operations(self) -> tuple[str, ...]:
        return self.operations + self.optional_operations


#: NIST's post-quantum security categories (Call for Proposals, 2016, section 4.A.5): a
#: scheme of category c is at least as hard to break as the reference attack of c. Its bits
#: are the ones this catalog gives that attack where it lists the primitive: key search on
#: AES-k costs k classical bits and k/2 quantum ones (Grover, as `ciphers` records AES), a
#: collision of SHA-n n/2 and n/2 (as `hashes` records SHA-2).
CATEGORY_BITS: dict[int, tuple[str, int, int]] = {
    1: ("AES-128 key search", 128, 64), 2: ("SHA-256 collision", 128, 128),
    3: ("AES-192 key search", 192, 96), 4: ("SHA-384 collision", 192, 192),
    5: ("AES-256 key search", 256, 128)}


def security_attributes(alg: Algorithm) -> dict[str, object]:
    """The key and security bits every row of `alg` carries (JSON, CSV and the store): a
    cipher's or hash's own (`ciphers`, `hashes`); a post-quantum scheme's from its NIST
    category (`CATEGORY_BITS`); a classical public-key scheme's classical bits (SP 800-57
    Part 1 Table 2), and 0 against a quantum attacker (Shor's algorithm breaks RSA and
    elliptic-curve schemes in polynomial time)."""
    if alg.kind in ("cipher", "hash"):
        return {key: alg.param(key) for key in ("key_bits", "security_bits",
                                                "quantum_security_bits")}
    if alg.nist_level in CATEGORY_BITS:
        _, classical, quantum = CATEGORY_BITS[alg.nist_level]
        return {"security_bits": classical, "quantum_security_bits": quantum}
    if alg.classical_bits is not None:
        return {"security_bits": alg.classical_bits, "quantum_security_bits": 0}
    return {}


def nist_pq(family: str, kind: Kind, n: int, level: int, aliases: tuple[str, ...],
            sizes: tuple[tuple[str, int], ...]) -> Algorithm:
    """One NIST post-quantum parameter set, named `FAMILY-n` as in its FIPS and in liboqs,
    with its kind's operations, its security category and the sizes its FIPS fixes."""
    name = f"{family}-{n}"
    return Algorithm(name=name, kind=kind, family=family, aliases=aliases,
                     operations=DEFAULT_OPERATIONS[kind], nist_level=level, liboqs_name=name,
                     standard_sizes=sizes)

def normalize(name: str) -> str:
    """Fold case and punctuation so `ML-KEM-768`, `mlkem768` and `ml_kem_768` agree."""
    return re.sub(r"[^a-z0-9]", "", name.lower())
