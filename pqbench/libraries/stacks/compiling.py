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

import collections
import contextlib
import datetime
import fcntl
import hashlib
import json
import logging
import os
import platform
import queue
import re
import shutil
import subprocess
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pqbench.libraries.stacks import jvm, registry, toolchains
from pqbench.libraries.stacks.client import StackWorker
from pqbench.libraries.stacks.pins import Pin
from pqbench.libraries.stacks.progress import (
    Counter,
    Estimate,
    Pacer,
    duration,
    read_estimates,
    write_estimate,
)
from pqbench.libraries.stacks.registry import (
    JAVA_MAIN,
    JAVA_RELEASE,
    JVM_OPTIONS,
    REFERENCE_BINARY,
    WORKER_BINARY,
    Stack,
)
from pqbench.platform import processes
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
#: The lines of a step's output kept for its failure, and the longest line read whole.
TAIL_LINES = 15
OUTPUT_LINE = 1 << 16
#: The one target folder of every Rust worker, under the cache.
RUST_TARGET = ".cargo-target/rust"


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
    from pqbench.libraries.liboqs.locate import replace_dir

    found = find_built(planned)
    if found is not None:
        return found
    final = planned.directory
    final.parent.mkdir(parents=True, exist_ok=True)
    name = planned.stack.name
    with locked(final.parent / ".lock", log, f"another pqbench compiling the {name} worker"):
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


