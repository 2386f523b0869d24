"""Which paths can be measured: regular files only, with a clear reason for the rest.

A FIFO is never opened for reading without O_NONBLOCK (an open would wait for a writer
forever), and the descriptor is checked again with fstat after opening, so a path swapped
for something else between the check and the open is refused too.
"""

from __future__ import annotations

import errno
import os
import stat

from pqbench.platform.errors import InputFileError


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str) -> int:
    """A read-only descriptor of the regular file at `path`; InputFileError otherwise."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise InputFileError(f"{path}: broken symbolic link (its target "
                                 f"{os.readlink(path)!r} does not exist)") from None
        raise InputFileError(f"{path}: no such file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputFileError(f"{path}: symbolic link loop") from None
        if exc.errno == errno.EACCES:
            raise InputFileError(f"{path}: permission denied") from None
        raise InputFileError(f"{path}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputFileError(f"{path}: {_kind(info.st_mode)}, not a regular file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except PermissionError:
        raise InputFileError(f"{path}: permission denied") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot open: {exc.strerror}") from None
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode):
        os.close(fd)
        raise InputFileError(f"{path}: changed into {_kind(opened.st_mode)} while opening")
    os.set_blocking(fd, True)
    return fd
