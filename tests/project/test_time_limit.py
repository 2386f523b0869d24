"""Every test has a time limit (pytest-timeout, configured in pyproject.toml): a loop that
never ends fails with its name and its stack instead of hanging the suite."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.helpers import REPO


def test_the_suite_sets_a_per_test_time_limit() -> None:
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"]
    assert 60 <= int(options["timeout"]) <= 900


@pytest.mark.process
def test_a_hung_test_fails_with_its_name(tmp_path: Path) -> None:
    (tmp_path / "test_hang.py").write_text(
        "def test_a_midpoint_that_never_moves():\n"
        "    low, high = 0, 2\n"
        "    while high - low > 1:\n"
        "        high = (low + high + 1) // 2 + 1\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "timeout=2",
         "--rootdir", str(tmp_path), str(tmp_path / "test_hang.py")],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Timeout" in done.stdout and "test_a_midpoint_that_never_moves" in done.stdout
