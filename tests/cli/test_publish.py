"""`pqbench publish` as a user runs it: the site written, a second publish rewriting
nothing, and every bad input a clear message with a non-zero exit, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from pqbench.data.store import Store
from tests.helpers import invoke, run_cli
from tests.helpers.fleet import Fleet


@pytest.fixture
def fleet_db(tmp_path: Path) -> Path:
    path = tmp_path / "fleet.db"
    Store.open(str(path)).save_runs(list(Fleet(machines=2, builds=3, runs=2).all_runs()))
    return path


def test_publish_writes_the_site_then_only_what_changed(fleet_db: Path, tmp_path: Path
                                                        ) -> None:
    out = tmp_path / "site"
    first = invoke("publish", "--db", str(fleet_db), "--out", str(out))
    assert first.returncode == 0, first.stderr
    assert "2 of 2 machines computed afresh" in first.stderr
    assert (out / "index.html").is_file() and (out / "assets" / "plotly.min.js").is_file()
    assert out.joinpath("index.html").resolve().as_uri() in first.stderr
    Store.open(str(fleet_db)).save_runs([next(Fleet(machines=2, builds=3, runs=2)
                                              .runs_of(1, 2, start=5))])
    second = invoke("publish", "--db", str(fleet_db), "--out", str(out))
    assert second.returncode == 0, second.stderr
    assert "1 of 2 machines computed afresh" in second.stderr
    third = invoke("publish", "--db", str(fleet_db), "--out", str(out))
    assert "wrote 0 of" in third.stderr and "0 of 2 machines" in third.stderr


@pytest.mark.parametrize("case", ["a file", "someone else's folder", "no database"])
def test_bad_input_gets_a_message_and_a_non_zero_exit(case: str, fleet_db: Path,
                                                      tmp_path: Path) -> None:
    out, db = tmp_path / "site", fleet_db
    if case == "a file":
        out = tmp_path / "index.html"
        out.write_text("mine")
    elif case == "someone else's folder":
        out.mkdir()
        (out / "thesis.tex").write_text("mine")
    else:
        db = tmp_path / "missing.db"
    done = invoke("publish", "--db", str(db), "--out", str(out))
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and done.stderr.strip()
    expected = {"a file": "is a file", "someone else's folder": "did not write",
                "no database": "missing.db"}[case]
    assert expected in " ".join(done.stderr.split())
    if case in ("a file", "someone else's folder"):
        assert "mine" in ((out / "thesis.tex") if out.is_dir() else out).read_text()


def test_an_empty_store_is_a_note_and_writes_nothing(tmp_path: Path) -> None:
    """As `pqbench runs` says it: nothing stored is no failure (exit 0), and no site."""
    Store.open(str(tmp_path / "empty.db"))
    done = invoke("publish", "--db", str(tmp_path / "empty.db"), "--out",
                  str(tmp_path / "site"))
    assert done.returncode == 0 and "no runs stored" in done.stderr
    assert not (tmp_path / "site").exists()


def test_an_unwritable_folder_is_named(fleet_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    out.mkdir()
    (out / "publish-state.json").write_text("{}")
    (out / "index.html").mkdir()  # a folder where the page goes: cannot be replaced
    done = invoke("publish", "--db", str(fleet_db), "--out", str(out))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "cannot write the site to" in done.stderr


@pytest.mark.process
def test_publish_runs_as_a_command(fleet_db: Path, tmp_path: Path) -> None:
    done = run_cli("publish", "--db", str(fleet_db), "--out", str(tmp_path / "site"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "regressions.html").is_file()
