"""Every stack worker against the one worker protocol (docs/stacks.md): Go, aws-lc-rs,
libcrux, the JDK's providers and BouncyCastle's, each built as `-i NAME` builds it and
driven over real pipes through the same cases: its hello, the NIST and RFC known answers
its API can take, interoperability both ways with liboqs and pyca/cryptography, tampering,
malformed requests, what a library lacks, the end of input, and timed rounds with the
protocol's clocks. What each library is (what it offers, which inputs its API takes, how it
signs and holds its keys) is written here, from its documentation, never read from the
worker; what only one worker has (its versions, code paths, reference harness) is in its
own file."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, mldsa, mlkem, x25519
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from pqbench.catalog.algorithms import by_name
from pqbench.libraries.liboqs import import_oqs
from pqbench.libraries.stacks import registry
from tests.helpers.stack_workers import (
    REPLY_DEADLINE,
    Worker,
    built_worker,
    check_ml_dsa_vectors,
    check_ml_kem_vectors,
    check_x25519_vectors,
    flip,
    problem,
    vectors,
)

#: Each worker is built on first use (a cold Rust build takes many minutes on 2 cores).
pytestmark = [pytest.mark.process, pytest.mark.timeout(3600)]

OQS = import_oqs()
IMPLEMENTATIONS = ("go", "aws-lc-rs", "libcrux", "java", "bouncycastle")
ML_KEM = ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024")
ML_DSA = ("ML-DSA-44", "ML-DSA-65", "ML-DSA-87")
KINDS = {**{alg: "kem" for alg in ML_KEM},
         **{alg: "signature" for alg in (*ML_DSA, "Ed25519", "ECDSA-P-256")},
         "X25519": "agreement", "ECDH-P-256": "agreement"}
OPERATIONS = {"kem": ["keygen", "encaps", "decaps"], "signature": ["keygen", "sign", "verify"],
              "agreement": ["keygen", "derive"]}
EVERY = tuple(KINDS)

SEEDED = ["seeded_keygen"]
#: What each library's API accepts (its README and the library's documentation): the
#: features each worker must advertise, no more and no less.
FEATURES: dict[str, dict[str, list[str]]] = {
    "go": {"ML-KEM-512": ["seeded_keygen", "derandomized_encaps", "import_expanded"],
           **{alg: ["seeded_keygen", "derandomized_encaps"] for alg in ML_KEM[1:]},
           **{alg: ["seeded_keygen", "deterministic_sign"] for alg in ML_DSA},
           "X25519": SEEDED, "ECDH-P-256": SEEDED, "Ed25519": SEEDED,
           "ECDSA-P-256": ["seeded_keygen", "deterministic_sign"]},
    "aws-lc-rs": {
        **{alg: ["import_expanded"] for alg in ML_KEM},
        **{alg: ["seeded_keygen", "import_expanded"] for alg in ML_DSA},
        **{alg: SEEDED for alg in ("X25519", "ECDH-P-256", "Ed25519", "ECDSA-P-256")}},
    "libcrux": {
        **{alg: ["seeded_keygen", "derandomized_encaps", "import_expanded"] for alg in ML_KEM},
        **{alg: ["seeded_keygen", "deterministic_sign", "import_expanded"] for alg in ML_DSA},
        "X25519": SEEDED, "Ed25519": SEEDED},
    # The JDK through FixedRandom (its SecureRandom parameter): JDK 25 keeps expanded
    # ML-KEM keys, so it imports one.
    "java": {**{alg: ["seeded_keygen", "derandomized_encaps", "import_expanded"]
                for alg in ML_KEM},
             **{alg: ["seeded_keygen", "deterministic_sign"] for alg in ML_DSA},
             "X25519": SEEDED, "ECDH-P-256": SEEDED, "Ed25519": SEEDED, "ECDSA-P-256": SEEDED},
    # BouncyCastle's provider: its ML-KEM keys encode seed and expanded key both, so no bare
    # expanded key is imported through the JCA; RFC 6979 ECDSA as SHA256withECDDSA.
    "bouncycastle": {**{alg: ["seeded_keygen", "derandomized_encaps"] for alg in ML_KEM},
                     **{alg: ["seeded_keygen", "deterministic_sign"] for alg in ML_DSA},
                     "X25519": SEEDED, "ECDH-P-256": SEEDED, "Ed25519": SEEDED,
                     "ECDSA-P-256": ["seeded_keygen", "deterministic_sign"]},
}
#: Whose ML-DSA takes a context (FIPS 204): the JDK's and aws-lc-rs's do not.
CONTEXTS = {"go": True, "aws-lc-rs": False, "libcrux": True, "java": False,
            "bouncycastle": True}
#: How sign without "deterministic" signs, where it is not hedged.
SIGNING = {"go": {"Ed25519": "deterministic"}, "aws-lc-rs": {"Ed25519": "deterministic"},
           "libcrux": {"Ed25519": "deterministic"},
           "java": {"Ed25519": "deterministic", "ECDSA-P-256": "randomized"},
           "bouncycastle": {"Ed25519": "deterministic", "ECDSA-P-256": "randomized"}}
#: How a timed row holds its secret key (docs/stacks.md, "What each one calls").
KEY_FORM = {"go": lambda alg: "object", "aws-lc-rs": lambda alg: "object",
            "libcrux": lambda alg: "expanded" if alg.startswith("ML-") else "seed",
            "java": lambda alg: "expanded" if alg.startswith("ML-") else "object",
            "bouncycastle": lambda alg: "object"}
#: How a timed encaps, verify or derive takes the public or peer key.
PUBLIC_KEY_FORM = {"go": "encoded", "aws-lc-rs": "object", "libcrux": "encoded",
                   "java": "encoded", "bouncycastle": "encoded"}
#: Whose import takes a classical secret key (a P-256 scalar): Go's and the JVM's; the
#: Rust workers import only expanded ML-KEM and ML-DSA keys.
IMPORTS_SCALAR = {"go": True, "java": True, "bouncycastle": True, "aws-lc-rs": False,
                  "libcrux": False}
#: Whose ECDSA verify refuses a public point off the curve with an error, never a plain
#: false (aws-lc-rs parses the key before it verifies).
REFUSES_INVALID_POINTS = {"go": False, "java": False, "bouncycastle": False,
                          "aws-lc-rs": True, "libcrux": False}
#: Whose secret key size is its seed's, not the expanded FIPS key's: Go's standard library
#: ML-KEM and filippo.io/mldsa keep the 64-byte d||z and the 32-byte xi (CIRCL's
#: ML-KEM-512 the expanded key).
SEED_SIZED = {"go": {"ML-KEM-768": 64, "ML-KEM-1024": 64, "ML-DSA-44": 32, "ML-DSA-65": 32,
                    "ML-DSA-87": 32}}
PYCA_MLKEM: dict[str, tuple[Any, Any]] = {
    "ML-KEM-768": (mlkem.MLKEM768PrivateKey, mlkem.MLKEM768PublicKey),
    "ML-KEM-1024": (mlkem.MLKEM1024PrivateKey, mlkem.MLKEM1024PublicKey)}
PYCA_MLDSA: dict[str, tuple[Any, Any]] = {
    "ML-DSA-44": (mldsa.MLDSA44PrivateKey, mldsa.MLDSA44PublicKey),
    "ML-DSA-65": (mldsa.MLDSA65PrivateKey, mldsa.MLDSA65PublicKey),
    "ML-DSA-87": (mldsa.MLDSA87PrivateKey, mldsa.MLDSA87PublicKey),
}
POINT = (serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


@pytest.fixture(scope="module")
def commands() -> dict[str, list[str]]:
    """Each implementation's command as `pqbench speed -i NAME` builds and starts it (built
    once per machine into the per-user cache)."""
    return {}


def command(commands: dict[str, list[str]], name: str) -> list[str]:
    if name not in commands:
        commands[name] = built_worker(name)
    return commands[name]


@pytest.fixture(scope="module", params=IMPLEMENTATIONS)
def worker(request: pytest.FixtureRequest, commands: dict[str, list[str]]) -> Iterator[Worker]:
    running = Worker(command(commands, str(request.param)))
    yield running
    running.stop()


@pytest.fixture
def fresh(worker: Worker, commands: dict[str, list[str]]) -> Iterator[Worker]:
    """A worker of this test's own, of the same implementation, for tests that end it."""
    running = Worker(command(commands, worker.implementation))
    yield running
    running.stop()


