"""The file system and device a path lives on, for the run's fingerprint.

Linux: the mount is the /proc/self/mountinfo line whose MAJ:MIN equals the file's st_dev
(the longest matching mount point wins); the device's model, rotational flag and
scheduler come from /sys/dev/block/MAJ:MIN (a partition's parent holds them). Elsewhere
only what os.statvfs says is recorded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _mount(major: int, minor: int, path: str) -> dict[str, Any]:
    best: dict[str, Any] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return best
    real = os.path.realpath(path)
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 2 or fields[2] != f"{major}:{minor}":
            continue
        point = fields[4]
        inside = real.startswith(point.rstrip("/") + "/") or real == point or point == "/"
        if inside and len(point) >= len(best.get("mount_point", "")):
            best = {"mount_point": point, "file_system": tail[0], "source": tail[1],
                        "mount_options": fields[5]}
    return best


def _device(major: int, minor: int) -> dict[str, Any]:
    sys_dev = Path(f"/sys/dev/block/{major}:{minor}")
    if not sys_dev.exists():
        return {}
    node = sys_dev.resolve()
    disk = node.parent if (node / "partition").exists() else node
    return {"block_device": node.name, "disk": disk.name,
            "model": _read(disk / "device" / "model"),
            "rotational": _read(disk / "queue" / "rotational"),
            "scheduler": _read(disk / "queue" / "scheduler"),
            "size_bytes": int(_read(disk / "size") or 0) * 512 or None}


def fingerprint(path: str) -> dict[str, Any]:
    """Where `path` (a file or directory) is stored: file system, mount, device."""
    info = os.stat(path)
    major, minor = os.major(info.st_dev), os.minor(info.st_dev)
    found: dict[str, Any] = {"path": os.path.realpath(path), "st_dev": f"{major}:{minor}"}
    found.update(_mount(major, minor, path))
    found.update(_device(major, minor))
    try:
        vfs = os.statvfs(path)
        found.update(block_size=vfs.f_bsize, free_bytes=vfs.f_bavail * vfs.f_frsize,
                     total_bytes=vfs.f_blocks * vfs.f_frsize)
    except OSError:
        pass
    return found
