"""The environment fingerprint: OS build, CPU and crypto flags, library stack, knobs,
the identity of every library the process loaded (`binaries`), the CPU capabilities each
OpenSSL uses (`openssl`), and the machine's load over the run (`load`).

Stored with every run so that a jump between two runs can be traced to what changed
(the macOS 10.14.5 `openssl speed` jump came with an unchanged library version).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import hashlib
import json
import os
import platform
import shlex
import shutil
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from pqbench.catalog.algorithms.capabilities import ARM_CRYPTO_FLAGS, X86_CRYPTO_FLAGS
from pqbench.measure.environment.load import Watch as Watch  # the machine's state over a run

#: Environment variables that make OpenSSL ignore CPU capabilities.
KNOBS = ("OPENSSL_ia32cap", "OPENSSL_armcap", "OPENSSL_ppccap", "OPENSSL_sparcv9cap")


def _os_release(root: Path = Path("/")) -> dict[str, str]:
    """os-release(5) fields: this system's as the standard library reads them
    (`platform.freedesktop_os_release`: /etc/os-release, else /usr/lib/os-release, quotes
    and escapes as the format defines them); another tree's (a test's made-up machine) by
    the same rules, the format being shell-style assignments. {} where there is none."""
    if root == Path("/"):
        try:
            return dict(platform.freedesktop_os_release())
        except OSError:
            return {}
    for path in ("etc/os-release", "usr/lib/os-release"):
        try:
            text = (root / path).read_text()
        except OSError:
            continue
        fields: dict[str, str] = {}
        for line in text.splitlines():
            try:
                words = shlex.split(line, comments=True)
            except ValueError:  # an unbalanced quote: skip the line, as the spec's readers do
                continue
            if len(words) == 1 and "=" in words[0]:
                key, value = words[0].split("=", 1)
                fields[key] = value
        return fields
    return {}


def _command(*argv: str) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def operating_system() -> dict[str, Any]:
    """Name, version and build; `build` is what separates two installs of one version."""
    system = platform.system()
    info: dict[str, Any] = {"system": system, "kernel": platform.release(),
                            "kernel_build": platform.version()}
    if system == "Darwin":
        info.update(name="macOS", version=platform.mac_ver()[0],
                    build=_command("sw_vers", "-buildVersion") or "")
    elif system == "Windows":
        win_release, win_build, *_ = platform.win32_ver()
        info.update(name="Windows", version=win_release, build=win_build)
    else:
        release = _os_release()
        info.update(name=release.get("NAME", system), version=release.get("VERSION", ""),
                    distribution=f"{release.get('ID', system.lower())}-"
                                 f"{release.get('VERSION_ID', '')}".rstrip("-"))
        # A Linux "build" is the distribution release plus the exact kernel build.
        info["build"] = f"{info['distribution']} {platform.release()} {platform.version()}"
    return info


def os_build(os_info: dict[str, Any]) -> str:
    """A short identifier for grouping runs by OS build."""
    if os_info.get("system") == "Linux":
        return f"{os_info.get('distribution', 'linux')}/{os_info.get('kernel', '')}"
    return str(os_info.get("build") or os_info.get("version") or os_info.get("system"))


def cpu() -> dict[str, Any]:
    """CPU model and the crypto-relevant feature flags."""
    model, flags = "", set[str]()
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in ("model name", "cpu model") and not model:
            model = value.strip()
        elif key in ("flags", "features") and not flags:
            flags = set(value.split())
    if platform.system() == "Darwin":
        model = _command("sysctl", "-n", "machdep.cpu.brand_string") or model
        flags |= set((_command("sysctl", "-n", "machdep.cpu.features") or "").lower().split())
    wanted = X86_CRYPTO_FLAGS if platform.machine().lower() in ("x86_64", "amd64") \
        else ARM_CRYPTO_FLAGS
    return {"model": model or platform.processor(),
            "flags": sorted(f for f in wanted if f in flags), "count": os.cpu_count()}


# --- what explains an OS-level change besides the libraries --------------------------
#
# Every read below tolerates absence (a container without /sys, a chroot without
# systemd, macOS, Windows) and answers None for what it cannot read; none can fail a run.
# `root` lets the tests read a made-up /proc and /sys.

_CPU = Path("sys/devices/system/cpu")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip() or None
    except (OSError, ValueError):
        return None


def platform_state(root: Path = Path("/")) -> dict[str, Any]:
    """The userland and the kernel apart, the C library, virtualization, the CPU
    frequency policy, SMT, microcode and the kernel's CPU-vulnerability mitigations."""
    release = _os_release(root)
    return {
        "userland": release.get("PRETTY_NAME") or release.get("NAME"),
        "kernel": f"{platform.release()} {platform.version()}".strip() or None,
        "libc": libc(),
        "virtualization": virtualization(root),
        "cpufreq": cpu_frequency_policy(root),
        "smt": {"control": _read(root / _CPU / "smt" / "control"),
                "active": _read(root / _CPU / "smt" / "active")},
        "microcode": microcode(root),
        "mitigations": mitigations(root),
    }


