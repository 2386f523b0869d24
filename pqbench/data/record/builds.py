"""Which runs measured one build: the same software, set up the same way, on one machine.

A history point and a side of a comparison stand for one build, and the run-to-run spread
of a row is only the machine's own when every run of a group measured the same thing.
`build_of` names what makes a run's build: its OS build, the version of every library it
reports (the tools that do not run in the timed code, pqbench itself and numpy, aside)
and the identity of each library it loaded (`record.fingerprint.BUILD_BINARIES`),
the OpenSSL capability knobs it set, its capability mask, the environment an `ab` side
added, and how it was timed (time base, process count). Runs of one `--by` group that
differ here (a `bisect` run with an older cryptography wheel, a masked run beside unmasked
ones) are not pooled silently: callers split them off or leave them out and say which
(`Build.differences`).

The testbed (CPU model, flags, host) is not part of a build: runs of two machines are
refused by `compare` before any build is compared.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pqbench.data.record.fingerprint import BUILD_BINARIES
from pqbench.data.record.results import Run

__all__ = ["Build", "build_of", "one_build", "principal"]

#: Libraries a run reports that no timed code runs: a new version is not a new build.
NOT_TIMED = frozenset({"pqbench", "numpy"})
#: Facts that runs stored before they were recorded lack: compared only where both runs
#: have them, so an older run and a newer run of one build stay one build.
OPTIONAL = ("binaries.",)


@dataclass(frozen=True, order=True)
class Build:
    """What makes a run's build, as sorted (field, value) pairs: equal Builds are one
    build. ``software`` is what ran (OS build, libraries, knobs, mask, an `ab` side's
    environment), ``timing`` how it was timed (an `ab` side: "ab pairs"; else its time
    base and process count). Values are text (lists joined by commas), so a Build is
    hashable and sortable."""

    software: tuple[tuple[str, str], ...]
    timing: tuple[tuple[str, str], ...] = ()

    @property
    def facts(self) -> tuple[tuple[str, str], ...]:
        return self.software + self.timing

    def get(self, name: str) -> str | None:
        return dict(self.facts).get(name)

    def same_software(self, other: Build) -> bool:
        """Whether the two ran the same software, however each was timed (an `ab` side
        and `speed` runs of the build it ran); `OPTIONAL` facts count where both have them."""
        return _agree(self.software, other.software)

    def matches(self, other: Build) -> bool:
        """One build: every fact equal, `OPTIONAL` facts compared where both have them."""
        return _agree(self.software, other.software) and self.timing == other.timing

    def differences(self, other: Build) -> list[tuple[str, str | None, str | None]]:
        """(field, this value, the other's value) of every field the two differ in
        (`OPTIONAL` facts only where both have them)."""
        mine, theirs = dict(self.facts), dict(other.facts)
        return [(name, mine.get(name), theirs.get(name))
                for name in sorted(set(mine) | set(theirs))
                if mine.get(name) != theirs.get(name) and not (
                    name.startswith(OPTIONAL) and (name not in mine or name not in theirs))]

    def against(self, other: Build) -> str:
        """This build in the words that set it apart from `other`: "cryptography 42.0.8,
        knobs.OPENSSL_ia32cap 0x..."; "" for the same build."""
        return ", ".join(f"{_short(name)} {mine if mine is not None else '(none)'}"
                         for name, mine, _ in self.differences(other))


def _agree(a: tuple[tuple[str, str], ...], b: tuple[tuple[str, str], ...]) -> bool:
    if a == b:
        return True
    mine, theirs = dict(a), dict(b)
    for name in set(mine) | set(theirs):
        if name.startswith(OPTIONAL) and (name not in mine or name not in theirs):
            continue
        if mine.get(name) != theirs.get(name):
            return False
    return True


def _short(name: str) -> str:
    return name.removeprefix("libraries.")


def _text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def build_of(run: Run) -> Build:
    """The build a run measured (see the module docstring for what counts)."""
    env = run.environment
    facts: dict[str, str] = {}
    os_build = env.path("os_build")
    if os_build is not None:
        facts["os_build"] = _text(os_build)
    libraries = env.path("libraries")
    if isinstance(libraries, Mapping):
        for name, version in libraries.items():
            if name not in NOT_TIMED and version is not None:
                facts[f"libraries.{name}"] = _text(version)
    knobs = env.path("knobs")
    if isinstance(knobs, Mapping):
        for name, value in knobs.items():
            if value not in (None, ""):
                facts[f"knobs.{name}"] = _text(value)
    names = env.path("mask.names")
    if names:
        facts["mask"] = _text(names)
    added = env.path("ab_env")
    if isinstance(added, Mapping):
        for name, value in added.items():
            facts[f"ab_env.{name}"] = _text(value)
    # Which binary ran, not only its version: a rebuilt libcrypto of the same version
    # string is another build (`environment.binaries`; runs before it lack these).
    for role in BUILD_BINARIES:
        identity = env.binary_identity(role)
        if identity is not None:
            facts[f"binaries.{role}"] = identity
    return Build(tuple(sorted(facts.items())), tuple(sorted(_timing(run.settings).items())))


def _timing(settings: Mapping[str, Any] | Any) -> dict[str, str]:
    """How a run was timed, where it changes what a rate means: an `ab` side's paired
    rounds, else its time base (runs stored before the choice: wall) and process count
    (`--multi`)."""
    if not isinstance(settings, Mapping):
        return {"time_base": "wall"}
    if "ab" in settings:
        return {"method": "ab pairs"}
    found = {"time_base": str(settings.get("time_base") or "wall")}
    processes = settings.get("processes")
    if isinstance(processes, int) and processes > 1:
        found["processes"] = str(processes)
    return found


def one_build(a: Run, b: Run) -> bool:
    """Whether two runs measured one build."""
    return build_of(a).matches(build_of(b))


def split_by_build(runs: Iterable[Run]) -> dict[Build, list[Run]]:
    """The runs per build, builds in the order their first run appears; a run joins the
    first build it `matches` (a run stored before an `OPTIONAL` fact was recorded joins
    the build it agrees with)."""
    found: dict[Build, list[Run]] = {}
    for run in runs:
        build = build_of(run)
        home = build if build in found else next((b for b in found if b.matches(build)), build)
        found.setdefault(home, []).append(run)
    return found


def principal(runs: Sequence[Run]) -> Build:
    """The build a group of runs stands for: the one most of its runs measured; among
    equals the one without a capability knob or mask set (a masked run is the variant),
    then the newest run's (runs are given oldest first)."""
    if not runs:
        raise ValueError("principal: no runs")
    split = split_by_build(runs)
    last = {build: max(runs.index(r) for r in members) for build, members in split.items()}
    return max(split, key=lambda b: (len(split[b]), not _configured(b), last[b]))


def _configured(build: Build) -> bool:
    return any(name.startswith(("knobs.", "mask")) for name, _ in build.software)
