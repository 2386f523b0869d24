"""Build the pinned liboqs into pqbench's cache, offline except for crates.io.

PyPI and Debian ship no liboqs, and GitHub may be unreachable; crates.io's `oqs-sys` crate
vendors a complete liboqs source tree, so `cargo fetch` is our source. liboqs 0.13.0 lacks one
symbol liboqs-python 0.16 binds (OQS_SIG_supports_ctx_str), so we build liboqs as a static
PIC archive and link the shared library ourselves with compat.c added: the vendored source
tree is never modified. Builds happen in a hidden sibling directory and are renamed into
place, under a file lock, so an interrupted or concurrent set-up never leaves half a cache.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pqbench.libraries.liboqs.locate import (
    MANIFEST_NAME,
    ORIGIN_CACHE,
    LiboqsInstall,
    Rejected,
    exclusive_lock,
    left_out,
    probe,
    replace_dir,
    survey,
)
from pqbench.libraries.liboqs.recipes import (
    COMPAT_SOURCE,
    CRATE,
    CRATE_VERSION,
    FULL,
    LIBOQS_VERSION,
    MINIMAL,
    SOURCE,
    Recipe,
    reusable_for,
)
from pqbench.platform.errors import ImplementationUnavailable, UsageError

Log = Callable[[str], None]


class SourceUnavailable(Exception):
    """cargo is missing or crates.io could not deliver the pinned crate."""


#: Where a liboqs build reports its progress: the "pqbench.libraries.liboqs" logger. This room
#: prints nothing itself: the command line shows the "pqbench" loggers on stderr
#: (`views.console.show_progress`); a library caller sees them if it asks logging.
progress: Log = logging.getLogger("pqbench.libraries.liboqs").info


def ensure(
    log: Log = progress, *, force: bool = False, full: bool = False, fallback: bool = True
) -> LiboqsInstall:
    """A usable liboqs: one already installed, else our pinned build, else liboqs-python's own.

    With `full`, the liboqs found must enable every mechanism it knows, else the full recipe is
    built. With `force`, build the pinned liboqs again even if one is found (replacing our cache
    entry). Without `fallback`, a missing cargo raises SourceUnavailable instead of running
    liboqs-python's installer (which needs liboqs-python installed).
    """
    if not force:
        found, rejected = survey()
        for reason in rejected:
            log(f"skipped {reason}")
        if found is not None and not (full and _needs_full_build(found, log)):
            return found
    try:
        prefix = compile_pinned(log, force=force, full=full)
    except SourceUnavailable as exc:
        if not fallback:
            raise
        log(f"{exc}; falling back to liboqs-python's installer (git clone from GitHub)")
        return _install_with_liboqs_python(log)
    found_or_rejected = probe(prefix / "lib" / "liboqs.so", ORIGIN_CACHE)
    if isinstance(found_or_rejected, Rejected):
        raise ImplementationUnavailable(
            f"pqbench built liboqs but cannot use it: "
            f"{found_or_rejected}. Remove {prefix} and retry."
        )
    # The export check loaded the library from its staging directory before the rename, so
    # the loader reports that path for the same soname; name the file where it now lives.
    renamed = prefix / "lib" / found_or_rejected.library.name
    if found_or_rejected.library != renamed and renamed.is_file():
        found_or_rejected = dataclasses.replace(found_or_rejected, library=renamed)
    return found_or_rejected


def _needs_full_build(found: LiboqsInstall, log: Log) -> bool:
    """Whether `--all` must build: `found` leaves mechanisms out and our cache would win.

    Our cache entries are ranked by how much they enable, so a full build there takes over
    from a minimal one; a liboqs found before the cache (OQS_INSTALL_PATH, the system, ~/_oqs)
    would still be the one loaded, so building would not help: that is a usage error.
    """
    if found.build.get("options_key") == FULL.key():
        return False  # our full recipe: all this platform can enable
    missing = left_out(found.library)
    if not missing:
        return False
    shown = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
    if reason := _loaded_before_cache(found):
        raise UsageError(
            f"pqbench uses {found.library} ({reason}), which leaves out {len(missing)} "
            f"mechanisms ({shown}); a full build in pqbench's cache would not be loaded. "
            "Unset OQS_INSTALL_PATH or point it at a liboqs with every algorithm."
        )
    log(f"{found.prefix} leaves out {len(missing)} mechanisms ({shown}); building all")
    return True


def _loaded_before_cache(found: LiboqsInstall) -> str | None:
    """Why `found` is searched before pqbench's own cache entries, or None if it is one."""
    env = os.environ.get("OQS_INSTALL_PATH")
    if env and Path(env).expanduser().resolve() == found.prefix.resolve():
        return "OQS_INSTALL_PATH selects it"
    if found.origin != ORIGIN_CACHE:
        return f"the {found.origin} liboqs comes before pqbench's cache"
    return None


