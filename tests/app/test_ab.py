"""`pqbench ab`'s decisions over a session's outcome, called directly: what is kept, what
the answer compares, which problems are shown once, and how the command ends."""

from __future__ import annotations

import dataclasses

import pytest

from pqbench.app import ab
from pqbench.data.record.results import Problem, Run
from pqbench.platform.errors import UsageError
from pqbench.sessions.ab.client import WorkerError
from pqbench.sessions.ab.session import Outcome, Settings
from tests.helpers.runs import make_run

SETTINGS = Settings(algorithms=("SHA-256",))
LACKS = Problem("ML-KEM-768", "libcrypto", "not offered", "needs OpenSSL 3.5")
FAILED = Problem("X25519", "liboqs", "failed verification", "wrong secret")


def _outcome(a: Run | None = None, b: Run | None = None, *, status: str = "complete",
             error: str | None = None) -> Outcome:
    a = a or make_run("a1", seed=1, label="old")
    b = b or make_run("b1", seed=2, label="new", factor=1.5)
    return Outcome(a, b, status, error, ())


def _empty(run_id: str, *problems: Problem) -> Run:
    return dataclasses.replace(make_run(run_id, seed=3), measurements=(), problems=problems)


def test_runs_are_kept_when_either_side_measured_or_noted_anything() -> None:
    outcome = _outcome()
    assert ab.kept(outcome, SETTINGS) == (outcome.run_a, outcome.run_b)
    noted = _outcome(_empty("a2", LACKS), _empty("b2"))
    assert ab.kept(noted, SETTINGS) == (noted.run_a, noted.run_b)


def test_nothing_kept_is_the_workers_error_or_nothing_offered_or_an_interruption() -> None:
    with pytest.raises(WorkerError, match="worker died"):
        ab.kept(_outcome(_empty("a"), _empty("b"), error="worker died"), SETTINGS)
    with pytest.raises(UsageError, match="nothing to measure: no side offers SHA-256"):
        ab.kept(_outcome(_empty("a"), _empty("b")), SETTINGS)
    assert ab.kept(_outcome(_empty("a"), _empty("b"), status="interrupted"), SETTINGS) is None


def test_the_answer_compares_the_rows_both_sides_measured() -> None:
    found = ab.answer(_outcome(), None, "/tmp/r.db")
    assert found.comparison is not None
    assert (found.comparison.before_name, found.comparison.after_name) == ("old", "new")
    assert len(found.comparison.rows) == 4  # every row of ROWS, measured on both sides
    assert found.session["runs"] == ["a1", "b1"] and found.session["status"] == "complete"
    assert found.stored == "stored as runs a1 (A) and b1 (B) in /tmp/r.db"
    assert found.ending is None


def test_no_row_in_common_is_no_comparison() -> None:
    a = make_run("a1", seed=1, rows=(("SHA-256", "python", "hash", 64, 1e6),))
    b = make_run("b1", seed=2, rows=(("SHA-512", "python", "hash", 64, 1e6),))
    assert not ab.shared(a, b) and ab.shared(a, a)
    found = ab.answer(_outcome(a, b), None, "db")
    assert found.comparison is None and "runs" not in found.session
    nothing = ab.answer(_outcome(_empty("a"), _empty("b"), status="interrupted"), None, "db")
    assert nothing.stored == "nothing was measured, so nothing was stored"
    # ... and the ending does not then say that the completed pairs were stored.
    assert nothing.ending is not None
    assert nothing.ending.message == "interrupted before any pair finished"
    noted = ab.answer(_outcome(_empty("a", LACKS), _empty("b"), status="interrupted"), None,
                      "db")
    assert noted.stored.startswith("stored as runs a (A) and b (B)")
    assert noted.ending is not None
    assert noted.ending.message == "interrupted before any pair finished"


def test_problems_both_sides_share_are_shown_once() -> None:
    a, b = _empty("a", LACKS), _empty("b", LACKS)
    assert ab.problems(a, b) == (((LACKS,), "both sides"),)
    assert ab.problems(_empty("a"), _empty("b")) == ()
    assert ab.problems(a, _empty("b")) == (((LACKS,), "side A"),)
    assert ab.problems(a, _empty("b", FAILED)) == (((LACKS,), "side A"), ((FAILED,), "side B"))


def test_the_ending_is_the_error_then_the_interruption_then_a_failed_check() -> None:
    assert ab.ending(_outcome(error="worker 3 died")) == ab.Ending("worker 3 died", 1)
    stopped = ab.ending(_outcome(status="interrupted"))
    assert stopped is not None and stopped.status in (130, 143)
    assert stopped.message == "interrupted; the completed pairs were stored"
    failed = ab.ending(_outcome(b=_empty("b", FAILED)))
    assert failed == ab.Ending(
        "an implementation failed its checks and was not timed (see above)", 1)
    assert ab.ending(_outcome(b=_empty("b", LACKS))) is None
