"""`pqbench files corpus`: plain versus encrypted writes and reads over random files.

Method. File sizes are drawn log-uniformly from 2 MB to 2 GB (capped by the total), in
whole 4096-byte sectors, until they add up to --total. Each phase visits the files in a
fresh random order:

1. create: 1 MiB writes of random bytes, then fsync, timed together, so the figure
   is what reached the device, not the page cache;
2. plain read: the file's pages are dropped first (posix_fadvise DONTNEED after the fsync
   made them clean), residency is recorded, then the file is read;
3. plain write and read back: each file copied to a new file (read, write, fsync, drop,
   read back, remove): the same flow as the encrypted writes below, interleaved with them
   file by file in random order, so plain and encrypted differ only by the cipher;
4. encrypted write and read, AES-256-XTS as APFS Encrypted: every 4096-byte sector is one
   XTS data unit whose tweak is the sector number (IEEE 1619 tweak, little-endian). APFS
   itself encrypts in 512-byte units (as apfs-fuse decrypts it); the 4096-byte unit used
   here costs fewer Python calls per byte and is what this benchmark reports;
5. encrypted write and read, AES-256-GCM: each 1 MiB record sealed with its index as the
   nonce and a 16-byte tag, as record-based file encryption does; reading checks every tag;
6. hash: SHA-256 of each file by the overlapped hash pass, from a dropped cache.

Encrypted copies are removed as soon as they are measured. Everything lives in one fresh
directory that is removed at the end, also on Ctrl-C, SIGTERM and on a full disk (ENOSPC, or
EFBIG under a file-size limit: SIGXFSZ is ignored so the write fails instead of killing).
"""

from __future__ import annotations

import errno
import math
import os
import random
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from pqbench.libraries.implementations.digests import new_hasher
from pqbench.measure.files import cache, stream, xts
from pqbench.platform import interrupts
from pqbench.platform.errors import PqbenchError, UsageError

MIN_FILE = 2_000_000
MAX_FILE = 2_000_000_000
SECTOR = 4096
RECORD = 1 << 20
TAG = 16
DEFAULT_TOTAL = 256 << 20


class CorpusError(PqbenchError):
    """The corpus could not be written; what was written has been removed."""


@dataclass(frozen=True)
class Step:
    """One operation on one file: bytes moved, nanoseconds taken."""

    operation: str  # create, read, write, encrypted-write, encrypted-read, hash
    algorithm: str  # plain, AES-256-XTS, AES-256-GCM, SHA-256
    path: str
    size: int
    nbytes: int
    elapsed_ns: int
    resident: float | None = None  # page cache residency before a read
    digest: str | None = None

    @property
    def bytes_per_sec(self) -> float:
        return self.nbytes * 1e9 / self.elapsed_ns if self.elapsed_ns else 0.0


@dataclass
class CorpusResult:
    directory: str
    sizes: list[int]
    steps: list[Step] = field(default_factory=list)
    removed: bool = False
    #: Stopped by Ctrl-C or SIGTERM: `steps` holds what completed, the files are removed.
    interrupted: bool = False

    def summary(self) -> list[tuple[str, str, int, float]]:
        """(operation, algorithm, bytes, aggregate bytes/s) in phase order."""
        totals: dict[tuple[str, str], list[int]] = {}
        for s in self.steps:
            entry = totals.setdefault((s.operation, s.algorithm), [0, 0])
            entry[0] += s.nbytes
            entry[1] += s.elapsed_ns
        return [(op, alg, n, n * 1e9 / ns if ns else 0.0) for (op, alg), (n, ns)
                in totals.items()]


