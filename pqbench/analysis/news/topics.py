"""Fingerprint fields gathered into the topics a reader thinks in.

One OS upgrade changes many fields at once: Debian 12 to 13 changes `os.version`,
`os.distribution`, `os.build`, `os_build` and `platform.userland` (one fact: the userland),
and `libraries.system_libcrypto`, `libraries.libcrypto`, `libraries.hashlib_openssl` and
`library_details.*.version` (one fact: the system's OpenSSL). Compare keeps every field;
the news names each fact once, under its topic, with its most telling field's values.
"""

from __future__ import annotations

#: (topic, field prefixes in order of preference: the first that differs is shown). A
#: prefix matches the field itself or anything below it (`platform.mitigations` matches
#: `platform.mitigations.spectre_v2`).
TOPICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("OS userland", ("platform.userland", "os.name", "os.version", "os.distribution",
                     "os.build", "os_build", "os.system")),
    ("kernel", ("os.kernel", "platform.kernel", "os.kernel_build")),
    ("C library", ("platform.libc", "binaries.libc")),
    ("system libcrypto", ("libraries.system_libcrypto", "libraries.libcrypto",
                          "binaries.libcrypto", "library_details.system_libcrypto",
                          "library_details.libcrypto", "libraries.hashlib_openssl",
                          "binaries.libssl")),
    ("liboqs", ("libraries.liboqs", "binaries.liboqs", "library_details.liboqs")),
    ("liboqs-python", ("libraries.liboqs-python", "binaries.liboqs-python")),
    ("cryptography", ("libraries.cryptography", "libraries.cryptography_openssl",
                      "binaries.cryptography", "library_details.cryptography")),
    ("Python", ("libraries.python", "binaries.python", "python_executable")),
    ("pqbench's loops", ("binaries.pqbench-native",)),
    ("CPU", ("cpu.model", "cpu_flags", "cpu.flags", "cpu.count", "arch")),
    ("OpenSSL capability knobs", ("knobs",)),
    ("OpenSSL's CPU capabilities", ("openssl_capabilities.libcrypto",
                                    "openssl_capabilities")),
    ("capability mask", ("mask",)),
    ("microcode", ("platform.microcode",)),
    ("kernel mitigations", ("platform.mitigations",)),
    ("CPU frequency policy", ("platform.cpufreq",)),
    ("SMT", ("platform.smt",)),
    ("virtualization", ("platform.virtualization",)),
    ("host", ("hostname",)),
)

#: Topics whose sameness is worth saying: an OS story that kept the kernel and the CPU
#: isolates the userland.
KEY_TOPICS = ("OS userland", "kernel", "C library", "system libcrypto", "liboqs",
              "cryptography", "Python", "CPU")


def _matches(field: str, prefix: str) -> bool:
    return field == prefix or field.startswith(prefix + ".")


def topic_of(field: str) -> str | None:
    """The topic a fingerprint field belongs to; None for the minor ones (numpy, paths)."""
    for topic, prefixes in TOPICS:
        if any(_matches(field, prefix) for prefix in prefixes):
            return topic
    return None


def preference(topic: str, field: str) -> int:
    """How telling `field` is for `topic` (0 best): the representative is the smallest."""
    prefixes = dict(TOPICS).get(topic, ())
    return next((i for i, prefix in enumerate(prefixes) if _matches(field, prefix)),
                len(prefixes))


def representative(topic: str) -> str:
    """The field that names the topic's value when nothing about it differs."""
    return dict(TOPICS)[topic][0]