def offers(worker: Worker, *algs: str) -> list[str]:
    """Those of `algs` this worker offers; each test asks only for what is offered."""
    return [alg for alg in algs if alg in FEATURES[worker.implementation]]


def has(worker: Worker, alg: str, feature: str) -> bool:
    return feature in FEATURES[worker.implementation][alg]


# --- hello ------------------------------------------------------------------------------

def test_hello_offers_exactly_what_the_api_allows(worker: Worker) -> None:
    hello = worker.hello
    implementation = worker.implementation
    assert hello["type"] == "hello" and hello["protocol"] == 1
    assert implementation in IMPLEMENTATIONS
    assert hello["pid"] == worker.process.pid
    assert hello["offers"] == {alg: OPERATIONS[KINDS[alg]] for alg in FEATURES[implementation]}
    assert hello["features"] == FEATURES[implementation]
    assert set(hello["library_of"]) == set(hello["offers"])
    assert set(hello["library_of"].values()) <= set(hello["libraries"])
    assert set(hello["code_paths"]) == set(hello["offers"])
    assert all(isinstance(v, str) and v for v in hello["libraries"].values())
    # What `pqbench list` says a worker offers before it is built.
    assert set(registry.by_name(implementation).offers) == set(hello["offers"])


# --- known answers ----------------------------------------------------------------------