def plan_sizes(total: int, rng: random.Random) -> list[int]:
    """Log-uniform sizes in [2 MB, 2 GB], whole sectors, adding up to about `total`."""
    if total < MIN_FILE:
        raise UsageError(f"--total must be at least {MIN_FILE} bytes (one 2 MB file)")
    sizes: list[int] = []
    left = total
    while left >= MIN_FILE:
        high = min(MAX_FILE, left)
        size = int(math.exp(rng.uniform(math.log(MIN_FILE), math.log(high))))
        if left - size < MIN_FILE:
            size = left  # the remainder is too small for a file of its own
        size = max(size // SECTOR * SECTOR, SECTOR)
        sizes.append(size)
        left -= size
    return sizes


def check_space(directory: str, sizes: list[int]) -> None:
    """Refuse unless the plain files, the largest encrypted copy and a margin fit."""
    vfs = os.statvfs(directory)
    free = vfs.f_bavail * vfs.f_frsize
    total = sum(sizes)
    largest = max(sizes) + (max(sizes) // RECORD + 1) * TAG
    needed = total + largest + max(64 << 20, total // 10)
    if free < needed:
        raise CorpusError(f"not enough free space in {directory}: the corpus needs "
                          f"{needed / 1e9:.2f} GB with its margin, {free / 1e9:.2f} GB free; "
                          "choose a smaller --total or another --dir")


@contextmanager
def _full_disk_is_an_error() -> Iterator[None]:
    """Make a file-size limit fail a write with EFBIG instead of killing (SIGXFSZ)."""
    if threading.current_thread() is not threading.main_thread() or \
            not hasattr(signal, "SIGXFSZ"):
        yield
        return
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGXFSZ, previous)


def _write_all(fd: int, data: memoryview) -> None:
    while data:
        written = os.write(fd, data)
        data = data[written:]


def _write_file(path: str, size: int, chunks: Iterator[bytes] | None, pattern: bytes) -> int:
    """Write (`chunks` or repeated `pattern`), fsync; returns elapsed ns."""
    started = time.perf_counter_ns()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        if chunks is None:
            left = size
            while left:
                piece = memoryview(pattern)[:min(left, len(pattern))]
                _write_all(fd, piece)
                left -= len(piece)
        else:
            for chunk in chunks:
                _write_all(fd, memoryview(chunk))
        os.fsync(fd)
    finally:
        os.close(fd)
    return time.perf_counter_ns() - started


def _read_chunks(path: str, chunk: int) -> Iterator[bytes]:
    with open(path, "rb", buffering=0) as handle:
        while piece := handle.read(chunk):
            yield piece


def _dropped(path: str) -> float | None:
    fd = os.open(path, os.O_RDONLY)
    try:
        cache.drop(fd)
        return cache.residency(fd).fraction
    finally:
        os.close(fd)


def xts_implementation() -> str:
    """Which XTS the corpus uses (see pqbench.measure.files.xts)."""
    return xts.implementation()


def _xts(key: bytes, data: bytes, first_sector: int, encrypt: bool) -> bytes:
    return xts.units(key, data, first_sector, SECTOR, encrypt)


#: (algorithm, seal(record index, bytes), unseal(record index, bytes), stored record size)
Scheme = tuple[str, Callable[[int, bytes], bytes], Callable[[int, bytes], bytes], int]


class _Run:
    """One corpus run's state: keys, the random source, and the steps so far."""

    def __init__(self, result: CorpusResult, rng: random.Random) -> None:
        self.result, self.rng = result, rng
        self.pattern = rng.randbytes(RECORD)
        self.xts_key = os.urandom(64)
        self.gcm = AESGCM(os.urandom(32))

    def path(self, index: int, suffix: str = "") -> str:
        return os.path.join(self.result.directory, f"file{index:04d}{suffix}.bin")

    def order(self) -> list[int]:
        indices = list(range(len(self.result.sizes)))
        self.rng.shuffle(indices)
        return indices

    def record(self, *args: object, **kwargs: object) -> None:
        self.result.steps.append(Step(*args, **kwargs))  # type: ignore[arg-type]

    def plain(self) -> None:
        for i in self.order():
            size = self.result.sizes[i]
            self.record("create", "plain", self.path(i), size, size,
                        _write_file(self.path(i), size, None, self.pattern))
        for i in self.order():
            resident = _dropped(self.path(i))
            fd = os.open(self.path(i), os.O_RDONLY)
            try:
                done = stream.read_pass(fd)
            finally:
                os.close(fd)
            self.record("read", "plain", self.path(i), self.result.sizes[i], done.nbytes,
                        done.elapsed_ns, resident)

    def writes(self, schemes: list[Scheme]) -> None:
        """Plain and encrypted writes, interleaved: per file (in random order) every scheme
        once, in random order. Each writes a new file from the source (read, transform,
        write, fsync), drops it, reads it back and removes it, so the schemes differ only
        by the cipher and meet the device in the same state. (Measured in separate phases,
        whichever ran later was up to 2x faster on a thin-provisioned virtual disk.)"""
        for i in self.order():
            for scheme in self.rng.sample(schemes, len(schemes)):
                self._write_and_read_back(i, scheme)

    def _write_and_read_back(self, i: int, scheme: Scheme) -> None:
        algorithm, seal, unseal, stored_record = scheme
        plain = algorithm == "plain"
        size, source, target = self.result.sizes[i], self.path(i), self.path(i, ".out")
        chunks = (seal(n, piece) for n, piece in enumerate(_read_chunks(source, RECORD)))
        self.record("write" if plain else "encrypted-write", algorithm, source, size, size,
                    _write_file(target, size, chunks, b""))
        resident = _dropped(target)
        started = time.perf_counter_ns()
        read = sum(len(unseal(n, piece)) for n, piece
                   in enumerate(_read_chunks(target, stored_record)))
        self.record("read" if plain else "encrypted-read", algorithm, source, size, read,
                    time.perf_counter_ns() - started, resident)
        os.unlink(target)

    def hashes(self) -> None:
        for i in self.order():
            resident = _dropped(self.path(i))
            fd = os.open(self.path(i), os.O_RDONLY)
            hasher = new_hasher("SHA-256")
            try:
                done = stream.hash_pass(fd, hasher)
            finally:
                os.close(fd)
            self.record("hash", "SHA-256", self.path(i), self.result.sizes[i], done.nbytes,
                        done.elapsed_ns, resident, hasher.hexdigest())

    def all_phases(self) -> None:
        sectors = RECORD // SECTOR
        self.plain()
        key = self.xts_key
        self.writes([
            ("plain", lambda n, p: p, lambda n, p: p, RECORD),
            ("AES-256-XTS", lambda n, p: _xts(key, p, n * sectors, True),
             lambda n, p: _xts(key, p, n * sectors, False), RECORD),
            ("AES-256-GCM", lambda n, p: self.gcm.encrypt(n.to_bytes(12, "big"), p, None),
             lambda n, p: self.gcm.decrypt(n.to_bytes(12, "big"), p, None), RECORD + TAG),
        ])
        self.hashes()


def run_corpus(total: int = DEFAULT_TOTAL, directory: str | None = None,
               seed: int | None = None) -> CorpusResult:
    """Generate, measure and remove the corpus; raises CorpusError on a full disk."""
    parent = directory or tempfile.gettempdir()
    if not os.path.isdir(parent):
        raise UsageError(f"--dir {parent} is not a directory")
    rng = random.Random(seed)
    sizes = plan_sizes(total, rng)
    check_space(parent, sizes)
    try:
        scratch = tempfile.mkdtemp(prefix="pqbench-corpus-", dir=parent)
    except OSError as exc:
        raise CorpusError(f"cannot create a directory in {parent}: {exc.strerror}") from None
    result = CorpusResult(scratch, sizes)
    try:
        with _full_disk_is_an_error():
            _Run(result, rng).all_phases()
    except KeyboardInterrupt:
        result.interrupted = True
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            raise CorpusError(f"disk full while writing the corpus in {parent} "
                              f"({exc.strerror}); everything it wrote was removed") from None
        raise CorpusError(f"corpus failed in {scratch}: {exc}; everything it wrote was "
                          "removed") from None
    finally:
        with interrupts.deferred():  # a second signal must not leave half the corpus
            shutil.rmtree(scratch, ignore_errors=True)
        result.removed = not os.path.exists(scratch)
    return result
