"""pqbench.kat against real libraries: curated vectors pass, corrupted ones fail, full files run."""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

from pqbench.catalog import algorithms
from pqbench.catalog.algorithms.base import Algorithm
from pqbench.catalog.vectors import Vector, load_vectors, parse_pqbench_json
from pqbench.cli import app
from pqbench.libraries.implementations import select
from pqbench.libraries.implementations.base import Implementation
from pqbench.measure.checks.kat import (
    check_vector,
    checks_for,
    known_answer_checks,
    load_for,
    run_vectors,
)

PYTHON_IMPLEMENTATIONS = ("liboqs-python", "cryptography")
VERIFIED = [alg for alg in algorithms.all_algorithms()
            if alg.kind in ("kem", "signature", "key-agreement", "rsa")]


def implementation(name: str) -> Implementation:
    return select([name])[0]


def pairs() -> list[tuple[Algorithm, Implementation]]:
    """(algorithm, implementation) pairs that have known-answer checks."""
    return [(alg, impl) for alg in VERIFIED for impl in map(implementation, PYTHON_IMPLEMENTATIONS)
            if impl.offers(alg, alg.all_operations[0]) is None and checks_for(alg, impl)]


def curated(alg: Algorithm) -> list[Vector]:
    return load_vectors(f"{alg.name.lower()}.json", parse_pqbench_json)


CURATED_CASES = [
    pytest.param(alg, impl, vector, id=f"{alg.name}-{impl.name}-count{vector['count']}")
    for alg, impl in pairs() for vector in curated(alg)
]
PAIRS = [pytest.param(alg, impl, id=f"{alg.name}-{impl.name}") for alg, impl in pairs()]


@pytest.mark.parametrize(("alg", "impl", "vector"), CURATED_CASES)
def test_each_curated_vector_matches(alg: Algorithm, impl: Implementation,
                                     vector: Vector) -> None:
    verdicts = check_vector(alg, impl, vector)
    assert verdicts
    assert all(v.matched is not False for v in verdicts.values()), verdicts


def flip(value: str) -> str:
    """The same hex with the last byte's low bit flipped."""
    raw = bytearray.fromhex(value)
    raw[-1] ^= 1
    return raw.hex()


#: family -> (field to corrupt in a valid vector, checks that must then fail).
CORRUPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "ML-KEM": ("ss", ("KAT decaps",)),
    "ML-DSA": ("sig", ("KAT verify",)),
    "ECDH": ("OUTPUT_U", ("KAT derive",)),
    "EdDSA": ("SIGNATURE", ("KAT sign", "KAT verify")),
    "ECDSA": ("S", ("KAT verify",)),
    "RSA": ("S", ("KAT verify",)),
}


def corrupted(alg: Algorithm, vector: Vector) -> tuple[Vector, tuple[str, ...]]:
    field, checks = CORRUPTIONS[alg.family]
    if alg.name.startswith("ECDH-P-"):
        field = "Z"
    bad = dict(vector)
    bad[field] = flip(bad[field])
    return bad, checks


def valid_vector(alg: Algorithm) -> Vector:
    """A curated vector the checks accept (for SigVer/KAS files: a `Result = P` record)."""
    return next(v for v in curated(alg) if v.get("Result", "P").startswith("P")
                and not v.get("CONTEXT"))


@pytest.mark.parametrize(("alg", "impl"), PAIRS)
def test_a_corrupted_vector_fails(alg: Algorithm, impl: Implementation) -> None:
    bad, checks = corrupted(alg, valid_vector(alg))
    verdicts = check_vector(alg, impl, bad)
    for name in checks:
        assert verdicts[name].matched is False, name
    outcomes = {o.check: o for o in run_vectors(alg, impl, [*curated(alg), bad], "test")}
    for name in checks:
        assert outcomes[name].status == "failed"
        assert f"vector count {bad['count']} mismatched" in outcomes[name].detail


