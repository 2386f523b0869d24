"""pqbench's own children run the pqbench that started them, wherever it is started: not a
`pqbench` package or module the current directory happens to hold (`python -m` would put
that directory first on the import path)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pqbench.platform import processes
from pqbench.sessions import sides


def test_every_child_of_this_pqbench_is_started_with_the_safe_path() -> None:
    assert processes.python_module("pqbench") == [sys.executable, "-P", "-m", "pqbench"]
    assert processes.python_module("x.y", "/opt/py/bin/python") == [
        "/opt/py/bin/python", "-P", "-m", "x.y"]
    # An ab worker here, and in a pip build's own Python.
    assert sides.parse(["here"], "a").argv()[:3] == [sys.executable, "-P", "-m"]
    from pqbench.sessions.sides.pip import parse_pip

    assert parse_pip("cryptography==42.0.8").command()[1:3] == ("-P", "-m")


@pytest.mark.process
def test_a_masked_speed_run_in_a_folder_holding_another_pqbench_measures(tmp_path: Path
                                                                         ) -> None:
    """`speed --mask` measures in a child of its own. Started in a folder holding another
    pqbench (here a decoy that only says so), the child ran the decoy: the row was
    "unavailable: the native extension was not built". It now runs this pqbench."""
    decoy = tmp_path / "pqbench"
    decoy.mkdir()
    (decoy / "__init__.py").write_text("")
    (decoy / "__main__.py").write_text("import sys\nsys.exit('the decoy pqbench ran')\n")
    script = Path(sys.executable).parent / "pqbench"  # the installed entry, as a user runs it
    done = subprocess.run([str(script), "speed", "x25519", "-i", "libcrypto", "-o", "derive",
                           "--seconds", "0.02", "--rounds", "1", "--mask", "aesni", "--json",
                           "--db", str(tmp_path / "r.db")], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, check=False, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert "decoy" not in done.stderr
    assert '"implementation": "libcrypto"' in done.stdout
