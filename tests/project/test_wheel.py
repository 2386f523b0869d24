"""A wheel verifies what a checkout verifies: built with `pip wheel`, installed into a fresh
virtual environment (dependencies from pip's cache, else PyPI) without the test extra, its
`pqbench verify` runs every known-answer test from the vectors it carries as package data.

One build and one install (about a minute) serve every assertion here."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, starts_processes

pytestmark = pytest.mark.process

#: The curated vector files of the checkout: what the wheel must carry.
CURATED = sorted(p.name for p in (REPO / "pqbench" / "catalog" / "vectors").glob("*.json"))


def _run(*argv: str | Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert done.returncode in (0, 1), f"{argv}: {done.returncode}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
@starts_processes
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the wheel, the fresh environment's bin directory)."""
    where = tmp_path_factory.mktemp("wheel")
    # The build uses this environment's setuptools (no isolated build env to download).
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps",
                            "--no-build-isolation", "--quiet", "-w", str(where / "dist")],
                           capture_output=True, text=True, timeout=900, check=False)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (where / "dist").glob("pqbench-*.whl")
    subprocess.run([sys.executable, "-m", "venv", str(where / "venv")], check=True,
                   timeout=300)
    bin_dir = where / "venv" / "bin"
    # --no-compile: what is checked is the wheel's content and what it runs, not the
    # byte-code of every dependency (scipy's alone is thousands of files); the modules the
    # checks import are compiled as they are imported.
    done = subprocess.run([bin_dir / "python", "-m", "pip", "install", "--quiet",
                           "--no-compile", "--disable-pip-version-check", str(wheel)],
                          capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return wheel, bin_dir


def test_the_wheel_carries_every_curated_vector_file(installed: tuple[Path, Path]) -> None:
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert CURATED and len(CURATED) == 18
    assert {f"pqbench/catalog/vectors/{name}" for name in CURATED} <= names
    assert "pqbench/catalog/vectors/README.md" in names


def test_an_installed_wheel_verifies_with_nothing_unavailable(
        installed: tuple[Path, Path]) -> None:
    _, bin_dir = installed
    # The test extra is not installed: the curated set is all there is.
    probe = _run(bin_dir / "python", "-c", "import cryptography_vectors")
    assert probe.returncode == 1 and "No module named 'cryptography_vectors'" in probe.stderr
    done = _run(bin_dir / "pqbench", "verify", "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    results = report["results"]
    statuses = {r["status"] for r in results}
    assert report["failed"] == 0 and statuses <= {"passed", "not offered"}, sorted(
        (r["algorithm"], r["implementation"], r["check"], r["detail"])
        for r in results if r["status"] not in ("passed", "not offered"))
    # Every curated file answered some check, from the installed package.
    used = {r["detail"].split("curated vectors/")[1].split()[0]
            for r in results if "curated vectors/" in r["detail"]}
    assert used == set(CURATED)
    assert any(r["check"].startswith("KAT") and r["status"] == "passed" for r in results)


def test_the_wheel_carries_every_stack_worker_source(installed: tuple[Path, Path]) -> None:
    """Each foreign worker is built from the sources the package carries: the installed
    wheel hashes them to the checkout's digest, so both share one build in the cache."""
    from pqbench.libraries.stacks import compiling, registry
    from pqbench.platform.errors import ImplementationUnavailable

    wheel, bin_dir = installed
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    probe = ("import json; from pqbench.libraries.stacks import compiling, registry\n"
             "found = {}\nfor s in registry.STACKS:\n"
             "    try: found[s.name] = compiling.source_digest(s)\n"
             "    except Exception as exc: found[s.name] = None\n"
             "print(json.dumps(found))")
    installed_digests = json.loads(_run(bin_dir / "python", "-c", probe).stdout)
    shipped = 0
    for stack in registry.STACKS:
        try:
            digest = compiling.source_digest(stack)
        except ImplementationUnavailable:
            continue  # no sources in this checkout yet
        shipped += 1
        files = {f"pqbench/libraries/stacks/{p.relative_to(registry.SOURCES)}"
                 for p in compiling.source_files(stack)}
        assert files <= names, sorted(files - names)
        assert installed_digests[stack.name] == digest, stack.name
    assert shipped >= 1