@contextlib.contextmanager
def locked(path: Path, log: Log, other: str) -> Iterator[None]:
    """One compile at a time of what `path` guards; the others wait (saying so every
    HEARTBEAT seconds, never silent), then reuse its result."""
    from pqbench.libraries.stacks.progress import HEARTBEAT

    with open(path, "a") as lock:
        started = time.monotonic()
        said: float | None = None
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                now = time.monotonic()
                if said is None or now - said >= HEARTBEAT:
                    log(f"waiting for {other} to finish ({duration(now - started)} so far)")
                    said = now
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _compile_into(planned: Plan, staging: Path, log: Log) -> dict[str, Any]:
    stack = planned.stack
    versions = ", ".join(t.version for t in planned.toolchains.values()
                         if t.name != "maven")
    pinned = f", pinned {' '.join(p.spec for p in planned.pins)}" if planned.pins else ""
    last = progress_estimates().get(stack.name)
    log(f"compiling the {stack.name} worker once for this machine ({versions}{pinned}) "
        f"into {planned.directory}; "
        + (f"the last compile here took {duration(last.seconds)}" if last else
           "the first here, with no earlier one to estimate from"))
    started = time.monotonic()
    steps = Steps(planned, log, Counter(stack.name, stack.recipe.language, last))
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
    builder[stack.recipe.language](planned, source, staging, steps)
    shutil.rmtree(source, ignore_errors=True)
    hello = _greet(planned, staging)
    seconds = round(time.monotonic() - started, 1)
    write_estimate(cache_dir(), stack.name, Estimate(seconds, steps.counter.units))
    manifest = {
        "format": FORMAT, "implementation": stack.name, "key": planned.key,
        "toolchains": {n: t.version for n, t in planned.toolchains.items()},
        "pins": [p.spec for p in planned.pins], "hello": hello,
        "build_seconds": seconds,
        "built_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    log(f"compiled the {stack.name} worker in {duration(seconds)}")
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


def _compile_go(planned: Plan, source: Path, staging: Path, steps: Steps) -> None:
    go = str(planned.toolchains["go"].tools["go"])
    where = source / "go"
    # A static binary of pure Go (no C compiler needed); never an auto-fetched toolchain;
    # go.mod and go.sum as shipped unless a pin changes them in the copy. -v names each
    # package as it is compiled: the progress.
    env = {"GOTOOLCHAIN": "local", "CGO_ENABLED": "0",
           "GOFLAGS": "-mod=mod" if planned.pins else "-mod=readonly"}
    for pin in planned.pins:
        steps.run([go, "get", f"{pin.name}@{pin.version}"], where, env)
    steps.run([go, "build", "-v", "-trimpath", "-o", str(staging / WORKER_BINARY), "."],
              where, env)


def _compile_rust(planned: Plan, source: Path, staging: Path, steps: Steps) -> None:
    cargo = str(planned.toolchains["cargo"].tools["cargo"])
    crate = source / Path(planned.stack.recipe.dependencies).parent
    manifest = crate / "Cargo.toml"
    for pin in planned.pins:
        manifest.write_text(_pin_crate(manifest.read_text(), pin))
    # One target folder for every Rust worker, kept between compiles: what two workers
    # share (the protocol crate, serde_json, the build tools) is compiled once, and a
    # pinned compile recompiles only what the pin changed. Both crates name their binaries
    # alike, so one compile at a time uses it, until its binaries are copied out.
    target = cache_dir() / RUST_TARGET
    target.mkdir(parents=True, exist_ok=True)
    locked_lock = [] if planned.pins else ["--locked"]
    with locked(target / ".lock", steps.log, "another pqbench compiling a Rust worker"):
        # AWS_LC_SYS_USE_SYSTEM=0: aws-lc-sys would otherwise link a system AWS-LC where
        # one is installed, and the pinned one is what is timed.
        steps.run([cargo, "build", "--release", *locked_lock], crate,
                  {"CARGO_TARGET_DIR": str(target), "AWS_LC_SYS_USE_SYSTEM": "0"})
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


def _compile_java(planned: Plan, source: Path, staging: Path, steps: Steps) -> None:
    jdk = planned.toolchains["jdk"]
    classpath = ""
    lib = staging / "lib"
    lib.mkdir()
    if planned.stack.recipe.bouncycastle:
        pom = source / "java" / "pom.xml"
        properties = [_maven_property(pom, pin) for pin in planned.pins]
        mvn = str(planned.toolchains["maven"].tools["mvn"])
        # Batch mode, not quiet: each artifact it downloads is a line of progress.
        steps.run([mvn, "-B", "-f", str(pom), *properties, "dependency:copy-dependencies",
                   "-DincludeScope=runtime", f"-DoutputDirectory={lib}"], source, {})
        classpath = f"{lib}/*"
    sources = sorted(str(p) for folder in planned.stack.recipe.sources
                     for p in (source / folder).rglob("*.java"))
    listing = staging / "sources.txt"
    listing.write_text("\n".join(sources) + "\n")
    steps.run([str(jdk.tools["javac"]), "--release", str(JAVA_RELEASE), "-encoding", "UTF-8",
               "-d", str(staging / "classes"), *(["-cp", classpath] if classpath else []),
               f"@{listing}"], source, {})
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


@dataclass
class Steps:
    """The steps of one compile: each runs without a shell, its output read as it comes
    (`progress`: the tool's count and a line at least every HEARTBEAT seconds) and shown
    whole only when it fails."""

    planned: Plan
    log: Log
    counter: Counter

    def run(self, argv: list[str], cwd: Path, env: Mapping[str, str]) -> None:
        tool = Path(argv[0]).name
        self.log("$ " + " ".join(tool if i == 0 else a for i, a in enumerate(argv)))
        self.counter.step = tool
        tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        try:
            process = subprocess.Popen(argv, cwd=cwd, env={**os.environ, **env},
                                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as exc:
            raise self._failed(f"{tool} failed: {exc.strerror or exc}") from None
        try:
            code = self._follow(process, tool, tail)
        except BaseException:
            processes.stop_group(process)  # a Ctrl-C or a timeout ends the whole tool
            raise
        finally:
            if process.stdout is not None:
                process.stdout.close()
        if code != 0:
            # The last lines, and at most 4,000 characters of them: the reason is stored
            # with every row it stops (a run's text fields hold 10,000).
            text = "\n".join(tail)[-4000:]
            raise self._failed(f"{tool} exited with status {code}:\n{text}")

    def _follow(self, process: subprocess.Popen[bytes], tool: str,
                tail: collections.deque[str]) -> int:
        """Read the tool's output until it ends, pacing the progress lines; its status."""
        assert process.stdout is not None
        lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True).start()
        pacer = Pacer(self.log, self.counter)
        deadline = time.monotonic() + STEP_TIMEOUT
        while True:
            now = time.monotonic()
            if now > deadline:
                raise self._failed(f"{tool} took more than {STEP_TIMEOUT} s")
            try:
                raw = lines.get(timeout=min(pacer.wait(now), deadline - now) + 0.05)
            except queue.Empty:
                pacer.tick(time.monotonic())
                continue
            if raw is None:
                return process.wait()
            line = jvm.shown_line(raw.decode("utf-8", "replace").rstrip())
            if line.strip():
                tail.append(line)
            pacer.output(line, time.monotonic())

    def _failed(self, what: str) -> BuildFailed:
        return BuildFailed(f"compiling the {self.planned.stack.name} worker: {what}")


def _pump(stream: IO[bytes], lines: queue.Queue[bytes | None]) -> None:
    """Every line of a tool's output (each at most OUTPUT_LINE bytes), then None."""
    try:
        while line := stream.readline(OUTPUT_LINE):
            lines.put(line)
    except (OSError, ValueError):
        pass
    lines.put(None)


def progress_estimates() -> dict[str, Estimate]:
    """How long each implementation's last compile here took."""
    return read_estimates(cache_dir())


def built_stacks() -> dict[str, list[Path]]:
    """Every build in the cache, by implementation (for `pqbench list` and clean-up)."""
    found: dict[str, list[Path]] = {}
    for stack in registry.STACKS:
        folder = cache_dir() / stack.name
        found[stack.name] = sorted(p.parent for p in folder.glob(f"*/{MANIFEST}"))
    return found
