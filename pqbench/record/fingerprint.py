"""The environment a run measured in, read through one set of names (as pyperf's
`_metadata`): the only module that knows where a fact sits in the fingerprint.

`pqbench.environment.collect` writes the fingerprint as JSON-ready data and
`record.models.Fingerprint` validates it on import (its known parts typed, the rest
checked JSON); everything that reads one goes through `Fingerprint`, a read-only mapping
with a property per known part, so a stored or imported fingerprint that lacks a part
answers None rather than failing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

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


class Fingerprint(Mapping[str, Any]):
    """A run's fingerprint: the mapping as stored, and its known parts by name."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = dict(data or {})

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

    def to_dict(self) -> dict[str, Any]:
        """The fingerprint as JSON-ready data (a copy)."""
        return dict(self._data)
