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
from tests.helpers.terminal import drawn_table, notes_below

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
    for columns, tallest in (("80", 3), ("120", 2)):
        done = run_cli("list", env={**env, "COLUMNS": columns})
        text = done.stdout
        assert max(map(len, text.splitlines())) <= int(columns)
        said = " ".join((done.stdout + done.stderr).split())  # the note, wrapped, on stderr
        assert "* compiled on first use" in said and "pqbench list --compile" in said
        # One table a kind, each row three lines at most at 80 columns, two at 120, every
        # implementation on it (those a first use compiles marked *).
        drawn = {}
        kinds = ["kem", "signature", "key-agreement", "rsa", "cipher", "hash"]
        for kind, after in zip(kinds, [*kinds[1:], "foreign"], strict=True):
            table = drawn_table(text, f"{kind} algorithms", key="algorithm", end=after)
            assert max(table.heights) <= tallest, (columns, kind, table.heights)
            drawn.update({row["algorithm"]: row for row in table.rows})
        assert set(drawn) == set(algorithms)
        for name, listed in algorithms.items():
            first = set(listed["compiled_on_first_use"])  # type: ignore[arg-type]
            assert drawn[name]["implementations"].split(", ") == [
                f"{i}*" if i in first else i
                for i in listed["implementations"]]  # type: ignore[attr-defined]
        assert {"go*", "libcrux*"} <= set(drawn["ML-KEM-768"]["implementations"].split(", "))
        # The toolchain each would be compiled with: on its row, or in a note below.
        stacks = drawn_table(text, "foreign implementations", key="implementation")
        assert max(stacks.heights) <= tallest, (columns, stacks.heights)
        notes = notes_below(text)
        assert {row["implementation"]: notes.get(row["here"], row["here"])
                for row in stacks.rows} == {
            name: s["detail"] for name, s in found["stacks"].items()}


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
