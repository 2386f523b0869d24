"""A PostgreSQL password typed on the command line is used to connect and nowhere else.

A real server (tests/helpers/postgres.py) with a role that needs its password: every command
runs as a user runs it (a subprocess), then the password is searched for in everything the
run left: terminal output, the database's rows, exports, the report and its charts, the
server log. The redacted form must show up where the location is shown, so the absence of
the password is not just the absence of output.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pqbench.platform.untrusted import command_line, passwords_in, redact
from tests.helpers import run_cli, starts_processes
from tests.helpers.postgres import LOGS, database_text, password_role, running_server

SECRET = "S3cretPW"
QUICK = ["x25519", "-i", "cryptography", "--seconds", "0.05", "--rounds", "3"]


@pytest.fixture(scope="module")
@starts_processes
def server() -> Iterator[str]:
    with running_server() as url:
        yield url


def _with_password(url: str, password: str = SECRET) -> str:
    scheme, rest = url.split("://", 1)
    role, host = rest.split("@", 1)
    return f"{scheme}://{role}:{password}@{host}"


@pytest.mark.process
def test_a_password_is_never_printed_stored_exported_or_reported(server: str,
                                                                 tmp_path: Path) -> None:
    plain = password_role(server, "pqu", SECRET)
    url = _with_password(plain)
    outputs: list[str] = []

    def cli(*args: str, env: dict[str, str] | None = None, code: int = 0) -> str:
        done = run_cli(*args, env=env)
        outputs.extend([done.stdout, done.stderr])
        assert done.returncode == code, done.stderr
        return done.stdout + done.stderr

    first = cli("speed", *QUICK, "--label", "before", "--db", url)
    assert "pqu:***@127.0.0.1" in first  # "stored as run ... in postgresql://pqu:***@..."
    # --db=URL in one argument, and the password as a query parameter (libpq accepts both).
    query_url = f"{plain}?password={SECRET}"
    cli("speed", *QUICK, "--label", "after", f"--db={query_url}")
    listed = json.loads(run_cli("runs", "--json", "--db", url).stdout)
    assert listed["database"] == redact(url) and "***" in listed["database"]
    ids = [r["run_id"] for r in listed["runs"]]
    assert len(ids) == 2
    cli("runs", "--db", url)
    env_doc = json.loads(run_cli("env", "--json", "--db", url).stdout)
    assert env_doc["database"] == redact(url)
    cli("compare", *ids, "--db", url)
    cli("compare", *ids, "--markdown", "--db", url)
    cli("history", "X25519", "--db", url)
    exported = tmp_path / "export.json"
    cli("export", *ids, "-O", str(exported), "--db", url)
    commands = [run["command"] for run in json.loads(exported.read_text())["runs"]]
    assert all("pqu:***@" in c or "password=***" in c for c in commands), commands
    cli("export", ids[0], "--format", "pytest-benchmark", "-O", str(tmp_path / "pb.json"),
        "--db", url)
    cli("import", str(exported), "--db", str(tmp_path / "copy.db"))
    cli("import", str(exported), "--json", "--db", url)  # already stored: skipped
    cli("report", *ids, "--out", str(tmp_path / "report"), "--db", url)
    assert "pqu:***@" in (tmp_path / "report" / "report.md").read_text()  # in the code block

    # Connection errors: wrong password, closed port, bad port, missing database, bad URL.
    host = plain.split("@", 1)[1].rsplit("/", 1)[0]
    for bad in (_with_password(plain, SECRET + "x"),
                f"postgresql://pqu:{SECRET}@127.0.0.1:1/x",
                f"postgresql://pqu:{SECRET}@127.0.0.1:notaport/x",
                f"postgresql://pqu:{SECRET}@{host}/nosuchdb",
                f"postgresql://pqu:{SECRET}@[::1/x",
                f"mysql://pqu:{SECRET}@{host}/x"):
        text = cli("runs", "--db", bad, code=1)
        assert "error:" in text and "***" in text, text

    # The ways the README gives to pass a password without a command line.
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:*:*:pqu:{SECRET}\n")
    pgpass.chmod(0o600)
    assert ids[0] in cli("runs", "--db", plain, env={"PGPASSWORD": SECRET})
    assert ids[0] in cli("runs", "--db", plain, env={"PGPASSFILE": str(pgpass)})
    service = tmp_path / "pg_service.conf"
    name = plain.rsplit("/", 1)[1]
    service.write_text(f"[pqbench]\nhost=127.0.0.1\nport={host.rsplit(':', 1)[1]}\n"
                       f"dbname={name}\nuser=pqu\n")
    assert ids[0] in cli("runs", "--db", "postgresql:///?service=pqbench",
                         env={"PGSERVICEFILE": str(service), "PGPASSFILE": str(pgpass)})

    found = {"terminal output": "\n".join(outputs),
             "database": database_text(server, plain),
             "sqlite copy": (tmp_path / "copy.db").read_bytes().decode("latin-1")}
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.name not in ("pgpass",):
            found[str(path)] = path.read_bytes().decode("latin-1")
    if server in LOGS:
        found["server log"] = LOGS[server].read_text(errors="replace")
        assert "password authentication failed" in found["server log"]
    leaked = [where for where, text in found.items() if SECRET in text]
    assert leaked == [], leaked


@pytest.mark.parametrize("location, shown", [
    ("postgresql://pqu:S3cretPW@127.0.0.1:55432/postgres",
     "postgresql://pqu:***@127.0.0.1:55432/postgres"),
    ("postgres://u:p%40ss@h/db", "postgres://u:***@h/db"),
    ("postgresql://u:a@b@h/db", "postgresql://u:***@h/db"),
    ("postgresql://h/db?sslmode=require&password=S3cretPW",
     "postgresql://h/db?sslmode=require&password=***"),
    ("host=h password='a b' user=u", "host=h password=*** user=u"),
    ("postgresql://pqu@h/db", "postgresql://pqu@h/db"),
    ("/home/me/pqbench.db", "/home/me/pqbench.db"),
])
def test_redaction_forms(location: str, shown: str) -> None:
    assert redact(location) == shown
    assert all(secret not in redact(f"error near {secret!r}", passwords_in(location))
               for secret in passwords_in(location))


@pytest.mark.process
def test_the_stored_command_redacts_any_url_argument() -> None:
    argv = ["speed", "--db", "postgresql://u:pw1@h/d", "--db=postgres://u:pw2@h/d",
            "--label", "a b"]
    assert command_line(argv) == ("pqbench speed --db 'postgresql://u:***@h/d' "
                                  "'--db=postgres://u:***@h/d' --label 'a b'")
