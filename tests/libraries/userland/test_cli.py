"""`pqbench userland` and the `userland:` side of `pqbench ab`: every missing piece is one
clear message and a non-zero exit before anything is downloaded or built.

Needs no built userland: each test points PQBENCH_CACHE_DIR at an empty directory (a
machine where nothing is built) and checks it stays empty. A missing tool or root is
injected by monkeypatching (the faults); the missing network is real: a mirror on a port
nothing listens on.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pqbench.cli import app
from tests.helpers import run_cli

NAME = "debian-trixie"


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("PQBENCH_CACHE_DIR", str(cache))
    return cache


def _without(monkeypatch: pytest.MonkeyPatch, *tools: str) -> None:
    """Make `tools` look absent to shutil.which (the fault), everything else as it is."""
    real: Callable[..., str | None] = shutil.which

    def which(name: str, *args: object, **kwargs: object) -> str | None:
        return None if name in tools else real(name, *args, **kwargs)

    monkeypatch.setattr(shutil, "which", which)


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    return result.exit_code, result.stderr


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_building_without_root_says_so(empty_cache: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    for command in (["build", NAME], ["run", NAME, "--", "true"]):
        code, stderr = _invoke("userland", *command)
        assert code == 1 and "needs root" in stderr and "sudo" in stderr, stderr
    assert list(empty_cache.iterdir()) == []


@pytest.mark.process
def test_no_debootstrap_and_no_apt_is_one_message(empty_cache: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "debootstrap", "apt-get")
    code, stderr = _invoke("userland", "build", NAME)
    assert code == 1, stderr
    assert "needs debootstrap" in stderr and "apt-get" in stderr
    assert "install Debian's `debootstrap`" in " ".join(stderr.split())
    assert list(empty_cache.iterdir()) == []


def test_no_unshare_is_one_message(empty_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "unshare")
    code, stderr = _invoke("userland", "build", NAME)
    assert code == 1 and "`unshare` (util-linux) is needed" in stderr, stderr
    assert list(empty_cache.iterdir()) == []


@pytest.mark.process
def test_no_network_is_found_before_debootstrap_starts(empty_cache: Path) -> None:
    mirror = f"http://127.0.0.1:{_closed_port()}/debian"
    done = run_cli("userland", "build", NAME, env={"PQBENCH_CACHE_DIR": str(empty_cache),
                                                    "PQBENCH_DEBIAN_MIRROR": mirror})
    assert done.returncode == 1, done.stderr
    message = " ".join(done.stderr.split())
    assert f"cannot reach the Debian mirror: {mirror}/dists/trixie/Release" in message
    assert "PQBENCH_DEBIAN_MIRROR" in message and "Traceback" not in done.stderr
    assert list(empty_cache.iterdir()) == []


def test_an_unknown_userland_is_a_usage_error(empty_cache: Path) -> None:
    for args in (["userland", "build", "debian-potato"], ["userland", "prefix", "potato"],
                 ["userland", "status", "potato"]):
        code, stderr = _invoke(*args)
        assert code == 2 and "unknown userland" in stderr and NAME in stderr, (args, stderr)


@pytest.mark.process
def test_status_of_an_unbuilt_userland_says_how_to_build_it(empty_cache: Path) -> None:
    done = run_cli("userland", "status", "--json",
                   env={"PQBENCH_CACHE_DIR": str(empty_cache)})
    assert done.returncode == 0, done.stderr
    import json

    info = json.loads(done.stdout)["userlands"][NAME]
    assert info["state"] == "not built"
    assert info["root"] == str(empty_cache / "userlands" / f"{NAME}-{_arch()}")
    assert f"pqbench userland build {NAME}" in info["reason"]
    table = run_cli("userland", "status", env={"PQBENCH_CACHE_DIR": str(empty_cache)})
    assert table.returncode == 0 and "not built" in table.stdout


def _arch() -> str:
    from pqbench.libraries.userland.recipe import architecture

    return architecture()


def test_run_without_a_command_is_a_usage_error(empty_cache: Path) -> None:
    code, stderr = _invoke("userland", "run", NAME)
    assert code == 2 and "no command given" in stderr


@pytest.mark.process
def test_an_ab_side_on_an_unbuilt_userland_names_the_build_command(empty_cache: Path,
                                                                    tmp_path: Path) -> None:
    done = run_cli("ab", "x25519", "--a", "here", "--b", f"userland:{NAME}", "--db",
                   str(tmp_path / "ab.db"), env={"PQBENCH_CACHE_DIR": str(empty_cache)})
    assert done.returncode == 1, done.stderr
    message = " ".join(done.stderr.split())
    assert f"userland {NAME} is not built" in message
    assert f"`pqbench userland build {NAME}` first, as root" in message
    assert not (tmp_path / "ab.db").exists() or (tmp_path / "ab.db").stat().st_size == 0
    unknown = run_cli("ab", "x25519", "--a", "here", "--b", "userland:potato", "--db",
                      str(tmp_path / "ab.db"))
    assert unknown.returncode == 2 and "unknown userland 'potato'" in unknown.stderr
    empty = run_cli("ab", "x25519", "--a", "here", "--b", "userland:", "--db",
                    str(tmp_path / "ab.db"))
    assert empty.returncode == 2 and "needs a name" in empty.stderr
    # Two bases are refused before the userland is looked at (not "not built", exit 1).
    both = run_cli("ab", "x25519", "--a", "here", "--b", f"userland:{NAME}", "--b", "cmd:x",
                   "--db", str(tmp_path / "ab.db"), env={"PQBENCH_CACHE_DIR": str(empty_cache)})
    assert both.returncode == 2 and "at most one of here, userland:NAME" in both.stderr


@pytest.mark.process
@pytest.mark.parametrize("args", [("status",), ("build", NAME), ()], ids=" ".join)
def test_the_plumbing_entry_takes_run_only_and_names_the_command_line(
        args: tuple[str, ...]) -> None:
    """`python -m pqbench.libraries.userland` is what a prefix starts; every other command is
    `pqbench userland ...`, which it names instead of loading the command line."""
    done = subprocess.run([sys.executable, "-m", "pqbench.libraries.userland", *args],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert "pqbench userland build|status|prefix NAME" in done.stderr
    assert "Traceback" not in done.stderr
