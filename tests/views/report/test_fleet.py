"""`pqbench report --by` over many groups (issue #16), on SQLite and a real PostgreSQL
server: the comparisons follow the planted steps, the report says which it shows and how
to get any other, the history lists every step, only the compared groups are read whole,
the rates read as numbers are the samples a whole load gives, and the bytes repeat."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token
from scipy import stats as sp_stats
from sqlalchemy import event
from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from pqbench.analysis import history, replicates
from pqbench.analysis.compare import run_samples
from pqbench.cli import app
from pqbench.data.record.results import Run
from pqbench.data.store import RunFilter, Store
from pqbench.views.report import charts, fleet
from tests.helpers.runs import environment, make_runs

BUILDS = 9
PER_BUILD = 5
#: Planted: AES-256-XTS 50 % faster from b03 on, ML-KEM-768 30 % slower from b06 on.
AES_STEP, KEM_STEP = 3, 6


def _fleet() -> list[Run]:
    runs: list[Run] = []
    for b in range(BUILDS):
        name = f"b{b:02d}"
        factors = {"AES-256-XTS": 1.5 if b >= AES_STEP else 1.0,
                   "ML-KEM-768": 0.7 if b >= KEM_STEP else 1.0}
        runs += make_runs(f"{name}-", PER_BUILD, seed=40 + b, drift=0.02, label=name,
                          start_day=b + 1, factors=factors,
                          env=environment(label=name, os_build=name))
    return runs


def _parse(path: Path) -> list[Token]:
    return MarkdownIt("commonmark").enable("table").parse(path.read_text("utf-8"))


def _plain(inline: Token) -> str:
    return "".join(child.content for child in inline.children or []
                   if child.type in ("text", "code_inline"))


def _headings(tokens: list[Token], level: int) -> list[str]:
    return [_plain(tokens[i + 1]) for i, t in enumerate(tokens)
            if t.type == "heading_open" and t.tag == f"h{level}"]


def _table(tokens: list[Token], header: str) -> list[list[str]]:
    rows: list[list[str]] = []
    inside = False
    for i, token in enumerate(tokens):
        if token.type == "table_open":
            rows, inside = [], True
        elif inside and token.type == "tr_open":
            rows.append([])
        elif inside and token.type in ("th_open", "td_open"):
            rows[-1].append(_plain(tokens[i + 1]) if tokens[i + 1].type == "inline" else "")
        elif token.type == "table_close":
            inside = False
            if rows and header in rows[0]:
                return rows
    raise AssertionError(f"no table with a column {header!r}")


class Reads:
    """The SELECTs every engine sends while a command runs, with their parameters."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    def __call__(self, _conn: Any, _cursor: Any, statement: str, parameters: Any,
                 _context: Any, _many: bool) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            self.sent.append((statement, parameters))


def _report(location: str, out: Path, reads: Reads | None = None) -> Path:
    if reads is not None:
        event.listen(Engine, "before_cursor_execute", reads)
    try:
        result = CliRunner().invoke(app, ["report", "--by", "os_build", "--db", location,
                                          "--out", str(out)])
    finally:
        if reads is not None:
            event.remove(Engine, "before_cursor_execute", reads)
    assert result.exit_code == 0, result.stderr
    return out / "report.md"


def _ids(parameters: Any) -> set[str]:
    values = parameters.values() if isinstance(parameters, dict) else parameters or ()
    flat: set[str] = set()
    for value in values:
        flat.update(map(str, value) if isinstance(value, list | tuple) else [str(value)])
    return {v for v in flat if re.fullmatch(r"b\d\d-\d", v)}


