"""History series over builds: pooled points, a planted step pinned to its build, notes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pqbench.errors import ComparisonError
from pqbench.history import history
from pqbench.store import Store
from tests.conftest import run_cli
from tests.tests_data import environment, make_run

BUILDS = ("18A391", "18B75", "18C54", "18D42", "18E226", "18F132", "18G84")


def _runs() -> list:
    return [make_run(f"r{i}", seed=i, started_at=f"2026-01-0{i + 1}",
                     env=environment(os_build=build),
                     factors={"AES-256-XTS": 20.0 if i >= 5 else 1.0})
            for i, build in enumerate(BUILDS)]


def test_step_is_pinned_to_the_first_build_at_the_new_level() -> None:
    (aes,) = history(_runs(), "aes-256-xts")
    assert [p.build for p in aes.points] == list(BUILDS)
    assert [(s.build, round(s.ratio)) for s in aes.steps] == [("18F132", 20)]
    (kem,) = history(_runs(), "ML-KEM-768", operation="encaps")
    assert kem.steps == ()


def test_notes_and_filters() -> None:
    series = history(_runs(), "ML-KEM-768", implementation="liboqs",
                     annotations={"18F132": ["AES-NI enabled"]})
    assert {s.operation for s in series} == {"encaps", "decaps"}
    assert series[0].points[5].notes == ("AES-NI enabled",)
    with pytest.raises(ComparisonError, match="measured: AES-256-XTS"):
        history(_runs(), "RSA-2048")


def test_cli_history_and_annotate(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    store = Store.open(str(db))
    for run in _runs():
        store.save_run(run)
    store.close()
    done = run_cli("annotate", "18F132", "AES-NI enabled in the kernel", "--db", str(db))
    assert done.returncode == 0, done.stderr
    done = run_cli("history", "AES-256-XTS", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    (series,) = json.loads(done.stdout)["series"]
    assert series["steps"][0]["build"] == "18F132"
    assert series["points"][5]["notes"] == ["AES-NI enabled in the kernel"]
    table = run_cli("history", "AES-256-XTS", "--db", str(db))
    assert "AES-NI enabled in the kernel" in table.stdout and "▲" in table.stdout
    missing = run_cli("history", "nope", "--db", str(db))
    assert missing.returncode == 1 and "no stored run measured nope" in missing.stderr
