"""The Rust stack workers (aws-lc-rs, libcrux), built by pqbench's builder and driven over
real pipes: hello, the known answers their APIs can take, interoperability
both ways with liboqs-python and pyca/cryptography, tampering, malformed requests, the end
of input, and timed rounds. Expected values come from the NIST and RFC vectors, the
crates' Cargo.lock files, the CPU's flags, liboqs and pyca, never from the workers."""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, mldsa, mlkem, x25519
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from pqbench.catalog.algorithms import by_name
from pqbench.catalog.vectors import load_vectors, parse_pqbench_json
from pqbench.libraries.liboqs import import_oqs
from pqbench.libraries.stacks import compiling, pins, registry
from tests.helpers import CPU_FLAGS
from tests.helpers.stack_workers import REPLY_DEADLINE, STACKS, Worker, built_worker

RUST = STACKS / "rust"
IMPLEMENTATIONS = ("aws-lc-rs", "libcrux")
MLKEM = ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024")
MLDSA = ("ML-DSA-44", "ML-DSA-65", "ML-DSA-87")

#: What each crate's API accepts (see pqbench/libraries/stacks/rust/README.md): the features each
#: worker must advertise, no more and no less.
FEATURES: dict[str, dict[str, list[str]]] = {
    "aws-lc-rs": {
        **{alg: ["import_expanded"] for alg in MLKEM},
        **{alg: ["seeded_keygen", "import_expanded"] for alg in MLDSA},
        **{alg: ["seeded_keygen"] for alg in ("X25519", "ECDH-P-256", "Ed25519", "ECDSA-P-256")},
    },
    "libcrux": {
        **{alg: ["seeded_keygen", "derandomized_encaps", "import_expanded"] for alg in MLKEM},
        **{alg: ["seeded_keygen", "deterministic_sign", "import_expanded"] for alg in MLDSA},
        "X25519": ["seeded_keygen"],
        "Ed25519": ["seeded_keygen"],
    },
}
OPERATIONS = {"kem": ["keygen", "encaps", "decaps"], "signature": ["keygen", "sign", "verify"],
              "key agreement": ["keygen", "derive"]}
#: The crates each worker reports, besides AWS-LC's own version.
CRATES = {
    "aws-lc-rs": ["aws-lc-rs", "aws-lc-sys"],
    "libcrux": ["libcrux-ml-kem", "libcrux-ml-dsa", "libcrux-curve25519", "libcrux-ed25519",
                "libcrux-sha3", "libcrux-sha2", "libcrux-hacl-rs", "libcrux-intrinsics",
                "libcrux-platform"],
}


def kind_of(alg: str) -> str:
    if alg.startswith("ML-KEM"):
        return "kem"
    if alg in ("X25519", "ECDH-P-256"):
        return "key agreement"
    return "signature"


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


def key(worker: Worker, alg: str, seed: bytes | None = None) -> tuple[str, bytes]:
    """A key made by the worker: its handle and its public key."""
    request: dict[str, Any] = {"type": "keygen", "alg": alg}
    if seed is not None:
        request["seed"] = seed.hex()
    reply = worker.expect(request, "key")
    return reply["key"], bytes.fromhex(reply["public"])


def signed(worker: Worker, alg: str, handle: str, message: bytes, **extra: Any) -> bytes:
    reply = worker.expect({"type": "sign", "alg": alg, "key": handle, "message": message.hex(),
                           **extra}, "signed")
    return bytes.fromhex(reply["signature"])


def verified(worker: Worker, alg: str, public: bytes, message: bytes, signature: bytes,
             **extra: Any) -> bool:
    reply = worker.expect({"type": "verify", "alg": alg, "public": public.hex(),
                           "message": message.hex(), "signature": signature.hex(), **extra},
                          "verified")
    assert isinstance(reply["valid"], bool)
    return reply["valid"]


def offers(worker: Worker, alg: str) -> bool:
    return alg in worker.hello["offers"]


def vectors(alg: str) -> list[dict[str, str]]:
    return load_vectors(f"{alg.lower()}.json", parse_pqbench_json)


