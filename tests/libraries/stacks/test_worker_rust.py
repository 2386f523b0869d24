"""What only the Rust stack workers (aws-lc-rs, libcrux) have (the protocol's cases every
worker passes are in test_worker_contract.py): the crate versions their Cargo.lock files
pin, the code paths each library's dispatch picks on this CPU (and AWS-LC's portable ones,
masked, passing the known answers), an older aws-lc-rs release built as `bisect` builds it,
and the reference benchmark beside each worker. Expected values come from the Cargo.lock
files, the CPU's flags and the NIST vectors, never from the workers."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from pqbench.libraries.stacks import compiling, pins, registry
from tests.helpers import CPU_FLAGS
from tests.helpers.stack_workers import (
    REPLY_DEADLINE,
    STACKS,
    Worker,
    built_worker,
    check_ml_dsa_vectors,
    check_ml_kem_vectors,
    check_x25519_vectors,
    problem,
)

RUST = STACKS / "rust"
IMPLEMENTATIONS = ("aws-lc-rs", "libcrux")
MLKEM = ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024")
MLDSA = ("ML-DSA-44", "ML-DSA-65", "ML-DSA-87")
#: The crates each worker reports, besides AWS-LC's own version.
CRATES = {
    "aws-lc-rs": ["aws-lc-rs", "aws-lc-sys"],
    "libcrux": ["libcrux-ml-kem", "libcrux-ml-dsa", "libcrux-curve25519", "libcrux-ed25519",
                "libcrux-sha3", "libcrux-sha2", "libcrux-hacl-rs", "libcrux-intrinsics",
                "libcrux-platform"],
}
#: aws-lc-rs's API: what its known answers can take (the contract holds the hello to it).
AWS_LC_RS_MLKEM = ["import_expanded"]
AWS_LC_RS_MLDSA = ["seeded_keygen", "import_expanded"]


@pytest.fixture(scope="session")
def rust_builds() -> dict[str, Path]:
    """Each worker's build folder, built (once per machine, into the per-user cache) by
    pqbench's own builder, as `-i aws-lc-rs` and `-i libcrux` build them."""
    return {name: Path(built_worker(name)[0]).parent for name in IMPLEMENTATIONS}


@pytest.fixture(params=IMPLEMENTATIONS)
def implementation(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def worker(implementation: str, rust_builds: dict[str, Path]) -> Iterator[Worker]:
    running = Worker([str(rust_builds[implementation] / "pqbench-stack-worker")])
    yield running
    running.stop()


def start(rust_builds: dict[str, Path], implementation: str,
          env: dict[str, str] | None = None) -> Worker:
    return Worker([str(rust_builds[implementation] / "pqbench-stack-worker")], env)


# --- hello ------------------------------------------------------------------------------


@pytest.mark.process
def test_hello_reports_the_locked_versions(worker: Worker, implementation: str) -> None:
    hello = worker.hello
    assert hello["implementation"] == implementation
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True, check=True)
    assert hello["runtime"].startswith(rustc.stdout.strip())

    lock = tomllib.loads((RUST / implementation / "Cargo.lock").read_text())
    locked = {p["name"]: p["version"] for p in lock["package"]}
    expected = {name: locked[name] for name in CRATES[implementation]}
    libraries = dict(hello["libraries"])
    if implementation == "aws-lc-rs":
        assert re.fullmatch(r"\d+\.\d+\.\d+", libraries.pop("AWS-LC"))
    assert libraries == expected


@pytest.mark.process
def test_code_paths_are_the_ones_the_cpu_flags_select(worker: Worker,
                                                      implementation: str) -> None:
    """Each library's own dispatch rule, applied to this CPU's flags: both branches are
    expected, whichever this machine takes."""
    flags = CPU_FLAGS
    paths = worker.hello["code_paths"]
    if implementation == "libcrux":
        # libcrux-platform: AVX2 with AVX, BMI1, BMI2, FMA and MOVBE.
        simd = {"avx2", "avx", "bmi1", "bmi2", "fma", "movbe"} <= flags
        for alg in (*MLKEM, *MLDSA):
            assert paths[alg] == ("avx2" if simd else "portable")
        assert paths["X25519"] == paths["Ed25519"] == "portable"
    else:
        mulx = "mulx/adx" if {"bmi2", "adx"} <= flags else "no mulx/adx"
        for alg in MLKEM:  # mlkem-native's x86_64 backend: AVX2 and BMI2
            assert paths[alg] == ("avx2" if {"avx2", "bmi2"} <= flags else "portable")
        for alg in MLDSA:  # mldsa-native's: AVX2
            assert paths[alg] == ("avx2" if "avx2" in flags else "portable")
        assert paths["X25519"] == paths["Ed25519"] == f"amd64 assembly (s2n-bignum, {mulx})"
        assert paths["ECDH-P-256"] == paths["ECDSA-P-256"] == f"amd64 assembly (nistz256, {mulx})"


