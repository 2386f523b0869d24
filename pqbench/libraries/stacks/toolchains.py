"""The toolchains that build the stack workers: found, with their versions, or missing
with what is needed and how to get it.

Go and cargo come from PATH. A JDK is looked for in PQBENCH_JAVA_HOME (only there when it is
set), then JAVA_HOME, then /usr/lib/jvm, then the `java` on PATH; the newest of at least
the version asked wins, read from its `release` file (the JDK's own record of its version
and vendor, so nothing is started to find it). Maven comes from PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

MIN_GO = (1, 24)
MIN_JDK = 24
JVM_DIRS = (Path("/usr/lib/jvm"),)
JAVA_HOME_VAR = "PQBENCH_JAVA_HOME"


@dataclass(frozen=True)
class Toolchain:
    """A toolchain found: its name, the version that goes into a build's key, its tools."""

    name: str
    version: str
    tools: Mapping[str, Path] = field(default_factory=dict)


@dataclass(frozen=True)
class Missing:
    """A toolchain not found (or too old): what is needed, what was found, how to get it."""

    need: str
    found: str
    how: str

    def __str__(self) -> str:
        found = f" ({self.found})" if self.found else ""
        return f"needs {self.need}{found}; {self.how}"


@dataclass(frozen=True)
class Broken(Missing):
    """A toolchain that is there but fails to run, in its own words (a bad GOEXPERIMENT
    or GOENV file, a broken rustup): what it said, not advice to install it."""

    said: str = ""

    def __str__(self) -> str:
        return f"cannot use {self.found}: it says {self.said}; {self.how}"


Found = Toolchain | Missing

#: The most of a tool's own error kept for a message.
_SAID_CHARS = 400


@dataclass(frozen=True)
class _Ran:
    """What a tool printed: its output when it succeeded, else its own error."""

    output: str | None
    said: str


def _run(argv: list[str], env: Mapping[str, str] | None = None) -> _Ran:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False,
                              errors="replace", env={**os.environ, **(env or {})})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _Ran(None, str(exc))
    if done.returncode == 0:
        return _Ran(done.stdout.strip(), "")
    said = " ".join((done.stderr.strip() or done.stdout.strip()).split())
    return _Ran(None, f"{said[-_SAID_CHARS:] or 'nothing'} (exit status {done.returncode})")


def _numbers(text: str) -> tuple[int, ...]:
    match = re.search(r"(\d+(?:\.\d+)*)", text)
    return tuple(int(n) for n in match[1].split(".")) if match else ()


def go() -> Found:
    """Go >= 1.24 (crypto/mlkem), as `go env GOVERSION` reports it, never auto-upgraded."""
    how = "install it from https://go.dev/dl/ (or your package manager) and put it on PATH"
    path = shutil.which("go")
    if path is None:
        return Missing(f"Go {MIN_GO[0]}.{MIN_GO[1]} or newer", "no go on PATH", how)
    ran = _run([path, "env", "GOVERSION"], {"GOTOOLCHAIN": "local"})
    version = ran.output
    if not version:
        # Go runs but refuses its environment (GOEXPERIMENT, GOFLAGS, a GOENV file): its
        # own words say what to fix; installing Go again would not.
        return Broken(f"Go {MIN_GO[0]}.{MIN_GO[1]} or newer",
                      f"`go env GOVERSION` ({path})",
                      "fix what it names (`go env` lists Go's settings, GOENV their file)",
                      said=ran.said)
    if _numbers(version)[:2] < MIN_GO:
        return Missing(f"Go {MIN_GO[0]}.{MIN_GO[1]} or newer", f"{version} at {path}", how)
    return Toolchain("go", version, {"go": Path(path)})


