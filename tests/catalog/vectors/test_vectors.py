"""pqbench.catalog.vectors: one loader, one parser per format, and the curated files it ships."""

from __future__ import annotations

import json
import sys

import pytest

from pqbench.catalog import algorithms
from pqbench.catalog.vectors import (
    CURATED_DIR,
    VectorsUnavailable,
    find_vector_file,
    load_vectors,
    parse_colon_lines,
    parse_nist_rsp,
    parse_pqbench_json,
)
from pqbench.platform.errors import PqbenchError

#: Every built-in algorithm pqbench verifies has a curated file.
CURATED = [pytest.param(alg.name, id=alg.name) for alg in algorithms.all_algorithms()
           if alg.kind in ("kem", "signature", "key-agreement", "rsa")]


def test_rsp_records_split_on_count_without_blank_lines() -> None:
    text = "# comment\ncount = 0\nd = 00ff\nss = 01\ncount = 1\nd = 0a\nss = 02\n"
    assert parse_nist_rsp(text) == [{"count": "0", "d": "00ff", "ss": "01"},
                                    {"count": "1", "d": "0a", "ss": "02"}]


def test_rsp_groups_apply_to_following_records() -> None:
    text = ("[mod = 2048]\n\nn = aa\ne = 03\n\nSHAAlg = SHA256\nMsg = 01\nS = 02\n\n"
            "SHAAlg = SHA256\nMsg = 03\nS = 04\n[P-256,SHA-256]\n\nMsg = 05\nResult = P (0 )\n")
    assert parse_nist_rsp(text) == [
        {"mod": "2048", "n": "aa", "e": "03"},
        {"mod": "2048", "SHAAlg": "SHA256", "Msg": "01", "S": "02"},
        {"mod": "2048", "SHAAlg": "SHA256", "Msg": "03", "S": "04"},
        {"section": "P-256,SHA-256", "Msg": "05", "Result": "P (0 )"},
    ]


def test_rsp_repeated_key_starts_a_record_and_empty_values_stay() -> None:
    vectors = parse_nist_rsp("MESSAGE =\nSIGNATURE = 01\nMESSAGE = 02\nSIGNATURE = 03\n")
    assert vectors == [{"MESSAGE": "", "SIGNATURE": "01"}, {"MESSAGE": "02", "SIGNATURE": "03"}]


def test_rsp_rejects_a_line_that_is_not_key_value() -> None:
    with pytest.raises(ValueError, match="key = value"):
        parse_nist_rsp("count = 0\ngarbage\n")


def test_colon_lines_split_signature_from_signed_message() -> None:
    sk, pk, msg, sig = "11" * 32, "22" * 32, "abcd", "33" * 64
    (vector,) = parse_colon_lines(f"{sk}{pk}:{pk}:{msg}:{sig}{msg}:\n")
    assert vector == {"count": "0", "SECRET": sk, "PUBLIC": pk, "MESSAGE": msg, "SIGNATURE": sig}


def test_pqbench_json_refuses_other_formats_and_non_strings() -> None:
    with pytest.raises(ValueError, match="format"):
        parse_pqbench_json(json.dumps({"format": "other", "vectors": []}))
    with pytest.raises(ValueError, match="string"):
        parse_pqbench_json(json.dumps({"format": "pqbench-vectors/1",
                                       "vectors": [{"count": 0}]}))


@pytest.mark.parametrize("name", CURATED)
def test_curated_file_loads_and_names_its_origin(name: str) -> None:
    relpath = f"{name.lower()}.json"
    assert find_vector_file(relpath) == CURATED_DIR / relpath
    document = json.loads((CURATED_DIR / relpath).read_text())
    assert document["algorithm"] == name
    vectors = load_vectors(relpath, parse_pqbench_json)
    assert 2 <= len(vectors) <= 8  # a few per algorithm; the full files come from the package
    for vector in vectors:
        assert vector["origin"]
        for key, value in vector.items():
            if key not in ("count", "origin", "Result", "SHAAlg"):
                bytes.fromhex(value)  # every other field is hex


def test_nist_kat_files_come_from_cryptography_vectors() -> None:
    path = find_vector_file("asymmetric/MLKEM/kat_MLKEM_768.rsp")
    assert "cryptography_vectors" in str(path)
    vectors = load_vectors("asymmetric/MLKEM/kat_MLKEM_768.rsp", parse_nist_rsp)
    assert len(vectors) == 1000
    assert set(vectors[0]) >= {"count", "d", "z", "msg", "pk", "sk", "ct", "ss", "ct_n", "ss_n"}
    vectors[0]["ss"] = "00"  # callers get copies: the cached parse is untouched
    assert load_vectors("asymmetric/MLKEM/kat_MLKEM_768.rsp", parse_nist_rsp)[0]["ss"] != "00"


def test_missing_package_is_a_typed_error_naming_the_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cryptography_vectors", None)  # import now fails
    with pytest.raises(VectorsUnavailable, match="pip install cryptography-vectors") as info:
        find_vector_file("asymmetric/MLKEM/kat_MLKEM_768.rsp")
    assert isinstance(info.value, PqbenchError)


def test_a_file_in_neither_place_names_both() -> None:
    with pytest.raises(VectorsUnavailable, match="neither"):
        find_vector_file("asymmetric/MLKEM/no_such_file.rsp")
