"""`pqbench files hash`: per file, a read-only pass and a pass of each hash asked for.

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
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from pqbench.data.record.summary import summarize
from pqbench.libraries.implementations.digests import LIBRARIES, new_hasher
from pqbench.measure.files import cache, inputs, stream
from pqbench.platform.errors import InputFileError, UsageError

CacheMode = Literal["cold", "warm", "as-is"]
CACHE_MODES: tuple[CacheMode, ...] = ("cold", "warm", "as-is")

#: Cycles taken by default, at least: the fewest whose paired interval reaches 99 % (Tukey's
#: signed-rank interval over n pairs covers at most 1 - 2 / 2^n: 98.4 % with 7, 99.2 % with
#: 8). A single pass proves nothing: one read and one hash compare two moments, not two
#: costs.
MIN_CYCLES = 8
#: By default, cycles are added while an answer is undecided, up to this many, and not
#: after this many seconds of timed passes over the file.
MAX_CYCLES = 30
AUTO_SECONDS = 30.0
#: An interval whose ends lie within this factor of each other answers "the same speed"
#: as well as one that excludes 1 answers "faster" or "slower".
SAME_WITHIN = 1.04


@dataclass(frozen=True)
class Digest:
    """One hash over a file: its timed passes in order, the digest, and the share of the
    file the page cache held at the start of its first pass."""

    algorithm: str
    library: str
    digest: str
    passes: tuple[stream.Pass, ...]
    resident: float | None

    @property
    def cached(self) -> bool | None:
        """Whether the hash pass read from the page cache (>= 99 % resident)."""
        return cache.Residency(self.resident).cached


@dataclass(frozen=True)
class FileHash:
    """One file measured: the read passes, each hash's passes and digest, and what the page
    cache held. Pass i of every hash and read pass i were taken in one cycle, moments
    apart: they pair."""

    path: str
    size: int
    reads: tuple[stream.Pass, ...]
    digests: tuple[Digest, ...]
    cache_mode: str
    resident_before: float | None  # as the user left the file
    read_resident: float | None  # at the start of the first read pass
    cache_note: str | None = None  # why residency is unknown, or how dropping went
    flags: tuple[str, ...] = ()

    # The first hash, for callers that ask for one.
    @property
    def algorithm(self) -> str:
        return self.digests[0].algorithm

    @property
    def digest(self) -> str:
        return self.digests[0].digest

    @property
    def read(self) -> stream.Pass:
        return self.reads[0]

    @property
    def hashed(self) -> stream.Pass:
        return self.digests[0].passes[0]

    @property
    def cached(self) -> bool | None:
        return self.digests[0].cached

    def as_rows(self) -> list[dict[str, Any]]:
        """One row per hash, with the read passes beside it: medians (the figure the
        stored row holds) and coefficients of variation."""
        empty = self.size == 0 or self.read.nbytes == 0
        read, read_cv = (None, None) if empty else _rates(self.reads)
        rows = []
        for one in self.digests:
            hashed, hash_cv = (None, None) if empty else _rates(one.passes)
            rows.append({
                "path": self.path, "size": self.size, "algorithm": one.algorithm,
                "library": one.library, "read_bytes_per_sec": read,
                "hash_bytes_per_sec": hashed, "runs": len(one.passes),
                "read_cv": read_cv, "hash_cv": hash_cv,
                "note": "empty file: no rate (bytes per second over 0 bytes is not "
                        "defined)" if empty else None,
                "read_seconds": [p.elapsed_ns / 1e9 for p in self.reads],
                "hash_seconds": [p.elapsed_ns / 1e9 for p in one.passes],
                "digest": one.digest, "cached": one.cached, "cache_mode": self.cache_mode,
                "resident_before": self.resident_before,
                "read_resident": self.read_resident, "hash_resident": one.resident,
                "cache_note": self.cache_note, "flags": list(self.flags), "error": None})
        return rows


@dataclass(frozen=True)
class FileFailure:
    """A path that could not be measured, and why (the other files still are)."""

    path: str
    algorithm: str
    error: str
    flags: tuple[str, ...] = field(default=())

    def as_rows(self) -> list[dict[str, Any]]:
        return [{"path": self.path, "size": None, "algorithm": self.algorithm,
                 "read_bytes_per_sec": None, "hash_bytes_per_sec": None, "note": None,
                 "digest": None, "cached": None, "flags": list(self.flags),
                 "error": self.error}]


FileOutcome = FileHash | FileFailure


def _rates(passes: Sequence[stream.Pass]) -> tuple[float, float | None]:
    """The passes' median rate (bytes per second: the figure a stored row holds, as every
    pqbench row) and their coefficient of variation (None for one pass), from the run
    record's one summary."""
    found = summarize([p.bytes_per_sec for p in passes])
    return found.median, found.cv if found.n > 1 else None


