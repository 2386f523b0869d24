"""`make test-deps` makes what the slow tests build: every pip build and pinned crate a test
names, every stack worker, the userland and the rebuilt libcrypto, and `make test` runs it
first."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import IO

import pytest

from pqbench.libraries.stacks import registry
from tests.helpers import REPO
from tests.helpers.deps import (
    AWS_LC_RS_OLDER,
    PIP_VERSIONS,
    PIP_WORKER_VERSION,
    items,
    make_all,
)

TESTS = REPO / "tests"


def _named(pattern: str) -> set[str]:
    """What the test files name in `pattern` (its one group), read as text."""
    return {found for path in TESTS.rglob("test_*.py")
            for found in re.findall(pattern, path.read_text("utf-8"))}


def test_every_build_a_test_asks_for_is_made_first() -> None:
    made = set(items())
    assert {"userland", "rebuilt-libcrypto"} <= made
    assert {f"stack-{name}" for name in registry.names()} <= made
    # the older crate a worker test compiles against (a pin parsed, then planned)
    crates = _named(r'pins\.parse\("crate:aws-lc-rs==(\d+\.\d+\.\d+)"\)\n\s+planned = ')
    assert crates <= {AWS_LC_RS_OLDER}, crates
    assert f"stack-aws-lc-rs-{AWS_LC_RS_OLDER}" in made
    # the pip builds the bisect tests measure, named once for both
    pip = (TESTS / "sessions" / "bisect" / "test_pip.py").read_text("utf-8")
    assert "VERSIONS = PIP_VERSIONS" in pip and "PIP_WORKER_VERSION" in pip
    assert {f"pip-cryptography-{v}" for v in (*PIP_VERSIONS, PIP_WORKER_VERSION)} <= made


def test_make_test_makes_them_beside_the_lint_before_the_suite() -> None:
    recipe = re.search(r"^test:.*\n((?:\t.*\n)+)", (REPO / "Makefile").read_text(), re.M)
    assert recipe is not None
    lines = recipe.group(1).splitlines()
    deps = next(i for i, line in enumerate(lines) if "tests.helpers.deps" in line)
    suite = next(i for i, line in enumerate(lines) if "pytest" in line)
    assert deps < suite
    assert "&" in lines[deps] and any("wait" in line for line in lines[deps:suite])


@pytest.mark.process
def test_every_item_made_in_parallel_is_reported_however_fast_it_ends(tmp_path: Path) -> None:
    """`make_all` reaps its items' processes itself (os.wait4, for their CPU time): each is
    reported once, with its status, however fast it ends. (A Popen dropped while its process
    ran went to subprocess's own list of processes to reap, and the next Popen reaped it
    there: its end was lost, and `make test` printed a ChildProcessError's traceback.)"""
    marks = tmp_path / "marks"
    marks.mkdir()

    def start(name: str, output: IO[bytes]) -> subprocess.Popen[bytes]:
        code = 3 if name == "item-5" else 0
        return subprocess.Popen(["/bin/sh", "-c", f"touch {marks / name}; exit {code}"],
                                stdout=output, stderr=subprocess.STDOUT)

    names = [f"item-{i}" for i in range(24)]
    made = make_all(names, parallel=3, start=start)
    assert sorted(m.name for m in made) == sorted(names)
    assert {m.name: m.status for m in made if m.status} == {"item-5": 3}
    assert sorted(p.name for p in marks.iterdir()) == sorted(names)
