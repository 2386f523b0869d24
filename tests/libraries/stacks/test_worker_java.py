"""The JVM stack worker against the worker protocol (docs/stacks.md), for both of its
implementations: `--impl java` (the JDK's providers) and `--impl bouncycastle` (BouncyCastle's
lightweight API). Built from its pinned sources for Java 17, it must report what the runtime
and the jar say, reproduce the NIST and RFC known answers where its API takes the inputs,
interoperate both ways with liboqs and pyca/cryptography, refuse tampering, answer every
malformed request with an error and keep running, and time rounds whose process clock never
reads below its thread clock. BouncyCastle must also run on a JDK older than 24, where the
`java` implementation offers only what that JDK has."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, mldsa, mlkem, x25519
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from pqbench.catalog.vectors import load_vectors, parse_pqbench_json
from pqbench.libraries.liboqs import import_oqs
from tests.helpers.stack_workers import (
    STACKS,
    Worker,
    build_jvm_worker,
    built_worker,
    jdk_homes,
    jvm_worker_argv,
    newest_jdk,
    with_jvm_options,
)

#: Every test here starts a worker process, and the first may build it (a cold Go or Maven
#: fetch and compile on a loaded 2-core machine takes minutes).
pytestmark = [pytest.mark.process, pytest.mark.timeout(1800)]

OQS = import_oqs()
IMPLEMENTATIONS = ["java", "bouncycastle"]
ML_KEM = ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"]
ML_DSA = ["ML-DSA-44", "ML-DSA-65", "ML-DSA-87"]
CLASSICAL = {"X25519": ["keygen", "derive"], "ECDH-P-256": ["keygen", "derive"],
             "Ed25519": ["keygen", "sign", "verify"], "ECDSA-P-256": ["keygen", "sign", "verify"]}
OPERATIONS = {
    **{name: ["keygen", "encaps", "decaps"] for name in ML_KEM},
    **{name: ["keygen", "sign", "verify"] for name in ML_DSA},
    **CLASSICAL,
}
SEEDED = {"seeded_keygen"}
#: What each implementation's API lets the worker take: the JDK's through FixedRandom
#: (its SecureRandom parameter), BouncyCastle's directly.
FEATURES = {
    "java": {**{name: {"seeded_keygen", "derandomized_encaps", "import_expanded"}
                for name in ML_KEM},
             **{name: {"seeded_keygen", "deterministic_sign"} for name in ML_DSA},
             "X25519": SEEDED, "Ed25519": SEEDED, "ECDH-P-256": SEEDED, "ECDSA-P-256": SEEDED},
    "bouncycastle": {
        **{name: {"seeded_keygen", "derandomized_encaps", "import_expanded"} for name in ML_KEM},
        **{name: {"seeded_keygen", "deterministic_sign"} for name in ML_DSA},
        "X25519": SEEDED, "Ed25519": SEEDED, "ECDH-P-256": SEEDED,
        "ECDSA-P-256": {"seeded_keygen", "deterministic_sign"}},
}
SIGNING = {"java": {"ECDSA-P-256": "randomized", "Ed25519": "deterministic"},
           "bouncycastle": {"ECDSA-P-256": "randomized", "Ed25519": "deterministic"}}
PYCA_MLKEM: dict[str, Any] = {"ML-KEM-768": mlkem.MLKEM768PrivateKey,
                              "ML-KEM-1024": mlkem.MLKEM1024PrivateKey}
PYCA_MLDSA: dict[str, tuple[Any, Any]] = {
    "ML-DSA-44": (mldsa.MLDSA44PrivateKey, mldsa.MLDSA44PublicKey),
    "ML-DSA-65": (mldsa.MLDSA65PrivateKey, mldsa.MLDSA65PublicKey),
    "ML-DSA-87": (mldsa.MLDSA87PrivateKey, mldsa.MLDSA87PublicKey),
}
RAW = (serialization.Encoding.Raw, serialization.PublicFormat.Raw)
POINT = (serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
JDK = newest_jdk(24)


def vectors(name: str) -> list[dict[str, str]]:
    return load_vectors(f"{name.lower()}.json", parse_pqbench_json)


def flip(data: bytes, index: int = 0) -> bytes:
    return data[:index] + bytes([data[index] ^ 1]) + data[index + 1:]


def jdk_version(home: Path) -> str:
    match = re.search(r'^JAVA_RUNTIME_VERSION="([^"]+)"', (home / "release").read_text(),
                      re.MULTILINE)
    assert match, home
    return match.group(1)


@pytest.fixture(scope="module")
def argv() -> dict[str, list[str]]:
    """Each implementation's command as `pqbench speed -i NAME` builds and starts it."""
    return {name: built_worker(name) for name in IMPLEMENTATIONS}