@pytest.mark.parametrize("alg", ML_KEM)
def test_ml_kem_known_answers(worker: Worker, alg: str) -> None:
    check_ml_kem_vectors(worker, alg, FEATURES[worker.implementation][alg])


@pytest.mark.parametrize("alg", ML_DSA)
def test_ml_dsa_known_answers(worker: Worker, alg: str) -> None:
    implementation = worker.implementation
    check_ml_dsa_vectors(worker, alg, FEATURES[implementation][alg], CONTEXTS[implementation])


def test_x25519_known_answers(worker: Worker) -> None:
    check_x25519_vectors(worker)


def test_ed25519_known_answers(worker: Worker) -> None:
    for v in vectors("Ed25519"):
        message, signature = bytes.fromhex(v["MESSAGE"]), bytes.fromhex(v["SIGNATURE"])
        handle, public = worker.key_pair("Ed25519", bytes.fromhex(v["SECRET"]))
        assert public.hex() == v["PUBLIC"]
        assert worker.sign("Ed25519", handle, message) == signature
        # RFC 8032 signing is deterministic by construction: asking for it changes nothing.
        assert worker.sign("Ed25519", handle, message, deterministic=True) == signature
        assert worker.verify("Ed25519", public, message, signature)
        assert not worker.verify("Ed25519", public, message + b"x", signature)


def test_ecdh_p256_validity_vectors(worker: Worker) -> None:
    """SP 800-56A validity records: the IUT's key from its scalar, then Z with the CAVS's
    key. A P record must give its public key and Z; an F record (an off-curve point, a
    changed key or a changed Z) must not: the worker refuses the point or computes
    something else."""
    for _ in offers(worker, "ECDH-P-256"):
        for v in vectors("ECDH-P-256"):
            keys = [worker.key_pair("ECDH-P-256", bytes.fromhex(v["dsIUT"]))]
            if IMPORTS_SCALAR[worker.implementation]:  # the scalar imported as a secret key, too
                imported = worker.expect({"type": "import", "alg": "ECDH-P-256",
                                          "secret": v["dsIUT"]}, "key")
                keys.append((imported["key"], bytes.fromhex(imported["public"])))
            for handle, public in keys:
                derived = worker.request({"type": "derive", "alg": "ECDH-P-256",
                                          "key": handle,
                                          "peer": "04" + v["QsCAVSx"] + v["QsCAVSy"]})
                assert derived["type"] in ("derived", "error"), derived
                matches = (public.hex() == "04" + v["QsIUTx"] + v["QsIUTy"]
                           and derived.get("shared_secret") == v["Z"])
                assert matches == v["Result"].startswith("P"), v["origin"]


def test_ecdsa_p256_sigver_vectors(worker: Worker) -> None:
    """NIST SigVer vectors, the signature DER-encoded as the protocol carries it: the
    verdict is the record's; a public point off the curve may be refused with an error
    (only in an F record, and only a point pyca refuses too), and must be where the
    library parses the key first."""
    for _ in offers(worker, "ECDSA-P-256"):
        for v in vectors("ECDSA-P-256"):
            point = bytes.fromhex("04" + v["Qx"] + v["Qy"])
            der = encode_dss_signature(int(v["R"], 16), int(v["S"], 16))
            reply = worker.request({"type": "verify", "alg": "ECDSA-P-256",
                                    "public": point.hex(), "message": v["Msg"],
                                    "signature": der.hex()})
            try:
                ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
                valid_point = True
            except ValueError:
                valid_point = False
            if not valid_point and REFUSES_INVALID_POINTS[worker.implementation]:
                assert reply["type"] == "error", (v["origin"], reply)
            if reply["type"] == "error":
                assert v["Result"].startswith("F") and not valid_point, v["origin"]
                continue
            assert reply == {"type": "verified", "valid": v["Result"].startswith("P")}, v


