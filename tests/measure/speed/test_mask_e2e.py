"""The macOS 10.14.5 story end to end, with real crypto and real processes.

Runs with AES-NI and SHA-NI hidden from OpenSSL are labelled as one OS build, unmasked runs
as the next; `pqbench compare --by label` must call the AES-XTS row (and the SHA-256 row)
a significant jump caused by the capability difference, and leave liboqs's ML-KEM
decapsulation alone. The run is the unit, so each side needs enough runs for an exact
test over runs: six a side (the smallest p is then 2/924, and a verdict survives up to two
runs out of order, U <= 2: p <= 2 * 4/924). Masked and unmasked runs alternate so that a
change of machine load reaches both groups alike. Effects are 2.5x to 50x.

A jump is asserted only where the CPU has the capability (/proc/cpuinfo flags `aes`,
`sha_ni`); on a CPU without it the mask hides nothing, and the test asserts the opposite:
no verdict caused by it, and "no effect expected" in the differences.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pqbench.catalog.algorithms import capabilities as caps
from tests.helpers import CPU_FLAGS, run_cli

pytestmark = pytest.mark.process

SPEED = ("speed", "aes-256-xts", "sha-256", "ml-kem-768", "-o", "encrypt", "-o", "hash",
         "-o", "decaps", "-i", "cryptography", "-i", "python", "-i", "liboqs", "--bytes",
         "16384", "--seconds", "0.1", "--rounds", "5")
RUNS_A_SIDE = 6


def _speed(db: Path, label: str, *extra: str) -> None:
    done = run_cli(*SPEED, "--label", label, "--json", "--db", str(db), *extra, timeout=120)
    assert done.returncode == 0, done.stderr
    fingerprint = json.loads(done.stdout)["environment"]
    if extra:
        assert fingerprint["mask"]["names"] == ["aesni", "shani"]
        assert fingerprint["knobs"]["OPENSSL_ia32cap"] == caps.ia32cap_value(["aesni", "shani"])
    else:
        assert fingerprint["mask"] is None and fingerprint["knobs"]["OPENSSL_ia32cap"] is None


def test_masked_baseline_then_unmasked_build_is_a_jump_with_its_cause(tmp_path: Path) -> None:
    db = tmp_path / "story.db"
    for _ in range(RUNS_A_SIDE):
        _speed(db, "10.14.4", "--mask", "aesni,shani")
        _speed(db, "10.14.5")

    done = run_cli("compare", "--by", "label", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["before"]["name"], result["after"]["name"]) == ("10.14.4", "10.14.5")
    rows = {(r["algorithm"], r["implementation"], r["operation"]): r for r in result["rows"]}
    notes = {d["field"]: d["note"] for d in result["differences"]}
    assert {"knobs.OPENSSL_ia32cap", "mask.names"} <= set(notes)
    for key, flag, capability, name in (
            (("AES-256-XTS", "cryptography", "encrypt"), "aes", "aesni", "AES-NI"),
            (("SHA-256", "python", "hash"), "sha_ni", "shani", "SHA-NI")):
        row = rows[key]
        assert row["block_size"] == 16384
        assert (row["runs_before"], row["runs_after"]) == (RUNS_A_SIDE, RUNS_A_SIDE)
        if flag in CPU_FLAGS:
            assert row["verdict"] == "faster", row
            strongest = row["causes"][0]
            assert (strongest["field"], strongest["strength"]) == (
                "knobs.OPENSSL_ia32cap", "strong")
            assert capability in strongest["why"]
        else:
            assert row["verdict"] not in ("faster", "slower"), row
            assert not any(capability in c["why"] for c in row["causes"])
            assert f"this CPU has no {name}" in notes["knobs.OPENSSL_ia32cap"]
    if "aes" in CPU_FLAGS:
        assert rows[("AES-256-XTS", "cryptography", "encrypt")]["ratio"] > 10
    decaps = rows[("ML-KEM-768", "liboqs", "decaps")]
    assert decaps["verdict"] not in ("faster", "slower"), decaps
    assert decaps["block_size"] is None and decaps["causes"] == []

    table = run_cli("compare", "--by", "label", "--db", str(db))
    assert table.returncode == 0 and "knobs.OPENSSL_ia32cap" in table.stdout


def test_unknown_mask_name_lists_the_known_ones(tmp_path: Path) -> None:
    done = run_cli("speed", "sha-256", "--mask", "aesni,turbo", "--db", str(tmp_path / "x.db"))
    assert done.returncode == 2
    assert "turbo" in done.stderr and "shani" in done.stderr
    assert not (tmp_path / "x.db").exists()


def test_a_a_runs_labelled_apart_give_no_verdict(tmp_path: Path) -> None:
    # The same configuration, five real runs a side, interleaved and labelled apart: the
    # machine's drift between runs must not come out as faster or slower.
    db = tmp_path / "aa.db"
    for _ in range(5):
        for label in ("A", "B"):
            done = run_cli("speed", "sha-256", "x25519", "-i", "python", "-i", "libcrypto",
                           "-o", "hash", "-o", "derive", "--bytes", "1024", "--seconds",
                           "0.15", "--rounds", "5", "--label", label, "--db", str(db),
                           timeout=120)
            assert done.returncode == 0, done.stderr
    done = run_cli("compare", "--by", "label", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert len(rows) == 3  # SHA-256 in python and libcrypto, X25519 derive in libcrypto
    for row in rows:
        assert (row["runs_before"], row["runs_after"]) == (5, 5)
        assert row["verdict"] in ("no change", "inconclusive"), row
        assert row["noise_floor"] is not None and row["threshold"] >= 0.05