def flip(data: bytes, at: int = 0) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


# --- hello ------------------------------------------------------------------------------


@pytest.mark.process
def test_hello_reports_the_locked_versions_and_exactly_what_the_api_allows(
        worker: Worker, implementation: str) -> None:
    hello = worker.hello
    assert hello["type"] == "hello"
    assert hello["protocol"] == 1
    assert hello["implementation"] == implementation
    assert hello["pid"] == worker.process.pid
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True, check=True)
    assert hello["runtime"].startswith(rustc.stdout.strip())

    lock = tomllib.loads((RUST / implementation / "Cargo.lock").read_text())
    locked = {p["name"]: p["version"] for p in lock["package"]}
    expected = {name: locked[name] for name in CRATES[implementation]}
    libraries = dict(hello["libraries"])
    if implementation == "aws-lc-rs":
        assert re.fullmatch(r"\d+\.\d+\.\d+", libraries.pop("AWS-LC"))
    assert libraries == expected

    assert hello["features"] == FEATURES[implementation]
    assert hello["offers"] == {alg: OPERATIONS[kind_of(alg)] for alg in FEATURES[implementation]}
    assert set(hello["library_of"]) == set(FEATURES[implementation])
    assert set(hello["library_of"].values()) <= set(hello["libraries"])
    assert set(hello["code_paths"]) == set(FEATURES[implementation])


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
        check_mlkem_vectors(masked, "ML-KEM-768")
        check_mldsa_vectors(masked, "ML-DSA-65")
        check_x25519_vectors(masked)
    finally:
        masked.stop()


# --- known answers ----------------------------------------------------------------------


def check_mlkem_vectors(worker: Worker, alg: str) -> None:
    features = worker.hello["features"][alg]
    for v in vectors(alg):
        pk, sk = bytes.fromhex(v["pk"]), bytes.fromhex(v["sk"])
        imported = worker.expect({"type": "import", "alg": alg, "secret": sk.hex()}, "key")
        assert bytes.fromhex(imported["public"]) == pk
        handles = [imported["key"]]
        if "seeded_keygen" in features:
            handle, public = key(worker, alg, bytes.fromhex(v["d"] + v["z"]))
            assert public == pk
            handles.append(handle)
        if "derandomized_encaps" in features:
            reply = worker.expect({"type": "encaps", "alg": alg, "public": pk.hex(),
                                   "random": v["msg"]}, "encapsulated")
            assert (reply["ciphertext"], reply["shared_secret"]) == (v["ct"], v["ss"])
        for handle in handles:
            for ct, ss in ((v["ct"], v["ss"]), (v["ct_n"], v["ss_n"])):  # ct_n: rejection
                reply = worker.expect({"type": "decaps", "alg": alg, "key": handle,
                                       "ciphertext": ct}, "decapsulated")
                assert reply["shared_secret"] == ss


def check_mldsa_vectors(worker: Worker, alg: str) -> None:
    features = worker.hello["features"][alg]
    for v in vectors(alg):
        pk, msg, ctx, sig = (bytes.fromhex(v[k]) for k in ("pk", "msg", "ctx", "sig"))
        handle, public = key(worker, alg, bytes.fromhex(v["xi"]))
        assert public == pk
        imported = worker.expect({"type": "import", "alg": alg, "secret": v["sk"]}, "key")
        assert imported["public"] in (None, pk.hex())
        if "deterministic_sign" in features:
            for h in (handle, imported["key"]):
                assert signed(worker, alg, h, msg, context=ctx.hex(), deterministic=True) == sig
            assert verified(worker, alg, pk, msg, sig, context=ctx.hex())
            assert not verified(worker, alg, pk, msg, flip(sig, 100), context=ctx.hex())
        else:
            # The vectors sign under a context: an API without contexts says not offered.
            reply = worker.request({"type": "verify", "alg": alg, "public": pk.hex(),
                                    "message": msg.hex(), "context": ctx.hex(),
                                    "signature": sig.hex()})
            assert (reply["type"], reply["kind"]) == ("problem", "not_offered")
            # The imported expanded key signs what the seeded key's public key verifies.
            signature = signed(worker, alg, imported["key"], msg)
            assert verified(worker, alg, pk, msg, signature)