def test_seeded_keys_match_pycas_for_random_seeds(worker: Worker) -> None:
    """Seeded key generation against pyca/cryptography's, on fresh random seeds."""
    for _ in range(3):
        for alg in offers(worker, "ML-KEM-768"):
            if has(worker, alg, "seeded_keygen"):
                seed = secrets.token_bytes(64)
                theirs = mlkem.MLKEM768PrivateKey.from_seed_bytes(seed).public_key()
                assert worker.key_pair(alg, seed)[1] == theirs.public_bytes_raw()
        seed = secrets.token_bytes(32)
        dsa = mldsa.MLDSA65PrivateKey.from_seed_bytes(seed).public_key()
        assert worker.key_pair("ML-DSA-65", seed)[1] == dsa.public_bytes_raw()
        seed = secrets.token_bytes(32)
        ed = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key()
        assert worker.key_pair("Ed25519", seed)[1] == ed.public_bytes_raw()
        seed = secrets.token_bytes(32)
        xk = x25519.X25519PrivateKey.from_private_bytes(seed).public_key()
        assert worker.key_pair("X25519", seed)[1] == xk.public_bytes_raw()
        for alg in offers(worker, "ECDSA-P-256", "ECDH-P-256"):
            private = ec.generate_private_key(ec.SECP256R1())
            scalar = private.private_numbers().private_value.to_bytes(32, "big")
            assert worker.key_pair(alg, scalar)[1] == private.public_key().public_bytes(*POINT)


def test_deterministic_ecdsa_is_rfc_6979_where_offered(worker: Worker) -> None:
    """Deterministic ECDSA repeats itself and verifies with pyca; hedged or randomized
    signing does not repeat."""
    for alg in offers(worker, "ECDSA-P-256"):
        private = ec.generate_private_key(ec.SECP256R1())
        scalar = private.private_numbers().private_value.to_bytes(32, "big")
        key, public = worker.key_pair(alg, scalar)
        assert public == private.public_key().public_bytes(*POINT)
        message = b"pqbench"
        assert worker.sign(alg, key, message) != worker.sign(alg, key, message)
        if not has(worker, alg, "deterministic_sign"):
            continue
        first = worker.sign(alg, key, message, deterministic=True)
        assert worker.sign(alg, key, message, deterministic=True) == first
        private.public_key().verify(first, message, ec.ECDSA(hashes.SHA256()))


# --- interoperability ---------------------------------------------------------------------

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
    # A tampered ciphertext gives the implicit-rejection secret, not the shared one.
    assert worker.decaps(alg, key, flip(bytes(ct))) != bytes(ss)


@pytest.mark.parametrize("alg", sorted(PYCA_MLKEM))
def test_ml_kem_interoperates_with_pyca_and_rejects_as_it_does(worker: Worker,
                                                               alg: str) -> None:
    """Both ways with pyca; where the API takes a seed, the same seed in both libraries
    decapsulates a tampered ciphertext to the same implicit-rejection secret (FIPS 203
    section 6.3)."""
    private_class, public_class = PYCA_MLKEM[alg]
    theirs = private_class.generate()
    if has(worker, alg, "seeded_keygen"):
        key, public = worker.key_pair(alg, theirs.private_bytes_raw())
        assert public == theirs.public_key().public_bytes_raw()
        ss, ct = theirs.public_key().encapsulate()
        assert worker.decaps(alg, key, ct) == ss
        tampered = flip(ct, len(ct) - 1)
        assert worker.decaps(alg, key, tampered) == theirs.decapsulate(tampered)
        ct, ss = worker.encaps(alg, public)
        assert theirs.decapsulate(ct) == ss
    key, public = worker.key_pair(alg)
    shared, ciphertext = public_class.from_public_bytes(public).encapsulate()
    assert worker.decaps(alg, key, ciphertext) == shared
    ct, ss = worker.encaps(alg, theirs.public_key().public_bytes_raw())
    assert theirs.decapsulate(ct) == ss


@pytest.mark.parametrize("alg", ML_DSA)
def test_ml_dsa_interoperates_with_liboqs_and_pyca(worker: Worker, alg: str) -> None:
    message = secrets.token_bytes(33)
    key, public = worker.key_pair(alg)
    signature = worker.sign(alg, key, message)
    with OQS.Signature(alg) as oqs_verifier:
        assert oqs_verifier.verify(message, signature, public)
        assert not oqs_verifier.verify(flip(message), signature, public)
        assert not oqs_verifier.verify(message, flip(signature, 7), public)
    private_class, public_class = PYCA_MLDSA[alg]
    public_class.from_public_bytes(public).verify(signature, message)
    theirs = private_class.generate()
    their_public = theirs.public_key().public_bytes_raw()
    their_signature = theirs.sign(message)
    assert worker.verify(alg, their_public, message, their_signature)
    assert not worker.verify(alg, their_public, message, flip(their_signature))
    assert not worker.verify(alg, their_public, flip(message), their_signature)
    assert not worker.verify(alg, their_public, message, their_signature[:-1])
    with OQS.Signature(alg) as oqs_signer:
        oqs_public = oqs_signer.generate_keypair()
        assert worker.verify(alg, bytes(oqs_public), message, bytes(oqs_signer.sign(message)))


