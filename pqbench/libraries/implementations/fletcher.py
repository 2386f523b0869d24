"""Fletcher-64 as APFS computes it for object headers, vectorised with numpy.

APFS stores in each object's first 8 bytes (``o_cksum``) a Fletcher-64 check value over the
rest of the object, read as little-endian 32-bit words, with sums modulo 2^32 - 1 (Apple File
System Reference, "Object Checksums"; the Linux driver's ``apfs_fletcher64``)::

    sum1 = sum of w[i]            sum2 = sum of the running sum1   (both mod 2^32 - 1)
    c1 = 0xFFFFFFFF - (sum1 + sum2) mod 0xFFFFFFFF
    c2 = 0xFFFFFFFF - (sum1 + c1) mod 0xFFFFFFFF
    check value = c2 << 32 | c1

Folding the check value's two words in after the data brings both sums to 0; that is how
a reader verifies an object (apfs-fuse folds o_cksum last the same way).

Worked example (the test value of tests/libraries/implementations/test_hashes.py): words [1, 2] give
sum1 = 3, sum2 = 4, c1 = 0xFFFFFFF8, c2 = 4, check value 0x00000004FFFFFFF8.

sum2 is sum over i of (n - i) * w[i]; numpy evaluates that per chunk of words and the
chunks are folded with the recurrence s2' = s2 + L * s1 + local2, s1' = s1 + local1. Input
whose length is not a multiple of 4 is zero-padded at the end (APFS objects never are).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

MODULUS = 0xFFFFFFFF
#: Words per numpy chunk: weights times words stay below 2^64 (2^14 * 2^14 * 2^32 = 2^60).
_CHUNK_WORDS = 1 << 14
_WEIGHTS = np.arange(_CHUNK_WORDS, 0, -1, dtype=np.uint64)


def _fold(s1: int, s2: int, words: NDArray[np.uint64]) -> tuple[int, int]:
    """Advance (sum1, sum2) over `words` (at most _CHUNK_WORDS of them)."""
    length = len(words)
    local1 = int(words.sum())
    local2 = int(np.dot(words, _WEIGHTS[_CHUNK_WORDS - length:]))
    return (s1 + local1) % MODULUS, (s2 + length * s1 + local2) % MODULUS


def _fold_many(s1: int, s2: int, words: NDArray[np.uint32]) -> tuple[int, int]:
    """Advance over any number of words: whole chunks at once, then the remainder."""
    full = len(words) // _CHUNK_WORDS * _CHUNK_WORDS
    if full:
        chunks = words[:full].astype(np.uint64).reshape(-1, _CHUNK_WORDS)
        local1 = chunks.sum(axis=1) % MODULUS
        local2 = (chunks @ _WEIGHTS) % MODULUS
        count = len(chunks)
        # Chunk c is followed by (count - 1 - c) chunks, each adding L * its sum1 to sum2.
        after = np.arange(count - 1, -1, -1, dtype=np.uint64) % MODULUS
        carried = int(((local1 * after) % MODULUS).sum() % MODULUS)
        s2 = (s2 + count * _CHUNK_WORDS * s1 + int(local2.sum() % MODULUS)
              + _CHUNK_WORDS * carried) % MODULUS
        s1 = (s1 + int(local1.sum() % MODULUS)) % MODULUS
    if full < len(words):
        s1, s2 = _fold(s1, s2, words[full:].astype(np.uint64))
    return s1, s2


def check_value(s1: int, s2: int) -> int:
    """The APFS o_cksum for running sums (sum1, sum2)."""
    c1 = MODULUS - (s1 + s2) % MODULUS
    c2 = MODULUS - (s1 + c1) % MODULUS
    return (c2 << 32) | c1


class Fletcher64:
    """A hashlib-like object: update() in pieces of any length, digest() at the end."""

    name = "fletcher64"
    digest_size = 8

    def __init__(self, data: bytes | bytearray | memoryview = b"") -> None:
        self._s1 = 0
        self._s2 = 0
        self._pending = b""  # < 4 bytes carried to the next update
        if data:
            self.update(data)

    def update(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data).cast("B")
        if self._pending:
            need = 4 - len(self._pending)
            self._pending += bytes(view[:need])
            view = view[need:]
            if len(self._pending) < 4:
                return
            self._s1, self._s2 = _fold_many(self._s1, self._s2,
                                            np.frombuffer(self._pending, dtype="<u4"))
            self._pending = b""
        whole = len(view) // 4 * 4
        if whole:
            words = np.frombuffer(view[:whole], dtype="<u4")
            self._s1, self._s2 = _fold_many(self._s1, self._s2, words)
        self._pending = bytes(view[whole:])

    def value(self) -> int:
        s1, s2 = self._s1, self._s2
        if self._pending:
            s1, s2 = _fold_many(s1, s2, np.frombuffer(self._pending.ljust(4, b"\0"),
                                                      dtype="<u4"))
        return check_value(s1, s2)

    def digest(self) -> bytes:
        return self.value().to_bytes(8, "little")  # as stored in o_cksum

    def hexdigest(self) -> str:
        return f"{self.value():016x}"


def fletcher64(data: bytes | bytearray | memoryview) -> int:
    """The APFS check value of `data` (the bytes after o_cksum)."""
    return Fletcher64(data).value()


def fletcher64_reference(data: bytes) -> int:
    """The plain loop of the APFS reference, one word at a time (for tests)."""
    padded = data + b"\0" * (-len(data) % 4)
    s1 = s2 = 0
    for i in range(0, len(padded), 4):
        s1 = (s1 + int.from_bytes(padded[i:i + 4], "little")) % MODULUS
        s2 = (s2 + s1) % MODULUS
    return check_value(s1, s2)