def check_x25519_vectors(worker: Worker) -> None:
    for v in vectors("X25519"):
        handle, public = key(worker, "X25519", bytes.fromhex(v["INPUT_SCALAR"]))
        reply = worker.expect({"type": "derive", "alg": "X25519", "key": handle,
                               "peer": v["INPUT_U"]}, "derived")
        assert reply["shared_secret"] == v["OUTPUT_U"]
        if v["INPUT_U"] == "09" + "00" * 31:  # u = 9 is the base point: the public key
            assert public.hex() == v["OUTPUT_U"]


@pytest.mark.process
@pytest.mark.parametrize("alg", MLKEM)
def test_mlkem_known_answers(worker: Worker, alg: str) -> None:
    check_mlkem_vectors(worker, alg)


@pytest.mark.process
@pytest.mark.parametrize("alg", MLDSA)
def test_mldsa_known_answers(worker: Worker, alg: str) -> None:
    check_mldsa_vectors(worker, alg)


@pytest.mark.process
def test_x25519_known_answers(worker: Worker) -> None:
    check_x25519_vectors(worker)


@pytest.mark.process
def test_ed25519_known_answers(worker: Worker) -> None:
    for v in vectors("Ed25519"):
        message, signature = bytes.fromhex(v["MESSAGE"]), bytes.fromhex(v["SIGNATURE"])
        handle, public = key(worker, "Ed25519", bytes.fromhex(v["SECRET"]))
        assert public.hex() == v["PUBLIC"]
        assert signed(worker, "Ed25519", handle, message) == signature
        # RFC 8032 signing is deterministic by construction: asking for it changes nothing.
        assert signed(worker, "Ed25519", handle, message, deterministic=True) == signature
        assert verified(worker, "Ed25519", public, message, signature)
        assert not verified(worker, "Ed25519", public, message + b"x", signature)


@pytest.mark.process
def test_ecdh_p256_known_answers(rust_builds: dict[str, Path]) -> None:
    """NIST KAS ECC validity vectors (SP 800-56A): the IUT's key from its scalar, then Z
    with the CAVS's key. A P record must give its public key and Z; an F record (an
    off-curve point, a changed key or a changed Z) must not: the worker refuses the point
    or computes something else."""
    worker = start(rust_builds, "aws-lc-rs")
    try:
        for v in vectors("ECDH-P-256"):
            handle, public = key(worker, "ECDH-P-256", bytes.fromhex(v["dsIUT"]))
            reply = worker.request({"type": "derive", "alg": "ECDH-P-256", "key": handle,
                                    "peer": "04" + v["QsCAVSx"] + v["QsCAVSy"]})
            assert reply["type"] in ("derived", "error"), reply
            matches = (public.hex() == "04" + v["QsIUTx"] + v["QsIUTy"]
                       and reply.get("shared_secret") == v["Z"])
            assert matches == v["Result"].startswith("P"), v["Result"]
    finally:
        worker.stop()


@pytest.mark.process
def test_ecdsa_p256_known_answers(rust_builds: dict[str, Path]) -> None:
    """NIST SigVer vectors, the signature DER-encoded as the protocol carries it; a public
    point pyca refuses is an error, any other failure a plain `false`."""
    worker = start(rust_builds, "aws-lc-rs")
    try:
        for v in vectors("ECDSA-P-256"):
            point = bytes.fromhex("04" + v["Qx"] + v["Qy"])
            der = encode_dss_signature(int(v["R"], 16), int(v["S"], 16))
            reply = worker.request({"type": "verify", "alg": "ECDSA-P-256",
                                    "public": point.hex(), "message": v["Msg"],
                                    "signature": der.hex()})
            try:
                ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
            except ValueError:
                assert reply["type"] == "error", v["Result"]
                continue
            assert reply == {"type": "verified", "valid": v["Result"].startswith("P")}
    finally:
        worker.stop()


