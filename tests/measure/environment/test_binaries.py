"""Which binaries the process loaded, read off its memory map, and who owns each: roles
from paths, merged-/usr spellings, dpkg's answer for the system libcrypto checked against
dpkg asked the other way round, and the whole record of a real fingerprint."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pqbench.measure import environment
from pqbench.measure.environment import binaries, elf


def test_the_memory_map_is_read_as_proc5_writes_it(tmp_path: Path) -> None:
    maps = tmp_path / "maps"
    maps.write_text(
        "55d0c0000000-55d0c0001000 r--p 00000000 08:01 1234   /usr/bin/python3.11\n"
        "7f0000000000-7f0000001000 r--p 00000000 08:01 99     /usr/lib/x86_64-linux-gnu/"
        "libcrypto.so.3\n"
        "7f0000001000-7f0000002000 r-xp 00001000 08:01 99     /usr/lib/x86_64-linux-gnu/"
        "libcrypto.so.3\n"
        "7f0000003000-7f0000004000 rw-p 00000000 00:00 0 \n"
        "7f0000004000-7f0000005000 r--p 00000000 08:01 77     /opt/my libs/liboqs.so.0.13.0\n"
        "7f0000005000-7f0000006000 r--p 00000000 08:01 78     /tmp/libssl.so.3 (deleted)\n"
        "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0      [stack]\n")
    assert binaries.mapped_files(maps) == [
        "/usr/bin/python3.11", "/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
        "/opt/my libs/liboqs.so.0.13.0", "/tmp/libssl.so.3"]


@pytest.mark.parametrize("path, role", [
    ("/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "libcrypto"),
    ("/opt/openssl/lib64/libcrypto.so.1.1", "libcrypto"),
    ("/usr/lib/x86_64-linux-gnu/libssl.so.3", "libssl"),
    ("/root/.cache/pqbench/liboqs/0.13.0-x/lib/liboqs.so.0.13.0", "liboqs"),
    ("/usr/lib/x86_64-linux-gnu/libc.so.6", "libc"),
    ("/lib/ld-musl-x86_64.so.1", "libc"),
    ("/usr/lib/libpython3.11.so.1.0", "python"),
    ("/v/site-packages/cryptography/hazmat/bindings/_rust.abi3.so", "cryptography"),
    ("/w/pqbench/timing/_native.cpython-311-x86_64-linux-gnu.so", "pqbench-native"),
    ("/usr/lib/x86_64-linux-gnu/libcrypto-legacy.so.3", None),
    ("/usr/lib/x86_64-linux-gnu/libcrypt.so.1", None),
    ("/usr/lib/x86_64-linux-gnu/libm.so.6", None),
])
def test_roles_by_path(path: str, role: str | None) -> None:
    assert binaries.role_of(path) == role


def test_a_second_library_of_one_role_keeps_its_own_key() -> None:
    paths = ["/cache/liboqs.so.0.13.0", "/home/u/_oqs/lib/liboqs.so.0.14.0",
             "/a/libcrypto.so.3", "/b/libcrypto.so.3"]
    found = binaries.roles(paths, binding_liboqs="/home/u/_oqs/lib/liboqs.so.0.14.0")
    assert found["liboqs"] == "/cache/liboqs.so.0.13.0"
    assert found["liboqs-python"] == "/home/u/_oqs/lib/liboqs.so.0.14.0"
    assert found["libcrypto"] == "/a/libcrypto.so.3"
    assert found["libcrypto 2"] == "/b/libcrypto.so.3"
    # One liboqs shared by the loops and the binding is one entry.
    assert binaries.roles(["/cache/liboqs.so.0.13.0"], "/cache/liboqs.so.0.13.0") == {
        "liboqs": "/cache/liboqs.so.0.13.0"}


def test_merged_usr_spellings() -> None:
    assert "/lib/x86_64-linux-gnu/libc.so.6" in binaries.spellings(
        "/usr/lib/x86_64-linux-gnu/libc.so.6")
    assert "/usr/lib/x86_64-linux-gnu/libssl.so.3" in binaries.spellings(
        "/lib/x86_64-linux-gnu/libssl.so.3")
    assert binaries.spellings("/opt/x/libcrypto.so.3") == ["/opt/x/libcrypto.so.3"]


def _dpkg_owner(name: str) -> tuple[str, str]:
    """The package and version that hold a file called `name` in a multiarch library
    directory, asked of dpkg by pattern (not by the path pqbench asks with)."""
    listed = subprocess.run(["dpkg", "-S", f"*/{name}"], capture_output=True, text=True,
                            check=False, env={**os.environ, "LC_ALL": "C"}).stdout
    owners = {line.split(":")[0] for line in listed.splitlines()
              if re.search(rf"/lib/[^/]+/{re.escape(name)}$", line)}
    assert len(owners) == 1, listed
    package = owners.pop()
    version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package],
                             capture_output=True, text=True, check=True).stdout
    return package, version


@pytest.mark.process
def test_the_system_libcrypto_is_owned_by_its_package() -> None:
    fingerprint = environment.collect()
    entry = fingerprint["binaries"]["libcrypto"]
    assert entry["version"] == fingerprint["libraries"]["system_libcrypto"]
    if shutil.which("dpkg") is None:  # no dpkg: nothing said, nothing made up
        assert "package" not in entry
        return
    package, version = _dpkg_owner(Path(entry["path"]).name)
    assert (entry["package"], entry["package_version"]) == (package, version)


@pytest.mark.process
def test_without_dpkg_no_owner_is_recorded(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a machine without dpkg
    environment.system_libcrypto()
    found = binaries.loaded()
    assert found["libcrypto"]["path"].endswith(tuple(f"libcrypto.so.{n}" for n in "13"))
    assert all("package" not in entry for entry in found.values())


@pytest.mark.process
def test_every_loaded_library_is_fingerprinted_by_identity_and_size() -> None:
    found = environment.collect()["binaries"]
    assert {"libcrypto", "libc", "python", "cryptography", "pqbench-native"} <= found.keys()
    for role, entry in found.items():
        path = entry["path"]
        assert entry["size"] == os.stat(path).st_size, role
        if "build_id" in entry:
            assert entry["build_id"] == elf.build_id(path)
        else:
            assert entry["sha256"] == hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _counting_dpkg(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every command `owners` runs, recorded; each still runs for real."""
    asked: list[list[str]] = []
    real = binaries._run

    def run(argv: list[str]) -> str:
        asked.append(list(argv))
        return real(argv)

    monkeypatch.setattr(binaries, "_run", run)
    return asked