@pytest.fixture(scope="module")
def readme_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The worker built with the commands of pqbench/libraries/stacks/java/README.md (for Java
    17)."""
    return build_jvm_worker(tmp_path_factory.mktemp("jvm-worker"), JDK)


@pytest.fixture(scope="module", params=IMPLEMENTATIONS)
def worker(request: pytest.FixtureRequest, argv: dict[str, list[str]]) -> Iterator[Worker]:
    w = Worker(argv[request.param])
    yield w
    w.stop()


@pytest.fixture
def fresh(argv: dict[str, list[str]]) -> Iterator[Worker]:
    """A worker of this test's own, for tests that end it."""
    w = Worker(argv["bouncycastle"])
    yield w
    w.stop()


def implementation(worker: Worker) -> str:
    name = worker.hello["implementation"]
    assert isinstance(name, str)
    return name


def has(worker: Worker, alg: str, feature: str) -> bool:
    return feature in worker.hello["features"][alg]


# --- hello -----------------------------------------------------------------------------

def test_hello_reports_the_runtime_and_the_versions_it_runs(
        worker: Worker, argv: dict[str, list[str]]) -> None:
    hello = worker.hello
    assert hello["type"] == "hello" and hello["protocol"] == 1
    assert hello["pid"] == worker.process.pid
    assert jdk_version(JDK) in hello["runtime"]
    libraries = hello["libraries"]
    command = argv[implementation(worker)]
    assert libraries["jvm options"] == " ".join(command[1:command.index("-cp")])
    assert {"-Xms512m", "-Xmx512m", "-XX:+UseSerialGC"} <= set(libraries["jvm options"].split())
    assert set(hello["library_of"].values()) <= set(libraries)
    if implementation(worker) == "bouncycastle":
        pom = ET.parse(STACKS / "java" / "pom.xml")
        pinned = pom.find("{http://maven.apache.org/POM/4.0.0}properties/"
                          "{http://maven.apache.org/POM/4.0.0}bc.version")
        assert pinned is not None
        assert libraries["bcprov-jdk18on"] == pinned.text
        assert set(hello["library_of"].values()) == {"bcprov-jdk18on"}
    else:
        assert {hello["library_of"][name] for name in ML_KEM} == {"SunJCE"}
        assert {hello["library_of"][name] for name in ML_DSA} == {"SUN"}
        for library in hello["library_of"].values():
            assert libraries[library] == jdk_version(JDK)


def test_hello_offers_every_algorithm_with_the_features_its_api_allows(worker: Worker) -> None:
    hello = worker.hello
    assert hello["offers"] == OPERATIONS
    assert {alg: set(f) for alg, f in hello["features"].items()} == FEATURES[
        implementation(worker)]


def vm_flags(jdk: Path, *options: str) -> dict[str, str]:
    printed = subprocess.run([str(jdk / "bin" / "java"), "-XX:+UnlockDiagnosticVMOptions",
                              *options, "-XX:+PrintFlagsFinal", "-version"],
                             capture_output=True, text=True, timeout=300, check=True).stdout
    return dict(re.findall(r"^\s*\S+\s+(\w+)\s+[:]?=\s+(\S+)", printed, re.MULTILINE))


