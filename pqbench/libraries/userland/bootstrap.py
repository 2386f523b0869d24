"""Building a userland's base system with debootstrap, once, safely.

debootstrap runs into a hidden staging directory beside the final one, under a file
lock, and the result is renamed into place only when it is complete (as pqbench.libraries.liboqs
builds liboqs): an interrupted or concurrent build never leaves half a userland. The
host's CA certificates (on some machines outbound TLS passes a proxy whose CA only the
host trusts, in /usr/local/share/ca-certificates) are copied in and
update-ca-certificates runs inside, at build time and whenever the host's set changes.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import re
import shutil
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pqbench.libraries.liboqs.locate import exclusive_lock, replace_dir
from pqbench.libraries.userland import chroot
from pqbench.libraries.userland.recipe import (
    BASE_MANIFEST,
    MIRROR_VAR,
    Recipe,
    architecture,
    read_manifest,
    root_of,
    userlands_dir,
    write_manifest,
)
from pqbench.platform import untrusted
from pqbench.platform.errors import UserlandError

Log = Callable[[str], None]

HOST_CAS = Path("/usr/local/share/ca-certificates")


def ensure_base(spec: Recipe, log: Log) -> Path:
    """The userland's root with its base system built and the host's CAs trusted."""
    root = root_of(spec)
    chroot.require_root()
    userlands_dir().mkdir(parents=True, exist_ok=True)
    with exclusive_lock(userlands_dir() / ".lock", log, "another build of a userland"):
        missing = _missing_packages(root, spec)
        if missing is None:
            _build(spec, root, log)
        elif missing:
            _add_packages(root, missing, log)
        if (read_manifest(root / BASE_MANIFEST) or {}).get("host_cas") != cas_fingerprint():
            trust_host_cas(root, log)
    return root


def preflight(spec: Recipe, log: Log) -> None:
    """Check what building or refreshing `spec` will need before any step starts: root,
    unshare, and, when the base is still to be built, debootstrap (or apt-get to install
    it) and a mirror that answers. Each missing piece is one UserlandError saying how to
    get it."""
    chroot.require_root()
    chroot.unshare_argv()
    if _missing_packages(root_of(spec), spec) is not None:
        return
    if not _debootstrap_path() and not shutil.which("apt-get"):
        raise UserlandError("building a userland needs debootstrap, and neither it nor "
                            "apt-get (to install it) is here: install Debian's `debootstrap` "
                            "package, or build on a Debian or Ubuntu host")
    check_mirror(spec.mirror, spec.suite)
    log(f"{spec.mirror} answers; building {spec.name} downloads about 100 MB from it")


def check_mirror(mirror: str, suite: str, timeout: float = 30.0) -> None:
    """The mirror's Release file for `suite` must answer (HEAD; proxies as the environment
    sets them, as debootstrap's wget uses them): no network is a clear error up front, not
    a debootstrap failure minutes later."""
    url = f"{mirror.rstrip('/')}/dists/{suite}/Release"
    request = urllib.request.Request(url, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise UserlandError(
            f"cannot reach the Debian mirror: {untrusted.redact(url)} ({reason}). Building a "
            "userland downloads its packages from there: check the network (or the "
            f"http_proxy variable), or set {MIRROR_VAR} to a mirror that answers") from None


def _missing_packages(root: Path, spec: Recipe) -> list[str] | None:
    """None if there is no finished base at `root`, else the recipe's packages it lacks."""
    manifest = read_manifest(root / BASE_MANIFEST)
    if manifest is None:
        return None
    return [p for p in spec.packages if p not in manifest.get("packages", [])]


