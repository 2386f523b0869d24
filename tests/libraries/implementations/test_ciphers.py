"""Cipher rows: security columns, checks before timing, what one op is, and refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidTag
from typer.testing import CliRunner

from pqbench.catalog import algorithms
from pqbench.catalog.algorithms.base import Algorithm
from pqbench.catalog.algorithms.ciphers import security_attributes
from pqbench.cli import app
from pqbench.libraries.implementations import pyca_symmetric
from pqbench.libraries.implementations.pyca import PycaImplementation
from pqbench.platform.errors import NotOfferedError

PYCA = PycaImplementation()
CIPHERS = [pytest.param(a, id=a.name) for a in algorithms.all_algorithms() if a.kind == "cipher"]


@pytest.mark.parametrize("alg", CIPHERS)
def test_every_cipher_is_checked_then_runs_each_operation(alg: Algorithm) -> None:
    assert PYCA.offers(alg, alg.operations[0]) is None
    assert PYCA.self_check(alg)
    for operation in alg.all_operations:
        prepared = PYCA.prepare(alg, operation, 64)
        assert prepared.run(0.002).ops > 0
        assert prepared.attributes["key_bits"] == alg.param("key_bits")
        assert "per_op" in prepared.attributes


@pytest.mark.parametrize(("name", "key", "classical", "quantum"), [
    ("aes-256-xts", 512, 256, 128), ("aes-128-xts", 256, 128, 64),
    ("aes256ctrx2", 512, 256, 170), ("3des", 168, 112, 56), ("aes-256-gcm", 256, 256, 128)])
def test_key_bits_are_not_security_bits(name: str, key: int, classical: int,
                                        quantum: int) -> None:
    (alg,) = algorithms.resolve([name])
    assert security_attributes(alg) == {"key_bits": key, "security_bits": classical,
                                        "quantum_security_bits": quantum}


def test_libcrypto_names_are_carried_for_the_native_loop() -> None:
    evp = {a.name: a.param("evp") for a in algorithms.all_algorithms() if a.kind == "cipher"}
    assert evp["AES-256-XTS"] == "AES-256-XTS"
    assert evp["AES-256-KW"] == "id-aes256-wrap"
    assert evp["AES-256-CTR-CASCADE"] is None


def test_the_cascade_really_uses_two_keys() -> None:
    alg = algorithms.by_name("AES-256-CTR-CASCADE")
    key = bytes(32) + bytes([1]) * 32
    one = pyca_symmetric._contexts(alg, key, True)
    assert len(one) == 2
    data = bytes(64)
    twice = one[1].update(one[0].update(data))
    single = pyca_symmetric._contexts(algorithms.by_name("AES-256-CTR"), key[:32], True)[0]
    assert twice != single.update(data)


@pytest.mark.parametrize(("name", "size"), [("aes-256-xts", 8), ("3des", 12), ("keywrap", 20)])
def test_sizes_a_mode_cannot_take_are_refused(name: str, size: int) -> None:
    (alg,) = algorithms.resolve([name])
    with pytest.raises(NotOfferedError):
        PYCA.prepare(alg, alg.operations[0], size)


def test_aead_tamper_is_caught() -> None:
    alg = algorithms.by_name("AES-256-GCM")
    aead = pyca_symmetric._aead(alg, bytes(32))
    with pytest.raises(InvalidTag):
        aead.decrypt(pyca_symmetric.NONCE, pyca_symmetric._flip(
            aead.encrypt(pyca_symmetric.NONCE, b"x" * 32, None)), None)


@pytest.mark.process
def test_speed_json_has_bytes_and_security_for_every_block(runner: CliRunner,
                                                           db_path: Path) -> None:
    result = runner.invoke(app, ["speed", "aes-256-xts", "sha256", "--seconds", "0.02",
                                 "--rounds", "2", "--json", "--db", str(db_path),
                                 "-i", "cryptography", "-i", "python"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["results"]
    xts = [r for r in rows if r["algorithm"] == "AES-256-XTS" and r["operation"] == "encrypt"]
    assert [r["block_size"] for r in xts] == [16, 64, 256, 1024, 8192, 16384]
    assert all(r["bytes_per_sec"] > 0 and r["key_bits"] == 512 and r["security_bits"] == 256
               and r["quantum_security_bits"] == 128 for r in xts)
    sha = [r for r in rows if r["algorithm"] == "SHA-256"]
    assert len(sha) == 6 and all(r["security_bits"] == 128 for r in sha)


@pytest.mark.process
def test_bytes_option_picks_one_block_size(runner: CliRunner, db_path: Path) -> None:
    result = runner.invoke(app, ["speed", "aes128gcm", "--bytes", "4096", "--seconds", "0.02",
                                 "--rounds", "2", "--json", "--db", str(db_path),
                                 "-i", "cryptography"])
    assert result.exit_code == 0, result.output
    assert {r["block_size"] for r in json.loads(result.stdout)["results"]} == {4096}
