"""Fingerprint differences, capability masks decoded, and which causes touch which rows."""

from __future__ import annotations

import pytest

from pqbench import explain, mask
from pqbench.errors import UsageError
from tests.tests_data import environment

DETECTED = "0xfffa3203078bffff:0x405fc6f1bf07ab"  # `openssl version -a` on the dev machine


def test_ia32cap_values_clear_only_the_named_bits_in_every_word() -> None:
    assert mask.ia32cap_value(["aesni"]) == "~0x200000000000000:~0x0:~0x0:~0x0:~0x0"
    assert mask.ia32cap_value(["shani"]) == "~0x0:~0x20000000:~0x0:~0x0:~0x0"
    assert mask.hidden_capabilities(mask.IA32CAP, mask.ia32cap_value(["aesni", "shani"])) \
        == {"aesni", "shani"}


@pytest.mark.parametrize("value, hidden", [
    (None, set()),
    (DETECTED, set()),
    ("0xfdfa3203078bffff:0x405fc6f1bf07ab", {"aesni"}),
    ("~0x200000000000000", {"aesni", "avx2", "bmi2", "avx512", "adx", "shani", "vaes",
                            "vpclmulqdq"}),  # absent words are zeroed by OpenSSL
    ("", set(mask.X86)),
    (":~0x20000000", {"shani", "avx2", "bmi2", "avx512", "adx", "vaes", "vpclmulqdq"}
     - {"avx2", "bmi2", "avx512", "adx", "vaes", "vpclmulqdq"}),
], ids=["unset", "detected", "replaced without aesni", "one word only", "empty", "keep word 0"])
def test_hidden_capabilities_follow_openssl_parsing(value: str | None, hidden: set[str]) -> None:
    assert mask.hidden_capabilities(mask.IA32CAP, value) == hidden


def test_armcap_replaces_the_detected_word() -> None:
    assert mask.armcap_value(["aes", "sha256"], 0x7D) == "0x69"
    assert mask.hidden_capabilities(mask.ARMCAP, "0x69") >= {"aes", "sha256"}


def test_mask_names_are_checked() -> None:
    assert mask.parse_names("SHA-NI,aesni", "x86_64") == ("aesni", "shani")
    with pytest.raises(UsageError, match="choose from: pclmulqdq"):
        mask.parse_names("aesni,warp", "x86_64")
    assert mask.parse_names("aes", "aarch64") == ("aes",)


def test_differences_ignore_labels_and_list_changed_fields() -> None:
    before = environment(label="a", os_build="18E226")
    after = environment(label="b", os_build="18F132", libraries__liboqs="0.14.0")
    fields = {d.field: (d.before, d.after) for d in explain.differences([before], [after])}
    assert fields == {"os_build": ("18E226", "18F132"),
                      "libraries.liboqs": ("0.13.0", "0.14.0")}


def test_causes_are_ranked_and_reach_only_their_rows() -> None:
    before = environment(knobs__OPENSSL_ia32cap=mask.ia32cap_value(["aesni"]))
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
    from pqbench.explain import Difference, causes_for

    diff = Difference("knobs.OPENSSL_ia32cap", "~0x200000000000000:~0x0:~0x0:~0x0:~0x0", None)
    (cause,) = causes_for("ML-KEM-768", "liboqs", [diff])
    assert cause.strength == "weak" and "OQS_USE_OPENSSL" in cause.why
    (strong,) = causes_for("AES-256-XTS", "cryptography", [diff])
    assert strong.strength == "strong"
