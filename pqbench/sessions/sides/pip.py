"""Builds pqbench makes and caches for a side: ``pip:PACKAGE==VERSION``.

A pip build is a virtual environment under ``cache_root()/pip/`` holding only the pinned
package (and what it depends on), made from wheels by this pqbench's pip. A ``.pth`` file
then appends the running pqbench's own site-packages *after* the environment's own, so the
pinned package wins and everything else (pqbench, typer, numpy ...) is this pqbench's. Its
worker is started as ``python -m pqbench.sessions.ab.worker``, which imports only what measuring
needs: an old package (cryptography 39 has no ML-KEM module) then answers "not offered"
for what it lacks instead of failing at import. After every start-up the build is asked
which version it really loads; a build that loads another one is refused.

Wheels only (``--only-binary :all:``): a release with no wheel for this Python would need
its whole toolchain (cryptography needs Rust) and is reported as not installable instead.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pqbench.platform import processes
from pqbench.platform.errors import PqbenchError

Log = Callable[[str], None]
#: What a pip build looks like: a distribution name and one exact version.
PIP_SPEC = re.compile(r"(?P<package>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!_-]+)")
#: The marker of a finished build; a directory without it is rebuilt.
READY = ".pqbench-ready"
HOST_PTH = "zz_pqbench_host.pth"
#: Environment variable naming the pinned build in the worker (and so in its fingerprint).
BUILD_VARIABLE = "PQBENCH_BUILD"
#: The module a build's worker is started with (no CLI imports).
WORKER_MODULE = "pqbench.sessions.ab.worker"
_PROBE = ("import json, sys\nfrom importlib import metadata\nimport pqbench\n"
          "print(json.dumps({'version': metadata.version(sys.argv[1]), "
          "'pqbench': pqbench.__file__}))")


#: Where a pip build reports its progress: the "pqbench.provision" logger. This room prints
#: nothing itself: the command line shows the "pqbench" loggers on stderr
#: (`views.console.show_progress`); a library caller sees them if it asks logging.
progress: Log = logging.getLogger("pqbench.provision").info


class ProvisionError(PqbenchError):
    """A build could not be made or does not load what it was made for."""


@dataclass(frozen=True)
class PipBuild:
    """One ``pip:PACKAGE==VERSION``: where it lives and how its worker starts."""

    package: str
    version: str

    @property
    def spec(self) -> str:
        return f"pip:{self.package}=={self.version}"

    @property
    def directory(self) -> Path:
        from pqbench.libraries.liboqs.locate import cache_root

        tag = f"py{sys.version_info.major}.{sys.version_info.minor}"
        return cache_root() / "pip" / tag / f"{_normal(self.package)}-{self.version}"

    @property
    def python(self) -> Path:
        return self.directory / "bin" / "python"

    def command(self) -> tuple[str, ...]:
        """The prefix `Side.argv` appends ``worker`` to (which the module ignores)."""
        return tuple(processes.python_module(WORKER_MODULE, str(self.python)))


def parse_pip(text: str) -> PipBuild:
    """``PACKAGE==VERSION`` -> PipBuild; anything else is a ProvisionError naming the form."""
    found = PIP_SPEC.fullmatch(text.strip())
    if found is None:
        raise ProvisionError(f"pip:{text}: expected pip:PACKAGE==VERSION with one exact "
                             "version, e.g. pip:cryptography==42.0.8")
    return PipBuild(found["package"], found["version"])


def ensure_pip(build: PipBuild, log: Log = progress) -> PipBuild:
    """Make the build unless it is cached, point it at this pqbench, check what it loads."""
    from pqbench.libraries.liboqs.locate import exclusive_lock

    final = build.directory
    final.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(final.parent / f".{final.name}.lock", log, f"another {build.spec}"):
        if not (final / READY).exists():
            _make(build, log)
        _link_host(final)
    _check_loads(build)
    return build


def _make(build: PipBuild, log: Log) -> None:
    final = build.directory
    staging = final.with_name(f".staging-{final.name}-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    log(f"installing {build.package}=={build.version} into {final}")
    try:
        _run([sys.executable, "-m", "venv", "--without-pip", str(staging)], build,
             "could not create its virtual environment")
        _run([sys.executable, "-m", "pip", "--python", str(staging / "bin" / "python"),
              "install", "--quiet", "--disable-pip-version-check", "--no-input",
              "--only-binary", ":all:", f"{build.package}=={build.version}"], build,
             "pip could not install it")
        (staging / READY).write_text(json.dumps({"package": build.package,
                                                 "version": build.version}) + "\n")
        shutil.rmtree(final, ignore_errors=True)
        staging.rename(final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _run(argv: list[str], build: PipBuild, what: str) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProvisionError(f"{build.spec}: {what}: {exc}") from None
    if done.returncode != 0:
        said = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        errors = [line for line in said if line.startswith("ERROR")] or said[-3:]
        raise ProvisionError(f"{build.spec}: {what}: {' '.join(errors)[:600]}")


def _site_dir(prefix: Path) -> Path:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return prefix / "lib" / version / "site-packages"


def _link_host(prefix: Path) -> None:
    """(Re)write the .pth that appends this pqbench's site-packages and source after the
    build's own (rewritten each time: it follows whichever pqbench runs the session)."""
    import pqbench

    source = Path(pqbench.__file__).resolve().parent.parent
    paths = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    lines = [f"import site; site.addsitedir({p!r})" for p in paths]
    lines.append(str(source))
    target = _site_dir(prefix) / HOST_PTH
    staging = target.with_name(f".{HOST_PTH}.{os.getpid()}")
    staging.write_text("\n".join(lines) + "\n")
    staging.replace(target)


def _check_loads(build: PipBuild) -> None:
    import pqbench

    try:
        done = subprocess.run([str(build.python), "-P", "-c", _PROBE, build.package],
                              capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProvisionError(f"{build.spec}: its Python does not start: {exc}") from None
    try:
        found = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        said = " ".join(done.stderr.strip().splitlines()[-2:])
        raise ProvisionError(f"{build.spec}: does not import pqbench and "
                             f"{build.package}: {said}") from None
    if _normal(str(found.get("version"))) != _normal(build.version):
        raise ProvisionError(f"{build.spec}: loads {build.package} {found.get('version')}, "
                             f"not {build.version}")
    if Path(str(found.get("pqbench"))).resolve() != Path(pqbench.__file__).resolve():
        raise ProvisionError(f"{build.spec}: loads the pqbench at {found.get('pqbench')}, "
                             f"not this one ({pqbench.__file__})")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
