"""Each implementation against the real libraries: checks, preparation, sizes, refusals."""

from __future__ import annotations

from typing import Any

import pytest

from pqbench.catalog import algorithms
from pqbench.catalog.algorithms.base import Algorithm
from pqbench.libraries.implementations import schemes
from pqbench.libraries.implementations.liboqs_python import LiboqsPythonImplementation
from pqbench.libraries.implementations.pyca import PycaImplementation
from pqbench.platform.errors import NotOfferedError, VerificationError

PYCA = PycaImplementation()
OQS = LiboqsPythonImplementation()
PUBLIC_KEY = [a for a in algorithms.all_algorithms()
              if a.kind in ("kem", "signature", "key-agreement", "rsa")]


def _pairs() -> list[Any]:
    return [pytest.param(alg, impl, id=f"{alg.name}-{impl.name}")
            for alg in PUBLIC_KEY for impl in (OQS, PYCA)
            if impl.offers(alg, alg.all_operations[0]) is None]


@pytest.mark.slow
@pytest.mark.parametrize(("alg", "impl"), _pairs())
def test_offered_pairs_pass_their_checks(alg: Algorithm, impl: Any) -> None:
    checks = impl.self_check(alg)
    assert checks and all(c.name for c in checks)


def test_both_implementations_offer_the_headline_post_quantum_sets() -> None:
    for name in ("ML-KEM-768", "ML-KEM-1024", "ML-DSA-44", "ML-DSA-65", "ML-DSA-87"):
        alg = algorithms.by_name(name)
        assert OQS.offers(alg, alg.operations[0]) is None
        assert PYCA.offers(alg, alg.operations[0]) is None


@pytest.mark.parametrize(("name", "operation", "expected"), [
    pytest.param("ML-KEM-768", "encaps",
                 {"public_key": 1184, "ciphertext": 1088, "shared_secret": 32}, id="ML-KEM-768"),
    pytest.param("ML-KEM-1024", "decaps",
                 {"public_key": 1568, "ciphertext": 1568, "shared_secret": 32}, id="ML-KEM-1024"),
    pytest.param("ML-DSA-65", "sign", {"public_key": 1952, "signature": 3309}, id="ML-DSA-65"),
    pytest.param("ML-DSA-44", "verify", {"public_key": 1312, "signature": 2420}, id="ML-DSA-44"),
])
def test_post_quantum_sizes_match_fips_203_and_204(name: str, operation: str,
                                                   expected: dict[str, int]) -> None:
    alg = algorithms.by_name(name)
    for impl in (OQS, PYCA):
        op = impl.prepare(alg, operation)
        assert {k: op.sizes[k] for k in expected} == expected, impl.name
        assert op.run(0.01).ops > 0


def test_liboqs_keeps_the_expanded_secret_key_and_cryptography_the_seed() -> None:
    alg = algorithms.by_name("ML-KEM-768")
    assert OQS.prepare(alg, "keygen").sizes["secret_key"] == 2400  # FIPS 203 Table 3
    assert PYCA.prepare(alg, "keygen").sizes["secret_key"] == 64  # d || z seed


@pytest.mark.parametrize(("name", "operation", "expected"), [
    pytest.param("X25519", "derive", {"public_key": 32, "shared_secret": 32}, id="X25519"),
    pytest.param("ECDH-P-256", "derive", {"public_key": 65, "shared_secret": 32}, id="P-256"),
    pytest.param("Ed25519", "sign", {"public_key": 32, "signature": 64}, id="Ed25519"),
    pytest.param("RSA-2048", "sign", {"signature": 256}, id="RSA-2048-sign"),
    pytest.param("RSA-2048", "encrypt", {"ciphertext": 256}, id="RSA-2048-encrypt"),
])
def test_classical_sizes(name: str, operation: str, expected: dict[str, int]) -> None:
    op = PYCA.prepare(algorithms.by_name(name), operation)
    assert {k: op.sizes[k] for k in expected} == expected
    assert op.run(0.01).ops > 0


