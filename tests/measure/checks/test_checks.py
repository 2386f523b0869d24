"""One pre-timing check for speed, the ab worker and verify; known answers through each
implementation's own interface."""

from __future__ import annotations

from typing import Any

import pytest

from pqbench.catalog import algorithms
from pqbench.libraries.implementations import select
from pqbench.libraries.implementations.pyca import PycaImplementation
from pqbench.measure.checks.kat import known_answer_checks
from pqbench.measure.checks.pair import check_pair
from pqbench.measure.checks.verify import self_checks
from pqbench.measure.speed import suite


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
    recorder = suite.SuiteRecorder()
    tasks = suite.plan([alg], [impl], suite.SpeedSettings(seconds=0.01, rounds=1))
    suite.execute(tasks, suite.SpeedSettings(seconds=0.01, rounds=1), recorder)
    assert recorder.measurements == [] and recorder.verifications == []
    assert [p.kind for p in recorder.problems] == ["failed verification"]


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


@pytest.mark.slow
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


# --- pqbench verify on the command line ---------------------------------------------------


def _verify(*args: str) -> Any:
    from typer.testing import CliRunner

    from pqbench.cli import app

    return CliRunner().invoke(app, ["verify", *args])


@pytest.mark.slow
def test_verify_prints_one_summary_line_and_every_check_with_all() -> None:
    import json

    document = json.loads(_verify("x25519", "ml-kem-768", "-i", "cryptography",
                                  "--json").stdout)
    statuses = [o["status"] for o in document["results"]]
    assert statuses and "failed" not in statuses
    summary = _verify("x25519", "ml-kem-768", "-i", "cryptography")
    assert summary.exit_code == 0, summary.output
    (line,) = summary.stdout.splitlines()
    assert line.startswith(f"verify: {len(statuses)} checks of 2 pairs in ")
    offered = statuses.count("not offered")
    assert offered  # ML-KEM-768 KAT encaps: cryptography cannot take the KAT seed
    assert line.endswith(f" s: {statuses.count('passed')} passed, {offered} not offered, "
                         "0 failed (--all lists every check)")
    for flag in ("--all", "-v"):
        full = _verify("x25519", "ml-kem-768", "-i", "cryptography", flag)
        assert full.exit_code == 0, full.output
        listed = [o["check"] for o in document["results"]]
        table = full.stdout.split("verify: ")[0]
        assert all(check in table for check in listed)
        assert full.stdout.splitlines()[-1].endswith("0 failed")


def test_verify_shows_the_failed_checks_and_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    _wrong_secret(monkeypatch)
    result = _verify("ml-kem-768", "x25519", "-i", "cryptography")
    assert result.exit_code == 1
    assert "failed checks" in result.stdout and "self-check" in result.stdout
    assert "X25519" not in result.stdout.split("verify: ")[0]  # only what failed
    assert result.stdout.splitlines()[-1].endswith(", 1 failed (--all lists every check)")
    assert "1 check(s) failed" in result.stderr
