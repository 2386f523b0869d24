"""Bad arguments and signals: a clear message and exit code, never a traceback, nothing lost.

Includes the CLI-wide sweep: every option and argument of every command gets hostile
values (NaN, infinities, huge and negative numbers, markup, escape sequences, a URL with a
password) and must end in a clean exit.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from pqbench.cli import app
from pqbench.data.store import Store
from pqbench.timing import multi
from tests.helpers.jobs import Job, corpus_written, wait_until

FAST = ["x25519", "-i", "cryptography", "-o", "derive", "--seconds", "0.02", "--rounds", "1"]


def _invoke(*args: str, env: dict[str, str] | None = None) -> typer.testing.Result:
    result = CliRunner().invoke(app, list(args), env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        (args, repr(result.exception))
    return result


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0", "1e9", "3601"])
def test_seconds_must_be_finite_and_bounded(tmp_path: Path, value: str) -> None:
    result = _invoke("speed", "x25519", "--seconds", value, "--db", str(tmp_path / "x.db"))
    assert result.exit_code == 2 and "--seconds" in result.output
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize("option, value", [("--bytes", "1000000000000"), ("--bytes", "0"),
                                           ("--bytes", str((64 << 20) + 1)),
                                           ("--rounds", "0"), ("--rounds", "1001"),
                                           ("--multi", "0"), ("--multi", "100000")])
def test_sizes_and_counts_are_bounded(tmp_path: Path, option: str, value: str) -> None:
    result = _invoke("speed", "aes-128-gcm", option, value, "--db", str(tmp_path / "x.db"))
    assert result.exit_code == 2 and option in result.output


def test_an_unknown_operation_blames_the_operation(tmp_path: Path) -> None:
    result = _invoke("speed", "x25519", "-o", "nosuchop", "--db", str(tmp_path / "x.db"))
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert "X25519 has no operation 'nosuchop' (-o): X25519 has keygen, derive" in message
    assert "is an operation of" not in message


@pytest.mark.process
def test_another_familys_operation_blames_the_operation_and_names_its_owners(
        tmp_path: Path) -> None:
    result = _invoke("speed", "ml-kem-768", "-o", "sign", "--db", str(tmp_path / "x.db"))
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert message == ("error: ML-KEM-768 has no operation 'sign' (-o): ML-KEM-768 has keygen, "
                       "encaps, decaps; 'sign' is an operation of ML-DSA-44, ML-DSA-65, "
                       "ML-DSA-87 ...")
    assert not (tmp_path / "x.db").exists()
    # Asked with an algorithm that has it: the other is named as not measured, and skipped.
    result = _invoke("speed", "ml-kem-768", "ed25519", "-o", "sign", "-i", "cryptography",
                     "--seconds", "0.02", "--rounds", "2", "--json",
                     "--db", str(tmp_path / "x.db"))
    assert result.exit_code == 0, result.output
    assert ("-o: each algorithm is measured for the operations it has; no sign in ML-KEM-768"
            in " ".join(result.stderr.split()))
    rows = {(r["algorithm"], r["operation"]) for r in json.loads(result.stdout)["results"]}
    assert rows == {("Ed25519", "sign")}


@pytest.mark.process
def test_more_workers_than_cpus_warns(tmp_path: Path) -> None:
    workers = multi.usable_cpus() + 1
    result = _invoke("speed", *FAST, "--multi", str(workers), "--db", str(tmp_path / "x.db"))
    assert result.exit_code == 0, result.output
    assert f"--multi {workers} on {multi.usable_cpus()} CPU(s)" in " ".join(
        result.stderr.split())


def test_report_out_under_a_file_or_uncreatable_is_a_clear_error(two_runs: Path,
                                                                 tmp_path: Path) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    for out in (blocker / "report", Path("/proc/pqbench-cannot/report")):
        result = _invoke("report", "20260101-a", "--db", str(two_runs), "--out", str(out))
        assert result.exit_code == 1 and "cannot write the report" in result.stderr, \
            result.output


@pytest.mark.slow
def test_an_existing_report_needs_force(two_runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    assert _invoke("report", "20260101-a", "--db", str(two_runs), "--out",
                   str(out)).exit_code == 0
    report = out / "report.md"
    report.write_text("edited by hand")
    result = _invoke("report", "20260101-a", "--db", str(two_runs), "--out", str(out))
    assert result.exit_code == 1 and "--force" in result.stderr
    assert report.read_text() == "edited by hand"
    assert _invoke("report", "20260101-a", "--db", str(two_runs), "--out", str(out),
                   "--force").exit_code == 0
    assert report.read_text().startswith("# pqbench report")


@pytest.mark.process
def test_an_empty_file_hashes_and_costs_no_other_file_its_result(tmp_path: Path) -> None:
    empty, normal = tmp_path / "empty.bin", tmp_path / "normal.bin"
    empty.write_bytes(b"")
    normal.write_bytes(os.urandom(3 << 20))
    db = tmp_path / "files.db"
    result = _invoke("files", "hash", str(empty), str(normal), "--cache", "as-is", "--json",
                     "--db", str(db))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    rows = {Path(r["path"]).name: r for r in doc["files"]}
    assert rows["empty.bin"]["digest"] == hashlib.sha256(b"").hexdigest()
    assert rows["empty.bin"]["hash_bytes_per_sec"] is None
    assert "no rate" in rows["empty.bin"]["note"]
    assert rows["normal.bin"]["digest"] == hashlib.sha256(normal.read_bytes()).hexdigest()
    assert rows["normal.bin"]["hash_bytes_per_sec"] > 0
    run = Store.open(str(db)).load_run(doc["run_id"])
    assert {Path(str(m.attributes["path"])).name for m in run.measurements} == {"normal.bin"}
    assert [p.kind for p in run.problems] == ["no rate"]
    # An empty file alone: its digest and why it has no rate, and no rate measured at
    # all, so the run is stored as failed and the command ends 1.
    table = _invoke("files", "hash", str(empty), "--cache", "as-is", "--db", str(db))
    assert table.exit_code == 1 and "no rate" in table.stdout
    assert "nothing was measured" in table.stderr


# --- signals ------------------------------------------------------------------------------


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "pqbench", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.process
def test_sigterm_stores_completed_measurements_and_exits_143(tmp_path: Path) -> None:
    db = tmp_path / "term.db"
    job = Job("speed", "x25519", "ecdh-p-256", "ml-kem-768", "ml-dsa-65", "rsa2048",
              "-i", "cryptography", "--seconds", "3", "--rounds", "3", "--db", str(db))
    # One step to check each of the 14 rows, then one per round of 1 s in cycles of the 14
    # rows: from step 16 the first round has finished, until step 26 at most 11 have one.
    job.wait_for(r"\b(?:1[6-9]|2[0-6])/56\b")
    job.signal(signal.SIGTERM, group=False)
    status, output = job.finish()
    assert status == 143, output
    (info,) = Store.open(str(db), create=False).list_runs()
    assert info.status == "interrupted" and 0 < info.measurements < 13
    assert "Traceback" not in output


@pytest.mark.process
def test_sigterm_during_files_corpus_removes_the_corpus(tmp_path: Path) -> None:
    where = tmp_path / "scratch"
    where.mkdir()
    db = tmp_path / "corpus.db"
    proc = _start("files", "corpus", "--total", "96M", "--dir", str(where), "--seed", "3",
                  "--db", str(db))
    wait_until(lambda: corpus_written(where), "the corpus being written", 60)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    assert list(where.iterdir()) == []
    (info,) = Store.open(str(db), create=False).list_runs()
    assert info.status == "interrupted" and info.kind == "files"


# --- every command, hostile values --------------------------------------------------------

BAD = ["nan", "inf", "-1", "0", "1e309", "9" * 30, "", "[/bold] x", "\x1b]0;T\x07",
       "postgresql://u:S3cretPW@127.0.0.1:1/x",
       # The second hostile round: a password with a space or a raw "@", sslpassword, a
       # libpq keyword string (once taken as an SQLite file named after the password),
       # one with an unbalanced quote, and argument bytes that are not UTF-8.
       "postgresql://pqs:Sp ace9Pw@127.0.0.1:1/pqs", "postgresql://pqu:Hunt@Me7Xy@127.0.0.1:1/pqb",
       "postgresql://127.0.0.1:1/x?sslpassword=SslPw8Zq&password=Qry5Pw",
       "host=127.0.0.1 port=1 user=pqu password=HuntMe8Xy",
       "host=127.0.0.1 user=pqu password='Hunt Me9Xy", "bad\udcff.bin"]
#: What no output may show, and no database file's name may hold.
SECRETS = ("S3cretPW", "Sp ace9Pw", "ace9Pw", "Me7Xy", "SslPw8Zq", "Qry5Pw", "HuntMe8Xy",
           "Me9Xy")


def _commands() -> list[tuple[list[str], list[str]]]:
    """(command path, option names and argument names) of every command."""
    group = typer.main.get_command(app)
    found = []

    def walk(command: object, path: list[str]) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                walk(sub, [*path, name])
            return
        names = [p.opts[0] if p.param_type_name == "option" else f"ARG:{p.name}"
                 for p in getattr(command, "params", [])
                 if not getattr(p, "is_flag", False) and p.name != "help"]
        found.append((path, names))

    walk(group, [])
    return found


def _base(path: list[str], data: Path, db: Path) -> list[str]:
    """Arguments that make a command valid apart from the one under test (the first is the
    command's argument, replaced when the argument is the one under test)."""
    return {
        "speed": FAST, "verify": ["x25519", "-i", "cryptography"],
        "memory": ["x25519", "-i", "libcrypto", "-o", "derive", "--calls", "1"],
        "export": ["20260101-a"], "import": [str(data)], "compare": ["20260101-a", "20260102-b"],
        "history": ["ML-KEM-768"], "annotate": ["a", "note"],
        "report": ["20260101-a", "--out", str(db.parent / "r"), "--force"],
        "hash": [str(data), "--cache", "as-is"], "corpus": ["--total", "1K"],
        "tls": ["-g", "x25519", "-c", "ed25519", "-i", "pyopenssl", "-o", "full",
                "--transport", "memory", "--seconds", "0.01", "--rounds", "1"],
        "calibrate": [*FAST, "--runs", "2"],
    }.get(path[-1], [])


#: Options a command hands on to another pqbench process, whose own entry here takes
#: every hostile value: `calibrate` runs `speed` with its suite's options (each value
#: would cost two whole `speed` processes).
HANDED_ON = {"calibrate": {"ARG:algorithm", "--implementation", "--operation", "--bytes",
                           "--seconds", "--rounds", "--label"}}


def _swept(names: list[str], command: str) -> list[str]:
    return [name for name in names if name not in HANDED_ON.get(command, ())]


#: Every command, one test each (so that `make test`'s workers share the sweep).
COMMANDS = {" ".join(path): names for path, names in _commands()}


def test_the_sweep_reaches_every_command_and_option() -> None:
    group = typer.main.get_command(app)
    assert {path.split()[0] for path in COMMANDS} == set(group.commands)  # type: ignore[attr-defined]
    assert sum(len(_swept(names, path.split()[-1])) for path, names in COMMANDS.items()) \
        * len(BAD) > 300


@pytest.mark.process
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_survives_hostile_values(command: str, tmp_path: Path, two_runs: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "export.json"
    assert _invoke("export", "20260101-a", "-O", str(data), "--db", str(two_runs)).exit_code == 0
    env = {"PQBENCH_DB": str(two_runs)}
    path = command.split()
    base = _base(path, data, two_runs)
    checked = 0
    for name in _swept(COMMANDS[command], path[-1]):
        for value in BAD:
            if name.startswith("ARG:"):
                args = [*path, value, *base[1:]] if base else [*path, value]
            else:
                args = [*path, *base, name, value]
            if name != "--db":
                args += ["--db", str(two_runs)]
            result = _invoke(*args, env=env)
            assert result.exit_code in (0, 1, 2), (args, result.output)
            assert "Traceback" not in result.output
            for secret in SECRETS:
                assert secret not in result.output, (secret, args)
            for char in ("\x1b", "\x07"):
                assert char not in result.stderr, (args, result.stderr)
            checked += 1
    assert checked == len(_swept(COMMANDS[command], path[-1])) * len(BAD)
    # A --db value is a location, never an SQLite file named after its password (an
    # -O or --out named so is what the user asked for).
    databases = [p.name for p in tmp_path.rglob("*") if any(s in p.name for s in SECRETS)
                 and p.is_file() and p.read_bytes()[:16] == b"SQLite format 3\x00"]
    assert databases == []
