"""Where a secret may have gone: the outputs of the commands a test ran, the rows of its
databases, every file under its directory (exports, reports, charts, recovery files) and
their names. The hostile tests search all of it for each form of a secret."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import run_cli


class Probe:
    """Runs commands, keeps their output, and finds a secret in what they left."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.outputs: list[str] = []

    def cli(self, *args: str, code: int | None = 0, env: dict[str, str] | None = None) -> str:
        """stdout and stderr of a command that must exit with `code` (None: any)."""
        done = run_cli(*args, env=env)
        self.outputs += [done.stdout, done.stderr]
        assert "Traceback" not in done.stderr, done.stderr
        if code is not None:
            assert done.returncode == code, (args, done.stdout, done.stderr)
        return done.stdout + done.stderr

    def json(self, *args: str, code: int | None = 0,
             env: dict[str, str] | None = None) -> dict[str, object]:
        """The --json document a command printed."""
        done = run_cli(*args, env=env)
        self.outputs += [done.stdout, done.stderr]
        assert "Traceback" not in done.stderr, done.stderr
        if code is not None:
            assert done.returncode == code, (args, done.stdout, done.stderr)
        document: dict[str, object] = json.loads(done.stdout)
        return document

    def run_ids(self, location: str) -> list[str]:
        done = run_cli("runs", "--json", "--db", location)
        self.outputs += [done.stdout, done.stderr]
        assert done.returncode == 0, done.stderr
        return [r["run_id"] for r in json.loads(done.stdout)["runs"]]

    def leaks(self, secret: str, *database_texts: str) -> list[str]:
        """Where `secret` shows: output, the database texts given, any file or file name."""
        found = {"terminal output": "\n".join(self.outputs)}
        for i, text in enumerate(database_texts):
            found[f"database {i}"] = text
        for path in self.tmp_path.rglob("*"):
            if path.is_file():
                found[str(path)] = path.read_bytes().decode("latin-1")
            if secret in path.name:
                found[f"file name {path}"] = path.name
        return [where for where, text in found.items() if secret in text]
