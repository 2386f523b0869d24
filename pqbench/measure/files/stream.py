"""The passes over a file: read only, and read while hashing.

`files hash` reads a chunk and hashes it, in turn, in one thread (`hash_pass_in_turn`): the
chunk is still in the core's cache when it is hashed. `hash_pass` overlaps the two instead:
a reader thread fills a ring of preallocated buffers with readinto (which releases the GIL)
while the calling thread hashes the filled ones (hashlib, blake3 and zlib release the GIL on
large buffers), meant to cost max(read, hash) instead of their sum; measured paired against
the one-thread pass, it was no faster on two cores whenever the process had them, so it is
kept for `benchmarks/hashing.py` to measure again on other machines. mmap would avoid the
copy, but a file truncated while mapped kills the process with SIGBUS, and a changing file
must be flagged, not crash.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from dataclasses import dataclass

from pqbench.libraries.implementations.digests import Hasher

#: Bytes per read. 1 MiB keeps a buffer in L2 between the copy and the hash on most CPUs.
CHUNK = 1 << 20
RING = 4


@dataclass(frozen=True)
class Pass:
    """One pass over a file: bytes seen and monotonic nanoseconds taken."""

    nbytes: int
    elapsed_ns: int
    started_ns: int

    @property
    def bytes_per_sec(self) -> float:
        return self.nbytes * 1e9 / self.elapsed_ns if self.elapsed_ns > 0 else 0.0


def read_pass(fd: int, chunk: int = CHUNK) -> Pass:
    """Read the whole file into one reused buffer: the read-only throughput."""
    buffer = bytearray(chunk)
    view = memoryview(buffer)
    total = 0
    started = time.perf_counter_ns()
    os.lseek(fd, 0, os.SEEK_SET)
    while True:
        n = os.readv(fd, [view])
        if n == 0:
            break
        total += n
    return Pass(total, time.perf_counter_ns() - started, started)


def hash_pass_in_turn(fd: int, hasher: Hasher, chunk: int = CHUNK) -> Pass:
    """Read a chunk, hash it, repeat, in one thread: what `files hash` does (docs:
    measurements, "Hashing a file: one thread or two")."""
    buffer = bytearray(chunk)
    view = memoryview(buffer)
    total = 0
    os.lseek(fd, 0, os.SEEK_SET)
    started = time.perf_counter_ns()
    while True:
        n = os.readv(fd, [buffer])
        if n == 0:
            break
        hasher.update(view[:n])
        total += n
    return Pass(total, time.perf_counter_ns() - started, started)


def hash_pass(fd: int, hasher: Hasher, chunk: int = CHUNK, ring: int = RING) -> Pass:
    """Read and hash the file, overlapped; the hasher holds the digest afterwards."""
    buffers = [bytearray(chunk) for _ in range(ring)]
    free: queue.SimpleQueue[int] = queue.SimpleQueue()
    filled: queue.SimpleQueue[tuple[int, int] | BaseException] = queue.SimpleQueue()
    for index in range(ring):
        free.put(index)
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                index = free.get()
                if index < 0:
                    return
                n = os.readv(fd, [buffers[index]])
                filled.put((index, n))
                if n == 0:
                    return
        except BaseException as exc:  # handed to the hashing thread, raised there
            filled.put(exc)

    os.lseek(fd, 0, os.SEEK_SET)
    total = 0
    started = time.perf_counter_ns()
    thread = threading.Thread(target=reader, name="pqbench-reader", daemon=True)
    thread.start()
    try:
        while True:
            item = filled.get()
            if isinstance(item, BaseException):
                raise item
            index, n = item
            if n == 0:
                break
            hasher.update(memoryview(buffers[index])[:n])
            total += n
            free.put(index)
    finally:
        stop.set()
        free.put(-1)
        thread.join()
    return Pass(total, time.perf_counter_ns() - started, started)
