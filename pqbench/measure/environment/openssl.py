"""The CPU capabilities each loaded OpenSSL actually uses: its effective capability vector.

OpenSSL decides once, when it loads (`OPENSSL_cpuid_setup`), which code paths it takes:
CPUID, less what the operating system does not enable, less what OPENSSL_ia32cap hides
(OPENSSL_ia32cap(3)). A knob a user set says what was asked; the vector says what the
library does, and it differs between libraries: a build without assembly (`no-asm`) uses
none, an older OpenSSL does not know VAES.

* The system libcrypto (3.0 and later) answers in-process: `OPENSSL_info`
  (OPENSSL_INFO_CPU_SETTINGS) returns "OPENSSL_ia32cap=0x...:0x..." as `openssl info
  -cpusettings` prints it, or NULL when the build has no CPU-dispatched code.
* An OpenSSL linked statically into an extension (cryptography's wheels) exports
  nothing; where the extension keeps its symbol table, `OPENSSL_ia32cap_P` is found there
  (`elf.symbol`) and read from this process's memory, inside the extension's own mapped
  extent.

The vector is decoded with the capability table the masks use (`algorithms.capabilities`), so
"aesni" means the same bit in a mask, a knob and here.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path
from typing import Any, NamedTuple

from pqbench.catalog.algorithms import capabilities as capabilities_table
from pqbench.measure.environment import elf

#: OPENSSL_info's type for the CPU settings (include/openssl/crypto.h.in, OpenSSL 3.0).
OPENSSL_INFO_CPU_SETTINGS = 1008
#: The vector's symbol per architecture (crypto/cryptlib.c, crypto/armcap.c).
VECTOR_SYMBOLS = {"ia32cap": "OPENSSL_ia32cap_P", "armcap": "OPENSSL_armcap_P"}
#: "OPENSSL_ia32cap=0x...:0x...", followed by " env:VALUE" when the variable was set.
_SETTING = re.compile(r"^OPENSSL_(ia32cap|armcap)=(0x[0-9a-fA-F]+(?::0x[0-9a-fA-F]+)*)"
                      r"(?:\s+env:\S*)?$")


def decode(setting: str | None) -> tuple[str | None, list[str] | None]:
    """("ia32cap"/"armcap", the capabilities set) from "OPENSSL_ia32cap=0x...:0x..."."""
    found = _SETTING.match((setting or "").strip())
    if not found:
        return None, None
    kind, text = found.groups()
    words = [int(word, 16) for word in text.split(":")]
    table = capabilities_table.X86 if kind == "ia32cap" else capabilities_table.ARM
    enabled = [name for name, cap in table.items()
               if cap.word < len(words) and words[cap.word] >> cap.bit & 1]
    return kind, sorted(enabled)


def _entry(setting: str | None, source: str) -> dict[str, Any]:
    _, enabled = decode(setting)
    return {"vector": setting, "enabled": enabled, "source": source}


def from_library(path: str) -> dict[str, Any] | None:
    """A dynamically loaded libcrypto's vector through its own OPENSSL_info; None where the
    library has no such function (OpenSSL before 3.0, LibreSSL ...)."""
    try:
        library = ctypes.CDLL(path)
        info = library.OPENSSL_info
    except (OSError, AttributeError):
        return None
    info.restype = ctypes.c_char_p
    info.argtypes = [ctypes.c_int]
    answer = info(OPENSSL_INFO_CPU_SETTINGS)
    if answer is None:
        return {"vector": None, "enabled": [],
                "source": "OPENSSL_info: no CPU settings (a build without assembly "
                          "dispatches on no CPU capability)"}
    return _entry(answer.decode("ascii", "replace"), "OPENSSL_info")


class _Mapping(NamedTuple):
    """One line of /proc/PID/maps (proc(5)): an address range, its permissions, the file
    offset it maps and the file's path ("" for an anonymous mapping)."""

    low: int
    high: int
    permissions: str
    offset: int
    path: str


def _mappings(maps: Path) -> list[_Mapping]:
    """This process's mappings; none where the file cannot be read."""
    try:
        lines = maps.read_text(errors="replace").splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        parts = line.split(maxsplit=5)
        if len(parts) < 5:
            continue
        low, high = (int(x, 16) for x in parts[0].split("-"))
        found.append(_Mapping(low, high, parts[1], int(parts[2], 16),
                              parts[5] if len(parts) == 6 else ""))
    return found


def _mapping_base(path: str, mappings: list[_Mapping]) -> int | None:
    """Where the object is loaded: the start of its mapping of file offset 0."""
    return next((m.low for m in mappings if m.path == path and m.offset == 0), None)


def _readable(start: int, end: int, mappings: list[_Mapping]) -> bool:
    """Whether [start, end) lies inside one readable mapping of this process."""
    return any(m.low <= start and end <= m.high and m.permissions.startswith("r")
               for m in mappings)


def from_symbol_table(path: str, maps: Path = Path("/proc/self/maps")) -> dict[str, Any] | None:
    """A statically linked OpenSSL's vector, read from this process's memory at the
    address its symbol table gives; None where the object keeps no such symbol or the
    address is not inside its own readable mapping."""
    for kind, name in VECTOR_SYMBOLS.items():
        found = elf.symbol(path, name)
        if found is None or found.size < 4 or found.size > 256:
            continue
        mappings = _mappings(maps)
        base = _mapping_base(path, mappings)
        extent = elf.load_extent(path)
        if base is None or extent is None:
            return None
        start = base + found.value
        end = start + found.size
        if not (base + extent[0] <= start and end <= base + extent[1]) \
                or not _readable(start, end, mappings):
            return None
        raw = ctypes.string_at(start, found.size)
        halves = [int.from_bytes(raw[i:i + 4], "little") for i in range(0, len(raw) - 3, 4)]
        words = [halves[i] | (halves[i + 1] << 32 if i + 1 < len(halves) else 0)
                 for i in range(0, len(halves), 2)]
        # As OpenSSL prints it: 3.0 shows two 64-bit words, later versions more.
        setting = f"OPENSSL_{kind}=" + ":".join(f"0x{w:x}" for w in words)
        return _entry(setting, f"{name} in the symbol table")
    return None


def capabilities(binaries: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per OpenSSL the process loaded (the libcrypto, cryptography's bundled one), what it
    uses: {"vector", "enabled", "source"}; libraries that cannot tell are left out."""
    found: dict[str, dict[str, Any]] = {}
    for role, entry in binaries.items():
        path = entry.get("path")
        if not isinstance(path, str):
            continue
        if role == "libcrypto":
            answer = from_library(path) or from_symbol_table(path)
        elif role == "cryptography":
            answer = from_symbol_table(path)
        else:
            continue
        if answer is not None:
            found[role] = answer
    return found