@pytest.mark.process
def test_many_builds_compare_where_the_history_steps(location: str, tmp_path: Path) -> None:
    Store.open(location).save_runs(_fleet())
    reads = Reads()
    path = _report(location, tmp_path / "fleet", reads)
    tokens = _parse(path)
    # The planted steps and the two ends, oldest first; nothing else.
    assert _headings(tokens, 3)[:3] == ["b02 → b03", "b05 → b06", "b00 → b08"]
    assert "History by os_build" in _headings(tokens, 3)
    text = path.read_text("utf-8")
    assert "9 groups, too many to compare each with the next (8 comparisons)" in text
    assert "for each build where the history steps (2 found), the group before it" in text
    assert "`pqbench compare --by os_build BEFORE AFTER`" in text
    # Every step found, at the planted build and size; SHA-256 did not move.
    steps = _table(tokens, "first at new level")
    # Each step in the words of every pqbench ratio, with its interval: "1.43x slower
    # [1.40–1.46]", never a bare "0.7x".
    assert steps[0][7] == "change [CI]"
    words = [re.fullmatch(r"([\d.]+)x (faster|slower) \[[\d.]+–[\d.]+\]", row[7])
             for row in steps[1:]]
    assert all(words), [row[7] for row in steps[1:]]
    found = {(row[0], row[2], row[4]): float(m.group(1)) ** (1 if m.group(2) == "faster"
                                                               else -1)
             for row, m in zip(steps[1:], words, strict=True) if m}
    assert set(found) == {("AES-256-XTS", "encrypt", "b03"), ("ML-KEM-768", "encaps", "b06"),
                          ("ML-KEM-768", "decaps", "b06")}
    assert found[("AES-256-XTS", "encrypt", "b03")] == pytest.approx(1.5, rel=0.05)
    assert found[("ML-KEM-768", "encaps", "b06")] == pytest.approx(0.7, rel=0.05)
    images = [str(c.attrs["src"]) for t in tokens if t.type == "inline"
              for c in t.children or [] if c.type == "image"]
    assert sorted(i for i in images if i.startswith("history-")) == ["history-1.png",
                                                                     "history-2.png"]
    assert sorted(i for i in images if i.startswith("compare-")) == [
        "compare-1.png", "compare-2.png", "compare-3.png"]
    assert all((path.parent / image).stat().st_size > 0 for image in images)
    # Whole runs (result rows with every column) only of the compared groups and the
    # newest run of each build (its tables are its "Each os_build" section's, the newest's
    # head the report); the history read rates alone.
    compared = {f"b{b:02d}-{i}" for b in (0, 2, 3, 5, 6, 8) for i in range(PER_BUILD)}
    compared |= {f"b{b:02d}-{PER_BUILD - 1}" for b in range(BUILDS)}
    whole = [p for s, p in reads.sent if "pqbench_measurements.sizes" in s]
    assert whole and set().union(*map(_ids, whole)) <= compared
    rates = [p for s, p in reads.sent if "pqbench_measurements.round_ops" in s
             and "pqbench_measurements.sizes" not in s]
    assert set().union(*map(_ids, rates)) == {r.run_id for r in _fleet()}


@pytest.mark.slow
def test_the_same_data_give_the_same_bytes(tmp_path: Path) -> None:
    location = str(tmp_path / "fleet.db")
    Store.open(location).save_runs(_fleet())
    first = _report(location, tmp_path / "one")
    second = _report(location, tmp_path / "two")
    assert first.read_bytes() == second.read_bytes()
    pictures = sorted(first.parent.glob("*.png"))
    assert {"compare-1.png", "compare-3.png", "history-2.png"} <= {p.name for p in pictures}
    for picture in pictures:
        assert picture.read_bytes() == (second.parent / picture.name).read_bytes()


def test_rates_read_as_numbers_are_the_samples_of_a_whole_load(location: str) -> None:
    store = Store.open(location)
    store.save_runs(_fleet())
    ids = [f"b{b:02d}-{i}" for b in range(BUILDS) for i in range(PER_BUILD)]
    rates = store.row_rates(ids)
    for group in (ids[:PER_BUILD], ids[3 * PER_BUILD:5 * PER_BUILD], ids[-1:]):
        expected = run_samples(store.load_runs(RunFilter(ids=tuple(group))))
        assert set(rates.row_keys()) == set(expected)
        for key, samples in expected.items():
            assert [run.tolist() for run in rates.runs(key, group)] == samples  # to the bit
    assert rates.runs(("ML-KEM-768", "liboqs", "encaps", None), ["no-such-run"]) == []


def test_one_row_key_read_through_its_index_is_the_same_rates(location: str) -> None:
    """`history`'s read: one row key across the runs asked (here every other build), the
    rows of other runs left out, the rates those of a whole load."""
    store = Store.open(location)
    store.save_runs(_fleet())
    asked = [f"b{b:02d}-{i}" for b in range(0, BUILDS, 2) for i in range(PER_BUILD)]
    key = ("ML-KEM-768", "liboqs", "encaps", None)
    rates = store.row_rates(asked, RunFilter(algorithms=("ML-KEM-768",),
                                             implementation="liboqs", operation="encaps"))
    assert rates.row_keys() == [key]
    expected = run_samples(store.load_runs(RunFilter(ids=tuple(asked))))[key]
    assert [run.tolist() for run in rates.runs(key, asked)] == expected
    assert rates.runs(key, ["b01-0"]) == []  # a run not asked for


