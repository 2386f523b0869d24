"""Another OS userland on the same machine: measure the next OS release's crypto here.

An OS upgrade changes the C library, OpenSSL and Python under the same kernel and CPU. To
see what that does to crypto speed before (or without) upgrading, pqbench builds the
other release's userland with debootstrap into its cache, installs itself there from the
current source tree with the README's own `make setup`, and runs inside it through
chroot. Each side is then an ordinary pqbench with its own fingerprint; `ab` drives both
from the host (the other side through `command_prefix()`).

    pqbench userland build debian-trixie     # build or reuse, then refresh pqbench
    pqbench userland prefix debian-trixie    # the command that starts its pqbench
    pqbench userland run debian-trixie -- /opt/pqbench/.../pqbench speed -i libcrypto
    pqbench ab --a here --b userland:debian-trixie   # the two OS builds, paired

(`python -m pqbench.libraries.userland run NAME -- CMD` is the same `run`, without loading the
command line: what a prefix starts.)

Building and entering need root (debootstrap, chroot and mount). A container image would
serve as well where docker or podman runs; `container_engines()` says which are installed
and whether one answers. None ran on the machines this was written on (a docker client
without a daemon), so there is no container path yet rather than an untested one.
Importing this package has no side effects.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, NoReturn

from pqbench.libraries.userland.install import source_tree
from pqbench.libraries.userland.recipe import (
    BASE_MANIFEST,
    INSTALL_MANIFEST,
    RECIPES,
    inside,
    install_dir,
    pqbench_in,
    read_manifest,
    recipe,
    root_of,
)
from pqbench.platform import processes
from pqbench.platform.errors import UsageError, UserlandError

__all__ = ["RECIPES", "Userland", "UserlandError", "command_prefix", "container_engines",
           "ensure", "find", "for_session", "is_current", "progress"]

Log = Callable[[str], None]


#: Where a userland build reports its progress: the "pqbench.libraries.userland" logger.
#: This room prints nothing itself: the command line shows the "pqbench" loggers on stderr
#: (`views.console.show_progress`); a library caller sees them if it asks logging.
progress: Log = logging.getLogger("pqbench.libraries.userland").info


@dataclass(frozen=True)
class Userland:
    """A built userland with pqbench set up inside from this checkout."""

    name: str
    root: Path
    install_dir: PurePosixPath
    base: dict[str, Any]
    install: dict[str, Any]

    @property
    def pqbench(self) -> PurePosixPath:
        """The pqbench inside, as a path in the userland."""
        return pqbench_in(self.install_dir)

    def command_prefix(self) -> list[str]:
        """argv that starts this userland's pqbench: append its arguments (e.g. `worker`)."""
        return [*processes.python_module("pqbench.libraries.userland"), "run", self.name, "--",
                str(self.pqbench)]


def find(name: str) -> Userland:
    """The userland `name` with this checkout's pqbench, without building anything."""
    spec = recipe(name)
    root = root_of(spec)
    installed = install_dir(source_tree())
    base = read_manifest(root / BASE_MANIFEST)
    install = read_manifest(inside(root, installed) / INSTALL_MANIFEST)
    if base is None or install is None or not inside(root, pqbench_in(installed)).exists():
        raise UserlandError(f"userland {name} with pqbench from {source_tree()} is not built "
                            f"at {root}: run `pqbench userland build {name}` (as root)")
    return Userland(name, root, installed, base, install)


def ensure(name: str, log: Log = progress) -> Userland:
    """Build the userland `name` or reuse it, and (re)install pqbench from this tree.

    What the steps need is checked first (`preflight`: root, unshare, debootstrap or apt,
    the mirror), so a missing piece is one clear error before anything is downloaded.
    The host's liboqs build is needed inside (it is mounted, not rebuilt), so it is made
    first if the cache has none.
    """
    from pqbench.libraries.userland.bootstrap import ensure_base, preflight
    from pqbench.libraries.userland.install import ensure_installed

    spec = recipe(name)
    preflight(spec, log)
    _ensure_liboqs_cache(log)
    root = ensure_base(spec, log)
    ensure_installed(root, log)
    return find(name)


def for_session(name: str, log: Log = progress) -> Userland:
    """The userland `name` ready to be an `ab` side: its base must be built (minutes, so
    never done implicitly: the error names the command), and its pqbench is refreshed from
    this checkout when the checkout changed since (both sides must run the same pqbench;
    an unchanged tree costs one hash pass)."""
    from pqbench.libraries.userland.chroot import require_root, unshare_argv
    from pqbench.libraries.userland.install import ensure_installed

    spec = recipe(name)
    root = root_of(spec)
    if read_manifest(root / BASE_MANIFEST) is None:
        raise UserlandError(f"userland {name} is not built ({root} holds none): run "
                            f"`pqbench userland build {name}` first, as root (a few minutes, "
                            "once; later builds reuse it)")
    require_root()
    unshare_argv()
    ensure_installed(root, log)
    return find(name)


def is_current(userland: Userland) -> bool:
    """Whether the pqbench inside was installed from this checkout as it is now."""
    from pqbench.libraries.userland.install import fingerprint, source_files

    tree = source_tree()
    return userland.install.get("fingerprint") == fingerprint(tree, source_files(tree))


def _ensure_liboqs_cache(log: Log) -> None:
    from pqbench.libraries.liboqs.compiling import compile_pinned
    from pqbench.libraries.liboqs.locate import MANIFEST_NAME, cache_dir

    if not any(cache_dir().glob(f"*/{MANIFEST_NAME}")):
        log("the userland reuses pqbench's liboqs build, and the cache has none: building it")
        compile_pinned(log)


def command_prefix(name: str) -> list[str]:
    """The command prefix that starts the pqbench of the built userland `name`."""
    return find(name).command_prefix()


def shell_prefix(name: str) -> str:
    """command_prefix() quoted for a shell."""
    return shlex.join(command_prefix(name))


def container_engines() -> dict[str, str]:
    """Each container engine found, with whether it runs: pqbench offers a container
    image as the other userland only where an engine answers (none is faked)."""
    found: dict[str, str] = {}
    for engine in ("docker", "podman"):
        path = shutil.which(engine)
        if path is None:
            continue
        try:
            done = subprocess.run([path, "info"], capture_output=True, text=True, timeout=20,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            found[engine] = f"{path}: does not answer ({exc})"
            continue
        found[engine] = (f"{path}: running" if done.returncode == 0 else
                         f"{path}: installed, but no engine runs "
                         f"({(done.stderr.strip().splitlines() or ['no reason'])[-1]})")
    return found


def given_command(argv: Sequence[str]) -> list[str]:
    """The command after an optional `--`; none is a usage error."""
    command = list(argv[1:]) if list(argv[:1]) == ["--"] else list(argv)
    if not command:
        raise UsageError("no command given: pqbench userland run NAME -- COMMAND [ARGS...]")
    return command


def exec_inside(name: str, argv: Sequence[str]) -> NoReturn:
    """Replace this process by `argv` run inside the built userland `name`."""
    from pqbench.libraries.userland.chroot import entry_argv, require_root

    command = given_command(argv)
    require_root()
    entry = entry_argv(find(name).root, command)
    os.execvp(entry[0], entry)