def cargo() -> Found:
    """cargo and the rustc it drives (the compiler's version goes into the key)."""
    how = "install Rust with rustup (https://rustup.rs) and put cargo on PATH"
    path = shutil.which("cargo")
    if path is None:
        return Missing("Rust's cargo", "no cargo on PATH", how)
    rustc = shutil.which("rustc") or str(Path(path).with_name("rustc"))
    ran = _run([rustc, "--version"])
    version = ran.output
    if not version:
        return Broken("Rust's cargo and rustc", f"`rustc --version` ({rustc})",
                      "fix what it names (`rustup show` tells which toolchain it picks)",
                      said=ran.said)
    return Toolchain("cargo", version, {"cargo": Path(path), "rustc": Path(rustc)})


@dataclass(frozen=True)
class Jdk:
    home: Path
    version: str
    vendor: str

    @property
    def feature(self) -> int:
        numbers = _numbers(self.version)
        return numbers[0] if numbers else 0


def _release(home: Path) -> Jdk | None:
    """The JDK at `home` from its release file, if it has java and javac."""
    try:
        text = (home / "release").read_text(errors="replace")
    except OSError:
        return None
    fields = dict(re.findall(r'^([A-Z_]+)="?([^"\n]*)"?$', text, re.MULTILINE))
    if "JAVA_VERSION" not in fields:
        return None
    if not ((home / "bin" / "java").is_file() and (home / "bin" / "javac").is_file()):
        return None
    return Jdk(home, fields["JAVA_VERSION"], fields.get("IMPLEMENTOR", "unknown vendor"))


def _jdk_homes() -> Iterator[tuple[str, Path]]:
    if home := os.environ.get("JAVA_HOME"):
        yield "JAVA_HOME", Path(home)
    for root in JVM_DIRS:
        try:
            entries = sorted(root.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir() and not entry.is_symlink():
                yield str(root), entry
    if java := shutil.which("java"):
        yield "PATH", Path(java).resolve().parent.parent


def jdk(minimum: int = MIN_JDK) -> Found:
    """The newest JDK of at least `minimum` (JEP 496/497: ML-KEM and ML-DSA in JDK 24)."""
    need = f"a JDK {minimum} or newer"
    how = (f"install one (e.g. Temurin from https://adoptium.net) and set {JAVA_HOME_VAR} "
           "to its directory")
    explicit = os.environ.get(JAVA_HOME_VAR)
    if explicit:
        found = _release(Path(explicit))
        if found is None:
            return Missing(need, f"{JAVA_HOME_VAR}={explicit} holds no JDK", how)
        candidates = [found]
    else:
        candidates = [j for _, home in _jdk_homes() if (j := _release(home)) is not None]
    usable = [j for j in candidates if j.feature >= minimum]
    if not usable:
        seen = ", ".join(sorted({f"{j.version} at {j.home}" for j in candidates}))
        return Missing(need, f"found {seen}" if seen else "no JDK found", how)
    best = usable[0] if explicit else max(usable, key=lambda j: _numbers(j.version))
    return Toolchain("jdk", f"{best.version} ({best.vendor})",
                     {"java": best.home / "bin" / "java", "javac": best.home / "bin" / "javac",
                      "home": best.home})


def maven() -> Found:
    """Maven, which fetches the pinned BouncyCastle jars from Maven Central."""
    path = shutil.which("mvn")
    if path is None:
        return Missing("Maven (to fetch the BouncyCastle jars)", "no mvn on PATH",
                       "install it (https://maven.apache.org/install.html, or apt install "
                       "maven) and put mvn on PATH")
    return Toolchain("maven", "mvn", {"mvn": Path(path)})


FINDERS = {"go": go, "cargo": cargo, "jdk": jdk, "maven": maven}


def find(names: tuple[str, ...], min_jdk: int = MIN_JDK
         ) -> tuple[dict[str, Toolchain], list[Missing]]:
    """The toolchains named (a JDK of at least `min_jdk`), and what is missing of them."""
    found: dict[str, Toolchain] = {}
    missing: list[Missing] = []
    for name in names:
        result = jdk(min_jdk) if name == "jdk" else FINDERS[name]()
        if isinstance(result, Missing):
            missing.append(result)
        else:
            found[name] = result
    return found, missing
