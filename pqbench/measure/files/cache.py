"""Page cache: how much of a file is resident, and dropping it before a cold read.

Residency is read with mincore(2) over a read-only shared mapping (no page is touched).
Since Linux 5.0 mincore reports the page cache only for files the caller owns or may
write; for others it would report only the pages this process mapped, so residency is
then "unknown" rather than a wrong "not cached". Dropping uses fdatasync, then
posix_fadvise(DONTNEED): it needs no privilege, but leaves pages other processes have
mapped, so the residency is measured again afterwards and reported as it is.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
from dataclasses import dataclass

_WINDOW = 1 << 30  # bytes mapped at a time


@dataclass(frozen=True)
class Residency:
    """Fraction of the file's pages in the page cache, or None with the reason."""

    fraction: float | None
    reason: str | None = None

    @property
    def cached(self) -> bool | None:
        return None if self.fraction is None else self.fraction >= 0.99


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    return libc


_LIBC = _libc()


def _may_ask(fd: int) -> bool:
    info = os.fstat(fd)
    return os.geteuid() in (0, info.st_uid) or os.access(f"/proc/self/fd/{fd}", os.W_OK)


def residency(fd: int) -> Residency:
    """mincore over the whole file, a window at a time."""
    import numpy  # only here: `pqbench --help` and friends start without it

    if _LIBC is None:
        return Residency(None, "residency is read with Linux mincore; not available here")
    if not _may_ask(fd):
        return Residency(None, "mincore reports the page cache only for files you own or "
                               "may write (Linux >= 5.0)")
    size = os.fstat(fd).st_size
    if size == 0:
        return Residency(1.0)
    page = mmap.PAGESIZE
    resident = total = 0
    for offset in range(0, size, _WINDOW):
        length = min(_WINDOW, size - offset)
        address = _LIBC.mmap(None, length, mmap.PROT_READ, mmap.MAP_SHARED, fd, offset)
        if address in (None, ctypes.c_void_p(-1).value):
            return Residency(None, f"mmap failed: {os.strerror(ctypes.get_errno())}")
        pages = (length + page - 1) // page
        vector = ctypes.create_string_buffer(pages)
        try:
            if _LIBC.mincore(ctypes.c_void_p(address), length, vector) != 0:
                return Residency(None, f"mincore failed: {os.strerror(ctypes.get_errno())}")
        finally:
            _LIBC.munmap(ctypes.c_void_p(address), length)
        resident += int((numpy.frombuffer(vector.raw, dtype=numpy.uint8) & 1).sum())
        total += pages
    return Residency(resident / total)


def drop(fd: int) -> str:
    """Ask the kernel to evict the file's clean pages; says what was done."""
    if not hasattr(os, "posix_fadvise"):
        return "not supported on this system (no posix_fadvise)"
    try:
        # DONTNEED skips dirty pages: write them back first (fsync works on a read-only fd).
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    except OSError as exc:
        return f"refused: {exc.strerror}"
    return "posix_fadvise(DONTNEED)"
