"""The smaller frictions a new user met, each with the test that keeps it fixed: advice
already followed, repeated options, a warning per algorithm, percentages that contradict
themselves, words that say what a figure is."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pqbench.data.store import Store
from tests.helpers import invoke
from tests.helpers.runs import make_runs

#: One row with no family and no kind of its own in the store: its spread leans on the
#: default prior whatever its own runs are.
LONE = (("ML-KEM-768", "liboqs", "encaps", None, 60_000.0),)


def _compare_after(tmp_path: Path, calibrated: bool) -> str:
    db = tmp_path / ("calibrated.db" if calibrated else "plain.db")
    store = Store.open(str(db))
    series = make_runs("cal", 5, seed=11, drift=0.02, label="calibration", rows=LONE)
    if calibrated:
        series = [replace(run, settings={**run.settings, "calibration": {
            "series": "s1", "index": i + 1, "runs": 5}}) for i, run in enumerate(series)]
    store.save_runs(series)
    store.save_runs(make_runs("a", 1, seed=12, start_day=2, rows=LONE, label="a"))
    store.save_runs(make_runs("b", 1, seed=13, start_day=3, rows=LONE, label="b"))
    store.close()
    done = invoke("compare", "a0", "b0", "--db", str(db), env={"COLUMNS": "120"})
    assert done.returncode == 0, done.stderr
    return " ".join((done.stdout + done.stderr).split())


def test_compare_after_calibrating_does_not_advise_calibrating(tmp_path: Path) -> None:
    """Five calibration runs of the row are stored: the verdict rests on them (and the
    prior, the row having no family), and no line asks for `pqbench calibrate` again."""
    after = _compare_after(tmp_path, calibrated=True)
    assert "judged against this machine's run-to-run spread" in after
    assert "pqbench calibrate" not in after
    # The same store without the calibration mark: the advice is right there.
    before = _compare_after(tmp_path, calibrated=False)
    assert "`pqbench calibrate` sharpens it" in before
