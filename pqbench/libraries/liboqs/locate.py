"""Find a liboqs that liboqs-python 0.16 can use, and say why the others cannot.

Candidates are tried in the order liboqs-python itself documents, with pqbench's cache last:
``$OQS_INSTALL_PATH``, the system linker path (``ctypes.util.find_library``), ``~/_oqs``, and
``cache_root()/liboqs/*``. Each is opened with ctypes and asked for its version; this module
never imports ``oqs`` (that import may clone and build liboqs from GitHub on its own).
What is built into the cache (liboqs, a userland) shares `exclusive_lock` and `replace_dir`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

MINIMUM_VERSION = (0, 13, 0)
# OQS_SIG_supports_ctx_str arrived in liboqs 0.14; liboqs-python 0.16 binds it at import.
REQUIRED_SYMBOLS = (
    "OQS_version",
    "OQS_init",
    "OQS_KEM_new",
    "OQS_SIG_new",
    "OQS_SIG_supports_ctx_str",
)
MANIFEST_NAME = "pqbench-build.json"

ORIGIN_ENV = "OQS_INSTALL_PATH"
ORIGIN_SYSTEM = "system"
ORIGIN_HOME = "home"
ORIGIN_CACHE = "pqbench-cache"

_RTLD_DI_LINKMAP = 2
_CPU_EXTENSION = re.compile(r"OQS_USE_(\w+)_INSTRUCTIONS")
_DEFINE = re.compile(r"^#define\s+(OQS_\w+)(?:\s+(.*?))?\s*$")


@dataclass(frozen=True)
class LiboqsInstall:
    """A liboqs shared library that loads, is new enough, and exports what liboqs-python binds."""

    prefix: Path
    library: Path
    version: str
    origin: str
    build: dict[str, object] = field(default_factory=dict, hash=False, compare=False)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form: paths become strings."""
        data = asdict(self)
        data["prefix"] = str(self.prefix)
        data["library"] = str(self.library)
        return data


@dataclass(frozen=True)
class Rejected:
    """A candidate that was looked at and skipped, with the reason."""

    origin: str
    location: str
    reason: str

    def __str__(self) -> str:
        return f"{self.origin} ({self.location}): {self.reason}"


def cache_root() -> Path:
    """$PQBENCH_CACHE_DIR, else $XDG_CACHE_HOME/pqbench, else ~/.cache/pqbench."""
    if explicit := os.environ.get("PQBENCH_CACHE_DIR"):
        return Path(explicit).expanduser()
    if xdg := os.environ.get("XDG_CACHE_HOME"):
        return Path(xdg).expanduser() / "pqbench"
    return Path.home() / ".cache" / "pqbench"


def cache_dir() -> Path:
    """Where pqbench keeps its own liboqs builds, one directory per version and options."""
    return cache_root() / "liboqs"


def find_installed() -> LiboqsInstall | None:
    """The first usable liboqs, or None; `survey()` also says why the others were skipped."""
    found, _ = survey()
    return found


def survey() -> tuple[LiboqsInstall | None, list[Rejected]]:
    """The first usable liboqs (or None) and every candidate rejected before it."""
    rejected: list[Rejected] = []
    for candidate in candidates():
        if isinstance(candidate, LiboqsInstall):
            return candidate, rejected
        rejected.append(candidate)
    return None, rejected


def candidates() -> Iterator[LiboqsInstall | Rejected]:
    """Every candidate in search order, probed lazily; a library path is probed only once."""
    seen: set[Path] = set()
    for origin, location, library in _locations():
        if library is None:
            yield Rejected(origin, location, "no liboqs.so found there")
            continue
        resolved = library.resolve()
        if resolved in seen:
            continue
        seen.add(resolved)
        yield probe(library, origin)


