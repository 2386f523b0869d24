"""How `pqbench ab` shares its time budget: each row gets what is left of max_seconds
over the rows still to come that both sides offer (ab/session.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pqbench.sessions import sides
from pqbench.sessions.ab.session import Session, Settings
from tests.helpers.runs import fake_worker

pytestmark = pytest.mark.process

ROWS = [["X25519", "cryptography", "derive", None], ["X25519", "cryptography", "keygen", None],
        ["ECDH-P-256", "cryptography", "derive", None]]


def test_the_first_of_three_shared_rows_gets_a_third_of_the_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two fake workers offer the same three rows. Each row's pairs are recorded, not run
    (the budget is what is under test, not the timing): the first row's budget is
    max_seconds / 3, and with no time spent the next ones get what is left over the rows
    still to come, 1/2 and then all of it."""
    budgets: list[tuple[Any, float]] = []

    def record(self: Session, row: Any, ready_a: Any, ready_b: Any, budget: float,
               *_rest: Any) -> None:
        budgets.append((row, budget))

    monkeypatch.setattr(Session, "_pairs", record)
    side_a = sides.parse([fake_worker(tmp_path, ROWS)], "a")
    side_b = sides.parse([fake_worker(tmp_path, ROWS)], "b")
    settings = Settings(algorithms=("X25519", "ECDH-P-256"), max_seconds=300.0,
                        round_seconds=0.01)
    outcome = Session(side_a, side_b, settings, "pqbench ab").run()
    assert outcome.error is None and outcome.status == "complete"
    assert [list(row) for row, _ in budgets] == ROWS
    first, second, third = (budget for _, budget in budgets)
    # Only start-up work (a prepare per side) passes between the looks at the clock.
    assert first == pytest.approx(100.0, abs=1.0)
    assert second == pytest.approx(300.0 / 2, abs=1.5)
    assert third == pytest.approx(300.0, abs=3.0)


def test_a_row_one_side_lacks_takes_no_share(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A row only side A offers is timed alone for a few rounds, outside the budget: the
    two shared rows split it in halves."""
    budgets: list[float] = []

    def record(self: Session, row: Any, ready_a: Any, ready_b: Any, budget: float,
               *_rest: Any) -> None:
        budgets.append(budget)

    def alone(self: Session, side: Any, row: Any, ready: Any) -> None:
        return None

    monkeypatch.setattr(Session, "_pairs", record)
    monkeypatch.setattr(Session, "_alone", alone)
    side_a = sides.parse([fake_worker(tmp_path, ROWS)], "a")
    side_b = sides.parse([fake_worker(tmp_path, [ROWS[0], ROWS[2]])], "b")
    outcome = Session(side_a, side_b, Settings(algorithms=("X25519",), max_seconds=60.0),
                      "pqbench ab").run()
    assert outcome.error is None
    assert budgets[0] == pytest.approx(30.0, abs=0.6)
    assert budgets[1] == pytest.approx(60.0, abs=1.2)
