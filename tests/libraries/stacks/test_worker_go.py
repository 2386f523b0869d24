"""The Go stack worker against the worker protocol (docs/stacks.md): built from its pinned
sources, it must report what the build resolved, reproduce the NIST and RFC known answers
where its libraries take seeds, interoperate both ways with liboqs and pyca/cryptography,
refuse tampering, answer every malformed request with an error and keep running, and time
rounds with the protocol's clocks."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, mldsa, mlkem, x25519
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from pqbench.catalog.vectors import load_vectors, parse_pqbench_json
from pqbench.libraries.liboqs import import_oqs
from tests.helpers import CPU_FLAGS
from tests.helpers.stack_workers import STACKS, Worker, built_worker

#: Every test here starts a worker process, and the first may build it (a cold Go or Maven
#: fetch and compile on a loaded 2-core machine takes minutes).
pytestmark = [pytest.mark.process, pytest.mark.timeout(1800)]

OQS = import_oqs()

ML_KEM = ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"]
ML_DSA = ["ML-DSA-44", "ML-DSA-65", "ML-DSA-87"]
OPERATIONS = {
    **{name: ["keygen", "encaps", "decaps"] for name in ML_KEM},
    **{name: ["keygen", "sign", "verify"] for name in [*ML_DSA, "Ed25519", "ECDSA-P-256"]},
    "X25519": ["keygen", "derive"], "ECDH-P-256": ["keygen", "derive"],
}
PYCA_MLKEM: dict[str, Any] = {"ML-KEM-768": mlkem.MLKEM768PrivateKey,
                              "ML-KEM-1024": mlkem.MLKEM1024PrivateKey}
PYCA_MLDSA: dict[str, tuple[Any, Any]] = {
    "ML-DSA-44": (mldsa.MLDSA44PrivateKey, mldsa.MLDSA44PublicKey),
    "ML-DSA-65": (mldsa.MLDSA65PrivateKey, mldsa.MLDSA65PublicKey),
    "ML-DSA-87": (mldsa.MLDSA87PrivateKey, mldsa.MLDSA87PublicKey),
}
RAW = (serialization.Encoding.Raw, serialization.PublicFormat.Raw)
POINT = (serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


def vectors(name: str) -> list[dict[str, str]]:
    return load_vectors(f"{name.lower()}.json", parse_pqbench_json)


def flip(data: bytes, index: int = 0) -> bytes:
    return data[:index] + bytes([data[index] ^ 1]) + data[index + 1:]


@pytest.fixture(scope="module")
def binary() -> Path:
    """The worker as `pqbench speed -i go` builds it."""
    return Path(built_worker("go")[0])


@pytest.fixture(scope="module")
def worker(binary: Path) -> Iterator[Worker]:
    w = Worker([str(binary)])
    yield w
    w.stop()


@pytest.fixture
def fresh(binary: Path) -> Iterator[Worker]:
    """A worker of this test's own, for tests that end it."""
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
    assert hello["type"] == "hello" and hello["protocol"] == 1
    assert hello["implementation"] == "go"
    assert hello["pid"] == worker.process.pid
    assert hello["runtime"].startswith(go_version + " linux/")
    libraries = hello["libraries"]
    for module, version in go_mod_requirements().items():
        assert libraries[module] == version
    for package in ("crypto/mlkem", "crypto/ecdh", "crypto/ed25519", "crypto/ecdsa"):
        assert libraries[package] == go_version
    assert "CGO_ENABLED=0" in libraries["go build settings"]  # pqbench builds it static


def test_hello_offers_every_algorithm_and_names_its_library(worker: Worker) -> None:
    hello = worker.hello
    assert hello["offers"] == OPERATIONS
    assert set(hello["library_of"].values()) <= set(hello["libraries"])
    assert hello["library_of"]["ML-KEM-768"] == "crypto/mlkem"
    assert hello["library_of"]["ML-KEM-512"] == "github.com/cloudflare/circl"
    assert {hello["library_of"][name] for name in ML_DSA} == {"filippo.io/mldsa"}
    known = {"seeded_keygen", "derandomized_encaps", "deterministic_sign", "import_expanded"}
    assert set(hello["features"]) == set(OPERATIONS)
    for features in hello["features"].values():
        assert set(features) <= known


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

