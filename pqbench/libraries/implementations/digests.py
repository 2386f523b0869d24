"""One hashlib-like object per hash row, from the well-kept library that provides it.

SHA-2, SHA-3 and BLAKE2 come from hashlib (OpenSSL's code for SHA-2/SHA-3, libb2-derived
code for BLAKE2), BLAKE3 from the `blake3` package (the reference Rust crate), CRC32 from
zlib, CRC32C from `google-crc32c` (hardware CRC32 instructions where present), Fletcher-64
from implementations.fletcher (no library offers the APFS variant). Every object has update() and
hexdigest(), so the speed rows and `pqbench files hash` share one path.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import blake3
import google_crc32c

from pqbench.libraries.implementations.fletcher import Fletcher64


class Hasher(Protocol):
    def update(self, data: Any, /) -> object: ...

    def digest(self) -> bytes: ...

    def hexdigest(self) -> str: ...


class Crc32:
    """zlib.crc32 (ISO-HDLC polynomial, as gzip and PNG) behind the hashlib shape."""

    def __init__(self) -> None:
        self.value = 0

    def update(self, data: Any) -> None:
        self.value = zlib.crc32(data, self.value)

    def digest(self) -> bytes:
        return self.value.to_bytes(4, "big")

    def hexdigest(self) -> str:
        return f"{self.value:08x}"


class Crc32c:
    """google_crc32c (Castagnoli polynomial, RFC 3720) behind the hashlib shape.

    Its C extension takes only `bytes` (a buffer it need not release): a stream's
    memoryview of a reused bytearray is copied into one first, a copy `files hash` times
    with the hash, as any caller of this library would make it."""

    def __init__(self) -> None:
        self.value = 0

    def update(self, data: Any) -> None:
        self.value = google_crc32c.extend(
            self.value, data if isinstance(data, bytes) else bytes(data))

    def digest(self) -> bytes:
        return self.value.to_bytes(4, "big")

    def hexdigest(self) -> str:
        return f"{self.value:08x}"


@dataclass(frozen=True)
class DigestLibrary:
    """Which library computes an algorithm, and how to make a fresh hasher."""

    library: str
    new: Callable[[], Hasher]
    #: Whether update() releases the GIL on large buffers (lets reading overlap hashing).
    releases_gil: bool


def _hashlib(name: str) -> DigestLibrary:
    # The named constructors skip hashlib.new's lookup on every call.
    return DigestLibrary("hashlib", getattr(hashlib, name), True)


LIBRARIES: dict[str, DigestLibrary] = {
    "SHA-256": _hashlib("sha256"),
    "SHA-512": _hashlib("sha512"),
    "SHA3-256": _hashlib("sha3_256"),
    "SHA3-512": _hashlib("sha3_512"),
    "BLAKE2b": _hashlib("blake2b"),
    "BLAKE2s": _hashlib("blake2s"),
    "BLAKE3": DigestLibrary("blake3", blake3.blake3, True),
    "CRC32": DigestLibrary("zlib", Crc32, True),
    "CRC32C": DigestLibrary("google-crc32c", Crc32c, False),
    "Fletcher-64": DigestLibrary("numpy (pqbench.fletcher)", Fletcher64, True),
}


def new_hasher(algorithm: str) -> Hasher:
    """A fresh hasher for a canonical hash name (see pqbench.catalog.algorithms.hashes)."""
    return LIBRARIES[algorithm].new()


def hexdigest(algorithm: str, data: bytes) -> str:
    hasher = new_hasher(algorithm)
    hasher.update(data)
    return hasher.hexdigest()