def compile_pinned(log: Log = progress, *, force: bool = False, full: bool = False) -> Path:
    """Our pinned liboqs, minimal or `full`; built unless a finished build answers the request.

    A full build in the cache answers a minimal request too; a minimal one never answers
    `full`. With `force`, the requested recipe is built again.
    """
    wanted = FULL if full else MINIMAL
    return compile_recipe(wanted, log, reuse=() if force else reusable_for(wanted))


def compile_recipe(
    recipe: Recipe, log: Log = progress, *, reuse: tuple[Recipe, ...] = ()
) -> Path:
    """Build `recipe` into its cache directory unless a finished build of `reuse` is there."""
    final = recipe.directory()
    final.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(final.parent / ".lock", log, "another set-up building liboqs"):
        for candidate in reuse:
            if (candidate.directory() / MANIFEST_NAME).is_file():
                log(f"another set-up already built {candidate.directory()}")
                return candidate.directory()
        _remove_leftovers(final.parent)
        source = fetch_source(log)
        staging = Path(tempfile.mkdtemp(prefix=f".staging-{final.name}-", dir=final.parent))
        staging.chmod(0o755)  # mkdtemp makes it private; the cache is meant to be shared
        try:
            _compile_into(recipe, source, staging, final, log)
            replace_dir(staging, final, ".old-", _remove)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return final


def fetch_source(log: Log = progress) -> Path:
    """`cargo fetch` the pinned oqs-sys crate and return its vendored liboqs source tree."""
    cargo = shutil.which("cargo")
    if cargo is None:
        raise SourceUnavailable("cargo not found on PATH")
    crate_pin = CRATE_VERSION.split("+")[0]  # cargo ignores build metadata in requirements
    with tempfile.TemporaryDirectory(prefix="pqbench-oqs-fetch-") as manifest_dir:
        manifest = Path(manifest_dir) / "Cargo.toml"
        manifest.write_text(
            '[package]\nname = "pqbench-liboqs-fetch"\nversion = "0.0.0"\nedition = "2021"\n'
            '[lib]\npath = "lib.rs"\n[dependencies]\n'
            f'{CRATE} = {{ version = "={crate_pin}", default-features = false }}\n'
        )
        (Path(manifest_dir) / "lib.rs").write_text("")
        log(f"fetching {SOURCE} with cargo")
        started = time.monotonic()
        fetched = _run([cargo, "fetch", "--manifest-path", str(manifest)], log, check=False)
        if fetched.returncode != 0:
            raise SourceUnavailable(f"cargo fetch failed: {_tail(fetched.stdout + fetched.stderr)}")
        log(f"fetched in {time.monotonic() - started:.1f} s")
        metadata = _run(
            [
                cargo,
                "metadata",
                "--format-version",
                "1",
                "--offline",
                "--manifest-path",
                str(manifest),
            ],
            log,
            check=False,
            quiet=True,
        )
    if metadata.returncode != 0:
        raise SourceUnavailable(f"cargo metadata failed: {_tail(metadata.stderr)}")
    return _liboqs_tree(json.loads(metadata.stdout))


def _liboqs_tree(metadata: dict[str, object]) -> Path:
    packages = metadata.get("packages", [])
    assert isinstance(packages, list)
    for package in packages:
        if package["name"] == CRATE and package["version"] == CRATE_VERSION:
            tree = Path(package["manifest_path"]).parent / "liboqs"
            if (tree / "CMakeLists.txt").is_file():
                return tree
            raise SourceUnavailable(f"{tree} has no CMakeLists.txt")
    raise SourceUnavailable(f"cargo metadata does not list {CRATE} {CRATE_VERSION}")