@pytest.mark.parametrize("alg", ML_KEM)
def test_ml_kem_known_answers(worker: Worker, alg: str) -> None:
    """FIPS 203 KAT: keygen from d||z, encaps from m, decaps, and the implicit rejection."""
    for v in vectors(alg):
        key, public = worker.key_pair(alg, bytes.fromhex(v["d"] + v["z"]))
        assert public.hex() == v["pk"]
        ct, ss = worker.encaps(alg, public, bytes.fromhex(v["msg"]))
        assert (ct.hex(), ss.hex()) == (v["ct"], v["ss"])
        assert worker.decaps(alg, key, ct).hex() == v["ss"]
        assert worker.decaps(alg, key, bytes.fromhex(v["ct_n"])).hex() == v["ss_n"]


def test_ml_kem_512_imports_the_expanded_key(worker: Worker) -> None:
    for v in vectors("ML-KEM-512"):
        reply = worker.expect({"type": "import", "alg": "ML-KEM-512", "secret": v["sk"]}, "key")
        assert reply["public"] == v["pk"]
        assert worker.decaps("ML-KEM-512", reply["key"], bytes.fromhex(v["ct"])).hex() == v["ss"]


def test_standard_library_ml_kem_refuses_an_expanded_key_as_not_offered(worker: Worker) -> None:
    v = vectors("ML-KEM-768")[0]
    reply = worker.request({"type": "import", "alg": "ML-KEM-768", "secret": v["sk"]})
    assert reply["type"] == "problem" and reply["kind"] == "not_offered"
    assert "64-byte seed" in reply["reason"]


@pytest.mark.parametrize("alg", ML_DSA)
def test_ml_dsa_known_answers(worker: Worker, alg: str) -> None:
    """FIPS 204 deterministic pure KAT: keygen from xi, deterministic signing with the
    vector's context, and verification of the known signature."""
    for v in vectors(alg):
        key, public = worker.key_pair(alg, bytes.fromhex(v["xi"]))
        assert public.hex() == v["pk"]
        message = bytes.fromhex(v["msg"])
        signature = worker.sign(alg, key, message, context=v["ctx"], deterministic=True)
        assert signature.hex() == v["sig"]
        assert worker.verify(alg, public, message, signature, context=v["ctx"])
        assert not worker.verify(alg, public, message, signature)  # context left out


def test_x25519_known_answers(worker: Worker) -> None:
    for v in vectors("X25519"):
        key, _ = worker.key_pair("X25519", bytes.fromhex(v["INPUT_SCALAR"]))
        assert worker.derive("X25519", key, bytes.fromhex(v["INPUT_U"])).hex() == v["OUTPUT_U"]


def test_ed25519_known_answers(worker: Worker) -> None:
    for v in vectors("Ed25519"):
        key, public = worker.key_pair("Ed25519", bytes.fromhex(v["SECRET"]))
        assert public.hex() == v["PUBLIC"]
        message = bytes.fromhex(v["MESSAGE"])
        assert worker.sign("Ed25519", key, message).hex() == v["SIGNATURE"]
        assert worker.verify("Ed25519", public, message, bytes.fromhex(v["SIGNATURE"]))


def test_ecdh_p256_validity_vectors(worker: Worker) -> None:
    """SP 800-56A validity records: Z must match for P records; an F record must not
    produce its recorded key pair and Z (a refusal or another value passes it)."""
    for v in vectors("ECDH-P-256"):
        reply = worker.request({"type": "import", "alg": "ECDH-P-256", "secret": v["dsIUT"]})
        assert reply["type"] == "key"
        peer = bytes.fromhex("04" + v["QsCAVSx"] + v["QsCAVSy"])
        derived = worker.request({"type": "derive", "alg": "ECDH-P-256", "key": reply["key"],
                                  "peer": peer.hex()})
        assert derived["type"] in ("derived", "error")
        matches = (reply["public"] == "04" + v["QsIUTx"] + v["QsIUTy"]
                   and derived.get("shared_secret") == v["Z"])
        assert matches == v["Result"].startswith("P"), v["origin"]


