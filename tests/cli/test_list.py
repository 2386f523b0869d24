"""`pqbench list` and the foreign workers: from an empty cache it names every
implementation a first use would compile, marked so, in JSON and at 80 and 120 columns;
`--compile` compiles them ahead (here only Go: cargo and the JDKs are kept off its path),
after which they are listed as compiled."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pqbench.libraries.stacks import registry
from tests.helpers import run_cli
from tests.helpers.terminal import read_table

pytestmark = [pytest.mark.process, pytest.mark.timeout(1800)]

STACKS = registry.names()


def _listed(env: dict[str, str], *args: str) -> dict[str, dict[str, object]]:
    done = run_cli("list", "--json", *args, env=env)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    return {"algorithms": {a["algorithm"]: a for a in document["algorithms"]},
            "stacks": {s["implementation"]: s for s in document["stacks"]},
            "compiled": {c["implementation"]: c for c in document.get("compiled", [])}}


def test_an_empty_cache_lists_every_implementation_a_first_use_would_compile(
        tmp_path: Path) -> None:
    env = {"PQBENCH_CACHE_DIR": str(tmp_path / "cache")}
    found = _listed(env)
    assert {name: s["state"] for name, s in found["stacks"].items()} == {
        name: "buildable" for name in STACKS}
    algorithms = found["algorithms"]
    for name in ("ML-KEM-768", "ML-DSA-65", "X25519", "Ed25519"):
        listed = algorithms[name]
        assert set(STACKS) <= set(listed["implementations"])  # type: ignore[arg-type]
        assert listed["compiled_on_first_use"] == list(STACKS)
    # libcrux offers no P-256: not listed for it, compiled or not.
    assert "libcrux" not in algorithms["ECDH-P-256"]["compiled_on_first_use"]  # type: ignore[operator]
    assert algorithms["AES-256-GCM"]["compiled_on_first_use"] == []
    assert not (tmp_path / "cache" / "stacks").exists()  # listing compiles nothing
    for columns in ("80", "120"):
        done = run_cli("list", "kem", env={**env, "COLUMNS": columns})
        table = done.stdout
        assert max(map(len, table.splitlines())) <= int(columns)
        rows = {r["algorithm"]: r for r in read_table(table, "algorithms")}
        assert {"go*", "libcrux*"} <= set(rows["ML-KEM-768"]["implementations"].split(", "))
        said = " ".join((done.stdout + done.stderr).split())  # the note, wrapped, on stderr
        assert "* compiled on first use" in said and "pqbench list --compile" in said


def test_compile_ahead_compiles_what_a_first_use_would_and_lists_it_compiled(
        tmp_path: Path) -> None:
    go = next(p for p in os.environ["PATH"].split(os.pathsep) if (Path(p) / "go").exists())
    env = {"PQBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "PATH": os.pathsep.join([go, "/usr/bin", "/bin"]),  # no cargo (~/.cargo/bin)
           "PQBENCH_JAVA_HOME": str(tmp_path / "no-jdk")}
    done = run_cli("list", "--compile", "--json", env=env, timeout=1500)
    assert done.returncode == 0, done.stderr
    assert "compiling the go worker" in done.stderr  # its progress, on stderr
    document = json.loads(done.stdout)
    assert [(c["implementation"], c["compiled"]) for c in document["compiled"]] == [
        ("go", True)]
    found = _listed(env)
    states = {name: s["state"] for name, s in found["stacks"].items()}
    assert states == {"go": "built", "aws-lc-rs": "missing", "libcrux": "missing",
                      "java": "missing", "bouncycastle": "missing"}
    mlkem = found["algorithms"]["ML-KEM-768"]
    assert "go" in mlkem["implementations"] and mlkem["compiled_on_first_use"] == []  # type: ignore[operator]
    again = run_cli("list", "--compile", "--json", env=env)
    assert "compiled" not in json.loads(again.stdout)  # nothing left to compile
