"""Build a stack worker on first use, once per machine, into pqbench's cache.

A build's key is a hash of the worker's sources (shipped in the package), the toolchain
versions and any pinned library version, so a new pqbench, a new compiler or another pin
builds anew and everything else reuses the build. Builds happen in a hidden staging folder
beside their final place, under a file lock, from a copy of the sources (the package is
never written to); a finished build is started once and must greet in the protocol before
it is renamed into place, with its hello kept in its manifest (so `pqbench list` can say
what it offers without starting it). A failed build leaves nothing behind but its reason.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
import os
import platform
import re
import shutil
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pqbench.libraries.stacks import jvm, registry, toolchains
from pqbench.libraries.stacks.client import StackWorker
from pqbench.libraries.stacks.pins import Pin
from pqbench.libraries.stacks.registry import (
    JAVA_MAIN,
    JAVA_RELEASE,
    JVM_OPTIONS,
    REFERENCE_BINARY,
    WORKER_BINARY,
    Stack,
)
from pqbench.platform.errors import ImplementationUnavailable, WorkerFailed

Log = Callable[[str], None]
#: Where a build reports its progress: the "pqbench.libraries.stacks" logger, which the command line
#: shows on stderr (`views.console.show_progress`); nothing here prints.
progress: Log = logging.getLogger("pqbench.libraries.stacks").info

#: Changes whenever how a worker is built changes, so older builds are not reused.
FORMAT = 2
MANIFEST = "manifest.json"
#: Build outputs and editor litter that are not sources, wherever they sit.
_NOT_SOURCES = frozenset({"target", "classes", "__pycache__"})
#: Seconds any one build step may take (a cold aws-lc-rs build on a busy 2-core machine
#: takes minutes).
STEP_TIMEOUT = 3600


class BuildFailed(ImplementationUnavailable):
    """A worker could not be built here; the message says which step failed and its
    output's last lines."""


class SourcesMissing(ImplementationUnavailable):
    """This pqbench ships no sources for the worker."""


def cache_dir() -> Path:
    from pqbench.libraries.liboqs.locate import cache_root

    return cache_root() / "stacks"


def source_files(stack: Stack) -> list[Path]:
    files: list[Path] = []
    for folder in stack.source_dirs():
        if folder.is_file():
            files.append(folder)
            continue
        for root, dirs, names in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in _NOT_SOURCES and not d.startswith("."))
            files += [Path(root) / n for n in sorted(names) if not n.startswith(".")]
    return files


