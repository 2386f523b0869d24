"""A libcrypto with exactly the system's version string, built another way (`no-asm`), in
the per-user cache: what a distribution's security update or a rebuild looks like to a
user whose `openssl version` did not change.

The source is the distribution's own (Debian's `openssl` source package, fetched with
`apt-get source --download-only` through a private list of deb-src entries made from the
system's own apt sources, so nothing of the system's apt state is touched). The archive
keeps only the newest few uploads of a release, so where the installed upstream version is
gone the nearest one of the same major.minor series is taken, and its VERSION.dat is set
to the installed version and release date: the version string OpenSSL_version() returns
is then the system's to the character. Built once (about four minutes on two loaded
cores: docs/measurements.md) into PQBENCH_CACHE_DIR/openssl-same-version/, and reused.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import json
import os
import re
import shutil
import subprocess
import tarfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pqbench.libraries.liboqs.locate import cache_root

#: How the rebuilt library differs: no assembly, so no CPU capability is dispatched on.
CONFIGURE = ("no-asm", "shared", "no-tests")
_VERSION_TEXT = re.compile(r"^OpenSSL (\d+)\.(\d+)\.(\d+)(-\S+)? (\d{1,2} \w{3} \d{4})")


@dataclass(frozen=True)
class SystemOpenSSL:
    """The installed libcrypto's version, as OpenSSL_version(OPENSSL_VERSION) says it."""

    text: str
    major: int
    minor: int
    patch: int
    pre_release: str
    date: str

    @property
    def upstream(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}{self.pre_release}"


def system_openssl() -> SystemOpenSSL:
    name = ctypes.util.find_library("crypto")
    if name is None:
        raise RuntimeError("no system libcrypto to rebuild")
    library = ctypes.CDLL(name)
    library.OpenSSL_version.restype = ctypes.c_char_p
    library.OpenSSL_version.argtypes = [ctypes.c_int]
    text = library.OpenSSL_version(0).decode()
    found = _VERSION_TEXT.match(text)
    if found is None:
        raise RuntimeError(f"cannot read the system OpenSSL's version {text!r}")
    major, minor, patch, pre, date = found.groups()
    return SystemOpenSSL(text, int(major), int(minor), int(patch), pre or "", date)


def directory(version: SystemOpenSSL) -> Path:
    """Where the rebuilt libcrypto.so.N and libssl.so.N of this version live."""
    return cache_root() / "openssl-same-version" / f"{version.upstream}-{'-'.join(CONFIGURE)}"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One build at a time (two test processes, or CI beside a developer)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def rebuilt_libcrypto(log: Callable[[str], None] = print) -> Path:
    """The directory holding the rebuilt libraries, built on first use; raises with the
    step that failed where the source or a tool cannot be had."""
    version = system_openssl()
    target = directory(version)
    with _locked(target.parent / f".{target.name}.lock"):
        stamp = target / "build.json"
        if stamp.is_file():
            return target / "lib"
        started = time.monotonic()
        work = target.parent / f".{target.name}.work"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        source, tarball = _fetch_source(version, work, log)
        tree = _unpack(tarball, work)
        _relabel(tree, version)
        seconds = _build(tree, log)
        (target / "lib").mkdir(parents=True, exist_ok=True)
        for name in (f"libcrypto.so.{version.major}", f"libssl.so.{version.major}"):
            shutil.copy2(tree / name, target / "lib" / name)
        stamp.write_text(json.dumps({
            "version_text": version.text, "source_package": source,
            "configure": list(CONFIGURE), "build_seconds": round(seconds, 1),
            "total_seconds": round(time.monotonic() - started, 1)}, indent=1) + "\n")
        shutil.rmtree(work, ignore_errors=True)
        log(f"rebuilt libcrypto ({version.text}, {' '.join(CONFIGURE)}) from {source} in "
            f"{round(time.monotonic() - started)} s: {target / 'lib'}")
        return target / "lib"


def build_record(version: SystemOpenSSL | None = None) -> dict[str, object]:
    """What the cached build says of itself (source, options, seconds)."""
    found: dict[str, object] = json.loads(
        (directory(version or system_openssl()) / "build.json").read_text())
    return found


# --- the source -----------------------------------------------------------------------


