"""Installing pqbench in a userland from the current source tree, as its README says.

The tree pqbench runs from is copied to /opt/pqbench/<checkout>-<hash> inside (the files
git knows, or every file but build outputs and virtual environments when there is no
git), then `make setup` runs there: the README's own set-up, which makes a .venv in that
copy with an editable install, builds the C extensions against the userland's OpenSSL
headers, and finds liboqs in the host's mounted cache.

Why a copy with an editable install inside, not the host checkout itself: the copy is the
userland's own checkout, so building the extensions for its Python never writes into the
host's tree (no second .so, no rewritten egg-info), and the native tests can run from it
as the README runs them. A fingerprint of the copied files decides when to refresh: an
unchanged tree costs one hash pass and no `make` at all.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import pqbench
from pqbench.libraries.userland import chroot
from pqbench.libraries.userland.recipe import (
    INSTALL_MANIFEST,
    inside,
    install_dir,
    pqbench_in,
    read_manifest,
    write_manifest,
)
from pqbench.platform.errors import UserlandError

Log = Callable[[str], None]

#: Never copied when walking a tree without git: outputs of a set-up or a test run.
_SKIPPED_DIRS = {".git", ".venv", "build", "dist", "__pycache__", ".mypy_cache",
                 ".ruff_cache", ".pytest_cache", ".benchmarks"}
_SKIPPED_SUFFIXES = (".so", ".o", ".pyc", ".db", ".sqlite", ".sqlite3")


def source_tree() -> Path:
    """The checkout pqbench runs from; a userland can only be given a source tree."""
    tree = Path(pqbench.__file__).resolve().parent.parent
    if not all((tree / name).is_file() for name in ("pyproject.toml", "setup.py", "Makefile")):
        raise UserlandError(f"pqbench runs from {tree}, not from a source checkout; a "
                            "userland installs pqbench from a checkout (README: git clone, "
                            "make setup)")
    return tree


def source_files(tree: Path) -> list[str]:
    """Relative paths to copy: what git tracks or would track, else a filtered walk."""
    git = shutil.which("git")
    if git and (tree / ".git").exists():
        done = subprocess.run([git, "-C", str(tree), "ls-files", "-z", "--cached", "--others",
                               "--exclude-standard"], capture_output=True, check=False)
        if done.returncode == 0:
            names = [n for n in done.stdout.decode().split("\0") if n]
            return sorted(n for n in names if (tree / n).is_file())
    found: list[str] = []
    for folder, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS and not d.endswith(".egg-info")]
        found.extend(os.path.relpath(os.path.join(folder, f), tree) for f in files
                     if not f.endswith(_SKIPPED_SUFFIXES))
    return sorted(found)


def fingerprint(tree: Path, files: list[str]) -> str:
    """A hash over every copied file's path, mode and content."""
    digest = hashlib.sha256()
    for name in files:
        path = tree / name
        digest.update(f"{name}\0{path.stat().st_mode & 0o777:o}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def sync(tree: Path, files: list[str], dest: Path, previous: list[str]) -> None:
    """Make `dest` hold `files` from `tree`; files copied before and gone now are removed.

    Times are kept (copy2), so `make` in the copy rebuilds exactly what changed.
    """
    for name in files:
        source, target = tree / name, dest / name
        if target.is_file() and _same(source, target):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    for name in set(previous) - set(files):
        (dest / name).unlink(missing_ok=True)


def _same(a: Path, b: Path) -> bool:
    sa, sb = a.stat(), b.stat()
    return sa.st_size == sb.st_size and int(sa.st_mtime) == int(sb.st_mtime) and \
        a.read_bytes() == b.read_bytes()


def ensure_installed(root: Path, log: Log) -> dict[str, object]:
    """pqbench from the current tree, set up inside the userland; the install manifest."""
    from pqbench.libraries.liboqs.locate import exclusive_lock

    tree = source_tree()
    target = install_dir(tree)
    dest = inside(root, target)
    dest.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(dest.parent / f".{dest.name}.lock", log, "another build of a userland"):
        return _install(root, tree, target, log)


def _install(root: Path, tree: Path, target: PurePosixPath, log: Log) -> dict[str, object]:
    files = source_files(tree)
    stamp = fingerprint(tree, files)
    dest = inside(root, target)
    manifest_path = dest / INSTALL_MANIFEST
    manifest = read_manifest(manifest_path) or {}
    if manifest.get("fingerprint") == stamp and inside(root, pqbench_in(target)).exists():
        return manifest
    started = time.monotonic()
    log(f"installing pqbench from {tree} into {root.name}:{target} (make setup)")
    sync(tree, files, dest, list(manifest.get("files", [])))
    chroot.run_inside(root, ["make", "setup"], cwd=str(target), timeout=3600,
                      what="make setup inside the userland")
    manifest = {
        "source": str(tree), "fingerprint": stamp, "files": files,
        "install_seconds": round(time.monotonic() - started, 1),
        "installed_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    write_manifest(manifest_path, manifest)
    log(f"pqbench set up inside {root.name} in {manifest['install_seconds']} s")
    return manifest