def test_unoffered_pairs_say_why() -> None:
    mlkem512 = algorithms.by_name("ML-KEM-512")
    assert "768/1024" in (PYCA.offers(mlkem512, "keygen") or "")
    x25519 = algorithms.by_name("X25519")
    assert "does not implement" in (OQS.offers(x25519, "derive") or "")
    with pytest.raises(NotOfferedError):
        OQS.prepare(x25519, "derive")
    with pytest.raises(NotOfferedError):
        PYCA.prepare(algorithms.by_name("ML-KEM-768"), "sign")


class _LeakyKem(schemes.KemScheme):
    """A real ML-KEM whose decaps is broken on purpose: the checks must notice."""

    def __init__(self, inner: schemes.KemScheme, mode: str) -> None:
        self.inner, self.mode = inner, mode

    def keygen(self) -> tuple[Any, Any]:
        return self.inner.keygen()

    def keygen_call(self) -> schemes.Call:
        return self.inner.keygen_call()

    def encaps(self, public: Any) -> tuple[bytes, bytes]:
        ciphertext, shared = self.inner.encaps(public)
        self.issued = ciphertext
        return ciphertext, shared

    def encaps_call(self, public: Any) -> schemes.Call:
        return self.inner.encaps_call(public)

    def decaps(self, secret: Any, ciphertext: bytes) -> bytes:
        if self.mode == "wrong":
            return bytes(32)
        if self.mode == "raise-on-tamper" and ciphertext != self.issued:
            raise ValueError("explicit rejection")
        if self.mode == "ignore-tamper":
            return self.inner.decaps(secret, self.issued)
        return self.inner.decaps(secret, ciphertext)

    def decaps_call(self, secret: Any, ciphertext: bytes) -> schemes.Call:
        return self.inner.decaps_call(secret, ciphertext)

    def key_sizes(self, public: Any, secret: Any) -> dict[str, int]:
        return self.inner.key_sizes(public, secret)


@pytest.mark.parametrize("mode", ["wrong", "raise-on-tamper", "ignore-tamper"])
def test_kem_checks_catch_a_broken_decapsulation(mode: str) -> None:
    real = PYCA._scheme(algorithms.by_name("ML-KEM-768"))
    schemes.check_kem(real)  # the real one passes
    with pytest.raises(VerificationError):
        schemes.check_kem(_LeakyKem(real, mode))


def test_signature_checks_catch_a_verifier_that_accepts_everything() -> None:
    real = PYCA._scheme(algorithms.by_name("Ed25519"))

    class AcceptsAll(type(real)):  # type: ignore[misc]
        def verify(self, public: Any, message: bytes, signature: bytes) -> bool:
            return True

    with pytest.raises(VerificationError, match="tampered signature verified"):
        schemes.check_signature(AcceptsAll(real.generate))


def test_kem_checks_outside_ml_kem_accept_an_explicit_rejection() -> None:
    real = PYCA._scheme(algorithms.by_name("ML-KEM-768"))
    checks = schemes.check_kem(_LeakyKem(real, "raise-on-tamper"), implicit_rejection=False)
    assert [c.name for c in checks] == ["round trip", "tamper rejection"]
    assert checks[1].detail == "tampered ciphertext refused"
    with pytest.raises(VerificationError, match="real shared secret"):
        schemes.check_kem(_LeakyKem(real, "ignore-tamper"), implicit_rejection=False)


def test_hqc_in_liboqs_passes_its_checks_with_an_explicit_rejection() -> None:
    """liboqs 0.13's HQC returns an error for a tampered ciphertext (FIPS 203's implicit
    rejection binds ML-KEM only); pqbench's default liboqs build enables HQC."""
    assert "HQC-128" in OQS.enabled_kems(), "the default liboqs build must enable HQC"
    hqc = algorithms.liboqs_algorithm("HQC-128", "kem")
    names = [c.name for c in OQS.self_check(hqc)]
    assert names[0] == "round trip" and names[1] in ("tamper rejection", "implicit rejection")
