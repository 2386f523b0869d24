"""`pqbench tls` inside the Debian 13 userland, whose system OpenSSL 3.5 has ML-KEM groups and
ML-DSA: the `libssl` implementation runs the post-quantum cells there, verified from the wire,
and Python 3.13's ssl module serves an ML-DSA certificate but still cannot choose a KEM group."""

from __future__ import annotations

import json

import pytest

from pqbench.catalog import algorithms
from pqbench.libraries.userland import Userland
from tests.helpers import inside

pytestmark = pytest.mark.process

CELLS = ("X25519 + ECDSA-P-256", "X25519 + ML-DSA-65", "X25519MLKEM768 + ECDSA-P-256",
         "X25519MLKEM768 + ML-DSA-65")


def test_libssl_on_openssl_35_runs_the_post_quantum_cells(trixie: Userland,
                                                         db_inside: str) -> None:
    done = inside(trixie, "pqbench", "tls", "-g", "x25519", "-g", "X25519MLKEM768",
                  "-c", "ecdsa-p-256", "-c", "ml-dsa-65", "-i", "libssl", "-i", "python-ssl",
                  "--seconds", "0.05", "--rounds", "5", "--json", "--db", db_inside)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["environment"]["tls"]["libssl"]["library"].startswith("OpenSSL 3.")
    rows = {(r["algorithm"], r["implementation"], r["operation"]): r for r in doc["results"]}
    for cell in CELLS:
        for implementation in ("libssl", "libssl-loopback"):
            for operation in ("full", "resumed"):
                assert (cell, implementation, operation) in rows, (cell, implementation)
    mlkem, x25519 = algorithms.by_name("ML-KEM-768"), algorithms.by_name("X25519")
    hybrid = rows[("X25519MLKEM768 + ML-DSA-65", "libssl", "full")]
    assert hybrid["sizes"]["client_share"] == mlkem.size("public_key") + x25519.size("public_key")
    assert hybrid["sizes"]["server_share"] == mlkem.size("ciphertext") + x25519.size("public_key")
    assert hybrid["sizes"]["signature"] == algorithms.by_name("ML-DSA-65").size("signature")
    assert hybrid["signature_scheme"] == "mldsa65" and hybrid["round_trips"] == 2
    checks = next(v["checks"] for v in doc["verifications"]
                  if (v["algorithm"], v["implementation"]) == ("X25519MLKEM768 + ML-DSA-65",
                                                               "libssl"))
    assert any("negotiated X25519MLKEM768 (0x11ec)" in c for c in checks)
    assert any("library names the group" in c for c in checks)  # SSL_get0_group_name, 3.2+
    # Python's ssl module on the same OpenSSL: ML-DSA certificates yes, KEM groups not yet.
    assert ("X25519 + ML-DSA-65", "python-ssl", "full") in rows
    refused = {p["algorithm"]: p for p in doc["problems"] if p["implementation"] == "python-ssl"}
    assert set(refused) == {"X25519MLKEM768 + ECDSA-P-256", "X25519MLKEM768 + ML-DSA-65"}
    assert all("set_groups arrives in Python 3.15" in p["reason"] for p in refused.values())
