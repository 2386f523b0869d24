"""The second hostile round on secrets: passwords in every form libpq takes, and values
handed to an `ab` worker, are used and never printed, stored, exported or reported.

Each probe runs pqbench as a user would (a subprocess) against a real PostgreSQL server
whose roles need their passwords, then searches everything it left (terminal output, the
database's rows, exports, reports) for the probe's secret. The redacted form is asserted
where the location is shown, so the absence of the secret is not just absence of output.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pqbench.platform.untrusted import passwords_in, redact
from tests.helpers import starts_processes
from tests.helpers.leaks import Probe
from tests.helpers.postgres import database_text, password_role, running_server

QUICK = ["x25519", "-i", "cryptography", "-o", "derive", "--seconds", "0.05", "--rounds", "2"]


@pytest.fixture(scope="module")
@starts_processes
def server() -> Iterator[str]:
    with running_server() as url:
        yield url


def _store_export_report(probe: Probe, url: str, shown: str) -> None:
    """A run stored, listed, exported and reported through `url`; `shown` is where the
    redacted location must appear."""
    out = probe.cli("speed", *QUICK, "--db", url)
    assert shown in out, out  # the "stored as run ... in LOCATION" line, redacted
    (run_id,) = probe.run_ids(url)
    export = probe.tmp_path / "export.json"
    probe.cli("export", run_id, "-O", str(export), "--db", url)
    (command,) = [run["command"] for run in json.loads(export.read_text())["runs"]]
    assert "***" in command, command
    probe.cli("report", run_id, "--out", str(probe.tmp_path / "report"), "--db", url)
    assert "***" in (probe.tmp_path / "report" / "report.md").read_text()


@pytest.mark.process
@pytest.mark.parametrize("password", ["Sp ace9Pw", "Hunt@Me7Xy", "Co:lon5Pw"])
def test_a_password_with_a_space_at_or_colon_in_a_url_is_used_and_never_shown(
        server: str, tmp_path: Path, password: str) -> None:
    role = f"pqr{abs(hash(password)) % 10_000}"
    plain = password_role(server, role, password)
    url = plain.replace(f"{role}@", f"{role}:{password}@", 1)
    probe = Probe(tmp_path)
    _store_export_report(probe, url, f"{role}:***@127.0.0.1")
    # A wrong password with the same shape: the driver's error quotes no part of it.
    wrong = plain.replace(f"{role}@", f"{role}:Wrong@Tail9X@", 1)
    text = probe.cli("runs", "--db", wrong, code=1)
    assert "error:" in text and "***" in text, text
    for secret in (password, "Wrong@Tail9X", "Tail9X"):
        assert probe.leaks(secret, database_text(server, plain)) == [], secret


@pytest.mark.process
def test_sslpassword_and_password_parameters_are_both_hidden(server: str,
                                                             tmp_path: Path) -> None:
    plain = password_role(server, "pqq", "Qry5Pw")
    url = f"{plain}?sslpassword=SslPw8Zq&password=Qry5Pw"
    probe = Probe(tmp_path)
    _store_export_report(probe, url, "sslpassword=***&password=***")
    database = database_text(server, plain)
    assert probe.leaks("SslPw8Zq", database) == []
    assert probe.leaks("Qry5Pw", database) == []


@pytest.mark.process
def test_a_libpq_keyword_string_is_a_postgresql_location(server: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    plain = password_role(server, "pqk", "HuntMe7Xy")
    host, port = plain.split("@", 1)[1].split("/", 1)[0].rsplit(":", 1)
    name = plain.rsplit("/", 1)[1]
    dsn = f"host={host} port={port} user=pqk password=HuntMe7Xy dbname={name}"
    monkeypatch.chdir(tmp_path)
    probe = Probe(tmp_path)
    _store_export_report(probe, dsn, "password=***")
    database = database_text(server, plain)  # the run went to PostgreSQL, not a file
    assert "pqbench speed" in database
    # An unbalanced quote: a clear error, nothing created, the password not printed.
    text = probe.cli("runs", "--db", f"host={host} user=pqk password='Hunt Me7Xy", code=1)
    assert "error:" in text and "password=***" in text, text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.json", "report"]
    assert probe.leaks("HuntMe7Xy", database) == []
    assert probe.leaks("Hunt Me7Xy") == []


@pytest.mark.parametrize("location, shown", [
    ("postgresql://pqs:Sp ace9Pw@127.0.0.1:55433/pqs", "postgresql://pqs:***@127.0.0.1:55433/pqs"),
    ("postgresql://h/db?sslpassword=X1&password=Y2", "postgresql://h/db?sslpassword=***&password=***"),
    ("host=h user=u password='Hunt Me7Xy", "host=h user=u password=***"),
    ("host=h sslpassword=abc password=def", "host=h sslpassword=*** password=***"),
])
def test_redaction_of_the_second_round_forms(location: str, shown: str) -> None:
    assert redact(location) == shown


def test_the_pieces_of_a_password_are_redacted_from_a_driver_message() -> None:
    secrets = passwords_in("postgresql://pqu:Hunt@Me7Xy@127.0.0.1:55433/pqb")
    message = "failed to resolve host 'Me7Xy@127.0.0.1' for user pqu with Hunt"
    assert "Me7Xy" not in redact(message, secrets) and "Hunt" not in redact(message, secrets)


@pytest.mark.process
def test_values_passed_to_an_ab_worker_are_never_shown_or_stored(tmp_path: Path) -> None:
    """cmd:env NAME=VALUE and env:NAME=VALUE: names shown, values hidden unless the name
    is known to be harmless (OQS_INSTALL_PATH here)."""
    db = tmp_path / "ab.db"
    probe = Probe(tmp_path)
    secrets = ["PwEnv1x", "TokEnv2x", "PatEnv3x", "CookieEnv4x", "PrivEnv5x", "DockerEnv6x"]
    probe.cli(
        "ab", "x25519", "-i", "cryptography", "-o", "derive", "--max-seconds", "1.5",
        "--round", "0.01",
        "--a", "here", "--a", f"env:GITHUB_PAT={secrets[2]}",
        "--a", f"env:SESSION_COOKIE={secrets[3]}", "--a", f"env:PRIVATE={secrets[4]}",
        "--b", f"cmd:env --unset=HOME LIST={secrets[5]} {sys.executable} -m pqbench",
        "--db", str(db))
    good = probe.cli(
        "ab", "x25519", "-i", "cryptography", "-o", "derive", "--max-seconds", "1.5",
        "--round", "0.01", "--a", "here", "--a", f"env:GITHUB_PAT={secrets[2]}",
        "--a", "env:OQS_PERMIT_UNSUPPORTED_ARCHITECTURE=1",
        "--b", f"cmd:env MY_PASSWORD={secrets[0]} API_TOKEN={secrets[1]} "
               f"{sys.executable} -m pqbench",
        "--b", f"env:SESSION_COOKIE={secrets[3]}", "--db", str(db))
    assert "stored as runs" in good
    ids = probe.run_ids(str(db))
    assert len(ids) == 4
    export = tmp_path / "export.json"
    probe.cli("export", *ids, "-O", str(export), "--db", str(db))
    runs = json.loads(export.read_text())["runs"]
    labels = " ".join(str(run["label"]) for run in runs)
    for shown in ("GITHUB_PAT=***", "MY_PASSWORD=***", "API_TOKEN=***", "PRIVATE=***",
                  "SESSION_COOKIE=***", "LIST=***"):
        assert shown in labels, (shown, labels)
    assert "OQS_PERMIT_UNSUPPORTED_ARCHITECTURE=1" in labels, labels
    probe.cli("compare", *ids[2:], "--db", str(db))
    probe.cli("report", *ids, "--out", str(tmp_path / "report"), "--db", str(db))
    for secret in secrets:
        assert probe.leaks(secret) == [], secret


@pytest.mark.process
def test_a_stored_command_keeps_its_shell_quoting_when_redacted_again() -> None:
    """Run documents redact the stored command once more (an imported run's command is
    untrusted): word by word, so a redacted query password never swallows the closing
    quote and the command stays one pqbench invocation."""
    from pqbench.platform.untrusted import command_line, redact_command_line

    argv = ["speed", "--db", "postgresql://h:1/d?sslpassword=X1y&password=Y2z", "--label",
            "a@b", "--db=postgresql://u:Sp ace@h/d"]
    stored = command_line(argv)
    assert redact_command_line(stored) == stored
    assert shlex.split(stored)[3] == "postgresql://h:1/d?sslpassword=***&password=***"
    assert shlex.split(stored)[-1] == "--db=postgresql://u:***@h/d"
    assert "X1y" not in redact_command_line("pqbench speed --db 'postgresql://h/d?password=X1y")