def probe(library: Path, origin: str) -> LiboqsInstall | Rejected:
    """Open `library` with ctypes and check version and symbols; never imports oqs."""
    try:
        handle = ctypes.CDLL(str(library))
    except OSError as exc:
        return Rejected(origin, str(library), f"does not load: {exc}")
    missing = [name for name in REQUIRED_SYMBOLS if not hasattr(handle, name)]
    if "OQS_version" in missing:
        return Rejected(origin, str(library), "not a liboqs: no OQS_version symbol")
    handle.OQS_version.restype = ctypes.c_char_p
    version = (handle.OQS_version() or b"").decode("ascii", "replace")
    number = _version_tuple(version)
    if number is None or number < MINIMUM_VERSION:
        wanted = ".".join(map(str, MINIMUM_VERSION))
        return Rejected(origin, str(library), f"liboqs {version or '?'} is older than {wanted}")
    if missing:
        hint = " (liboqs < 0.14 without pqbench's compat shim)" if number < (0, 14, 0) else ""
        return Rejected(origin, str(library), f"lacks {', '.join(missing)}{hint}")
    real = (loaded_path(handle) or library).resolve()
    # find_library gives a bare soname; only a path we were given keeps its symlinked prefix.
    prefix = _prefix_of(library if library.is_absolute() else real)
    if origin == ORIGIN_ENV and _is_pqbench_build(prefix):
        origin = ORIGIN_CACHE  # the variable only points at one of our own builds
    info = build_info(prefix)
    info["cpu_dispatch"] = _runtime_cpu_extensions(handle, prefix)
    return LiboqsInstall(prefix, real, version, origin, info)


def left_out(library: Path) -> list[str]:
    """KEMs and signatures `library` knows by name but was built without (liboqs's own lists).

    liboqs lists every mechanism it has code for (OQS_KEM_alg_identifier) whether or not the
    build enabled it (OQS_KEM_alg_is_enabled); liboqs-python's get_supported_* read the same.
    """
    handle = ctypes.CDLL(str(library))
    missing: list[str] = []
    for kind in ("KEM", "SIG"):
        count = getattr(handle, f"OQS_{kind}_alg_count")
        identifier = getattr(handle, f"OQS_{kind}_alg_identifier")
        identifier.argtypes, identifier.restype = [ctypes.c_size_t], ctypes.c_char_p
        is_enabled = getattr(handle, f"OQS_{kind}_alg_is_enabled")
        is_enabled.argtypes, is_enabled.restype = [ctypes.c_char_p], ctypes.c_int
        for index in range(count()):
            name = identifier(index)
            if name and not is_enabled(name):
                missing.append(name.decode("ascii", "replace"))
    return missing


def build_info(prefix: Path) -> dict[str, object]:
    """How a liboqs was built: its oqsconfig.h, plus our manifest when pqbench built it."""
    info: dict[str, object] = {}
    config = prefix / "include" / "oqs" / "oqsconfig.h"
    if config.is_file():
        info.update(_parse_oqsconfig(config.read_text(errors="replace")))
    manifest = prefix / MANIFEST_NAME
    if manifest.is_file():
        try:
            info.update(json.loads(manifest.read_text()))
        except (OSError, ValueError) as exc:
            info["manifest_error"] = str(exc)
    return info


def _runtime_cpu_extensions(handle: ctypes.CDLL, prefix: Path) -> list[str]:
    """CPU extensions liboqs detects here and dispatches to (what a DIST build really runs).

    The OQS_CPU_EXT enum is read from the installed common.h, so its order is the library's own.
    """
    header = prefix / "include" / "oqs" / "common.h"
    if not header.is_file() or not hasattr(handle, "OQS_CPU_has_extension"):
        return []
    names = re.findall(r"\bOQS_CPU_EXT_(\w+)", header.read_text(errors="replace"))
    try:
        members = names[names.index("INIT") : names.index("COUNT")]
    except ValueError:
        return []
    handle.OQS_init()
    return [
        name.lower()
        for value, name in enumerate(members)
        if value and handle.OQS_CPU_has_extension(ctypes.c_int(value))
    ]


def _locations() -> Iterator[tuple[str, str, Path | None]]:
    """(origin, where we looked, library or None) in liboqs-python's own search order."""
    if (env := os.environ.get("OQS_INSTALL_PATH")) is not None:
        prefix = Path(env).expanduser()
        yield ORIGIN_ENV, f"OQS_INSTALL_PATH={env}", _library_below(prefix)
    if name := ctypes.util.find_library("oqs"):
        yield ORIGIN_SYSTEM, f"find_library('oqs') = {name}", Path(name)
    else:
        yield ORIGIN_SYSTEM, "find_library('oqs')", None
    home = Path.home() / "_oqs"
    yield ORIGIN_HOME, str(home), _library_below(home)
    for prefix in _cache_prefixes():
        yield ORIGIN_CACHE, str(prefix), _library_below(prefix)


def _library_below(prefix: Path) -> Path | None:
    """The file liboqs-python opens for an install prefix: lib/ first, then lib64/. A
    prefix this user may not look into (an unreadable HOME) holds none."""
    for libdir in ("lib", "lib64"):
        library = prefix / libdir / "liboqs.so"
        try:
            if library.exists():
                return library
        except OSError:
            return None
    return None


