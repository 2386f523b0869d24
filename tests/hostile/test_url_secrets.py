"""A PostgreSQL password in every form libpq reads, and a few it reads differently from
pqbench: raw "/", "?", "#" and "@" in a URL's password, a percent-encoded parameter name,
quoted and escaped keyword values, several hosts. Each form connects to a real server
(tests/helpers/postgres.py), stores, lists, exports and reports a run; the same form with
a wrong password fails with the driver's whole message. Every form of the secret (as
typed, as libpq decodes it, percent-encoded) is searched for in everything left behind.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

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


def _parts(plain: str) -> tuple[str, str, str, str]:
    """(role, host, port, database) of password_role's URL."""
    role, rest = plain.split("://", 1)[1].split("@", 1)
    hostport, name = rest.split("/", 1)
    host, port = hostport.rsplit(":", 1)
    return role, host, port, name


def _url(password: str) -> Callable[[str], str]:
    def form(plain: str) -> str:
        role, host, port, name = _parts(plain)
        return f"postgresql://{role}:{password}@{host}:{port}/{name}"
    return form


def _query(name: str, value: str) -> Callable[[str], str]:
    return lambda plain: f"{plain}?sslmode=disable&{name}={value}"


def _keyword(value: str) -> Callable[[str], str]:
    def form(plain: str) -> str:
        role, host, port, name = _parts(plain)
        return f"host={host} port={port} user={role} password={value} dbname={name}"
    return form


def _hosts(password: str) -> Callable[[str], str]:
    """Two hosts, the first one closed: libpq tries the second."""
    def form(plain: str) -> str:
        role, host, port, name = _parts(plain)
        return f"postgresql://{role}:{password}@{host}:1,{host}:{port}/{name}"
    return form


# (id, password the role has, the location with a given password, its secret as typed)
FORMS = [
    ("raw-slash", "ab/cd7Sx", _url, "ab/cd7Sx"),
    ("raw-question-mark", "ab?cd7Sx", _url, "ab?cd7Sx"),
    ("raw-hash", "ab#cd7Sx", _url, "ab#cd7Sx"),
    ("raw-at-and-slash", "ab@cd/ef7Sx", _url, "ab@cd/ef7Sx"),
    ("encoded-name", "Qx9/pw7Sx", lambda p: _query("pass%77ord", quote(p, safe="")),
     "Qx9%2Fpw7Sx"),
    ("encoded-space", "a b7Sx", lambda p: _query("password", quote(p, safe="")), "a%20b7Sx"),
    ("keyword-quoted", "ab'c d7Sx", lambda p: _keyword("'ab\\'c d7Sx'"), "'ab\\'c d7Sx'"),
    ("keyword-escaped", "ab cd7Sx", lambda p: _keyword("ab\\ cd7Sx"), "ab\\ cd7Sx"),
    ("several-hosts", "Mh7Sx/pw", _hosts, "Mh7Sx/pw"),
]


def _forms_of(typed: str, password: str) -> set[str]:
    """Every form a secret may take: as typed, decoded, percent-encoded, and the pieces a
    driver could quote between URL delimiters."""
    forms = {typed, password, quote(password, safe="")}
    return forms | {piece for f in list(forms) for piece in
                    f.replace("@", "/").replace("?", "/").replace("#", "/").split("/")
                    if len(piece) >= 5}


@pytest.mark.process
@pytest.mark.parametrize("password, make, typed", [f[1:] for f in FORMS],
                         ids=[f[0] for f in FORMS])
def test_each_form_connects_and_its_password_is_never_shown(
        server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, password: str,
        make: Callable[[str], Callable[[str], str]], typed: str) -> None:
    role = f"pqf{abs(hash(password)) % 100_000}"
    plain = password_role(server, role, password)
    location = make(password)(plain)
    assert typed in location
    monkeypatch.chdir(tmp_path)  # a location misread as a file would be created here
    probe = Probe(tmp_path)
    stored = probe.cli("speed", *QUICK, "--db", location)
    assert f"in {redact(location)}" in stored and "***" in redact(location), stored
    (run_id,) = probe.run_ids(location)
    export = tmp_path / "export.json"
    probe.cli("export", run_id, "-O", str(export), "--db", location)
    (command,) = [run["command"] for run in json.loads(export.read_text())["runs"]]
    assert "***" in command, command
    probe.cli("report", run_id, "--out", str(tmp_path / "report"), "--db", location)
    assert "***" in (tmp_path / "report" / "report.md").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.json", "report"]

    # The same form with a wrong password: the driver's message whole, the secret masked.
    wrong_typed = typed.replace("7Sx", "7Wr0ngX")
    wrong = location.replace(typed, wrong_typed)
    failed = probe.cli("runs", "--db", wrong, code=1)
    assert "password authentication failed" in failed, failed
    assert "connection to server at" in failed, failed
    database = database_text(server, plain)
    for secret in _forms_of(typed, password) | _forms_of(wrong_typed, "7Wr0ngX"):
        assert probe.leaks(secret, database) == [], secret
    assert set(passwords_in(location)) >= {typed, password}


@pytest.mark.parametrize("location, shown", [
    # The two forms the last mutation sample found unguarded.
    ("postgresql://h/db?sslmode=require&sslpassword=a b c",
     "postgresql://h/db?sslmode=require&sslpassword=***"),
    ("postgres://u:p%40ss@h/db", "postgres://u:***@h/db"),
    ("postgresql://u:ab/cd@h:5432/db", "postgresql://u:***@h:5432/db"),
    ("postgresql://u:ab@cd/ef@h/db?sslmode=require", "postgresql://u:***@h/db?sslmode=require"),
    ("postgresql://u:ab?c#d@h/db", "postgresql://u:***@h/db"),
    ("postgresql://h/db?pass%77ord=x&%73slpassword=y", "postgresql://h/db?pass%77ord=***&%73slpassword=***"),
    ("postgresql://h:5432/db?application_name=me@box", "postgresql://h:5432/db?application_name=me@box"),
    ("postgresql://u@h/db?application_name=me@box", "postgresql://u@h/db?application_name=me@box"),
    ("host=h password = 'a\\' b' user=u", "host=h password = *** user=u"),
    ("host=h password=a\\ b user=u", "host=h password=*** user=u"),
    ("host=h password=x'y user=u", "host=h password=*** user=u"),
])
def test_redaction_follows_the_grammar_form_by_form(location: str, shown: str) -> None:
    assert redact(location) == shown
    assert redact(shown) == shown  # redacting twice changes nothing


def test_a_decoded_password_is_masked_in_a_driver_message() -> None:
    secrets = passwords_in("postgres://u:p%40ss@h/db")
    assert "p@ss" in secrets and "p%40ss" in secrets
    assert redact("FATAL: password 'p@ss' rejected", secrets) == "FATAL: password '***' rejected"


@pytest.mark.process
def test_masking_keeps_the_rest_of_the_message(tmp_path: Path) -> None:
    """A redacted location inside a message is redacted again when shown: the text after
    it stays, and pieces of a password are not hunted for between words."""
    message = ("database error on postgresql://u@h/d?password=***: connection failed: "
               'connection to server at "127.0.0.1", port 5432 failed')
    assert redact(message) == message
    location = "host=127.0.0.1 user=u password='unterminated connection"
    probe = Probe(tmp_path)
    text = probe.cli("runs", "--db", location, code=1)
    assert "unterminated quoted string in connection info string" in text, text
    assert "password=***" in text