@pytest.mark.process
def test_seeded_keys_match_pyca_for_random_seeds(worker: Worker) -> None:
    """Seeded key generation against pyca/cryptography's, on fresh random seeds."""
    features = worker.hello["features"]
    for _ in range(3):
        if "seeded_keygen" in features.get("ML-KEM-768", []):
            seed = secrets.token_bytes(64)
            theirs = mlkem.MLKEM768PrivateKey.from_seed_bytes(seed).public_key()
            assert key(worker, "ML-KEM-768", seed)[1] == theirs.public_bytes_raw()
        seed = secrets.token_bytes(32)
        dsa = mldsa.MLDSA65PrivateKey.from_seed_bytes(seed).public_key()
        assert key(worker, "ML-DSA-65", seed)[1] == dsa.public_bytes_raw()
        seed = secrets.token_bytes(32)
        ed = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key()
        assert key(worker, "Ed25519", seed)[1] == ed.public_bytes_raw()
        seed = secrets.token_bytes(32)
        xk = x25519.X25519PrivateKey.from_private_bytes(seed).public_key()
        assert key(worker, "X25519", seed)[1] == xk.public_bytes_raw()
        if offers(worker, "ECDSA-P-256"):
            scalar = secrets.randbelow(2**255) + 1
            point = ec.derive_private_key(scalar, ec.SECP256R1()).public_key().public_bytes(
                serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
            for alg in ("ECDSA-P-256", "ECDH-P-256"):
                assert key(worker, alg, scalar.to_bytes(32, "big"))[1] == point


# --- interoperability -------------------------------------------------------------------


@pytest.mark.process
@pytest.mark.parametrize("alg", MLKEM)
def test_mlkem_interoperates_with_liboqs_both_ways(worker: Worker, alg: str) -> None:
    oqs = import_oqs()
    handle, public = key(worker, alg)
    with oqs.KeyEncapsulation(alg) as theirs:
        ciphertext, shared = theirs.encap_secret(public)
        reply = worker.expect({"type": "decaps", "alg": alg, "key": handle,
                               "ciphertext": ciphertext.hex()}, "decapsulated")
        assert bytes.fromhex(reply["shared_secret"]) == shared
        # A tampered ciphertext gives the implicit-rejection secret, not the shared one.
        reply = worker.expect({"type": "decaps", "alg": alg, "key": handle,
                               "ciphertext": flip(ciphertext).hex()}, "decapsulated")
        assert bytes.fromhex(reply["shared_secret"]) != shared

        their_public = theirs.generate_keypair()
        reply = worker.expect({"type": "encaps", "alg": alg, "public": their_public.hex()},
                              "encapsulated")
        assert theirs.decap_secret(bytes.fromhex(reply["ciphertext"])) == \
            bytes.fromhex(reply["shared_secret"])


@pytest.mark.process
@pytest.mark.parametrize("alg", MLDSA)
def test_mldsa_interoperates_with_liboqs_both_ways(worker: Worker, alg: str) -> None:
    oqs = import_oqs()
    message = secrets.token_bytes(33)
    handle, public = key(worker, alg)
    signature = signed(worker, alg, handle, message)
    with oqs.Signature(alg) as theirs:
        assert theirs.verify(message, signature, public)
        assert not theirs.verify(message, flip(signature, 7), public)
        their_public = theirs.generate_keypair()
        their_signature = theirs.sign(message)
    assert verified(worker, alg, their_public, message, their_signature)
    assert not verified(worker, alg, their_public, message, flip(their_signature, 7))
    assert not verified(worker, alg, their_public, flip(message), their_signature)
    assert not verified(worker, alg, their_public, message, their_signature[:-1])


@pytest.mark.process
def test_mldsa_contexts_interoperate_with_pyca_where_the_api_has_them(worker: Worker) -> None:
    alg, message, context = "ML-DSA-65", b"in a context", secrets.token_bytes(17)
    theirs = mldsa.MLDSA65PrivateKey.generate()
    their_public = theirs.public_key().public_bytes_raw()
    their_signature = theirs.sign(message, context)
    handle, public = key(worker, alg)
    if "deterministic_sign" not in worker.hello["features"][alg]:  # aws-lc-rs: no contexts
        reply = worker.request({"type": "sign", "alg": alg, "key": handle,
                                "message": message.hex(), "context": context.hex()})
        assert (reply["type"], reply["kind"]) == ("problem", "not_offered")
        return
    assert verified(worker, alg, their_public, message, their_signature, context=context.hex())
    assert not verified(worker, alg, their_public, message, their_signature,
                        context=flip(context).hex())
    signature = signed(worker, alg, handle, message, context=context.hex())
    mldsa.MLDSA65PublicKey.from_public_bytes(public).verify(signature, message, context)
    with pytest.raises(InvalidSignature):
        mldsa.MLDSA65PublicKey.from_public_bytes(public).verify(signature, message, b"")


@pytest.mark.process
def test_mlkem_768_interoperates_with_pyca_both_ways(worker: Worker) -> None:
    handle, public = key(worker, "ML-KEM-768")
    shared, ciphertext = mlkem.MLKEM768PublicKey.from_public_bytes(public).encapsulate()
    reply = worker.expect({"type": "decaps", "alg": "ML-KEM-768", "key": handle,
                           "ciphertext": ciphertext.hex()}, "decapsulated")
    assert bytes.fromhex(reply["shared_secret"]) == shared
    theirs = mlkem.MLKEM768PrivateKey.generate()
    reply = worker.expect({"type": "encaps", "alg": "ML-KEM-768",
                           "public": theirs.public_key().public_bytes_raw().hex()},
                          "encapsulated")
    assert theirs.decapsulate(bytes.fromhex(reply["ciphertext"])) == \
        bytes.fromhex(reply["shared_secret"])


@pytest.mark.process
def test_x25519_interoperates_with_pyca_both_ways(worker: Worker) -> None:
    handle, public = key(worker, "X25519")
    theirs = x25519.X25519PrivateKey.generate()
    their_public = theirs.public_key().public_bytes_raw()
    reply = worker.expect({"type": "derive", "alg": "X25519", "key": handle,
                           "peer": their_public.hex()}, "derived")
    assert bytes.fromhex(reply["shared_secret"]) == \
        theirs.exchange(x25519.X25519PublicKey.from_public_bytes(public))
    # A small-order point gives the all-zero secret, which RFC 7748 section 6.1 says to
    # refuse: an answer, never a crash; the worker lives on.
    reply = worker.request({"type": "derive", "alg": "X25519", "key": handle,
                            "peer": "00" * 32})
    assert reply["type"] in ("error", "problem")
    assert key(worker, "X25519")[0]


@pytest.mark.process
def test_ed25519_interoperates_with_pyca_both_ways(worker: Worker) -> None:
    message = secrets.token_bytes(40)
    handle, public = key(worker, "Ed25519")
    signature = signed(worker, "Ed25519", handle, message)
    ed25519.Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
    theirs = ed25519.Ed25519PrivateKey.generate()
    their_public = theirs.public_key().public_bytes_raw()
    their_signature = theirs.sign(message)
    assert verified(worker, "Ed25519", their_public, message, their_signature)
    assert not verified(worker, "Ed25519", their_public, message, flip(their_signature, 40))
    assert not verified(worker, "Ed25519", their_public, message, b"\x00" * 3)


@pytest.mark.process
def test_p256_interoperates_with_pyca_both_ways(rust_builds: dict[str, Path]) -> None:
    worker = start(rust_builds, "aws-lc-rs")
    point = (serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    try:
        message = secrets.token_bytes(50)
        handle, public = key(worker, "ECDSA-P-256")
        signature = signed(worker, "ECDSA-P-256", handle, message)
        ours = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), public)
        ours.verify(signature, message, ec.ECDSA(hashes.SHA256()))  # DER, SHA-256
        theirs = ec.generate_private_key(ec.SECP256R1())
        their_signature = theirs.sign(message, ec.ECDSA(hashes.SHA256()))
        their_public = theirs.public_key().public_bytes(*point)
        assert verified(worker, "ECDSA-P-256", their_public, message, their_signature)
        assert not verified(worker, "ECDSA-P-256", their_public, flip(message), their_signature)
        assert not verified(worker, "ECDSA-P-256", their_public, message, b"\x30\x00")

        handle, public = key(worker, "ECDH-P-256")
        reply = worker.expect({"type": "derive", "alg": "ECDH-P-256", "key": handle,
                               "peer": their_public.hex()}, "derived")
        peer = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), public)
        assert bytes.fromhex(reply["shared_secret"]) == theirs.exchange(ec.ECDH(), peer)
        # A point off the curve is refused with an answer.
        off_curve = their_public[:-1] + bytes([their_public[-1] ^ 1])
        reply = worker.request({"type": "derive", "alg": "ECDH-P-256", "key": handle,
                                "peer": off_curve.hex()})
        assert reply["type"] in ("error", "problem")
    finally:
        worker.stop()


