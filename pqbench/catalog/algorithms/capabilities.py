"""The CPU capabilities OpenSSL dispatches on, as data: which bit of its capability vector
each one is, the /proc/cpuinfo flag of the same feature, and the value of OPENSSL_ia32cap or
OPENSSL_armcap that hides a chosen few (the masks `speed --mask` and `ab` apply live in
`speed/mask.py`; `analysis/explain.py` reads which capabilities a value hid).

x86, `OPENSSL_ia32cap` (OpenSSL 3.x/4.0 crypto/cpuid.c and the OPENSSL_ia32cap(3) manual):
the value is colon-separated 64-bit words. Word 0 is CPUID.1 EDX:ECX (ECX in the high
half), word 1 is CPUID.7.0 EBX:ECX; OpenSSL >= 3.3 reads 5 words (10 32-bit indexes), 3.0
reads 2. A word "~X" clears the bits of X from what the CPU reports, "X" replaces the word,
and an empty word keeps it. A word that is *absent* is zeroed by OpenSSL >= 3.3 (and word
1 by 3.0), so "~0x200000000000000" alone would also hide AVX2, SHA-NI, VAES ... We
therefore always write every word, "~0" where nothing is cleared. The "~" form clears
bits relative to what each library detects itself, so one value is exact for both the
system libcrypto and cryptography's bundled OpenSSL; no detected vector is needed.

ARM, `OPENSSL_armcap` (crypto/armcap.c): the value *replaces* the detected word
(strtoul, no "~" form), so the mask is the detected word (`openssl version -a` prints
"OPENSSL_armcap=0x...") with bits cleared. Bits from crypto/arm_arch.h. Not tested on
ARM hardware.
"""

from __future__ import annotations

import platform
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pqbench.platform.errors import UsageError

#: CPU features that change what crypto code paths run (AES-NI, carry-less multiply,
#: SHA extensions, vector units; ADX/BMI2 speed up the bignum arithmetic RSA and ECC use):
#: the /proc/cpuinfo flags a run's fingerprint records (environment.py).
X86_CRYPTO_FLAGS = ("aes", "pclmulqdq", "sha_ni", "avx2", "avx512f", "vaes", "vpclmulqdq",
                    "adx", "bmi2")
ARM_CRYPTO_FLAGS = ("aes", "pmull", "sha1", "sha2", "sha3", "sha512")

IA32CAP = "OPENSSL_ia32cap"
ARMCAP = "OPENSSL_armcap"
#: 64-bit words OpenSSL 3.3+ reads from OPENSSL_ia32cap (OPENSSL_IA32CAP_P_MAX_INDEXES 10).
IA32CAP_WORDS = 5


@dataclass(frozen=True)
class Capability:
    """One CPU feature OpenSSL dispatches on: which word and bit of its capability vector."""

    name: str
    word: int
    bit: int
    description: str
    #: The /proc/cpuinfo flag for the same feature, to tell whether hiding it changes anything.
    cpu_flag: str


X86: dict[str, Capability] = {c.name: c for c in (
    Capability("pclmulqdq", 0, 32 + 1, "carry-less multiply (GCM's GHASH)", "pclmulqdq"),
    Capability("ssse3", 0, 32 + 9, "SSSE3 (vector SHA and ChaCha paths)", "ssse3"),
    Capability("aesni", 0, 32 + 25, "AES-NI instructions", "aes"),
    Capability("avx", 0, 32 + 28, "AVX", "avx"),
    Capability("avx2", 1, 5, "AVX2", "avx2"),
    Capability("bmi2", 1, 8, "BMI2 (bignum: RSA, ECC)", "bmi2"),
    Capability("avx512", 1, 16, "AVX-512F", "avx512f"),
    Capability("adx", 1, 19, "ADX (bignum: RSA, ECC)", "adx"),
    Capability("shani", 1, 29, "SHA extensions (SHA-1, SHA-256)", "sha_ni"),
    Capability("vaes", 1, 32 + 9, "VAES (vector AES: AES-GCM/XTS with AVX-512)", "vaes"),
    Capability("vpclmulqdq", 1, 32 + 10, "VPCLMULQDQ (vector GHASH, XTS tweaks)",
               "vpclmulqdq"),
)}

