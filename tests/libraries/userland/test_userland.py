"""Another OS userland for real: Debian 13 (OpenSSL 3.5) built or reused, pqbench inside.

The session builds the userland with debootstrap (about 2.5 minutes here, network-bound)
or reuses it from ~/.cache/pqbench/userlands (well under a second), then runs pqbench and
the native tests inside it against the userland's own OpenSSL 3.5. Needs root, as CI has.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pqbench.catalog import algorithms
from pqbench.libraries.liboqs import find_installed
from pqbench.libraries.liboqs.locate import cache_dir, cache_root
from pqbench.libraries.userland import Userland, ensure, find
from pqbench.libraries.userland.bootstrap import mounts_below, safe_rmtree
from pqbench.libraries.userland.chroot import inside_environment, mount_namespace
from pqbench.libraries.userland.install import fingerprint, sync
from pqbench.measure import environment
from pqbench.platform.errors import UserlandError
from tests.helpers import NAME, REPO, inside

#: The rows `speed ... -i libcrypto` must give: the Debian 13 libcrypto offers all of them.
EXPECTED_ROWS = {
    ("ML-KEM-768", "keygen"), ("ML-KEM-768", "encaps"), ("ML-KEM-768", "decaps"),
    ("ML-DSA-65", "keygen"), ("ML-DSA-65", "sign"), ("ML-DSA-65", "verify"),
    ("Ed25519", "sign"), ("Ed25519", "verify"), ("X25519", "keygen"), ("X25519", "derive"),
    ("RSA-2048", "sign"), ("RSA-2048", "verify"), ("RSA-2048", "encrypt"),
    ("RSA-2048", "decrypt"),
}


@pytest.mark.process
def test_speed_inside_measures_the_userlands_own_openssl_35(trixie: Userland,
                                                           db_inside: str) -> None:
    done = inside(trixie, "pqbench", "speed", "ml-kem-768", "ml-dsa-65", "ed25519", "x25519",
                  "rsa2048", "-i", "libcrypto", "--seconds", "0.05", "--rounds", "2",
                  "--json", "--db", db_inside)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["status"] == "complete" and doc["problems"] == []
    rows = {(r["algorithm"], r["operation"]): r for r in doc["results"]}
    assert set(rows) == EXPECTED_ROWS
    assert all(r["implementation"] == "libcrypto" and r["total_ops"] > 0 for r in rows.values())
    checked = {v["algorithm"] for v in doc["verifications"] if v["implementation"] == "libcrypto"}
    assert checked == {alg for alg, _ in EXPECTED_ROWS}
    version = doc["environment"]["libraries"]["libcrypto"]
    assert version.startswith("OpenSSL 3.5."), version
    assert doc["environment"]["os"]["version"].startswith("13 ")
    mlkem, mldsa = algorithms.by_name("ML-KEM-768"), algorithms.by_name("ML-DSA-65")
    kem_sizes = rows[("ML-KEM-768", "encaps")]["sizes"]
    assert (kem_sizes["public_key"], kem_sizes["ciphertext"], kem_sizes["shared_secret"]) == (
        mlkem.size("public_key"), mlkem.size("ciphertext"), mlkem.size("shared_secret"))
    sig_sizes = rows[("ML-DSA-65", "sign")]["sizes"]
    assert (sig_sizes["public_key"], sig_sizes["signature"]) == (
        mldsa.size("public_key"), mldsa.size("signature"))


@pytest.mark.process
def test_the_native_tests_pass_against_openssl_35_inside(trixie: Userland) -> None:
    done = inside(trixie, "sh", "-c", f"cd {trixie.install_dir} && .venv/bin/python -m pytest -q "
                  "-p no:cacheprovider tests/timing/test_native.py "
                  "tests/libraries/implementations/test_native.py "
                  "tests/measure/files/test_files.py "
                  "-k 'native or ssl or oqs or xts'", timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary and "error" not in summary


@pytest.mark.process
def test_liboqs_inside_is_the_hosts_cached_build(trixie: Userland) -> None:
    done = inside(trixie, "pqbench", "env", "--json")
    assert done.returncode == 0, done.stderr
    env = json.loads(done.stdout)
    host = find_installed()
    assert host is not None
    assert env["library_details"]["liboqs"]["library"] == str(host.library)
    assert env["implementations"]["liboqs-python"] == "available"
    assert env["implementations"]["liboqs"] == "available"
    # Same machine, other userland: the kernel and what it reports are the host's, the
    # userland and its C library are not (Debian 12 has glibc 2.36, Debian 13 2.41).
    assert env["os"]["kernel"] == platform.release()
    assert env["cpu_flags"], "no /proc/cpuinfo inside: /proc was not mounted"
    ours, theirs = environment.platform_state(), env["platform"]
    for same in ("kernel", "microcode", "mitigations", "smt", "cpufreq"):
        assert theirs[same] == ours[same], same
    assert theirs["virtualization"]["hypervisor"] == ours["virtualization"]["hypervisor"]
    assert theirs["userland"].startswith("Debian GNU/Linux 13")
    assert theirs["libc"].startswith("glibc ") and theirs["libc"] != ours["libc"]


@pytest.mark.process
def test_the_environment_inside_keeps_knobs_and_drops_host_paths(trixie: Userland) -> None:
    done = inside(trixie, "env", env={"OPENSSL_ia32cap": "~0x200000200000000",
                                      "PYTHONPATH": "/host/only", "VIRTUAL_ENV": "/host/venv"})
    assert done.returncode == 0, done.stderr
    seen = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    assert seen["OPENSSL_ia32cap"] == "~0x200000200000000"
    assert "PYTHONPATH" not in seen and "VIRTUAL_ENV" not in seen
    assert seen["PQBENCH_CACHE_DIR"] == str(cache_root())
    assert seen["HOME"] == "/root" and seen["PATH"].startswith("/usr/local/sbin")
    pure = inside_environment({"PATH": "/x", "LD_PRELOAD": "/y.so", "LC_ALL": "xx",
                               "http_proxy": "p"})
    assert pure["PATH"] != "/x" and "LD_PRELOAD" not in pure and "LC_ALL" not in pure
    assert pure["http_proxy"] == "p" and pure["LANG"] == "C.UTF-8"


def _mount_points(pid: int | str) -> list[str]:
    lines = Path(f"/proc/{pid}/mountinfo").read_text().splitlines()
    return [line.split()[4] for line in lines]


@pytest.mark.process
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill"])
def test_mounts_exist_only_in_the_commands_namespace(trixie: Userland,
                                                     stop: signal.Signals) -> None:
    root = str(trixie.root)
    child = subprocess.Popen([*trixie.command_prefix()[:-1], "sleep", "60"])
    try:
        deadline = time.monotonic() + 30
        while os.readlink(f"/proc/{child.pid}/root") != root and time.monotonic() < deadline:
            time.sleep(0.1)
        # The command's own view (mount points relative to its root, the userland).
        theirs = set(_mount_points(child.pid))
        assert {"/proc", "/dev", "/sys", str(cache_dir())} <= theirs
        assert not [p for p in _mount_points("self") if p.startswith(root)]
        child.send_signal(stop)
        child.wait(timeout=30)
    finally:
        child.kill()
        child.wait()
    assert not [p for p in _mount_points("self") if p.startswith(root)]
    assert mounts_below(trixie.root) == []


@pytest.mark.process
def test_entering_without_a_private_namespace_is_refused(trixie: Userland) -> None:
    done = subprocess.run([sys.executable, "-m", "pqbench.libraries.userland", "_enter",
                           "--host-namespace", mount_namespace(), str(trixie.root), "--", "true"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert "refusing to mount outside a private mount namespace" in done.stderr
    assert mounts_below(trixie.root) == []


@pytest.mark.process
def test_prefix_and_run_on_the_command_line(trixie: Userland) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        """`pqbench userland ...`, except `run`: the plumbing `python -m
        pqbench.libraries.userland`."""
        entry = ["pqbench.libraries.userland"] if args[0] == "run" else ["pqbench", "userland"]
        return subprocess.run([sys.executable, "-m", *entry, *args],
                              capture_output=True, text=True, timeout=120, check=False)

    prefix = json.loads(cli("prefix", NAME, "--json").stdout)
    assert prefix[0] == sys.executable
    checkout = f"{REPO.name}-{hashlib.sha256(str(REPO).encode()).hexdigest()[:8]}"
    assert prefix[-1] == f"/opt/pqbench/{checkout}/.venv/bin/pqbench"
    release = cli("run", NAME, "--", "cat", "/etc/debian_version")
    assert release.returncode == 0 and release.stdout.startswith("13."), release.stderr
    missing = cli("run", NAME)
    assert missing.returncode == 2 and "no command given" in missing.stderr
    unknown = cli("prefix", "debian-potato")
    assert unknown.returncode == 2 and "unknown userland 'debian-potato'" in unknown.stderr
    # The plumbing takes `run` only and names the commands that do the rest.
    other = subprocess.run([sys.executable, "-m", "pqbench.libraries.userland", "prefix", NAME],
                           capture_output=True, text=True, timeout=120, check=False)
    assert other.returncode == 2 and "pqbench userland build|status|prefix" in other.stderr
    # The status says the install is current.
    status = json.loads(cli("status", NAME, "--json").stdout)
    info = status["userlands"][NAME]
    assert info["base"]["suite"] == "trixie" and info["install"]["source"] == str(REPO)
    assert info["state"] == "built" and info["current"] is True and info["prefix"] == prefix


@pytest.mark.process
def test_a_refresh_is_skipped_when_nothing_changed(trixie: Userland) -> None:
    started = time.monotonic()
    again = ensure(NAME)
    assert again.install["installed_at"] == trixie.install["installed_at"]
    assert time.monotonic() - started < 30  # a hash pass, no make, no network


def test_without_root_the_message_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(UserlandError, match="needs root"):
        ensure(NAME)


@pytest.mark.process
def test_an_unbuilt_userland_is_named_with_the_command_that_builds_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PQBENCH_CACHE_DIR", str(tmp_path))
    with pytest.raises(UserlandError, match=r"`pqbench userland build debian-trixie`"):
        find(NAME)


# --- the pieces, without a userland -------------------------------------------------------


def test_sync_copies_changes_and_removes_what_was_deleted(tmp_path: Path) -> None:
    tree, dest = tmp_path / "tree", tmp_path / "dest"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "a.py").write_text("a = 1\n")
    (tree / "b.txt").write_text("b\n")
    first = ["b.txt", "pkg/a.py"]
    before = fingerprint(tree, first)
    sync(tree, first, dest, [])
    assert (dest / "pkg" / "a.py").read_text() == "a = 1\n"
    (dest / "built.so").write_text("not ours")  # made inside by the set-up: must stay
    (tree / "pkg" / "a.py").write_text("a = 2\n")
    (tree / "b.txt").unlink()
    (tree / "c.sh").write_text("#!/bin/sh\n")
    second = ["c.sh", "pkg/a.py"]
    assert fingerprint(tree, second) != before
    sync(tree, second, dest, first)
    assert (dest / "pkg" / "a.py").read_text() == "a = 2\n"
    assert not (dest / "b.txt").exists() and (dest / "c.sh").exists()
    assert (dest / "built.so").read_text() == "not ours"
    mode_before = fingerprint(tree, second)
    (tree / "c.sh").chmod((tree / "c.sh").stat().st_mode | stat.S_IXUSR)
    assert fingerprint(tree, second) != mode_before


@pytest.mark.process
def test_a_tree_with_something_mounted_in_it_is_never_removed(tmp_path: Path) -> None:
    precious, tree = tmp_path / "precious", tmp_path / "userland"
    precious.mkdir()
    (precious / "keep").write_text("host data")
    (tree / "dev").mkdir(parents=True)
    subprocess.run(["mount", "--bind", str(precious), str(tree / "dev")], check=True)
    try:
        assert mounts_below(tree) == [str(tree / "dev")]
        with pytest.raises(UserlandError, match="is mounted there"):
            safe_rmtree(tree)
    finally:
        subprocess.run(["umount", str(tree / "dev")], check=True)
    assert (precious / "keep").read_text() == "host data"
    safe_rmtree(tree)
    assert not tree.exists()
