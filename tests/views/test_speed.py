"""A speed run as `pqbench speed` prints it, from its answer: --json with every ratio,
--csv with its rows, else the tables with the rows worth a second look and where it was
stored; before measuring, the notes and warnings of the plan."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

import pytest

from pqbench.app import speed
from pqbench.measure.speed.suite import SpeedSettings
from pqbench.views import speed as speed_views
from tests.helpers.runs import KEX_ROWS, make_run


def _answer() -> speed.Answer:
    run = make_run("20260101-r", seed=3, rows=KEX_ROWS)
    run = replace(run, settings={**run.settings, "interleaved": True})
    looked = replace(run.measurements[0], attributes={"helper_threads": True})
    return speed.answer(replace(run, measurements=(looked, *run.measurements[1:])),
                        "ML-KEM-512")


def test_json_is_the_run_with_every_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    answer = _answer()
    speed_views.show(answer, "/x/r.db", json_output=True, csv_output=False)
    document = json.loads(capsys.readouterr().out)
    assert document["run_id"] == "20260101-r"
    assert len(document["ratios"]) == len(answer.figures.ratios) + len(answer.asked) > 0


def test_csv_is_the_run_s_rows(capsys: pytest.CaptureFixture[str]) -> None:
    speed_views.show(_answer(), "/x/r.db", json_output=False, csv_output=True)
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == len(KEX_ROWS)
    assert {row["run_id"] for row in rows} == {"20260101-r"}


def test_the_tables_say_what_deserves_a_second_look_and_where_it_is_stored(
        capsys: pytest.CaptureFixture[str]) -> None:
    speed_views.show(_answer(), "/x/r.db", json_output=False, csv_output=False)
    out, err = capsys.readouterr()
    said = " ".join((out + err).split())
    assert "ML-KEM-768" in out and "relative to the row asked for" in out
    assert "than the timed thread: ML-KEM-768 keygen [liboqs]" in said
    assert said.endswith("stored as run 20260101-r in /x/r.db")


def test_the_plan_s_notes_come_before_its_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    plan = speed.Plan([], SpeedSettings(), notes=["first"], warnings=["second"])
    speed_views.before(plan)
    err = capsys.readouterr().err
    assert err.index("first") < err.index("warning: second")
