"""`pqbench files hash`: per file, a read-only pass and an overlapped hash pass.

Cache modes, so each figure says what it measured:

* ``cold`` (default): drop the file's pages before each pass (cache.drop) and report the
  residency actually found at the start of the pass; a cold figure is a device figure.
* ``warm``: read the file once, untimed, before the passes: page-cache figures.
* ``as-is``: measure the file as found (the read pass then warms the hash pass).

A file whose size, mtime or inode differ between the start and the end, or whose byte
count differs from its size, is flagged as changed: its figures and digest are kept but
marked. With --jobs N the files are measured by N processes (no GIL shared).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from pqbench.errors import InputFileError, UsageError
from pqbench.files import cache, inputs, stream
from pqbench.implementations.digests import LIBRARIES, new_hasher
from pqbench.record.summary import summarize

CacheMode = Literal["cold", "warm", "as-is"]
CACHE_MODES: tuple[CacheMode, ...] = ("cold", "warm", "as-is")


@dataclass(frozen=True)
class FileHash:
    """One file measured: both passes, the digest, and what the page cache held."""

    path: str
    size: int
    algorithm: str
    library: str
    digest: str
    read: stream.Pass
    hashed: stream.Pass
    cache_mode: str
    resident_before: float | None  # as the user left the file
    read_resident: float | None  # at the start of each pass
    hash_resident: float | None
    cache_note: str | None = None  # why residency is unknown, or how dropping went
    flags: tuple[str, ...] = ()
    #: With repeats, every timed pass in order: read, hash, read, hash ... (`read` and
    #: `hashed` are the first of each); empty for one pass each.
    reads: tuple[stream.Pass, ...] = ()
    hashes: tuple[stream.Pass, ...] = ()

    @property
    def read_passes(self) -> tuple[stream.Pass, ...]:
        return self.reads or (self.read,)

    @property
    def hash_passes(self) -> tuple[stream.Pass, ...]:
        return self.hashes or (self.hashed,)

    @property
    def cached(self) -> bool | None:
        """Whether the hash pass read from the page cache (>= 99 % resident)."""
        return cache.Residency(self.hash_resident).cached

    def as_row(self) -> dict[str, Any]:
        empty = self.read.nbytes == 0 or self.hashed.nbytes == 0
        read, read_spread = (None, None) if empty else _rates(self.read_passes)
        hashed, hash_spread = (None, None) if empty else _rates(self.hash_passes)
        return {"path": self.path, "size": self.size, "algorithm": self.algorithm,
                "library": self.library,
                "read_bytes_per_sec": read, "hash_bytes_per_sec": hashed,
                "runs": len(self.hash_passes),
                "read_spread": read_spread, "hash_spread": hash_spread,
                "note": "empty file: no rate (bytes per second over 0 bytes is not defined)"
                if empty else None,
                "read_seconds": self.read.elapsed_ns / 1e9,
                "hash_seconds": self.hashed.elapsed_ns / 1e9,
                "digest": self.digest, "cached": self.cached, "cache_mode": self.cache_mode,
                "resident_before": self.resident_before, "read_resident": self.read_resident,
                "hash_resident": self.hash_resident, "cache_note": self.cache_note,
                "flags": list(self.flags), "error": None}


@dataclass(frozen=True)
class FileFailure:
    """A path that could not be measured, and why (the other files still are)."""

    path: str
    algorithm: str
    error: str
    flags: tuple[str, ...] = field(default=())

    def as_row(self) -> dict[str, Any]:
        return {"path": self.path, "size": None, "algorithm": self.algorithm,
                "read_bytes_per_sec": None, "hash_bytes_per_sec": None, "note": None,
                "digest": None,
                "cached": None, "flags": list(self.flags), "error": self.error}


FileOutcome = FileHash | FileFailure


def _rates(passes: Sequence[stream.Pass]) -> tuple[float, float | None]:
    """The passes' mean rate (bytes per second, as hyperfine reports a mean) and its
    coefficient of variation (None for one pass), from the run record's one summary."""
    found = summarize([p.bytes_per_sec for p in passes])
    return found.mean, found.cv if found.n > 1 else None


def _identity(fd: int) -> tuple[int, int, int, int]:
    info = os.fstat(fd)
    return info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev


def _changes(before: tuple[int, int, int, int], after: tuple[int, int, int, int],
             passes: Sequence[stream.Pass]) -> list[str]:
    flags = []
    if before[0] != after[0]:
        flags.append(f"changed: size {before[0]} -> {after[0]} bytes during measurement")
    if before[1] != after[1]:
        flags.append("changed: modification time moved during measurement")
    if before[2:] != after[2:]:
        flags.append("changed: the file was replaced during measurement")
    for name, one in zip(("read", "hash"), passes, strict=True):
        if one.nbytes != before[0]:
            flags.append(f"changed: the {name} pass saw {one.nbytes} of {before[0]} bytes")
    return flags


