"""The run format's version 2 parts (the machine's load, the loaded binaries, OpenSSL's
capabilities): the load predicate at its documented thresholds, the parts through JSON, CSV,
the store and import, and runs stored before them (format 1), which still import, load
and compare beside new ones without a binary or a load being called a change."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pqbench.app import identity
from pqbench.cli import app
from pqbench.data.record import codec, transfer
from pqbench.data.record.fingerprint import (
    LOAD_THRESHOLD,
    STEAL_THRESHOLD,
    Fingerprint,
    taken_under_load,
)
from pqbench.data.store import Store
from tests.helpers import starts_processes


def _state(others: float | None, steal: float | None = 0.0) -> dict[str, Any]:
    return {"run": {"seconds": 2.0, "cpus": 2, "loadavg_start": [0.5, 0.4, 0.3],
                    "loadavg_end": [0.6, 0.4, 0.3], "others_cpu": others, "steal": steal}}


@pytest.mark.parametrize("part, flagged", [
    (_state(0.0), False),
    (_state(0.0999), False),
    (_state(0.10), True),
    (_state(0.5), True),
    (_state(0.01, steal=0.0499), False),
    (_state(0.01, steal=0.05), True),
    (_state(None, steal=None), False),
    ({}, False),                         # recorded before pqbench kept the load
], ids=["idle", "just-under", "at-threshold", "busy", "steal-under", "steal-at", "unknown",
        "older-run"])
def test_taken_under_load_at_its_documented_thresholds(part: dict[str, Any],
                                                       flagged: bool) -> None:
    assert (LOAD_THRESHOLD, STEAL_THRESHOLD) == (0.10, 0.05)  # as docs/os-builds.md says
    assert taken_under_load(part) is flagged
    assert taken_under_load(Fingerprint(part)) is flagged


@pytest.fixture(scope="module")
@starts_processes
def fresh(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real `speed --json` document of this pqbench (format 2)."""
    db = tmp_path_factory.mktemp("fresh") / "runs.db"
    done = CliRunner().invoke(app, ["speed", "sha256", "-i", "python", "--bytes", "16384",
                                    "--seconds", "0.1", "--rounds", "3", "--json",
                                    "--db", str(db)])
    assert done.exit_code == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


@pytest.mark.process
def test_a_run_document_carries_the_new_parts(fresh: dict[str, Any]) -> None:
    env = fresh["environment"]
    assert fresh["format_version"] == 2
    assert {"seconds", "cpus", "loadavg_start", "loadavg_end", "others_cpu", "steal"} <= \
        env["run"].keys()
    assert {"libcrypto", "libc"} <= env["binaries"].keys()
    assert "libcrypto" in env["openssl_capabilities"]


def test_csv_carries_the_runs_load(fresh: dict[str, Any]) -> None:
    run = codec.run_from_document(fresh)
    columns, rows = codec.csv_table(run)
    assert rows and columns[-2:] == ["others_cpu", "cpu_steal"]
    assert rows[0][-2] == fresh["environment"]["run"]["others_cpu"]


def _as_format_1(document: dict[str, Any], run_id: str) -> dict[str, Any]:
    """The same run as pqbench wrote it before version 2: no load, binaries or vectors."""
    old = copy.deepcopy(document)
    old.update(format_version=1, run_id=run_id, label="old")
    for part in ("run", "binaries", "openssl_capabilities"):
        old["environment"].pop(part, None)
    old.pop("ratios", None)
    return old


def test_runs_from_before_version_2_import_load_and_compare(fresh: dict[str, Any],
                                                            tmp_path: Path) -> None:
    old_file = tmp_path / "old.json"
    old_file.write_text(json.dumps(_as_format_1(fresh, "20250101T000000Z-old001")))
    new_file = tmp_path / "new.json"
    new_file.write_text(json.dumps({**fresh, "label": "new"}))
    db = str(tmp_path / "runs.db")
    runner = CliRunner()
    for path in (old_file, new_file):
        done = runner.invoke(app, ["import", str(path), "--db", db])
        assert done.exit_code == 0, done.stderr
    store = Store.open(db)
    old, new = (store.load_run(run_id) for run_id in ("20250101T000000Z-old001",
                                                      fresh["run_id"]))
    store.close()
    assert old.environment.machine_state == {} and old.environment.binaries == {}
    assert not taken_under_load(old.environment)
    assert new.environment.binaries == fresh["environment"]["binaries"]
    # One build: the older run's unknown binaries do not split it from the new one.
    assert identity.build_of(new).get("binaries.libcrypto") is not None
    assert identity.build_of(old).get("binaries.libcrypto") is None
    compared = runner.invoke(app, ["compare", old.run_id, new.run_id, "--json", "--db", db])
    assert compared.exit_code == 0, compared.stderr
    fields = [d["field"] for d in json.loads(compared.stdout)["differences"]]
    assert not [f for f in fields if f.startswith(("binaries", "run.", "openssl_capab"))]


def test_an_import_refuses_a_load_out_of_range(fresh: dict[str, Any], tmp_path: Path) -> None:
    bad = copy.deepcopy(fresh)
    bad["environment"]["run"]["others_cpu"] = 1.5
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(Exception, match=r"environment\.run\.others_cpu"):
        transfer.read_file(path)
    bad = copy.deepcopy(fresh)
    bad["environment"]["binaries"]["libcrypto"]["build_id"] = "not hex"
    path.write_text(json.dumps(bad))
    with pytest.raises(Exception, match=r"environment\.binaries\.libcrypto\.build_id"):
        transfer.read_file(path)


def test_what_is_derived_from_a_fingerprint_never_sees_the_runs_state() -> None:
    """A fingerprint made whole (an imported run's) and runs made from one shared base
    (`Fingerprint.of_run`, as the store reads them): `derived` is given the fingerprint
    without its `run` part, and runs of one base work a fact out once."""
    base = Fingerprint({"os_build": "b1", "hostname": "m1"})
    whole = Fingerprint({"os_build": "b1", **_state(0.5)})
    given: list[dict[str, Any]] = []

    def make(env: Fingerprint) -> int:
        given.append(env.to_dict())
        return len(given)

    first = Fingerprint.of_run(base, _state(0.5)["run"])
    second = Fingerprint.of_run(base, _state(0.0)["run"])
    assert (first.others_cpu, second.others_cpu) == (0.5, 0.0)
    assert "run" not in base and base.others_cpu is None
    assert [first.derived("k", make), second.derived("k", make)] == [1, 1]
    assert whole.derived("k", make) == 2
    assert whole.others_cpu == 0.5  # its own state stays
    assert given == [{"os_build": "b1", "hostname": "m1"}, {"os_build": "b1"}]