def _compile_into(recipe: Recipe, source: Path, staging: Path, final: Path, log: Log) -> None:
    """Configure for `final` (so liboqs.pc names it), install into `staging`, add the .so."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pqbench-oqs-build-") as build_dir:
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run(
            [
                "cmake",
                "-S",
                str(source),
                "-B",
                build_dir,
                *generator,
                *recipe.cmake_options,
                f"-DCMAKE_INSTALL_PREFIX={final}",
            ],
            log,
        )
        log(f"building liboqs {LIBOQS_VERSION}, {recipe.algorithms} algorithms")
        _run(["cmake", "--build", build_dir, "--parallel", str(os.cpu_count() or 2)], log)
        _run(["cmake", "--install", build_dir, "--prefix", str(staging)], log)
    library = _link_shared(source, staging, log)
    _check_exports(library, log)
    manifest = {
        "source": SOURCE,
        "source_dir": str(source),
        "algorithms": recipe.algorithms,
        "cmake_options": list(recipe.cmake_options),
        "compat_shim": True,
        "compat_symbols": ["OQS_SIG_supports_ctx_str"],
        "options_key": recipe.key(),
        "build_seconds": round(time.monotonic() - started, 1),
        "built_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    (staging / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n")
    log(f"built liboqs in {manifest['build_seconds']} s")


def _link_shared(source: Path, staging: Path, log: Log) -> Path:
    """liboqs.a + compat.c -> lib/liboqs.so.<version> with liboqs's own soname and symlinks."""
    libdir = staging / "lib"
    soversion = _soversion(source)
    real_name = f"liboqs.so.{LIBOQS_VERSION}"
    compiler = os.environ.get("CC") or shutil.which("cc") or "gcc"
    _run(
        [
            compiler,
            "-shared",
            "-fPIC",
            "-O2",
            f"-Wl,-soname,liboqs.so.{soversion}",
            "-o",
            str(libdir / real_name),
            "-Wl,--whole-archive",
            str(libdir / "liboqs.a"),
            "-Wl,--no-whole-archive",
            str(COMPAT_SOURCE),
            f"-I{staging / 'include'}",
            "-lcrypto",
            "-pthread",
        ],
        log,
    )
    (libdir / f"liboqs.so.{soversion}").symlink_to(real_name)
    (libdir / "liboqs.so").symlink_to(f"liboqs.so.{soversion}")
    return libdir / real_name


def _soversion(source: Path) -> str:
    text = (source / "src" / "CMakeLists.txt").read_text()
    match = re.search(r"SOVERSION\s+(\d+)", text)
    if match is None:
        raise ImplementationUnavailable(f"no SOVERSION in {source}/src/CMakeLists.txt")
    return match[1]


def _check_exports(library: Path, log: Log) -> None:
    """The linked library must export the API and the shim (as `nm -D` would show)."""
    found = probe(library, ORIGIN_CACHE)
    if isinstance(found, Rejected):
        raise ImplementationUnavailable(f"freshly linked {library} is unusable: {found.reason}")
    log(f"{library.name} exports OQS_KEM_new and OQS_SIG_supports_ctx_str")


def _remove(tree: Path) -> None:
    shutil.rmtree(tree, ignore_errors=True)


def _remove_leftovers(root: Path) -> None:
    """Staging dirs of interrupted builds; safe to remove only while we hold the lock."""
    for leftover in [*root.glob(".staging-*"), *root.glob(".old-*")]:
        shutil.rmtree(leftover, ignore_errors=True)


def _install_with_liboqs_python(log: Log) -> LiboqsInstall:
    """Let `import oqs` build liboqs into ~/_oqs (it clones GitHub); needs git and network."""
    env = {k: v for k, v in os.environ.items() if k != "OQS_INSTALL_PATH"}
    result = subprocess.run(
        [sys.executable, "-c", "import oqs"],
        env=env,
        check=False,
        stdout=2,  # its progress goes to our stderr, keeping stdout for answers
        stderr=2,
    )
    found, rejected = survey()
    if found is not None:
        return found
    reasons = "; ".join(str(r) for r in rejected)
    raise ImplementationUnavailable(
        f"no usable liboqs (liboqs-python's installer exited {result.returncode}; {reasons}). "
        "Install cargo (https://rustup.rs) so pqbench can build liboqs from crates.io, "
        "or install liboqs >= 0.14 yourself and set OQS_INSTALL_PATH to its prefix."
    )


def _run(
    command: list[str], log: Log, *, check: bool = True, quiet: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run without a shell; output is captured and shown only when the step fails."""
    if not quiet:
        log("$ " + " ".join(command))
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise ImplementationUnavailable(f"{command[0]} is needed to build liboqs: {exc}") from exc
    if check and result.returncode != 0:
        raise ImplementationUnavailable(
            f"{Path(command[0]).name} failed (exit {result.returncode}) building liboqs:\n"
            f"{_tail(result.stdout + result.stderr)}"
        )
    return result


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