ARM: dict[str, Capability] = {c.name: c for c in (
    Capability("neon", 0, 0, "NEON", "asimd"),
    Capability("aes", 0, 2, "ARMv8 AES instructions", "aes"),
    Capability("sha1", 0, 3, "ARMv8 SHA-1 instructions", "sha1"),
    Capability("sha256", 0, 4, "ARMv8 SHA-256 instructions", "sha2"),
    Capability("pmull", 0, 5, "ARMv8 polynomial multiply (GCM)", "pmull"),
    Capability("sha512", 0, 6, "ARMv8.2 SHA-512 instructions", "sha512"),
    Capability("sha3", 0, 11, "ARMv8.2 SHA-3 instructions", "sha3"),
)}


def is_arm(machine: str | None = None) -> bool:
    return (machine or platform.machine()).lower() in ("aarch64", "arm64", "armv7l", "armv8l")


def table(machine: str | None = None) -> dict[str, Capability]:
    return ARM if is_arm(machine) else X86


def variable(machine: str | None = None) -> str:
    return ARMCAP if is_arm(machine) else IA32CAP


def parse_names(text: str | Sequence[str], machine: str | None = None) -> tuple[str, ...]:
    """Capability names from "aesni,shani" (or a list); unknown names are a usage error."""
    parts = text.split(",") if isinstance(text, str) else [p for t in text for p in t.split(",")]
    names = [p.strip().lower().replace("-", "") for p in parts if p.strip()]
    known = table(machine)
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise UsageError(
            f"unknown capability {', '.join(unknown) or '(none given)'} for --mask on "
            f"{machine or platform.machine()}; choose from: {', '.join(known)}")
    return tuple(sorted(set(names), key=list(known).index))


def ia32cap_value(names: Sequence[str]) -> str:
    """OPENSSL_ia32cap that clears exactly these capabilities and keeps every other bit."""
    words = [0] * IA32CAP_WORDS
    for name in names:
        cap = X86[name]
        words[cap.word] |= 1 << cap.bit
    return ":".join(f"~{w:#x}" for w in words)


def armcap_value(names: Sequence[str], detected: int) -> str:
    """OPENSSL_armcap: the detected word with these capabilities' bits cleared."""
    cleared = 0
    for name in names:
        cleared |= 1 << ARM[name].bit
    return f"{detected & ~cleared:#x}"


def hidden_capabilities(var: str, value: str | None) -> frozenset[str]:
    """The capabilities an OPENSSL_ia32cap/armcap value hides (per the parsing rules above).

    None (variable unset) hides nothing. For a replacing word, a capability is hidden when
    its bit is absent; missing trailing ia32cap words are zeroed by OpenSSL, hiding all.
    """
    if value is None:
        return frozenset()
    if var == ARMCAP:
        try:
            word = int(value, 0)
        except ValueError:
            return frozenset()
        return frozenset(c.name for c in ARM.values() if not word >> c.bit & 1)
    words = value.split(":")
    hidden: set[str] = set()
    for cap in X86.values():
        text = words[cap.word].strip() if cap.word < len(words) else None
        # An empty word keeps the detected one only when a ":" follows it; a missing or
        # final empty word is zeroed ("" alone hides everything).
        if text is None or (not text and cap.word == len(words) - 1):
            hidden.add(cap.name)
        elif text:
            number = _number(text.lstrip("~"))
            bit_set = bool(number >> cap.bit & 1)
            if bit_set == text.startswith("~"):
                hidden.add(cap.name)
    return frozenset(hidden)


def _number(text: str) -> int:
    """OpenSSL's ossl_strtouint64: 0x hex, leading-0 octal, decimal; stops at a bad digit."""
    match = re.match(r"0[xX]([0-9a-fA-F]*)|0([0-7]*)|([0-9]*)", text)
    assert match is not None
    hexa, octal, decimal = match.groups()
    if hexa is not None:
        return int(hexa or "0", 16)
    if octal is not None:
        return int(octal or "0", 8)
    return int(decimal or "0")


def capability_of_flag(flag: str) -> str | None:
    """The capability name for a /proc/cpuinfo flag ("aes" -> "aesni" on x86)."""
    for cap in table().values():
        if cap.cpu_flag == flag:
            return cap.name
    return None