def _deb_src_lines() -> list[str]:
    """deb-src lines for every `deb` source the system's apt reads (one-line and deb822)."""
    lines: list[str] = []
    one_line = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d")
                                                      .glob("*.list"))]
    for path in one_line:
        for line in _text(path).splitlines():
            words = line.split("#", 1)[0].split()
            if words[:1] == ["deb"]:
                lines.append(" ".join(["deb-src", *words[1:]]))
    for path in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", _text(path)):
            fields: dict[str, str] = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line:
                    continue
                key, _, value = line.partition(":")
                fields[key.strip().lower()] = value.strip()
            if "deb" not in fields.get("types", "").split() \
                    or fields.get("enabled", "yes") == "no":
                continue
            options = f"[signed-by={fields['signed-by']}] " if fields.get("signed-by") else ""
            for uri in fields.get("uris", "").split():
                for suite in fields.get("suites", "").split():
                    lines.append(f"deb-src {options}{uri} {suite} {fields.get('components', '')}"
                                 .rstrip())
    return lines


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _apt(work: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """apt with a private state under `work` (sources, lists, cache): the system's apt
    lists and configuration are never touched."""
    state = work / "apt"
    (state / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (state / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
    (state / "parts").mkdir(exist_ok=True)
    options = [f"-oDir::Etc::SourceList={state / 'sources.list'}",
               f"-oDir::Etc::SourceParts={state / 'parts'}",
               f"-oDir::State::Lists={state / 'lists'}",
               f"-oDir::Cache={state / 'cache'}", "-oDebug::NoLocking=1",
               "-oAPT::Sandbox::User=root", "-q"]
    return subprocess.run([args[0], *options, *args[1:]], capture_output=True, text=True,
                          cwd=cwd or work, timeout=900, check=False,
                          env={**os.environ, "LC_ALL": "C"})


def _fetch_source(version: SystemOpenSSL, work: Path,
                  log: Callable[[str], None]) -> tuple[str, Path]:
    """Debian's openssl source of the installed upstream version, else of the nearest
    version of the same series: (source package version, orig tarball)."""
    if shutil.which("apt-get") is None:
        raise RuntimeError("apt-get is needed to fetch the distribution's OpenSSL source")
    lines = _deb_src_lines()
    if not lines:
        raise RuntimeError("no apt source to make deb-src entries from")
    (work / "apt").mkdir(parents=True, exist_ok=True)
    (work / "apt" / "sources.list").write_text("\n".join(lines) + "\n")
    log("fetching the deb-src index for openssl")
    done = _apt(work, "apt-get", "update")
    if done.returncode != 0:
        raise RuntimeError(f"apt-get update (deb-src) failed: {done.stderr.strip()[-500:]}")
    shown = _apt(work, "apt-cache", "showsrc", "openssl").stdout
    versions = sorted({m.group(1) for m in re.finditer(r"^Version: (\S+)$", shown, re.M)})
    series = f"{version.major}.{version.minor}."
    same = [v for v in versions if v.split("-")[0].split(":")[-1].startswith(series)]
    if not same:
        raise RuntimeError(f"no openssl {series}x source in the archive (found: "
                           f"{', '.join(versions) or 'none'})")

    def distance(v: str) -> tuple[int, str]:
        upstream = v.split("-")[0].split(":")[-1]
        patch = re.match(r"\d+\.\d+\.(\d+)", upstream)
        return (abs(int(patch.group(1)) - version.patch) if patch else 999, v)

    chosen = min(same, key=distance)
    log(f"downloading the openssl {chosen} source")
    downloads = work / "source"
    downloads.mkdir()
    got = _apt(work, "apt-get", "source", "--download-only", f"openssl={chosen}",
               cwd=downloads)
    tarballs = sorted(downloads.glob("openssl_*.orig.tar.*"))
    if got.returncode != 0 or not tarballs:
        raise RuntimeError(f"apt-get source openssl={chosen} failed: "
                           f"{got.stderr.strip()[-500:]}")
    return chosen, tarballs[0]


def _unpack(tarball: Path, work: Path) -> Path:
    with tarfile.open(tarball) as archive:
        archive.extractall(work / "tree", filter="data")
    trees = [p for p in (work / "tree").iterdir() if (p / "Configure").is_file()]
    if len(trees) != 1:
        raise RuntimeError(f"{tarball.name} holds no single OpenSSL source tree")
    return trees[0]


def _relabel(tree: Path, version: SystemOpenSSL) -> None:
    """VERSION.dat (OpenSSL 3.x) set to the installed version and date, so that the built
    library's version string is the system's."""
    data = tree / "VERSION.dat"
    if not data.is_file():
        raise RuntimeError("the source has no VERSION.dat (OpenSSL before 3.0)")
    values = {"MAJOR": str(version.major), "MINOR": str(version.minor),
              "PATCH": str(version.patch), "PRE_RELEASE_TAG": version.pre_release.lstrip("-"),
              "RELEASE_DATE": f'"{version.date}"'}
    lines = []
    for line in data.read_text().splitlines():
        key = line.split("=", 1)[0]
        lines.append(f"{key}={values[key]}" if key in values else line)
    data.write_text("\n".join(lines) + "\n")


def _build(tree: Path, log: Callable[[str], None]) -> float:
    """Configure and build the two shared libraries only (not the static ones, the apps
    or the tests), niced; the seconds it took."""
    started = time.monotonic()
    jobs = str(max(1, min(4, len(os.sched_getaffinity(0)))))
    steps = [["./Configure", *CONFIGURE, f"--prefix={tree / 'prefix'}"],
             ["make", "build_generated"],
             ["make", f"-j{jobs}", "libcrypto.so", "libssl.so"]]
    for step in steps:
        log(f"openssl build: {' '.join(step)}")
        done = subprocess.run(["nice", *step], cwd=tree, capture_output=True, text=True,
                              timeout=3600, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(step)} failed: {done.stderr.strip()[-800:]}")
    return time.monotonic() - started
