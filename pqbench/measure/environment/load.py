"""The machine's state while a run measured: how busy the rest of it was.

A figure taken while other work ran is slower than the same figure on a quiet machine
(a warm SHA-256 pass read 563 MB/s at load 7.8 and 1.7 GB/s quiet), and nothing in the
figure says which it was. So every run records, over its own window:

* the load averages (1, 5 and 15 minutes) at its start and at its end (getloadavg(3));
* `others_cpu`: the CPU time every other process took, as a share of all the machine's
  cores: the busy time /proc/stat counts for the whole machine (user, nice, system, irq,
  softirq) less the time of the measuring process and its children (their
  /proc/PID/stat utime, stime, cutime and cstime), over all the time /proc/stat counted;
* `steal`: the share a hypervisor gave to other guests (/proc/stat's eighth column,
  Linux 2.6.11 and later), where the kernel reports it.

All of it is proc(5) arithmetic in clock ticks, read twice; nothing is sampled in
between. Where /proc is missing (macOS, Windows) only the load averages are recorded.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: /proc/stat's "cpu" line columns, in order (proc(5)).
_COLUMNS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
_BUSY = ("user", "nice", "system", "irq", "softirq")


@dataclass(frozen=True)
class Snapshot:
    """One reading: wall time, load averages, machine ticks and this process tree's."""

    monotonic: float
    loadavg: tuple[float, float, float] | None
    machine: dict[str, int] | None
    own_ticks: int | None


def _loadavg() -> tuple[float, float, float] | None:
    try:
        one, five, fifteen = os.getloadavg()
    except (OSError, AttributeError):
        return None
    return (round(one, 2), round(five, 2), round(fifteen, 2))


def _machine(proc: Path) -> dict[str, int] | None:
    """The summed "cpu" line of /proc/stat by column (columns the kernel lacks absent)."""
    try:
        first = (proc / "stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if not first or first[0] != "cpu":
        return None
    try:
        return {name: int(value) for name, value in zip(_COLUMNS, first[1:], strict=False)}
    except ValueError:
        return None


def _stat_fields(proc: Path, pid: str) -> list[str] | None:
    """A process's /proc/PID/stat fields after its command name (which may hold spaces
    and parentheses, so the split starts after the last ")")."""
    try:
        text = (proc / pid / "stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2:].split()


def _tree_ticks(proc: Path, root: int) -> int | None:
    """CPU ticks of a process and every live descendant, each with its reaped children
    (utime + stime + cutime + cstime): what the measurement itself used, workers included."""
    parents: dict[str, str] = {}
    try:
        pids = [entry.name for entry in proc.iterdir() if entry.name.isdigit()]
    except OSError:
        pids = []
    times: dict[str, int] = {}
    for pid in pids:
        fields = _stat_fields(proc, pid)
        # After the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
        if fields is None or len(fields) < 15:
            continue
        parents[pid] = fields[1]
        times[pid] = sum(int(v) for v in fields[11:15])
    if str(root) not in times:
        fields = _stat_fields(proc, str(root))
        if fields is None or len(fields) < 15:
            return None
        times[str(root)] = sum(int(v) for v in fields[11:15])
    tree = {str(root)}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return sum(times.get(pid, 0) for pid in tree)


def snapshot(proc: Path = Path("/proc"), pid: int | None = None) -> Snapshot:
    return Snapshot(time.monotonic(), _loadavg(), _machine(proc),
                    _tree_ticks(proc, pid if pid is not None else os.getpid()))


def state(start: Snapshot, end: Snapshot, cpus: int | None = None) -> dict[str, Any]:
    """The fingerprint's `run` part for the window between two snapshots."""
    found: dict[str, Any] = {
        "seconds": round(end.monotonic - start.monotonic, 3),
        "cpus": cpus if cpus is not None else os.cpu_count(),
        "loadavg_start": list(start.loadavg) if start.loadavg else None,
        "loadavg_end": list(end.loadavg) if end.loadavg else None,
        "others_cpu": None,
        "steal": None,
    }
    if start.machine is None or end.machine is None:
        return found
    delta = {name: end.machine.get(name, 0) - start.machine.get(name, 0)
             for name in end.machine}
    total = sum(delta.values())
    if total <= 0:  # a window shorter than one tick
        return found
    if start.own_ticks is not None and end.own_ticks is not None:
        busy = sum(delta.get(name, 0) for name in _BUSY)
        others = busy - (end.own_ticks - start.own_ticks)
        found["others_cpu"] = round(min(1.0, max(0.0, others / total)), 4)
    if "steal" in end.machine:
        found["steal"] = round(min(1.0, max(0.0, delta["steal"] / total)), 4)
    return found


class Watch:
    """The machine's state over a window: `Watch()` at the start, `.state()` at the end."""

    def __init__(self, proc: Path = Path("/proc")) -> None:
        self._proc = proc
        self._start = snapshot(proc)

    def state(self) -> dict[str, Any]:
        return state(self._start, snapshot(self._proc))