@pytest.mark.process
def test_dpkg_is_asked_once_per_state_of_its_database_and_of_each_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PQBENCH_CACHE_DIR", str(tmp_path / "cache"))
    status = tmp_path / "status"  # stands for dpkg's database, which only dpkg may write
    status.write_text("one state\n")
    monkeypatch.setattr(binaries, "DPKG_STATUS", str(status))
    libcrypto = environment.system_libcrypto()["path"]
    assert libcrypto is not None
    unowned = tmp_path / "libcrypto.so.3"
    unowned.write_bytes(b"not a package's file")
    paths = [libcrypto, str(unowned)]
    asked = _counting_dpkg(monkeypatch)
    if shutil.which("dpkg") is None:  # nothing to ask, nothing kept
        assert binaries.owners(paths) == {} and asked == []
        assert not (tmp_path / "cache").exists()
        return

    first = binaries.owners(paths)
    assert first == binaries.ask_dpkg(paths)
    assert libcrypto in first and str(unowned) not in first
    assert len(asked) == 4  # dpkg -S and dpkg-query, here and in ask_dpkg above
    asked.clear()
    assert binaries.owners(paths) == first and asked == []  # kept, dpkg not asked

    unowned.write_bytes(b"another file by the same name")  # one file changed
    assert binaries.owners(paths) == first and asked[0][:2] == ["dpkg", "-S"]
    asked.clear()
    status.write_text("a package was installed\n")  # dpkg's database changed
    assert binaries.owners(paths) == first and asked[0][:2] == ["dpkg", "-S"]
    asked.clear()
    (tmp_path / "cache" / binaries.OWNERS_CACHE).write_text('{"dpkg_status": [1')  # damaged
    assert binaries.owners(paths) == first and asked[0][:2] == ["dpkg", "-S"]
    asked.clear()
    assert binaries.owners(paths) == first and asked == []  # written whole again
    # Past the bound, the list starts again from the files just asked about.
    monkeypatch.setattr(binaries, "OWNERS_KEPT", len(paths))
    other = tmp_path / "libssl.so.3"
    other.write_bytes(b"a third file")
    assert binaries.owners([str(other)]) == {}
    kept = json.loads((tmp_path / "cache" / binaries.OWNERS_CACHE).read_text())
    assert set(kept["files"]) == {str(other)}
