"""Fingerprint differences, capability masks decoded, and which causes touch which rows."""

from __future__ import annotations

import pytest

from pqbench.analysis import explain
from pqbench.catalog.algorithms import capabilities as caps
from pqbench.platform.errors import UsageError
from tests.helpers.runs import environment

DETECTED = "0xfffa3203078bffff:0x405fc6f1bf07ab"  # `openssl version -a` on the dev machine


def test_ia32cap_values_clear_only_the_named_bits_in_every_word() -> None:
    assert caps.ia32cap_value(["aesni"]) == "~0x200000000000000:~0x0:~0x0:~0x0:~0x0"
    assert caps.ia32cap_value(["shani"]) == "~0x0:~0x20000000:~0x0:~0x0:~0x0"
    assert caps.hidden_capabilities(caps.IA32CAP, caps.ia32cap_value(["aesni", "shani"])) \
        == {"aesni", "shani"}


@pytest.mark.parametrize("value, hidden", [
    (None, set()),
    (DETECTED, set()),
    ("0xfdfa3203078bffff:0x405fc6f1bf07ab", {"aesni"}),
    ("~0x200000000000000", {"aesni", "avx2", "bmi2", "avx512", "adx", "shani", "vaes",
                            "vpclmulqdq"}),  # absent words are zeroed by OpenSSL
    ("", set(caps.X86)),
    (":~0x20000000", {"shani", "avx2", "bmi2", "avx512", "adx", "vaes", "vpclmulqdq"}
     - {"avx2", "bmi2", "avx512", "adx", "vaes", "vpclmulqdq"}),
], ids=["unset", "detected", "replaced without aesni", "one word only", "empty", "keep word 0"])
def test_hidden_capabilities_follow_openssl_parsing(value: str | None, hidden: set[str]) -> None:
    assert caps.hidden_capabilities(caps.IA32CAP, value) == hidden


def test_armcap_replaces_the_detected_word() -> None:
    assert caps.armcap_value(["aes", "sha256"], 0x7D) == "0x69"
    assert caps.hidden_capabilities(caps.ARMCAP, "0x69") >= {"aes", "sha256"}


def test_mask_names_are_checked() -> None:
    assert caps.parse_names("SHA-NI,aesni", "x86_64") == ("aesni", "shani")
    with pytest.raises(UsageError, match="choose from: pclmulqdq"):
        caps.parse_names("aesni,warp", "x86_64")
    assert caps.parse_names("aes", "aarch64") == ("aes",)


def test_differences_ignore_labels_and_list_changed_fields() -> None:
    before = environment(label="a", os_build="18E226")
    after = environment(label="b", os_build="18F132", libraries__liboqs="0.14.0")
    fields = {d.field: (d.before, d.after) for d in explain.differences([before], [after])}
    assert fields == {"os_build": ("18E226", "18F132"),
                      "libraries.liboqs": ("0.13.0", "0.14.0")}


def test_causes_are_ranked_and_reach_only_their_rows() -> None:
    before = environment(knobs__OPENSSL_ia32cap=caps.ia32cap_value(["aesni"]))
    after = environment(os_build="18F132", libraries__liboqs="0.14.0",
                        libraries__cryptography="51.0.0")
    found = explain.differences([before], [after])
    aes = explain.causes_for("AES-256-XTS", "cryptography", found)
    assert [(c.field, c.strength) for c in aes] == [
        ("knobs.OPENSSL_ia32cap", "strong"), ("libraries.cryptography", "likely"),
        ("os_build", "weak")]
    oqs = explain.causes_for("ML-KEM-768", "liboqs", found)
    # liboqs takes random bytes from OpenSSL's AES DRBG: the mask reaches it, weakly.
    assert (oqs[0].field, oqs[0].strength) == ("libraries.liboqs", "likely")
    assert {(c.field, c.strength) for c in oqs[1:]} == {("knobs.OPENSSL_ia32cap", "weak"),
                                                        ("os_build", "weak")}
    sha = explain.causes_for("SHA-256", "python", found, library="hashlib")
    assert [c.strength for c in sha] == ["weak"]  # AES-NI does not touch SHA-256


