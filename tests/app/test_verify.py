"""`pqbench verify`'s plan and ending, called directly (the checks run in this process)."""

from __future__ import annotations

from pqbench.app import verify
from pqbench.catalog import algorithms
from pqbench.catalog.algorithms.base import PUBLIC_KEY_KINDS
from pqbench.measure.checks.outcome import Outcome

PASSED = Outcome("X25519", "cryptography", "round trip", "passed")
FAILED = Outcome("X25519", "cryptography", "known answer", "failed", "wrong secret")
LACKS = Outcome("X25519", "liboqs", "offered", "not offered", "no X25519")


def test_no_algorithm_named_is_every_public_key_algorithm() -> None:
    plan = verify.plan(None, ["cryptography"])
    assert [a.name for a in plan.algorithms] == [
        a.name for a in algorithms.all_algorithms() if a.kind in PUBLIC_KEY_KINDS]
    assert "AES-256-GCM" not in {a.name for a in plan.algorithms}
    assert [i.name for i in plan.implementations] == ["cryptography"]


def test_the_plan_counts_the_pairs_in_scope() -> None:
    plan = verify.plan(["x25519", "ml-kem-768"], ["cryptography", "liboqs"])
    # X25519 through both, ML-KEM-768 through both (each says whether it offers it)
    assert plan.size == sum(1 for a in plan.algorithms for i in plan.implementations
                            if i.in_scope(a))
    assert 0 < plan.size <= 4


def test_a_failed_check_ends_with_status_1_and_how_many() -> None:
    assert verify.Verified([PASSED, LACKS], 0.1).ending is None
    found = verify.Verified([PASSED, FAILED, LACKS, FAILED], 0.1)
    assert found.failed == [FAILED, FAILED]
    assert found.ending == verify.Ending("2 check(s) failed", 1)


def test_checks_run_and_are_timed() -> None:
    plan = verify.plan(["x25519"], ["cryptography"])
    steps: list[str] = []
    found = verify.verify(plan, steps.append)
    assert steps == ["X25519 [cryptography]"]
    assert found.outcomes and all(o.status == "passed" for o in found.outcomes)
    assert found.seconds > 0 and found.ending is None
