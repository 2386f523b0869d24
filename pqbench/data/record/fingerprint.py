"""The environment a run measured in, read through one set of names (as pyperf's
`_metadata`): the only module that knows where a fact sits in the fingerprint.

`pqbench.measure.environment.collect` writes the fingerprint as JSON-ready data and
`record.models.Fingerprint` validates it on import (its known parts typed, the rest
checked JSON); everything that reads one goes through `Fingerprint`, a read-only mapping
with a property per known part, so a stored or imported fingerprint that lacks a part
answers None rather than failing.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from typing import Any, TypeVar

T = TypeVar("T")

#: Fingerprint fields (dotted paths) through which OpenSSL's capability knobs change code.
KNOB_FIELDS = ("knobs.OPENSSL_ia32cap", "knobs.OPENSSL_armcap")
#: Fields that say the system libcrypto changed.
SYSTEM_LIBCRYPTO_FIELDS = ("libraries.system_libcrypto", "libraries.libcrypto",
                           "library_details.system_libcrypto.version",
                           "library_details.system_libcrypto.path")
#: Library fields per implementation (or the library a row names); anything else under
#: `libraries.` naming it counts too.
LIBRARY_FIELDS = {
    "liboqs": ("libraries.liboqs",),
    "liboqs-python": ("libraries.liboqs", "libraries.liboqs-python"),
    "cryptography": ("libraries.cryptography", "libraries.cryptography_openssl"),
    "libcrypto": ("libraries.system_libcrypto", "library_details.system_libcrypto.version",
                  "library_details.system_libcrypto.path"),
    "hashlib": ("libraries.system_libcrypto", "libraries.python"),
}
#: Fields that never explain a difference: free text, derived hashes, duplicates, and
#: systemd-detect-virt's answer (it depends on the userland having systemd; the
#: kernel-read virtualization fields beside it carry the comparison).
INERT_FIELDS = frozenset({"label", "testbed", "cpu.flags", "mask.detected",
                          "platform.virtualization.detected"})
#: The part of a fingerprint that is one run's alone: the machine's state over its window
#: (`machine_state`); every other part is the same for each run of a build on a machine.
STATE_PART = "run"
#: Parts whose every field is inert: the machine's state over one run is a fact of that
#: moment, not of the build; the noise model reads it (`taken_under_load`).
INERT_PARTS = (STATE_PART,)

#: A run was taken under load when other processes took at least this share of all the
#: machine's cores over its window (`run.others_cpu`), or a hypervisor stole at least
#: `STEAL_THRESHOLD` of it. A tenth of the machine is a core in ten, about what a
#: desktop's background never reaches and one busy process on a machine of up to ten
#: cores always does: on two cores, one other busy process is 0.5.
LOAD_THRESHOLD = 0.10
STEAL_THRESHOLD = 0.05

#: Which rows run on each loaded binary (`binaries.<role>`), by implementation or the
#: library a row names; the C library, Python and pqbench's own loops reach every row a
#: little (`analysis.explain` says how much each).
BINARY_USERS: dict[str, frozenset[str]] = {
    "libcrypto": frozenset({"libcrypto", "hashlib", "openssl"}),
    "libssl": frozenset({"openssl"}),
    "liboqs": frozenset({"liboqs", "liboqs-python"}),
    "liboqs-python": frozenset({"liboqs-python"}),
    "cryptography": frozenset({"cryptography"}),
}
#: Binaries whose identity makes a build (`app.identity`): pqbench's own extension is
#: the measuring tool, rebuilt with every checkout, not the build under test.
BUILD_BINARIES = ("libcrypto", "libssl", "liboqs", "liboqs-python", "libc", "python",
                  "cryptography")


class Fingerprint(Mapping[str, Any]):
    """A run's fingerprint: the mapping as stored, and its known parts by name."""

    __slots__ = ("_base", "_data")

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = dict(data or {})
        self._base: _Base | None = None

    @classmethod
    def of_run(cls, base: Fingerprint, state: Any = None) -> Fingerprint:
        """A run's fingerprint from `base`, the part every run of one build on one machine
        shares (no `STATE_PART`), and the run's own `state` (None: it has none). Runs made
        from one base share what is `derived` from it: a store decodes each distinct base
        once (`data.store.queries`), and a fleet's 10,000 runs hold a few hundred."""
        made = cls.__new__(cls)
        made._data = dict(base._data)
        if state is not None:
            made._data[STATE_PART] = state
        made._base = base._shared()
        return made

    def _shared(self) -> _Base:
        if self._base is None:
            stateless = self if STATE_PART not in self._data else Fingerprint(
                {k: v for k, v in self._data.items() if k != STATE_PART})
            self._base = stateless._base = _Base(stateless)
        return self._base

    def derived(self, key: Hashable, make: Callable[[Fingerprint], T]) -> T:
        """What `make` works out from this fingerprint but its run's own state
        (`STATE_PART`, which `make` is not given), worked out once for every run of the
        same build and machine: a fingerprint is read-only, and a fleet's history asks
        each of thousands of runs what build it measured several times over. `key` names
        what is made (with what it depends on besides the fingerprint)."""
        base = self._shared()
        try:
            return base.derived[key]
        except KeyError:
            found = base.derived[key] = make(base.fingerprint)
            return found

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Fingerprint({self._data!r})"

    def path(self, dotted: str) -> Any:
        """The value at a dotted path ("libraries.liboqs"); None where any part is missing."""
        value: Any = self._data
        for part in dotted.split("."):
            if not isinstance(value, Mapping):
                return None
            value = value.get(part)
        return value

    def has(self, dotted: str) -> bool:
        """Whether the fingerprint records the dotted path at all (its value may be None)."""
        value: Any = self._data
        for part in dotted.split("."):
            if not isinstance(value, Mapping) or part not in value:
                return False
            value = value[part]
        return True

    def _text(self, dotted: str) -> str | None:
        value = self.path(dotted)
        return None if value is None else str(value)

    @property
    def os_build(self) -> str | None:
        return self._text("os_build")

    @property
    def os_name(self) -> str | None:
        """"Debian GNU/Linux 12 (bookworm)": the OS name and version, where known."""
        parts = [self._text("os.name"), self._text("os.version")]
        return " ".join(p for p in parts if p) or None

    @property
    def os_system(self) -> str | None:
        return self._text("os.system")

    @property
    def kernel(self) -> str | None:
        return self._text("os.kernel")

    @property
    def kernel_build(self) -> str | None:
        return self._text("os.kernel_build")

    @property
    def libc(self) -> str | None:
        """The C library ("glibc 2.36"); None in runs recorded before pqbench collected it."""
        return self._text("platform.libc")

    @property
    def arch(self) -> str | None:
        return self._text("arch")

    @property
    def cpu_model(self) -> str | None:
        return self._text("cpu.model")

    @property
    def cpu_count(self) -> int | None:
        count = self.path("cpu.count")
        return count if isinstance(count, int) else None

    @property
    def cpu_flags(self) -> list[str] | None:
        """The crypto-relevant CPU flags; None where the fingerprint does not list them."""
        flags = self.path("cpu_flags")
        return [str(f) for f in flags] if isinstance(flags, list) else None

    @property
    def hostname(self) -> str | None:
        return self._text("hostname")

    @property
    def hypervisor(self) -> str | None:
        """The hypervisor as the kernel shows it: the DMI product ("Google Compute
        Engine"), else /sys/hypervisor's type ("xen"), else "a hypervisor" where the CPU
        flag alone says so; None on bare metal or where nothing was recorded."""
        virtualization = self.path("platform.virtualization")
        if not isinstance(virtualization, Mapping):
            return None
        for name in ("dmi", "hypervisor_type"):
            value = virtualization.get(name)
            if isinstance(value, str) and value.strip():
                return value.strip()
        return "a hypervisor" if virtualization.get("hypervisor") else None

    @property
    def machine_name(self) -> str:
        """The machine in words (`machine_words`)."""
        return machine_words(self.hostname, self.cpu_model, self.cpu_count, self.hypervisor)

    @property
    def testbed(self) -> str | None:
        return self._text("testbed")

    @property
    def libraries(self) -> dict[str, Any]:
        found = self.path("libraries")
        return dict(found) if isinstance(found, Mapping) else {}

    def library(self, name: str) -> str | None:
        """One library's version ("system_libcrypto", "cryptography_openssl" ...)."""
        return self._text(f"libraries.{name}")

    @property
    def python(self) -> str | None:
        return self.library("python")

    @property
    def knobs(self) -> dict[str, Any]:
        found = self.path("knobs")
        return dict(found) if isinstance(found, Mapping) else {}

    @property
    def knobs_set(self) -> list[str]:
        """The capability knobs set, as NAME=VALUE (an OPENSSL_ia32cap mask, say)."""
        return [f"{k}={v}" for k, v in sorted(self.knobs.items()) if v]

    @property
    def tls(self) -> dict[str, Any]:
        """`pqbench tls` runs: each TLS implementation and what it ran on."""
        found = self.path("tls")
        return dict(found) if isinstance(found, Mapping) else {}

    @property
    def legacy_label(self) -> str | None:
        """The label pqbench before the label lived on the run alone wrote here."""
        return self._text("label")

    @property
    def liboqs_uses_openssl(self) -> bool | None:
        """Whether liboqs was built with OQS_USE_OPENSSL (None: the build is not recorded)."""
        build = self.path("library_details.liboqs.build")
        if isinstance(build, Mapping) and "OQS_USE_OPENSSL" in build:
            return bool(build["OQS_USE_OPENSSL"])
        return None

    @property
    def machine_state(self) -> dict[str, Any]:
        """The machine over the run's window (`run`: load averages, others' CPU share,
        steal); {} for runs recorded before pqbench kept it."""
        found = self.path(STATE_PART)
        return dict(found) if isinstance(found, Mapping) else {}

    @property
    def others_cpu(self) -> float | None:
        """The share of all cores other processes took during the run, 0 to 1."""
        value = self.machine_state.get("others_cpu")
        return float(value) if isinstance(value, int | float) else None

    @property
    def steal(self) -> float | None:
        """The share of the run's CPU time a hypervisor gave to other guests, 0 to 1."""
        value = self.machine_state.get("steal")
        return float(value) if isinstance(value, int | float) else None

    @property
    def binaries(self) -> dict[str, dict[str, Any]]:
        """role -> the loaded binary's identity (path, size, build_id or sha256, package,
        package_version, version); {} for runs recorded before pqbench kept them."""
        found = self.path("binaries")
        if not isinstance(found, Mapping):
            return {}
        return {str(k): dict(v) for k, v in found.items() if isinstance(v, Mapping)}

    def binary_identity(self, role: str) -> str | None:
        """A loaded binary's identity: "build-id HEX" or "sha256 HEX"; None if unknown.
        Reads the one entry (a build asks for seven roles of each of thousands of runs)."""
        found = self.path("binaries")
        return binary_identity(found.get(role) if isinstance(found, Mapping) else None)

    def to_dict(self) -> dict[str, Any]:
        """The fingerprint as JSON-ready data (a copy)."""
        return dict(self._data)


