"""`pqbench show RUN` prints a stored run again as `speed` printed it when it was measured:
the table, the paired ratios, the notes, at the terminal's width (as `pyperf show`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import replace
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


# Runs `pqbench ARGS...` as the entry does, then names the heavy libraries it loaded.
_HEAVY = ("import sys\nsys.argv = ['pqbench', *sys.argv[1:]]\n"
          "from pqbench.__main__ import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
          "print('HEAVY', *sorted({'numpy', 'scipy', 'matplotlib'} & set(sys.modules)), "
          "file=sys.stderr)")


def _shown(*args: str) -> tuple[list[str], str]:
    """(the heavy libraries `pqbench ARGS...` loaded, what it printed)."""
    done = subprocess.run([sys.executable, "-c", _HEAVY, *args], capture_output=True,
                          text=True, timeout=300, check=False)
    last = done.stderr.strip().splitlines()[-1].split()
    assert last[0] == "HEAVY", done.stderr
    return last[1:], done.stdout


def test_show_works_out_a_runs_paired_ratios_without_numpy(tmp_path: Path) -> None:
    """A speed run's paired ratios are signed-rank intervals over a few dozen cycles,
    worked out in plain Python (`analysis.walsh`): `show` prints them and loads neither
    numpy nor SciPy; nor do its rows as CSV, nor a run whose rounds were not paired by
    cycle (it has no paired ratio)."""
    from pqbench.data.store import Store
    from tests.helpers.runs import make_run

    db = str(tmp_path / "r.db")
    exchanges = (("ML-KEM-768", "liboqs", "keygen", None, 40_000.0),
                 ("ML-KEM-768", "liboqs", "encaps", None, 40_000.0),
                 ("ML-KEM-768", "liboqs", "decaps", None, 35_000.0),
                 ("X25519", "libcrypto", "keygen", None, 14_000.0),
                 ("X25519", "libcrypto", "derive", None, 19_000.0))
    paired = make_run("paired", seed=2, rows=exchanges)
    paired = replace(paired, settings={**paired.settings, "interleaved": True})
    unpaired = make_run("unpaired", seed=3, rows=exchanges)
    Store.open(db).save_runs([paired, unpaired])
    ratio = re.compile(r"ML-KEM-768 \[liboqs\] +X25519 \[libcrypto\] +exchange +[\d.]+x "
                       r"(faster|slower) \[")
    heavy, shown = _shown("show", "paired", "--db", db)
    assert heavy == [] and ratio.search(shown), (heavy, shown)
    heavy, shown = _shown("show", "paired", "--csv", "--db", db)
    assert heavy == [] and "ML-KEM-768" in shown and not ratio.search(shown)
    heavy, shown = _shown("show", "unpaired", "--db", db)
    assert heavy == [] and "ML-KEM-768" in shown and not ratio.search(shown)
