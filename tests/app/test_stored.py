"""Which stored run a command means when none is named, and what `pqbench runs` lists,
called directly on a store of made runs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pqbench.app import stored
from pqbench.data.store import Store
from pqbench.platform.errors import NothingStored, UsageError
from tests.helpers.runs import make_run


def _save(db: Path, *days: int) -> None:
    store = Store.open(str(db))
    for day in days:
        store.save_run(make_run(f"2026010{day}-r", seed=day,
                                started_at=f"2026-01-0{day}T00:00:00+00:00"))
    store.close()


def test_no_run_named_is_the_newest_not_the_oldest(tmp_path: Path) -> None:
    """Stored A then B: `show` with no run shows B, whatever order they were saved in."""
    _save(tmp_path / "r.db", 1, 3, 2)
    store = Store.open(str(tmp_path / "r.db"))
    assert stored.stored_run(store, None).run_id == "20260103-r"
    assert stored.stored_run(store, "20260101").run_id == "20260101-r"  # a unique prefix
    assert stored.newest(store, lambda run: run.run_id != "20260103-r") == "20260102-r"


def test_an_empty_store_is_said_not_failed(tmp_path: Path) -> None:
    store = Store.open(str(tmp_path / "r.db"))
    with pytest.raises(NothingStored, match=r"no run stored in .*r\.db yet; `pqbench speed`"):
        stored.stored_run(store, None)
    with pytest.raises(NothingStored, match="nothing of that kind"):
        stored.newest(store, none="nothing of that kind in {location}")


def test_the_sides_of_an_ab_session_started_together_end_with_b(tmp_path: Path) -> None:
    store = Store.open(str(tmp_path / "r.db"))
    at = "2026-01-05T00:00:00+00:00"
    for side, run_id in (("b", "s-b"), ("a", "s-a")):
        run = make_run(run_id, seed=1, started_at=at)
        store.save_run(replace(run, settings={**run.settings, "ab": {"side": side}}))
    assert stored.newest(store) == "s-b"


def test_runs_lists_the_newest_first_and_counts_the_older(tmp_path: Path) -> None:
    _save(tmp_path / "r.db", 1, 2, 3, 4)
    found = stored.inventory(str(tmp_path / "r.db"))
    assert [r.run_id for r in found.runs] == ["20260101-r", "20260102-r", "20260103-r",
                                              "20260104-r"]
    shown, older = found.newest(2, False)
    assert ([r.run_id for r in shown], older) == (["20260104-r", "20260103-r"], 2)
    assert found.newest(None, True)[1] == 0
    assert found.newest(4, False)[1] == 0 and found.newest(3, False)[1] == 1
    assert found.algorithms(shown)["20260104-r"][0] == "ML-KEM-768"


def test_runs_shows_twenty_by_default(tmp_path: Path) -> None:
    _save(tmp_path / "r.db", 1)
    found = stored.inventory(str(tmp_path / "r.db"))
    many = replace(found, runs=found.runs * (stored.RUNS_SHOWN + 1))
    shown, older = many.newest(None, False)
    assert (len(shown), older) == (stored.RUNS_SHOWN, 1)


def test_no_database_yet_lists_nothing_and_creates_nothing(tmp_path: Path) -> None:
    db = tmp_path / "none.db"
    found = stored.inventory(str(db))
    assert (found.runs, found.store) == ([], None)
    assert found.location.endswith("none.db") and not db.exists()
    assert found.algorithms([]) == {}


def test_last_and_all_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="choose one of --last N and --all"):
        stored.inventory(str(tmp_path / "none.db"), 3, True)


def test_the_newest_run_is_found_among_the_newest_few_whatever_ties_at_the_cut(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`newest` reads the NEWEST_FIRST newest headers first: whatever that number, and
    wherever runs that started at one moment (an `ab` session's two sides, with another
    run) fall about the cut, it names the run a reading of every header names, for every
    `wanted`, one that keeps none of the newest too. A store of many runs answers from
    that many rows, not from all of them."""
    from tests.helpers.reads import counting_store
    from tests.helpers.runs import make_ab_session

    db = str(tmp_path / "many.db")
    store = Store.open(db)
    moments = ["2026-01-01", "2026-01-02", "2026-01-02", "2026-01-03", "2026-01-03",
               "2026-01-03", "2026-01-04"]
    runs = [make_run(f"{moment}-{index}", seed=index, started_at=f"{moment}T00:00:00+00:00",
                     label="odd" if index % 2 else None)
            for index, moment in enumerate(moments)]
    side_a, side_b = make_ab_session("s", seed=3)
    at = "2026-01-03T00:00:00+00:00"
    # Their ids sort against their sides (b's before a's) and before the other runs of
    # that moment: run_order puts those first, then A, then B; the newest-first read
    # meets them last.
    sides = [replace(side_a, run_id="01-a", started_at=at),
             replace(side_b, run_id="00-b", started_at=at)]
    store.save_runs([*runs, *sides])
    every = store.load_runs(rows_too=False, fingerprints=False)
    wanted_ones = {"any": lambda run: True, "labelled": lambda run: run.label == "odd",
                   "oldest": lambda run: run.started_at < "2026-01-02",
                   "a side": lambda run: run.run_id == "01-a",
                   "not the last day": lambda run: run.started_at < "2026-01-04"}
    for first in range(1, len(every) + 2):
        monkeypatch.setattr(stored, "NEWEST_FIRST", first)
        for name, wanted in wanted_ones.items():
            expected = sorted((r for r in every if wanted(r)), key=stored.run_order)[-1]
            assert stored.newest(store, wanted) == expected.run_id, (first, name)
    monkeypatch.setattr(stored, "NEWEST_FIRST", 3)
    assert stored.newest(store) == "2026-01-04-6"
    counted, reads = counting_store(db)
    reads.clear()
    assert stored.newest(counted) == "2026-01-04-6"
    assert reads.rows <= 3 + 2  # the three newest headers, beside the store's own checks


def test_two_runs_started_within_one_second_keep_their_order(location: str) -> None:
    """A script's two short runs start within one second: their starts, kept to the
    millisecond, order them, not their ids' random suffixes (here in the other order), and
    a run stored to the second by an older pqbench comes before those of its second; in
    SQLite's order as in PostgreSQL's."""
    from datetime import UTC, datetime

    from pqbench.data.record.runs import new_run

    def made(run_id: str, millisecond: int) -> object:
        started = datetime(2026, 1, 2, 3, 4, 5, millisecond * 1000, tzinfo=UTC)
        return new_run("speed", started, settings={}, environment={}, run_id=run_id,
                       finished=started, measurements=make_run("m", seed=1).measurements)

    first, second = made("20260102T030405Z-ffffff", 120), made("20260102T030405Z-000000", 870)
    older = make_run("20260102T030405Z-888888", seed=2, started_at="2026-01-02T03:04:05+00:00")
    store = Store.open(location)
    for run in (second, older, first):
        store.save_run(run)  # type: ignore[arg-type]
    assert [run.run_id for run in store.load_runs()] == [
        "20260102T030405Z-888888", "20260102T030405Z-ffffff", "20260102T030405Z-000000"]
    assert stored.newest(store) == "20260102T030405Z-000000"
    assert first.started_at == "2026-01-02T03:04:05.120+00:00"  # type: ignore[attr-defined]
    from pqbench.app import compare

    before, after, _ = compare.two_runs(store, [])
    assert (before.run_id, after.run_id) == ("20260102T030405Z-ffffff",
                                             "20260102T030405Z-000000")
