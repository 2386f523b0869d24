"""One build and one machine: which runs measured the same software, set up the same way,
on the same machine.

**One build.** A history point and a side of a comparison stand for one build, and the
run-to-run spread of a row is only the machine's own when every run of a group measured the
same thing. `build_of` names what makes a run's build: its OS build, the version of every
library every run reports (the tools that do not run in the timed code, pqbench itself and
numpy, aside) and the identity of each library it loaded
(`record.fingerprint.BUILD_BINARIES`), the OpenSSL capability knobs it set, its capability
mask, the environment an `ab` side added, and how it was timed (time base, process count).
A foreign stack's libraries ("go:crypto/mlkem", reported only by runs that started its
worker) are not part of the build of every row: they belong to that stack's rows
(`build_of(run, implementation)`), and a difference in them is a cause of those rows alone.
Runs of one `--by` group that differ in their build (a `bisect` run with an older
cryptography wheel, a masked run beside unmasked ones) are not pooled silently: callers
split them off or leave them out and say which (`Build.differences`).

**One machine.** `machine_of` names the machine a run was measured on: its host name, CPU
model, core count and hypervisor. Two machines never share a history point, a step, a noise
model or a gate's judgement; a fleet's build is judged by each machine's own before and
after (`app.fleet`). The CPU flags are not part of a machine: a kernel that hides AVX-512
after an update is the same machine running another build.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pqbench.analysis import explain, pairing
from pqbench.data.record.fingerprint import (
    BUILD_BINARIES,
    Fingerprint,
    binary_identity,
    machine_words,
)
from pqbench.data.record.results import Run
from pqbench.platform.untrusted import first_few, named

__all__ = ["Build", "Machine", "build_of", "build_words", "by_build", "has_own_libraries",
           "machine_of", "machines_named", "one_build", "principal", "split_by_build",
           "split_by_machine"]

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


def foreign_owner(library: str) -> str | None:
    """The implementation a library reported under "implementation:library" belongs to (a
    foreign stack's worker reports its libraries so: "go:crypto/mlkem"); None for a library
    every run reports."""
    owner, colon, _ = library.partition(":")
    return owner if colon and owner else None


def has_own_libraries(runs: Iterable[Run], implementation: str) -> bool:
    """Whether a foreign stack reported libraries of its own in any of the runs (its rows'
    builds then differ from the machine's: `build_of(run, implementation)`)."""
    prefix = f"{implementation}:"

    def own(env: Fingerprint) -> bool:
        return any(str(name).startswith(prefix) for name in env.libraries)

    return any(run.environment.derived(("own libraries", prefix), own) for run in runs)


def build_of(run: Run, implementation: str | None = None) -> Build:
    """The build a run measured (see the module docstring for what counts); with an
    `implementation`, the build its rows measured: a foreign stack's own libraries count
    for that stack's rows alone."""
    timing = _timing(run.settings)
    # One Build per fingerprint base and way of timing, shared by the runs that have both.
    return run.environment.derived(("build", implementation, timing),
                                   lambda env: Build(_software(env, implementation), timing))


def _software(env: Fingerprint, implementation: str | None) -> tuple[tuple[str, str], ...]:
    """The facts of a fingerprint that make a build (`build_of`), sorted by name."""
    facts: dict[str, str] = {}
    os_build = env.path("os_build")
    if os_build is not None:
        facts["os_build"] = _text(os_build)
    libraries = env.path("libraries")
    if isinstance(libraries, Mapping):
        for name, version in libraries.items():
            owner = foreign_owner(str(name))
            if owner is not None and owner != implementation:
                continue
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
    binaries = env.path("binaries")
    if isinstance(binaries, Mapping):
        for role in BUILD_BINARIES:
            identity = binary_identity(binaries.get(role))
            if identity is not None:
                facts[f"binaries.{role}"] = identity
    return tuple(sorted(facts.items()))


def _timing(settings: Mapping[str, Any] | Any) -> tuple[tuple[str, str], ...]:
    """How a run was timed, where it changes what a rate means, as sorted (name, value)
    facts: an `ab` side's paired rounds, else its time base (runs stored before the choice:
    wall) and process count (`--multi`). The same few tuples for a fleet's runs, each made
    once (a history asks each of 10,000 runs twice)."""
    if not isinstance(settings, Mapping):
        return _timed(None, "wall", None)
    if "ab" in settings:
        return _timed("ab pairs", None, None)
    processes = settings.get("processes")
    return _timed(None, str(settings.get("time_base") or "wall"),
                  str(processes) if isinstance(processes, int) and processes > 1 else None)


@functools.cache
def _timed(method: str | None, time_base: str | None, processes: str | None
           ) -> tuple[tuple[str, str], ...]:
    found = {"method": method, "processes": processes, "time_base": time_base}
    return tuple((name, value) for name, value in sorted(found.items()) if value is not None)


def one_build(a: Run, b: Run) -> bool:
    """Whether two runs measured one build."""
    return build_of(a).matches(build_of(b))


def split_by_build(runs: Iterable[Run], implementation: str | None = None
                   ) -> dict[Build, list[Run]]:
    """The runs per build (of `implementation`'s rows, when given), builds in the order
    their first run appears; a run joins the first build it `matches` (a run stored before
    an `OPTIONAL` fact was recorded joins the build it agrees with)."""
    found: dict[Build, list[Run]] = {}
    # A run's build matches another only where their facts that every run records are
    # equal (`Build.matches`): look among those alone, not through every build so far.
    by_sure: dict[tuple[Any, ...], list[Build]] = {}
    for run in runs:
        build = build_of(run, implementation)
        if build not in found:
            sure = _sure_facts(build)
            kin = by_sure.setdefault(sure, [])
            home = next((b for b in kin if b.matches(build)), build)
            if home is build:
                kin.append(build)
        else:
            home = build
        found.setdefault(home, []).append(run)
    return found


def _sure_facts(build: Build) -> tuple[Any, ...]:
    """A build's facts but the `OPTIONAL` ones, and how it was timed: two builds that
    `match` have these equal."""
    return (tuple(f for f in build.software if not f[0].startswith(OPTIONAL)), build.timing)


def principal(runs: Sequence[Run], implementation: str | None = None) -> Build:
    """The build a group of runs stands for: the one most of its runs measured; among
    equals the one without a capability knob or mask set (a masked run is the variant),
    then the newest run's (runs are given oldest first)."""
    if not runs:
        raise ValueError("principal: no runs")
    split = split_by_build(runs, implementation)
    last = {build: max(runs.index(r) for r in members) for build, members in split.items()}
    return max(split, key=lambda b: (len(split[b]), not _configured(b), last[b]))


def _configured(build: Build) -> bool:
    return any(name.startswith(("knobs.", "mask")) for name, _ in build.software)


def build_words(build: Build, main: Build) -> str:
    """What sets `build` apart from `main`, in words: "cryptography 42.0.8", "AES-NI
    hidden", "timed in wall time"."""
    said: list[str] = []
    for name, mine, _ in build.differences(main):
        if name.startswith("knobs."):
            text = explain.knob_text(name.split(".", 1)[1], mine)
            said.append(text or f"{name.split('.', 1)[1]} unset")
        elif name == "mask":
            continue  # the knob it sets says it in words
        elif name == "time_base":
            said.append(f"timed in {mine or 'wall'} time")
        else:
            shown = mine if mine is not None else "(none)"
            said.append(f"{name.removeprefix('libraries.')} {shown}")
    return ", ".join(dict.fromkeys(said)) or "another configuration"


def by_build(groups: Sequence[tuple[str, Sequence[Run]]], implementation: str | None = None
             ) -> list[tuple[str, list[Run]]]:
    """Each group whose runs measured different builds split into one group per build:
    the build most of its runs measured keeps the group's name (and notes), the others are
    named by what sets them apart, "debian-12/6.18 (AES-NI hidden)", "... (cryptography
    42.0.8)". An `ab` session's side joins the group of the build it ran, however timed;
    runs that differ by design are not one point. With an `implementation`, its rows'
    builds (a foreign stack's own libraries split them too)."""
    split: list[tuple[str, list[Run]]] = []
    for name, runs in groups:
        plain = [r for r in runs if pairing.ab_session(r) is None]
        sides = [r for r in runs if pairing.ab_session(r) is not None]
        builds = split_by_build(plain, implementation)
        for side in sides:
            own = build_of(side, implementation)
            home = next((b for b in builds if b.same_software(own)), None)
            if home is None:
                builds[own] = [side]
            else:
                builds[home].append(side)
        if len(builds) <= 1:
            split.append((name, list(runs)))
            continue
        main = principal(plain, implementation) if plain else next(iter(builds))
        for build, members in builds.items():
            members.sort(key=lambda r: (r.started_at, r.run_id))
            split.append((name if build == main else f"{name} ({build_words(build, main)})",
                          members))
    return split


#: Runs of another build a comparison's warning names by id (the rest it counts).
LEFT_OUT_SHOWN = 5


def one_build_side(runs: Sequence[Run], name: str, warnings: list[str]) -> list[Run]:
    """The runs of the build a side of a comparison stands for (`principal`); the others
    are left out, and a warning (appended to `warnings`) names them and what sets them
    apart."""
    if len(runs) < 2:
        return list(runs)
    split = split_by_build(runs)
    if len(split) == 1:
        return list(runs)
    main = principal(runs)
    for build, members in split.items():
        if build != main:
            ids = first_few([r.run_id for r in members], LEFT_OUT_SHOWN)
            warnings.append(f"{name}: {len(members)} run(s) of another build left out "
                            f"({build_words(build, main)}: {ids}); a side is one build")
    return split[main]


# --- one machine -------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Machine:
    """The machine a run was measured on: its host name, CPU model, core count and the
    hypervisor it runs under where the kernel shows one. Two runs of one machine are
    comparable run to run; two machines never share a history point, a step, a noise model
    or a gate's judgement (a CPU model or a host apart is a difference of machines, not of
    builds).

    CPU flags are not part of it: a kernel that hides AVX-512 after an update is the same
    machine running another build, and the flags it lost are a cause of the change, not
    another series."""

    host: str | None
    cpu_model: str | None
    cores: int | None
    hypervisor: str | None

    @property
    def name(self) -> str:
        """"m01 (AMD EPYC 9B14, 2 cores, KVM)": legible, and distinct for distinct machines."""
        return machine_words(self.host, self.cpu_model, self.cores, self.hypervisor)

    @property
    def key(self) -> str:
        """A short stable id (12 hex digits), for file names and options."""
        blob = json.dumps([self.host, self.cpu_model, self.cores, self.hypervisor])
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    def matches(self, text: str) -> bool:
        """Whether a user's `--machine TEXT` names this machine: its key (or a prefix of
        four digits or more), its host name, or its whole name."""
        text = text.strip()
        return bool(text) and (text == self.host or text == self.name
                               or (len(text) >= 4 and self.key.startswith(text.lower())))


def machine_of(run: Run) -> Machine:
    """The machine a run was measured on, from its fingerprint (None where a run recorded
    before pqbench kept a fact lacks it)."""
    return run.environment.derived(Machine, lambda env: Machine(
        env.hostname, env.cpu_model, env.cpu_count, env.hypervisor))


def split_by_machine(runs: Iterable[Run]) -> dict[Machine, list[Run]]:
    """The runs per machine, machines in the order their first run appears."""
    found: dict[Machine, list[Run]] = {}
    for run in runs:
        found.setdefault(machine_of(run), []).append(run)
    return found


def machines_named(machines: Iterable[Machine], near: str | None = None) -> str:
    """Machines as a message lists them (`platform.untrusted.named`): at most ten, those
    whose host name is closest to `near` (what a user asked for) first, then how many
    more; a fleet's store holds hundreds, and a refusal naming each would be pages long."""
    hosts = {m.name: m.host or m.name for m in dict.fromkeys(machines)}
    return named(list(hosts), near=near, key=hosts.__getitem__)
