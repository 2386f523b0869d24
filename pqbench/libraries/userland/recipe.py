"""What a userland is: the recipe it is built from, where it lives, and its manifests.

A userland is a root file system of another OS release, made by debootstrap, kept in
pqbench's per-user cache (never in the repository) under
`cache_root()/userlands/<name>-<dpkg architecture>/`, e.g.
`~/.cache/pqbench/userlands/debian-trixie-amd64/`. Two manifests say what is inside:
`pqbench-userland.json` at its root (the base system, written once when it is built) and
`/opt/pqbench/<checkout>/.pqbench-install.json` (a pqbench installed in it from one host
checkout, rewritten on refresh).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pqbench.libraries.liboqs.locate import cache_root
from pqbench.platform.errors import UsageError

BASE_MANIFEST = "pqbench-userland.json"
#: pqbench checkouts inside, one per host checkout (see install_dir).
INSTALLS = PurePosixPath("/opt/pqbench")
INSTALL_MANIFEST = ".pqbench-install.json"
MIRROR_VAR = "PQBENCH_DEBIAN_MIRROR"

#: What the README set-up needs inside, and nothing more: python3, its venv module and
#: headers, a C compiler, make and the OpenSSL headers for `make setup` (which builds the
#: native extensions); the openssl command to cross-check with `openssl speed`; the CA
#: tools to trust the host's proxy CA. No cmake, ninja or cargo: liboqs is not built
#: inside, the host's cached build is mounted instead (it links libcrypto.so.3
#: dynamically, so it runs on the userland's own OpenSSL).
PACKAGES = ("python3", "python3-venv", "python3-dev", "gcc", "libc6-dev", "make",
            "libssl-dev", "openssl", "ca-certificates")


@dataclass(frozen=True)
class Recipe:
    """A Debian (or derivative) release that debootstrap can make."""

    name: str
    suite: str
    default_mirror: str
    packages: tuple[str, ...] = PACKAGES
    variant: str = "minbase"

    @property
    def mirror(self) -> str:
        """$PQBENCH_DEBIAN_MIRROR, else the distribution's own mirror."""
        return os.environ.get(MIRROR_VAR) or self.default_mirror


#: Debian 13 ships OpenSSL 3.5 (ML-KEM and ML-DSA in libcrypto) and Python 3.13.
RECIPES = {r.name: r for r in (
    Recipe("debian-trixie", "trixie", "http://deb.debian.org/debian"),
)}


def recipe(name: str) -> Recipe:
    """The recipe called `name`, or a UsageError listing the known ones."""
    try:
        return RECIPES[name]
    except KeyError:
        raise UsageError(f"unknown userland {name!r}; known: {', '.join(RECIPES)}") from None


def userlands_dir() -> Path:
    """cache_root()/userlands: one directory per built userland, plus the build lock."""
    return cache_root() / "userlands"


def architecture() -> str:
    """The dpkg architecture of this machine (amd64, arm64 ...), as debootstrap names it."""
    dpkg = shutil.which("dpkg")
    if dpkg:
        done = subprocess.run([dpkg, "--print-architecture"], capture_output=True, text=True,
                              check=False)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)


def root_of(spec: Recipe) -> Path:
    """Where the userland made from `spec` lives on this machine."""
    return userlands_dir() / f"{spec.name}-{architecture()}"


def install_dir(tree: Path) -> PurePosixPath:
    """/opt/pqbench/<checkout name>-<hash of its host path>: one install per host checkout,
    so two checkouts on one machine (git worktrees) never overwrite each other's."""
    digest = hashlib.sha256(str(tree).encode()).hexdigest()[:8]
    return INSTALLS / f"{tree.name}-{digest}"


def pqbench_in(install: PurePosixPath) -> PurePosixPath:
    """The pqbench that `make setup` makes in a checkout (README: .venv in the checkout)."""
    return install / ".venv" / "bin" / "pqbench"


def inside(root: Path, path: PurePosixPath) -> Path:
    """The host path of `path` as seen from inside the userland at `root`."""
    return root / path.relative_to("/")


def read_manifest(path: Path) -> dict[str, Any] | None:
    """A manifest's content, or None when it is missing or unreadable (then: rebuild)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_manifest(path: Path, data: dict[str, Any]) -> None:
    """Write atomically: a reader sees the old manifest or the new one, never half."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    partial.replace(path)
