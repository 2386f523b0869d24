"""The fourth hostile round on the values a side hands its worker: a space before the
colon (`ENV :NAME=VALUE`, `cmd :...`), NAME=VALUE inside a `sh -c` script, glued to an
option (`-eTOKEN=...`) in a worker's error, and the refusals of a typo'd kind, of
`+`-joined items in `ab` and of NAME=VALUE in another kind (`pip:TOKEN=...`). The worker
gets each value (its script checks); the secret is then searched for in everything: the
terminal, --json, `runs --json`, the export, the report, the rows of SQLite and
PostgreSQL, and a `pg_dump` of the PostgreSQL database."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import starts_processes
from tests.helpers.leaks import Probe
from tests.helpers.postgres import database_text, dump_text, fresh_database, running_server

ROW = ["x25519", "-i", "cryptography", "-o", "derive", "--max-seconds", "1", "--round", "0.01"]
SECRETS = {"env": "SpaceEnv3q", "script": "ScriptTok4q", "glued": "GluedTok5q",
           "typo": "TypoTok6q", "joined": "JoinTok7q", "pip": "PipTok8q"}


@pytest.fixture(scope="module")
@starts_processes
def server() -> Iterator[str]:
    with running_server() as url:
        yield url


def _side_b() -> list[str]:
    """`ENV :GH_PAT=...` and a `cmd :sh -c` script that exports a token, starting the
    worker only when both values arrived whole (their lengths, so the script names no
    value itself)."""
    env, script = SECRETS["env"], SECRETS["script"]
    check = (f"export TOKEN={script}; [ ${{#GH_PAT}} -eq {len(env)} ] && "
             f"[ ${{#TOKEN}} -eq {len(script)} ] && exec {sys.executable} -m pqbench worker")
    return ["--b", f"ENV :GH_PAT={env}", "--b", f"cmd :sh -c '{check}'"]


@pytest.mark.process
def test_a_sides_values_reach_its_worker_and_nothing_else(server: str, tmp_path: Path) -> None:
    postgresql = fresh_database(server)
    sqlite = str(tmp_path / "ab.db")
    probe = Probe(tmp_path)
    shown = probe.cli("ab", *ROW, "--a", "here", *_side_b(), "--db", postgresql)
    assert "stored as runs" in shown, shown
    assert "env:GH_PAT=***" in shown and "TOKEN=***" in shown, shown
    document = probe.json("ab", *ROW, "--a", "here", *_side_b(), "--json", "--db", sqlite)
    assert document["session"]["status"] == "complete", document  # type: ignore[index]

    # The worker's error names its command: the value glued to an option is hidden.
    failed = probe.cli("ab", *ROW, "--a", "here", "--b",
                       f"cmd:false -eTOKEN={SECRETS['glued']}", "--db", sqlite, code=1)
    assert "exited with status 1" in failed and "-eTOKEN=***" in failed, failed
    # Refused before anything starts, the value not echoed.
    typo = probe.cli("ab", *ROW, "--a", "here", "--b", f"evn:GH_PAT={SECRETS['typo']}",
                     "--db", sqlite, code=2)
    assert "evn:GH_PAT=***" in typo, typo
    joined = probe.cli("ab", *ROW, "--a", "here", "--b",
                       f"here + env:T={SECRETS['joined']}", "--db", sqlite, code=2)
    assert "here + env:T=***" in joined, joined
    pinned = probe.cli("ab", *ROW, "--a", "here", "--b", f"pip:GH_PAT={SECRETS['pip']}",
                       "--db", sqlite, code=2)
    assert "pip:GH_PAT=***" in pinned, pinned

    for name, location in (("postgresql", postgresql), ("sqlite", sqlite)):
        ids = probe.run_ids(location)
        assert len(ids) == 2, ids
        export = tmp_path / f"{name}.json"
        probe.cli("export", *ids, "-O", str(export), "--db", location)
        for run in json.loads(export.read_text())["runs"]:
            assert "GH_PAT=***" in run["command"] and "TOKEN=***" in run["command"], run
            if run["label"].startswith("B:"):
                assert run["settings"]["ab"]["spec"].startswith("env:GH_PAT=*** cmd:sh -c")
        probe.cli("report", *ids, "--out", str(tmp_path / f"report-{name}"), "--db", location)
    rows, dump = database_text(server, postgresql), dump_text(server, postgresql)
    assert "GH_PAT=***" in dump
    for secret in SECRETS.values():
        assert probe.leaks(secret, rows, dump) == [], secret