def test_the_jdk_code_path_follows_the_intrinsics_and_both_pass(
        argv: dict[str, list[str]]) -> None:
    """The JDK's ML-KEM code path names HotSpot's intrinsics where the JVM turned them on
    (AVX-512 machines); with them turned off it is plain Java; without
    -XX:+UnlockDiagnosticVMOptions the flags cannot be read and the path is unknown. The
    known answers pass on every path."""
    on = vm_flags(JDK)
    unlock = "-XX:+UnlockDiagnosticVMOptions"
    without = [arg for arg in argv["java"] if arg != unlock]
    locked = Worker(without)
    default = Worker(with_jvm_options(without, unlock))
    plain = Worker(with_jvm_options(without, unlock, "-XX:-UseKyberIntrinsics",
                                    "-XX:-UseSHA3Intrinsics"))
    try:
        assert locked.hello["code_paths"]["ML-KEM-768"].startswith("unknown")
        path = default.hello["code_paths"]["ML-KEM-768"]
        assert ("UseKyberIntrinsics" in path) == (on["UseKyberIntrinsics"] == "true")
        assert plain.hello["code_paths"]["ML-KEM-768"] == "Java (C2 JIT), no intrinsics"
        for w in (default, plain):
            for v in vectors("ML-KEM-768"):
                key, public = w.key_pair("ML-KEM-768", bytes.fromhex(v["d"] + v["z"]))
                assert public.hex() == v["pk"]
                assert w.encaps("ML-KEM-768", public, bytes.fromhex(v["msg"])) == (
                    bytes.fromhex(v["ct"]), bytes.fromhex(v["ss"]))
                assert w.decaps("ML-KEM-768", key, bytes.fromhex(v["ct_n"])).hex() == v["ss_n"]
    finally:
        for w in (locked, default, plain):
            w.stop()


def test_bouncycastle_runs_on_an_older_jdk_where_the_jdk_offers_only_its_classics(
        readme_build: Path) -> None:
    """Compiled for Java 17 as its README says, the worker serves BouncyCastle's every
    algorithm on a JDK without ML-KEM; there the JDK's own implementation offers only what
    that JDK has (its X25519, Ed25519 and P-256), and asking it for ML-KEM is a problem."""
    older = {release: home for release, home in jdk_homes().items() if 17 <= release < 24}
    assert older, "a JDK 17..23 must be installed under /usr/lib/jvm (Debian's default is 17)"
    home = older[min(older)]
    bc = Worker(jvm_worker_argv(readme_build, home, "bouncycastle"))
    jdk = Worker(jvm_worker_argv(readme_build, home, "java"))
    try:
        assert jdk_version(home) in bc.hello["runtime"]
        assert bc.hello["offers"] == OPERATIONS
        v = vectors("ML-KEM-768")[0]
        key, public = bc.key_pair("ML-KEM-768", bytes.fromhex(v["d"] + v["z"]))
        assert public.hex() == v["pk"]
        assert bc.decaps("ML-KEM-768", key, bytes.fromhex(v["ct"])).hex() == v["ss"]
        assert jdk.hello["offers"] == CLASSICAL
        assert "JDK 24" in jdk.hello["needs"] and "JDK 17" in bc.hello["needs"]
        reply = jdk.request({"type": "keygen", "alg": "ML-KEM-768"})
        assert reply["type"] == "problem" and reply["kind"] == "not_offered"
        key, public = jdk.key_pair("X25519")
        assert len(public) == 32
    finally:
        bc.stop()
        jdk.stop()


# --- known answers ---------------------------------------------------------------------

