"""Hashes and checksums as a Python program computes them (`python` rows).

One op is one whole digest of `block_size` bytes: a fresh context, one update, the final
digest, as `openssl speed -evp sha256` does one EVP_Digest per block. Each row names the
library behind it (hashlib, blake3, zlib, google-crc32c, pqbench's numpy Fletcher-64).
Every algorithm must reproduce its published test value before it is timed.
"""

from __future__ import annotations

import os
import ssl
from importlib import metadata

from pqbench.catalog.algorithms.base import Algorithm
from pqbench.catalog.algorithms.ciphers import security_attributes
from pqbench.libraries.implementations.base import (
    Check,
    Implementation,
    PythonOperation,
    TimedOperation,
)
from pqbench.platform.errors import NotOfferedError, VerificationError

#: (message, expected hex digest, source) per algorithm.
KNOWN_ANSWERS: dict[str, tuple[bytes, str, str]] = {
    "SHA-256": (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                "FIPS 180-4 example, NIST CSRC SHA256.pdf"),
    "SHA-512": (b"abc", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                        "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
                "FIPS 180-4 example, NIST CSRC SHA512.pdf"),
    "SHA3-256": (b"abc", "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532",
                 "FIPS 202 example, NIST CSRC SHA3-256_Msg0/abc"),
    "SHA3-512": (b"abc", "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e"
                         "10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0",
                 "FIPS 202 example, NIST CSRC SHA3-512 abc"),
    "BLAKE2b": (b"abc", "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
                        "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923",
                "RFC 7693, Appendix A"),
    "BLAKE2s": (b"abc", "508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982",
                "RFC 7693, Appendix B"),
    "BLAKE3": (b"", "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
               "BLAKE3 test_vectors.json, input_len 0"),
    "CRC32": (b"123456789", "cbf43926", "CRC RevEng catalogue, CRC-32/ISO-HDLC check"),
    "CRC32C": (b"123456789", "e3069283", "CRC RevEng catalogue, CRC-32/ISCSI check"),
    "Fletcher-64": ((1).to_bytes(4, "little") + (2).to_bytes(4, "little"), "00000004fffffff8",
                    "hand-worked in pqbench/libraries/implementations/fletcher.py"),
}


class PythonHashImplementation(Implementation):
    name = "python"
    description = "hashlib (OpenSSL), blake3, zlib, google-crc32c and numpy, as Python calls them"
    kinds = frozenset({"hash"})

    def versions(self) -> dict[str, object]:
        found: dict[str, object] = {"hashlib_openssl": _hashlib_openssl()}
        for dist in ("blake3", "google-crc32c", "numpy"):
            try:
                found[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                found[dist] = None
        return found

    def offers(self, alg: Algorithm, operation: str) -> str | None:
        if alg.kind != "hash":
            return f"{alg.kind} algorithms are measured by another module"
        from pqbench.libraries.implementations import digests  # numpy (Fletcher-64) once a row asks

        if alg.name not in digests.LIBRARIES:
            return f"no Python library for {alg.name}"
        if operation != "hash":
            return f"{alg.name} has no {operation!r} operation"
        return None

    def self_check(self, alg: Algorithm) -> list[Check]:
        reason = self.offers(alg, "hash")
        if reason:
            raise NotOfferedError(reason)
        from pqbench.libraries.implementations import digests

        message, expected, source = KNOWN_ANSWERS[alg.name]
        got = digests.hexdigest(alg.name, message)
        if got != expected:
            raise VerificationError(f"{alg.name}: digest {got} != {expected} ({source})")
        pieces = digests.new_hasher(alg.name)
        data = os.urandom(1000)
        for start in range(0, len(data), 333):
            pieces.update(data[start:start + 333])
        if pieces.hexdigest() != digests.hexdigest(alg.name, data):
            raise VerificationError(f"{alg.name}: streamed digest differs from one-shot")
        return [Check("known answer", source), Check("streaming equals one-shot")]

    def prepare(self, alg: Algorithm, operation: str,
                block_size: int | None = None) -> TimedOperation:
        reason = self.offers(alg, operation)
        if reason:
            raise NotOfferedError(reason)
        from pqbench.libraries.implementations import digests

        size = block_size or 16384
        data = os.urandom(size)
        new = digests.LIBRARIES[alg.name].new

        def one_digest() -> bytes:
            hasher = new()
            hasher.update(data)
            return hasher.digest()

        attributes = {**security_attributes(alg), "library": digests.LIBRARIES[alg.name].library,
                      "per_op": "one whole digest (init, update, final)"}
        return PythonOperation(one_digest, {"digest": int(str(alg.param("digest_bits"))) // 8},
                               attributes)


def _hashlib_openssl() -> str:
    """The OpenSSL Python's hashlib and ssl modules were built against."""
    return ssl.OPENSSL_VERSION
