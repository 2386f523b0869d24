"""One pre-timing check for speed, the ab worker and verify; known answers through each
implementation's own interface."""

from __future__ import annotations

from typing import Any

import pytest

from pqbench import algorithms
from pqbench.checks.kat import known_answer_checks
from pqbench.checks.pair import check_pair
from pqbench.checks.verify import self_checks
from pqbench.implementations import select
from pqbench.implementations.pyca import PycaImplementation
from pqbench.measure import suite


def _wrong_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injection: cryptography's ML-KEM-768 decapsulates to a wrong secret."""
    from cryptography.hazmat.primitives.asymmetric import mlkem

    class Broken:
        def __init__(self, key: Any) -> None:
            self.key = key

        def decapsulate(self, ciphertext: bytes) -> bytes:
            return bytes(b ^ 0xFF for b in self.key.decapsulate(ciphertext))

        def __getattr__(self, name: str) -> object:
            return getattr(self.key, name)

    generate = mlkem.MLKEM768PrivateKey.generate
    monkeypatch.setattr(mlkem.MLKEM768PrivateKey, "generate",
                        staticmethod(lambda: Broken(generate())))


def test_a_wrong_answer_stops_the_pair_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    _wrong_secret(monkeypatch)
    alg, impl = algorithms.by_name("ML-KEM-768"), PycaImplementation()
    checked = check_pair(alg, impl)
    assert checked.problem is not None and checked.problem.kind == "failed verification"
    assert "decapsulation did not return the encapsulated secret" in checked.problem.reason
    (row,) = self_checks(alg, impl)
    assert (row.check, row.status) == ("self-check", "failed")
    record = suite.SuiteRecorder()
    tasks = suite.plan([alg], [impl], suite.SpeedSettings(seconds=0.01, rounds=1))
    suite.execute(tasks, suite.SpeedSettings(seconds=0.01, rounds=1), record)
    assert record.measurements == [] and record.verifications == []
    assert [p.kind for p in record.problems] == ["failed verification"]


def test_a_pair_not_offered_is_refused_before_any_check() -> None:
    # cryptography 50 has no ML-KEM-512 class (cryptography/hazmat/.../mlkem.py).
    checked = check_pair(algorithms.by_name("ML-KEM-512"), PycaImplementation())
    assert checked.refused and checked.problem is not None
    assert checked.problem.kind == "not offered"
    (row,) = self_checks(algorithms.by_name("ML-KEM-512"), PycaImplementation())
    assert (row.check, row.status) == ("all", "not offered")


def test_passed_checks_are_what_speed_stores_and_verify_lists() -> None:
    alg, impl = algorithms.by_name("X25519"), PycaImplementation()
    checked = check_pair(alg, impl)
    assert checked.passed and checked.checks
    rows = self_checks(alg, impl)
    assert [r.check for r in rows] == list(checked.verification.checks)
    assert all(r.status == "passed" for r in rows)


@pytest.mark.parametrize("name", ["liboqs-python", "cryptography"])
def test_each_library_answers_its_own_known_answer_checks(name: str) -> None:
    """ML-KEM-768's KAT decaps through each binding: the vectors come from checks.kat, the
    answers from the implementation's vector_checks."""
    (impl,) = select([name])
    checks = impl.vector_checks(algorithms.by_name("ML-KEM-768"))
    assert callable(checks["KAT decaps"])
    outcomes = {o.check: o for o in known_answer_checks(algorithms.by_name("ML-KEM-768"),
                                                        impl)}
    assert outcomes["KAT decaps"].status == "passed"


def test_an_implementation_without_vectors_says_why() -> None:
    (impl,) = select(["python"])
    (outcome,) = known_answer_checks(algorithms.by_name("SHA-256"), impl)
    assert outcome.status == "not offered"
    assert outcome.detail == "pqbench has no known-answer vectors for SHA-256 through python"
