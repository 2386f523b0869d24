"""A worker's compile told as it goes: the tool's own counter and an estimate, never silence.

A first use compiles the worker, and a cold Rust compile takes minutes (aws-lc-sys's build
script compiles AWS-LC's C in one step that says nothing while it runs). Each step's
output is read as it comes: cargo's "Compiling NAME vVERSION" lines, the packages `go build
-v` names, the artifacts Maven downloads. The count goes to the progress logger (which the
command line shows), at most every `EVERY` seconds, and where the tool has said nothing new
for `HEARTBEAT` seconds a line says what is still running, so no step is silent for
longer. Each line carries the time so far and, from the last compile of the same
implementation on this machine (kept in the per-user cache beside the builds,
`estimates.json`), how long it took then: the estimate of what is left.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

#: Seconds without a progress line after which one says what is still running.
HEARTBEAT = 5.0
#: The least seconds between two lines that count the tool's progress.
EVERY = 2.0
ESTIMATES = "estimates.json"

_CARGO = re.compile(r"^\s*Compiling (?P<unit>\S+ v\S+)")
# `go build -v` and `go get` name an import path per line, or "go: downloading M vX".
_GO_PACKAGE = re.compile(r"^(?P<unit>[A-Za-z0-9_.~-]+(?:/[A-Za-z0-9_.~-]+)*)$")
_GO_DOWNLOAD = re.compile(r"^go: downloading (?P<unit>\S+ v\S+)")
_MAVEN = re.compile(r"Downloaded from [^:\s]+: \S*/(?P<unit>[^/\s]+) \(")


def unit_of(language: str, line: str) -> str | None:
    """The unit of work a tool's output line says it started (a crate, a package) or
    finished (a download), or None for any other line."""
    if language == "rust":
        found = _CARGO.match(line)
    elif language == "go":
        found = _GO_DOWNLOAD.match(line) or _GO_PACKAGE.match(line.strip())
    else:
        found = _MAVEN.search(line)
    return found["unit"] if found else None


#: What a language's tool counts, singular and plural.
NOUNS = {"rust": ("crate", "crates"), "go": ("package", "packages"),
         "java": ("download", "downloads")}


def duration(seconds: float) -> str:
    """Seconds as a reader says them: 42 s, 3 min 05 s, 1 h 02 min."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


@dataclass(frozen=True)
class Estimate:
    """The last compile of one implementation here: how long it took, and how many units
    its tool counted."""

    seconds: float
    units: int


def left(elapsed: float, last: Estimate | None) -> str:
    """What is left, from the last compile's duration."""
    if last is None:
        return "no earlier compile here to estimate from"
    if elapsed < last.seconds:
        return (f"about {duration(last.seconds - elapsed)} left "
                f"(the last compile took {duration(last.seconds)})")
    return f"longer than the last compile ({duration(last.seconds)})"


@dataclass
class Counter:
    """The progress of one compile of `name`, from its tools' output."""

    name: str
    language: str
    last: Estimate | None = None
    started: float = field(default_factory=time.monotonic)
    units: int = 0
    current: str | None = None
    step: str = ""

    def feed(self, line: str) -> bool:
        """Take one output line; True where it moved the count."""
        unit = unit_of(self.language, line)
        if unit is None:
            return False
        self.units += 1
        self.current = unit
        return True

    def line(self, now: float, moved: bool) -> str:
        """The progress line: the count where it moved, else what is still running."""
        elapsed = now - self.started
        one, many = NOUNS[self.language]
        total = f" of about {self.last.units}" if self.last and self.last.units else ""
        if moved and self.current:
            where = f"{one} {self.units}{total} ({self.current})"
        elif self.current:
            where = f"still at {self.current} ({self.units}{total} {many} so far)"
        else:
            where = f"still running {self.step}" if self.step else "still running"
        return (f"compiling the {self.name} worker: {where}, {duration(elapsed)} so far, "
                f"{left(elapsed, self.last)}")


class Pacer:
    """Decides when a progress line is due: a moved count at most every EVERY seconds,
    and a line at least every HEARTBEAT seconds whatever the tool said."""

    def __init__(self, emit: Callable[[str], None], counter: Counter) -> None:
        self.emit = emit
        self.counter = counter
        self.last_line = time.monotonic()
        self.pending = False

    def output(self, line: str, now: float) -> None:
        if self.counter.feed(line):
            self.pending = True
        self.tick(now)

    def tick(self, now: float) -> None:
        quiet = now - self.last_line
        if (self.pending and quiet >= EVERY) or quiet >= HEARTBEAT:
            self.emit(self.counter.line(now, self.pending))
            self.pending = False
            self.last_line = now

    def wait(self, now: float) -> float:
        """Seconds until the next line is due at the latest."""
        return max(0.0, (EVERY if self.pending else HEARTBEAT) - (now - self.last_line))


def read_estimates(folder: Path) -> dict[str, Estimate]:
    try:
        found = json.loads((folder / ESTIMATES).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    estimates = {}
    for name, value in found.items():
        try:
            estimates[str(name)] = Estimate(float(value["seconds"]), int(value["units"]))
        except (KeyError, TypeError, ValueError):
            continue
    return estimates


def write_estimate(folder: Path, name: str, estimate: Estimate) -> None:
    """Keep this compile's duration for the next one (a failure to write is no failure
    of the compile: the next one just has no estimate)."""
    estimates = read_estimates(folder)
    estimates[name] = estimate
    path = folder / ESTIMATES
    try:
        folder.mkdir(parents=True, exist_ok=True)
        staged = path.with_name(f".{ESTIMATES}.{time.monotonic_ns()}")
        staged.write_text(json.dumps({k: {"seconds": round(v.seconds, 1), "units": v.units}
                                      for k, v in sorted(estimates.items())}, indent=2) + "\n")
        staged.replace(path)
    except OSError:
        pass
