"""Which binaries the measuring process actually loaded, and what each one is.

A version string does not name a binary: a distribution's security update, a rebuild
with other options or another compiler keeps "OpenSSL 3.0.19 27 Jan 2026" and changes the
code (the macOS 10.14.5 `openssl speed` jump came with unchanged versions and smaller
binaries). So each shared object that matters is read off the process's own memory map
(/proc/self/maps, proc(5)) once the libraries are loaded, and recorded by identity: its
GNU build-id (`elf.build_id`), else a SHA-256 of its content, its size, and the
distribution package and version that own the file (dpkg on Debian and its derivatives,
asked once per state of its database and kept per user; nothing where there is no dpkg).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from pqbench.measure.environment import elf

MAPS = Path("/proc/self/maps")

#: (role, pattern on the mapped file's path): the libraries the measured code runs on.
#: A role names what a row uses (`record.fingerprint.BINARY_USERS`), not a file name, so
#: that liboqs 0.13 and 0.14 (liboqs.so.0.13.0, liboqs.so.0.14.0) compare as one library.
ROLES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("libcrypto", re.compile(r"/libcrypto\.so[.\d]*$")),
    ("libssl", re.compile(r"/libssl\.so[.\d]*$")),
    ("liboqs", re.compile(r"/liboqs\.so[.\d]*$")),
    ("libc", re.compile(r"/(libc\.so\.6|libc-[\d.]+\.so|ld-musl-[\w-]+\.so\.1)$")),
    ("python", re.compile(r"/libpython[\d.]+[a-z]*\.so[.\d]*$")),
    ("cryptography", re.compile(r"/cryptography/hazmat/bindings/_rust[\w.-]*\.so$")),
    ("pqbench-native", re.compile(r"/pqbench/timing/_native[\w.-]*\.so$")),
)

#: Content hashes are read in blocks of this size (no whole file in memory).
_BLOCK = 1 << 20


def mapped_files(maps: Path = MAPS) -> list[str]:
    """The files mapped into the process, each once, in the order the map lists them."""
    try:
        text = maps.read_text(errors="replace")
    except OSError:
        return []
    found: dict[str, None] = {}
    for line in text.splitlines():
        # address perms offset dev inode pathname; the path may hold spaces.
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and parts[5].startswith("/") and parts[4] != "0":
            found.setdefault(parts[5].removesuffix(" (deleted)"), None)
    return list(found)


def role_of(path: str) -> str | None:
    """The role of a mapped file ("libcrypto", "liboqs" ...), None for the rest."""
    return next((role for role, pattern in ROLES if pattern.search(path)), None)


def _executable() -> str | None:
    """The interpreter's own executable, for a Python linked without libpython."""
    try:
        return os.path.realpath("/proc/self/exe")
    except OSError:
        return None


def roles(paths: Sequence[str], binding_liboqs: str | None = None) -> dict[str, str]:
    """role -> path for the mapped files that have a role. A second file of one role gets
    its own key: "liboqs-python" for the liboqs the Python binding loaded when it is not
    the native loops' one, else "ROLE 2", "ROLE 3" ..."""
    found: dict[str, str] = {}
    for path in paths:
        role = role_of(path)
        if role is None:
            continue
        if role == "liboqs" and binding_liboqs and path == binding_liboqs \
                and any(role_of(p) == "liboqs" and p != path for p in paths):
            role = "liboqs-python"
        key, number = role, 1
        while key in found:
            number += 1
            key = f"{role} {number}"
        found[key] = path
    if "python" not in found:
        exe = _executable()
        if exe and exe in paths:
            found["python"] = exe
    order = [role for role, _ in ROLES]
    order.insert(order.index("liboqs") + 1, "liboqs-python")
    return dict(sorted(found.items(), key=lambda item: (
        order.index(item[0].split(" ")[0]), item[0])))


def _binding_liboqs() -> str | None:
    """The file liboqs-python loaded its liboqs from, where it is loaded at all."""
    module = sys.modules.get("oqs.oqs")
    handle = getattr(module, "native", None)
    try:
        name = getattr(handle() if callable(handle) else None, "_name", None)
    except Exception:  # a binding that cannot answer has no path to give
        name = None
    if not isinstance(name, str) or "/" not in name:
        return None
    return os.path.realpath(name)


def content_sha256(path: str) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while block := handle.read(_BLOCK):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


@cache
def _identity(path: str, size: int, mtime_ns: int) -> dict[str, Any]:
    """What a file is, by content: once per (path, size, mtime) in a process."""
    found = elf.build_id(path)
    if found:
        return {"build_id": found}
    return {"sha256": content_sha256(path)}


def identity(path: str) -> dict[str, Any]:
    """A file's path, size and identity: `build_id`, or `sha256` where it has none."""
    try:
        stat = os.stat(path)
    except OSError:
        return {"path": path}
    return {"path": path, "size": stat.st_size,
            **_identity(path, stat.st_size, stat.st_mtime_ns)}


# --- which distribution package owns a file ------------------------------------------

#: Top-level directories that merged /usr folds into /usr (Debian 12 and later): dpkg may
#: have registered a file under either spelling, and the memory map names the one the
#: kernel resolved.
_MERGED = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


