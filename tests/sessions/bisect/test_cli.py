"""`pqbench bisect` end to end with real workers: synthetic series through `env:` sides.

Every worker starts with tests/slow_worker on PYTHONPATH; a build's ``env:`` items ask it
to be slower by a known factor (its rounds burn that much more CPU time, in which pairs
are compared) or to fail its correctness checks. The row is SHA-256 through libcrypto's
native loop, the steadiest one. No timing is asserted: budgets only bound a session.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pqbench.data.store import Store
from pqbench.platform import interrupts
from pqbench.platform.errors import StoreError
from tests.helpers import REPO, run_cli

SLOW_WORKER = REPO / "tests" / "slow_worker"
ROW = ("sha256", "-o", "hash", "-i", "libcrypto", "--bytes", "16384")


def _environment() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": f"{SLOW_WORKER}{os.pathsep}{path}" if path else str(SLOW_WORKER)}


def _series(tmp_path: Path, factors: list[float | str]) -> Path:
    """A series file: build n is `env:PQBENCH_TEST_BUILD=n` (a name shown, not masked) plus
    its slowdown (or a broken worker)."""
    lines = []
    for n, factor in enumerate(factors, 1):
        extra = ("env:PQBENCH_TEST_BROKEN=1" if factor == "broken"
                 else f"env:PQBENCH_TEST_SLOWER={factor}")
        lines.append(f"env:PQBENCH_TEST_BUILD={n} + {extra}")
    path = tmp_path / "series.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def _bisect(db: Path, *args: str, expect: int = 0) -> dict[str, Any]:
    done = run_cli("bisect", *ROW, *args, "--max-seconds", "20", "--json", "--db", str(db),
                   env=_environment(), timeout=900)
    assert done.returncode == expect, done.stderr
    return json.loads(done.stdout)


def _points(document: dict[str, Any]) -> list[tuple[int, int, str]]:
    (row,) = document["rows"]
    return [(c["before"]["position"], c["after"]["position"], c["comparison"]["verdict"])
            for c in row["change_points"]]


@pytest.fixture(scope="module")
def two_steps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """Six builds: twice as slow from the fourth, then 1.25x slow (1.6x faster) at the
    sixth: two change points in opposite directions, ends that differ."""
    tmp = tmp_path_factory.mktemp("bisect")
    db = tmp / "steps.db"
    series = _series(tmp, [1, 1, 1, 2, 2, 1.25])
    return db, _bisect(db, "--series", f"@{series}")


@pytest.mark.process
def test_two_opposite_change_points_are_found(two_steps) -> None:
    _, document = two_steps
    assert _points(document) == [(2, 3, "slower"), (4, 5, "faster")]
    (row,) = document["rows"]
    slower, faster = (c["comparison"] for c in row["change_points"])
    # The planted factors: rates 1/2 and (1/1.25)/(1/2) = 1.6; CPU-time pairs are close.
    assert 0.4 < slower["ratio"] < 0.6 and slower["ci_low"] <= slower["ratio"]
    assert 1.35 < faster["ratio"] < 1.85
    planted = [{(d["field"], d["before"], d["after"]) for d in c["differences"]}
               for c in row["change_points"]]
    assert ("ab_env.PQBENCH_TEST_SLOWER", "1", "2") in planted[0], planted
    assert ("ab_env.PQBENCH_TEST_SLOWER", "2", "1.25") in planted[1], planted
    assert row["ends"]["verdict"] == "slower" and row["searched"]
    assert document["unusable"] == [] and document["status"] == "complete"


def _text(token: Any) -> str:
    """The literal text of an inline token (escapes resolved)."""
    return "".join(child.content for child in token.children or ()
                   if child.type in ("text", "code_inline"))


@pytest.mark.process
def test_every_session_is_stored_with_its_series_positions(two_steps) -> None:
    db, document = two_steps
    store = Store.open(str(db), create=False)
    sessions = document["sessions"]
    assert (sessions[0]["before"]["position"], sessions[0]["after"]["position"]) == (0, 5)
    specs = document["series"]["builds"]
    for session in sessions:
        a, b = (store.load_run(run_id) for run_id in session["runs"])
        for run, mine, other in ((a, session["before"], session["after"]),
                                 (b, session["after"], session["before"])):
            found = run.settings["bisect"]
            assert found["position"] == mine["position"]
            assert found["other_position"] == other["position"]
            assert found["builds"] == specs and found["build"] == specs[mine["position"]]
            assert found["series"] == document["series"]["id"]
            assert run.label == specs[mine["position"]]
        assert a.settings["ab"]["session"] == b.settings["ab"]["session"]
    assert len(store.list_runs()) == 2 * len(sessions)


@pytest.mark.process
def test_the_report_shows_where_it_changed(two_steps, tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    db, document = two_steps
    out = tmp_path / "report.md"
    done = run_cli("report", "--by", "label", "--db", str(db), "--out", str(out),
                   "--cross-machine")
    assert done.returncode == 0, done.stderr
    tokens = MarkdownIt().enable("table").parse(out.read_text())
    headings = [_text(tokens[i + 1]) for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert "Where it changed" in headings
    assert any(h.startswith("SHA-256 hash") and "[libcrypto]: 2 change point(s) over 6 builds"
               in h for h in headings), headings
    start = headings.index("Where it changed")
    cells = [_text(t) for t in tokens if t.type == "inline"]
    cells = cells[cells.index("Where it changed"):]  # the section's own tables
    assert start >= 0
    specs = document["series"]["builds"]
    # One table row per build: the build, then its level or "not measured", then the change.
    measured = {s[k]["position"] for s in document["sessions"] for k in ("before", "after")}
    for position, spec in enumerate(specs):
        index = cells.index(spec)
        assert (cells[index + 1] == "not measured") == (position not in measured)
        if position in measured:  # the median of its rounds with that median's interval
            assert re.fullmatch(r"\S+ \S+ \(\S+ \S+ – \S+ \S+; \d+ rounds\)",
                                cells[index + 1]), cells[index + 1]
    assert cells[cells.index(specs[2]) + 2].startswith(f"→ {specs[3]}: ")
    assert cells[cells.index(specs[4]) + 2].startswith(f"→ {specs[5]}: ")
    assert cells[cells.index(specs[0]) + 2] == ""


def _history(db: Path, *extra: str) -> list[str]:
    done = run_cli("history", "sha256", "--by", "label", *extra, "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    (series,) = json.loads(done.stdout)["series"]
    return [point["build"] for point in series["points"]]


@pytest.mark.process
def test_history_orders_points_by_series_position(two_steps) -> None:
    db, document = two_steps
    specs = document["series"]["builds"]
    ordered = _history(db, "--series-order")
    assert ordered == [s for s in specs if s in ordered] and ordered[0] == specs[0]
    # By date, the ends come first: they were measured first.
    assert _history(db)[:2] == [specs[0], specs[-1]]


@pytest.mark.process
def test_a_flat_series_costs_one_session(tmp_path: Path) -> None:
    document = _bisect(tmp_path / "flat.db", "--series", f"@{_series(tmp_path, [1] * 5)}")
    assert len(document["sessions"]) == 1
    (row,) = document["rows"]
    assert row["change_points"] == [] and not row["searched"]
    assert row["ends"]["verdict"] in ("no change", "inconclusive")


@pytest.mark.process
def test_a_broken_build_is_unusable_and_the_search_goes_around_it(tmp_path: Path) -> None:
    series = _series(tmp_path, [1, 1, "broken", 2, 2])
    document = _bisect(tmp_path / "broken.db", "--series", f"@{series}", expect=1)
    (bad,) = document["unusable"]
    assert bad["position"] == 2 and "fails its correctness checks" in bad["reason"]
    (row,) = document["rows"]
    (point,) = row["change_points"]
    assert (point["before"]["position"], point["after"]["position"]) == (1, 3)
    assert [p["position"] for p in point["unusable_between"]] == [2]


@pytest.mark.process
def test_a_build_that_cannot_be_installed_is_named_and_skipped(tmp_path: Path) -> None:
    done = run_cli("bisect", *ROW, "--series", "pip:cryptography==1.0.99",
                   "--series", "env:BUILD=1", "--series", "env:BUILD=2", "--max-seconds", "8",
                   "--db", str(tmp_path / "pip.db"), env=_environment(), timeout=600)
    assert done.returncode == 1, done.stderr
    assert "build 1 (pip:cryptography==1.0.99) is unusable" in done.stderr
    assert "cryptography==1.0.99" in done.stderr and "Traceback" not in done.stderr
    assert "1 session," in done.stderr


@pytest.mark.process
@pytest.mark.parametrize(("values", "message"), [
    (["--series", "env:BUILD=1"], "at least two builds"),
    (["--series", "env:PQBENCH_TEST_BUILD={1,2,1}"], "env:PQBENCH_TEST_BUILD=1 is given twice"),
    (["--series", "pip:cryptography", "--series", "here"], "pip:PACKAGE==VERSION"),
])
def test_bad_input_is_a_message_and_an_exit_code(tmp_path: Path, values: list[str],
                                                 message: str) -> None:
    done = run_cli("bisect", *ROW, *values, "--db", str(tmp_path / "bad.db"))
    if message == "pip:PACKAGE==VERSION":  # a malformed build is an unusable build
        assert done.returncode == 1, done.stderr
    else:
        assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def _level_interval(cell: str) -> tuple[float, float, float]:
    """A level cell as bytes per second: "1.23 [1.20–1.26] GB/s", the unit said once, or
    "1.01 GB/s [994 MB/s – 1.04 GB/s]" where the ends' prefixes differ."""
    scale = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}
    once = re.fullmatch(r"([\d.]+) \[([\d.]+)–([\d.]+)\] ([kMG]?)B/s", cell)
    if once is not None:
        values = [float(once.group(i)) * scale[once.group(4)] for i in (1, 2, 3)]
    else:
        rate = r"([\d.]+) ([kMG]?)B/s"
        each = re.fullmatch(rf"{rate} \[{rate} – {rate}\]", cell)
        assert each is not None, cell
        values = [float(each.group(i)) * scale[each.group(i + 1)] for i in (1, 3, 5)]
    return values[0], values[1], values[2]