def test_a_points_interval_is_students_t_over_the_run_medians() -> None:
    rng = np.random.default_rng(7)
    runs = [list(1000 * np.exp(rng.normal(0, 0.05) + rng.normal(0, 0.02, 7)))
            for _ in range(6)]
    logs = [float(np.median(np.log(run))) for run in runs]
    low, high = sp_stats.t.interval(0.95, len(logs) - 1, loc=np.mean(logs),
                                    scale=sp_stats.sem(logs))
    level, ci_low, ci_high = replicates.level_interval(runs)
    assert level == pytest.approx(math.exp(np.mean(logs)), rel=1e-12)
    assert (ci_low, ci_high) == pytest.approx((math.exp(low), math.exp(high)), rel=1e-12)
    # Runs of different lengths take the per-run path, with the same answer.
    ragged = [*runs[:-1], runs[-1][:5]]
    logs[-1] = float(np.median(np.log(runs[-1][:5])))
    low, high = sp_stats.t.interval(0.95, len(logs) - 1, loc=np.mean(logs),
                                    scale=sp_stats.sem(logs))
    assert replicates.level_interval(ragged)[1:] == pytest.approx(
        (math.exp(low), math.exp(high)), rel=1e-12)


def test_a_history_of_a_hundred_builds_labels_a_legible_subset() -> None:
    steps = [40, 41, 70]
    shown = charts.tick_indexes(100, steps)
    assert {0, 99, *steps} <= set(shown)
    assert len(shown) <= 30
    regular = [i for i in shown if i not in {0, 99, *steps}]
    for i in regular:  # no regular label crowds another label
        assert all(abs(i - j) >= 3 for j in shown if j != i)
    assert charts.tick_indexes(12, [5]) == list(range(12))


def _stepping(algorithm: str, steps: dict[str, float]) -> history.Series:
    return history.Series(algorithm, "liboqs", "encaps", None, "ops/s", (), tuple(
        history.HistoryStep(0, build, 1.0, ratio, ratio) for build, ratio in steps.items()))


def test_step_builds_rank_the_largest_step_first_whatever_the_series() -> None:
    names = [f"b{i}" for i in range(10)]
    per_algorithm = {"A": [_stepping("A", {"b2": 1.2, "b7": 0.5})],
                     "B": [_stepping("B", {"b2": 0.6, "b5": 1.1}),
                           _stepping("B", {"b9": 1.2})]}
    # |ln|: b7 0.69 (A), b2 0.51 (B's 0.6 beats A's 1.2), b9 0.18, b5 0.10.
    assert fleet.step_builds(names, per_algorithm) == [7, 2, 9, 5]
    # Equal steps (x2 and x0.5): the older build first.
    assert fleet.step_builds(names, {"A": [_stepping("A", {"b3": 2.0, "b1": 0.5})]}) == [1, 3]
    assert fleet.step_builds(names, {"A": [_stepping("A", {})]}) == []


@pytest.mark.process
def test_a_kind_with_few_groups_keeps_each_against_the_next(tmp_path: Path) -> None:
    """Speed runs over nine builds take the bounded path; file runs over three builds in
    the same report are still compared each with the next, with their own history."""
    location = str(tmp_path / "mixed.db")
    files = [replace(run, run_id=f"f-{run.run_id}", kind="files")
             for run in _fleet() if run.label in ("b00", "b01", "b02")]
    Store.open(location).save_runs([*_fleet(), *files])
    path = _report(location, tmp_path / "mixed")
    tokens = _parse(path)
    level2 = _headings(tokens, 2)
    assert "Comparison" in level2 and "Comparison of the file benchmarks" in level2
    level3 = _headings(tokens, 3)
    files_part = level3[level3.index("History by os_build") + 1:]
    assert files_part == ["b00 → b01", "b01 → b02", "History by os_build"]
    text = path.read_text("utf-8")
    assert ("Runs grouped by `os_build`, each group against the one before it that measured "
            "some of the same rows.") in text
    images = {str(c.attrs["src"]) for t in tokens if t.type == "inline"
              for c in t.children or [] if c.type == "image"}
    assert {"files-compare-1.png", "files-compare-2.png", "files-history-1.png"} <= images