def _identity(fd: int) -> tuple[int, int, int, int]:
    info = os.fstat(fd)
    return info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev


def _changes(before: tuple[int, int, int, int], after: tuple[int, int, int, int],
             passes: Sequence[tuple[str, stream.Pass]]) -> list[str]:
    flags = []
    if before[0] != after[0]:
        flags.append(f"changed: size {before[0]} -> {after[0]} bytes during measurement")
    if before[1] != after[1]:
        flags.append("changed: modification time moved during measurement")
    if before[2:] != after[2:]:
        flags.append("changed: the file was replaced during measurement")
    for name, one in passes:
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


def _costs(passes: Sequence[stream.Pass]) -> list[float]:
    """Each pass's time per byte (the cost a paired ratio compares)."""
    return [p.elapsed_ns / max(p.nbytes, 1) for p in passes]


def answered(reads: Sequence[stream.Pass], passes: Sequence[Sequence[stream.Pass]]) -> bool:
    """Whether the passes so far answer both questions of a `files hash` run: each hash
    against reading the file, and each further hash against the first, each a paired
    ratio (`analysis.ratios.paired`) whose interval reaches 99 % and either lies on one
    side of 1 (faster or slower) or within `SAME_WITHIN` (the same speed)."""
    from pqbench.analysis.ratios import LEVEL, paired

    first = _costs(passes[0]) if passes else []
    questions = [(_costs(one), _costs(reads)) for one in passes]
    questions += [(_costs(one), first) for one in passes[1:]]
    for numerator, denominator in questions:
        found = paired(numerator, denominator)
        if found is None:
            return False
        _, low, high, level = found
        if level < LEVEL or not (low > 1 or high < 1 or high <= low * SAME_WITHIN):
            return False
    return True


def more_cycles(done: int, runs: int | None, reads: Sequence[stream.Pass],
                passes: Sequence[Sequence[stream.Pass]], seconds: float) -> bool:
    """Whether to time another cycle: `runs` of them where it is given; by default at
    least `MIN_CYCLES`, then more while the answers are undecided (`answered`), up to
    `MAX_CYCLES` and `AUTO_SECONDS` of timed passes."""
    if runs is not None:
        return done < runs
    if done < MIN_CYCLES:
        return True
    return done < MAX_CYCLES and seconds < AUTO_SECONDS and not answered(reads, passes)


def hash_file(path: str, algorithms: str | Sequence[str], mode: CacheMode = "cold",
              overlap: bool = False, runs: int | None = 1, warmup: int = 0,
              on_pass: Callable[[str], None] | None = None) -> FileOutcome:
    """Measure one file with one hash or several; never raises for a bad file, returns a
    FileFailure instead.

    Each chunk is read and then hashed in one thread (`stream.hash_pass_in_turn`), or with
    `overlap` read by a second thread while the first hashes (`stream.hash_pass`): on the
    two-core machines measured the reader thread never made a pass faster when the
    process had its cores, and only looked faster by taking CPU from other work
    (docs: measurements, "Hashing a file: one thread or two"). `warmup` untimed
    cycles first, then `runs` timed cycles (None: as many as the answers need,
    `more_cycles`); a cycle is a plain read, then one pass of each hash, in an order that
    rotates from cycle to cycle (SHA-256 then SHA-512, then SHA-512 then SHA-256 ...), each
    pass after bringing the file to `mode`'s cache state. Pass i of every hash and read pass
    i then pair: drift on the machine hits them alike, and neither hash always runs first.
    `on_pass` is called as each timed pass starts, with its name.
    """
    names = (algorithms,) if isinstance(algorithms, str) else tuple(algorithms)
    try:
        fd = inputs.open_regular(path)
    except InputFileError as exc:
        return FileFailure(path, names[0], str(exc))
    hash_pass = stream.hash_pass if overlap else stream.hash_pass_in_turn
    told = on_pass or (lambda _name: None)
    passes: dict[str, list[stream.Pass]] = {name: [] for name in names}
    hexdigests: dict[str, str] = {}
    residents: dict[str, float | None] = {}
    reads: list[stream.Pass] = []
    read_resident: float | None = None
    note: str | None = None
    try:
        before = _identity(fd)
        as_found = cache.residency(fd)
        cycle = -warmup
        while cycle < 0 or more_cycles(cycle, runs, reads, [passes[n] for n in names],
                                       sum(p.elapsed_ns for p in seen_passes(reads, passes))
                                       / 1e9):
            timed = cycle >= 0
            if timed:
                told("read")
            state, found_note = _prepare_cache(fd, mode)
            one_read = stream.read_pass(fd)
            if timed:
                reads.append(one_read)
                if cycle == 0:
                    read_resident, note = state.fraction, found_note
            turn = cycle % len(names)
            for name in names[turn:] + names[:turn]:
                if timed:
                    told(name)
                state, _ = _prepare_cache(fd, mode if mode == "cold" else "as-is")
                hasher = new_hasher(name)
                one_hash = hash_pass(fd, hasher)
                if timed:
                    passes[name].append(one_hash)
                    hexdigests[name] = hasher.hexdigest()
                    residents.setdefault(name, state.fraction)
            cycle += 1
        after = _identity(fd)
    except OSError as exc:
        return FileFailure(path, names[0], f"{path}: read failed: {exc.strerror or exc}")
    finally:
        os.close(fd)
    seen = [("read", p) for p in reads] + [("hash", p) for name in names
                                           for p in passes[name]]
    changes = dict.fromkeys(_changes(before, after, seen))
    return FileHash(
        path=path, size=before[0], reads=tuple(reads),
        digests=tuple(Digest(name, LIBRARIES[name].library, hexdigests[name],
                             tuple(passes[name]), residents[name]) for name in names),
        cache_mode=mode, resident_before=as_found.fraction, read_resident=read_resident,
        cache_note=note, flags=tuple(changes))


