"""Values given to a build's worker (`env:NAME=VALUE`, `cmd:env NAME=VALUE ...`) reach the
worker and nowhere else, however the build is written: `ab --a/--b`, `bisect --series`
with `--series=BUILD`, a leading space, `+`-joined items, or a line of an @FILE. Every
place a build goes (the console, --json, run labels, settings, the stored command, the
export, the report) shows the name with *** as its value, and the secret itself is
searched for in all of it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.helpers.leaks import Probe

pytestmark = pytest.mark.process

ROW = ["sha256", "-o", "hash", "-i", "libcrypto", "--bytes", "16384", "--round", "0.01"]
SLOW_WORKER = REPO / "tests" / "slow_worker"


def _environment() -> dict[str, str]:
    """Workers that can be told to be slower (tests/slow_worker): the ends then differ and
    the bisection names the builds between them in its table."""
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": f"{SLOW_WORKER}{os.pathsep}{path}" if path else str(SLOW_WORKER)}


def test_bisect_never_shows_or_stores_a_build_secret(tmp_path: Path) -> None:
    out = tmp_path / "out"  # searched for secrets; the series file stays outside it
    out.mkdir()
    db = str(out / "bisect.db")
    series = tmp_path / "series.txt"
    series.write_text(f"# the last build\ncmd:env DB_PASSWORD=TokD4x PQBENCH_TEST_SLOWER=2 "
                      f"{sys.executable} -m pqbench\n")
    secrets = ["TokA2x", "TokB3x", "TokC1x", "TokD4x"]
    builds = ["--series=env:API_KEY=TokA2x", "--series", " env:GH_PAT=TokB3x",
              "--series", "here + env:MY_TOKEN=TokC1x + env:PQBENCH_TEST_SLOWER=2",
              "--series", f"@{series}"]
    probe = Probe(out)
    env = _environment()
    shown = probe.cli("bisect", *ROW, *builds, "--max-seconds", "1", "--db", db, env=env)
    assert "runs stored in" in shown, shown
    document = probe.json("bisect", *ROW, *builds, "--max-seconds", "1", "--json",
                          "--db", db, env=env)
    expected = ["env:API_KEY=***", "env:GH_PAT=***",
                "here + env:MY_TOKEN=*** + env:PQBENCH_TEST_SLOWER=2",
                f"cmd:env 'DB_PASSWORD=***' PQBENCH_TEST_SLOWER=2 {sys.executable} -m pqbench"]
    assert document["series"]["builds"] == expected  # type: ignore[index]

    ids = probe.run_ids(db)
    export = out / "export.json"
    probe.cli("export", *ids, "-O", str(export), "--db", db)
    runs = json.loads(export.read_text())["runs"]
    for run in runs:
        assert run["settings"]["bisect"]["builds"] == expected
        assert run["label"] in expected, run["label"]
        assert "API_KEY=***" in run["command"] and "GH_PAT=***" in run["command"]
        assert "MY_TOKEN=***" in run["command"], run["command"]
    probe.cli("report", *ids, "--out", str(out / "report"), "--db", db)
    probe.cli("runs", "--db", db)
    for secret in secrets:
        assert probe.leaks(secret) == [], secret


def test_ab_hides_a_side_given_with_a_leading_space_or_after_an_equals_sign(
        tmp_path: Path) -> None:
    db = str(tmp_path / "ab.db")
    probe = Probe(tmp_path)
    probe.cli("ab", "x25519", "-i", "cryptography", "-o", "derive", "--max-seconds", "1",
              "--round", "0.01", "--a", "here", "--a", "\tenv:SESSION=TokE5x",
              "--b", " env:GH_PAT=TokF6x", "--b= env:API_KEY=TokG7x", "--db", db)
    ids = probe.run_ids(db)
    export = tmp_path / "export.json"
    probe.cli("export", *ids, "-O", str(export), "--db", db)
    for run in json.loads(export.read_text())["runs"]:
        assert "GH_PAT=***" in run["command"] and "API_KEY=***" in run["command"]
        assert "SESSION=***" in run["command"], run["command"]
        assert "=***" in run["label"], run["label"]
    for secret in ("TokE5x", "TokF6x", "TokG7x"):
        assert probe.leaks(secret) == [], secret