def test_ml_dsa_contexts_interoperate_with_pyca_where_the_api_has_them(worker: Worker) -> None:
    alg, message, context = "ML-DSA-65", b"in a context", secrets.token_bytes(17)
    theirs = mldsa.MLDSA65PrivateKey.generate()
    their_public = theirs.public_key().public_bytes_raw()
    key, public = worker.key_pair(alg)
    if not CONTEXTS[worker.implementation]:
        reply = worker.request({"type": "sign", "alg": alg, "key": key,
                                "message": message.hex(), "context": context.hex()})
        assert problem(reply), reply
        return
    assert worker.verify(alg, their_public, message, theirs.sign(message, context),
                         context=context.hex())
    assert not worker.verify(alg, their_public, message, theirs.sign(message, context),
                             context=flip(context).hex())
    signature = worker.sign(alg, key, message, context=context.hex())
    mldsa.MLDSA65PublicKey.from_public_bytes(public).verify(signature, message, context)
    with pytest.raises(InvalidSignature):
        mldsa.MLDSA65PublicKey.from_public_bytes(public).verify(signature, message, b"")


def test_x25519_interoperates_with_pyca(worker: Worker) -> None:
    theirs = x25519.X25519PrivateKey.generate()
    key, public = worker.key_pair("X25519")
    ours = worker.derive("X25519", key, theirs.public_key().public_bytes_raw())
    assert ours == theirs.exchange(x25519.X25519PublicKey.from_public_bytes(public))


def test_ecdh_p256_interoperates_with_pyca(worker: Worker) -> None:
    for alg in offers(worker, "ECDH-P-256"):
        theirs = ec.generate_private_key(ec.SECP256R1())
        their_public = theirs.public_key().public_bytes(*POINT)
        key, public = worker.key_pair(alg)
        assert len(public) == 65 and public[0] == 4
        ours = worker.derive(alg, key, their_public)
        peer = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), public)
        assert ours == theirs.exchange(ec.ECDH(), peer)
        scalar = theirs.private_numbers().private_value.to_bytes(32, "big")
        imported, _ = worker.key_pair(alg, scalar)  # their key, loaded from its scalar
        assert worker.derive(alg, imported, public) == ours


def test_ed25519_interoperates_with_pyca(worker: Worker) -> None:
    message = secrets.token_bytes(40)
    theirs = ed25519.Ed25519PrivateKey.generate()
    their_public = theirs.public_key().public_bytes_raw()
    their_signature = theirs.sign(message)
    assert worker.verify("Ed25519", their_public, message, their_signature)
    assert not worker.verify("Ed25519", their_public, message, flip(their_signature, 40))
    assert not worker.verify("Ed25519", their_public, message, b"\x00" * 3)
    key, public = worker.key_pair("Ed25519")
    ed25519.Ed25519PublicKey.from_public_bytes(public).verify(
        worker.sign("Ed25519", key, message), message)


def test_ecdsa_p256_interoperates_with_pyca(worker: Worker) -> None:
    for alg in offers(worker, "ECDSA-P-256"):
        message = secrets.token_bytes(50)
        theirs = ec.generate_private_key(ec.SECP256R1())
        their_public = theirs.public_key().public_bytes(*POINT)
        assert worker.verify(alg, their_public, message,
                             theirs.sign(message, ec.ECDSA(hashes.SHA256())))
        assert not worker.verify(alg, their_public, flip(message),
                                 theirs.sign(message, ec.ECDSA(hashes.SHA256())))
        assert not worker.verify(alg, their_public, message, b"\x30\x00")
        key, public = worker.key_pair(alg)
        signature = worker.sign(alg, key, message)  # DER, SHA-256
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), public).verify(
            signature, message, ec.ECDSA(hashes.SHA256()))


# --- tampering and malformed input ----------------------------------------------------------

#: How an unknown name with an é and a line separator comes back in a problem's reason.
NON_ASCII = {**{impl: "ML-KEM-768\u00e9\u2028" for impl in ("go", "java", "bouncycastle")},
             **{impl: "ML-KEM-768\u00e9\\u{2028}" for impl in ("aws-lc-rs", "libcrux")}}