def source_digest(stack: Stack) -> str:
    """sha256 over every source file's path (relative to the package) and bytes."""
    missing = [f for f in stack.source_dirs() if not f.exists()]
    if missing:
        raise SourcesMissing(f"this pqbench ships no worker sources for {stack.name} "
                             f"({', '.join(str(m.relative_to(stack.root)) for m in missing)} "
                             "missing)")
    digest = hashlib.sha256()
    for path in source_files(stack):
        digest.update(str(path.relative_to(stack.root)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def applicable(stack: Stack, pins: tuple[Pin, ...]) -> tuple[Pin, ...]:
    """The pins that name a dependency of this stack (its go.mod, Cargo.toml or pom.xml)."""
    try:
        declared = (stack.root / stack.recipe.dependencies).read_text(errors="replace")
    except OSError:
        return ()
    kinds = {"go": "gomod", "rust": "crate", "java": "maven"}
    found = []
    for pin in pins:
        if pin.kind != kinds[stack.recipe.language]:
            continue
        if pin.kind == "maven":
            if not stack.recipe.bouncycastle:
                continue
            artifact = pin.name.split(":", 1)[1]
            if f"<artifactId>{artifact}</artifactId>" not in declared:
                continue
        elif pin.kind == "crate":
            if not re.search(rf'(?m)^\s*"?{re.escape(pin.name)}"?\s*=', declared):
                continue
        elif pin.name not in declared:
            continue
        found.append(pin)
    return tuple(found)


@dataclass(frozen=True)
class Plan:
    """What building one stack here means: its key, toolchains and pins."""

    stack: Stack
    key: str
    toolchains: Mapping[str, toolchains.Toolchain]
    pins: tuple[Pin, ...]

    @property
    def directory(self) -> Path:
        return cache_dir() / self.stack.name / self.key[:16]

    def argv(self, directory: Path | None = None) -> list[str]:
        """The command that starts this build's worker."""
        where = directory or self.directory
        if self.stack.recipe.language == "java":
            java = str(self.toolchains["jdk"].tools["java"])
            return [java, *JVM_OPTIONS, "-cp", f"{where / 'classes'}{os.pathsep}{where / 'lib'}/*",
                    JAVA_MAIN, "--impl", self.stack.name]
        return [str(where / WORKER_BINARY)]


def plan(stack: Stack, pins: tuple[Pin, ...] = ()) -> Plan:
    """The build this machine would make; ImplementationUnavailable when it cannot (no
    sources, a toolchain missing: the message says what is needed and how to get it)."""
    digest = source_digest(stack)
    found, missing = toolchains.find(stack.recipe.toolchains, stack.recipe.min_jdk)
    if missing:
        raise ImplementationUnavailable(f"{stack.name} {'; '.join(str(m) for m in missing)}")
    chosen = applicable(stack, pins)
    key = hashlib.sha256(json.dumps({
        "format": FORMAT, "implementation": stack.name, "sources": digest,
        "toolchains": {name: t.version for name, t in sorted(found.items())},
        "pins": [p.spec for p in chosen], "machine": platform.machine(),
    }, sort_keys=True).encode()).hexdigest()
    return Plan(stack, key, found, chosen)


@dataclass(frozen=True)
class Built:
    """A finished build: where it is and what its worker said when it was made."""

    plan: Plan
    manifest: Mapping[str, Any]

    @property
    def hello(self) -> Mapping[str, Any]:
        hello = self.manifest.get("hello")
        return hello if isinstance(hello, dict) else {}

    def argv(self) -> list[str]:
        return self.plan.argv()


def find_built(planned: Plan) -> Built | None:
    """The finished build for `planned`, if this machine has made it."""
    try:
        manifest = json.loads((planned.directory / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("key") != planned.key:
        return None
    return Built(planned, manifest)


def compile_worker(planned: Plan, log: Log = progress) -> Built:
    """The build for `planned`, made now unless it exists; BuildFailed says why not."""
    from pqbench.libraries.liboqs.locate import exclusive_lock, replace_dir

    found = find_built(planned)
    if found is not None:
        return found
    final = planned.directory
    final.parent.mkdir(parents=True, exist_ok=True)
    name = planned.stack.name
    with exclusive_lock(final.parent / ".lock", log, f"another pqbench building {name}"):
        found = find_built(planned)
        if found is not None:
            return found
        for leftover in final.parent.glob(".staging-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(prefix=f".staging-{final.name}-", dir=final.parent))
        try:
            manifest = _compile_into(planned, staging, log)
            replace_dir(staging, final, ".old-", lambda old: shutil.rmtree(old, True))
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return Built(planned, manifest)


def _compile_into(planned: Plan, staging: Path, log: Log) -> dict[str, Any]:
    stack = planned.stack
    versions = ", ".join(t.version for t in planned.toolchains.values()
                         if t.name != "maven")
    pinned = f", pinned {' '.join(p.spec for p in planned.pins)}" if planned.pins else ""
    log(f"building the {stack.name} worker once for this machine ({versions}{pinned}) "
        f"into {planned.directory}")
    started = time.monotonic()
    source = staging / "src"
    for folder in stack.recipe.sources:
        target = source / folder
        target.parent.mkdir(parents=True, exist_ok=True)
        if (stack.root / folder).is_file():
            shutil.copy2(stack.root / folder, target)
        else:
            shutil.copytree(stack.root / folder, target, ignore=shutil.ignore_patterns(
                *_NOT_SOURCES, ".*"))
    builder = {"go": _compile_go, "rust": _compile_rust, "java": _compile_java}
    builder[stack.recipe.language](planned, source, staging, log)
    shutil.rmtree(source, ignore_errors=True)
    hello = _greet(planned, staging)
    manifest = {
        "format": FORMAT, "implementation": stack.name, "key": planned.key,
        "toolchains": {n: t.version for n, t in planned.toolchains.items()},
        "pins": [p.spec for p in planned.pins], "hello": hello,
        "build_seconds": round(time.monotonic() - started, 1),
        "built_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    log(f"built the {stack.name} worker in {manifest['build_seconds']} s")
    return manifest


def _greet(planned: Plan, staging: Path) -> dict[str, Any]:
    """Start the new worker once: a build that does not greet in the protocol is not kept."""
    try:
        worker = StackWorker(planned.stack.name, planned.argv(staging))
    except WorkerFailed as exc:
        raise BuildFailed(f"the {planned.stack.name} worker was built but does not start: "
                          f"{exc}") from None
    try:
        return worker.greet(planned.stack.name).as_dict()
    except WorkerFailed as exc:
        raise BuildFailed(f"the {planned.stack.name} worker was built but does not greet: "
                          f"{exc}") from None
    finally:
        worker.close()


# --- one function per language ---------------------------------------------------------


def _compile_go(planned: Plan, source: Path, staging: Path, log: Log) -> None:
    go = str(planned.toolchains["go"].tools["go"])
    where = source / "go"
    # A static binary of pure Go (no C compiler needed); never an auto-fetched toolchain;
    # go.mod and go.sum as shipped unless a pin changes them in the copy.
    env = {"GOTOOLCHAIN": "local", "CGO_ENABLED": "0",
           "GOFLAGS": "-mod=mod" if planned.pins else "-mod=readonly"}
    for pin in planned.pins:
        _step(planned, [go, "get", f"{pin.name}@{pin.version}"], where, env, log)
    _step(planned, [go, "build", "-trimpath", "-o", str(staging / WORKER_BINARY), "."], where,
          env, log)


def _compile_rust(planned: Plan, source: Path, staging: Path, log: Log) -> None:
    cargo = str(planned.toolchains["cargo"].tools["cargo"])
    crate = source / Path(planned.stack.recipe.dependencies).parent
    manifest = crate / "Cargo.toml"
    for pin in planned.pins:
        manifest.write_text(_pin_crate(manifest.read_text(), pin))
    # One target folder per implementation, kept between builds: a pinned build then
    # recompiles only what the pin changed. Builds of one implementation hold its lock.
    target = cache_dir() / ".cargo-target" / planned.stack.name
    locked = [] if planned.pins else ["--locked"]
    # AWS_LC_SYS_USE_SYSTEM=0: aws-lc-sys would otherwise link a system AWS-LC where one
    # is installed, and the pinned one is what is timed.
    _step(planned, [cargo, "build", "--release", *locked], crate,
          {"CARGO_TARGET_DIR": str(target), "AWS_LC_SYS_USE_SYSTEM": "0"}, log)
    for binary in (WORKER_BINARY, REFERENCE_BINARY):
        if (target / "release" / binary).is_file():
            shutil.copy2(target / "release" / binary, staging / binary)


def _pin_crate(text: str, pin: Pin) -> str:
    """Cargo.toml with the dependency `pin.name` required at exactly `pin.version`, in
    either form (`name = "1.2"` or `name = { version = "1.2", ... }`)."""
    name = re.escape(pin.name)
    simple = re.compile(rf'(?m)^(\s*"?{name}"?\s*=\s*)"[^"]*"')
    table = re.compile(rf'(?m)^(\s*"?{name}"?\s*=\s*\{{[^}}\n]*?\bversion\s*=\s*)"[^"]*"')
    changed, count = simple.subn(rf'\g<1>"={pin.version}"', text)
    if not count:
        changed, count = table.subn(rf'\g<1>"={pin.version}"', text)
    if not count:
        raise BuildFailed(f"{pin.spec}: {pin.name} has no version requirement in "
                          "Cargo.toml to pin")
    return changed


def _compile_java(planned: Plan, source: Path, staging: Path, log: Log) -> None:
    jdk = planned.toolchains["jdk"]
    classpath = ""
    lib = staging / "lib"
    lib.mkdir()
    if planned.stack.recipe.bouncycastle:
        pom = source / "java" / "pom.xml"
        properties = [_maven_property(pom, pin) for pin in planned.pins]
        mvn = str(planned.toolchains["maven"].tools["mvn"])
        _step(planned, [mvn, "-B", "-q", "-f", str(pom), *properties,
                        "dependency:copy-dependencies", "-DincludeScope=runtime",
                        f"-DoutputDirectory={lib}"], source, {}, log)
        classpath = f"{lib}/*"
    sources = sorted(str(p) for folder in planned.stack.recipe.sources
                     for p in (source / folder).rglob("*.java"))
    listing = staging / "sources.txt"
    listing.write_text("\n".join(sources) + "\n")
    _step(planned, [str(jdk.tools["javac"]), "--release", str(JAVA_RELEASE), "-encoding",
                    "UTF-8", "-d",
                    str(staging / "classes"), *(["-cp", classpath] if classpath else []),
                    f"@{listing}"], source, {}, log)
    listing.unlink()


def _maven_property(pom: Path, pin: Pin) -> str:
    """-Dproperty=VERSION for the property the pinned artifact's version names in the pom
    (`${bc.version}`), so every artifact sharing it moves together."""
    group, artifact = pin.name.split(":", 1)
    namespace = {"m": "http://maven.apache.org/POM/4.0.0"}
    try:
        tree = ET.parse(pom)
    except (OSError, ET.ParseError) as exc:
        raise BuildFailed(f"{pin.spec}: cannot read pom.xml: {exc}") from None
    for dependency in tree.iter(f"{{{namespace['m']}}}dependency"):
        if (dependency.findtext("m:groupId", namespaces=namespace) == group
                and dependency.findtext("m:artifactId", namespaces=namespace) == artifact):
            version = (dependency.findtext("m:version", namespaces=namespace) or "").strip()
            found = re.fullmatch(r"\$\{([A-Za-z0-9_.-]+)\}", version)
            if found:
                return f"-D{found[1]}={pin.version}"
            raise BuildFailed(f"{pin.spec}: pom.xml gives {artifact} a literal version, "
                              "not a property to pin")
    raise BuildFailed(f"{pin.spec}: pom.xml does not depend on {pin.name}")


def _step(planned: Plan, argv: list[str], cwd: Path, env: Mapping[str, str],
          log: Log) -> None:
    """Run one build step without a shell; its output is shown only when it fails."""
    log("$ " + " ".join(Path(argv[0]).name if i == 0 else a for i, a in enumerate(argv)))
    try:
        done = subprocess.run(argv, cwd=cwd, env={**os.environ, **env}, capture_output=True,
                              text=True, errors="replace", timeout=STEP_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildFailed(f"building the {planned.stack.name} worker: {Path(argv[0]).name} "
                          f"failed: {exc}") from None
    if done.returncode != 0:
        # The last lines, and at most 4,000 characters of them: the reason is stored with
        # every row it stops (a run's text fields hold 10,000).
        tail = "\n".join(jvm.shown_line(line) for line in (done.stdout + done.stderr)
                         .strip().splitlines()[-15:])[-4000:]
        raise BuildFailed(f"building the {planned.stack.name} worker: {Path(argv[0]).name} "
                          f"exited with status {done.returncode}:\n{tail}")


def built_stacks() -> dict[str, list[Path]]:
    """Every build in the cache, by implementation (for `pqbench list` and clean-up)."""
    found: dict[str, list[Path]] = {}
    for stack in registry.STACKS:
        folder = cache_dir() / stack.name
        found[stack.name] = sorted(p.parent for p in folder.glob(f"*/{MANIFEST}"))
    return found