def test_ecdsa_p256_sigver_vectors(worker: Worker) -> None:
    for v in vectors("ECDSA-P-256"):
        public = bytes.fromhex("04" + v["Qx"] + v["Qy"])
        signature = encode_dss_signature(int(v["R"], 16), int(v["S"], 16))
        reply = worker.request({"type": "verify", "alg": "ECDSA-P-256", "public": public.hex(),
                                "message": v["Msg"], "signature": signature.hex()})
        if reply["type"] == "error":  # a "Q changed" record may carry a point off the curve
            assert v["Result"].startswith("F"), v["origin"]
            continue
        assert reply["valid"] == v["Result"].startswith("P"), v["origin"]


def test_ecdsa_deterministic_signing_is_rfc_6979(worker: Worker) -> None:
    """Deterministic ECDSA repeats itself and verifies with pyca; hedged signing does not
    repeat."""
    private = ec.generate_private_key(ec.SECP256R1())
    scalar = private.private_numbers().private_value.to_bytes(32, "big")
    key, public = worker.key_pair("ECDSA-P-256", scalar)
    assert public == private.public_key().public_bytes(*POINT)
    message = b"pqbench"
    first = worker.sign("ECDSA-P-256", key, message, deterministic=True)
    assert worker.sign("ECDSA-P-256", key, message, deterministic=True) == first
    private.public_key().verify(first, message, ec.ECDSA(hashes.SHA256()))
    assert worker.sign("ECDSA-P-256", key, message) != worker.sign("ECDSA-P-256", key, message)


# --- interoperability ------------------------------------------------------------------

@pytest.mark.parametrize("alg", ML_KEM)
def test_ml_kem_interoperates_with_liboqs_both_ways(worker: Worker, alg: str) -> None:
    with OQS.KeyEncapsulation(alg) as theirs:
        their_public = theirs.generate_keypair()
        ct, ss = worker.encaps(alg, bytes(their_public))
        assert bytes(theirs.decap_secret(ct)) == ss
    key, public = worker.key_pair(alg)
    with OQS.KeyEncapsulation(alg) as sender:
        ct, ss = sender.encap_secret(public)
    assert worker.decaps(alg, key, bytes(ct)) == bytes(ss)
    assert worker.decaps(alg, key, flip(bytes(ct))) != bytes(ss)


@pytest.mark.parametrize("alg", sorted(PYCA_MLKEM))
def test_ml_kem_implicit_rejection_matches_pyca(worker: Worker, alg: str) -> None:
    """The same seed in both libraries: a tampered ciphertext decapsulates to the same
    implicit-rejection secret (FIPS 203 section 6.3), and a good one both ways."""
    theirs = PYCA_MLKEM[alg].generate()
    key, public = worker.key_pair(alg, theirs.private_bytes_raw())
    assert public == theirs.public_key().public_bytes_raw()
    ss, ct = theirs.public_key().encapsulate()
    assert worker.decaps(alg, key, ct) == ss
    tampered = flip(ct, len(ct) - 1)
    assert worker.decaps(alg, key, tampered) == theirs.decapsulate(tampered)
    ct, ss = worker.encaps(alg, public)
    assert theirs.decapsulate(ct) == ss


@pytest.mark.parametrize("alg", ML_DSA)
def test_ml_dsa_interoperates_with_liboqs_and_pyca(worker: Worker, alg: str) -> None:
    message = b"interoperability"
    context = b"pqbench"
    key, public = worker.key_pair(alg)
    signature = worker.sign(alg, key, message)
    with OQS.Signature(alg) as oqs_verifier:
        assert oqs_verifier.verify(message, signature, public)
        assert not oqs_verifier.verify(flip(message), signature, public)
    private_class, public_class = PYCA_MLDSA[alg]
    theirs = private_class.generate()
    their_signature = theirs.sign(message, context)
    their_public = theirs.public_key().public_bytes_raw()
    assert worker.verify(alg, their_public, message, their_signature, context=context.hex())
    assert not worker.verify(alg, their_public, message, flip(their_signature),
                      context=context.hex())
    with OQS.Signature(alg) as oqs_signer:
        oqs_public = oqs_signer.generate_keypair()
        assert worker.verify(alg, bytes(oqs_public), message, bytes(oqs_signer.sign(message)))
    signed_with_context = worker.sign(alg, key, message, context=context.hex())
    public_class.from_public_bytes(public).verify(signed_with_context, message, context)