def test_cpu_flag_change_is_a_strong_cause_for_rows_using_it() -> None:
    before = environment(cpu_flags=["aes", "avx2"])
    after = environment(cpu_flags=["aes", "avx2", "sha_ni"])
    found = explain.differences([before], [after])
    sha = explain.causes_for("SHA-256", "liboqs", found)
    assert sha[0].strength == "strong" and "shani" in sha[0].why
    assert explain.causes_for("AES-128-GCM", "cryptography", found) == []


def test_a_hidden_aes_ni_is_only_a_weak_cause_for_liboqs_rows() -> None:
    from pqbench.analysis.explain import Difference, causes_for

    diff = Difference("knobs.OPENSSL_ia32cap", "~0x200000000000000:~0x0:~0x0:~0x0:~0x0", None)
    (cause,) = causes_for("ML-KEM-768", "liboqs", [diff])
    assert cause.strength == "weak" and "OQS_USE_OPENSSL" in cause.why
    (strong,) = causes_for("AES-256-XTS", "cryptography", [diff])
    assert strong.strength == "strong"


NO_SHA_NI = explain.Context(cpu_flags=frozenset({"aes", "avx2", "pclmulqdq"}))
WITH_SHA_NI = explain.Context(cpu_flags=frozenset({"aes", "avx2", "pclmulqdq", "sha_ni"}))
HIDE_BOTH = explain.Difference("knobs.OPENSSL_ia32cap",
                               caps.ia32cap_value(["aesni", "shani"]), None)


def test_hiding_a_capability_the_cpu_lacks_is_no_cause() -> None:
    assert explain.causes_for("SHA-256", "python", [HIDE_BOTH], library="hashlib",
                              context=NO_SHA_NI) == []
    (cause,) = explain.causes_for("SHA-256", "python", [HIDE_BOTH], library="hashlib",
                                  context=WITH_SHA_NI)
    assert cause.strength == "strong" and "shani" in cause.why
    # AES-NI is there either way: the AES row keeps its cause on both CPUs.
    for context in (NO_SHA_NI, WITH_SHA_NI):
        (aes,) = explain.causes_for("AES-256-XTS", "cryptography", [HIDE_BOTH],
                                    context=context)
        assert aes.strength == "strong" and "aesni" in aes.why and "shani" not in aes.why


def test_a_cpu_without_aes_ni_names_no_cause_for_a_hidden_aes_ni() -> None:
    no_aes = explain.Context(cpu_flags=frozenset({"avx2"}))
    hide_aes = explain.Difference("knobs.OPENSSL_ia32cap", caps.ia32cap_value(["aesni"]), None)
    assert explain.causes_for("AES-256-XTS", "cryptography", [hide_aes], context=no_aes) == []
    assert explain.causes_for("ML-KEM-768", "liboqs", [hide_aes], context=no_aes) == []
    (noted,) = explain.annotate([hide_aes], no_aes, ["AES-256-XTS"])
    assert noted.note == "hides aesni; this CPU has no AES-NI: no effect expected"


def test_differences_say_when_no_effect_is_expected() -> None:
    mask_names = explain.Difference("mask.names", ["shani"], None)
    hide_sha = explain.Difference("knobs.OPENSSL_ia32cap", caps.ia32cap_value(["shani"]), None)
    flags = explain.Difference("cpu_flags", ["aes", "vaes"], ["aes"])
    noted = explain.annotate([mask_names, hide_sha, flags], NO_SHA_NI, ["ML-KEM-768"])
    assert [d.note for d in noted] == [
        "hides shani; this CPU has no SHA-NI: no effect expected",
        "hides shani; this CPU has no SHA-NI: no effect expected",
        "no compared row uses vaes: no effect expected"]
    # On a CPU with SHA-NI, and for rows that use VAES, nothing is noted.
    noted = explain.annotate([mask_names, hide_sha, flags], WITH_SHA_NI, ["AES-256-GCM"])
    assert [d.note for d in noted] == [None, None, None]
    assert noted[0].as_dict()["note"] is None


