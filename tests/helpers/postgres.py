"""A real, throw-away PostgreSQL server for the storage tests.

Debian's server binaries (`initdb`, `pg_ctl`) from PATH or /usr/lib/postgresql/*/bin; as
root, apt-get installs them when missing (CI runs as root on a fresh machine). initdb
refuses to run as root, so the cluster belongs to the `postgres` user (or `nobody`) and
lives in a temporary directory, listening on 127.0.0.1 on a free port. The `pqbench`
superuser connects with trust auth; every other role needs its password (SCRAM), so a
test can log in as a role with a password (`password_role`). PQBENCH_TEST_POSTGRES_URL
points the tests at an existing server instead.
"""

from __future__ import annotations

import base64
import glob
import hashlib
import hmac
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

URL_VAR = "PQBENCH_TEST_POSTGRES_URL"
#: The server log of each server started here, by base URL (tests grep it for secrets).
LOGS: dict[str, Path] = {}

_HBA = """\
local all all trust
host all pqbench 127.0.0.1/32 trust
host all all 127.0.0.1/32 scram-sha-256
"""


class PostgresUnavailable(RuntimeError):
    pass


def _binary_dir() -> Path | None:
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit()
                        else 0)
    return Path(candidates[-1]).parent if candidates else None


def find_binaries() -> Path:
    """The directory of initdb and pg_ctl, installing Debian's postgresql as root if absent."""
    found = _binary_dir()
    if found:
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-q"], env=env, check=False,
                       capture_output=True, timeout=600)
        done = subprocess.run(["apt-get", "install", "-y", "-q", "postgresql"], env=env,
                              check=False, capture_output=True, text=True, timeout=900)
        found = _binary_dir()
        if found:
            return found
        raise PostgresUnavailable(f"apt-get install postgresql failed: {done.stderr[-2000:]}")
    raise PostgresUnavailable(
        "PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or under "
        "/usr/lib/postgresql/*/bin; install Debian's `postgresql` package or set "
        f"{URL_VAR} to a server the tests may create databases on")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _server_user() -> pwd.struct_passwd | None:
    """The unprivileged owner of the cluster when running as root, else None (ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise PostgresUnavailable("running as root and neither `postgres` nor `nobody` exists "
                              "to own the test cluster (initdb refuses root)")


def _as_user(user: pwd.struct_passwd | None, argv: list[str]) -> list[str]:
    if user is None:
        return argv
    if shutil.which("runuser"):
        return ["runuser", "-u", user.pw_name, "--", *argv]
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups",
            *argv]


@contextmanager
def running_server() -> Iterator[str]:
    """Start a cluster, yield its base URL (postgresql://pqbench@127.0.0.1:PORT), stop it."""
    if os.environ.get(URL_VAR):
        yield os.environ[URL_VAR].rstrip("/")
        return
    bindir = find_binaries()
    user = _server_user()
    root = Path(tempfile.mkdtemp(prefix="pqbench-pg-"))
    data = root / "data"
    if user is not None:
        os.chown(root, user.pw_uid, user.pw_gid)
    os.chmod(root, 0o700)
    port = _free_port()

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(_as_user(user, list(argv)), capture_output=True, text=True,
                              timeout=120, check=False, cwd=root)

    try:
        init = run(str(bindir / "initdb"), "-D", str(data), "-U", "pqbench", "-A", "trust",
                   "-E", "UTF8", "--no-sync")
        if init.returncode != 0:
            raise PostgresUnavailable(f"initdb failed: {init.stdout}\n{init.stderr}")
        hba = data / "pg_hba.conf"
        hba.write_text(_HBA)
        if user is not None:
            os.chown(hba, user.pw_uid, user.pw_gid)
        options = (f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c max_connections=200 "
                   "-c full_page_writes=off")
        start = run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "server.log"),
                    "-o", options, "-w", "-t", "60", "start")
        if start.returncode != 0:
            log = (root / "server.log").read_text() if (root / "server.log").exists() else ""
            raise PostgresUnavailable(f"pg_ctl start failed: {start.stderr}\n{log[-2000:]}")
        url = f"postgresql://pqbench@127.0.0.1:{port}"
        LOGS[url] = root / "server.log"
        try:
            yield url
        finally:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(base_url: str) -> str:
    """A new, empty database on the server; its URL."""
    import psycopg

    name = f"pqbench_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{base_url}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{base_url}/{name}"


def scram_verifier(password: str, iterations: int = 4096) -> str:
    """The SCRAM-SHA-256 verifier PostgreSQL stores for `password` (RFC 5802, RFC 7677),
    so CREATE ROLE carries a hash and the password itself never reaches the server."""
    salt = os.urandom(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()
    b64 = base64.b64encode
    return (f"SCRAM-SHA-256${iterations}:{b64(salt).decode()}$"
            f"{b64(stored_key).decode()}:{b64(server_key).decode()}")


def password_role(base_url: str, role: str, password: str) -> str:
    """A login role with a password owning a new database; the database's URL without
    the password (postgresql://ROLE@HOST:PORT/DB)."""
    import psycopg
    from psycopg import sql

    name = f"pqbench_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{base_url}/postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(scram_verifier(password))))
        conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(
            sql.Identifier(name), sql.Identifier(role)))
    host = base_url.split("@", 1)[1]
    return f"postgresql://{role}@{host}/{name}"


def database_text(base_url: str, location: str) -> str:
    """Every row of every pqbench table of the database at `location` (its URL, with or
    without a password), as JSON text, read as the superuser: where tests look for a
    secret that must never be stored."""
    import psycopg

    name = location.rsplit("/", 1)[1]
    with psycopg.connect(f"{base_url}/{name}") as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE tablename LIKE 'pqbench_%'")]
        assert "pqbench_runs" in tables
        return "\n".join(str(row[0]) for table in tables for row in conn.execute(
            f"SELECT row_to_json(t)::text FROM {table} t"))  # our own table names


def dump_text(base_url: str, location: str) -> str:
    """`pg_dump` of the database at `location` (its URL, with or without a password), as
    the superuser: the whole database as a backup would carry it, where tests look for a
    secret that must never be stored. The server's own pg_dump, so the versions match."""
    name = location.rsplit("/", 1)[1].split("?", 1)[0]
    found = _binary_dir()
    pg_dump = str(found / "pg_dump") if found else shutil.which("pg_dump") or "pg_dump"
    done = subprocess.run([pg_dump, "--dbname", f"{base_url}/{name}"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "pqbench_runs" in done.stdout
    return done.stdout
