"""What `--series` means: an ordered list of builds, each a way to start a pqbench worker.

A build is one or more `ab` side items joined by `` + `` (``pip:cryptography==42.0.8``,
``maven:org.bouncycastle:bcprov-jdk18on==1.80``,
``userland:debian-trixie``, ``cmd:/opt/old/bin/pqbench``, ``env:OQS_INSTALL_PATH=/opt/0.12 +
mask:aesni``). A `--series` value is a build with brace lists, expanded in order as a shell
does (``pip:cryptography=={42.0.8,43.0.3}`` is two builds), or ``@FILE``: a file with one
build per line (blank lines and ``#`` comments skipped). Values are concatenated in the order
given. The series' identity (`series_id`) is a hash of its builds, so the runs of two
bisections over the same series can be told apart from those of another series.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pqbench.data.record.format import LABEL_CHARS
from pqbench.platform.errors import UsageError
from pqbench.sessions import sides

#: How the items of one build are joined.
JOIN = " + "
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")
#: Fingerprint differences that name a build rather than explain a change in it.
NAMING = ("python_executable", "ab_env.PQBENCH_BUILD", "ab_env.PQBENCH_STACK_PINS")
#: Items that name one release, shown by that release alone in tables.
_VERSIONED = ("pip:", "crate:", "maven:")
#: Longest series accepted (a typo in a brace list should not start a thousand builds).
MAX_BUILDS = 256
#: Longest @FILE read: MAX_BUILDS lines of a build's longest spec, and comments.
MAX_FILE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Build:
    """One build of the series: its position and the side items that start its worker."""

    position: int
    items: tuple[str, ...]
    #: Its position, where another build of the series is shown alike (`parse`).
    numbered: bool = False

    @property
    def spec(self) -> str:
        """The build as it may be shown and stored: each item as `ab` shows a side
        (`env:NAME=***`, `cmd:` with its NAME=VALUE words hidden), and its position where
        hiding a value leaves two builds alike ("env:TOKEN=*** (build 2)"): the spec names
        the build's runs (their label), and two builds are never one label."""
        shown = JOIN.join(sides.shown(item) for item in self.items)
        return f"{shown} (build {self.position + 1})" if self.numbered else shown

    @property
    def name(self) -> str:
        """A short name for tables: a pip, crate or Maven build by its version, a Go module
        by its version, else the spec."""
        if len(self.items) == 1 and self.items[0].startswith(_VERSIONED):
            return self.items[0].rpartition("==")[2] or self.spec
        if len(self.items) == 1 and self.items[0].startswith("gomod:"):
            return self.items[0].rpartition("@")[2] or self.spec
        return self.spec


@dataclass(frozen=True)
class Series:
    """The builds in order."""

    builds: tuple[Build, ...]

    @property
    def series_id(self) -> str:
        blob = json.dumps([b.spec for b in self.builds]).encode()
        return hashlib.sha256(blob).hexdigest()[:12]

    def __len__(self) -> int:
        return len(self.builds)

    def specs(self) -> list[str]:
        return [b.spec for b in self.builds]


def expand(text: str) -> list[str]:
    """Brace lists expanded left to right: ``a{1,2}b{x,y}`` -> a1bx a1by a2bx a2by. A value
    that would expand to more than MAX_BUILDS builds is refused before it is expanded
    (twenty lists of two would be a million)."""
    count = 1
    for found in _BRACES.finditer(text):
        count *= found.group(1).count(",") + 1
        if count > MAX_BUILDS:
            raise UsageError(f"--series {sides.shown_spec(text)[:200]!r} expands to more than "
                             f"{MAX_BUILDS} builds")
    return _expand(text)


def _expand(text: str) -> list[str]:
    found = _BRACES.search(text)
    if found is None:
        return [text]
    head, tail = text[:found.start()], text[found.end():]
    return [expanded for choice in found.group(1).split(",")
            for expanded in _expand(f"{head}{choice}{tail}")]


def parse(values: Sequence[str]) -> Series:
    """The series from `--series` values; a usage error for fewer than two builds,
    duplicates, an unreadable file or an empty item."""
    texts: list[str] = []
    for value in values:
        if value.startswith("@"):
            texts += _read(value[1:])
        else:
            texts += expand(value)
        if len(texts) > MAX_BUILDS:
            raise UsageError(f"--series has more than {MAX_BUILDS} builds")
    builds: list[Build] = []
    seen: dict[str, int] = {}
    for text in texts:
        items = tuple(item.strip() for item in text.split(JOIN.strip()))
        if not all(items):
            raise UsageError(f"--series: {sides.shown_spec(text)!r} has an empty item (items "
                             f"are joined by "
                             f"{JOIN.strip()!r})")
        for item in items:
            _check_kind(item)
        build = _fits_a_label(Build(len(builds), items))
        key = " + ".join(items).lower()
        if key in seen:
            raise UsageError(f"--series: {build.spec} is given twice (positions "
                             f"{seen[key] + 1} and {build.position + 1}); a series lists "
                             "each build once")
        seen[key] = build.position
        builds.append(build)
    if len(builds) < 2:
        raise UsageError("--series needs at least two builds to find where something "
                         f"changed, got {len(builds)}" + (f": {builds[0].spec}" if builds
                                                          else ""))
    if len(builds) > MAX_BUILDS:
        raise UsageError(f"--series has {len(builds)} builds; at most {MAX_BUILDS}")
    return Series(tuple(_told_apart(builds)))


def _told_apart(builds: Sequence[Build]) -> list[Build]:
    """The builds, each shown alike with another once its hidden values are hidden
    (`env:X=1`, `env:X=2`: both `env:X=***`) numbered by its position, within the label's
    length."""
    shown = Counter(build.spec for build in builds)
    return [_fits_a_label(replace(build, numbered=True)) if shown[build.spec] > 1 else build
            for build in builds]


def _fits_a_label(build: Build) -> Build:
    """`build`, refused where its spec (numbered or not) is longer than a label holds."""
    if len(build.spec) > LABEL_CHARS:
        raise UsageError(f"--series: build {build.position + 1} is {len(build.spec)} "
                         f"characters long{' once numbered' if build.numbered else ''}, at "
                         f"most {LABEL_CHARS}: a build names its runs, and their label "
                         "holds that many")
    return build


def _check_kind(item: str) -> None:
    kind = sides.kind_of(item)
    if kind == "liboqs":
        raise UsageError(f"--series {sides.shown(item)}: liboqs:VERSION builds are not made "
                         "by pqbench yet; build that liboqs and give "
                         "env:OQS_INSTALL_PATH=PREFIX")
    if kind not in sides.SPELLINGS:
        raise UsageError(f"--series {sides.shown(item)!r}: a build is made of "
                         f"{sides.SPELLED} items, joined by {JOIN.strip()!r}")


def _read(name: str) -> list[str]:
    """The builds of an @FILE, read with a bound: a series is a few hundred lines, and
    /dev/zero or a huge file is refused once MAX_FILE_BYTES are read, not read whole."""
    path = Path(name).expanduser()
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--series @{name}: cannot read it: "
                         f"{getattr(exc, 'strerror', None) or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise UsageError(f"--series @{name}: longer than {MAX_FILE_BYTES // 1024} KiB; a "
                         f"series lists at most {MAX_BUILDS} builds")
    if "\x00" in text:
        raise UsageError(f"--series @{name}: holds NUL characters; a series file is text, "
                         "one build per line")
    builds: list[str] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        builds += expand(line) if line else []
        if len(builds) > MAX_BUILDS:
            raise UsageError(f"--series @{name}: more than {MAX_BUILDS} builds")
    return builds