@pytest.mark.parametrize("alg", ML_KEM)
def test_ml_kem_known_answers(worker: Worker, alg: str) -> None:
    """FIPS 203 KAT: keygen from d||z, encaps from m, decaps, the implicit rejection; and the
    expanded dk where the library imports it."""
    for v in vectors(alg):
        key, public = worker.key_pair(alg, bytes.fromhex(v["d"] + v["z"]))
        assert public.hex() == v["pk"]
        ct, ss = worker.encaps(alg, public, bytes.fromhex(v["msg"]))
        assert (ct.hex(), ss.hex()) == (v["ct"], v["ss"])
        assert worker.decaps(alg, key, ct).hex() == v["ss"]
        assert worker.decaps(alg, key, bytes.fromhex(v["ct_n"])).hex() == v["ss_n"]
        reply = worker.request({"type": "import", "alg": alg, "secret": v["sk"]})
        if has(worker, alg, "import_expanded"):
            assert reply["type"] == "key" and reply["public"] == v["pk"]
            assert worker.decaps(alg, reply["key"], bytes.fromhex(v["ct"])).hex() == v["ss"]
        else:
            assert reply["type"] == "problem" and reply["kind"] == "not_offered"


@pytest.mark.parametrize("alg", ML_DSA)
def test_ml_dsa_known_answers(worker: Worker, alg: str) -> None:
    """FIPS 204 deterministic pure KAT: keygen from xi; with the vector's context, the
    deterministic signature and its verification where the library takes a context (the
    JDK's ML-DSA takes none: a context is a problem, not a wrong answer)."""
    for v in vectors(alg):
        key, public = worker.key_pair(alg, bytes.fromhex(v["xi"]))
        assert public.hex() == v["pk"]
        message = bytes.fromhex(v["msg"])
        reply = worker.request({"type": "sign", "alg": alg, "key": key, "message": v["msg"],
                                "context": v["ctx"], "deterministic": True})
        if implementation(worker) == "java":
            assert reply["type"] == "problem" and reply["kind"] == "not_offered"
            continue
        assert reply["type"] == "signed" and reply["signature"] == v["sig"]
        assert worker.verify(alg, public, message, bytes.fromhex(v["sig"]), context=v["ctx"])
        assert not worker.verify(alg, public, message, bytes.fromhex(v["sig"]))


@pytest.mark.parametrize("alg", ML_DSA)
def test_jdk_deterministic_ml_dsa_equals_bouncycastles(argv: dict[str, list[str]],
                                                       alg: str) -> None:
    """Without a context the JDK's deterministic signature (rnd = 0^32 through its
    SecureRandom) must equal BouncyCastle's, whose deterministic mode passes the NIST
    vectors; hedged signatures of one message differ."""
    jdk = Worker(argv["java"])
    bc = Worker(argv["bouncycastle"])
    try:
        seed = bytes(range(32))
        message = b"deterministic"
        jdk_key, jdk_public = jdk.key_pair(alg, seed)
        bc_key, bc_public = bc.key_pair(alg, seed)
        assert jdk_public == bc_public
        signature = jdk.sign(alg, jdk_key, message, deterministic=True)
        assert signature == bc.sign(alg, bc_key, message, deterministic=True)
        assert jdk.sign(alg, jdk_key, message) != jdk.sign(alg, jdk_key, message)
    finally:
        jdk.stop()
        bc.stop()


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
    """SP 800-56A validity records: Z must match for P records; an F record must not produce
    its recorded key pair and Z. (The JDK's public key of an imported scalar is found with
    its own ECDH and ECDSA, so it is checked too.)"""
    for v in vectors("ECDH-P-256"):
        reply = worker.expect({"type": "import", "alg": "ECDH-P-256", "secret": v["dsIUT"]},
                              "key")
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


