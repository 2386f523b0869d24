"""`pqbench show`'s decisions, called directly on a store of made runs: which run, and
the figures each kind is shown with."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pqbench.analysis.figures import run_figures
from pqbench.app import show
from pqbench.data.record.results import Measurement
from pqbench.data.record.rounds import LoopResult
from pqbench.data.store import Store
from tests.helpers.runs import KEX_ROWS, make_run


def _store(tmp_path: Path, *runs: object) -> Store:
    store = Store.open(str(tmp_path / "r.db"))
    for run in runs:
        store.save_run(run)  # type: ignore[arg-type]
    return store


def _paired(run_id: str, day: int, **settings: object) -> object:
    run = make_run(run_id, seed=day, rows=KEX_ROWS, started_at=f"2026-01-0{day}T00:00:00+00:00")
    return replace(run, settings={**run.settings, "interleaved": True, **settings})


def test_no_run_named_shows_the_newest(tmp_path: Path) -> None:
    store = _store(tmp_path, _paired("20260101-a", 1), _paired("20260102-b", 2))
    assert show.show(store, None).run.run_id == "20260102-b"
    assert show.show(store, "20260101-a").run.run_id == "20260101-a"


def test_a_speed_run_is_shown_with_its_figures_and_the_mission_s_ratios(tmp_path: Path) -> None:
    store = _store(tmp_path, _paired("20260101-a", 1))
    shown = show.show(store, None)
    expected = run_figures(store.load_run("20260101-a"))
    assert shown.figures == expected
    assert shown.ratios == list(expected.mission) and shown.ratios
    assert shown.note is None


def test_one_side_of_an_ab_session_shows_no_ratio_of_its_own(tmp_path: Path) -> None:
    store = _store(tmp_path, _paired("20260101-a", 1, ab={"side": "a"}))
    shown = show.show(store, None)
    assert shown.figures is not None and shown.ratios == []
    assert shown.note is not None and "one side of a `pqbench ab` session" in shown.note


def test_csv_and_the_runs_of_other_kinds_work_out_no_figures(tmp_path: Path) -> None:
    store = _store(tmp_path, _paired("20260101-a", 1),
                   replace(make_run("20260102-t", seed=2), kind="tls"))
    assert show.show(store, "20260101-a", figures=False) == show.Shown(
        store.load_run("20260101-a"))
    tls = show.show(store, "20260102-t")
    assert (tls.figures, tls.ratios, tls.note) == (None, [], None)


def test_a_files_run_is_shown_with_its_file_ratios(tmp_path: Path) -> None:
    """Two cycles of reading a 1 MB file and hashing it: one ratio, hashing against
    reading, over both pairs."""
    rows = tuple(Measurement(algorithm, "os" if operation == "read" else "hashlib", operation,
                             tuple(LoopResult(1_000_000, 1_000_000, None) for _ in range(2)),
                             block_size=1, unit="byte",
                             attributes={"path": "/data/f.bin", "size": 1_000_000})
                 for operation, algorithm in (("read", "read"), ("hash", "SHA-256")))
    store = _store(tmp_path, replace(make_run("20260101-f", seed=1), kind="files",
                                     measurements=rows))
    shown = show.show(store, None)
    assert shown.figures is None and shown.note is None
    (ratio,) = shown.ratios
    assert (ratio.kind, ratio.pairs) == ("reading", 2)
