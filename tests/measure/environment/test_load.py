"""The machine's state over a window: proc(5) arithmetic on made-up trees with hand-worked
answers, and on this machine with a real busy process beside the measuring one (the
others' share must hold the busy process's CPU time; the measuring process's own
children must not be counted as others)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pqbench.measure.environment import load

SPIN = "while True:\n    pass\n"
#: Clock ticks a busy process is waited for (at USER_HZ 100, 0.3 s of its CPU time).
TICKS = 30


def _stat_line(pid: int, comm: str, ppid: int, times: tuple[int, int, int, int]) -> str:
    """A /proc/PID/stat line (proc(5)): pid (comm) state ppid ... utime stime cutime
    cstime at fields 14 to 17."""
    return (f"{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194304 10 0 0 0 "
            f"{' '.join(map(str, times))} 20 0 1 0 100 1000 10\n")


def _proc(tmp_path: Path, cpu_line: str | None, processes: dict[int, tuple[str, int, tuple[
        int, int, int, int]]]) -> Path:
    root = tmp_path / "proc"
    root.mkdir(parents=True, exist_ok=True)
    if cpu_line is not None:
        (root / "stat").write_text(cpu_line + "\ncpu0 1 2 3 4\nintr 1\n")
    for pid, (comm, ppid, times) in processes.items():
        (root / str(pid)).mkdir(exist_ok=True)
        (root / str(pid) / "stat").write_text(_stat_line(pid, comm, ppid, times))
    return root


def test_the_others_share_and_steal_worked_by_hand(tmp_path: Path) -> None:
    """Machine: busy 200+20+100+5+5 = 330 ticks of 1,000 counted (steal 50, idle 600,
    iowait 20; the guest columns are inside user and nice already); the measuring tree
    (100 and its child 101; 102 is a stranger whose command name holds ") (") went from
    15+5 to 125+85 ticks, 190; others 330 - 190 = 140, 0.14 of the machine."""
    tree = {100: ("pqbench", 1, (10, 5, 0, 0)), 101: ("worker) (x", 100, (3, 2, 0, 0)),
            102: ("other) (", 1, (50, 50, 0, 0))}
    before = _proc(tmp_path, "cpu  1000 0 500 9000 100 0 0 200 0 0", tree)
    start = load.snapshot(before, pid=100)
    after = {100: ("pqbench", 1, (100, 25, 0, 0)), 101: ("worker) (x", 100, (83, 2, 0, 0)),
             102: ("other) (", 1, (150, 80, 0, 0))}
    later = _proc(tmp_path / "later", "cpu  1200 20 600 9600 120 5 5 250 7 0", after)
    end = load.snapshot(later, pid=100)
    assert start.own_ticks == 20 and end.own_ticks == 210
    found = load.state(start, end, cpus=2)
    assert found["others_cpu"] == pytest.approx(0.14)
    assert found["steal"] == pytest.approx(50 / 1000)
    assert found["cpus"] == 2
    assert len(found["loadavg_start"]) == 3 and all(v >= 0 for v in found["loadavg_start"])


def test_reaped_children_count_as_the_measurement(tmp_path: Path) -> None:
    """A worker that finished between the readings moved its time into its parent's cutime
    and cstime: still the measurement's, not others'."""
    start = load.snapshot(_proc(tmp_path, "cpu  0 0 0 0 0 0 0 0", {
        100: ("pqbench", 1, (10, 0, 0, 0)), 101: ("worker", 100, (40, 0, 0, 0))}), pid=100)
    end = load.snapshot(_proc(tmp_path / "b", "cpu  100 0 0 100 0 0 0 0", {
        100: ("pqbench", 1, (20, 0, 70, 10))}), pid=100)
    found = load.state(start, end)
    # Machine busy 100 of 200; the tree went from 10+40 to 20+70+10, 50 of the 100.
    assert found["others_cpu"] == pytest.approx((100 - 50) / 200)


def test_a_kernel_without_a_steal_column_has_no_steal(tmp_path: Path) -> None:
    tree = {5: ("pqbench", 1, (0, 0, 0, 0))}
    start = load.snapshot(_proc(tmp_path, "cpu  10 0 10 80 0 0 0", tree), pid=5)
    end = load.snapshot(_proc(tmp_path / "b", "cpu  20 0 20 160 0 0 0", tree), pid=5)
    found = load.state(start, end)
    assert found["steal"] is None
    assert found["others_cpu"] == pytest.approx(20 / 100)


def test_without_proc_only_the_load_averages_are_kept(tmp_path: Path) -> None:
    empty = tmp_path / "no-proc"
    empty.mkdir()
    found = load.state(load.snapshot(empty, pid=1), load.snapshot(empty, pid=1))
    assert found["others_cpu"] is None and found["steal"] is None
    assert found["seconds"] >= 0
    assert len(found["loadavg_end"]) == 3 and min(found["loadavg_end"]) >= 0


def _ticks(pid: int) -> int:
    """A process's utime + stime in clock ticks, read here, not through the module."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rfind(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def _wait_for_ticks(pid: int, since: int) -> int:
    """Wait until the process has used TICKS more clock ticks (the event), at most a
    minute; the ticks it used."""
    deadline = time.monotonic() + 60
    while _ticks(pid) - since < TICKS:
        assert time.monotonic() < deadline, "the busy process got no CPU for a minute"
        time.sleep(0.01)
    return _ticks(pid) - since


def _machine_ticks(snapshot: load.Snapshot) -> tuple[int, int]:
    assert snapshot.machine is not None
    busy = sum(snapshot.machine.get(k, 0) for k in ("user", "nice", "system", "irq", "softirq"))
    return busy, sum(snapshot.machine.values())


@pytest.fixture
def stranger() -> Iterator[int]:
    """A busy process that is not this process's descendant (its parent exits at once),
    as another user's job is."""
    started = subprocess.run(
        ["sh", "-c", f'"{sys.executable}" -c "{SPIN}" >/dev/null 2>&1 & echo $!'],
        capture_output=True, text=True, check=True)
    pid = int(started.stdout.strip())
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGKILL)


@pytest.mark.process
def test_a_busy_stranger_is_counted_as_others(stranger: int) -> None:
    start = load.snapshot()
    used = _wait_for_ticks(stranger, _ticks(stranger))
    end = load.snapshot()
    found = load.state(start, end)
    _, total_start = _machine_ticks(start)
    _, total_end = _machine_ticks(end)
    others_ticks = found["others_cpu"] * (total_end - total_start)
    # Per-process and machine-wide times are sampled apart: a tenth of slack.
    assert others_ticks >= 0.9 * used - 2


@pytest.mark.process
def test_the_measurements_own_children_are_not_others() -> None:
    child = subprocess.Popen([sys.executable, "-c", SPIN])
    try:
        start = load.snapshot()
        used = _wait_for_ticks(child.pid, _ticks(child.pid))
        end = load.snapshot()
    finally:
        child.kill()
        child.wait()
    found = load.state(start, end)
    busy_start, total_start = _machine_ticks(start)
    busy_end, total_end = _machine_ticks(end)
    others_ticks = found["others_cpu"] * (total_end - total_start)
    assert others_ticks <= (busy_end - busy_start) - 0.9 * used + 2