def _prepare_cache(fd: int, mode: CacheMode) -> tuple[cache.Residency, str | None]:
    """Bring the file to the cache state `mode` asks for; returns residency and a note."""
    note = None
    if mode == "cold":
        note = cache.drop(fd)
    elif mode == "warm":
        stream.read_pass(fd)
    found = cache.residency(fd)
    return found, found.reason or (None if mode != "cold" else f"dropped with {note}")


def hash_file(path: str, algorithm: str, mode: CacheMode = "cold",
              overlap: bool = True, runs: int = 1, warmup: int = 0) -> FileOutcome:
    """Measure one file; never raises for a bad file, returns a FileFailure instead.

    `overlap` reads on a second thread while hashing; without a spare core it only adds
    contention, so parallel jobs filling every core hash in turn instead. `warmup` untimed
    read and hash passes first, then `runs` timed passes that alternate a plain read and a
    hash, each after bringing the file to `mode`'s cache state: a read and the hash after it
    form a pair, which drift on the machine hits alike.
    """
    try:
        fd = inputs.open_regular(path)
    except InputFileError as exc:
        return FileFailure(path, algorithm, str(exc))
    try:
        before = _identity(fd)
        as_found = cache.residency(fd)
        hash_pass = stream.hash_pass if overlap else stream.hash_pass_in_turn
        for _ in range(warmup):
            _prepare_cache(fd, mode)
            stream.read_pass(fd)
            hash_pass(fd, new_hasher(algorithm))
        reads, hashes, states = [], [], []
        for _ in range(runs):
            read_state, note = _prepare_cache(fd, mode)
            reads.append(stream.read_pass(fd))
            hash_state, _ = _prepare_cache(fd, mode if mode == "cold" else "as-is")
            hasher = new_hasher(algorithm)
            hashes.append(hash_pass(fd, hasher))
            states.append((read_state, hash_state))
        after = _identity(fd)
    except OSError as exc:
        return FileFailure(path, algorithm, f"{path}: read failed: {exc.strerror or exc}")
    finally:
        os.close(fd)
    read_state, hash_state = states[0]
    changes = {flag: None for r, h in zip(reads, hashes, strict=True)
               for flag in _changes(before, after, (r, h))}
    return FileHash(
        path=path, size=before[0], algorithm=algorithm, library=LIBRARIES[algorithm].library,
        digest=hasher.hexdigest(), read=reads[0], hashed=hashes[0], cache_mode=mode,
        resident_before=as_found.fraction, read_resident=read_state.fraction,
        hash_resident=hash_state.fraction, cache_note=note, flags=tuple(changes),
        reads=tuple(reads) if runs > 1 else (), hashes=tuple(hashes) if runs > 1 else ())


def _hash_file_args(args: tuple[str, str, CacheMode, bool, int, int]) -> FileOutcome:
    return hash_file(*args)


def _usable_cpus() -> int:
    getter = getattr(os, "sched_getaffinity", None)
    return len(getter(0)) if getter else (os.cpu_count() or 1)


def hash_files(paths: Sequence[str], algorithm: str, mode: CacheMode = "cold",
               jobs: int = 1, runs: int = 1, warmup: int = 0) -> list[FileOutcome]:
    """Measure every path, `jobs` at a time (processes), results in the order given."""
    return list(iter_hashes(paths, algorithm, mode, jobs, runs, warmup))


def iter_hashes(paths: Sequence[str], algorithm: str, mode: CacheMode = "cold",
                jobs: int = 1, runs: int = 1, warmup: int = 0) -> Iterator[FileOutcome]:
    """`hash_files` one outcome at a time, so an interrupted caller keeps those done."""
    if algorithm not in LIBRARIES:
        raise UsageError(f"{algorithm} cannot hash files; choose from {', '.join(LIBRARIES)}")
    if jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if mode not in CACHE_MODES:
        raise UsageError(f"--cache must be one of {', '.join(CACHE_MODES)}")
    workers = min(jobs, len(paths))
    overlap = workers < _usable_cpus()  # a reader thread needs a core of its own
    if runs < 1 or warmup < 0:
        raise UsageError("--runs must be at least 1 and --warmup at least 0")
    work = [(os.fspath(p), algorithm, mode, overlap or workers == 1, runs, warmup)
            for p in paths]
    if workers <= 1:
        yield from (_hash_file_args(w) for w in work)
        return
    pool = ProcessPoolExecutor(max_workers=workers)
    try:
        yield from pool.map(_hash_file_args, work)
    finally:  # interrupted: files not started are dropped, not waited for
        pool.shutdown(wait=False, cancel_futures=True)


def aggregate_hash_rate(outcomes: Sequence[FileOutcome]) -> float | None:
    """Bytes hashed by all files over the span from the first hash start to the last end.

    perf_counter_ns is CLOCK_MONOTONIC on Linux, one clock for all processes.
    """
    done = [o for o in outcomes if isinstance(o, FileHash)]
    if not done:
        return None
    start = min(o.hashed.started_ns for o in done)
    end = max(o.hashed.started_ns + o.hashed.elapsed_ns for o in done)
    return sum(o.hashed.nbytes for o in done) * 1e9 / (end - start) if end > start else None