# --- requests that are wrong ------------------------------------------------------------


@pytest.mark.process
def test_malformed_requests_get_an_error_and_the_worker_lives_on(worker: Worker) -> None:
    handle, _ = key(worker, "ML-KEM-768")
    wrong: list[bytes | dict[str, Any]] = [
        b"not json", b"[1, 2]", b"\xff\xfe{}", b'{"type": 7}', b"{}",
        {"type": "dance"},
        {"type": "keygen"},
        {"type": "decaps", "alg": "ML-KEM-768", "key": handle, "ciphertext": "abc"},
        {"type": "decaps", "alg": "ML-KEM-768", "key": handle, "ciphertext": "zz" * 1088},
        {"type": "decaps", "alg": "ML-KEM-768", "key": handle, "ciphertext": "00" * 5},
        {"type": "decaps", "alg": "ML-KEM-768", "key": "k999", "ciphertext": "00" * 1088},
        {"type": "decaps", "alg": "ML-KEM-1024", "key": handle, "ciphertext": "00" * 1568},
        {"type": "encaps", "alg": "ML-KEM-768", "public": "00" * 10},
        {"type": "encaps", "alg": "ML-KEM-768", "public": "ff" * 1184},  # fails its check
        {"type": "keygen", "alg": "ML-DSA-65", "seed": "00" * 31},
        {"type": "verify", "alg": "Ed25519", "public": "00" * 31, "message": "",
         "signature": "00" * 64},
        {"type": "sign", "alg": "Ed25519", "key": handle, "message": ""},
        {"type": "run", "row": "never prepared", "seconds": 0.01},
        {"type": "prepare", "row": "r", "alg": "ML-KEM-768", "operation": "juggle"},
        {"type": "prepare", "row": 5, "alg": "ML-KEM-768", "operation": "encaps"},
    ]
    for request in wrong:
        worker.send_raw(request + b"\n" if isinstance(request, bytes)
                        else json.dumps(request).encode() + b"\n")
        reply = worker.reply()
        assert reply["type"] == "error", (request, reply)
        assert isinstance(reply["message"], str) and reply["message"]
    worker.expect({"type": "prepare", "row": "r", "alg": "ML-KEM-768",
                   "operation": "encaps"}, "prepared")
    for seconds in (0, -1, 601, "1", None):
        reply = worker.request({"type": "run", "row": "r", "seconds": seconds})
        assert reply["type"] == "error", (seconds, reply)
    # A line over the protocol's 1 MiB is refused whole; the next line is read as usual.
    worker.send_raw(b'{"type": "keygen", "alg": "' + b"x" * (1 << 20) + b'"}\n')
    assert worker.reply()["type"] == "error"
    assert key(worker, "ML-KEM-768")[1]
    assert "panicked" not in worker.stderr()