def seen_passes(reads: Sequence[stream.Pass], passes: dict[str, list[stream.Pass]]
                ) -> list[stream.Pass]:
    """Every timed pass so far, reads and hashes."""
    return [*reads, *(p for one in passes.values() for p in one)]


def _hash_file_args(args: tuple[str, tuple[str, ...], CacheMode, bool, int | None, int]
                    ) -> FileOutcome:
    return hash_file(*args)


def _usable_cpus() -> int:
    getter = getattr(os, "sched_getaffinity", None)
    return len(getter(0)) if getter else (os.cpu_count() or 1)


def hash_files(paths: Sequence[str], algorithms: str | Sequence[str],
               mode: CacheMode = "cold", jobs: int = 1, runs: int | None = 1, warmup: int = 0
               ) -> list[FileOutcome]:
    """Measure every path, `jobs` at a time (processes), results in the order given."""
    return list(iter_hashes(paths, algorithms, mode, jobs, runs, warmup))


def passes_per_file(algorithms: Sequence[str], runs: int | None) -> int:
    """Timed passes over each file: a read and one pass per hash, `runs` times (by default
    at least `MIN_CYCLES`: more may follow)."""
    return (MIN_CYCLES if runs is None else runs) * (1 + len(algorithms))


def iter_hashes(paths: Sequence[str], algorithms: str | Sequence[str],
                mode: CacheMode = "cold", jobs: int = 1, runs: int | None = 1,
                warmup: int = 0, on_pass: Callable[[str], None] | None = None
                ) -> Iterator[FileOutcome]:
    """`hash_files` one outcome at a time, so an interrupted caller keeps those done.

    `on_pass(description)` is called as each timed pass starts ("SHA-512 of disk.img": what
    runs first, so a narrow progress line cuts the folder, not the hash); with
    parallel jobs, whose passes run in other processes, once per pass as each file ends."""
    names = (algorithms,) if isinstance(algorithms, str) else tuple(algorithms)
    unknown = [name for name in names if name not in LIBRARIES]
    if unknown or not names:
        raise UsageError(f"{', '.join(unknown) or 'nothing'} cannot hash files; choose from "
                         f"{', '.join(LIBRARIES)}")
    if len(set(names)) < len(names):
        raise UsageError(f"a hash named twice ({', '.join(names)}): each is measured once")
    if jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if mode not in CACHE_MODES:
        raise UsageError(f"--cache must be one of {', '.join(CACHE_MODES)}")
    if (runs is not None and runs < 1) or warmup < 0:
        raise UsageError("--runs must be at least 1 and --warmup at least 0")
    told = on_pass or (lambda _description: None)
    workers = min(jobs, len(paths))
    if workers <= 1:
        for path in paths:
            yield hash_file(os.fspath(path), names, mode, False, runs, warmup,
                            _telling(told, os.fspath(path)))
        return
    work = [(os.fspath(p), names, mode, False, runs, warmup) for p in paths]
    pool = ProcessPoolExecutor(max_workers=workers)
    try:
        for outcome in pool.map(_hash_file_args, work):
            done = len(outcome.reads) if isinstance(outcome, FileHash) else 0
            for _ in range(done * (1 + len(names)) or passes_per_file(names, runs)):
                told(f"done: {outcome.path}")
            yield outcome
    finally:  # interrupted: files not started are dropped, not waited for
        pool.shutdown(wait=False, cancel_futures=True)


def _telling(told: Callable[[str], None], path: str) -> Callable[[str], None]:
    """A pass's name as a progress line says it: "SHA-512 of disk.img"."""
    return lambda name: told(f"{name} of {path}")


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
