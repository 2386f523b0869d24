"""What only the Go stack worker has (the protocol's cases every worker passes are in
test_worker_contract.py): the versions its build resolved, the library behind each
algorithm, the code paths the CPU flags select (and the portable ones passing the known
answers), the standard library's refusal of an expanded key, its collector in the process
clock, and its `go test -bench` reference."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pqbench.catalog.vectors import load_vectors, parse_pqbench_json
from tests.helpers import CPU_FLAGS
from tests.helpers.stack_workers import STACKS, Worker, built_worker

#: Every test here starts a worker process, and the first may build it (a cold Go or Maven
#: fetch and compile on a loaded 2-core machine takes minutes).
pytestmark = [pytest.mark.process, pytest.mark.timeout(1800)]

ML_DSA = ["ML-DSA-44", "ML-DSA-65", "ML-DSA-87"]


def vectors(name: str) -> list[dict[str, str]]:
    return load_vectors(f"{name.lower()}.json", parse_pqbench_json)


@pytest.fixture(scope="module")
def binary() -> Path:
    """The worker as `pqbench speed -i go` builds it."""
    return Path(built_worker("go")[0])


@pytest.fixture(scope="module")
def worker(binary: Path) -> Iterator[Worker]:
    w = Worker([str(binary)])
    yield w
    w.stop()


# --- hello -----------------------------------------------------------------------------

def go_mod_requirements() -> dict[str, str]:
    text = (STACKS / "go" / "go.mod").read_text()
    return dict(re.findall(r"^\s+(\S+) (v\S+)", text, re.MULTILINE))


def test_hello_reports_the_versions_the_build_resolved(worker: Worker) -> None:
    hello = worker.hello
    go_version = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True,
                                check=True).stdout.strip()
    assert hello["implementation"] == "go"
    assert hello["runtime"].startswith(go_version + " linux/")
    libraries = hello["libraries"]
    for module, version in go_mod_requirements().items():
        assert libraries[module] == version
    for package in ("crypto/mlkem", "crypto/ecdh", "crypto/ed25519", "crypto/ecdsa"):
        assert libraries[package] == go_version
    assert "CGO_ENABLED=0" in libraries["go build settings"]  # pqbench builds it static


def test_hello_names_the_library_behind_each_algorithm(worker: Worker) -> None:
    hello = worker.hello
    assert hello["library_of"]["ML-KEM-768"] == "crypto/mlkem"
    assert hello["library_of"]["ML-KEM-512"] == "github.com/cloudflare/circl"
    assert {hello["library_of"][name] for name in ML_DSA} == {"filippo.io/mldsa"}


def test_code_paths_follow_the_cpu_flags(binary: Path) -> None:
    """CIRCL takes its AVX2 assembly only where the CPU has AVX2: the default run reports
    this CPU's branch, and GODEBUG=cpu.avx2=off (honoured by golang.org/x/sys/cpu and the
    runtime alike) forces the portable one, which must pass the known answers too."""
    default = Worker([str(binary)])
    masked = Worker([str(binary)], env={"GODEBUG": "cpu.avx2=off"})
    try:
        expected = "avx2" if "avx2" in CPU_FLAGS else "portable Go"
        assert default.hello["code_paths"]["ML-KEM-512"] == expected
        assert masked.hello["code_paths"]["ML-KEM-512"] == "portable Go"
        assert "SHA-512 avx2" not in masked.hello["code_paths"]["Ed25519"]
        assert masked.hello["code_paths"]["ML-KEM-768"] == "portable Go; Keccak in amd64 assembly"
        for v in vectors("ML-KEM-512"):
            key, public = masked.key_pair("ML-KEM-512", bytes.fromhex(v["d"] + v["z"]))
            assert public.hex() == v["pk"]
            assert masked.encaps("ML-KEM-512", public, bytes.fromhex(v["msg"])) == (
                bytes.fromhex(v["ct"]), bytes.fromhex(v["ss"]))
            assert masked.decaps("ML-KEM-512", key, bytes.fromhex(v["ct_n"])).hex() == v["ss_n"]
    finally:
        default.stop()
        masked.stop()


# --- known answers ---------------------------------------------------------------------

def test_standard_library_ml_kem_refuses_an_expanded_key_as_not_offered(worker: Worker) -> None:
    v = vectors("ML-KEM-768")[0]
    reply = worker.request({"type": "import", "alg": "ML-KEM-768", "secret": v["sk"]})
    assert reply["type"] == "problem" and reply["kind"] == "not_offered"
    assert "64-byte seed" in reply["reason"]


# --- timing ----------------------------------------------------------------------------

def test_the_process_clock_counts_the_collector(worker: Worker) -> None:
    """The timing goroutine is locked to its thread, so thread_cpu_ns is that thread's time
    alone: ML-KEM key generation allocates, Go's collector marks on other threads, and over
    a few rounds the process clock counts more than the thread clock, never less."""
    worker.expect({"type": "prepare", "row": "gc", "alg": "ML-KEM-768", "operation": "keygen"},
                  "prepared")
    rounds = [worker.expect({"type": "run", "row": "gc", "seconds": 0.05}, "round")
              for _ in range(5)]
    assert all(r["thread_cpu_ns"] <= r["process_cpu_ns"] for r in rounds)
    assert sum(r["process_cpu_ns"] for r in rounds) > sum(r["thread_cpu_ns"] for r in rounds)


def test_the_go_reference_benchmark_runs_every_row_it_names() -> None:
    """`go test -bench` over the same operations (the fidelity reference): every benchmark
    runs once and is named after a worker row."""
    done = subprocess.run(["go", "test", "-run", "^$", "-bench", ".", "-benchtime", "1x",
                           "./reference"], cwd=STACKS / "go", capture_output=True, text=True,
                          timeout=900, check=False,
                          env={**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"})
    assert done.returncode == 0, done.stdout + done.stderr
    # "-2" after the name is GOMAXPROCS, left out where it is 1 (a process pinned to one CPU).
    rows = set(re.findall(r"^Benchmark\w+/([\w-]+/\w+)(?:-\d+)?\s", done.stdout,
                          re.MULTILINE))
    assert rows == {f"{alg}/{op}" for alg in ("ML-KEM-768", "ML-KEM-1024")
                    for op in ("keygen", "encaps", "decaps")} | {
        f"{alg}/{op}" for alg in ("X25519", "ECDH-P-256") for op in ("keygen", "derive")} | {
        f"Ed25519/{op}" for op in ("keygen", "sign", "verify")} | {"ML-DSA-65/keygen"}