def _stored(db: Path) -> int:
    """Runs stored so far; 0 while the command is still creating the database."""
    try:
        return len(Store.open(str(db), create=False).list_runs())
    except StoreError:
        return 0


@pytest.mark.process
def test_sigterm_keeps_the_sessions_done_so_far(tmp_path: Path) -> None:
    db = tmp_path / "term.db"
    series = _series(tmp_path, [1, 1, 1, 1, 1, 1, 1, 3])
    process = subprocess.Popen(
        [sys.executable, "-m", "pqbench", "bisect", *ROW, "--series", f"@{series}",
         "--max-seconds", "30", "--db", str(db)], env={**os.environ, **_environment()},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and process.poll() is None:
            if db.exists() and _stored(db) >= 2:
                break
            time.sleep(0.5)
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == interrupts.SIGTERM_EXIT, err
    assert "interrupted; the sessions done so far were stored" in err
    runs = Store.open(str(db), create=False).list_runs()
    assert len(runs) >= 2 and len(runs) % 2 == 0


@pytest.mark.process
@pytest.mark.parametrize("columns", [80, 120])
def test_bisect_prints_the_series_as_git_bisect_log_does(tmp_path: Path, columns: int
                                                          ) -> None:
    """Not the change point alone: every session in the order it ran with its change,
    interval and verdict (the ends' session and the flat ones too), and each measured
    build's level with its interval, at 80 columns as at 120."""
    series = _series(tmp_path, [1, 2, 2])
    done = run_cli("bisect", *ROW, "--series", f"@{series}", "--max-seconds", "5", "--db",
                   str(tmp_path / "b.db"), env={**_environment(), "COLUMNS": str(columns)},
                   timeout=900)
    assert done.returncode == 0, done.stderr
    from tests.helpers.terminal import read_table

    assert max(len(line) for line in done.stdout.splitlines()) <= columns
    title = "SHA-256 hash @16384B [libcrypto]: each build measured"
    steps = read_table(done.stdout, "sessions, in the order they ran", key="#", end=title)
    builds = [re.findall(r"SLOWER=([\d.]+)", step["builds"]) for step in steps]
    # The ends first (twice as slow), then the halves: slower, then flat.
    assert builds == [["1", "2"], ["1", "2"], ["2", "2"]], steps
    assert re.fullmatch(r"[\d.]+x slower \[[\d.]+–[\d.]+\]", steps[0]["change [CI]"])
    assert re.fullmatch(r"[\d.]+x slower \[[\d.]+–[\d.]+\]", steps[1]["change [CI]"])
    # The flat pair: no change, or (a loaded machine) an interval too wide to say, its
    # ratio in the words `speed_change` prints ("1.02x faster", or "same speed" where three
    # digits cannot tell the builds apart).
    assert re.match(r"(no change \(within ±5 %\)|inconclusive: ([\d.]+x (faster|slower)"
                    r"|same speed)) \[", steps[2]["change [CI]"]), steps[2]
    assert steps[2]["verdict"] in ("no change", "inconclusive") or columns == 80
    # Each build measured: the median of its rounds with that median's interval, and the
    # session's answer against the build before it.
    levels = read_table(done.stdout, title, key="level [95 % CI]", end="where it changed")
    assert [re.findall(r"SLOWER=([\d.]+)", row["build"]) for row in levels] == [
        ["1"], ["2"], ["2"]], levels
    for row in levels:
        level, low, high = _level_interval(row["level [95 % CI]"])
        assert low <= level <= high, row
    assert "against the build before it [CI]" in levels[0], (levels, done.stdout)
    assert levels[0]["against the build before it [CI]"] == ""
    assert levels[1]["against the build before it [CI]"] == steps[1]["change [CI]"]
