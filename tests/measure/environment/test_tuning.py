"""`pqbench env`'s advice, each setting judged from the files the kernel shows, on a made-up
root: fine as it is, or what to set and why (as `pyperf system show`)."""

from __future__ import annotations

from pathlib import Path

from pqbench.measure.environment import tuning

CPU = Path("sys/devices/system/cpu")


def _root(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    return tmp_path


def test_a_tuned_machine_is_fine_as_it_is(tmp_path: Path) -> None:
    root = _root(tmp_path, {
        f"{CPU}/cpufreq/policy0/scaling_governor": "performance",
        f"{CPU}/cpufreq/boost": "0",
        f"{CPU}/isolated": "1",
        "proc/loadavg": "0.20 0.15 0.10 1/200 999",
        "proc/sys/kernel/randomize_va_space": "2"})
    found = {s.name: s for s in tuning.settings(root, cpus=2)}
    assert found["CPU frequency governor"].advice is None
    assert found["turbo boost"].value == "off" and found["turbo boost"].advice is None
    assert found["ASLR"].advice is None
    assert found["system load"].advice is None
    # An isolated CPU is there: the advice is to pin to it.
    assert "--cpu 1" in (found["isolated CPUs"].advice or "")
    assert found["hypervisor"].value == "none (bare metal)"


def test_an_untuned_machine_is_told_what_to_set(tmp_path: Path) -> None:
    root = _root(tmp_path, {
        f"{CPU}/cpufreq/policy0/scaling_governor": "powersave",
        f"{CPU}/intel_pstate/no_turbo": "0",
        f"{CPU}/isolated": "",
        "proc/loadavg": "3.50 2.00 1.00 4/200 999",
        "proc/sys/kernel/randomize_va_space": "0",
        "sys/hypervisor/type": "xen"})
    found = {s.name: s for s in tuning.settings(root, cpus=4)}
    assert (found["CPU frequency governor"].advice or "").startswith("performance")
    assert "intel_pstate/no_turbo to 1" in (found["turbo boost"].advice or "")
    assert "isolcpus=N" in (found["isolated CPUs"].advice or "")
    assert found["system load"].value == "3.50 on 4 CPUs (1 min)"
    assert (found["system load"].advice or "").startswith("a quiet machine")
    assert found["ASLR"].value == "off" and "randomize_va_space=2" in (
        found["ASLR"].advice or "")
    assert found["hypervisor"].value == "xen" and found["hypervisor"].advice
    # Half a CPU of load per CPU is where other work starts to count; just under it, not.
    calm = _root(tmp_path / "calm", {"proc/loadavg": "1.99 1 1 1/1 1"})
    assert tuning.load(calm, cpus=4).advice is None
    busy = _root(tmp_path / "busy", {"proc/loadavg": "2.00 1 1 1/1 1"})
    assert tuning.load(busy, cpus=4).advice is not None


def test_what_the_kernel_does_not_show_is_said_so(tmp_path: Path) -> None:
    found = {s.name: s for s in tuning.settings(tmp_path, cpus=2)}
    assert found["CPU frequency governor"].value == "not exposed (no cpufreq)"
    assert found["turbo boost"].value == "not exposed"
    assert all(s.advice is None for name, s in found.items() if name != "hypervisor")