#: What a signature field that is not hex is: a signature that does not verify (Go, the
#: JVM), or a request field that cannot be read (the Rust workers).
NOT_HEX_SIGNATURE = {"go": {"type": "verified", "valid": False},
                     "java": {"type": "verified", "valid": False},
                     "bouncycastle": {"type": "verified", "valid": False},
                     "aws-lc-rs": "error", "libcrux": "error"}


@pytest.mark.parametrize("alg", [*ML_DSA, "Ed25519", "ECDSA-P-256"])
def test_a_wrong_or_malformed_signature_verifies_false(worker: Worker, alg: str) -> None:
    for _ in offers(worker, alg):
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
        expected = NOT_HEX_SIGNATURE[worker.implementation]
        assert reply == expected if isinstance(expected, dict) else reply["type"] == expected


#: Lines no worker can serve: each gets an error (its algorithm offered) and the worker
#: goes on. An algorithm a worker does not offer is a problem instead.
MALFORMED: list[bytes | dict[str, Any]] = [
    b"not json", b"[1, 2]", b"", b'{"type": 5}', b"{}", b'{"alg": "ML-KEM-768"}',
    b"\xff\xfe{", b'{"type": "keygen", "alg": "X25519"',
    {"type": "bogus"}, {"type": "keygen"},
    {"type": "keygen", "alg": "ML-KEM-768", "seed": "zz"},
    {"type": "keygen", "alg": "ML-KEM-768", "seed": "00"},
    {"type": "keygen", "alg": "ML-KEM-768", "seed": 7},
    {"type": "keygen", "alg": "ML-DSA-65", "seed": "zz"},
    {"type": "keygen", "alg": "ML-DSA-65", "seed": "00"},
    {"type": "keygen", "alg": "ML-DSA-65", "seed": 7},
    {"type": "keygen", "alg": "ML-DSA-65", "seed": "00" * 31},
    {"type": "encaps", "alg": "ML-KEM-768", "public": "00"},
    {"type": "encaps", "alg": "ML-KEM-768", "public": "00" * 10},
    {"type": "encaps", "alg": "ML-KEM-768"},
    {"type": "encaps", "alg": "ML-KEM-512", "public": "00"},
    {"type": "decaps", "alg": "ML-KEM-768", "key": "nope", "ciphertext": "00"},
    {"type": "decaps", "alg": "ML-KEM-768", "key": "k999", "ciphertext": "00" * 1088},
    {"type": "sign", "alg": "ML-DSA-65", "key": "nope", "message": ""},
    {"type": "verify", "alg": "ML-DSA-65", "public": "00", "message": "", "signature": ""},
    {"type": "verify", "alg": "ECDSA-P-256", "public": "0400", "message": "",
     "signature": ""},
    {"type": "verify", "alg": "Ed25519", "public": "00" * 31, "message": "",
     "signature": "00" * 64},
    {"type": "derive", "alg": "X25519", "key": "nope", "peer": "00"},
    {"type": "prepare", "alg": "ML-KEM-768", "operation": "fly", "row": "r"},
    {"type": "prepare", "alg": "ML-KEM-768", "operation": "encaps"},
    {"type": "run", "row": "never prepared", "seconds": 0.01},
]


@pytest.mark.parametrize("line", MALFORMED, ids=lambda line: str(line)[:40])
def test_a_malformed_request_gets_an_error_and_the_worker_goes_on(
        worker: Worker, line: bytes | dict[str, Any]) -> None:
    worker.send_raw(line + b"\n" if isinstance(line, bytes)
                    else json.dumps(line).encode() + b"\n")
    reply = worker.reply()
    alg = line.get("alg") if isinstance(line, dict) else None
    lacking = isinstance(alg, str) and (alg not in FEATURES[worker.implementation] or (
        "seed" in line and not has(worker, alg, "seeded_keygen")))
    if lacking:  # what it lacks may be a problem before the request is read further
        assert reply["type"] in ("problem", "error"), reply
    else:
        assert reply["type"] == "error" and isinstance(reply["message"], str), reply
        assert reply["message"]
    key, public = worker.key_pair("X25519")
    assert len(public) == 32 and key


#: How a worker refuses an operation of another kind (encaps of a signature) and a
#: classical secret key to import: the Go and JVM workers read the request first (an
#: error: its public key or secret is malformed), the Rust ones the operation (a problem:
#: not offered).
REFUSES_FIRST = {"go": "error", "java": "error", "bouncycastle": "error",
                 "aws-lc-rs": "problem", "libcrux": "problem"}