class _Base:
    """A fingerprint without its run's state, and what is derived from it (`derived`)."""

    __slots__ = ("derived", "fingerprint")

    def __init__(self, fingerprint: Fingerprint) -> None:
        self.fingerprint = fingerprint
        self.derived: dict[Hashable, Any] = {}


def machine_words(host: str | None, cpu_model: str | None, cores: int | None,
                  hypervisor: str | None) -> str:
    """A machine as people name it: "m01 (AMD EPYC 9B14, 2 cores, Google Compute Engine)":
    legible, and distinct for machines whose facts differ (`app.identity.Machine`)."""
    details = ", ".join(p for p in (cpu_model, f"{cores} cores" if cores is not None else None,
                                     hypervisor) if p)
    name = host or "an unnamed host"
    return f"{name} ({details})" if details else name


def binary_identity(entry: Mapping[str, Any] | None) -> str | None:
    """"build-id HEX" or "sha256 HEX" of a `binaries` entry; None where neither is known."""
    if not isinstance(entry, Mapping):
        return None
    if entry.get("build_id"):
        return f"build-id {entry['build_id']}"
    if entry.get("sha256"):
        return f"sha256 {entry['sha256']}"
    return None


def taken_under_load(fingerprint: Mapping[str, Any]) -> bool:
    """Whether a run was taken while other work ran: other processes took at least
    `LOAD_THRESHOLD` of the machine's cores, or a hypervisor stole at least
    `STEAL_THRESHOLD`; False where the run did not record its load (older runs)."""
    found = fingerprint if isinstance(fingerprint, Fingerprint) else Fingerprint(fingerprint)
    others, steal = found.others_cpu, found.steal
    return (others is not None and others >= LOAD_THRESHOLD) \
        or (steal is not None and steal >= STEAL_THRESHOLD)