def test_x25519_interoperates_with_pyca(worker: Worker) -> None:
    theirs = x25519.X25519PrivateKey.generate()
    their_public = theirs.public_key().public_bytes(*RAW)
    key, public = worker.key_pair("X25519")
    ours = worker.derive("X25519", key, their_public)
    assert ours == theirs.exchange(x25519.X25519PublicKey.from_public_bytes(public))


def test_ecdh_p256_interoperates_with_pyca(worker: Worker) -> None:
    theirs = ec.generate_private_key(ec.SECP256R1())
    their_public = theirs.public_key().public_bytes(*POINT)
    key, public = worker.key_pair("ECDH-P-256")
    assert len(public) == 65 and public[0] == 4
    ours = worker.derive("ECDH-P-256", key, their_public)
    peer = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), public)
    assert ours == theirs.exchange(ec.ECDH(), peer)


def test_ed25519_interoperates_with_pyca(worker: Worker) -> None:
    message = b"interoperability"
    theirs = ed25519.Ed25519PrivateKey.generate()
    their_public = theirs.public_key().public_bytes(*RAW)
    assert worker.verify("Ed25519", their_public, message, theirs.sign(message))
    key, public = worker.key_pair("Ed25519")
    ed25519.Ed25519PublicKey.from_public_bytes(public).verify(
        worker.sign("Ed25519", key, message), message)


def test_ecdsa_p256_interoperates_with_pyca(worker: Worker) -> None:
    message = b"interoperability"
    theirs = ec.generate_private_key(ec.SECP256R1())
    their_public = theirs.public_key().public_bytes(*POINT)
    assert worker.verify("ECDSA-P-256", their_public, message,
                  theirs.sign(message, ec.ECDSA(hashes.SHA256())))
    key, public = worker.key_pair("ECDSA-P-256")
    signature = worker.sign("ECDSA-P-256", key, message)
    ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), public).verify(
        signature, message, ec.ECDSA(hashes.SHA256()))


# --- tampering and malformed input -----------------------------------------------------

