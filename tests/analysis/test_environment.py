"""The platform part of the fingerprint: what explains an OS-level change, read safely.

Made-up /proc and /sys trees (written here, so the expected values are ours) check each
read and its fallbacks; an empty tree and unreadable files check that absence is None,
never an error; this machine's values are checked against other readers (getconf, grep).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pqbench.analysis.explain import Difference, causes_for, differences
from pqbench.measure import environment
from tests.helpers import run_cli

CPU = Path("sys/devices/system/cpu")


def write(root: Path, relative: str | Path, text: str | bytes) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)


def test_every_read_from_a_made_up_machine(tmp_path: Path) -> None:
    write(tmp_path, "etc/os-release", 'NAME="Debian GNU/Linux"\nPRETTY_NAME="Debian 13"\n')
    write(tmp_path, "proc/cpuinfo", "processor\t: 0\nmicrocode\t: 0x2b000603\n"
                                    "flags\t\t: fpu sse2 hypervisor avx2\n")
    write(tmp_path, CPU / "cpufreq/policy0/scaling_driver", "intel_pstate\n")
    write(tmp_path, CPU / "cpufreq/policy0/scaling_governor", "powersave\n")
    write(tmp_path, CPU / "intel_pstate/no_turbo", "1\n")
    write(tmp_path, CPU / "smt/control", "on\n")
    write(tmp_path, CPU / "smt/active", "1\n")
    write(tmp_path, CPU / "vulnerabilities/spectre_v2", "Mitigation: Enhanced IBRS\n")
    write(tmp_path, CPU / "vulnerabilities/gather_data_sampling", "Mitigation: Microcode\n")
    write(tmp_path, "sys/class/dmi/id/sys_vendor", "QEMU\n")
    write(tmp_path, "sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n")
    state = environment.platform_state(tmp_path)
    assert state["userland"] == "Debian 13"
    assert state["cpufreq"] == {"driver": "intel_pstate", "governor": "powersave",
                                "boost": "off"}
    assert state["smt"] == {"control": "on", "active": "1"}
    assert state["microcode"] == "0x2b000603"  # no sysfs file: the cpuinfo line
    assert state["mitigations"] == {"gather_data_sampling": "Mitigation: Microcode",
                                    "spectre_v2": "Mitigation: Enhanced IBRS"}
    virt = state["virtualization"]
    assert virt["hypervisor"] is True and virt["hypervisor_type"] is None
    assert virt["dmi"] == "QEMU Standard PC (Q35 + ICH9, 2009)"
    assert virt["detected"] is None  # systemd-detect-virt answers for "/", not this tree
    # The sysfs microcode file and the boost switch win over their fallbacks.
    write(tmp_path, CPU / "cpu0/microcode/version", "0x2b000620\n")
    write(tmp_path, CPU / "cpufreq/boost", "1\n")
    assert environment.microcode(tmp_path) == "0x2b000620"
    assert environment.cpu_frequency_policy(tmp_path)["boost"] == "on"


def test_nothing_to_read_is_none_never_an_error(tmp_path: Path) -> None:
    state = environment.platform_state(tmp_path)
    assert state["userland"] is None and state["microcode"] is None
    assert state["cpufreq"] == {"driver": None, "governor": None, "boost": None}
    assert state["smt"] == {"control": None, "active": None}
    assert state["mitigations"] == {}
    assert state["virtualization"]["hypervisor"] is False
    # Directories where files belong, and bytes that are not UTF-8.
    (tmp_path / CPU / "smt" / "control").mkdir(parents=True)
    (tmp_path / "proc" / "cpuinfo").mkdir(parents=True)
    write(tmp_path, CPU / "vulnerabilities/mds", b"Mitigation: \xff\xfe clear\n")
    state = environment.platform_state(tmp_path)
    assert state["smt"]["control"] is None and state["microcode"] is None
    assert state["mitigations"]["mds"].startswith("Mitigation: ")


@pytest.mark.process
def test_this_machine_agrees_with_other_readers() -> None:
    state = environment.platform_state()
    getconf = subprocess.run(["getconf", "GNU_LIBC_VERSION"], capture_output=True, text=True,
                             check=True).stdout.strip()
    assert state["libc"] == getconf
    grep = subprocess.run("grep -H . /sys/devices/system/cpu/vulnerabilities/*", shell=True,
                          capture_output=True, text=True, check=False).stdout
    expected = {line.split(":", 1)[0].rsplit("/", 1)[1]: line.split(":", 1)[1]
                for line in grep.splitlines()}
    assert state["mitigations"] == expected
    flags = Path("/proc/cpuinfo").read_text().split("flags", 1)[1].split("\n", 1)[0]
    assert state["virtualization"]["hypervisor"] == ("hypervisor" in flags.split())


@pytest.mark.process
def test_the_fingerprint_keeps_its_keys_and_adds_the_platform() -> None:
    done = run_cli("env", "--json")
    assert done.returncode == 0, done.stderr
    env = json.loads(done.stdout)
    assert {"os", "os_build", "arch", "cpu", "cpu_flags", "libraries", "knobs",
            "testbed"} <= set(env)
    assert set(env["platform"]) == {"userland", "kernel", "libc", "virtualization", "cpufreq",
                                    "smt", "microcode", "mitigations"}
    table = run_cli("env", "--all")
    assert "platform.libc" in table.stdout and "platform.mitigations" in table.stdout


def test_platform_changes_are_weak_causes_and_detect_virt_is_not_one() -> None:
    before = {"platform": {"mitigations": {"spectre_v2": "Mitigation: Retpolines"},
                           "virtualization": {"detected": "vm kvm, container docker"},
                           "cpufreq": {"governor": "performance"}}}
    after = {"platform": {"mitigations": {"spectre_v2": "Mitigation: Enhanced IBRS"},
                          "virtualization": {"detected": None},
                          "cpufreq": {"governor": "powersave"}}}
    found = differences([before], [after])
    assert {d.field for d in found} == {"platform.mitigations.spectre_v2",
                                        "platform.cpufreq.governor"}
    causes = {c.field: c for c in causes_for("ML-KEM-768", "liboqs", found)}
    assert {c.strength for c in causes.values()} == {"weak"}
    assert "system calls" in causes["platform.mitigations.spectre_v2"].why
    assert "same factor" in causes["platform.cpufreq.governor"].why
    libc = causes_for("X25519", "libcrypto", [Difference("platform.libc", "glibc 2.36",
                                                         "glibc 2.41")])
    assert [c.strength for c in libc] == ["weak"]


@pytest.mark.process
def test_a_run_keeps_its_platform_through_import_and_a_bad_one_is_refused(small_run) -> None:
    import copy

    import pytest

    from pqbench.data.record import transfer
    from pqbench.platform.errors import InputFileError

    _, doc = small_run
    (run,) = transfer.parse(copy.deepcopy(doc), "run.json")
    assert run.environment["platform"] == doc["environment"]["platform"]
    assert run.environment["platform"]["libc"] == environment.libc()
    bad = copy.deepcopy(doc)
    bad["environment"]["platform"]["mitigations"] = {"spectre_v2": 2}
    with pytest.raises(InputFileError, match=r"environment\.platform\.mitigations"):
        transfer.parse(bad, "bad.json")


@pytest.mark.process
def test_os_release_is_read_as_a_shell_reads_it(tmp_path: Path) -> None:
    """os-release(5) is shell assignments: the shell that sources the file is the reference,
    for this machine's file (read by platform.freedesktop_os_release) and a made-up one."""
    write(tmp_path, "usr/lib/os-release",
          '# a comment\nNAME="Debian GNU/Linux"\nPRETTY_NAME="Debian \\"13\\" (trixie)"\n'
          "VERSION='13 (trixie)'\nID=debian\nBROKEN=\"unbalanced\n")
    made_up = environment._os_release(tmp_path)
    assert made_up == {"NAME": "Debian GNU/Linux", "PRETTY_NAME": 'Debian "13" (trixie)',
                       "VERSION": "13 (trixie)", "ID": "debian"}
    assert environment.platform_state(tmp_path)["userland"] == 'Debian "13" (trixie)'
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        if Path(path).exists():
            break
    shell = subprocess.run(["sh", "-c", f'. {path}; printf "%s\\n%s\\n%s" "$NAME" '
                                        '"$VERSION" "$PRETTY_NAME"'],
                           capture_output=True, text=True, check=True).stdout.split("\n")
    ours = environment._os_release()
    assert [ours.get("NAME", ""), ours.get("VERSION", ""), ours.get("PRETTY_NAME", "")] == shell
    assert environment.platform_state()["userland"] == (shell[2] or shell[0])