@pytest.mark.parametrize("field", ["ss", "ct_n", "ss_n", "pk", "msg"])
def test_liboqs_mlkem_checks_each_field(field: str) -> None:
    """Every KAT field is compared by some check: flipping any one of them is caught."""
    alg, impl = algorithms.by_name("ML-KEM-768"), implementation("liboqs-python")
    vector = curated(alg)[0]
    vector[field] = flip(vector[field])
    assert any(v.matched is False for v in check_vector(alg, impl, vector).values())


def test_liboqs_signs_the_kat_deterministically_and_restores_randomness() -> None:
    alg, impl = algorithms.by_name("ML-DSA-44"), implementation("liboqs-python")
    vector = curated(alg)[0]
    assert check_vector(alg, impl, vector)["KAT sign"].matched is True
    from pqbench.libraries.liboqs import import_oqs

    oqs = import_oqs()
    with oqs.KeyEncapsulation("ML-KEM-512") as kem:  # system RNG again: two keys differ
        assert kem.generate_keypair() != kem.generate_keypair()


@pytest.mark.slow
@pytest.mark.parametrize(("alg", "impl"), PAIRS)
def test_full_files_pass_with_every_vector_counted(alg: Algorithm,
                                                   impl: Implementation) -> None:
    outcomes = known_answer_checks(alg, impl)
    assert outcomes
    assert all(o.status in ("passed", "not offered") for o in outcomes), outcomes
    passed = [o for o in outcomes if o.status == "passed"]
    assert passed
    vectors, _ = load_for(alg)
    for outcome in passed:
        assert "/" in outcome.detail.split(" vectors")[0]
    if alg.family == "ML-KEM":
        assert all(o.detail.startswith("1000/1000 vectors, NIST KAT") for o in passed)
        assert len(vectors) == 1000
    if alg.family == "ML-DSA":
        assert all(o.detail.startswith("100/100 vectors, NIST KAT") for o in passed)


def test_without_cryptography_vectors_the_curated_set_is_used(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cryptography_vectors", None)
    alg = algorithms.by_name("ML-KEM-768")
    outcomes = {o.check: o for o in known_answer_checks(alg, implementation("cryptography"))}
    assert outcomes["KAT decaps"].status == "passed"
    assert outcomes["KAT decaps"].detail.startswith("3/3 vectors, curated vectors/ml-kem-768")


@pytest.mark.parametrize("name", ["liboqs", "libcrypto"])
def test_native_loops_are_reported_not_offered_with_what_is_checked(name: str) -> None:
    (outcome,) = known_answer_checks(algorithms.by_name("ML-KEM-768"), implementation(name))
    assert outcome.status == "not offered"
    assert "checked instead" in outcome.detail


@pytest.mark.slow
def test_cli_verify_json_reports_the_nist_kat_count() -> None:
    result = CliRunner().invoke(app, ["verify", "ml-kem-768", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["failed"] == 0
    kat = [o for o in document["results"] if o["check"] == "KAT decaps"]
    assert {o["implementation"] for o in kat} == {"liboqs-python", "cryptography"}
    for outcome in kat:
        assert outcome["status"] == "passed"
        assert outcome["detail"].startswith("1000/1000 vectors, NIST KAT kat_MLKEM_768.rsp")


def test_a_wrong_last_byte_of_the_encapsulated_secret_fails_the_encaps_check_itself() -> None:
    """The encaps check compares the whole shared secret: flipping its last byte fails
    "KAT encaps" (not only "KAT decaps", which compares the same field)."""
    alg, impl = algorithms.by_name("ML-KEM-768"), implementation("liboqs-python")
    vector = dict(curated(alg)[0])
    assert check_vector(alg, impl, vector)["KAT encaps"].matched is True
    vector["ss"] = flip(vector["ss"])
    assert check_vector(alg, impl, vector)["KAT encaps"].matched is False