@pytest.mark.process
def test_what_the_library_lacks_is_a_problem(worker: Worker, implementation: str) -> None:
    asks: list[dict[str, Any]] = [
        {"type": "keygen", "alg": "RSA-2048"},
        {"type": "keygen", "alg": "ml-kem-768"},  # canonical names only
        {"type": "prepare", "row": "r", "alg": "ML-KEM-768", "operation": "sign"},
        {"type": "prepare", "row": "r", "alg": "X25519", "operation": "encaps"},
        {"type": "import", "alg": "X25519", "secret": "00" * 32},
    ]
    if implementation == "aws-lc-rs":
        asks += [{"type": "keygen", "alg": "ML-KEM-768", "seed": "00" * 64},
                 {"type": "encaps", "alg": "ML-KEM-768", "public": "00" * 1184,
                  "random": "00" * 32}]
        handle, _ = key(worker, "ML-DSA-65")
        asks.append({"type": "sign", "alg": "ML-DSA-65", "key": handle, "message": "",
                     "deterministic": True})
    else:
        asks.append({"type": "keygen", "alg": "ECDSA-P-256"})
    for ask in asks:
        reply = worker.request(ask)
        assert reply["type"] == "problem", (ask, reply)
        assert reply["kind"] == "not_offered" and reply["reason"]


