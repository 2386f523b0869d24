"""`pqbench show RUN` prints a stored run again as `speed` printed it when it was measured:
the table, the paired ratios, the notes, at the terminal's width (as `pyperf show`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process


def _pqbench(*args: str, columns: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pqbench", *args], capture_output=True,
                          text=True, timeout=600, check=False,
                          env={**os.environ, "COLUMNS": str(columns)})


@pytest.mark.parametrize("columns", [80, 120])
def test_show_prints_a_stored_run_as_speed_printed_it(tmp_path: Path, columns: int) -> None:
    db = str(tmp_path / "r.db")
    measured = _pqbench("speed", "ml-kem-768", "x25519", "aes-128-gcm", "-i", "liboqs", "-i",
                        "libcrypto", "--bytes", "16384", "--seconds", "0.1", "--rounds", "4",
                        "--db", db, columns=columns)
    assert measured.returncode == 0, measured.stderr
    stored = re.search(r"stored as run (\S+) in ", " ".join(measured.stderr.split()))
    assert stored is not None, measured.stderr
    run_id = stored.group(1)
    printed = measured.stdout.strip().splitlines()
    assert any(line.startswith("what it costs") for line in printed), measured.stdout
    for named in (run_id, run_id[:18], None):  # the id, a unique prefix, the newest run
        shown = _pqbench("show", *([named] if named else []), "--db", db, columns=columns)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.strip().splitlines() == printed, (shown.stdout, measured.stdout)
        assert max(len(line) for line in shown.stdout.splitlines()) <= columns
        assert run_id in shown.stderr + shown.stdout


def test_show_of_a_run_not_stored_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    done = _pqbench("speed", "x25519", "-i", "libcrypto", "--seconds", "0.05", "--rounds",
                    "2", "--db", db, columns=80)
    assert done.returncode == 0, done.stderr
    missing = _pqbench("show", "19990101T000000Z-nothere", "--db", db, columns=80)
    assert missing.returncode != 0
    assert "Traceback" not in missing.stderr and "19990101T000000Z-nothere" in missing.stderr