def test_a_request_its_api_cannot_take_is_refused_and_the_worker_goes_on(
        worker: Worker) -> None:
    for request in ({"type": "encaps", "alg": "Ed25519", "public": "00"},
                    {"type": "import", "alg": "X25519", "secret": "00"}):
        reply = worker.request(request)
        assert reply["type"] == REFUSES_FIRST[worker.implementation], (request, reply)
        assert reply.get("message") or reply.get("reason")
    if REFUSES_FIRST[worker.implementation] == "problem":  # whatever the key's length
        assert problem(worker.request({"type": "import", "alg": "X25519",
                                       "secret": "00" * 32}))
    assert worker.key_pair("X25519")[0]


def test_keys_of_another_algorithm_or_a_wrong_ciphertext_are_errors(worker: Worker) -> None:
    handle, _ = worker.key_pair("ML-KEM-768")
    for request in ({"type": "decaps", "alg": "ML-KEM-768", "key": handle, "ciphertext": "abc"},
                    {"type": "decaps", "alg": "ML-KEM-768", "key": handle,
                     "ciphertext": "zz" * 1088},
                    {"type": "decaps", "alg": "ML-KEM-768", "key": handle,
                     "ciphertext": "00" * 5},
                    {"type": "decaps", "alg": "ML-KEM-1024", "key": handle,
                     "ciphertext": "00" * 1568},
                    {"type": "sign", "alg": "Ed25519", "key": handle, "message": ""}):
        reply = worker.request(request)
        assert reply["type"] == "error" and reply["message"], (request, reply)
    assert worker.key_pair("ML-KEM-768")[1]


def test_an_encapsulation_key_out_of_range_is_an_error(worker: Worker) -> None:
    """FIPS 203 section 7.2 modulus check: coefficients encoded as 0xfff are >= q."""
    for alg, size in (("ML-KEM-512", 800), ("ML-KEM-768", 1184), ("ML-KEM-1024", 1568)):
        reply = worker.request({"type": "encaps", "alg": alg, "public": "ff" * size})
        assert reply["type"] == "error", reply


def test_what_a_library_lacks_is_a_problem_not_an_error(worker: Worker) -> None:
    key, _ = worker.key_pair("Ed25519")
    lacks: list[dict[str, Any]] = [
        {"type": "keygen", "alg": "SPHINCS+-SHA2-128f"},
        {"type": "keygen", "alg": "RSA-2048"},
        {"type": "keygen", "alg": "ml-kem-768"},  # canonical names only
        {"type": "prepare", "row": "r", "alg": "Ed25519", "operation": "encaps"},
        {"type": "prepare", "row": "r", "alg": "ML-KEM-768", "operation": "sign"},
        {"type": "prepare", "row": "r", "alg": "X25519", "operation": "encaps"},
        {"type": "sign", "alg": "Ed25519", "key": key, "message": "", "context": "00"},
    ]
    for feature, request in (
            ("seeded_keygen", {"type": "keygen", "alg": "ML-KEM-768", "seed": "00" * 64}),
            ("derandomized_encaps", {"type": "encaps", "alg": "ML-KEM-768",
                                     "public": worker.key_pair("ML-KEM-768")[1].hex(),
                                     "random": "00" * 32})):
        if not has(worker, "ML-KEM-768", feature):
            lacks.append(request)
    if not has(worker, "ML-DSA-65", "deterministic_sign"):
        handle, _ = worker.key_pair("ML-DSA-65")
        lacks.append({"type": "sign", "alg": "ML-DSA-65", "key": handle, "message": "",
                      "deterministic": True})
    if "ECDSA-P-256" not in FEATURES[worker.implementation]:
        lacks.append({"type": "keygen", "alg": "ECDSA-P-256"})
    for request in lacks:
        assert problem(worker.request(request)), request
    # Unknown fields are ignored.
    reply = worker.request({"type": "keygen", "alg": "X25519", "seed": "00" * 32,
                            "unknown field": 1})
    assert reply["type"] == "key"


#: How a worker refuses an invalid peer point: an error (Go, the JVM); the Rust workers'
#: libraries may call it not offered.
INVALID_PEER = {"go": ("error",), "java": ("error",), "bouncycastle": ("error",),
                "aws-lc-rs": ("error", "problem"), "libcrux": ("error", "problem")}


