"""What to tune on this machine before measuring, as `pyperf system show` says it.

Each setting that moves a benchmark's figures is read from the kernel (sysfs, procfs) and
judged: fine as it is, or what to set and why. The settings, and the reasons, are those
pyperf checks (`pyperf system show`: the CPU frequency governor, turbo boost, isolated
CPUs, the system load) with ASLR as pqbench needs it:

* the **governor** chooses the clock from the load: anything but "performance" changes the
  rates with what else runs (Linux cpufreq documentation, "CPU Performance Scaling");
* **turbo** (boost) raises the clock while temperature and the other cores allow it, so
  two runs an hour apart see different clocks;
* an **isolated CPU** (`isolcpus`, `nohz_full`) is one the scheduler gives no other work:
  `speed --cpu N` and `ab --cpu N` pin to it;
* the **load**: other work takes the CPUs the rows are timed on (a run is flagged as taken
  under load, `record.fingerprint.taken_under_load`);
* **ASLR** stays on (2: full): each pqbench run is a process of its own, and it is the run,
  with its memory layout, that pqbench counts as the unit (Kalibera & Jones 2013); turned
  off, every run would share one layout that users never have;
* a **hypervisor**'s other guests take time from this one (recorded as steal).

Pure over the files it reads: `root` stands for "/" in tests.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pqbench.measure.environment import cpu_frequency_policy, virtualization

_CPU = Path("sys/devices/system/cpu")
#: The 1-minute load per CPU from which other work is said to take the machine's time.
BUSY = 0.5


@dataclass(frozen=True)
class Setting:
    """One setting: its name, its value here, and what to do (None: fine as it is)."""

    name: str
    value: str
    advice: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"setting": self.name, "value": self.value, "advice": self.advice}


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip()
    except (OSError, ValueError):
        return None


def governor(root: Path = Path("/")) -> Setting:
    found = cpu_frequency_policy(root).get("governor")
    if not found:
        return Setting("CPU frequency governor", "not exposed (no cpufreq)")
    if found == "performance":
        return Setting("CPU frequency governor", found)
    return Setting("CPU frequency governor", found,
                   "performance (`sudo cpupower frequency-set -g performance`): this governor "
                   "moves the clock with the load, and the rates with it")


def turbo(root: Path = Path("/")) -> Setting:
    found = cpu_frequency_policy(root).get("boost")
    if found is None:
        return Setting("turbo boost", "not exposed")
    if found != "on":
        return Setting("turbo boost", found)
    where = ("intel_pstate/no_turbo to 1" if (root / _CPU / "intel_pstate").exists()
             else "cpufreq/boost to 0")
    return Setting("turbo boost", "on",
                   f"off (/sys/devices/system/cpu/{where}): a boosted clock depends on the "
                   "temperature and the other cores' work, so runs an hour apart differ")


def isolated(root: Path = Path("/")) -> Setting:
    found = _read(root / _CPU / "isolated")
    if found is None:
        return Setting("isolated CPUs", "not exposed")
    if found:
        return Setting("isolated CPUs", found, f"pin to one: `pqbench speed --cpu "
                       f"{found.split(',')[0].split('-')[0]}`, `pqbench ab --cpu ...`")
    return Setting("isolated CPUs", "none",
                   "isolate one (kernel command line: isolcpus=N nohz_full=N rcu_nocbs=N), "
                   "then pin to it with `--cpu N`")


def aslr(root: Path = Path("/")) -> Setting:
    found = _read(root / "proc" / "sys" / "kernel" / "randomize_va_space")
    names = {"0": "off", "1": "partial (stack, libraries)", "2": "full randomization"}
    if found is None:
        return Setting("ASLR", "not exposed")
    if found == "2":
        return Setting("ASLR", names[found])
    return Setting("ASLR", names.get(found, found),
                   "full (`sudo sysctl kernel.randomize_va_space=2`): pqbench counts each "
                   "run, in its own process and memory layout, as one unit; one fixed layout "
                   "for every run is one users never have")


def load(root: Path = Path("/"), cpus: int | None = None) -> Setting:
    found = (_read(root / "proc" / "loadavg") or "").split()
    if len(found) < 3:
        return Setting("system load", "not exposed")
    cpus = cpus or os.cpu_count() or 1
    value = f"{found[0]} on {cpus} CPUs (1 min)"
    try:
        busy = float(found[0]) / cpus >= BUSY
    except ValueError:
        return Setting("system load", value)
    if not busy:
        return Setting("system load", value)
    return Setting("system load", value,
                   "a quiet machine: other work takes the CPUs the rows are timed on (runs "
                   "taken under load are flagged, and their figures run slower)")


def hypervisor(root: Path = Path("/")) -> Setting:
    found = virtualization(root)
    if not found.get("hypervisor"):
        return Setting("hypervisor", "none (bare metal)")
    name = found.get("hypervisor_type") or found.get("detected") or found.get("dmi") or "yes"
    return Setting("hypervisor", str(name),
                   "a dedicated host where steady figures matter: other guests take this "
                   "one's time (pqbench records it as steal)")


def settings(root: Path = Path("/"), cpus: int | None = None) -> list[Setting]:
    """Every setting, in the order `pyperf system show` goes."""
    return [governor(root), turbo(root), isolated(root), load(root, cpus), aslr(root),
            hypervisor(root)]
