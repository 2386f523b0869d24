"""Hash rows and Fletcher-64: known answers, the numpy path against the plain loop."""

from __future__ import annotations

import hashlib
import os

import pytest

from pqbench.catalog import algorithms
from pqbench.catalog.algorithms.base import Algorithm
from pqbench.libraries.implementations import digests, python_hashes
from pqbench.libraries.implementations.fletcher import Fletcher64, fletcher64, fletcher64_reference
from pqbench.libraries.implementations.python_hashes import KNOWN_ANSWERS, PythonHashImplementation
from pqbench.platform.errors import VerificationError

PY = PythonHashImplementation()
HASHES = [pytest.param(a, id=a.name) for a in algorithms.all_algorithms() if a.kind == "hash"]


@pytest.mark.parametrize("alg", HASHES)
def test_every_hash_matches_its_known_answer_and_runs(alg: Algorithm) -> None:
    message, expected, _source = KNOWN_ANSWERS[alg.name]
    assert digests.hexdigest(alg.name, message) == expected
    assert PY.self_check(alg)
    prepared = PY.prepare(alg, "hash", 1024)
    assert prepared.run(0.002).ops > 0
    assert prepared.attributes["security_bits"] == alg.param("security_bits")


def test_a_wrong_library_answer_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = dict(python_hashes.KNOWN_ANSWERS)
    bad["SHA-256"] = (b"abc", "00" * 32, "deliberately wrong")
    monkeypatch.setattr(python_hashes, "KNOWN_ANSWERS", bad)
    with pytest.raises(VerificationError):
        PY.self_check(algorithms.by_name("SHA-256"))


def test_fletcher64_worked_example_and_apfs_verification() -> None:
    assert fletcher64((1).to_bytes(4, "little") + (2).to_bytes(4, "little")) == \
        0x00000004FFFFFFF8
    block = os.urandom(4096 - 8)
    check = fletcher64(block)
    # Folding the stored check value after the data must give zero sums (apfs-fuse order).
    f = Fletcher64(block)
    f.update(check.to_bytes(8, "little"))
    assert (f._s1, f._s2) == (0, 0)


@pytest.mark.parametrize("size", [0, 3, 4, 1000, 65536, 65540, 3 * 65536 + 4, 200003])
def test_fletcher64_vectorised_equals_reference(size: int) -> None:
    data = os.urandom(size)
    assert fletcher64(data) == fletcher64_reference(data)
    pieces = Fletcher64()
    for start in range(0, size, 4097):
        pieces.update(data[start:start + 4097])
    assert pieces.value() == fletcher64_reference(data)


def test_hash_spellings_resolve() -> None:
    names = [a.name for a in algorithms.resolve(["sha256", "blake3", "crc32c", "fletcher64",
                                                 "sha3-512", "blake2b512"])]
    assert names == ["SHA-256", "BLAKE3", "CRC32C", "Fletcher-64", "SHA3-512", "BLAKE2b"]


def test_streamed_sha256_equals_hashlib() -> None:
    data = os.urandom(100_000)
    hasher = digests.new_hasher("SHA-256")
    hasher.update(data[:12345])
    hasher.update(data[12345:])
    assert hasher.hexdigest() == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("name", sorted(digests.LIBRARIES))
def test_every_hasher_takes_the_memoryview_a_stream_hands_it(name: str) -> None:
    """`files hash` updates with slices of a reused bytearray; CRC32C's library takes only
    bytes and raised a TypeError at every size."""
    data = bytearray(os.urandom(70_001))
    view = memoryview(data)
    streamed = digests.new_hasher(name)
    for start in range(0, len(data), 16_384):
        streamed.update(view[start:start + 16_384])
    assert streamed.hexdigest() == digests.hexdigest(name, bytes(data))


def test_crc32c_gives_the_castagnoli_check_value() -> None:
    """RFC 3720 (iSCSI), appendix B.4: CRC32C of "123456789" is 0xE3069283."""
    hasher = digests.new_hasher("CRC32C")
    hasher.update(memoryview(bytearray(b"123456789")))
    assert hasher.hexdigest() == "e3069283"