def _build(spec: Recipe, root: Path, log: Log) -> None:
    remove_leftovers(root.parent)
    debootstrap = find_debootstrap(log)
    staging = Path(tempfile.mkdtemp(prefix=f".staging-{root.name}-", dir=root.parent))
    staging.chmod(0o755)
    started = time.monotonic()
    try:
        log(f"debootstrap --variant={spec.variant} {spec.suite} from {spec.mirror} "
            "(a minute or two)")
        # Inside unshare too: debootstrap mounts /proc and /sys in its target.
        chroot.run([*chroot.unshare_argv(), debootstrap,
                    f"--variant={spec.variant}", f"--include={','.join(spec.packages)}",
                    f"--arch={architecture()}", spec.suite, str(staging), spec.mirror],
                   timeout=3600, what="debootstrap")
        manifest: dict[str, Any] = {
            "recipe": spec.name, "suite": spec.suite, "mirror": spec.mirror,
            "variant": spec.variant, "arch": architecture(), "packages": list(spec.packages),
            "build_seconds": round(time.monotonic() - started, 1),
            "built_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        }
        write_manifest(staging / BASE_MANIFEST, manifest)
        trust_host_cas(staging, log)
        # A broken tree there (no manifest) goes first, removed without crossing mounts.
        replace_dir(staging, root, ".staging-old-", safe_rmtree)
    finally:
        safe_rmtree(staging)
    log(f"built {root} in {round(time.monotonic() - started)} s")


def _add_packages(root: Path, packages: list[str], log: Log) -> None:
    """Install packages the recipe gained since this userland was built."""
    log(f"installing {', '.join(packages)} in {root.name}")
    chroot.run_inside(root, ["apt-get", "update", "-q"], timeout=900, what="apt-get update")
    chroot.run_inside(root, ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install",
                             "-y", "-q", "--no-install-recommends", *packages],
                      timeout=1800, what="apt-get install")
    path = root / BASE_MANIFEST
    manifest = read_manifest(path) or {}
    manifest["packages"] = sorted({*manifest.get("packages", []), *packages})
    write_manifest(path, manifest)


def _debootstrap_path() -> str | None:
    return shutil.which("debootstrap", path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")


def find_debootstrap(log: Log) -> str:
    """debootstrap's path; as root with apt-get, Debian's package is installed if missing."""
    found = _debootstrap_path()
    if found:
        return found
    if shutil.which("apt-get"):
        log("installing debootstrap with apt-get")
        env_prefix = ["env", "DEBIAN_FRONTEND=noninteractive"]
        chroot.run([*env_prefix, "apt-get", "update", "-q"], timeout=900, what="apt-get update")
        chroot.run([*env_prefix, "apt-get", "install", "-y", "-q", "debootstrap"],
                   timeout=900, what="apt-get install debootstrap")
        found = _debootstrap_path()
        if found:
            return found
    raise UserlandError("debootstrap is needed to build a userland: install Debian's "
                        "`debootstrap` package (apt-get install debootstrap)")


def cas_fingerprint() -> str:
    """A hash of the host's local CA certificates (names and contents)."""
    digest = hashlib.sha256()
    for cert in sorted(HOST_CAS.rglob("*.crt")) if HOST_CAS.is_dir() else []:
        digest.update(str(cert.relative_to(HOST_CAS)).encode() + b"\0" + cert.read_bytes())
    return digest.hexdigest()


def trust_host_cas(root: Path, log: Log) -> None:
    """Copy the host's local CAs in and rebuild the userland's CA bundle from them."""
    target = root / HOST_CAS.relative_to("/")
    shutil.rmtree(target / "pqbench-host", ignore_errors=True)
    certs = sorted(HOST_CAS.rglob("*.crt")) if HOST_CAS.is_dir() else []
    for cert in certs:
        copy = target / "pqbench-host" / cert.relative_to(HOST_CAS)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cert, copy)
    log(f"trusting {len(certs)} host CA certificate(s) inside {root.name}")
    chroot.run_inside(root, ["update-ca-certificates", "--fresh"], timeout=300,
                      what="update-ca-certificates")
    path = root / BASE_MANIFEST
    manifest = read_manifest(path) or {}
    manifest["host_cas"] = cas_fingerprint()
    write_manifest(path, manifest)


def mounts_below(path: Path) -> list[str]:
    """Mount points at or below `path` in this process's namespace (from mountinfo)."""
    prefix = str(path.resolve())
    found: list[str] = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        # Field 5 is the mount point, with space, tab, newline and backslash octal-escaped.
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), line.split()[4])
        if point == prefix or point.startswith(prefix + "/"):
            found.append(point)
    return found


def safe_rmtree(path: Path) -> None:
    """Remove a userland tree, but never across a mount point (it could be the host's /dev)."""
    if not path.exists():
        return
    mounted = mounts_below(path)
    if mounted:
        raise UserlandError(f"not removing {path}: {', '.join(mounted)} is mounted there; "
                            "unmount it first (umount -R)")
    shutil.rmtree(path, ignore_errors=True)


def remove_leftovers(directory: Path) -> None:
    """Staging trees of interrupted builds; called with the lock held."""
    for leftover in directory.glob(".staging-*"):
        safe_rmtree(leftover)
