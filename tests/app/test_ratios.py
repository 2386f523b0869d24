"""`pqbench ratios`' decisions, called directly on a store of made runs: the run meant
when none is named, the row --relative-to names, the ratios the table shows, the note."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pqbench.app import ratios
from pqbench.data.record.results import Run
from pqbench.data.store import Store
from pqbench.platform.errors import NothingStored, UsageError
from tests.helpers.runs import KEX_ROWS, make_run


def _run(run_id: str, day: int, *, interleaved: bool = True, **settings: object) -> Run:
    run = make_run(run_id, seed=day, rows=KEX_ROWS, started_at=f"2026-01-{day:02d}T00:00:00+00:00")
    return replace(run, settings={**run.settings, "interleaved": interleaved, **settings})


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(str(tmp_path / "r.db"))


def test_no_run_named_is_the_newest_paired_speed_run(store: Store) -> None:
    for run in (_run("20260101-a", 1), _run("20260103-c", 3, interleaved=False),
                _run("20260102-b", 2)):
        store.save_run(run)
    assert ratios.ratios(store, None, None, False).run.run_id == "20260102-b"
    assert ratios.ratios(store, "20260103-c", None, False).run.run_id == "20260103-c"


def test_no_paired_run_stored_is_said_not_failed(store: Store) -> None:
    store.save_run(_run("20260101-a", 1, interleaved=False))
    with pytest.raises(NothingStored, match=r"no speed run with paired rows stored in .*r\.db"):
        ratios.ratios(store, None, None, False)


def test_the_table_shows_the_mission_unless_all_or_relative_to_asks(store: Store) -> None:
    store.save_run(_run("20260101-a", 1))
    mission = ratios.ratios(store, None, None, False)
    every = ratios.ratios(store, None, None, True)
    assert mission.note is None
    assert mission.shown and len(mission.shown) < len(every.shown) == len(every.found)
    assert mission.more == len(mission.found) - len(mission.shown) > 0
    assert every.more == 0
    asked = ratios.ratios(store, None, "mlkem768", False)
    assert asked.shown and all(r.denominator.algorithm == "ML-KEM-768" for r in asked.shown)
    assert len(asked.found) > len(mission.found)


def test_a_pairing_two_kinds_of_ratio_hold_alike_is_shown_once(store: Store) -> None:
    store.save_run(_run("20260101-a", 1))
    found = ratios.ratios(store, None, "x25519", True)
    names = [r.name for r in found.shown]
    assert len(names) == len(set(names))
    assert len(found.shown) <= len(found.found)


def test_relative_to_names_a_row_of_the_run(store: Store) -> None:
    run = _run("20260101-a", 1)
    assert ratios.reference(run, "ml-kem-512") == "ML-KEM-512"
    with pytest.raises(UsageError, match=r"--relative-to sha256: run 20260101-a has no rows of "
                                         r"it \(ML-KEM-512, ML-KEM-768, X25519\)"):
        ratios.reference(run, "sha256")
    with pytest.raises(UsageError, match="is a `files hash` run"):
        ratios.reference(replace(run, kind="files"), "ml-kem-512")


def test_a_run_of_another_kind_has_no_ratios(store: Store) -> None:
    store.save_run(replace(_run("20260101-a", 1), kind="memory"))
    with pytest.raises(UsageError, match="run 20260101-a is a memory run; ratios pair"):
        ratios.ratios(store, "20260101-a", None, False)


def test_a_run_whose_rows_pair_with_nothing_here_says_why() -> None:
    run = _run("r", 1)
    assert ratios.none_paired(run, [], 9) is None
    assert "one side of a `pqbench ab` session" in str(
        ratios.none_paired(replace(run, settings={"ab": {"side": "a"}}), [], 9))
    assert "took one pass per file" in str(ratios.none_paired(replace(run, kind="files"), [], 1))
    assert "one row after another" in str(ratios.none_paired(run, [], 0))
    assert ratios.paired_speed_run(run)
    assert not ratios.paired_speed_run(_run("r", 1, interleaved=False))
    assert not ratios.paired_speed_run(replace(run, kind="files"))
