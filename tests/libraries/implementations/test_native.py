"""The native loops as implementations: rows beside the bindings, fallback, --multi, --cpu."""

from __future__ import annotations

import json
import platform
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pqbench.catalog import algorithms
from pqbench.cli import app
from pqbench.libraries.implementations.liboqs_python import LiboqsPythonImplementation
from pqbench.libraries.implementations.native import NativeLibcrypto, NativeLiboqs
from pqbench.libraries.implementations.pyca import PycaImplementation
from tests.helpers import run_cli

X86 = platform.machine().lower() in ("x86_64", "amd64")


def test_done_when_rows_list_all_four_implementations(small_run) -> None:
    _, doc = small_run
    seen = {(r["algorithm"], r["implementation"]) for r in doc["results"]}
    for alg in ("ML-KEM-768", "ML-DSA-65"):
        assert {(alg, "liboqs"), (alg, "liboqs-python"), (alg, "cryptography")} <= seen
    for alg in ("RSA-2048", "X25519"):
        assert {(alg, "libcrypto"), (alg, "cryptography")} <= seen
    native_rows = [r for r in doc["results"] if r["implementation"] in ("liboqs", "libcrypto")]
    assert native_rows
    for row in native_rows:
        if X86:
            assert row["cycles_per_op"] > 0
            assert row["cycle_counter"] == "rdtsc (reference cycles)"
    assert all(r["cycles_per_op"] is None for r in doc["results"]
               if r["implementation"] in ("liboqs-python", "cryptography"))


@pytest.mark.parametrize("name", ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024",
                                  "ML-DSA-44", "ML-DSA-65", "ML-DSA-87"])
def test_native_liboqs_agrees_with_the_python_binding(name: str) -> None:
    alg = algorithms.by_name(name)
    native, binding = NativeLiboqs(), LiboqsPythonImplementation()
    assert native.self_check(alg) and binding.self_check(alg)
    for op in alg.operations:
        assert native.prepare(alg, op).sizes == binding.prepare(alg, op).sizes
        assert native.prepare(alg, op).run(0.005).ops > 0


@pytest.mark.parametrize("name", ["X25519", "X448", "ECDH-P-256", "ECDH-P-521", "RSA-2048",
                                  "ECDSA-P-256", "Ed25519", "Ed448"])
def test_native_libcrypto_checks_and_sizes_match_cryptography(name: str) -> None:
    alg = algorithms.by_name(name)
    native, pyca = NativeLibcrypto(), PycaImplementation()
    assert native.self_check(alg) and pyca.self_check(alg)
    op = alg.operations[-1]
    ours, theirs = dict(native.prepare(alg, op).sizes), dict(pyca.prepare(alg, op).sizes)
    # DER encodings vary with the key: an ECDSA signature by a byte or two (r and s), an
    # RSA private key by a few (eight integers, each with or without a leading zero).
    for der, slack in {"ECDSA": (("signature", 2),), "RSA": (("secret_key", 8),)}.get(
            alg.family, ()):
        assert abs(ours.pop(der) - theirs.pop(der)) <= slack
    assert ours == theirs
    assert native.prepare(alg, op).run(0.005).ops > 0


def test_post_quantum_in_an_old_system_libcrypto_is_not_offered_with_the_reason() -> None:
    reason = NativeLibcrypto().offers(algorithms.by_name("ML-KEM-768"), "encaps")
    version = NativeLibcrypto().versions()["libcrypto"]
    if str(version).startswith("OpenSSL 3.0"):
        assert reason and "3.5" in reason
    else:  # a newer libcrypto must offer it
        assert reason is None


@pytest.mark.process
def test_without_the_extension_speed_says_why_and_the_rest_runs(tmp_path: Path) -> None:
    hide = tmp_path / "hide"
    hide.mkdir()
    # A meta-path finder that refuses the extension, as if it had never been built.
    (hide / "sitecustomize.py").write_text(
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'pqbench.timing._native':\n"
        "            raise ModuleNotFoundError(name=name)\n"
        "sys.meta_path.insert(0, Hide())\n")
    done = run_cli("speed", "x25519", "ml-kem-768", "--seconds", "0.05", "--rounds", "2",
                   "--json", "--db", str(tmp_path / "r.db"), env={"PYTHONPATH": str(hide)})
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    impls = {r["implementation"] for r in doc["results"]}
    assert {"cryptography", "liboqs-python"} <= impls
    assert not impls & {"liboqs", "libcrypto"}
    missing = {p["implementation"]: p for p in doc["problems"]
               if p["implementation"] in ("liboqs", "libcrypto")}
    assert set(missing) == {"liboqs", "libcrypto"}
    assert all(p["kind"] == "unavailable" and "not built" in p["reason"]
               for p in missing.values())


@pytest.mark.process
def test_multi_reports_the_aggregate_and_each_worker(runner: CliRunner, db_path: Path) -> None:
    result = runner.invoke(app, ["speed", "x25519", "-i", "libcrypto", "-o", "derive",
                                 "--multi", "2", "--seconds", "0.1", "--rounds", "2",
                                 "--json", "--db", str(db_path)])
    assert result.exit_code == 0, result.stderr
    (row,) = json.loads(result.stdout)["results"]
    assert row["processes"] == 2
    workers = row["per_process_ops_per_sec"]
    assert len(workers) == 2 and all(w > 0 for w in workers)
    # The aggregate counts every worker's operations over the longest round.
    assert row["ops_per_sec"] == pytest.approx(sum(workers), rel=0.5)


@pytest.mark.process
def test_cpu_pins_and_refuses_cpus_that_do_not_exist(runner: CliRunner, db_path: Path) -> None:
    result = runner.invoke(app, ["speed", "x25519", "-i", "cryptography", "-o", "derive",
                                 "--cpu", "0", "--seconds", "0.05", "--rounds", "2", "--json",
                                 "--db", str(db_path)])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["results"][0]["cpu"] == 0
    bad = runner.invoke(app, ["speed", "x25519", "--cpu", "4096", "--db", str(db_path)])
    assert bad.exit_code == 2
    assert "not available" in bad.stderr


@pytest.mark.process
def test_the_table_says_what_the_binding_costs(runner: CliRunner, db_path: Path) -> None:
    result = runner.invoke(app, ["speed", "ml-kem-768", "-o", "encaps", "--seconds", "0.05",
                                 "--rounds", "2", "--db", str(db_path)])
    assert result.exit_code == 0, result.stderr
    # Two cycles: the widest interval there is, at its true level (1 - 2/2**2 = 50 %).
    flat = " ".join(result.stdout.split())
    assert "what it costs, paired by cycle (50 % CI, 2 cycles, CPU time)" in flat
    assert re.search(r"liboqs-python liboqs operation \(ML-KEM-768 encaps\) [0-9.]+x "
                     r"(faster|slower) \[", flat), flat
