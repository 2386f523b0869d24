from __future__ import annotations

import pytest

from pqbench.catalog import algorithms
from pqbench.libraries.implementations.liboqs_python import LiboqsPythonImplementation
from pqbench.platform.errors import UnknownAlgorithmError


@pytest.mark.parametrize(("spelling", "canonical"), [
    pytest.param("ml-kem-768", "ML-KEM-768", id="ml-kem-768"),
    pytest.param("mlkem768", "ML-KEM-768", id="mlkem768"),
    pytest.param("ML_KEM_1024", "ML-KEM-1024", id="ML_KEM_1024"),
    pytest.param("mldsa65", "ML-DSA-65", id="mldsa65"),
    pytest.param("rsa2048", "RSA-2048", id="rsa2048"),
    pytest.param("ecdhx25519", "X25519", id="ecdhx25519"),
    pytest.param("ecdhp256", "ECDH-P-256", id="ecdhp256"),
    pytest.param("prime256v1", "ECDH-P-256", id="prime256v1"),
    pytest.param("ed25519", "Ed25519", id="ed25519"),
    pytest.param("ecdsap384", "ECDSA-P-384", id="ecdsap384"),
])
def test_openssl_speed_spellings_resolve(spelling: str, canonical: str) -> None:
    assert [a.name for a in algorithms.resolve([spelling])] == [canonical]


def test_resolve_keeps_order_and_drops_duplicates() -> None:
    names = [a.name for a in algorithms.resolve(["x25519", "mlkem768", "ecdhx25519"])]
    assert names == ["X25519", "ML-KEM-768"]


def test_unknown_name_suggests_close_spellings() -> None:
    with pytest.raises(UnknownAlgorithmError) as info:
        algorithms.resolve(["mlkem76"])
    assert "ML-KEM-768" in info.value.suggestions
    assert "Did you mean" in str(info.value)
    assert info.value.exit_code == 2


def test_a_command_of_one_kind_suggests_only_that_kind() -> None:
    """`files hash -a md5` was answered "Did you mean: ML-DSA-65?"."""
    with pytest.raises(UnknownAlgorithmError) as info:
        algorithms.resolve(["md5"], ["ML-KEM-768"], ["ML-DSA-65"], kind="hash")
    assert info.value.suggestions == []
    assert "ML-DSA-65" in algorithms.suggest("md5", ["ML-DSA-65"])  # any kind: it is close
    assert algorithms.suggest("sha265", kind="hash")[0] == "SHA-256"
    assert "ML-KEM-768" not in algorithms.suggest("mlkem76", ["ML-KEM-768"], kind="hash")


def test_quick_suite_is_all_known() -> None:
    resolved = algorithms.resolve(algorithms.QUICK_SUITE)
    assert [a.name for a in resolved] == list(algorithms.QUICK_SUITE)


def test_any_enabled_liboqs_mechanism_can_be_named() -> None:
    oqs = LiboqsPythonImplementation()
    sigs = oqs.enabled_signatures()
    falcon = next(name for name in sigs if name.startswith("Falcon"))
    (alg,) = algorithms.resolve([falcon.lower()], oqs.enabled_kems(), sigs)
    assert alg.name == falcon
    assert alg.kind == "signature"
    assert alg.operations == ("keygen", "sign", "verify")


def test_rsa_keygen_is_only_on_request() -> None:
    rsa = algorithms.by_name("RSA-2048")
    assert "keygen" not in rsa.operations
    assert "keygen" in rsa.all_operations
