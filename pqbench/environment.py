"""The environment fingerprint: OS build, CPU and crypto flags, library stack, knobs.

Stored with every run so that a jump between two runs can be traced to what changed
(the macOS 10.14.5 `openssl speed` jump came with an unchanged library version).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import json
import os
import platform
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

#: CPU features that change what crypto code paths run (AES-NI, carry-less multiply,
#: SHA extensions, vector units; ADX/BMI2 speed up the bignum arithmetic RSA and ECC use).
X86_CRYPTO_FLAGS = ("aes", "pclmulqdq", "sha_ni", "avx2", "avx512f", "vaes", "vpclmulqdq",
                    "adx", "bmi2")
ARM_CRYPTO_FLAGS = ("aes", "pmull", "sha1", "sha2", "sha3", "sha512")
#: Environment variables that make OpenSSL ignore CPU capabilities.
KNOBS = ("OPENSSL_ia32cap", "OPENSSL_armcap", "OPENSSL_ppccap", "OPENSSL_sparcv9cap")


def _os_release() -> dict[str, str]:
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
        return {k: v.strip().strip('"') for k, v in pairs}
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


def system_libcrypto() -> dict[str, Any]:
    """The OS's own libcrypto: the library the `openssl` command uses."""
    name = ctypes.util.find_library("crypto")
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


def testbed(cpu_info: dict[str, Any], arch: str) -> str:
    """Runs are comparable without warning only within one testbed (CPU model, flags, arch)."""
    blob = json.dumps([cpu_info.get("model"), cpu_info.get("flags"), arch], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def collect(label: str | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The whole fingerprint as a JSON-ready dict."""
    from pqbench.implementations import all_implementations

    versions: dict[str, object] = {}
    details: dict[str, Any] = {}
    for impl in all_implementations():
        versions.update(impl.versions())
        details.update(impl.details())
    os_info = operating_system()
    cpu_info = cpu()
    arch = platform.machine()
    return {
        "os": os_info,
        "os_build": os_build(os_info),
        "arch": arch,
        "cpu": cpu_info,
        "cpu_flags": cpu_info["flags"],
        "libraries": libraries(versions),
        "library_details": {"system_libcrypto": system_libcrypto(), **details},
        "knobs": {k: os.environ.get(k) for k in KNOBS},
        "hostname": socket.gethostname(),
        "python_executable": sys.executable,
        "testbed": testbed(cpu_info, arch),
        "label": label,
        **(extra or {}),
    }
