"""Every foreign worker through `pqbench verify`, as a user runs it: built into the per-user
cache on first use (warm, that is a look-up), then checked pair by pair. Each pair it
offers passes its round trip, interoperates both ways with liboqs or cryptography, and
passes every known answer its API can take; none fails. The workers' own protocol tests
are in test_worker_*.py."""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli

ALGORITHMS = ("ml-kem-768", "ml-dsa-65", "x25519", "ed25519")

#: The first use builds each worker: libcrux's first build took over nine minutes on a
#: busy 2-core machine.
pytestmark = [pytest.mark.process, pytest.mark.timeout(3600)]


@pytest.mark.parametrize("implementation", ["aws-lc-rs", "libcrux", "java", "bouncycastle"])
def test_every_pair_is_checked_and_interoperates(implementation: str) -> None:
    done = run_cli("verify", *ALGORITHMS, "-i", implementation, "--all", "--json",
                   timeout=1800)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert report["failed"] == 0
    results = report["results"]
    offered = {r["algorithm"] for r in results if r["check"] == "round trip"
               or r["check"] == "both sides agree"}
    assert "ML-KEM-768" in offered and "ML-DSA-65" in offered
    for alg in offered:
        checks = {r["check"]: r for r in results if r["algorithm"] == alg}
        interop = [c for c in checks if c.startswith("interop with ")]
        assert interop and all(checks[c]["status"] == "passed" for c in interop), checks
        kat = [r for c, r in checks.items() if c.startswith("KAT")]
        assert kat and all(r["status"] in ("passed", "not offered") for r in kat), kat
        # What the API cannot take is said, never silently skipped.
        assert all(r["detail"] for r in kat if r["status"] == "not offered")
    # Every implementation reproduces some published vector.
    assert any(r["check"].startswith("KAT") and r["status"] == "passed" for r in results)
