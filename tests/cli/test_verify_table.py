"""`pqbench verify --all` on a terminal 80 and 120 columns wide: every check of every
implementation on a row of three lines at most (two at 120), its status whole, and its
detail on the row or in a numbered note below the table, as `--json` reports it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_cli
from tests.helpers.terminal import drawn_table, in_terminal, notes_below

pytestmark = pytest.mark.process


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, str]]:
    done = run_cli("verify", "--json")
    assert done.returncode == 0, done.stderr
    results: list[dict[str, str]] = json.loads(done.stdout)["results"]
    assert {r["status"] for r in results} >= {"passed", "not offered"}
    return results


@pytest.mark.parametrize(("columns", "tallest"), [(80, 3), (120, 2)])
def test_every_check_is_on_a_short_row_with_its_status_and_detail(
        reported: list[dict[str, str]], columns: int, tallest: int, tmp_path: Path) -> None:
    drawn = in_terminal("verify", "--all", columns=columns, db=tmp_path / "v.db")
    table = drawn_table(drawn, "verification", key="algorithm")
    assert "not shown at" not in drawn  # the detail is never left out
    assert max(table.heights) <= tallest, (columns, table.heights)
    notes = notes_below(drawn)
    impl = next(name for name in table.names if name.startswith("impl"))
    assert [(row["algorithm"], row[impl], row["check"], row["status"],
             notes.get(row["detail"], row["detail"])) for row in table.rows] == [
        (r["algorithm"], r["implementation"], r["check"], r["status"], r["detail"])
        for r in reported]
