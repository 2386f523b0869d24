"""One run per build, as a user takes it: real `speed` runs into a temporary database, then
`compare --by label`, `history --by label`, `--fail-on undecided` and `calibrate`.

The build change is `--mask aesni`: on a CPU with AES-NI, OpenSSL's AES-256-GCM is many
times slower without it (far beyond the default prior); on a CPU without, the mask hides
nothing and no row may move. SHA-256 never moves under this mask: its rows stay undecided
(one run against one against the prior) until calibration runs are stored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import CPU_FLAGS, run_cli

pytestmark = pytest.mark.process

SUITE = ("aes-256-gcm", "sha-256", "-i", "libcrypto", "--bytes", "16384", "--seconds",
         "0.1", "--rounds", "5")
AES = ("AES-256-GCM", "libcrypto")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("one-run") / "runs.db"
    for extra in (("--label", "before"), ("--label", "after", "--mask", "aesni")):
        done = run_cli("speed", *SUITE, *extra, "--db", str(db))
        assert done.returncode == 0, done.stderr
    return db


def _rows(document: dict) -> dict[tuple[str, str], list[dict]]:
    found: dict[tuple[str, str], list[dict]] = {}
    for row in document["rows"]:
        found.setdefault((row["algorithm"], row["implementation"]), []).append(row)
    return found


def test_one_run_against_one_is_judged_against_the_default_prior(store: Path) -> None:
    done = run_cli("compare", "--by", "label", "before", "after", "--json", "--db", str(store))
    assert done.returncode == 0, done.stderr
    rows = _rows(json.loads(done.stdout))
    assert all(r["verdict"] != "too few runs" for found in rows.values() for r in found)
    assert all("default prior" in r["basis"] for found in rows.values() for r in found)
    aes = {r["verdict"] for r in rows[AES]}
    assert aes == ({"slower"} if "aes" in CPU_FLAGS else aes - {"faster", "slower"})
    sha = {r["verdict"] for r in rows[("SHA-256", "libcrypto")]}
    assert sha <= {"inconclusive", "no change"}
    if "aes" in CPU_FLAGS:  # the cause is named: the mask's knob
        assert all(c["field"].startswith("knobs.") or c["field"].startswith("mask")
                   for r in rows[AES] for c in r["causes"][:1])


def test_history_steps_where_compare_calls_it(store: Path) -> None:
    done = run_cli("history", "aes-256-gcm", "-i", "libcrypto", "--by", "label", "--json",
                   "--db", str(store))
    assert done.returncode == 0, done.stderr
    series = json.loads(done.stdout)["series"]
    compared = run_cli("compare", "--by", "label", "before", "after", "--json",
                       "--db", str(store))
    verdicts = {r["operation"]: r["verdict"] for r in json.loads(compared.stdout)["rows"]
                if (r["algorithm"], r["implementation"]) == AES}
    for one in series:
        assert [p["build"] for p in one["points"]] == ["before", "after"]
        assert all(len(p["runs"]) == 1 for p in one["points"])
        steps = [s["verdict"] for s in one["steps"]]
        called = verdicts[one["operation"]]
        assert steps == ([called] if called in ("faster", "slower") else [])


def test_fail_on_undecided_fails_closed(store: Path) -> None:
    args = ("compare", "--by", "label", "before", "after", "--db", str(store))
    undecided = run_cli(*args, "--fail-on", "undecided")
    assert undecided.returncode == 3, undecided.stderr
    assert "inconclusive" in undecided.stderr
    slower = run_cli(*args, "--fail-on", "slower")
    assert slower.returncode == (3 if "aes" in CPU_FLAGS else 0), slower.stderr
    both = run_cli(*args, "--fail-on", "slower,undecided")
    assert both.returncode == 3
    bad = run_cli(*args, "--fail-on", "slower,sideways")
    assert bad.returncode == 2 and "one or more of" in bad.stderr


def test_calibration_runs_are_stored_marked_and_sharpen_the_spread(store: Path,
                                                                   tmp_path: Path) -> None:
    db = tmp_path / "calibrated.db"
    exported = tmp_path / "two.json"
    assert run_cli("export", "--all", "--output", str(exported), "--db", str(store)
                   ).returncode == 0
    assert run_cli("import", str(exported), "--db", str(db)).returncode == 0
    done = run_cli("calibrate", *SUITE, "--runs", "3", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert len(document["runs"]) == 3
    sha = next(r for r in document["rows"] if r["algorithm"] == "SHA-256")
    assert sha["spread"]["calibration"] == 3 and sha["spread"]["runs"] == 3
    listed = json.loads(run_cli("export", *document["runs"], "--db", str(db)).stdout)
    marks = [r["settings"]["calibration"] for r in listed["runs"]]
    assert sorted(m["index"] for m in marks) == [1, 2, 3]
    assert {m["runs"] for m in marks} == {3} and len({m["series"] for m in marks}) == 1
    compared = run_cli("compare", "--by", "label", "before", "after", "--json", "--db", str(db))
    rows = json.loads(compared.stdout)["rows"]
    assert all("3 of them calibration" in r["basis"] for r in rows)