@pytest.mark.parametrize("alg", ["ECDH-P-256", "ECDSA-P-256"])
def test_a_p256_scalar_gives_pycas_public_key(worker: Worker, alg: str) -> None:
    for _ in range(3):
        private = ec.generate_private_key(ec.SECP256R1())
        scalar = private.private_numbers().private_value.to_bytes(32, "big")
        _, public = worker.key_pair(alg, scalar)
        assert public == private.public_key().public_bytes(*POINT)


def test_bouncycastle_deterministic_ecdsa_is_rfc_6979(argv: dict[str, list[str]]) -> None:
    w = Worker(argv["bouncycastle"])
    try:
        private = ec.generate_private_key(ec.SECP256R1())
        scalar = private.private_numbers().private_value.to_bytes(32, "big")
        key, public = w.key_pair("ECDSA-P-256", scalar)
        assert public == private.public_key().public_bytes(*POINT)
        message = b"pqbench"
        first = w.sign("ECDSA-P-256", key, message, deterministic=True)
        assert w.sign("ECDSA-P-256", key, message, deterministic=True) == first
        private.public_key().verify(first, message, ec.ECDSA(hashes.SHA256()))
    finally:
        w.stop()


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
    key, public = worker.key_pair(alg)
    signature = worker.sign(alg, key, message)
    with OQS.Signature(alg) as oqs_verifier:
        assert oqs_verifier.verify(message, signature, public)
        assert not oqs_verifier.verify(flip(message), signature, public)
    private_class, public_class = PYCA_MLDSA[alg]
    public_class.from_public_bytes(public).verify(signature, message)
    theirs = private_class.generate()
    their_public = theirs.public_key().public_bytes_raw()
    their_signature = theirs.sign(message)
    assert worker.verify(alg, their_public, message, their_signature)
    assert not worker.verify(alg, their_public, message, flip(their_signature))
    with OQS.Signature(alg) as oqs_signer:
        oqs_public = oqs_signer.generate_keypair()
        assert worker.verify(alg, bytes(oqs_public), message, bytes(oqs_signer.sign(message)))
    if implementation(worker) == "bouncycastle":
        context = b"pqbench"
        with_context = worker.sign(alg, key, message, context=context.hex())
        public_class.from_public_bytes(public).verify(with_context, message, context)
        assert worker.verify(alg, their_public, message, theirs.sign(message, context),
                             context=context.hex())


def test_x25519_interoperates_with_pyca(worker: Worker) -> None:
    theirs = x25519.X25519PrivateKey.generate()
    key, public = worker.key_pair("X25519")
    ours = worker.derive("X25519", key, theirs.public_key().public_bytes(*RAW))
    assert ours == theirs.exchange(x25519.X25519PublicKey.from_public_bytes(public))


def test_ecdh_p256_interoperates_with_pyca(worker: Worker) -> None:
    theirs = ec.generate_private_key(ec.SECP256R1())
    key, public = worker.key_pair("ECDH-P-256")
    assert len(public) == 65 and public[0] == 4
    ours = worker.derive("ECDH-P-256", key, theirs.public_key().public_bytes(*POINT))
    peer = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), public)
    assert ours == theirs.exchange(ec.ECDH(), peer)
    imported = worker.expect({"type": "import", "alg": "ECDH-P-256", "secret":
                              theirs.private_numbers().private_value.to_bytes(32, "big").hex()},
                             "key")
    assert worker.derive("ECDH-P-256", imported["key"], public) == ours


def test_ed25519_interoperates_with_pyca(worker: Worker) -> None:
    message = b"interoperability"
    theirs = ed25519.Ed25519PrivateKey.generate()
    assert worker.verify("Ed25519", theirs.public_key().public_bytes(*RAW), message,
                         theirs.sign(message))
    key, public = worker.key_pair("Ed25519")
    ed25519.Ed25519PublicKey.from_public_bytes(public).verify(
        worker.sign("Ed25519", key, message), message)