def _cache_prefixes() -> list[Path]:
    """Finished builds in our cache, the one enabling most algorithms first, then the newest.

    So a full build (`--all`) is loaded in preference to a minimal one beside it.
    `.`-prefixed names are builds in progress.
    """
    try:  # a cache this user may not look into (an unreadable HOME) holds no build
        root = cache_dir()
        if not root.is_dir():
            return []
        finished = [p for p in root.iterdir()
                    if not p.name.startswith(".") and _is_pqbench_build(p)]
        return sorted(finished, key=lambda p: (_enabled_defines(p), p.stat().st_mtime),
                      reverse=True)
    except OSError:
        return []


def _enabled_defines(prefix: Path) -> int:
    """How many OQS_ENABLE_* switches a build's oqsconfig.h turns on (0 if unreadable)."""
    try:
        text = (prefix / "include" / "oqs" / "oqsconfig.h").read_text(errors="replace")
    except OSError:
        return 0
    return len(re.findall(r"^#define OQS_ENABLE_\w+", text, flags=re.MULTILINE))


def _is_pqbench_build(prefix: Path) -> bool:
    return (prefix / MANIFEST_NAME).is_file()


def _prefix_of(library: Path) -> Path:
    """The directory one or two above the library holding include/oqs, else the one above lib/.

    The walk handles multiarch system layouts (/usr/lib/x86_64-linux-gnu/liboqs.so -> /usr).
    """
    libdir = library.parent
    for parent in (libdir.parent, libdir.parent.parent):
        if (parent / "include" / "oqs").is_dir():
            return parent
    return libdir.parent


def _version_tuple(version: str) -> tuple[int, int, int] | None:
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


class _LinkMap(ctypes.Structure):
    # The head of glibc's struct link_map (<link.h>): only the two fields we read.
    _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]


def loaded_path(handle: ctypes.CDLL) -> Path | None:
    """The file the dynamic loader actually opened for `handle` (dlinfo RTLD_DI_LINKMAP)."""
    try:
        dlinfo = ctypes.CDLL(None).dlinfo
    except AttributeError:
        return None
    link_map = ctypes.POINTER(_LinkMap)()
    if dlinfo(ctypes.c_void_p(handle._handle), _RTLD_DI_LINKMAP, ctypes.byref(link_map)) != 0:
        return None
    name = link_map.contents.l_name
    return Path(os.fsdecode(name)) if name else None


def _parse_oqsconfig(text: str) -> dict[str, object]:
    """oqsconfig.h defines -> settings; the OQS_USE_*_INSTRUCTIONS become `cpu_extensions`."""
    settings: dict[str, object] = {}
    extensions: list[str] = []
    enabled = 0
    for line in text.splitlines():
        match = _DEFINE.match(line.strip())
        if not match:
            continue
        name, value = match[1], (match[2] or "").strip()
        if cpu := _CPU_EXTENSION.fullmatch(name):
            extensions.append(cpu[1].lower())
        elif name.startswith("OQS_ENABLE_"):
            enabled += 1
        elif name.startswith("OQS_VERSION_"):
            settings[name] = _define_value(value) if "TEXT" in name else int(value or 0)
        else:
            settings[name] = _define_value(value)
    settings["cpu_extensions"] = extensions
    settings["enabled_algorithm_defines"] = enabled
    return settings


def _define_value(value: str) -> object:
    if value == "":
        return True
    if value in ("0", "1"):  # cmakedefine01 switches
        return value == "1"
    if value.startswith('"') and value.endswith('"'):
        return value[1:-1]
    try:
        return int(value)
    except ValueError:
        return value


@contextmanager
def exclusive_lock(path: Path, log: Callable[[str], None], other: str) -> Iterator[None]:
    """One builder at a time per machine for what goes into the cache (liboqs, a
    userland); the others wait, then reuse its result. `other` names what is waited for."""
    with open(path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for {other} to finish ({path})")
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def replace_dir(staging: Path, final: Path, aside: str,
                remove: Callable[[Path], object]) -> None:
    """Rename a finished `staging` tree onto `final`; what was there is first renamed to
    `{aside}{final.name}-{pid}` beside it, then removed with `remove`."""
    old = None
    if final.exists():
        old = final.with_name(f"{aside}{final.name}-{os.getpid()}")
        final.rename(old)
    staging.rename(final)
    if old is not None:
        remove(old)
