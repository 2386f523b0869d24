"""Capability masks: hide CPU features from OpenSSL to record an honest "before" baseline.

OpenSSL reads OPENSSL_ia32cap (x86) or OPENSSL_armcap (ARM) once, when the library
initialises (`OPENSSL_cpuid_setup`), so a mask must be in the environment before the
process loads libcrypto: `pqbench speed --mask` runs the measurement in a child process.
Which bits a mask clears, and how OpenSSL parses the value, is data:
`algorithms/capabilities.py`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from pqbench.catalog.algorithms.capabilities import (
    IA32CAP,
    armcap_value,
    ia32cap_value,
    parse_names,
    variable,
)
from pqbench.platform import processes
from pqbench.platform.errors import UsageError
from pqbench.platform.interrupts import Terminated

#: Set in the child process so that it never relaunches itself.
MARKER = "PQBENCH_MASK_APPLIED"


def detected_vector(var: str) -> str | None:
    """What `openssl version -a` reports for the system libcrypto ("0x...:0x..."), if any."""
    try:
        done = subprocess.run(["openssl", "version", "-a"], capture_output=True, text=True,
                              timeout=10, check=False,
                              env={k: v for k, v in os.environ.items() if k != var})
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(rf"{var}=(0x[0-9a-fA-F:x]+)", done.stdout)
    return found.group(1) if found else None


@dataclass(frozen=True)
class Mask:
    """A chosen mask: the capability names, the variable and the value that hides them."""

    names: tuple[str, ...]
    variable: str
    value: str
    detected: str | None

    def fingerprint(self) -> dict[str, object]:
        return {"names": list(self.names), "variable": self.variable, "value": self.value,
                "detected": self.detected}


def build(text: str | Sequence[str], machine: str | None = None) -> Mask:
    """The mask for `--mask TEXT` on this (or the given) machine."""
    names = parse_names(text, machine)
    var = variable(machine)
    detected = detected_vector(var)
    if var == IA32CAP:
        return Mask(names, var, ia32cap_value(names), detected)
    if detected is None:
        raise UsageError("cannot read the detected OPENSSL_armcap from `openssl version -a`; "
                         "without it an ARM mask would hide every capability")
    return Mask(names, var, armcap_value(names, int(detected.split(":")[0], 16)), detected)


def relaunch(mask: Mask, argv: Sequence[str] | None = None) -> int | None:
    """Run this command again in a child whose OpenSSL sees the mask; its exit code.

    Returns None when this process already is that child (the marker is set and the mask
    is in force), so the caller measures. A mask given while the variable is already set
    by hand is refused: the two would silently combine.
    """
    if os.environ.get(MARKER) == mask.value and os.environ.get(mask.variable) == mask.value:
        return None
    if os.environ.get(MARKER):
        raise UsageError(f"{MARKER} is set but {mask.variable} does not hold the mask; "
                         "unset both and try again")
    if os.environ.get(mask.variable) is not None:
        raise UsageError(f"{mask.variable} is already set ({os.environ[mask.variable]!r}); "
                         "unset it or drop --mask")
    env = {**os.environ, mask.variable: mask.value, MARKER: mask.value}
    args = list(sys.argv[1:] if argv is None else argv)
    child = subprocess.Popen([*processes.python_module("pqbench"), *args], env=env)
    try:
        return child.wait()
    except KeyboardInterrupt as exc:
        if isinstance(exc, Terminated):
            child.terminate()  # SIGTERM reached only this process: pass it on
        return child.wait()  # the child stores what it finished