def test_ecdsa_p256_interoperates_with_pyca(worker: Worker) -> None:
    message = b"interoperability"
    theirs = ec.generate_private_key(ec.SECP256R1())
    assert worker.verify("ECDSA-P-256", theirs.public_key().public_bytes(*POINT), message,
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
    b'{"type": "keygen", "alg": "X25519", "deep": ' + b"[" * 500 + b"]" * 500 + b"}",
    b'{"type": "keygen", "alg": "X25519"',
    b'\xff\xfe{',
])
def test_a_malformed_request_gets_an_error_and_the_worker_goes_on(
        worker: Worker, request_line: bytes) -> None:
    worker.send_raw(request_line + b"\n")
    reply = worker.reply()
    assert reply["type"] == "error" and reply["message"], reply
    key, public = worker.key_pair("X25519")
    assert len(public) == 32 and key


def test_what_a_library_lacks_is_a_problem_not_an_error(worker: Worker) -> None:
    key, _ = worker.key_pair("Ed25519")
    for request in ({"type": "keygen", "alg": "SPHINCS+-SHA2-128f"},
                    {"type": "prepare", "alg": "Ed25519", "operation": "encaps", "row": "r"},
                    {"type": "sign", "alg": "Ed25519", "key": key, "message": "",
                     "context": "00"}):
        reply = worker.request(request)
        assert reply["type"] == "problem" and reply["kind"] == "not_offered", reply
    reply = worker.request({"type": "keygen", "alg": "X25519", "seed": "00" * 32,
                            "unknown field": 1})
    assert reply["type"] == "key"


def test_an_invalid_peer_point_is_an_error_and_the_worker_goes_on(worker: Worker) -> None:
    key, _ = worker.key_pair("X25519")
    assert worker.request({"type": "derive", "alg": "X25519", "key": key,
                           "peer": bytes(32).hex()})["type"] == "error"
    key, public = worker.key_pair("ECDH-P-256")
    off_curve = public[:-1] + bytes([public[-1] ^ 1])
    assert worker.request({"type": "derive", "alg": "ECDH-P-256", "key": key,
                           "peer": off_curve.hex()})["type"] == "error"
    assert worker.derive("ECDH-P-256", key, public)


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


def test_non_ascii_text_is_escaped_in_replies(worker: Worker) -> None:
    worker.send_raw('{"type": "keygen", "alg": "ML-KEM-768\u00e9\u2028"}\n'.encode())
    line = worker.line()
    assert line is not None and line.isascii()
    reply = json.loads(line)
    assert reply["type"] == "problem" and "ML-KEM-768\u00e9\u2028" in reply["reason"]


# --- ending ----------------------------------------------------------------------------

def test_end_of_input_exits_zero(fresh: Worker) -> None:
    assert fresh.close_stdin() == 0


def test_quit_exits_zero_without_a_reply(fresh: Worker) -> None:
    fresh.send({"type": "quit"})
    assert fresh.line() is None
    assert fresh.process.wait(timeout=60) == 0


