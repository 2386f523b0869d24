"""Formula injection: labels and build names a spreadsheet would run (`=HYPERLINK(...)`,
`+cmd|...`) reach `runs --csv`, `history --csv` and `compare --csv` as text, through the
one CSV writer, and every number stays a number. The
runs are stored as an import would store them; pqbench runs as a user runs it."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from pqbench.data.store import Store
from pqbench.views.delimited import FORMULA_STARTS
from tests.helpers import run_cli
from tests.helpers.runs import environment, make_runs

pytestmark = pytest.mark.process

BEFORE, AFTER = '=HYPERLINK("http://e.vil","x")', "+cmd|' /C calc'!A0"
BUILD = "@SUM(1+1)*cmd|' /C calc'!A0"


def _rows(*args: str) -> list[dict[str, str]]:
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    return list(csv.DictReader(io.StringIO(done.stdout)))


def _no_formula(rows: list[dict[str, str]]) -> None:
    for row in rows:
        for column, cell in row.items():
            assert not cell.lstrip(" ").startswith(FORMULA_STARTS) or _number(cell), \
                (column, cell)


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_every_csv_writes_a_formula_as_text(tmp_path: Path) -> None:
    db = str(tmp_path / "csv.db")
    env = environment(os_build=BUILD)
    Store.open(db).save_runs([*make_runs("a", 3, seed=1, label=BEFORE, env=env),
                              *make_runs("b", 3, seed=2, label=AFTER, env=env, factor=0.8,
                                         start_day=2)])
    listed = _rows("runs", "--csv", "--db", db)
    assert {row["label"] for row in listed} == {f"'{BEFORE}", f"'{AFTER}"}
    assert {row["os_build"] for row in listed} == {f"'{BUILD}"}
    history = _rows("history", "ML-KEM-768", "-i", "liboqs", "-o", "encaps", "--by", "label",
                    "--csv", "--db", db)
    assert [row["build"] for row in history] == [f"'{BEFORE}", f"'{AFTER}"]
    compared = _rows("compare", "--by", "label", BEFORE, AFTER, "--csv", "--db", db)
    assert {(row["before_name"], row["after_name"]) for row in compared} == \
        {(f"'{BEFORE}", f"'{AFTER}")}
    # A number stays a number: the speedup of a row 0.8 times as fast, and its interval.
    encaps = next(row for row in compared if row["operation"] == "encaps")
    assert float(encaps["speedup_ci_low"]) <= float(encaps["speedup"]) <= \
        float(encaps["speedup_ci_high"]) < 1
    for rows in (listed, history, compared):
        _no_formula(rows)
