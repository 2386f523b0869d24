"""Every real `speed` run stores the machine's state over its window: with a busy process
of someone else's beside it the others' share is clearly above zero, without it the field
is there and plausible. No timing is asserted: only shares of CPU time, and that a run
flagged as taken under load says so under its table and in its report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pqbench.data.record.fingerprint import taken_under_load
from pqbench.data.store import Store
from tests.helpers import run_cli
from tests.helpers.markdown import parse, plain, tables

pytestmark = pytest.mark.process

SPEED = ("speed", "sha256", "-i", "python", "--bytes", "16384", "--seconds", "0.6",
         "--rounds", "3")


def _plausible(state: dict[str, Any]) -> None:
    assert state["seconds"] > 0
    assert state["cpus"] == os.cpu_count()
    for key in ("loadavg_start", "loadavg_end"):
        assert len(state[key]) == 3 and min(state[key]) >= 0
    assert 0 <= state["others_cpu"] <= 1
    # The steal column exists since Linux 2.6.11: read it where the kernel has it.
    columns = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    assert (state["steal"] is not None) == (len(columns) > 8)
    if state["steal"] is not None:
        assert 0 <= state["steal"] <= 1


@pytest.fixture
def busy_stranger() -> Iterator[int]:
    """A process spinning on a core that is not the measurement's (its parent exits at
    once), running before the measurement starts: the event waited for is its first CPU
    time."""
    started = subprocess.run(
        ["sh", "-c", f'"{sys.executable}" -c "while True: pass" >/dev/null 2>&1 & echo $!'],
        capture_output=True, text=True, check=True)
    pid = int(started.stdout.strip())
    deadline = time.monotonic() + 60
    while True:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        if int(fields[11]) + int(fields[12]) > 5:  # utime + stime, proc(5)
            break
        assert time.monotonic() < deadline, "the busy process never ran"
        time.sleep(0.01)
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGKILL)


def test_a_quiet_run_stores_a_plausible_state(tmp_path: Path) -> None:
    done = run_cli(*SPEED, "--json", "--db", str(tmp_path / "runs.db"))
    assert done.returncode == 0, done.stderr
    _plausible(json.loads(done.stdout)["environment"]["run"])


def test_a_run_beside_a_busy_process_sees_the_others_share(tmp_path: Path,
                                                           busy_stranger: int) -> None:
    db = str(tmp_path / "runs.db")
    done = run_cli(*SPEED, "--db", db, env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    store = Store.open(db)
    (run,) = store.load_runs()
    store.close()
    state = run.environment.machine_state
    _plausible(state)
    # A whole spinning process on a machine of N cores: clearly above zero.
    assert state["others_cpu"] >= 0.05
    flagged = taken_under_load(run.environment)
    assert ("taken under load: other processes took" in done.stdout) is flagged
    report = run_cli("report", run.run_id, "--db", db, "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "report" / "report.md").read_text()
    tokens = parse(text)
    said = [plain(t) for t in tokens if t.type == "inline" and "taken under load" in plain(t)]
    assert bool(said) is flagged
    cells = [row[0] for table in tables(tokens) for row in table]
    assert "machine load" in cells