@pytest.mark.parametrize("alg", [*ML_DSA, "Ed25519", "ECDSA-P-256"])
def test_a_wrong_or_malformed_signature_verifies_false(worker: Worker, alg: str) -> None:
    message = b"tamper"
    key, public = worker.key_pair(alg)
    signature = worker.sign(alg, key, message)
    assert worker.verify(alg, public, message, signature)
    assert not worker.verify(alg, public, flip(message), signature)
    assert not worker.verify(alg, public, message, flip(signature, len(signature) // 2))
    assert not worker.verify(alg, public, message, signature[:-1])
    assert not worker.verify(alg, public, message, b"")
    reply = worker.request({"type": "verify", "alg": alg, "public": public.hex(),
                            "message": message.hex(), "signature": "not hex"})
    assert reply == {"type": "verified", "valid": False}


@pytest.mark.parametrize("request_line", [
    b"not json",
    b"[1, 2]",
    b"",
    b'{"type": 5}',
    b'{"alg": "ML-KEM-768"}',
    b'{"type": "bogus"}',
    b'{"type": "keygen"}',
    b'{"type": "keygen", "alg": "ML-KEM-768", "seed": "zz"}',
    b'{"type": "keygen", "alg": "ML-KEM-768", "seed": "00"}',
    b'{"type": "keygen", "alg": "ML-KEM-768", "seed": 7}',
    b'{"type": "encaps", "alg": "ML-KEM-768", "public": "00"}',
    b'{"type": "encaps", "alg": "ML-KEM-768"}',
    b'{"type": "encaps", "alg": "ML-KEM-512", "public": "00"}',
    b'{"type": "decaps", "alg": "ML-KEM-768", "key": "nope", "ciphertext": "00"}',
    b'{"type": "sign", "alg": "ML-DSA-65", "key": "nope", "message": ""}',
    b'{"type": "verify", "alg": "ML-DSA-65", "public": "00", "message": "", "signature": ""}',
    b'{"type": "verify", "alg": "ECDSA-P-256", "public": "0400", "message": "", "signature": ""}',
    b'{"type": "derive", "alg": "X25519", "key": "nope", "peer": "00"}',
    b'{"type": "encaps", "alg": "Ed25519", "public": "00"}',
    b'{"type": "prepare", "alg": "ML-KEM-768", "operation": "fly", "row": "r"}',
    b'{"type": "prepare", "alg": "ML-KEM-768", "operation": "encaps"}',
    b'{"type": "run", "row": "never prepared", "seconds": 0.01}',
    b'{"type": "import", "alg": "X25519", "secret": "00"}',
    b'\xff\xfe{',
])
def test_a_malformed_request_gets_an_error_and_the_worker_goes_on(
        worker: Worker, request_line: bytes) -> None:
    worker.send_raw(request_line + b"\n")
    reply = worker.reply()
    assert reply["type"] == "error" and reply["message"], reply
    key, public = worker.key_pair("X25519")
    assert len(public) == 32 and key


@pytest.mark.parametrize("request_message", [
    {"type": "keygen", "alg": "SPHINCS+-SHA2-128f"},
    {"type": "prepare", "alg": "Ed25519", "operation": "encaps", "row": "r"},
    {"type": "keygen", "alg": "ML-KEM-768", "seed": "00" * 64, "unknown field": 1},
    {"type": "sign", "alg": "Ed25519", "key": "k1", "message": "", "context": "00"},
])
def test_what_a_library_lacks_is_a_problem_not_an_error(
        binary: Path, request_message: dict[str, Any]) -> None:
    w = Worker([str(binary)])
    try:
        w.key_pair("Ed25519")  # k1
        reply = w.request(request_message)
        if request_message.get("unknown field"):  # unknown fields are ignored
            assert reply["type"] == "key"
        else:
            assert reply["type"] == "problem" and reply["kind"] == "not_offered", reply
            assert reply["reason"]
    finally:
        w.stop()


def test_an_invalid_peer_point_is_an_error_and_the_worker_goes_on(worker: Worker) -> None:
    key, _ = worker.key_pair("X25519")
    low_order = bytes(32)  # the identity: X25519 would output all zeros (RFC 7748 section 6.1)
    assert worker.request({"type": "derive", "alg": "X25519", "key": key,
                           "peer": low_order.hex()})["type"] == "error"
    key, public = worker.key_pair("ECDH-P-256")
    off_curve = public[:-1] + bytes([public[-1] ^ 1])
    assert worker.request({"type": "derive", "alg": "ECDH-P-256", "key": key,
                           "peer": off_curve.hex()})["type"] == "error"
    assert worker.derive("ECDH-P-256", key, public)  # still answering


def test_an_encapsulation_key_out_of_range_is_an_error(worker: Worker) -> None:
    """FIPS 203 section 7.2 modulus check: coefficients encoded as 0xfff are >= q."""
    for alg, size in (("ML-KEM-512", 800), ("ML-KEM-768", 1184), ("ML-KEM-1024", 1568)):
        reply = worker.request({"type": "encaps", "alg": alg, "public": "ff" * size})
        assert reply["type"] == "error", reply


def test_a_line_of_exactly_the_limit_is_read_and_one_byte_more_refused(worker: Worker) -> None:
    """The protocol's limit is 1 MiB with the newline."""
    head, tail = b'{"type": "keygen", "alg": "X25519"', b"}\n"
    worker.send_raw(head + b" " * ((1 << 20) - len(head) - len(tail)) + tail)
    assert worker.reply()["type"] == "key"
    worker.send_raw(head + b" " * ((1 << 20) - len(head) - len(tail) + 1) + tail)
    assert worker.reply()["type"] == "error"


def test_a_line_over_the_limit_is_refused_and_the_next_one_answered(worker: Worker) -> None:
    huge = json.dumps({"type": "verify", "alg": "Ed25519", "public": "00" * 32,
                       "message": "00" * (1 << 20), "signature": ""}).encode()
    worker.send_raw(huge + b"\n")
    reply = worker.reply()
    assert reply["type"] == "error" and "longer than" in reply["message"]
    assert worker.key_pair("X25519")[0]


def test_non_ascii_text_comes_back_intact(worker: Worker) -> None:
    worker.send_raw('{"type": "keygen", "alg": "ML-KEM-768\u00e9\u2028"}\n'.encode())
    reply = worker.reply()
    assert reply["type"] == "problem" and "ML-KEM-768\u00e9\u2028" in reply["reason"]


def test_secrets_are_handles_and_never_in_a_reply(worker: Worker) -> None:
    seed = bytes(range(64))
    reply = worker.expect({"type": "keygen", "alg": "ML-KEM-768", "seed": seed.hex()}, "key")
    assert re.fullmatch(r"k\d+", reply["key"])
    assert seed.hex() not in json.dumps(reply)
    prepared = worker.expect({"type": "prepare", "row": "s", "alg": "ML-KEM-768",
                              "operation": "decaps"}, "prepared")
    assert set(prepared) == {"type", "row", "sizes", "attributes"}


# --- ending ----------------------------------------------------------------------------

def test_end_of_input_exits_zero(fresh: Worker) -> None:
    assert fresh.close_stdin() == 0


def test_quit_exits_zero_without_a_reply(fresh: Worker) -> None:
    fresh.send({"type": "quit"})
    assert fresh.line() is None
    assert fresh.process.wait(timeout=60) == 0


# --- timing ----------------------------------------------------------------------------

@pytest.mark.parametrize(("alg", "operation"),
                         [(alg, op) for alg, ops in OPERATIONS.items() for op in ops])
def test_every_operation_prepares_and_runs_a_round(worker: Worker, alg: str,
                                                   operation: str) -> None:
    row = f"{alg}/{operation}"
    prepared = worker.expect({"type": "prepare", "row": row, "alg": alg,
                              "operation": operation}, "prepared")
    assert prepared["row"] == row
    assert all(isinstance(n, int) and n > 0 for n in prepared["sizes"].values())
    attributes = prepared["attributes"]
    if operation in ("sign", "verify"):
        assert attributes["messages"] == 64 and prepared["sizes"]["message"] == 32
        expected = "deterministic" if alg == "Ed25519" else "hedged"
        assert attributes["signing"] == expected
    if operation in ("keygen", "decaps", "sign", "derive"):
        assert attributes["key_form"] == "object"
    seconds = 0.002
    reply = worker.expect({"type": "run", "row": row, "seconds": seconds}, "round")
    assert set(reply) == {"type", "row", "ops", "wall_ns", "thread_cpu_ns", "process_cpu_ns"}
    assert reply["row"] == row
    assert isinstance(reply["ops"], int) and reply["ops"] >= 1
    assert reply["wall_ns"] >= seconds * 1e9
    assert 0 < reply["thread_cpu_ns"] <= reply["process_cpu_ns"]


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


def test_rows_interleave_and_batches_grow(worker: Worker) -> None:
    """Two rows prepared at once run in any order; a round long enough for several batches
    counts more operations than a one-batch round (the batch doubles)."""
    for row, alg in (("a", "X25519"), ("b", "Ed25519")):
        worker.expect({"type": "prepare", "row": row, "alg": alg, "operation": "keygen"},
                      "prepared")
    short = worker.expect({"type": "run", "row": "a", "seconds": 1e-9}, "round")
    worker.expect({"type": "run", "row": "b", "seconds": 0.001}, "round")
    longer = worker.expect({"type": "run", "row": "a", "seconds": 0.05}, "round")
    assert short["ops"] == 1
    assert longer["ops"] > 3


@pytest.mark.parametrize("seconds", [0, -1, 601, "1", None])
def test_a_run_outside_the_protocol_range_is_an_error(worker: Worker, seconds: object) -> None:
    worker.expect({"type": "prepare", "row": "range", "alg": "X25519", "operation": "keygen"},
                  "prepared")
    assert worker.request({"type": "run", "row": "range", "seconds": seconds})["type"] == "error"


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
