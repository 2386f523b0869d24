"""One limit for a label, checked where it enters: `--label` of every measuring command,
`ab --label-a/--label-b`, the sides `ab` names its runs after and the builds `bisect`
does. What is stored can always be exported and imported again: a label at the limit
goes through, one past it is refused before anything is measured, and a command line
longer than the run format holds is stored cut short."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pqbench.cli import app
from pqbench.data.record.format import LABEL_CHARS, TEXT_CHARS
from pqbench.data.store import Store
from tests.helpers import run_cli

AB = ["ab", "x25519", "-i", "cryptography", "-o", "derive", "--max-seconds", "1",
      "--round", "0.01"]
LONG = "L" * (LABEL_CHARS + 1)


@pytest.mark.parametrize("args", [
    ["memory", "x25519", "--label", LONG],
    ["speed", "x25519", "--label", LONG],
    [*AB, "--a", "here", "--b", "here", "--label-a", LONG],
    [*AB, "--a", "here", "--b", "here", "--label-b", LONG],
    [*AB, "--a", "here", "--b", f"env:OQS_LONG={LONG}"],
    ["bisect", "x25519", "--series", "here", "--series", f"env:OQS_LONG={LONG}"],
], ids=["memory", "speed", "ab-a", "ab-b", "ab-side", "bisect-build"])
def test_a_label_past_the_limit_is_refused_where_it_enters(tmp_path: Path,
                                                           args: list[str]) -> None:
    db = tmp_path / "x.db"
    result = CliRunner().invoke(app, [*args, "--db", str(db)])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 2, result.output
    assert str(LABEL_CHARS) in result.stderr, result.stderr
    assert not db.exists()  # refused before anything was measured or stored


@pytest.mark.process
def test_labels_at_the_limit_are_stored_exported_and_imported_again(tmp_path: Path) -> None:
    db, copy = tmp_path / "ab.db", tmp_path / "copy.db"
    a, b = "a" * LABEL_CHARS, "b" * LABEL_CHARS
    done = run_cli(*AB, "--a", "here", "--b", "here", "--label-a", a, "--label-b", b,
                   "--db", str(db))
    assert done.returncode == 0, done.stderr
    ids = [info.run_id for info in Store.open(str(db), create=False).list_runs()]
    export = tmp_path / "export.json"
    assert run_cli("export", *ids, "-O", str(export), "--db", str(db)).returncode == 0
    assert {r["label"] for r in json.loads(export.read_text())["runs"]} == {a, b}
    imported = run_cli("import", str(export), "--db", str(copy))
    assert imported.returncode == 0, imported.stderr
    assert len(Store.open(str(copy), create=False).list_runs()) == 2


@pytest.mark.process
def test_a_command_line_longer_than_the_format_holds_is_stored_cut_short(tmp_path: Path
                                                                         ) -> None:
    db, copy = tmp_path / "runs.db", tmp_path / "copy.db"
    repeated = ["-o", "derive"] * (TEXT_CHARS // 8)
    done = subprocess.run([sys.executable, "-m", "pqbench", "speed", "x25519", "-i",
                           "cryptography", *repeated, "--seconds", "0.02", "--rounds", "2",
                           "--db", str(db)], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    (run,) = Store.open(str(db), create=False).load_runs()
    assert len(run.command) == TEXT_CHARS and run.command.endswith("…")
    export = tmp_path / "export.json"
    assert run_cli("export", run.run_id, "-O", str(export), "--db", str(db)).returncode == 0
    imported = run_cli("import", str(export), "--db", str(copy))
    assert imported.returncode == 0, imported.stderr
