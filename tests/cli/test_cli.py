"""The command line as a user meets it: in-process through CliRunner and as a subprocess."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pqbench.cli import app
from pqbench.data.store import Store
from tests.helpers import run_cli
from tests.helpers.jobs import Job


def _rows(doc: dict, algorithm: str) -> dict[tuple[str, str], dict]:
    return {(r["implementation"], r["operation"]): r for r in doc["results"]
            if r["algorithm"] == algorithm}


def test_speed_json_has_verified_results_for_both_implementations(small_run) -> None:
    _, doc = small_run
    assert doc["status"] == "complete"
    for algorithm, ops in (("ML-KEM-768", ("keygen", "encaps", "decaps")),
                           ("ML-DSA-65", ("keygen", "sign", "verify"))):
        rows = _rows(doc, algorithm)
        for impl in ("liboqs-python", "cryptography"):
            for op in ops:
                row = rows[(impl, op)]
                assert row["ops_per_sec"] > 0
                assert abs(row["us_per_op"] * row["ops_per_sec"] - 1e6) < 1
                assert len(row["samples"]) == 5
        verified = {(v["algorithm"], v["implementation"]) for v in doc["verifications"]}
        assert {(algorithm, "liboqs-python"), (algorithm, "cryptography")} <= verified
    encaps = _rows(doc, "ML-KEM-768")[("cryptography", "encaps")]
    assert encaps["sizes"] == {"public_key": 1184, "secret_key": 64, "ciphertext": 1088,
                               "shared_secret": 32}
    assert _rows(doc, "RSA-2048")[("cryptography", "sign")]["sizes"]["signature"] == 256
    assert {r["operation"] for r in doc["results"] if r["algorithm"] == "RSA-2048"} >= {
        "sign", "verify", "encrypt", "decrypt"}


def test_speed_json_carries_the_fingerprint_and_is_stored(small_run) -> None:
    db, doc = small_run
    env = doc["environment"]
    assert env["os_build"] and isinstance(env["cpu_flags"], list)
    assert env["libraries"]["cryptography"].startswith("50.")
    assert env["libraries"]["liboqs"] == "0.13.0"
    stored = Store.open(str(db), create=False).load_run(doc["run_id"])
    assert stored.environment["os_build"] == env["os_build"]
    assert len(stored.measurements) == len(doc["results"])
    assert all(len(m.rounds) == 5 for m in stored.measurements)


@pytest.mark.process
def test_unoffered_pairs_are_listed_with_the_reason_and_the_rest_runs(
        runner: CliRunner, db_path: Path) -> None:
    result = runner.invoke(app, ["speed", "ml-kem-512", "--seconds", "0.05", "--rounds", "2",
                                 "--json", "--db", str(db_path)])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert {r["implementation"] for r in doc["results"]} >= {"liboqs-python"}
    (problem,) = [p for p in doc["problems"] if p["implementation"] == "cryptography"]
    assert problem["kind"] == "not offered" and "768/1024" in problem["reason"]


def test_unknown_algorithm_exits_2_with_suggestions(runner: CliRunner, db_path: Path) -> None:
    result = runner.invoke(app, ["speed", "mlkem76", "--db", str(db_path)])
    assert result.exit_code == 2
    assert "Did you mean: ML-KEM-768" in result.stderr
    assert not db_path.exists()


def test_an_implementation_that_covers_nothing_asked_is_a_usage_error(
        runner: CliRunner, db_path: Path) -> None:
    result = runner.invoke(app, ["speed", "x25519", "-i", "liboqs-python", "--db", str(db_path)])
    assert result.exit_code == 2
    assert "liboqs-python does not cover X25519" in result.stderr
    assert not db_path.exists()


def test_a_foreign_file_as_database_is_refused_before_measuring(
        runner: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "important.txt"
    target.write_text("keep me")
    result = runner.invoke(app, ["speed", "x25519", "--db", str(target)])
    assert result.exit_code == 1
    assert "not a pqbench database" in result.stderr
    assert target.read_text() == "keep me"


@pytest.mark.process
def test_json_stdout_is_one_document_and_nothing_else(tmp_path: Path) -> None:
    done = run_cli("speed", "x25519", "ml-kem-768", "--seconds", "0.05", "--rounds", "2",
                   "--json", "--db", str(tmp_path / "r.db"))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["format"] == "pqbench-run"
    assert {r["algorithm"] for r in doc["results"]} == {"X25519", "ML-KEM-768"}


@pytest.mark.process
def test_csv_output(runner: CliRunner, db_path: Path) -> None:
    result = runner.invoke(app, ["speed", "x25519", "-i", "cryptography", "--seconds", "0.05",
                                 "--rounds", "2", "--csv", "--db", str(db_path)])
    assert result.exit_code == 0, result.stderr
    header, *lines = result.stdout.strip().splitlines()
    assert header.startswith("run_id,algorithm,implementation,operation")
    assert len(lines) == 2 and all(",X25519,cryptography," in line for line in lines)


@pytest.mark.process
def test_without_liboqs_the_other_implementations_still_run(tmp_path: Path) -> None:
    env = {"OQS_INSTALL_PATH": str(tmp_path / "nowhere"), "HOME": str(tmp_path),
           "PQBENCH_CACHE_DIR": str(tmp_path / "cache"), "XDG_CACHE_HOME": str(tmp_path)}
    done = run_cli("speed", "ml-kem-768", "--seconds", "0.05", "--rounds", "2", "--json",
                   "--db", str(tmp_path / "r.db"), env=env)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert {r["implementation"] for r in doc["results"]} >= {"cryptography"}
    unavailable = [p for p in doc["problems"] if p["implementation"] == "liboqs-python"]
    assert unavailable and unavailable[0]["kind"] == "unavailable"
    assert "make setup" in unavailable[0]["reason"]
    assert not (tmp_path / "_oqs").exists()  # liboqs-python's git clone never started


@pytest.mark.process
def test_ctrl_c_keeps_completed_measurements_and_exits_130(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    job = Job("speed", "x25519", "ecdh-p-256", "ml-kem-768", "ml-dsa-65", "rsa2048",
              "-i", "cryptography", "--seconds", "3", "--rounds", "3", "--db", str(db))
    # One step to check each of the 14 rows, then one per round of 1 s, in cycles of the
    # 14 rows: from step 16 on the first round has finished, and until step 26 at most 11
    # rows have one.
    job.wait_for(r"\b(?:1[6-9]|2[0-6])/56\b")
    job.signal(signal.SIGINT)
    status, output = job.finish()
    assert status == 130, output
    (info,) = Store.open(str(db), create=False).list_runs()
    assert info.status == "interrupted"
    assert 0 < info.measurements < 13
    assert "interrupted" in output


@pytest.mark.process
def test_env_json_names_the_stack(runner: CliRunner) -> None:
    result = runner.invoke(app, ["env", "--json"])
    assert result.exit_code == 0, result.stderr
    env = json.loads(result.stdout)
    assert env["os"]["kernel"] and env["arch"]
    assert env["library_details"]["liboqs"]["version"] == "0.13.0"
    assert env["library_details"]["liboqs"]["library"].endswith(".so.0.13.0") or \
        "liboqs" in env["library_details"]["liboqs"]["library"]
    assert env["libraries"]["system_libcrypto"].startswith("OpenSSL")
    assert env["implementations"]["cryptography"] == "available"


def test_runs_lists_what_is_stored(runner: CliRunner, small_run) -> None:
    db, doc = small_run
    result = runner.invoke(app, ["runs", "--json", "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    listed = json.loads(result.stdout)["runs"]
    assert [r["run_id"] for r in listed] == [doc["run_id"]]
    assert listed[0]["status"] == "complete"


def test_runs_on_an_empty_or_missing_database_is_a_friendly_line(
        runner: CliRunner, tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    result = runner.invoke(app, ["runs", "--db", str(missing)])
    assert result.exit_code == 0, result.output
    assert result.stdout == (f"no runs stored yet in {missing}; `pqbench speed` measures and "
                             "stores one\n")
    assert not missing.exists()  # listing creates nothing
    result = runner.invoke(app, ["runs", "--json", "--db", str(missing)])
    assert json.loads(result.stdout) == {"database": str(missing), "runs": []}
    empty = tmp_path / "empty.db"
    Store.open(str(empty)).close()
    result = runner.invoke(app, ["runs", "--db", str(empty)])
    assert result.exit_code == 0 and result.stdout.startswith("no runs stored yet in ")
    # A file that is no database is still refused, and left alone.
    (tmp_path / "notes.db").write_text("my notes\n")
    result = runner.invoke(app, ["runs", "--db", str(tmp_path / "notes.db")])
    assert result.exit_code == 1 and (tmp_path / "notes.db").read_text() == "my notes\n"


@pytest.mark.process
def test_module_entry_point_prints_help() -> None:
    done = run_cli("--help")
    assert done.returncode == 0
    for command in ("speed", "verify", "env", "runs"):
        assert command in done.stdout


@pytest.mark.process
def test_the_stored_command_reproduces_the_run_under_a_shell(tmp_path: Path) -> None:
    import shlex

    done = run_cli("speed", "x25519", "-i", "cryptography", "-o", "derive", "--seconds", "0.05",
                   "--rounds", "2", "--label", "10.14.5 (18F132), retest", "--json",
                   "--db", str(tmp_path / "r.db"))
    assert done.returncode == 0, done.stderr
    argv = shlex.split(json.loads(done.stdout)["command"])
    assert argv[argv.index("--label") + 1] == "10.14.5 (18F132), retest"