def libc() -> str | None:
    """The C library this Python runs on, e.g. "glibc 2.41" (None for musl, macOS ...)."""
    try:
        found = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError, AttributeError):
        found = None
    if found:
        return found
    name, version = platform.libc_ver()
    return f"{name} {version}" if name else None


def virtualization(root: Path = Path("/")) -> dict[str, Any]:
    """Whether the kernel runs under a hypervisor, from what the kernel itself shows (the
    cpuinfo `hypervisor` flag, /sys/hypervisor, DMI), so every userland on one machine
    agrees; `detected` adds systemd-detect-virt's names where that tool is installed."""
    flagged = False
    for line in (_read(root / "proc" / "cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            flagged = "hypervisor" in value.split()
            break
    dmi_dir = root / "sys" / "class" / "dmi" / "id"
    dmi = [_read(dmi_dir / name) for name in ("sys_vendor", "product_name")]
    detected = _detected_virtualization(os.environ.get("PATH", "")) if root == Path("/") \
        else None
    return {"hypervisor": flagged or (root / "sys" / "hypervisor" / "type").exists(),
            "hypervisor_type": _read(root / "sys" / "hypervisor" / "type"),
            "dmi": " ".join(d for d in dmi if d) or None,
            "detected": detected}


@functools.cache
def _detected_virtualization(path: str) -> str | None:
    """systemd's answer, asked once per process (and PATH): a machine does not move into
    another hypervisor while it runs, and every stored run asks."""
    if not shutil.which("systemd-detect-virt", path=path):
        return None
    vm = _command("systemd-detect-virt", "--vm") or "none"
    container = _command("systemd-detect-virt", "--container") or "none"
    return f"vm {vm}, container {container}"


def cpu_frequency_policy(root: Path = Path("/")) -> dict[str, Any]:
    """The cpufreq driver and governor of CPU 0's policy, and whether boost (turbo) is on.

    Boost is /sys/devices/system/cpu/cpufreq/boost where the driver has it (acpi-cpufreq,
    amd-pstate), else the inverse of intel_pstate/no_turbo.
    """
    policy = root / _CPU / "cpufreq" / "policy0"
    boost = _read(root / _CPU / "cpufreq" / "boost")
    no_turbo = _read(root / _CPU / "intel_pstate" / "no_turbo")
    if boost is None and no_turbo is not None:
        boost = "0" if no_turbo == "1" else "1"
    return {"driver": _read(policy / "scaling_driver"),
            "governor": _read(policy / "scaling_governor"),
            "boost": {"1": "on", "0": "off"}.get(boost or "", boost)}


def microcode(root: Path = Path("/")) -> str | None:
    """CPU 0's microcode revision (sysfs, else the cpuinfo `microcode` line)."""
    found = _read(root / _CPU / "cpu0" / "microcode" / "version")
    if found:
        return found
    for line in (_read(root / "proc" / "cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "microcode":
            return value.strip() or None
    return None


def mitigations(root: Path = Path("/")) -> dict[str, str]:
    """The kernel's state for each CPU vulnerability it knows (Spectre, Meltdown, GDS ...),
    as /sys/devices/system/cpu/vulnerabilities reports it; empty where it does not."""
    folder = root / _CPU / "vulnerabilities"
    try:
        names = sorted(p.name for p in folder.iterdir())
    except OSError:
        return {}
    found = {name: _read(folder / name) for name in names}
    return {name: text for name, text in found.items() if text is not None}


def system_libcrypto() -> dict[str, Any]:
    """The OS's own libcrypto: the library the `openssl` command uses."""
    name = _find_library("crypto", os.environ.get("LD_LIBRARY_PATH", ""))
    if not name:
        return {"version": None, "path": None}
    try:
        lib = ctypes.CDLL(name)
        lib.OpenSSL_version.restype = ctypes.c_char_p
        lib.OpenSSL_version.argtypes = [ctypes.c_int]
        version = lib.OpenSSL_version(0).decode()
    except (OSError, AttributeError):
        return {"version": None, "path": name}
    return {"version": version, "path": _mapped_path(Path(name).name) or name}


@functools.cache
def _find_library(name: str, library_path: str) -> str | None:
    """`ctypes.util.find_library`, which runs ldconfig (and gcc and ld where it finds
    nothing) on every call: once per process and library search path."""
    return ctypes.util.find_library(name)


def _mapped_path(soname: str) -> str | None:
    """The file a loaded shared object came from, read off /proc/self/maps."""
    try:
        for line in Path("/proc/self/maps").read_text().splitlines():
            if line.rstrip().endswith(soname) or f"/{soname}" in line:
                return line.split()[-1]
    except OSError:
        pass
    return None


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def libraries(implementation_versions: dict[str, object]) -> dict[str, Any]:
    """Versions of everything on the measured path."""
    found: dict[str, Any] = {
        "python": platform.python_version(),
        "pqbench": _version("pqbench"),
        "cryptography": _version("cryptography"),
        "liboqs-python": _version("liboqs-python"),
        "system_libcrypto": system_libcrypto().get("version"),
    }
    found.update(implementation_versions)
    return found


def loaded_binaries(versions: dict[str, Any]) -> dict[str, Any]:
    """The libraries this process has mapped, by identity (`binaries.loaded`), with the
    version string each one answers where it has one."""
    from pqbench.measure.environment import binaries

    crypto = versions.get("cryptography")
    bundled = versions.get("cryptography_openssl")
    return binaries.loaded({
        "libcrypto": versions.get("system_libcrypto"),
        "liboqs": versions.get("liboqs"),
        "libc": libc(),
        "python": versions.get("python"),
        "cryptography": f"{crypto} ({bundled})" if crypto and bundled else crypto,
        "pqbench-native": versions.get("pqbench"),
    })


def testbed(cpu_info: dict[str, Any], arch: str) -> str:
    """Runs are comparable without warning only within one testbed (CPU model, flags, arch)."""
    blob = json.dumps([cpu_info.get("model"), cpu_info.get("flags"), arch], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def collect(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The whole fingerprint as a JSON-ready dict (a run's label is the run's, not the
    machine's: `Run.label`)."""
    from pqbench.libraries.implementations import all_implementations

    versions: dict[str, object] = {}
    details: dict[str, Any] = {}
    for impl in all_implementations():
        versions.update(impl.versions())
        details.update(impl.details())
    from pqbench.measure.environment import openssl

    os_info = operating_system()
    cpu_info = cpu()
    arch = platform.machine()
    found_libraries = libraries(versions)
    # Read after every implementation has loaded its libraries (all_implementations).
    loaded = loaded_binaries(found_libraries)
    return {
        "os": os_info,
        "os_build": os_build(os_info),
        "arch": arch,
        "cpu": cpu_info,
        "cpu_flags": cpu_info["flags"],
        "libraries": found_libraries,
        "library_details": {"system_libcrypto": system_libcrypto(), **details},
        "knobs": {k: os.environ.get(k) for k in KNOBS},
        "hostname": socket.gethostname(),
        "python_executable": sys.executable,
        "testbed": testbed(cpu_info, arch),
        "platform": platform_state(),
        "binaries": loaded,
        "openssl_capabilities": openssl.capabilities(loaded),
        **(extra or {}),
    }
