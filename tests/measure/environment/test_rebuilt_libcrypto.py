"""The 10.14.5 story for real: a libcrypto with the system's exact version string, built
another way (without assembly, from the distribution's source; built once into the cache,
`tests.helpers.rebuilt_libcrypto`), loaded in place of the system one on one side of an
`ab` session. `ab` and then `compare` of the two stored runs must name the binary, not
report "the same on both: system libcrypto"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pqbench.measure import environment
from tests.helpers import binutils, run_cli
from tests.helpers.rebuilt_libcrypto import rebuilt_libcrypto, system_openssl

#: A cold cache builds the library first: about five minutes on two loaded cores
#: (docs/measurements.md), more than the suite's per-test limit allows.
pytestmark = [pytest.mark.process, pytest.mark.timeout(2400)]

PROBE = ("import json; from pqbench.measure import environment; e = environment.collect(); "
         "print(json.dumps([e['libraries']['system_libcrypto'], e['binaries']['libcrypto']]))")


@pytest.fixture(scope="module")
def rebuilt() -> Path:
    return rebuilt_libcrypto(log=lambda line: print(line, file=sys.stderr))


def _loaded(library_path: Path | None) -> tuple[str, dict[str, Any]]:
    env = {"LD_LIBRARY_PATH": str(library_path)} if library_path else {}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          env={**os.environ, **env}, check=True, timeout=120)
    version, entry = json.loads(done.stdout)
    return version, entry


def test_the_rebuilt_library_has_the_same_version_string_and_another_build_id(
        rebuilt: Path) -> None:
    system_version, system = _loaded(None)
    version, entry = _loaded(rebuilt)
    assert version == system_version == system_openssl().text
    assert entry["path"] == str(rebuilt / Path(system["path"]).name)
    assert entry["build_id"] == binutils.build_id(entry["path"])
    assert system["build_id"] == binutils.build_id(system["path"])
    assert entry["build_id"] != system["build_id"]


def _named(causes: list[dict[str, Any]], system_id: str, rebuilt_id: str) -> list[str]:
    said = (f"libcrypto: same version string, another binary (build-id {system_id[:12]}… → "
            f"{rebuilt_id[:12]}…")
    return [c["why"] for c in causes
            if c["field"] == "binaries.libcrypto" and c["why"].startswith(said)]


def test_ab_and_compare_name_the_rebuilt_binary_as_the_cause(rebuilt: Path,
                                                             tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    system_path = environment.system_libcrypto()["path"]
    system = {"build_id": binutils.build_id(system_path)}
    entry = {"build_id": binutils.build_id(str(rebuilt / Path(system_path).name))}
    done = run_cli("ab", "aes-256-gcm", "-i", "libcrypto", "-o", "encrypt", "--bytes", "16384",
                   "--a", "here", "--b", f"env:LD_LIBRARY_PATH={rebuilt}",
                   "--label-a", "system", "--label-b", "rebuilt", "--max-seconds", "5",
                   "--json", "--db", db)
    assert done.returncode == 0, done.stderr
    session = json.loads(done.stdout)
    (row,) = session["rows"]
    assert _named(row["causes"], system["build_id"], entry["build_id"])
    # The news leads with it, under the topic it belongs to.
    builds = {b["topic"]: b for b in session["news"]["builds"]}
    assert builds["system libcrypto"]["field"] == "binaries.libcrypto"
    assert "system libcrypto" not in session["news"]["unchanged"]
    # The same two runs, compared again from the store: the same answer, in words too.
    first, second = session["session"]["runs"]
    again = run_cli("compare", first, second, "--json", "--db", db)
    assert again.returncode == 0, again.stderr
    (stored,) = json.loads(again.stdout)["rows"]
    assert _named(stored["causes"], system["build_id"], entry["build_id"])
    shown = run_cli("compare", first, second, "--db", db, env={"COLUMNS": "400"})
    assert (f"system libcrypto: same version string, another binary (build-id "
            f"{system['build_id'][:12]}… → {entry['build_id'][:12]}…") in shown.stdout