@pytest.mark.process
def test_end_of_input_and_quit_end_the_worker_with_status_zero(
        rust_builds: dict[str, Path], implementation: str) -> None:
    closed = start(rust_builds, implementation)
    assert closed.close_stdin() == 0
    closed.stop()

    quitting = start(rust_builds, implementation)
    quitting.send({"type": "quit"})
    assert quitting.line() is None  # no reply, stdout closed
    assert quitting.process.wait(timeout=REPLY_DEADLINE) == 0
    quitting.stop()


# --- timing -----------------------------------------------------------------------------


@pytest.mark.process
def test_every_offered_row_prepares_and_times_interleaved_rounds(worker: Worker) -> None:
    prepared = {}
    for alg, operations in worker.hello["offers"].items():
        for op in operations:
            row = f"{alg} {op}"
            reply = worker.expect({"type": "prepare", "row": row, "alg": alg,
                                   "operation": op}, "prepared")
            assert reply["row"] == row
            standard = dict(by_name(alg).standard_sizes)
            sizes = reply["sizes"]
            assert {k: sizes[k] for k in standard if k in sizes} == \
                {k: v for k, v in standard.items() if k in sizes}
            attributes = reply["attributes"]
            if op in ("sign", "verify"):
                assert sizes["message"] == 32 and attributes["messages"] == 64
                assert attributes["signing"] == ("deterministic" if alg == "Ed25519"
                                                 else "hedged")
            else:
                assert "signing" not in attributes
            if op not in ("encaps", "verify"):
                assert attributes["key_form"] in ("seed", "expanded", "object")
            if op in ("encaps", "verify", "derive"):
                assert attributes["public_key_form"] in ("encoded", "object")
            prepared[row] = reply
    rows = list(prepared)
    for row in [*rows, *reversed(rows)]:  # every row twice, interleaved with the others
        seconds = 0.01
        reply = worker.expect({"type": "run", "row": row, "seconds": seconds}, "round")
        assert reply["row"] == row
        assert isinstance(reply["ops"], int) and reply["ops"] >= 1
        assert reply["wall_ns"] >= seconds * 1e9
        assert 0 < reply["thread_cpu_ns"] <= reply["process_cpu_ns"]


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
        assert set(hello["offers"]) == set(FEATURES["aws-lc-rs"]) - set(MLDSA)
        assert hello["features"]["ML-KEM-768"] == ["import_expanded"]
        assert hello["code_paths"]["ML-KEM-768"] == ("avx2" if "avx2" in CPU_FLAGS
                                                    else "portable")
        reply = worker.request({"type": "keygen", "alg": "ML-DSA-65"})
        assert (reply["type"], reply["kind"]) == ("problem", "not_offered")
        check_mlkem_vectors(worker, "ML-KEM-768")
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