def spellings(path: str) -> list[str]:
    """The names dpkg may know a file by: as mapped, its real path, and each of those with
    or without the /usr prefix of a merged-/usr system."""
    names: dict[str, None] = {}
    for name in (path, os.path.realpath(path)):
        names.setdefault(name, None)
        top = name.split("/")
        if len(top) > 2 and top[1] == "usr" and top[2] in _MERGED:
            names.setdefault("/" + "/".join(top[2:]), None)
        elif len(top) > 1 and top[1] in _MERGED:
            names.setdefault("/usr" + name, None)
    return list(names)


def _run(argv: Sequence[str]) -> str:
    """A command's standard output ("" when it cannot run); its exit status is not asked:
    `dpkg -S` fails when any one path is unowned, and still lists the owned ones."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=30,
                              check=False, env={**os.environ, "LC_ALL": "C"})
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout


def owners(paths: Iterable[str]) -> dict[str, dict[str, str]]:
    """path -> {"package", "package_version"} for the files a dpkg package owns; {} where
    there is no dpkg. Answered from `OWNERS_CACHE` while dpkg's database and every file
    are as they were when dpkg last answered; else dpkg is asked (`ask_dpkg`) and its
    answer kept there."""
    paths = list(paths)
    if not paths or shutil.which("dpkg") is None or shutil.which("dpkg-query") is None:
        return {}
    stamp = _stamp(DPKG_STATUS)
    files = {path: _stamp(path) for path in paths}
    kept = _read_owners(stamp)
    if stamp is not None and all(kept.get(path, {}).get("file") == files[path]
                                 for path in paths):
        return {path: kept[path]["owner"] for path in paths if kept[path]["owner"]}
    found = ask_dpkg(paths)
    if stamp is not None:
        asked = {path: {"file": files[path], "owner": found.get(path)} for path in paths}
        # Other processes' libraries are kept beside these, up to a bound (libraries
        # built into temporary directories come and go).
        _keep_owners(stamp, {**kept, **asked} if len(kept) < OWNERS_KEPT else asked)
    return found


def ask_dpkg(paths: list[str]) -> dict[str, dict[str, str]]:
    """`owners` asked of dpkg itself: two commands for all the paths, `dpkg -S` and
    `dpkg-query -W` (`dpkg -S` reads every package's file list: about 0.05 s of CPU)."""
    names = {name: path for path in paths for name in spellings(path)}
    owned: dict[str, str] = {}
    for line in _run(["dpkg", "-S", "--", *names]).splitlines():
        # "libssl3:amd64: /usr/lib/x86_64-linux-gnu/libcrypto.so.3"; diversions begin
        # "diversion by"; several owners are "a, b: /path".
        package, sep, name = line.partition(": ")
        if not sep or line.startswith("diversion ") or name not in names:
            continue
        owned.setdefault(names[name], package.split(",")[0].strip())
    if not owned:
        return {}
    versions: dict[str, str] = {}
    query = ["dpkg-query", "-W", "-f", "${binary:Package}\t${Package}\t${Version}\n", "--",
             *sorted(set(owned.values()))]
    for line in _run(query).splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and fields[2]:
            versions[fields[0]] = versions[fields[1]] = fields[2]
    return {path: {"package": package.split(":")[0],
                   **({"package_version": versions[package]} if package in versions else {})}
            for path, package in owned.items()}


#: dpkg's database of installed packages: dpkg rewrites it whenever a package is installed,
#: upgraded or removed, so an unchanged file means unchanged owners.
DPKG_STATUS = "/var/lib/dpkg/status"
#: Where dpkg's last answers are kept, per user (beside pqbench's liboqs builds).
OWNERS_CACHE = "dpkg-owners.json"
#: How many files' owners are kept at most before the list starts again.
OWNERS_KEPT = 256


def _stamp(path: str) -> list[int] | None:
    """What tells one state of a file from another: device, inode, size, modification."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return [found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns]


def _owners_file() -> Path:
    from pqbench.libraries.liboqs.locate import cache_root

    return cache_root() / OWNERS_CACHE


def _read_owners(stamp: list[int] | None) -> dict[str, Any]:
    """The kept answers for this state of dpkg's database ({} for any other, or none)."""
    try:
        kept = json.loads(_owners_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(kept, dict) or kept.get("dpkg_status") != stamp or \
            not isinstance(kept.get("files"), dict):
        return {}
    return {path: entry for path, entry in kept["files"].items()
            if isinstance(entry, dict) and isinstance(entry.get("owner"), dict | None)}


def _keep_owners(stamp: list[int], files: dict[str, Any]) -> None:
    """Written whole to a temporary file and renamed over the old one, so a reader sees
    the old answers or the new ones; a cache that cannot be written is only not kept."""
    target = _owners_file()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{OWNERS_CACHE}.")
    except OSError:
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"dpkg_status": stamp, "files": files}, out)
        os.replace(name, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(name)


# --- the whole record ----------------------------------------------------------------


def loaded(versions: Mapping[str, str | None] | None = None,
           maps: Path = MAPS) -> dict[str, dict[str, Any]]:
    """role -> {path, size, build_id | sha256, package, package_version, version} for each
    library with a role that this process has mapped; `versions` gives a role's version
    string where one is known (libcrypto: OpenSSL_version)."""
    paths = mapped_files(maps)
    chosen = roles(paths, _binding_liboqs())
    packages = owners(chosen.values())
    found: dict[str, dict[str, Any]] = {}
    for role, path in chosen.items():
        entry = identity(path)
        entry.update(packages.get(path, {}))
        version = (versions or {}).get(role.split(" ")[0])
        if version:
            entry["version"] = version
        found[role] = entry
    return found
