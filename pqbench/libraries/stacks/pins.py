"""Pinned versions of a foreign library, for one side of `ab` or one build of `bisect`.

Three spellings, one per registry, each naming one exact version as the registry spells it:

* ``gomod:MODULE@VERSION``: a Go module (``gomod:github.com/cloudflare/circl@v1.6.1``);
* ``crate:NAME==VERSION``: a Rust crate (``crate:aws-lc-rs==1.13.0``);
* ``maven:GROUP:ARTIFACT==VERSION``: a Maven artifact
  (``maven:org.bouncycastle:bcprov-jdk18on==1.80``).

A pin applies to every stack whose sources depend on that module, crate or artifact; the
others ignore it. Pins reach a worker process through one environment variable,
PQBENCH_STACK_PINS (space-separated), so a side's fingerprint names them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from pqbench.platform.errors import UsageError

VARIABLE = "PQBENCH_STACK_PINS"
#: Each registry's kind, as a side item spells it.
SPELLINGS = {"gomod": "gomod:MODULE@VERSION", "crate": "crate:NAME==VERSION",
             "maven": "maven:GROUP:ARTIFACT==VERSION"}

_FORMS = {
    "gomod": re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9._~/-]*[A-Za-z0-9])"
                        r"@(?P<version>v\d+\.\d+\.\d+[A-Za-z0-9.+-]*)"),
    "crate": re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9_-]{0,63})"
                        r"==(?P<version>\d+\.\d+\.\d+[A-Za-z0-9.+-]*)"),
    "maven": re.compile(r"(?P<name>[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+)"
                        r"==(?P<version>[A-Za-z0-9][A-Za-z0-9._-]*)"),
}
_EXAMPLES = {"gomod": "gomod:github.com/cloudflare/circl@v1.6.1",
             "crate": "crate:aws-lc-rs==1.13.0",
             "maven": "maven:org.bouncycastle:bcprov-jdk18on==1.80"}


@dataclass(frozen=True, order=True)
class Pin:
    """One library at one exact version."""

    kind: str
    name: str
    version: str

    @property
    def spec(self) -> str:
        joint = "@" if self.kind == "gomod" else "=="
        return f"{self.kind}:{self.name}{joint}{self.version}"


def parse(spec: str) -> Pin:
    """A Pin from its spelling; a UsageError naming the form otherwise."""
    kind, colon, rest = spec.strip().partition(":")
    kind = kind.lower()
    form = _FORMS.get(kind)
    found = form.fullmatch(rest.strip()) if form and colon else None
    if found is None:
        example = _EXAMPLES.get(kind)
        shown = example or ", ".join(_EXAMPLES.values())
        raise UsageError(f"{spec!r}: a pinned version is spelled like {shown}")
    return Pin(kind, found["name"], found["version"])


def from_environment() -> tuple[Pin, ...]:
    """The pins this process was started with (PQBENCH_STACK_PINS)."""
    text = os.environ.get(VARIABLE, "")
    return tuple(sorted({parse(item) for item in text.split()}))


def joined(pins: tuple[Pin, ...] | list[Pin]) -> str:
    """The value of PQBENCH_STACK_PINS for `pins`; one pin per library (the last wins)."""
    by_library = {(p.kind, p.name): p for p in pins}
    return " ".join(p.spec for p in sorted(by_library.values()))