def test_an_unknown_implementation_exits_with_a_message(argv: dict[str, list[str]]) -> None:
    done = subprocess.run([*argv["bouncycastle"][:-1], "nonesuch"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert "nonesuch" in done.stderr


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
        assert attributes["signing"] == SIGNING[implementation(worker)].get(alg, "hedged")
    if operation in ("keygen", "decaps", "sign", "derive"):
        # JDK 25 keeps ML-KEM and ML-DSA private keys as their expanded encodings
        expanded = implementation(worker) == "java" and alg.startswith("ML-")
        assert attributes["key_form"] == ("expanded" if expanded else "object")
    seconds = 0.002
    reply = worker.expect({"type": "run", "row": row, "seconds": seconds}, "round")
    assert set(reply) == {"type", "row", "ops", "wall_ns", "thread_cpu_ns", "process_cpu_ns"}
    assert reply["row"] == row
    assert isinstance(reply["ops"], int) and reply["ops"] >= 1
    assert reply["wall_ns"] >= seconds * 1e9
    assert 0 < reply["thread_cpu_ns"] <= reply["process_cpu_ns"]


def test_the_process_clock_counts_other_threads(fresh: Worker) -> None:
    """The process clock is the whole JVM's: over the first short rounds of a new JVM its
    sum exceeds the thread clock's (the JIT compiles the loop and the operation on its own
    threads), and no round's process time is below its thread time, as a process clock in
    10 ms ticks would often make it."""
    fresh.expect({"type": "prepare", "row": "jit", "alg": "ML-KEM-512",
                  "operation": "keygen"}, "prepared")
    rounds = [fresh.expect({"type": "run", "row": "jit", "seconds": 0.001}, "round")
              for _ in range(40)]
    assert all(r["thread_cpu_ns"] <= r["process_cpu_ns"] for r in rounds)
    assert sum(r["process_cpu_ns"] for r in rounds) > sum(r["thread_cpu_ns"] for r in rounds)


@pytest.mark.parametrize("seconds", [0, -1, 601, "1", None])
def test_a_run_outside_the_protocol_range_is_an_error(worker: Worker, seconds: object) -> None:
    worker.expect({"type": "prepare", "row": "range", "alg": "X25519", "operation": "keygen"},
                  "prepared")
    assert worker.request({"type": "run", "row": "range", "seconds": seconds})["type"] == "error"


# --- the fidelity references -----------------------------------------------------------

REFERENCES = {"java": "pqbench.stacks.Reference", "bouncycastle": "pqbench.stacks.bc.Reference"}


@pytest.mark.parametrize("name", IMPLEMENTATIONS)
def test_the_reference_harness_times_every_operation(argv: dict[str, list[str]],
                                                     name: str) -> None:
    """The plain JCA / lightweight-API loops the fidelity benchmark pairs with the worker's
    rows: one JSON round per line, for one row of each kind of operation (a JVM start
    each)."""
    command = argv[name]
    main = command.index("pqbench.stacks.Worker")
    rows = {"ML-KEM-512": ["keygen"], "ML-KEM-768": ["encaps", "decaps"], "ML-DSA-65": ["sign"],
            "X25519": ["derive"], "ECDSA-P-256": ["verify"], "Ed25519": ["verify"]}
    for alg, operations in rows.items():
        for operation in operations:
            done = subprocess.run([*command[:main], REFERENCES[name], alg, operation, "0.001",
                                   "2"], capture_output=True, text=True, timeout=300,
                                  check=False)
            assert done.returncode == 0, done.stderr
            rounds = [json.loads(line) for line in done.stdout.splitlines()]
            assert len(rounds) == 2
            for r in rounds:
                assert (r["alg"], r["operation"]) == (alg, operation)
                assert r["ops"] >= 1 and r["wall_ns"] >= 1_000_000 and r["thread_cpu_ns"] > 0
    done = subprocess.run([*command[:main], REFERENCES[name], "ML-KEM-768", "fly", "0.001"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2 and "fly" in done.stderr


@pytest.mark.parametrize("name", IMPLEMENTATIONS)
def test_the_reference_serves_one_round_per_line_until_stdin_closes(
        argv: dict[str, list[str]], name: str) -> None:
    """ROUNDS '-': one JVM serves a round for each line read (its seconds, or SECONDS when
    blank) and exits 0 when stdin closes, as the fidelity benchmark drives it."""
    command = argv[name]
    main = command.index("pqbench.stacks.Worker")
    done = subprocess.run([*command[:main], REFERENCES[name], "ML-KEM-768", "encaps", "0.001",
                           "-"], input="0.002\n\n0.001\n", capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    rounds = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rounds) == 3
    assert rounds[0]["wall_ns"] >= 2_000_000  # the line's seconds
    for r in rounds:
        assert r["ops"] >= 1 and r["operation"] == "encaps" and r["wall_ns"] >= 1_000_000
