"""Hashes and the integrity checksums file systems use, with their security in bits.

Hashes are unkeyed (``key_bits`` None). ``security_bits`` is collision resistance, n/2 for
an n-bit digest (the generic birthday bound; preimages cost 2^n). ``quantum_security_bits``
is also n/2: Grover finds preimages in 2^(n/2), and quantum collision search
(Brassard-Hoyer-Tapp 1998, 2^(n/3) queries) needs 2^(n/3) quantum-accessible memory; counted
by hardware cost it is no cheaper than classical parallel collision search (Bernstein 2009,
"Cost analysis of hash collisions"), which is also why the NIST PQC call (2016, 4.A.5)
grades SHA-256/SHA-384 collisions above AES-128/AES-192 key search. BLAKE3 claims 128 bits
for every goal (BLAKE3 specification, section 5).

CRC32 (ISO-HDLC, zlib), CRC32C (Castagnoli, RFC 3720; ext4, Btrfs) and Fletcher-64 (APFS
object headers) detect accidents, not attacks: anyone can forge them, so 0 bits.

`evp` is the OpenSSL digest name for the native libcrypto loop, where one exists.
"""

from __future__ import annotations

from pqbench.catalog.algorithms.base import Algorithm

OPERATIONS = ("hash",)


def _hash(name: str, aliases: tuple[str, ...], *, digest_bits: int, security: int,
          evp: str | None = None, family: str | None = None) -> Algorithm:
    params: tuple[tuple[str, object], ...] = (
        ("digest_bits", digest_bits), ("key_bits", None), ("security_bits", security),
        ("quantum_security_bits", security))
    if evp:
        params = (("evp", evp), *params)
    return Algorithm(name, "hash", family or name.split("-")[0], aliases, OPERATIONS,
                     classical_bits=security, params=params)


ALGORITHMS = (
    _hash("SHA-256", ("sha256", "sha2-256"), digest_bits=256, security=128, evp="SHA256",
          family="SHA-2"),
    _hash("SHA-512", ("sha512", "sha2-512"), digest_bits=512, security=256, evp="SHA512",
          family="SHA-2"),
    _hash("SHA3-256", ("sha3256",), digest_bits=256, security=128, evp="SHA3-256",
          family="SHA-3"),
    _hash("SHA3-512", ("sha3512",), digest_bits=512, security=256, evp="SHA3-512",
          family="SHA-3"),
    _hash("BLAKE2b", ("blake2b", "blake2b512", "blake2b-512"), digest_bits=512, security=256,
          evp="BLAKE2b512", family="BLAKE2"),
    _hash("BLAKE2s", ("blake2s", "blake2s256", "blake2s-256"), digest_bits=256, security=128,
          evp="BLAKE2s256", family="BLAKE2"),
    _hash("BLAKE3", ("blake3", "blake3-256"), digest_bits=256, security=128),
    _hash("CRC32", ("crc32", "crc-32"), digest_bits=32, security=0, family="CRC"),
    _hash("CRC32C", ("crc32c", "crc-32c", "castagnoli"), digest_bits=32, security=0,
          family="CRC"),
    _hash("Fletcher-64", ("fletcher64", "apfs-checksum"), digest_bits=64, security=0),
)