@pytest.mark.process
def test_aws_lc_masked_to_its_portable_code_says_so_and_still_answers_right(
        rust_builds: dict[str, Path]) -> None:
    """AWS-LC honours OPENSSL_ia32cap: with AVX2, BMI2 and ADX masked off (bits 5, 8, 19 of
    its third word) it dispatches to portable C and the _alt assembly, and its hello and
    answers follow."""
    masked = start(rust_builds, "aws-lc-rs", {"OPENSSL_ia32cap": ":~0x80120"})
    try:
        paths = masked.hello["code_paths"]
        assert {paths[alg] for alg in (*MLKEM, *MLDSA)} == {"portable"}
        assert paths["X25519"] == "amd64 assembly (s2n-bignum, no mulx/adx)"
        check_ml_kem_vectors(masked, "ML-KEM-768", AWS_LC_RS_MLKEM)
        check_ml_dsa_vectors(masked, "ML-DSA-65", AWS_LC_RS_MLDSA, contexts=False)
        check_x25519_vectors(masked)
    finally:
        masked.stop()


@pytest.mark.process
def test_a_row_named_by_a_number_is_an_error(worker: Worker) -> None:
    """The protocol names rows with strings; the Rust workers refuse anything else."""
    reply = worker.request({"type": "prepare", "row": 5, "alg": "ML-KEM-768",
                            "operation": "encaps"})
    assert reply["type"] == "error" and reply["message"], reply
    assert worker.request({"type": "keygen", "alg": "X25519"})["type"] == "key"


# --- builds of older releases, and the reference ----------------------------------------


@pytest.mark.process
def test_aws_lc_rs_pinned_to_an_older_release_offers_what_that_release_has() -> None:
    """A bisect builds the worker against older aws-lc-rs releases: 1.17.0 links AWS-LC
    through aws-lc-sys 0.41, imports ML-KEM keys but has ML-DSA only behind its unstable
    feature, and its ML-KEM asks AVX2 alone of the CPU; what it offers still answers."""
    pin = pins.parse("crate:aws-lc-rs==1.17.0")
    planned = compiling.plan(registry.by_name("aws-lc-rs"), (pin,))
    built = compiling.compile_worker(planned, log=lambda _: None)
    worker = Worker(built.argv(), {"OPENSSL_ia32cap": ":~0x100"})  # BMI2 masked off
    try:
        hello = worker.hello
        assert (hello["libraries"]["aws-lc-rs"], hello["libraries"]["aws-lc-sys"]) == \
            ("1.17.0", "0.41.0")
        assert set(hello["offers"]) == set(registry.by_name("aws-lc-rs").offers) - set(MLDSA)
        assert hello["features"]["ML-KEM-768"] == ["import_expanded"]
        assert hello["code_paths"]["ML-KEM-768"] == ("avx2" if "avx2" in CPU_FLAGS
                                                    else "portable")
        assert problem(worker.request({"type": "keygen", "alg": "ML-DSA-65"}))
        check_ml_kem_vectors(worker, "ML-KEM-768", AWS_LC_RS_MLKEM)
        check_x25519_vectors(worker)
    finally:
        worker.stop()


@pytest.mark.process
def test_the_reference_benchmark_prints_one_line_per_round(
        rust_builds: dict[str, Path], implementation: str) -> None:
    reference = str(rust_builds[implementation] / "pqbench-stack-reference")
    done = subprocess.run([reference, "ML-KEM-768", "encaps", "0.02", "2"],
                          capture_output=True, text=True, timeout=REPLY_DEADLINE, check=True)
    rounds = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rounds) == 2
    for measured in rounds:
        assert measured["alg"] == "ML-KEM-768" and measured["operation"] == "encaps"
        assert measured["ops"] >= 1 and measured["wall_ns"] >= 2e7
        assert measured["thread_cpu_ns"] > 0
    for bad in (["ML-KEM-768", "encaps"], ["ML-KEM-768", "encaps", "0"],
                ["ML-KEM-768", "fly", "0.01"], ["ML-KEM-768", "encaps", "0.01", "x"]):
        refused = subprocess.run([reference, *bad], capture_output=True, text=True,
                                 timeout=REPLY_DEADLINE, check=False)
        assert refused.returncode == 2 and refused.stdout == ""
        assert refused.stderr.strip()