def test_an_invalid_peer_point_is_refused_and_the_worker_goes_on(worker: Worker) -> None:
    refused = INVALID_PEER[worker.implementation]
    key, _ = worker.key_pair("X25519")
    low_order = bytes(32)  # the identity: X25519 would output all zeros (RFC 7748 6.1)
    reply = worker.request({"type": "derive", "alg": "X25519", "key": key,
                            "peer": low_order.hex()})
    assert reply["type"] in refused, reply
    for alg in offers(worker, "ECDH-P-256"):
        key, public = worker.key_pair(alg)
        off_curve = public[:-1] + bytes([public[-1] ^ 1])
        reply = worker.request({"type": "derive", "alg": alg, "key": key,
                                "peer": off_curve.hex()})
        assert reply["type"] in refused, reply
        assert worker.derive(alg, key, public)  # still answering
    assert worker.key_pair("X25519")[0]


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
    worker.send_raw(b'{"type": "keygen", "alg": "' + b"x" * (1 << 20) + b'"}\n')
    assert worker.reply()["type"] == "error"
    assert worker.key_pair("X25519")[0]
    assert "panicked" not in worker.stderr()


def test_non_ascii_text_comes_back_in_its_problem(worker: Worker) -> None:
    """An unknown name with non-ASCII characters is a problem that quotes it: as sent (Go,
    the JVM) or with the line separator escaped as Rust's debug form writes it."""
    worker.send_raw('{"type": "keygen", "alg": "ML-KEM-768\u00e9\u2028"}\n'.encode())
    reply = worker.reply()
    assert problem(reply), reply
    assert NON_ASCII[worker.implementation] in reply["reason"]


def test_secrets_are_handles_and_never_in_a_reply(worker: Worker) -> None:
    seeded = [("X25519", bytes(range(32)))]
    if has(worker, "ML-KEM-768", "seeded_keygen"):
        seeded.append(("ML-KEM-768", bytes(range(64))))
    for alg, seed in seeded:
        reply = worker.expect({"type": "keygen", "alg": alg, "seed": seed.hex()}, "key")
        assert re.fullmatch(r"k\d+", reply["key"]), reply["key"]
        assert seed.hex() not in json.dumps(reply)
    prepared = worker.expect({"type": "prepare", "row": "s", "alg": "ML-KEM-768",
                              "operation": "decaps"}, "prepared")
    assert set(prepared) == {"type", "row", "sizes", "attributes"}


# --- ending -------------------------------------------------------------------------------

def test_end_of_input_exits_zero(fresh: Worker) -> None:
    assert fresh.close_stdin() == 0


def test_quit_exits_zero_without_a_reply(fresh: Worker) -> None:
    fresh.send({"type": "quit"})
    assert fresh.line() is None  # no reply, stdout closed
    assert fresh.process.wait(timeout=REPLY_DEADLINE) == 0


# --- timing -------------------------------------------------------------------------------

def test_every_offered_row_prepares_and_times_interleaved_rounds(worker: Worker) -> None:
    """Each row's sizes are the standard's, its attributes say how it signs and holds its
    keys (as docs/stacks.md says of each library), and every row times rounds with the
    protocol's clocks, twice, interleaved with the others."""
    implementation = worker.implementation
    prepared = {}
    for alg, operations in worker.hello["offers"].items():
        for op in operations:
            row = f"{alg} {op}"
            reply = worker.expect({"type": "prepare", "row": row, "alg": alg,
                                   "operation": op}, "prepared")
            assert reply["row"] == row
            sizes, attributes = reply["sizes"], reply["attributes"]
            assert all(isinstance(n, int) and n > 0 for n in sizes.values())
            standard = dict(by_name(alg).standard_sizes)
            if alg in SEED_SIZED.get(implementation, {}):
                standard["secret_key"] = SEED_SIZED[implementation][alg]
            assert {k: sizes[k] for k in standard if k in sizes} == \
                {k: v for k, v in standard.items() if k in sizes}
            if op in ("sign", "verify"):
                assert sizes["message"] == 32 and attributes["messages"] == 64
                assert attributes["signing"] == SIGNING[implementation].get(alg, "hedged")
            else:
                assert "signing" not in attributes
            if op in ("keygen", "decaps", "sign", "derive"):
                assert attributes["key_form"] == KEY_FORM[implementation](alg), row
            if op in ("encaps", "verify", "derive"):
                assert attributes["public_key_form"] == PUBLIC_KEY_FORM[implementation], row
            prepared[row] = reply
    rows = list(prepared)
    for row in [*rows, *reversed(rows)]:
        seconds = 0.002
        reply = worker.expect({"type": "run", "row": row, "seconds": seconds}, "round")
        assert set(reply) == {"type", "row", "ops", "wall_ns", "thread_cpu_ns",
                              "process_cpu_ns"}
        assert reply["row"] == row
        assert isinstance(reply["ops"], int) and reply["ops"] >= 1
        assert reply["wall_ns"] >= seconds * 1e9
        assert 0 < reply["thread_cpu_ns"] <= reply["process_cpu_ns"]


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
