"""Finding the toolchains without starting them: a JDK from its release file (explicitly
chosen, else the newest of at least 24), Go's version and its minimum, and what a missing
one says. JDK homes are made here (a release file and two executables), so both branches
run on any machine."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from pqbench.libraries.stacks import toolchains

#: Go's version is read by running a `go` made here.
pytestmark = pytest.mark.process


def _jdk(where: Path, version: str, vendor: str = "Test Vendor") -> Path:
    (where / "bin").mkdir(parents=True)
    (where / "release").write_text(f'IMPLEMENTOR="{vendor}"\nJAVA_VERSION="{version}"\n')
    for tool in ("java", "javac"):
        path = where / "bin" / tool
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return where


def test_an_explicit_jdk_of_24_or_newer_is_used(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    home = _jdk(tmp_path / "jdk-24", "24.0.1")
    monkeypatch.setenv(toolchains.JAVA_HOME_VAR, str(home))
    found = toolchains.jdk()
    assert isinstance(found, toolchains.Toolchain)
    assert found.version == "24.0.1 (Test Vendor)"
    assert found.tools["javac"] == home / "bin" / "javac"


def test_an_explicit_jdk_too_old_says_what_it_found_and_what_is_needed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = _jdk(tmp_path / "jdk-17", "17.0.15")
    monkeypatch.setenv(toolchains.JAVA_HOME_VAR, str(home))
    found = toolchains.jdk()
    assert isinstance(found, toolchains.Missing)
    assert str(found).startswith(f"needs a JDK 24 or newer (found 17.0.15 at {home})")
    assert "PQBENCH_JAVA_HOME" in str(found)


def test_without_an_explicit_jdk_the_newest_usable_one_wins(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    jvm = tmp_path / "jvm"
    _jdk(jvm / "old", "17.0.15")
    _jdk(jvm / "mid", "24.0.2")
    _jdk(jvm / "new", "25.0.3")
    (jvm / "not-a-jdk").mkdir()
    monkeypatch.delenv(toolchains.JAVA_HOME_VAR, raising=False)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(toolchains, "JVM_DIRS", (jvm,))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    found = toolchains.jdk()
    assert isinstance(found, toolchains.Toolchain) and found.version.startswith("25.0.3")
    _jdk(tmp_path / "only-old" / "jdk", "21.0.1")
    monkeypatch.setattr(toolchains, "JVM_DIRS", (tmp_path / "only-old",))
    missing = toolchains.jdk()
    assert isinstance(missing, toolchains.Missing) and "found 21.0.1" in str(missing)


def test_go_is_found_with_its_version_or_said_missing(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    go = fake / "go"
    go.write_text("#!/bin/sh\necho go1.22.5\n")
    go.chmod(go.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}/bin{os.pathsep}/usr/bin")
    old = toolchains.go()
    assert isinstance(old, toolchains.Missing)
    assert str(old).startswith(f"needs Go 1.24 or newer (go1.22.5 at {go})")
    go.write_text("#!/bin/sh\necho go1.26.8\n")
    found = toolchains.go()
    assert isinstance(found, toolchains.Toolchain) and found.version == "go1.26.8"
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert "no go on PATH" in str(toolchains.go())


@pytest.mark.parametrize("setting", ["variable", "goenv file"])
def test_a_go_that_refuses_its_environment_is_shown_in_its_own_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str) -> None:
    """The real Go with GOEXPERIMENT=bogus (or the same line in a GOENV file) runs but
    refuses every command: pqbench shows what Go said, not advice to install a Go that is
    installed."""
    if setting == "variable":
        monkeypatch.setenv("GOEXPERIMENT", "bogus")
    else:
        goenv = tmp_path / "goenv"
        goenv.write_text("GOEXPERIMENT=bogus\n")
        monkeypatch.setenv("GOENV", str(goenv))
    found = toolchains.go()
    assert isinstance(found, toolchains.Broken), found
    message = str(found)
    assert "go: unknown GOEXPERIMENT bogus" in message
    assert "`go env GOVERSION`" in message and "install" not in message
    assert "Go 1.24 or newer" not in message


def test_a_broken_go_is_unavailable_in_its_own_words_in_list_and_speed(tmp_path: Path) -> None:
    from tests.helpers import run_cli

    env = {"GOEXPERIMENT": "bogus", "PQBENCH_CACHE_DIR": str(tmp_path / "cache")}
    done = run_cli("speed", "x25519", "-i", "go", "--seconds", "0.1", "--json", "--db",
                   str(tmp_path / "r.db"), env=env)
    # Its only implementation unavailable: nothing measured, stored as failed, exit 1.
    assert done.returncode == 1, done.stderr
    assert "nothing was measured (go: unavailable" in done.stderr
    (problem,) = json.loads(done.stdout)["problems"]
    assert problem["kind"] == "unavailable"
    assert "go: unknown GOEXPERIMENT bogus" in problem["reason"]
    assert "https://go.dev/dl/" not in problem["reason"]
    listed = json.loads(run_cli("list", "--json", env=env).stdout)
    (go,) = [s for s in listed["stacks"] if s["implementation"] == "go"]
    assert go["state"] == "missing" and "go: unknown GOEXPERIMENT bogus" in go["detail"]
