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
