"""What a new user meets: commands run as real processes on real runs, their output parsed
at 80 and 120 columns. Each test pins one promise of `compare`, `history`, `report`,
`runs` and `files` that a user of openssl speed, hyperfine or pyperf takes for granted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

QUICK = ("--seconds", "0.05", "--rounds", "2")


def _speed(db: Path, *args: str) -> str:
    """One real `pqbench speed` run; its run id, read from its JSON document."""
    done = run_cli("speed", *args, *QUICK, "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["run_id"])


@pytest.fixture(scope="module")
def two_subjects(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """`speed x25519`, `speed x25519 ed25519`, then `speed aes-256-gcm`: the newest run
    shares no row with any earlier one."""
    db = tmp_path_factory.mktemp("story") / "results.db"
    ids = [_speed(db, "x25519"), _speed(db, "x25519", "ed25519"),
           _speed(db, "aes-256-gcm", "--bytes", "1024")]
    return db, ids


@pytest.mark.parametrize("columns", ["80", "120"])
def test_compare_without_arguments_finds_two_runs_that_share_rows(
        two_subjects: tuple[Path, list[str]], columns: str) -> None:
    db, (first, second, newest) = two_subjects
    done = run_cli("compare", "--json", "--db", str(db), env={"COLUMNS": columns})
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert (document["before"]["runs"], document["after"]["runs"]) == ([first], [second])
    assert {row["algorithm"] for row in document["rows"]} == {"X25519"}
    told = " ".join(done.stderr.split())
    assert f"the newest run {newest} shares no row with an earlier run" in told
    assert f"comparing run {second} (X25519, Ed25519) with {first} (X25519)" in told
