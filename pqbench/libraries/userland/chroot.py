"""Entering a userland: a private mount namespace, the mounts a chroot needs, then exec.

Every entry runs `unshare --mount` first, so each command gets a mount namespace of its
own: /proc, /dev, /sys and the bind mounts below exist only there and vanish with the
last process in it, whatever ends it (normal exit, an error, Ctrl-C, SIGKILL). Nothing is
ever mounted in the host's namespace, so nothing can be left mounted and a userland
directory can always be removed safely. Mounted, all at the same path as on the host
and read-only except /dev:

* /proc (a fresh procfs) and /dev (the host's, recursively): Python, pip and pqbench
  read /proc/cpuinfo and /proc/self/maps, and need /dev/urandom, /dev/null, /dev/shm;
* /sys: CPU frequency, SMT, microcode and mitigations for the fingerprint;
* /etc/resolv.conf: the host's name servers, for pip and apt;
* pqbench's liboqs cache: the host's build is reused inside (PQBENCH_CACHE_DIR points at
  the same path), so the userland needs neither cmake nor cargo nor the network for it;
* the host's pip configuration (/etc/pip.conf, ~/.config/pip, $PIP_CONFIG_FILE) and any
  local path a PIP_* variable names (a --find-links wheel directory, a CA bundle) that
  the userland does not have itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from pqbench.libraries.liboqs.locate import cache_dir, cache_root
from pqbench.platform import processes
from pqbench.platform.errors import UserlandError

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

#: Host variables that name host paths or host interpreters, meaningless inside.
_DROPPED = {"PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE",
            "VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH", "LD_PRELOAD", "OQS_INSTALL_PATH",
            "TMPDIR", "LC_ALL", "LANGUAGE", "PWD", "OLDPWD"}


@dataclass(frozen=True)
class Mount:
    """One mount inside the userland: `source` on the host, at the same path inside."""

    source: str
    kind: str  # "proc", "rbind" (read-write, recursive) or "ro" (read-only bind)

    def argv(self, root: Path) -> list[list[str]]:
        target = str(root) + self.source
        if self.kind == "proc":
            return [["mount", "-t", "proc", "proc", target]]
        if self.kind == "rbind":
            return [["mount", "--rbind", self.source, target]]
        return [["mount", "--bind", self.source, target],
                ["mount", "-o", "remount,bind,ro", target]]


def inside_environment(host: Mapping[str, str]) -> dict[str, str]:
    """The environment a command inside gets: the host's minus its paths and interpreters.

    OPENSSL_*cap knobs, proxies and PIP_* settings pass through; PQBENCH_CACHE_DIR names
    the host's cache, which is mounted at the same path, so pqbench inside finds liboqs.
    """
    env = {k: v for k, v in host.items()
           if k not in _DROPPED and not k.startswith(("LC_", "PYENV", "CONDA"))}
    env.update(PATH=PATH, HOME="/root", LANG="C.UTF-8", PQBENCH_CACHE_DIR=str(cache_root()))
    return env


def _pip_paths(host: Mapping[str, str]) -> list[str]:
    """Local paths the host's pip set-up names: config files and PIP_* path values."""
    paths = ["/etc/pip.conf", str(Path.home() / ".config" / "pip"), str(Path.home() / ".pip")]
    for key, value in host.items():
        if key.startswith("PIP_"):
            paths.extend(part for part in value.split() if part.startswith("/"))
    return paths


def mounts(root: Path, host: Mapping[str, str]) -> list[Mount]:
    """Everything mounted for one entry (see the module docstring), in mount order."""
    found = [Mount("/proc", "proc"), Mount("/dev", "rbind"), Mount("/sys", "ro")]
    if Path("/etc/resolv.conf").is_file():
        found.append(Mount("/etc/resolv.conf", "ro"))
    if cache_dir().is_dir():
        found.append(Mount(str(cache_dir()), "ro"))
    for path in _pip_paths(host):
        if os.path.exists(path) and not _has_own(Path(str(root) + path)):
            found.append(Mount(path, "ro"))
    return found


def _has_own(path: Path) -> bool:
    """True when the userland has something of its own at `path` (not an empty mount
    point left by an earlier entry), which a bind mount would hide."""
    try:
        return path.stat().st_size > 0 if path.is_file() else any(path.iterdir())
    except OSError:
        return False


def _prepare_target(root: Path, mount: Mount) -> None:
    """Create the mount point inside: a directory, or an empty file for a file bind."""
    target = Path(str(root) + mount.source)
    if os.path.isdir(mount.source) or mount.kind == "proc":
        target.mkdir(parents=True, exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.touch()


def mount_namespace() -> str:
    """This process's mount namespace, e.g. 'mnt:[4026531832]'."""
    return os.readlink("/proc/self/ns/mnt")


def enter(root: Path, command: Sequence[str], cwd: str, host_namespace: str) -> NoReturn:
    """Mount, chroot into `root` and exec `command`; only ever called by `_enter`,
    which `unshare --mount` started in a fresh mount namespace (not `host_namespace`)."""
    if mount_namespace() == host_namespace:
        raise UserlandError("refusing to mount outside a private mount namespace "
                            "(run through `python -m pqbench.libraries.userland run`)")
    host = dict(os.environ)
    for mount in mounts(root, host):
        _prepare_target(root, mount)
        for argv in mount.argv(root):
            done = subprocess.run(argv, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise UserlandError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    os.chroot(root)
    os.chdir(cwd)
    try:
        os.execvpe(command[0], list(command), inside_environment(host))
    except OSError as exc:
        raise UserlandError(f"cannot run {command[0]} in {root}: {exc}") from exc


def unshare_argv() -> list[str]:
    """The prefix that runs a command in a mount namespace of its own."""
    require_root()
    unshare = shutil.which("unshare") or shutil.which("unshare", path="/usr/bin:/bin")
    if unshare is None:
        raise UserlandError("`unshare` (util-linux) is needed to enter a userland")
    return [unshare, "--mount", "--propagation", "private", "--"]


def entry_argv(root: Path, command: Sequence[str], cwd: str = "/") -> list[str]:
    """The host command line that runs `command` inside the userland at `root`."""
    return [*unshare_argv(), *processes.python_module("pqbench.libraries.userland"), "_enter",
            "--cwd", cwd,
            "--host-namespace", mount_namespace(), str(root), "--", *command]


def require_root() -> None:
    """chroot and mount need root (CAP_SYS_ADMIN and CAP_SYS_CHROOT)."""
    if os.geteuid() != 0:
        raise UserlandError("building or entering a userland needs root (chroot and mount); "
                            "run as root, e.g. with sudo")


def run(argv: Sequence[str], *, timeout: float, what: str) -> str:
    """Run a host command to completion in its own process group; its output.

    On Ctrl-C or a timeout the whole group is stopped (debootstrap and apt start many
    children) before the exception goes on, so no process keeps writing into a userland
    that is about to be removed. A non-zero exit raises UserlandError with the tail of
    the output.
    """
    process = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except BaseException:
        processes.stop_group(process, term_wait=10.0, kill_wait=30.0)
        raise
    if process.returncode != 0:
        tail = "\n".join(output.strip().splitlines()[-25:])
        raise UserlandError(f"{what} failed (exit {process.returncode}):\n{tail}")
    return output


def run_inside(root: Path, command: Sequence[str], *, timeout: float, what: str,
               cwd: str = "/") -> str:
    """Run `command` inside the userland at `root` (its own namespace); its output."""
    return run(entry_argv(root, command, cwd), timeout=timeout, what=what)