def test_unrecorded_flags_are_never_known_missing() -> None:
    # ssse3 and avx are not in the fingerprint's flag list: hiding them may act.
    assert not NO_SHA_NI.lacks("ssse3") and not NO_SHA_NI.lacks("avx")
    assert NO_SHA_NI.lacks("shani") and not NO_SHA_NI.lacks("aesni")
    assert not explain.Context().lacks("shani")  # flags unknown: assume it may act


def test_a_new_system_libcrypto_is_a_likely_cause_for_liboqs_rows() -> None:
    # liboqs built with OQS_USE_OPENSSL reaches the system libcrypto.
    new = explain.Difference("libraries.system_libcrypto", "OpenSSL 3.0.19", "OpenSSL 3.5.4")
    with_openssl = explain.context_of([{"cpu_flags": ["aes"], "library_details": {
        "liboqs": {"build": {"OQS_USE_OPENSSL": True}}}}])
    assert with_openssl.liboqs_openssl is True
    for implementation in ("liboqs", "liboqs-python"):
        (cause,) = explain.causes_for("ML-KEM-768", implementation, [new],
                                      context=with_openssl)
        assert cause.strength == "likely" and "OQS_USE_OPENSSL" in cause.why
    without = explain.context_of([{"library_details": {
        "liboqs": {"build": {"OQS_USE_OPENSSL": False}}}}])
    assert explain.causes_for("ML-KEM-768", "liboqs", [new], context=without) == []
    (own,) = explain.causes_for("RSA-2048", "libcrypto", [new], context=without)
    assert own.strength == "likely" and "library behind libcrypto" in own.why


def test_a_hidden_aes_ni_reaches_liboqs_operations_that_draw_random_bytes() -> None:
    # OQS_USE_OPENSSL: keygen, encaps and sign draw random bytes from OpenSSL's AES DRBG
    # (measured: ML-KEM-768 keygen 1.07x with AES-NI); decaps and verify draw none.
    hide_aes = explain.Difference("knobs.OPENSSL_ia32cap", caps.ia32cap_value(["aesni"]), None)
    for operation in ("keygen", "encaps", "sign"):
        (cause,) = explain.causes_for("ML-KEM-768", "liboqs", [hide_aes], operation=operation,
                                      context=WITH_SHA_NI)
        assert cause.strength == "likely" and operation in cause.why
    for operation in ("decaps", "verify"):
        assert explain.causes_for("ML-KEM-768", "liboqs", [hide_aes], operation=operation,
                                  context=WITH_SHA_NI) == []
    # SHA-2 comes from OpenSSL too: a hidden SHA-NI stays a weak cause for any operation.
    hide_sha = explain.Difference("knobs.OPENSSL_ia32cap", caps.ia32cap_value(["shani"]), None)
    (weak,) = explain.causes_for("SPHINCS+-SHA2-128f-simple", "liboqs", [hide_sha],
                                 operation="verify", context=WITH_SHA_NI)
    assert weak.strength == "weak"
    assert explain.causes_for("ML-KEM-768", "liboqs", [hide_sha], operation="verify",
                              context=NO_SHA_NI) == []


def test_another_python_is_likely_for_python_loop_rows_and_weak_for_native_ones() -> None:
    found = explain.differences([environment()], [environment(libraries__python="3.13.5")])
    for implementation, strength in (("liboqs-python", "likely"), ("cryptography", "likely"),
                                     ("python", "likely"), ("liboqs", "weak"),
                                     ("libcrypto", "weak")):
        (cause,) = explain.causes_for("ML-KEM-768", implementation, found)
        assert (cause.field, cause.strength) == ("libraries.python", strength), implementation
        assert ("Python loop" in cause.why) == (strength == "likely")
